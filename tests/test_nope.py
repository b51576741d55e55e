"""Llama 4 attention-temperature tuning of NoPE layers (the masks: test_masks.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import _compat, attention, llama4_attn_scale
from tests.helpers import assert_close, ints, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily


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
    positions = [0, 8191, 20000]
    scale = run_lazily(library, llama4_attn_scale, ints(xp, positions))
    assert_close(scale, [math.log(math.floor((p + 1) / 8192) + 1) * 0.1 + 1 for p in positions], xp=xp)
