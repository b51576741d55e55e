"""2-D RoPE tables of vision encoders (Pixtral, Gemma 4 vision, DINOv3) against their procedures."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import ROPE_2D_CONVENTIONS, _compat, apply_rope, rope_2d_cos_sin, vision_position_ids
from posenc_ref_conformance import oracle
from tests.helpers import assert_close, floats, ints, to_numpy

# --- independent expectations: each family's forward replayed with NumPy (float64) ----------------


def hf_pixtral(rows, cols, head_dim, base):
    """PixtralVisionRotaryEmbedding: cat(inv_freq[0::2], inv_freq[1::2]); H from chunk 0, W from chunk 1."""
    inv_freq = 1.0 / (base ** (np.arange(0, head_dim, 2) / head_dim))
    inv_2d = np.concatenate([inv_freq[0::2], inv_freq[1::2]])
    ids = np.stack([rows, cols], axis=-1).astype(np.float64)  # [L, 2]
    freqs = ids[..., None] * inv_2d  # [L, 2, D/2]
    first, second = np.split(freqs, 2, axis=-1)
    half = np.concatenate([first[:, 0], second[:, 1]], axis=-1)
    return np.concatenate([half, half], axis=-1)


def hf_gemma4(rows, cols, head_dim, base):
    """Gemma4VisionRotaryEmbedding: base**(-arange(0, D/2, 2)/(D/2)), then [h, h, w, w]."""
    spatial = head_dim // 2
    inv_freq = 1.0 / (base ** (np.arange(0, spatial, 2) / spatial))
    h, w = np.outer(rows, inv_freq), np.outer(cols, inv_freq)
    return np.concatenate([h, h, w, w], axis=-1)


def hf_dinov3(h, w, head_dim, base):
    """DINOv3ViTRopePositionEmbedding in eval mode: patch centres in [-1, 1], 2 pi coord inv_freq, tiled."""
    inv_freq = 1 / base ** np.arange(0, 1, 4 / head_dim)
    ys, xs = (np.arange(0.5, h) / h) * 2 - 1, (np.arange(0.5, w) / w) * 2 - 1
    coords = np.stack(np.meshgrid(ys, xs, indexing="ij"), axis=-1).reshape(-1, 2)
    angles = (2 * math.pi * coords[:, :, None] * inv_freq[None, None, :]).reshape(len(coords), -1)
    return np.tile(angles, 2), coords.T


def hf_llama4(side, head_dim, base):
    """Llama4VisionRotaryEmbedding._compute_freqs_ci: (x + 1, y + 1), x first, ::2, cls row (last) zero."""
    img_idx = np.concatenate([np.arange(side * side), [-2]])
    fx, fy = img_idx % side, img_idx // side
    freq_dim = head_dim // 2
    rope_freq = 1.0 / (base ** (np.arange(0, freq_dim, 2)[: freq_dim // 2] / freq_dim))
    ax = np.repeat((fx + 1)[:, None] * rope_freq, 2, axis=-1)
    ay = np.repeat((fy + 1)[:, None] * rope_freq, 2, axis=-1)
    freqs = np.concatenate([ax, ay], axis=-1)[:, ::2]
    freqs[img_idx < 0] = 0
    return np.repeat(freqs, 2, axis=-1)  # complex pair j on channels (2j, 2j + 1)


def hf_sam2(ids_hw, head_dim, base):
    """Sam2VideoVisionRotaryEmbedding on precompute_positions' (w, h) ids: cat(x w, y w), interleaved."""
    spatial = head_dim // 2
    inv_freq = 1.0 / (base ** (np.arange(0, spatial, 2) / spatial))
    ids = np.stack([ids_hw[1], ids_hw[0]], axis=-1).astype(np.float64)  # [N, 2] = (w, h)
    freqs = ids[..., None] * inv_freq  # [N, 2, D/4]
    return np.repeat(np.concatenate([freqs[:, 0], freqs[:, 1]], axis=-1), 2, axis=-1)


