"""causal_mask (global, sliding-window, Llama 4 chunked) and Llama 4 attention-temperature tuning."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import _compat, attention, causal_mask, llama4_attn_scale
from tests.helpers import assert_close, assert_equal, ints, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily


def expected_mask(q, k, window=None, chunk=None):
    return [
        [
            kj <= qi
            and (window is None or qi - kj < window)
            and (chunk is None or kj // chunk == qi // chunk)
            for kj in k
        ]
        for qi in q
    ]


class TestCausalMask:
    def test_global(self, xp, device):
        q = k = list(range(6))
        out = causal_mask(ints(xp, q, device), ints(xp, k, device))
        assert_equal(out, expected_mask(q, k), xp=xp, device=device)
        assert to_numpy(out).dtype == np.bool_

    def test_decode_step_with_cache(self, xp):
        out = causal_mask(ints(xp, [7]), ints(xp, list(range(10))))
        assert_equal(out, [[j <= 7 for j in range(10)]], xp=xp)

    def test_sliding_window(self, xp):
        q = k = list(range(10))
        out = causal_mask(ints(xp, q), ints(xp, k), sliding_window=3)
        assert_equal(out, expected_mask(q, k, window=3), xp=xp)
        assert to_numpy(out).sum(-1).tolist() == [1, 2, 3, 3, 3, 3, 3, 3, 3, 3]

    def test_llama4_chunks(self, xp):
        q, k = list(range(4, 14)), list(range(14))
        out = causal_mask(ints(xp, q), ints(xp, k), chunk_size=4)
        assert_equal(out, expected_mask(q, k, chunk=4), xp=xp)

    def test_window_and_chunk_together_and_batched(self, xp):
        q = np.asarray([[3, 4, 5], [10, 11, 12]])
        k = np.asarray([[0, 1, 2, 3, 4, 5], [7, 8, 9, 10, 11, 12]])
        out = causal_mask(ints(xp, q), ints(xp, k), sliding_window=2, chunk_size=4)
        expected = [expected_mask(q[b], k[b], window=2, chunk=4) for b in range(2)]
        assert_equal(out, expected, xp=xp)

    def test_errors(self, xp, library):
        pos = ints(xp, [0, 1])
        with pytest.raises(ValueError, match=r"^sliding_window must be a positive integer"):
            causal_mask(pos, pos, sliding_window=0)
        with pytest.raises(TypeError, match=r"^chunk_size must be an integer"):
            causal_mask(pos, pos, chunk_size=2.0)
        with pytest.raises(TypeError, match=r"^q_positions must be an array of an integer dtype"):
            causal_mask(xp.asarray([0.0]), pos)
        if _compat.values_known(pos) and not _compat.is_lazy(pos):
            with pytest.raises(ValueError, match=r"^k_positions must be non-negative"):
                causal_mask(pos, ints(xp, [-1, 0]), chunk_size=2)


class TestLlama4AttnScale:
    def test_values(self, xp, device):
        positions = [0, 1, 8190, 8191, 8192, 16383, 16384, 10**6, 2**31 - 2]
        expected = [math.log(math.floor((p + 1) / 8192) + 1) * 0.1 + 1 for p in positions]
        out = llama4_attn_scale(ints(xp, positions, device))
        assert_close(out, expected, xp=xp, dtype=_compat.compute_dtype(xp), device=device)

    def test_exactly_one_below_floor_scale(self, xp):
        out = to_numpy(llama4_attn_scale(ints(xp, list(range(8191)))))
        assert np.all(out == 1.0)

    def test_options_and_dtype(self, xp):
        positions = list(range(0, 100, 7))
        out = llama4_attn_scale(ints(xp, positions), floor_scale=10, attn_scale=0.25, dtype=xp.float32)
        expected = [math.log(math.floor((p + 1) / 10) + 1) * 0.25 + 1 for p in positions]
        assert_close(out, expected, xp=xp, dtype=xp.float32)

    def test_non_integral_floor_scale(self, xp):
        positions = list(range(0, 50))
        out = llama4_attn_scale(ints(xp, positions), floor_scale=2.5)
        expected = [math.log(math.floor((p + 1) / 2.5) + 1) * 0.1 + 1 for p in positions]
        assert_close(out, expected, xp=xp)

    def test_scales_queries_of_a_nope_layer(self, xp):
        rng = np.random.default_rng(0)
        q, k, v = (rng.standard_normal((3, 4)) for _ in range(3))
        pos = [8190, 8191, 16383]
        s = [math.log(math.floor((p + 1) / 8192) + 1) * 0.1 + 1 for p in pos]
        wide = _compat.compute_dtype(xp)
        scale = llama4_attn_scale(ints(xp, pos))
        out = attention(
            _compat.asarray(q, xp=xp, dtype=wide) * scale[:, None],
            *(_compat.asarray(a, xp=xp, dtype=wide) for a in (k, v)),
        )
        plain = attention(
            *(_compat.asarray(a, xp=xp, dtype=wide) for a in (q * np.asarray(s)[:, None], k, v))
        )
        assert_close(out, to_numpy(plain), xp=xp, rtol=1e-12 if wide == xp.float64 else 1e-5)

    def test_errors(self, xp):
        with pytest.raises(TypeError, match=r"^positions must be an array of an integer dtype"):
            llama4_attn_scale(xp.asarray([0.0]))
        with pytest.raises(ValueError, match=r"^floor_scale must be > 0"):
            llama4_attn_scale(ints(xp, [0]), floor_scale=0)
        with pytest.raises(TypeError, match=r"^dtype must be a real floating dtype"):
            llama4_attn_scale(ints(xp, [0]), dtype=xp.int32)
        pos = ints(xp, [-1])
        if not _compat.is_lazy(pos):
            with pytest.raises(ValueError, match=r"^positions must be non-negative"):
                llama4_attn_scale(pos)


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    q, k = list(range(3, 9)), list(range(9))
    out = run_lazily(
        library, lambda a, b: causal_mask(a, b, sliding_window=4, chunk_size=4), ints(xp, q), ints(xp, k)
    )
    assert_equal(out, expected_mask(q, k, window=4, chunk=4), xp=xp)
    positions = [0, 8191, 20000]
    scale = run_lazily(library, llama4_attn_scale, ints(xp, positions))
    assert_close(scale, [math.log(math.floor((p + 1) / 8192) + 1) * 0.1 + 1 for p in positions], xp=xp)
