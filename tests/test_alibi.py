"""alibi_slopes / alibi_bias against the original recursion, MPT's rule and the closed-form bias."""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest

from posenc_ref import ALIBI_FORMS, _compat, alibi_bias, alibi_slopes, attention, causal_mask
from tests.helpers import assert_close, ints, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily

# --- independent expectations ---------------------------------------------------------------------


def original_slopes(n):
    """ofirpress/attention_with_linear_biases get_slopes, as written there (float64)."""

    def power_of_2(n):
        start = 2 ** (-(2 ** -(math.log2(n) - 3)))
        return [start * start**i for i in range(n)]

    if math.log2(n).is_integer():
        return power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return power_of_2(closest) + original_slopes(2 * closest)[0::2][: n - closest]


def _exponents(n):
    """Slope exponents over max_bias, as exact fractions: k/n for powers of two, else the recursion."""
    if n & (n - 1) == 0:
        return [mpmath.mpf(k) / n for k in range(1, n + 1)]
    c = 2 ** math.floor(math.log2(n))
    return _exponents(c) + _exponents(2 * c)[0::2][: n - c]


def mpt_slopes(n, alibi_bias_max=8.0):
    """HF MPT build_mpt_alibi_tensor's slope rule (in float64)."""
    p = 2 ** math.ceil(math.log2(n))
    slopes = [1.0 / 2 ** (k * alibi_bias_max / p) for k in range(1, p + 1)]
    if p != n:
        slopes = (slopes[1::2] + slopes[0::2])[:n]
    return slopes


HEADS = [*range(1, 9), 12, 16, 20, 24, 40, 112]


# --- alibi_slopes -----------------------------------------------------------------------------------


class TestAlibiSlopes:
    @pytest.mark.parametrize("n", HEADS)
    def test_original_recursion(self, xp, device, n):
        wide = _compat.compute_dtype(xp, device)
        # The original's start * ratio**i accumulates rounding: up to 38 float64 ulp at 112 heads
        # (relative 5.3e-15 = 24 * 2**-52); the library evaluates 2**-e directly (next test).
        tol = {"rtol": 32 * 2.0**-52, "atol": 0.0} if wide == xp.float64 else {"atol": 0.0}
        out = alibi_slopes(n, xp=xp, device=device)
        assert_close(out, original_slopes(n), xp=xp, dtype=wide, device=device, **tol)

    @pytest.mark.parametrize("n", HEADS)
    def test_correctly_rounded(self, xp, n):
        with mpmath.workdps(40):
            exact = [mpmath.mpf(2) ** (-mpmath.mpf(8) * e) for e in _exponents(n)]
            expected64 = [float(v) for v in exact]
        out = to_numpy(alibi_slopes(n, xp=xp, dtype=xp.float32))
        np.testing.assert_array_equal(out, np.asarray(expected64).astype(np.float32))
        if _compat.has_float64(xp):
            np.testing.assert_array_equal(to_numpy(alibi_slopes(n, xp=xp, dtype=xp.float64)), expected64)

    @pytest.mark.parametrize("max_bias", [7.3, 0.1, 12.5, 1 / 3])
    def test_correctly_rounded_for_any_max_bias(self, xp, max_bias):
        # main: 2.0 ** -(max_bias * k / n) rounded the exponent first: 633 of 900 slopes off by an ulp
        from posenc_ref_conformance import oracle

        heads = [1, 3, 5, 8, 12, 24, 40, 96, 112]
        with oracle.working_precision(60):
            expected = [
                [oracle.round_float64(v) for v in oracle.alibi.alibi_slopes(n, max_bias=max_bias)]
                for n in heads
            ]
        for n, want in zip(heads, expected, strict=True):
            if _compat.has_float64(xp):
                out = to_numpy(alibi_slopes(n, max_bias=max_bias, xp=xp, dtype=xp.float64))
                np.testing.assert_array_equal(out, want)
            out32 = to_numpy(alibi_slopes(n, max_bias=max_bias, xp=xp, dtype=xp.float32))
            np.testing.assert_array_equal(out32, np.asarray(want).astype(np.float32))

    def test_twelve_heads_not_the_pre_3071_mlx_rule(self, xp):
        out = to_numpy(alibi_slopes(12, xp=xp, dtype=xp.float32))
        np.testing.assert_allclose(out[:9], [2.0**-k for k in range(1, 9)] + [2**-0.5], rtol=1e-7)
        old_mlx = [(2**8) ** (-k / 12) for k in range(1, 13)]  # 2^(-8k/n): right only for powers of 2
        assert abs(out[0] - old_mlx[0]) > 0.1

    @pytest.mark.parametrize("n", [1, 3, 8, 12, 40])
    @pytest.mark.parametrize("max_bias", [8.0, 16.0, 4.0, 2.5])
    def test_mpt_alibi_bias_max(self, xp, n, max_bias):
        out = alibi_slopes(n, max_bias=max_bias, xp=xp, dtype=xp.float32)
        assert_close(out, mpt_slopes(n, max_bias), xp=xp, dtype=xp.float32)

    def test_float32_dtype(self, xp, device):
        out = alibi_slopes(8, xp=xp, device=device, dtype=xp.float32)
        assert_close(
            out, [2.0**-k for k in range(1, 9)], xp=xp, dtype=xp.float32, device=device, rtol=0, atol=0
        )

    @pytest.mark.parametrize(
        ("kwargs", "error", "pattern"),
        [
            ({"num_heads": 0}, ValueError, r"^num_heads must be a positive integer"),
            ({"num_heads": 2.0}, TypeError, r"^num_heads must be an integer"),
            ({"num_heads": 4, "max_bias": 0.0}, ValueError, r"^max_bias must be > 0"),
            ({"num_heads": 4, "max_bias": "8"}, TypeError, r"^max_bias must be a real number"),
        ],
    )
    def test_bad_input(self, xp, kwargs, error, pattern):
        with pytest.raises(error, match=pattern):
            alibi_slopes(xp=xp, **kwargs)

    def test_bad_dtype(self, xp):
        with pytest.raises(TypeError, match=r"^dtype must be a real floating dtype"):
            alibi_slopes(4, xp=xp, dtype=xp.int32)