def hf_kimi(ids_hw, head_dim, base):
    """Kimi_K25VisionRotaryEmbedding: freq [N, 2, D/4] of the (h, w) ids, transpose, flip, flatten, twice."""
    spatial = head_dim // 2
    inv_freq = 1.0 / (base ** (np.arange(0, spatial, 2) / spatial))
    freqs = np.stack([ids_hw[0], ids_hw[1]], axis=-1).astype(np.float64)[..., None] * inv_freq
    slots = np.flip(np.swapaxes(freqs, 1, 2), -1).reshape(len(freqs), -1)
    return np.concatenate([slots, slots], axis=-1)


def rotate_half(x, cos, sin):
    """HF's apply_rotary_pos_emb on one head: x cos + rotate_half(x) sin."""
    x1, x2 = np.split(x, 2, axis=-1)
    return x * cos + np.concatenate([-x2, x1], axis=-1) * sin


def _grid(h, w):
    return np.asarray(to_numpy(vision_position_ids(1, h, w)))


# --- values -----------------------------------------------------------------------------------------


class TestRope2dCosSin:
    @pytest.mark.parametrize(("h", "w", "dim"), [(3, 5, 16), (4, 2, 32), (1, 7, 8)])
    def test_pixtral_matches_its_forward(self, xp, device, h, w, dim):
        rows, cols = _grid(h, w)
        angles = hf_pixtral(rows, cols, dim, 10000.0)
        cos, sin = rope_2d_cos_sin(
            ints(xp, np.stack([rows, cols]), device), dim, base=10000.0, convention="pixtral"
        )
        assert_close(cos, np.cos(angles), xp=xp, device=device)
        assert_close(sin, np.sin(angles), xp=xp, device=device)

    @pytest.mark.parametrize(("h", "w", "dim"), [(2, 3, 16), (5, 2, 32)])
    def test_gemma4_matches_its_forward(self, xp, device, h, w, dim):
        rows, cols = _grid(h, w)
        angles = hf_gemma4(rows, cols, dim, 100.0)
        cos, sin = rope_2d_cos_sin(
            ints(xp, np.stack([rows, cols]), device), dim, base=100.0, convention="gemma4_vision"
        )
        assert_close(cos, np.cos(angles), xp=xp, device=device)
        assert_close(sin, np.sin(angles), xp=xp, device=device)

    @pytest.mark.parametrize(("h", "w", "dim"), [(2, 4, 16), (4, 8, 32), (3, 5, 8)])
    def test_dinov3_matches_its_forward(self, xp, device, h, w, dim):
        angles, coords = hf_dinov3(h, w, dim, 100.0)
        cos, sin = rope_2d_cos_sin(floats(xp, coords, device), dim, base=100.0, convention="dinov3")
        assert_close(cos, np.cos(angles), xp=xp, device=device)
        assert_close(sin, np.sin(angles), xp=xp, device=device)

    @pytest.mark.parametrize(("side", "dim"), [(3, 16), (4, 32)])
    def test_llama4_matches_its_table(self, xp, device, side, dim):
        rows, cols = _grid(side, side)
        ids = np.stack([np.concatenate([rows, [-1]]), np.concatenate([cols, [-1]])])  # cls last
        angles = hf_llama4(side, dim, 10000.0)
        cos, sin = rope_2d_cos_sin(ints(xp, ids, device), dim, base=10000.0, convention="llama4_vision")
        assert_close(cos, np.cos(angles), xp=xp, device=device)
        assert_close(sin, np.sin(angles), xp=xp, device=device)

    def test_llama4_rotation_is_its_complex_product(self, xp):
        rows, cols = _grid(2, 3)
        cos, sin = rope_2d_cos_sin(
            ints(xp, np.stack([rows, cols])), 8, base=10000.0, convention="llama4_vision"
        )
        x = np.random.default_rng(1).standard_normal((6, 8))
        angles = hf_llama4(3, 8, 10000.0)[[0, 1, 2, 3, 4, 5]][:, ::2]  # rows 0-1 of a 3 x 3 table
        want = x.view(complex) * np.exp(1j * angles)  # vision_apply_rotary_emb: view_as_complex pairs
        got = apply_rope(floats(xp, x), cos, sin, layout="interleaved")
        np.testing.assert_allclose(to_numpy(got), want.view(float), rtol=1e-6, atol=1e-6)

    @pytest.mark.parametrize(("h", "w", "dim"), [(2, 3, 16), (4, 1, 32)])
    def test_sam2_matches_its_forward(self, xp, device, h, w, dim):
        ids = _grid(h, w)
        angles = hf_sam2(ids, dim, 10000.0)
        cos, sin = rope_2d_cos_sin(ints(xp, ids, device), dim, base=10000.0, convention="sam2")
        assert_close(cos, np.cos(angles), xp=xp, device=device)
        assert_close(sin, np.sin(angles), xp=xp, device=device)
        # Llama 4's layout is SAM 2's at positions + 1
        shifted, _ = rope_2d_cos_sin(ints(xp, ids + 1, device), dim, base=10000.0, convention="sam2")
        llama, _ = rope_2d_cos_sin(ints(xp, ids, device), dim, base=10000.0, convention="llama4_vision")
        assert_close(llama, to_numpy(shifted), xp=xp, device=device)

    @pytest.mark.parametrize(("h", "w", "dim"), [(2, 3, 16), (3, 1, 32)])
    def test_kimi_matches_its_forward(self, xp, device, h, w, dim):
        ids = _grid(h, w)
        angles = hf_kimi(ids, dim, 10000.0)
        cos, sin = rope_2d_cos_sin(ints(xp, ids, device), dim, base=10000.0, convention="kimi_k25")
        assert_close(cos, np.cos(angles), xp=xp, device=device)
        assert_close(sin, np.sin(angles), xp=xp, device=device)

    @pytest.mark.parametrize("convention", ROPE_2D_CONVENTIONS)
    def test_oracle(self, xp, convention):
        rows, cols = (
            ([0.5, -0.25, 0.75], [-0.75, 0.125, 1.25]) if convention == "dinov3" else _grid(2, 3).tolist()
        )
        with oracle.working_precision():
            want = oracle.rope_2d.rope_2d_cos_sin(list(rows), list(cols), 16, 100.0, convention)
        got = rope_2d_cos_sin(floats(xp, [list(rows), list(cols)]), 16, base=100.0, convention=convention)
        for g, w in zip(got, want, strict=True):
            assert_close(g, [[float(v) for v in row] for row in w], xp=xp)

    def test_hand_values(self, xp):
        # D = 8, base 16: w_k = 16**(-k/4) = 1, 1/2, 1/4, 1/8.  Pixtral: rows 1, 1/4; columns 1/2, 1/8.
        cos, _ = rope_2d_cos_sin(ints(xp, [[1], [2]]), 8, base=16.0, convention="pixtral")
        assert_close(cos, [np.cos([1.0, 0.25, 1.0, 0.25] * 2)], xp=xp)
        # Gemma 4: both axes 16**(-k/2) = 1, 1/4, table [h | h | w | w].
        cos, _ = rope_2d_cos_sin(ints(xp, [[1], [2]]), 8, base=16.0, convention="gemma4_vision")
        assert_close(cos, [np.cos([1.0, 0.25, 1.0, 0.25, 2.0, 0.5, 2.0, 0.5])], xp=xp)
        # DINOv3: 2 pi c, c = 1/4 at k = 0: cos 0, sin 1.
        cos, sin = rope_2d_cos_sin(floats(xp, [[0.25], [0.5]]), 8, base=16.0, convention="dinov3")
        assert_close(cos, [np.cos(2 * np.pi * np.asarray([0.25, 0.0625, 0.5, 0.125] * 2))], xp=xp)
        assert abs(float(to_numpy(sin)[0, 0]) - 1.0) < 1e-15

    def test_gemma4_rotation_is_two_half_rotations(self, xp):
        # apply_multidimensional_rope: split x into two halves, rotate each with its half of the table
        rows, cols = _grid(2, 3)
        angles = hf_gemma4(rows, cols, 16, 100.0)
        x = np.random.default_rng(0).standard_normal((6, 16))
        want = np.concatenate(
            [rotate_half(x[:, :8], np.cos(angles[:, :8]), np.sin(angles[:, :8])),
             rotate_half(x[:, 8:], np.cos(angles[:, 8:]), np.sin(angles[:, 8:]))], axis=-1
        )  # fmt: skip
        cos, sin = rope_2d_cos_sin(
            ints(xp, np.stack([rows, cols])), 16, base=100.0, convention="gemma4_vision"
        )
        xs = floats(xp, x)
        parts = [apply_rope(xs[:, :8], cos[:, :8], sin[:, :8]), apply_rope(xs[:, 8:], cos[:, 8:], sin[:, 8:])]
        got = np.concatenate([to_numpy(p) for p in parts], axis=-1)
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    @pytest.mark.parametrize("convention", ROPE_2D_CONVENTIONS)
    def test_relative_shift_per_axis(self, xp, convention):
        # angles of a grid shifted by (dy, dx) differ from the grid's by one constant per channel, so
        # q . k of a rotated pair depends on the offset between the two patches only
        rows, cols = _grid(3, 4)
        base = rope_2d_cos_sin(floats(xp, np.stack([rows, cols])), 16, base=100.0, convention=convention)
        moved = rope_2d_cos_sin(
            floats(xp, np.stack([rows + 2, cols - 3])), 16, base=100.0, convention=convention
        )
        a0 = np.arctan2(to_numpy(base[1]), to_numpy(base[0]))
        a1 = np.arctan2(to_numpy(moved[1]), to_numpy(moved[0]))
        step = np.angle(np.exp(1j * (a1 - a0)))  # wrapped to (-pi, pi]
        np.testing.assert_allclose(np.angle(np.exp(1j * (step - step[:1]))), 0.0, atol=1e-9)

    def test_batched_and_dtype(self, xp):
        _, coords = hf_dinov3(2, 4, 16, 100.0)
        batched = np.stack([coords, coords / 2], axis=1)  # [2, B, L]
        cos, _ = rope_2d_cos_sin(floats(xp, batched), 16, base=100.0, convention="dinov3", dtype=xp.float32)
        assert cos.dtype == xp.float32 and tuple(cos.shape) == (2, 8, 16)
        single, _ = rope_2d_cos_sin(floats(xp, coords / 2), 16, base=100.0, convention="dinov3")
        np.testing.assert_allclose(to_numpy(cos)[1], to_numpy(single), atol=1e-7)

    def test_errors(self, xp):
        ids = ints(xp, _grid(2, 3))
        with pytest.raises(ValueError, match=r"^head_dim must be a positive multiple of 4"):
            rope_2d_cos_sin(ids, 6, base=100.0, convention="pixtral")
        with pytest.raises(ValueError, match=r"^positions must be an array of shape \[2, \.\.\., L\]"):
            rope_2d_cos_sin(ints(xp, [[0, 1]] * 3), 8, base=100.0, convention="pixtral")
        with pytest.raises(ValueError, match=r"^positions must be at least 2-dimensional"):
            rope_2d_cos_sin(ints(xp, [0, 1]), 8, base=100.0, convention="pixtral")
        with pytest.raises(ValueError, match=r"^convention must be one of .*is 'qwen2_vl'"):
            rope_2d_cos_sin(ids, 8, base=100.0, convention="axial")
        with pytest.raises(ValueError, match=r"^base must be > 0"):
            rope_2d_cos_sin(ids, 8, base=0.0, convention="dinov3")
        infinite = floats(xp, [[math.inf], [0.0]])
        if _compat.values_known(infinite):  # lazy arrays (Dask) are not read before the result
            with pytest.raises(ValueError, match=r"^positions must be finite"):
                rope_2d_cos_sin(infinite, 8, base=100.0, convention="dinov3")
        with pytest.raises(TypeError, match=r"^positions must be an array of an integer or real floating"):
            rope_2d_cos_sin(None, 8, base=100.0, convention="dinov3")
