"""t5_bucket / t5_bias: exact integers against HF's float32 arithmetic, mesh-tf in float64, and exact math."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import _compat, t5_bias, t5_bucket, t5_bucket_thresholds
from tests.conftest import Backend
from tests.helpers import assert_equal, ints, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily

# --- independent expectations ---------------------------------------------------------------------


def hf_float32(rp, num_buckets=32, max_distance=128, bidirectional=True):
    """HF T5Attention._relative_position_bucket with NumPy float32 standing in for torch float32."""
    rp = np.asarray(rp, dtype=np.int64)
    buckets = np.zeros_like(rp)
    if bidirectional:
        num_buckets //= 2
        buckets += (rp > 0).astype(np.int64) * num_buckets
        rp = np.abs(rp)
    else:
        rp = -np.minimum(rp, 0)
    max_exact = num_buckets // 2
    safe = np.maximum(rp, 1).astype(np.float32)  # HF takes log(0) = -inf here and discards it via where
    ratio = np.log(safe / np.float32(max_exact)) / np.float32(math.log(max_distance / max_exact))
    large = max_exact + (ratio * np.float32(num_buckets - max_exact)).astype(np.int64)
    large = np.minimum(large, num_buckets - 1)
    return buckets + np.where(rp < max_exact, rp, large)


def meshtf_float64(rp, num_buckets=32, max_distance=128, bidirectional=True):
    """mesh-tensorflow _relative_position_bucket (n = -rp), evaluated with Python float64 math."""
    out = []
    for r in np.asarray(rp).ravel().tolist():
        ret, n, nb = 0, -r, num_buckets
        if bidirectional:
            nb //= 2
            ret += nb if n < 0 else 0
            n = abs(n)
        else:
            n = max(n, 0)
        max_exact = nb // 2
        if n < max_exact:
            ret += n
        else:
            val = max_exact + int(
                math.log(n / max_exact) / math.log(max_distance / max_exact) * (nb - max_exact)
            )
            ret += min(val, nb - 1)
        out.append(ret)
    return np.asarray(out, dtype=np.int64).reshape(np.shape(rp))


def exact_bucket(r, num_buckets, max_distance, bidirectional):
    """The formula in exact integer arithmetic: the largest s with (n/e)**N >= (D/e)**s."""
    half = num_buckets // 2 if bidirectional else num_buckets
    offset = half if bidirectional and r > 0 else 0
    n = abs(r) if bidirectional else max(-r, 0)
    e, big_n = half // 2, half - half // 2
    if n < e:
        return offset + n
    s = max(s for s in range(big_n) if n**big_n * e**s >= max_distance**s * e**big_n)
    return offset + e + s


NO_X32_INT64 = pytest.mark.skip_xp_backend(Backend.JAX_X32, reason="jax.numpy without x64 has no int64")
COMMON = [(32, 128), (64, 128), (32, 256), (128, 1024), (16, 64), (8, 20)]


# --- t5_bucket --------------------------------------------------------------------------------------


class TestT5Bucket:
    def test_reference_table_bidirectional(self, xp, device):
        # other_schemes.md section 4.3, read off HF's arithmetic.
        rp = list(range(-130, 131))
        expected = []
        edges = [(8, 8), (12, 9), (16, 10), (23, 11), (32, 12), (46, 13), (64, 14), (91, 15)]
        for r in rp:
            n = abs(r)
            b = n if n < 8 else max(bucket for start, bucket in edges if n >= start)
            expected.append(b + (16 if r > 0 else 0))
        assert_equal(t5_bucket(ints(xp, rp, device)), expected, xp=xp, device=device)

    @pytest.mark.parametrize(
        ("bidirectional", "last_small", "first_saturated", "top"), [(True, 90, 91, 15), (False, 112, 113, 31)]
    )
    def test_saturation_boundary(self, xp, bidirectional, last_small, first_saturated, top):
        rp = ints(xp, [-last_small, -first_saturated, -128, -(10**6)])
        out = to_numpy(t5_bucket(rp, bidirectional=bidirectional))
        assert out[0] == top - 1 and list(out[1:]) == [top] * 3

    def test_bucket_16_unused_bidirectional(self, xp):
        out = to_numpy(t5_bucket(ints(xp, list(range(-3000, 3001)))))
        assert sorted(set(out.tolist())) == [b for b in range(32) if b != 16]

    @pytest.mark.parametrize(("num_buckets", "max_distance"), COMMON)
    @pytest.mark.parametrize("bidirectional", [True, False])
    def test_exhaustive_against_hf_float32_and_meshtf_float64(
        self, xp, num_buckets, max_distance, bidirectional
    ):
        rp = np.arange(-5000, 5001)
        expected = hf_float32(rp, num_buckets, max_distance, bidirectional)
        # In these common configurations the float32 and float64 evaluations agree everywhere.
        np.testing.assert_array_equal(expected, meshtf_float64(rp, num_buckets, max_distance, bidirectional))
        out = t5_bucket(
            ints(xp, rp), bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        assert_equal(out, expected, xp=xp)

    @pytest.mark.parametrize(
        ("num_buckets", "max_distance", "bidirectional", "rp"),
        [
            (9, 128, False, [-8, -16, -64]),
            (36, 50, False, [-30]),
            (55, 32768, False, [-3343]),
            (1000, 32768, True, [21756]),
        ],
    )
    def test_exact_where_float_evaluations_round_across_a_boundary(
        self, xp, num_buckets, max_distance, bidirectional, rp
    ):
        expected = [exact_bucket(r, num_buckets, max_distance, bidirectional) for r in rp]
        out = t5_bucket(
            ints(xp, rp), bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
        )
        assert_equal(out, expected, xp=xp)

    def test_odd_and_tiny_bucket_counts(self, xp):
        rp = list(range(-40, 41))
        for nb, md, bi in [(2, 4, False), (3, 5, False), (4, 3, True), (5, 6, True), (33, 100, True)]:
            expected = [exact_bucket(r, nb, md, bi) for r in rp]
            assert_equal(
                t5_bucket(ints(xp, rp), bidirectional=bi, num_buckets=nb, max_distance=md), expected, xp=xp
            )

    @pytest.mark.parametrize(
        "dtype_name", ["int8", "int16", "int32", pytest.param("int64", marks=NO_X32_INT64)]
    )
    def test_dtype_preserved_and_values_identical(self, xp, dtype_name):
        dtype = getattr(xp, dtype_name)
        rp = list(range(-127, 128))
        out = t5_bucket(ints(xp, rp, dtype=dtype), bidirectional=False)
        assert_equal(out, hf_float32(rp, bidirectional=False), xp=xp, dtype=dtype)

    def test_device_and_shape(self, xp, device):
        rp = ints(xp, np.arange(-12, 12).reshape(2, 3, 4), device)
        assert_equal(t5_bucket(rp), hf_float32(np.arange(-12, 12).reshape(2, 3, 4)), xp=xp, device=device)

    def test_float_positions_rejected(self, xp):
        with pytest.raises(TypeError, match=r"^relative must be an array of an integer dtype"):
            t5_bucket(xp.asarray([1.0, 2.0]))

    @pytest.mark.parametrize(
        ("kwargs", "error", "pattern"),
        [
            ({"num_buckets": 1}, ValueError, r"^num_buckets must be an integer >= 2"),
            ({"num_buckets": 3}, ValueError, r"^num_buckets must be >= 4 when bidirectional"),
            ({"num_buckets": 32.0}, TypeError, r"^num_buckets must be an integer"),
            ({"max_distance": 8}, ValueError, r"^max_distance must be > the exact range max_exact=8"),
            (
                {"max_distance": 16, "bidirectional": False},
                ValueError,
                r"^max_distance must be > the exact range",
            ),
            ({"bidirectional": 1}, TypeError, r"^bidirectional must be True or False"),
            ({"num_buckets": 300}, ValueError, r"^num_buckets must be small enough that bucket 299 fits"),
        ],
    )
    def test_bad_options(self, xp, kwargs, error, pattern):
        with pytest.raises(error, match=pattern):
            t5_bucket(ints(xp, [0, 1], dtype=xp.int8), **kwargs)

    def test_narrow_and_unsigned_relative_do_not_wrap(self, xp):
        # main: t5_bucket(int8 [-128], max_distance=1000) gave bucket -128 (abs(-128) wraps in int8)
        rel = [-128, -127, -100, -1, 0, 1, 100, 127]
        out = t5_bucket(ints(xp, rel, dtype=xp.int8), max_distance=1000)
        assert_equal(out, [exact_bucket(r, 32, 1000, True) for r in rel], xp=xp, dtype=xp.int8)
        unsigned = [0, 1, 200, 255]
        out = t5_bucket(ints(xp, unsigned, dtype=xp.uint8), bidirectional=False, max_distance=1000)
        assert_equal(out, [exact_bucket(r, 32, 1000, False) for r in unsigned], xp=xp, dtype=xp.uint8)

    def test_int64_extremes(self, xp):
        top = 2**63 - 1
        rel = ints(xp, [-top - 1, -top, top])
        assert_equal(t5_bucket(rel), [15, 15, 31], xp=xp)
        assert_equal(
            t5_bucket(rel, num_buckets=64, max_distance=2**62),
            [exact_bucket(r, 64, 2**62, True) for r in (-top - 1, -top, top)],
            xp=xp,
        )


class TestT5BucketThresholds:
    def test_large_max_distance_is_exact_and_fast(self):
        # exact integer roots: the smallest n with n**N >= D**s * e**(N - s), checked at n and n - 1
        max_exact, thresholds = t5_bucket_thresholds(num_buckets=256, max_distance=2**62)
        big_n = 128 - max_exact
        for s, n in enumerate(thresholds, start=1):
            target = (2**62) ** s * max_exact ** (big_n - s)
            assert n**big_n >= target > (n - 1) ** big_n

    def test_defaults(self):
        assert t5_bucket_thresholds() == (8, (12, 16, 23, 32, 46, 64, 91))

    def test_causal_last_threshold(self):
        max_exact, thresholds = t5_bucket_thresholds(bidirectional=False)
        assert max_exact == 16 and len(thresholds) == 15 and thresholds[-1] == 113

    @pytest.mark.parametrize(("num_buckets", "max_distance"), COMMON)
    def test_each_threshold_is_the_first_distance_of_its_bucket(self, num_buckets, max_distance):
        max_exact, thresholds = t5_bucket_thresholds(
            bidirectional=False, num_buckets=num_buckets, max_distance=max_distance
        )
        for s, n in enumerate(thresholds, start=1):
            assert exact_bucket(-n, num_buckets, max_distance, False) == max_exact + s
            assert exact_bucket(-(n - 1), num_buckets, max_distance, False) == max_exact + s - 1


# --- t5_bias ----------------------------------------------------------------------------------------


def _table(xp, num_buckets, heads, device, dtype):
    values = np.arange(num_buckets * heads, dtype=np.float64).reshape(num_buckets, heads) / 7.0
    return values, _compat.asarray(values, xp=xp, dtype=dtype, device=device)


class TestT5Bias:
    @pytest.mark.parametrize("bidirectional", [True, False])
    def test_gathers_table_rows(self, xp, device, bidirectional):
        host, table = _table(xp, 32, 3, device, xp.float32)
        q, k = list(range(5, 9)), list(range(0, 150, 7))
        out = t5_bias(ints(xp, q, device), ints(xp, k, device), table, bidirectional=bidirectional)
        expected = np.empty((3, len(q), len(k)))
        for i, qi in enumerate(q):
            for j, kj in enumerate(k):
                expected[:, i, j] = host[exact_bucket(kj - qi, 32, 128, bidirectional)]
        assert_equal(out, expected.astype(np.float32), xp=xp, dtype=xp.float32, device=device)

    def test_batched_positions(self, xp):
        host, table = _table(xp, 32, 2, None, xp.float32)
        q = np.asarray([[0, 1, 2], [10, 11, 12]])
        out = t5_bias(ints(xp, q), ints(xp, list(range(4))), table)
        assert tuple(out.shape) == (2, 2, 3, 4)
        expected = host[hf_float32(np.arange(4)[None, None, :] - q[:, :, None])]  # [B, Lq, Lk, H]
        assert_equal(out, np.moveaxis(expected, -1, 1).astype(np.float32), xp=xp)

    def test_block_of_a_65536_token_bias(self, xp):
        # One [H, 1024, 1024] block far from the origin equals the closed form on that slice.
        host, table = _table(xp, 32, 2, None, xp.float32)
        q = np.arange(64000, 65024)
        k = np.arange(64512, 65536)
        out = t5_bias(ints(xp, q), ints(xp, k), table)
        rel = k[None, :] - q[:, None]
        lut = {r: exact_bucket(r, 32, 128, True) for r in range(int(rel.min()), int(rel.max()) + 1)}
        buckets = np.vectorize(lut.__getitem__)(rel)
        assert_equal(out, np.moveaxis(host[buckets], -1, 0).astype(np.float32), xp=xp)

    def test_bad_table(self, xp):
        q = ints(xp, [0])
        with pytest.raises(TypeError, match=r"^table must be an array of a real floating dtype"):
            t5_bias(q, q, ints(xp, [[1, 2]]))
        with pytest.raises(ValueError, match=r"^table must be 2-dimensional; got shape \(32, 2, 1\)"):
            t5_bias(q, q, xp.ones((32, 2, 1), dtype=xp.float32))
        with pytest.raises(TypeError, match=r"^q_positions must be an array of an integer dtype"):
            t5_bias(xp.asarray([0.0]), q, xp.ones((32, 2), dtype=xp.float32))


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    host, table = _table(xp, 32, 2, None, xp.float32)
    q, k = list(range(20, 30)), list(range(0, 200, 9))
    out = run_lazily(
        library, lambda a, b, t: t5_bias(a, b, t, bidirectional=False), ints(xp, q), ints(xp, k), table
    )
    buckets = hf_float32(np.asarray(k)[None, :] - np.asarray(q)[:, None], bidirectional=False)
    assert_equal(out, np.moveaxis(host[buckets], -1, 0).astype(np.float32), xp=xp)


@pytest.mark.parametrize(("num_buckets", "max_distance"), [(32, 128), (64, 256), (10, 30)])
def test_invariants_range_and_monotonicity(xp, num_buckets, max_distance):
    rp = np.arange(-3000, 3001)
    for bidirectional in (True, False):
        out = to_numpy(
            t5_bucket(
                ints(xp, rp), bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
            )
        )
        assert out.min() >= 0 and out.max() < num_buckets
        before = out[:3001][::-1]  # keys at or before the query, by growing distance
        assert np.all(np.diff(before) >= 0)
        if bidirectional:
            assert np.all(np.diff(out[3001:]) >= 0) and out[3001:].min() >= num_buckets // 2
        else:
            assert np.all(out[3001:] == 0)