# --- alibi_bias ------------------------------------------------------------------------------------


def expected_bias(q, k, slopes, form):
    out = np.empty((len(slopes), len(q), len(k)))
    for h, m in enumerate(slopes):
        for i, qi in enumerate(q):
            for j, kj in enumerate(k):
                out[h, i, j] = -m * abs(kj - qi) if form == "symmetric" else m * kj
    return out


class TestAlibiBias:
    @pytest.mark.parametrize("form", ALIBI_FORMS)
    def test_values(self, xp, device, form):
        slopes = alibi_slopes(6, xp=xp, device=device)
        q, k = [3, 4, 5], list(range(7))
        out = alibi_bias(ints(xp, q, device), ints(xp, k, device), slopes, form=form)
        expected = expected_bias(q, k, original_slopes(6), form)
        wide = _compat.compute_dtype(xp, device)
        assert_close(out, expected, xp=xp, dtype=wide, device=device)

    def test_float32_is_one_rounding_of_the_product(self, xp):
        slopes = alibi_slopes(12, xp=xp, dtype=xp.float32)
        host = to_numpy(slopes).astype(np.float64)
        q, k = [70000], list(range(0, 140000, 997))
        out = alibi_bias(ints(xp, q), ints(xp, k), slopes)
        expected = (-host[:, None, None] * np.abs(np.asarray(k) - q[0])[None, None, :]).astype(np.float32)
        assert_close(out, expected, xp=xp, dtype=xp.float32, rtol=0, atol=0)

    def test_causal_equals_symmetric_up_to_row_constant_under_causal_mask(self, xp):
        slopes = alibi_slopes(5, xp=xp)
        q, k = list(range(10, 16)), list(range(16))
        causal = to_numpy(alibi_bias(ints(xp, q), ints(xp, k), slopes, form="causal"))
        symmetric = to_numpy(alibi_bias(ints(xp, q), ints(xp, k), slopes))
        visible = np.asarray(k)[None, :] <= np.asarray(q)[:, None]
        m = np.asarray(original_slopes(5))[:, None, None]
        diff = np.where(visible, causal - symmetric - m * np.asarray(q)[None, :, None], 0.0)
        np.testing.assert_allclose(diff, 0.0, atol=1e-12)

    def test_causal_and_symmetric_give_the_same_attention_with_a_causal_mask(self, xp):
        rng = np.random.default_rng(0)
        wide = _compat.compute_dtype(xp)
        qv, kv, vv = (_compat.asarray(rng.standard_normal((4, 6, 8)), xp=xp, dtype=wide) for _ in range(3))
        pos = ints(xp, list(range(6)))
        slopes = alibi_slopes(4, xp=xp)
        mask = causal_mask(pos, pos)
        a = attention(qv, kv, vv, bias=alibi_bias(pos, pos, slopes, form="causal"), mask=mask)
        b = attention(qv, kv, vv, bias=alibi_bias(pos, pos, slopes), mask=mask)
        # float32 backends: softmax of logits that differ by a row constant m*i (<= ~3) agree to ~1e-6.
        tol = {"rtol": 1e-12, "atol": 1e-12} if wide == xp.float64 else {"rtol": 1e-5, "atol": 1e-5}
        assert_close(a, to_numpy(b), xp=xp, dtype=wide, **tol)

    def test_mpt_form_by_shifting_keys(self, xp):
        slopes = alibi_slopes(4, xp=xp)
        length = 9
        shifted = ints(xp, [j - (length - 1) for j in range(length)])
        out = alibi_bias(ints(xp, [length - 1]), shifted, slopes, form="causal")
        expected = [[[m * (j - (length - 1)) for j in range(length)]] for m in original_slopes(4)]
        assert_close(out, expected, xp=xp)

    def test_mlx_and_flash_attention_offsets(self, xp):
        # MLX nn.ALiBi: i in [offset, offset + Lq); flash-attn: i + Lk - Lq.  Both symmetric.
        slopes = alibi_slopes(2, xp=xp)
        lq, lk = 2, 5
        out = alibi_bias(ints(xp, [i + lk - lq for i in range(lq)]), ints(xp, list(range(lk))), slopes)
        expected = [
            [[-m * abs(i + lk - lq - j) for j in range(lk)] for i in range(lq)] for m in original_slopes(2)
        ]
        assert_close(out, expected, xp=xp)

    def test_batched_positions_and_slopes(self, xp):
        q = np.asarray([[0, 1], [5, 6]])
        k = np.asarray([[0, 1, 2], [4, 5, 6]])
        slopes = _compat.asarray([[0.5, 0.25], [1.0, 0.125]], xp=xp, dtype=xp.float32)
        out = alibi_bias(ints(xp, q), ints(xp, k), slopes)
        expected = -np.asarray([[0.5, 0.25], [1.0, 0.125]])[:, :, None, None] * np.abs(
            k[:, None, None, :] - q[:, None, :, None]
        )
        assert_close(out, expected, xp=xp, dtype=xp.float32)

    def test_block_of_a_65536_token_bias(self, xp):
        slopes = alibi_slopes(4, xp=xp, dtype=xp.float32)
        q, k = np.arange(64000, 65024), np.arange(64512, 65536)
        out = alibi_bias(ints(xp, q), ints(xp, k), slopes)
        host = np.asarray(original_slopes(4))[:, None, None]
        expected = (-host * np.abs(k[None, :] - q[:, None])[None]).astype(np.float32)
        assert_close(out, expected, xp=xp, dtype=xp.float32, rtol=0, atol=0)

    def test_errors(self, xp):
        pos = ints(xp, [0, 1])
        slopes = alibi_slopes(2, xp=xp)
        with pytest.raises(
            ValueError, match=r"^form must be one of 'symmetric', 'causal'; got 'bloom' \(BLOOM uses"
        ):
            alibi_bias(pos, pos, slopes, form="bloom")
        with pytest.raises(TypeError, match=r"^slopes must be an array of a real floating dtype"):
            alibi_bias(pos, pos, pos)
        with pytest.raises(TypeError, match=r"^k_positions must be an array of an integer dtype"):
            alibi_bias(pos, xp.asarray([0.0, 1.0]), slopes)
        with pytest.raises(ValueError, match=r"^slopes must be at least 1-dimensional; got shape \(\)"):
            alibi_bias(pos, pos, xp.asarray(0.5))


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    slopes = alibi_slopes(3, xp=xp)
    q, k = list(range(5)), list(range(8))
    out = run_lazily(
        library, lambda a, b, s: alibi_bias(a, b, s, form="causal"), ints(xp, q), ints(xp, k), slopes
    )
    assert_close(out, expected_bias(q, k, original_slopes(3), "causal"), xp=xp)


def test_symmetric_bias_is_toeplitz(xp):
    pos = ints(xp, list(range(100, 140)))
    out = to_numpy(alibi_bias(pos, pos, alibi_slopes(3, xp=xp)))
    np.testing.assert_array_equal(out[:, 1:, 1:], out[:, :-1, :-1])
    np.testing.assert_array_equal(out, np.swapaxes(out, -1, -2))
