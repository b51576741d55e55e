"""M-RoPE and 2-D axial RoPE: slot components, position ids and angles against HF's procedures."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ref import (
    MROPE_SECTION_ORDERS,
    _compat,
    axial_angles,
    mrope_angles,
    mrope_position_ids,
    mrope_slot_components,
    vision_position_ids,
)
from tests.helpers import assert_close, assert_equal, floats, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily

# --- independent expectations: HF's procedures replayed with NumPy / plain Python -----------------


def hf_chunked_components(section):
    """apply_multimodal_rotary_pos_emb: split the doubled cos by section * 2, chunk i from row i % 3."""
    head_dim = 2 * sum(section)
    rows = [np.full(head_dim, c) for c in range(len(section))]  # "cos" of component c is c everywhere
    bounds = np.cumsum(list(section) * 2)[:-1]
    chunks = [np.split(r, bounds) for r in rows]
    return np.concatenate([chunks[i % len(section)][i] for i in range(2 * len(section))]).tolist()


def hf_interleaved_components(section):
    """Qwen3-VL apply_interleaved_mrope on per-slot component labels."""
    freqs = [[c] * sum(section) for c in range(3)]
    out = list(freqs[0])
    for dim, offset in enumerate((1, 2), start=1):
        for s in range(offset, section[dim] * 3, 3):
            out[s] = freqs[dim][s]
    return out


def hf_rope_index(segments, time_interval=1):
    """The position-id loop of Qwen2VLModel.get_rope_index for one sequence (already merged grids)."""
    rows, last_max = [[], [], []], -1
    for seg in segments:
        st = last_max + 1
        if isinstance(seg, tuple):
            t, h, w = seg
            for f in range(t):
                for r in range(h):
                    for c in range(w):
                        for axis, v in enumerate((int(f * time_interval), r, c)):
                            rows[axis].append(st + v)
        else:
            for n in range(seg):
                for axis in range(3):
                    rows[axis].append(st + n)
        last_max = max(rows[0] + rows[1] + rows[2]) if rows[0] else -1
    return rows


def hf_vision_ids(t, h, w, m):
    """Qwen2VisionTransformer.rot_pos_emb's reshape/permute ordering."""
    hpos = (
        np.broadcast_to(np.arange(h)[:, None], (h, w))
        .reshape(h // m, m, w // m, m)
        .transpose(0, 2, 1, 3)
        .ravel()
    )
    wpos = (
        np.broadcast_to(np.arange(w)[None, :], (h, w))
        .reshape(h // m, m, w // m, m)
        .transpose(0, 2, 1, 3)
        .ravel()
    )
    return np.tile(np.stack([hpos, wpos]), (1, t))


class TestMropeSlotComponents:
    @pytest.mark.parametrize("section", [(16, 24, 24), (2, 3, 3), (8, 4, 4)])
    def test_chunked_matches_hf(self, section):
        slots = list(mrope_slot_components(section))
        assert slots * 2 == hf_chunked_components(section)

    @pytest.mark.parametrize("section", [(24, 20, 20), (4, 2, 2), (10, 3, 3)])
    def test_interleaved_matches_qwen3_vl(self, section):
        assert list(mrope_slot_components(section, section_order="interleaved")) == hf_interleaved_components(
            section
        )

    def test_errors(self):
        with pytest.raises(
            ValueError,
            match=r"^section_order must be one of 'chunked', 'interleaved', 'ernie'; got 'qwen3_vl' \(Qwen3",
        ):
            mrope_slot_components((4, 2, 2), section_order="qwen3_vl")
        with pytest.raises(ValueError, match=r"^mrope_section must be a section that leaves room for .* 2"):
            mrope_slot_components((2, 3, 3), section_order="interleaved")
        with pytest.raises(TypeError, match=r"^mrope_section must be a non-empty sequence"):
            mrope_slot_components(16)
        with pytest.raises(ValueError, match=r"^mrope_section\[1\] must be an integer >= 0; got -1"):
            mrope_slot_components((4, -1, 2))
        with pytest.raises(ValueError, match=r"^mrope_section must be for 'ernie', .* same slot count"):
            mrope_slot_components((2, 2, 1), section_order="ernie")
        with pytest.raises(
            ValueError, match=r"'ernie' \(pass its \[h, w, t\] config section as \[t, h, w\]\)"
        ):
            mrope_slot_components((2, 2, 2), section_order="ernie4_5_vl")
        with pytest.raises(ValueError, match=r"HunYuan-VL's XD-RoPE is 'chunked'"):
            mrope_slot_components((1, 1, 1, 1), section_order="xdrope")
        assert MROPE_SECTION_ORDERS == ("chunked", "interleaved", "ernie")

    @pytest.mark.parametrize("hf_section", [(22, 22, 20), (2, 2, 4), (3, 3, 1)])
    def test_ernie_matches_its_recomposition(self, hf_section):
        """Ernie 4.5 VL's inv_freq re-order and recomposition_frequencies on (component, frequency)."""
        h, w, t = hf_section
        freqs = np.arange(h + w + t)
        reordered = np.concatenate([freqs[: h + w][0::2], freqs[: h + w][1::2], freqs[h + w :]])
        labels = [[(c, f) for f in reordered] for c in range(3)]  # [component][slot] of position * inv_freq
        chunks = [
            labels[(i + 1) % 3][start : start + n]
            for i, (start, n) in enumerate([(0, h), (h, w), (h + w, t)])
        ]
        hw = [pair for two in zip(chunks[0], chunks[1], strict=True) for pair in two]
        traced = hw + chunks[2]
        assert [f for _, f in traced] == list(freqs)  # every slot keeps its own frequency
        assert list(mrope_slot_components((t, h, w), section_order="ernie")) == [c for c, _ in traced]


class TestMropePositionIds:
    def test_hf_docstring_example(self, xp, device):
        out = mrope_position_ids([(3, 2, 2), 5], xp=xp, device=device)
        expected = [
            [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 4, 5, 6, 7],
            [0, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 3, 4, 5, 6, 7],
            [0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1, 3, 4, 5, 6, 7],
        ]
        assert_equal(out, expected, xp=xp, dtype=_compat.index_dtype(xp), device=device)

    @pytest.mark.parametrize("time_interval", [1, 2, 0.5])
    def test_mixed_sequence(self, xp, time_interval):
        segments = [4, (1, 3, 5), 2, (3, 2, 2), 0, (2, 4, 1), 3]
        out = mrope_position_ids(segments, time_interval=time_interval, xp=xp)
        assert_equal(out, hf_rope_index(segments, time_interval), xp=xp)

    def test_empty(self, xp):
        assert tuple(mrope_position_ids([], xp=xp).shape) == (3, 0)

    def test_errors(self, xp):
        with pytest.raises(ValueError, match=r"^segments\[0\] must be an int \(text\) or a \(t, h, w\)"):
            mrope_position_ids([(2, 2)], xp=xp)
        with pytest.raises(ValueError, match=r"^segments\[0\] must be a positive integer"):
            mrope_position_ids([(0, 2, 2)], xp=xp)
        with pytest.raises(ValueError, match=r"^time_interval must be >= 0"):
            mrope_position_ids([1], time_interval=-1, xp=xp)


class TestMropeAngles:
    @pytest.mark.parametrize("section_order", MROPE_SECTION_ORDERS)
    def test_values(self, xp, device, section_order):
        section = (4, 2, 2)
        inv_freq = [10000.0 ** (-s / 8) for s in range(8)]
        ids = hf_rope_index([2, (2, 2, 3), 1])
        comps = mrope_slot_components(section, section_order=section_order)
        expected = [[ids[comps[s]][n] * inv_freq[s] for s in range(8)] for n in range(len(ids[0]))]
        pos = _compat.asarray(ids, xp=xp, dtype=_compat.index_dtype(xp), device=device)
        out = mrope_angles(pos, floats(xp, inv_freq, device), section, section_order=section_order)
        assert_close(out, expected, xp=xp, dtype=_compat.compute_dtype(xp), device=device)

    def test_text_tokens_get_the_1d_angles_exactly(self, xp):
        inv_freq = floats(xp, [1.0 / 3.0, 0.1, 1e-3, 7e-5], dtype=xp.float32)
        ids = mrope_position_ids([50], xp=xp)
        out = to_numpy(mrope_angles(ids, inv_freq, (2, 1, 1), section_order="interleaved"))
        plain = to_numpy(mrope_angles(ids, inv_freq, (4, 0, 0)))
        np.testing.assert_array_equal(out, plain)

    def test_batched_ids(self, xp):
        ids = np.stack(
            [np.asarray(hf_rope_index([3, (1, 2, 2)])), np.asarray(hf_rope_index([(1, 2, 2), 3]))], axis=1
        )
        inv = [1.0, 0.5, 0.25, 0.125]
        out = mrope_angles(
            _compat.asarray(ids, xp=xp, dtype=_compat.index_dtype(xp)), floats(xp, inv), (2, 1, 1)
        )
        comps = [0, 0, 1, 2]
        expected = np.stack([ids[comps[s]] * inv[s] for s in range(4)], axis=-1)
        assert_close(out, expected, xp=xp)

    def test_errors(self, xp):
        ids = mrope_position_ids([3], xp=xp)
        with pytest.raises(ValueError, match=r"^mrope_section must be a section summing to inv_freq's len"):
            mrope_angles(ids, floats(xp, [1.0] * 4), (2, 1, 2))
        with pytest.raises(TypeError, match=r"^inv_freq must be an array of a real floating dtype"):
            mrope_angles(ids, ids[0, ...], (1, 1, 1))
        with pytest.raises(TypeError, match=r"^position_ids must be an array of an integer dtype"):
            mrope_angles(floats(xp, [[1.0]] * 3), floats(xp, [1.0] * 3), (1, 1, 1))


class TestVisionPositionIds:
    @pytest.mark.parametrize(("t", "h", "w", "m"), [(1, 4, 6, 2), (2, 6, 4, 2), (1, 3, 5, 1), (1, 6, 6, 3)])
    def test_matches_qwen2_vl_rot_pos_emb_order(self, xp, device, t, h, w, m):
        out = vision_position_ids(t, h, w, merge_size=m, xp=xp, device=device)
        assert_equal(out, hf_vision_ids(t, h, w, m), xp=xp, device=device)

    def test_errors(self, xp):
        with pytest.raises(ValueError, match=r"^merge_size must be a divisor of grid_h=3 and grid_w=4"):
            vision_position_ids(1, 3, 4, merge_size=2, xp=xp)
        with pytest.raises(ValueError, match=r"^grid_t must be a positive integer"):
            vision_position_ids(0, 2, 2, xp=xp)


class TestAxialAngles:
    def test_row_and_column_blocks(self, xp, device):
        ids = hf_vision_ids(1, 4, 4, 2)
        omega = [100.0 ** (-k / 2) for k in range(2)]  # theta ** (-arange(0, d, 2) / d), d = 4
        expected = [[r * w for w in omega] + [c * w for w in omega] for r, c in zip(*ids, strict=True)]
        pos = _compat.asarray(ids, xp=xp, dtype=_compat.index_dtype(xp), device=device)
        out = axial_angles(pos, floats(xp, omega, device, dtype=xp.float32))
        assert_close(out, expected, xp=xp, dtype=xp.float32, device=device)

    def test_errors(self, xp):
        with pytest.raises(ValueError, match=r"^inv_freq must be 1-dimensional"):
            axial_angles(vision_position_ids(1, 2, 2, xp=xp), floats(xp, [[1.0]]))
        with pytest.raises(ValueError, match=r"^position_ids must be at least 2-dimensional"):
            axial_angles(vision_position_ids(1, 2, 2, xp=xp)[0, ...], floats(xp, [1.0]))


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    ids = hf_rope_index([2, (1, 2, 3)])
    inv = [1.0, 0.5, 0.25, 0.125]
    pos = _compat.asarray(ids, xp=xp, dtype=_compat.index_dtype(xp))
    out = run_lazily(
        library, lambda p, f: mrope_angles(p, f, (2, 1, 1), section_order="interleaved"), pos, floats(xp, inv)
    )
    comps = [0, 1, 2, 0]
    assert_close(out, [[ids[comps[s]][n] * inv[s] for s in range(4)] for n in range(len(ids[0]))], xp=xp)
