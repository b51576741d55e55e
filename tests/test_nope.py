"""Attention-temperature tuning of NoPE layers: Llama 4, Mistral, Beam (the masks: test_masks.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import ATTN_SCALE_CONVENTIONS, _compat, attention, llama4_attn_scale
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


def _mistral(p: int, f: int = 16384, beta: float = 0.1) -> float:
    return 1 + beta * math.log(1 + p // f)


def _beam(p: int, f: float = 2048, alpha: float = 0.1) -> float:
    return (1 + (p + 1) / f) ** alpha


class TestAttnScaleConventions:
    def test_mistral_values(self, xp, device):
        positions = [0, 1, 16382, 16383, 16384, 32767, 32768, 10**6, 2**31 - 2]
        out = llama4_attn_scale(ints(xp, positions, device), floor_scale=16384, convention="mistral")
        expected = [_mistral(p) for p in positions]
        assert_close(out, expected, xp=xp, dtype=_compat.compute_dtype(xp), device=device)

    def test_mistral_is_llama4_one_position_later(self, xp):
        positions = list(range(1, 60))
        mistral = to_numpy(llama4_attn_scale(ints(xp, positions), floor_scale=4, convention="mistral"))
        llama4 = to_numpy(llama4_attn_scale(ints(xp, [p - 1 for p in positions]), floor_scale=4))
        assert np.array_equal(mistral, llama4)
        assert to_numpy(llama4_attn_scale(ints(xp, [0, 3, 4]), floor_scale=4, convention="mistral")).tolist()[
            :2
        ] == [1.0, 1.0]
        # Llama 4 steps at p = 3 already (floor(4 / 4) = 1): the two disagree exactly there
        assert to_numpy(llama4_attn_scale(ints(xp, [3]), floor_scale=4))[0] > 1.0

    def test_mistral_non_integral_floor_scale(self, xp):
        positions = list(range(50))
        out = llama4_attn_scale(ints(xp, positions), floor_scale=2.5, convention="mistral")
        assert_close(out, [1 + 0.1 * math.log(1 + math.floor(p / 2.5)) for p in positions], xp=xp)

    def test_beam_values(self, xp, device):
        positions = [0, 1, 2046, 2047, 2048, 10**5, 10**6, 2**31 - 2]
        out = llama4_attn_scale(ints(xp, positions, device), floor_scale=2048, convention="beam")
        wide = _compat.compute_dtype(xp)
        rtol = 1e-14 if wide == xp.float64 else 4e-7  # log1p and exp, one ulp each (MLX float32)
        assert_close(out, [_beam(p) for p in positions], xp=xp, dtype=wide, device=device, rtol=rtol)

    def test_beam_is_smooth_and_increasing(self, xp):
        positions = ints(xp, list(range(0, 5000, 7)))
        out = to_numpy(llama4_attn_scale(positions, floor_scale=2048, convention="beam"))
        assert np.all(np.diff(out) > 0) and out[0] > 1.0

    def test_beam_options_and_dtype(self, xp):
        positions = list(range(0, 100, 7))
        out = llama4_attn_scale(
            ints(xp, positions), floor_scale=10, attn_scale=0.25, convention="beam", dtype=xp.float32
        )
        assert_close(out, [_beam(p, 10, 0.25) for p in positions], xp=xp, dtype=xp.float32)

    def test_conventions_are_exported(self):
        assert ATTN_SCALE_CONVENTIONS == ("llama4", "mistral", "beam")

    def test_convention_errors(self, xp):
        with pytest.raises(ValueError, match=r"^convention must be one of 'llama4', 'mistral', 'beam'.*use"):
            llama4_attn_scale(ints(xp, [0]), convention="ministral3")
        with pytest.raises(TypeError, match=r"^convention must be one of"):
            llama4_attn_scale(ints(xp, [0]), convention=None)


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    positions = [0, 8191, 20000]
    scale = run_lazily(library, llama4_attn_scale, ints(xp, positions))
    assert_close(scale, [math.log(math.floor((p + 1) / 8192) + 1) * 0.1 + 1 for p in positions], xp=xp)
