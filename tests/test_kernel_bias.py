"""sandwich_bias and kerple_bias against their formulas (plain Python) and the causal reference code."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from posenc_ref import KERPLE_KINDS, _compat, kerple_bias, sandwich_bias
from tests.conftest import UNREAD_ON_DASK
from tests.helpers import assert_close, floats, ints, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily


def sandwich(q, k, num_heads, dim, base=10000.0):
    out = np.empty((num_heads, len(q), len(k)))
    for i, qi in enumerate(q):
        for j, kj in enumerate(k):
            total = math.fsum(math.cos((kj - qi) / base ** (2 * m / dim)) for m in range(1, dim // 2 + 1))
            for h in range(1, num_heads + 1):
                out[h - 1, i, j] = (total - dim / 2) / (8 * h / num_heads)
    return out


def kerple(q, k, r1, r2, kind):
    out = np.empty((len(r1), len(q), len(k)))
    for h, (a, p) in enumerate(zip(r1, r2, strict=True)):
        for i, qi in enumerate(q):
            for j, kj in enumerate(k):
                d = abs(kj - qi)
                out[h, i, j] = -a * math.log(1 + p * d) if kind == "log" else -a * d**p
    return out


class TestSandwichBias:
    def test_values(self, xp, device):
        q, k = [0, 3, 9], list(range(12))
        out = sandwich_bias(ints(xp, q, device), ints(xp, k, device), num_heads=4, dim=16)
        wide = _compat.compute_dtype(xp)
        # Sums of 8 cosines: absolute error ~8 ulp of 8 in float64.
        tol = {"rtol": 1e-13, "atol": 1e-13} if wide == xp.float64 else {"rtol": 1e-5, "atol": 1e-5}
        assert_close(out, sandwich(q, k, 4, 16), xp=xp, dtype=wide, device=device, **tol)

    def test_documented_accuracy_at_distances_up_to_2_63(self, xp):
        # main: one float64 rounding of d * theta / 2pi: garbage beyond |d| ~ 2**53 (bias off by ~1)
        big = 2**62 - 1
        q, k = [0, -big, 12345], [big, 3, -big, 2**61 + 7]
        out = sandwich_bias(ints(xp, q), ints(xp, k), num_heads=2, dim=8)
        with mpmath.workdps(60):
            expected = [
                [
                    [
                        float(
                            (
                                mpmath.fsum(
                                    mpmath.cos((kj - qi) * mpmath.mpf(10000) ** (-mpmath.mpf(2 * m) / 8))
                                    for m in range(1, 5)
                                )
                                - 4
                            )
                            / (8 * h / 2)
                        )
                        for kj in k
                    ]
                    for qi in q
                ]
                for h in (1, 2)
            ]
        # each of the d'/2 = 4 cosines within a few ulp, their sum rounded: a few ulp of 4
        atol = 16 * 2.0**-52 if _compat.has_float64(xp) else 4e-6
        assert_close(out, expected, xp=xp, rtol=0, atol=atol)

    def test_far_block_float32(self, xp):
        q, k = [60000, 60001], [59990, 60005, 65000]
        out = sandwich_bias(ints(xp, q), ints(xp, k), num_heads=2, dim=8, base=500.0, dtype=xp.float32)
        assert_close(out, sandwich(q, k, 2, 8, 500.0), xp=xp, dtype=xp.float32, rtol=1e-5, atol=1e-5)

    def test_zero_on_diagonal_and_matches_nemo_tril_on_visible_entries(self, xp):
        pos = list(range(6))
        out = to_numpy(sandwich_bias(ints(xp, pos), ints(xp, pos), num_heads=3, dim=8))
        assert np.all(np.abs(np.diagonal(out, axis1=-2, axis2=-1)) < 1e-12)
        nemo = sandwich(pos, pos, 3, 8)  # tril: future distances set to 0 -> bias 0 there
        nemo = np.where(np.tril(np.ones((6, 6), dtype=bool)), nemo, 0.0)
        visible = np.tril(np.ones((6, 6), dtype=bool))
        np.testing.assert_allclose(np.where(visible, out, 0.0), nemo, atol=1e-5)

    @pytest.mark.parametrize(
        ("kwargs", "error", "pattern"),
        [
            ({"num_heads": 0, "dim": 8}, ValueError, r"^num_heads must be a positive integer"),
            ({"num_heads": 2, "dim": 7}, ValueError, r"^dim must be an even positive integer"),
            ({"num_heads": 2, "dim": 8, "base": 1.0}, ValueError, r"^base must be > 1"),
        ],
    )
    def test_errors(self, xp, kwargs, error, pattern):
        pos = ints(xp, [0, 1])
        with pytest.raises(error, match=pattern):
            sandwich_bias(pos, pos, **kwargs)


class TestKerpleBias:
    @pytest.mark.parametrize("kind", KERPLE_KINDS)
    def test_values(self, xp, device, kind):
        r1, r2 = [0.5, 1.3, 2.0], [0.01, 0.7, 1.9]
        q, k = [2, 5, 40], list(range(0, 50, 3))
        out = kerple_bias(
            ints(xp, q, device),
            ints(xp, k, device),
            floats(xp, r1, device),
            floats(xp, r2, device),
            kind=kind,
        )
        wide = _compat.compute_dtype(xp)
        tol = {} if wide == xp.float64 else {"rtol": 2e-5, "atol": 2e-5}
        assert_close(out, kerple(q, k, r1, r2, kind), xp=xp, dtype=wide, device=device, **tol)

    def test_float32_parameters(self, xp):
        r1 = np.asarray([1.0, 0.25], dtype=np.float32)
        r2 = np.asarray([0.5, 2.0], dtype=np.float32)
        out = kerple_bias(
            ints(xp, [10]),
            ints(xp, list(range(20))),
            floats(xp, r1, dtype=xp.float32),
            floats(xp, r2, dtype=xp.float32),
        )
        assert_close(
            out, kerple([10], list(range(20)), r1.tolist(), r2.tolist(), "log"), xp=xp, dtype=xp.float32
        )

    def test_matches_kerple_tril_on_visible_entries(self, xp):
        pos = list(range(7))
        r1, r2 = [0.8, 1.1], [0.3, 1.5]
        out = to_numpy(
            kerple_bias(ints(xp, pos), ints(xp, pos), floats(xp, r1), floats(xp, r2), kind="power")
        )
        diff = np.tril(np.subtract.outer(pos, pos))  # chijames/KERPLE: tril(i - j), zero in the future
        reference = -np.asarray(r1)[:, None, None] * diff[None] ** np.asarray(r2)[:, None, None]
        visible = np.tril(np.ones((7, 7), dtype=bool))
        np.testing.assert_allclose(np.where(visible, out, 0), np.where(visible, reference, 0), rtol=1e-5)

    def test_errors(self, xp):
        pos = ints(xp, [0, 1])
        r = floats(xp, [1.0, 2.0])
        with pytest.raises(ValueError, match=r"^kind must be one of 'log', 'power'"):
            kerple_bias(pos, pos, r, r, kind="exp")
        with pytest.raises(ValueError, match=r"^r2 must be of the shape of r1"):
            kerple_bias(pos, pos, r, floats(xp, [1.0]))
        with pytest.raises(TypeError, match=r"^r1 must be an array of a real floating dtype"):
            kerple_bias(pos, pos, pos, r)

    @UNREAD_ON_DASK
    def test_negative_or_nan_parameters_are_refused(self, xp):
        pos = ints(xp, [0, 1, 5])
        r, bad = floats(xp, [1.0, 2.0]), floats(xp, [0.5, -0.5])
        with pytest.raises(ValueError, match=r"^r2 must be finite and >= 0\.0; got a minimum of -0\.5"):
            kerple_bias(pos, pos, r, bad)  # main: log1p(-0.5 * 5) = NaN, silently
        with pytest.raises(ValueError, match=r"^r1 must be finite and >= 0\.0; got a NaN"):
            kerple_bias(pos, pos, floats(xp, [float("nan"), 1.0]), r)


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    q, k = [0, 4], list(range(6))
    out = run_lazily(library, lambda a, b: sandwich_bias(a, b, num_heads=2, dim=8), ints(xp, q), ints(xp, k))
    tol = (
        {"rtol": 1e-13, "atol": 1e-13}
        if _compat.compute_dtype(xp) == xp.float64
        else {"rtol": 1e-5, "atol": 1e-5}
    )
    assert_close(out, sandwich(q, k, 2, 8), xp=xp, **tol)
    r1, r2 = floats(xp, [0.5, 1.0]), floats(xp, [0.3, 0.9])
    out = run_lazily(library, lambda a, b, c, d: kerple_bias(a, b, c, d), ints(xp, q), ints(xp, k), r1, r2)
    assert_close(out, kerple(q, k, [0.5, 1.0], [0.3, 0.9], "log"), xp=xp, **tol)
