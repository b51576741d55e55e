"""deberta_bucket and deberta_relative_index against integer loops, HF's float32 expression (modelled with
struct rounding) and hand-derived values."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from posenc_ref import DEBERTA_ARITHMETIC, DEBERTA_TERMS, deberta_bucket, deberta_relative_index
from tests.helpers import assert_equal, floats, ints, to_numpy


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def bucket_loop(r, pb, top, float32=False):
    """The bucket by the definition: exact ceilings decided in integers, or float32 steps."""
    mid, a = pb // 2, abs(r)
    if a <= mid:
        return r
    width, depth = mid - 1, top - 1
    if width == 0:
        c = 0
    elif float32:
        q = f32(f32(float(a)) / mid)
        x = f32(f32(f32(math.log(q)) / f32(math.log(f32(depth / mid)))) * width)
        c = math.ceil(x)
    else:
        c = 0
        while a**width * mid**c > depth**c * mid**width:  # x > c
            c += 1
    return (mid + c) * (1 if r > 0 else -1)


CONFIGS = [(256, 512), (4, 8), (7, 20), (2, 5), (64, 256), (512, 4096)]


class TestDebertaBucket:
    @pytest.mark.parametrize(("pb", "top"), CONFIGS)
    @pytest.mark.parametrize("arithmetic", DEBERTA_ARITHMETIC)
    def test_matches_the_definition(self, xp, device, pb, top, arithmetic):
        rel = list(range(-3 * top, 3 * top + 1, max(1, top // 64)))
        out = deberta_bucket(
            ints(xp, rel, device), position_buckets=pb, max_relative_positions=top, arithmetic=arithmetic
        )
        expected = [bucket_loop(r, pb, top, arithmetic == "float32") for r in rel]
        assert_equal(out, expected, xp=xp, dtype=ints(xp, [0]).dtype, device=device)

    def test_float32_differs_at_the_boundary(self, xp):
        rel = ints(xp, [-1643, 1643])
        exact = deberta_bucket(rel, position_buckets=512, max_relative_positions=4096)
        single = deberta_bucket(rel, position_buckets=512, max_relative_positions=4096, arithmetic="float32")
        assert to_numpy(exact).tolist() == [-428, 428]
        assert to_numpy(single).tolist() == [-427, 427]

    def test_odd_exact_until_mid_and_far_values(self, xp):
        rel = np.arange(-2000, 2001)
        out = to_numpy(deberta_bucket(ints(xp, rel), position_buckets=256, max_relative_positions=512))
        np.testing.assert_array_equal(out, -out[::-1])  # b(-r) = -b(r)
        np.testing.assert_array_equal(out[np.abs(rel) <= 128], rel[np.abs(rel) <= 128])
        assert out[rel == 511][0] == 255 and (np.diff(out) >= 0).all()
        far = to_numpy(
            deberta_bucket(ints(xp, [2**62 - 1]), position_buckets=256, max_relative_positions=512)
        )
        assert far[0] == bucket_loop(2**62 - 1, 256, 512)

    def test_narrow_dtype_kept(self):
        out = deberta_bucket(
            np.asarray([-300, 300], dtype=np.int16), position_buckets=256, max_relative_positions=512
        )
        assert out.dtype == np.int16 and out.tolist() == [
            -bucket_loop(300, 256, 512),
            bucket_loop(300, 256, 512),
        ]

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"position_buckets": 1}, r"^position_buckets must"),
            ({"max_relative_positions": 129}, r"^max_relative_positions must"),
            ({"position_buckets": 256, "max_relative_positions": 135}, r"^max_relative_positions must be >="),
            ({"arithmetic": "float64"}, r"^arithmetic must"),
        ],
    )
    def test_errors(self, kwargs, match):
        options = {"position_buckets": 256, "max_relative_positions": 512, **kwargs}
        with pytest.raises(ValueError, match=match):
            deberta_bucket(np.arange(3), **options)

    def test_float_relative_is_a_type_error(self):
        with pytest.raises(TypeError, match=r"^relative must"):
            deberta_bucket(np.asarray([0.0]), position_buckets=256, max_relative_positions=512)


class TestDebertaRelativeIndex:
    @pytest.mark.parametrize(("lq", "lk"), [(6, 6), (4, 40), (40, 4), (1, 9)])
    @pytest.mark.parametrize("term", DEBERTA_TERMS)
    def test_clamped_bucket_rows(self, xp, device, lq, lk, term):
        out = deberta_relative_index(
            ints(xp, np.arange(lq), device),
            ints(xp, np.arange(lk), device),
            position_buckets=16,
            max_relative_positions=32,
            term=term,
        )
        b = (lambda r: bucket_loop(r, 16, 32)) if term == "c2p" else (lambda r: -bucket_loop(-r, 16, 32))
        expected = [[min(max(b(i - j) + 16, 0), 31) for j in range(lk)] for i in range(lq)]
        assert_equal(out, expected, xp=xp, dtype=ints(xp, [0]).dtype, device=device)

    @pytest.mark.parametrize(("lq", "lk", "top"), [(12, 12, 8), (5, 3, 16), (1, 6, 16), (30, 7, 8)])
    def test_v1_slice_gives_the_same_rows(self, xp, lq, lk, top):
        """DeBERTa v1's slice [M - s, M + s), s = min(max(Lq, Lk), M), then clamp(r + s, 0, 2s - 1)."""
        s = min(max(lq, lk), top)
        v1 = [[top - s + min(max(i - j + s, 0), 2 * s - 1) for j in range(lk)] for i in range(lq)]
        out = deberta_relative_index(
            ints(xp, np.arange(lq)), ints(xp, np.arange(lk)), position_buckets=0, max_relative_positions=top
        )
        np.testing.assert_array_equal(to_numpy(out), v1)

    def test_terms_agree_and_only_differences_matter(self, xp):
        q, k = np.arange(5, 9), np.arange(0, 30)
        a = deberta_relative_index(ints(xp, q), ints(xp, k), position_buckets=8, max_relative_positions=20)
        b = deberta_relative_index(
            ints(xp, q + 100), ints(xp, k + 100), position_buckets=8, max_relative_positions=20, term="p2c"
        )
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))

    def test_hand_derived(self, xp):
        out = deberta_relative_index(
            ints(xp, np.arange(4)), ints(xp, np.arange(3)), position_buckets=4, max_relative_positions=8
        )
        assert to_numpy(out).tolist() == [[4, 3, 2], [5, 4, 3], [6, 5, 4], [7, 6, 5]]

    def test_errors(self, xp):
        q = ints(xp, np.arange(3))
        with pytest.raises(ValueError, match=r"^term must"):
            deberta_relative_index(q, q, position_buckets=4, max_relative_positions=8, term="p2p")
        with pytest.raises(ValueError, match=r"^max_relative_positions must"):
            deberta_relative_index(q, q, position_buckets=0, max_relative_positions=0)
        with pytest.raises(TypeError, match=r"^q_positions must"):
            deberta_relative_index(floats(xp, [0.0]), q, position_buckets=4, max_relative_positions=8)
