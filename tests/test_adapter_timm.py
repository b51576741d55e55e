"""The timm adapter's verdicts on chosen cases (skipped without timm).

Run from a venv made by scripts/matrix/setup_timm.sh.  ``import timm`` needs torchvision,
which that venv does not have (see the script), so the guard asks the adapter's loader,
which imports ``timm.layers.pos_embed_sincos`` either way, instead of ``import timm``.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip(
    "torch",
    reason="torch (which timm needs) is not installed (scripts/matrix/setup_timm.sh)",
    exc_type=ImportError,
)

import torch

from posenc_ref_conformance.adapters.timm import TimmAdapter, TimmMixedAdapter, load_pos_embed_sincos
from posenc_ref_conformance.compare import as_numpy

from .adapter_cases import case_inputs, verdict

try:
    LIB, _IMPORTED = load_pos_embed_sincos()
except ImportError:  # pragma: no cover - depends on the venv
    pytest.skip("timm is not installed (scripts/matrix/setup_timm.sh)", allow_module_level=True)


@pytest.fixture(scope="module")
def adapter():
    return TimmAdapter()


@pytest.fixture(scope="module")
def mixed():
    return TimmMixedAdapter()


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("rope_cos_sin/half/basic-d8", "float32"),  # build_rotary_pos_embed(rotate_half=True)
        ("rope_cos_sin/interleaved/batched-offsets", "float64"),  # rows picked by apply_keep_indices_nlc
        ("rope_cos_sin/half/large-block-2e24-llama3.1", "float32"),  # float32 grid: the product class
        ("apply_rope/interleaved/batched-heads", "float64"),  # apply_rot_embed(half=False): timm's rot()
        ("apply_rope/half/full-d8", "float32"),  # apply_rot_embed(half=True): rope_rotate_half()
        ("rope/half/offset-100", "float32"),
        ("rope_heads/interleaved/bhsd-shared-positions", "float64"),  # EVA's keep-indices rows, unsqueeze(1)
        ("rope_from_base/half/llama2-d128", "float32"),  # RotaryEmbeddingCat(256) on a 1-D grid
        ("rope_from_base/interleaved/linear-factor-3", "float32"),  # ref_feat_shape: positions t / feat * ref
        ("rope_frequencies/default/d128-llama3-base", "float32"),
        ("sinusoidal/marian/basic-d8", "float32"),  # build_fourier_pos_embed as [sin | cos]
    ],
)
def test_passes(adapter, case_id, dtype):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "pass", result.detail


@pytest.mark.parametrize("case_id", ["rope_frequencies/invalid/odd-dim", "rope_frequencies/invalid/base-1"])
def test_invalid_frequencies_are_not_rejected(adapter, case_id):
    result = verdict(adapter, case_id)
    assert result.status == "fail" and "returned a value; expected ValueError" in result.detail, result.detail


@pytest.mark.parametrize("layout", ["half", "interleaved"])
def test_float64_positions_round_to_float32(adapter, layout):
    """timm's grid is float32 in a float64 run: position 2**24 + 1 is computed at 2**24."""
    result = verdict(adapter, f"rope_cos_sin/{layout}/run-2e24-d16", "float64")
    assert result.status == "fail", result.detail
    assert "positions rounded to float32" in str(result.diagnosis), result.diagnosis
    assert verdict(adapter, f"rope_cos_sin/{layout}/run-2e24-d16", "float32").status == "pass"


@pytest.mark.parametrize(
    ("case_id", "why"),
    [
        ("apply_rope/half/partial-r4-d10", "no partial rotary"),
        ("rope/half/yarn-attention-factor", "no attention factor"),
        ("rope_cos_sin/half/reach-sweep", "too far apart"),  # a table of 2**24 rows
        ("rope_heads/half/bshd-shared-positions", "head_layout 'bshd' not supported"),
        ("rope_from_base/half/ntk-factor-8", "scaling type 'ntk' not supported"),
        ("rope_from_base/half/invalid-odd-dim", "even d only"),
        ("sinusoidal/vaswani/basic-d8", "convention 'vaswani' not supported"),
        ("apply_rope/unknown/invalid-layout", "takes no layout argument"),
    ],
)
def test_out_of_reach_is_skipped_with_the_reason(adapter, case_id, why):
    result = verdict(adapter, case_id)
    assert result.status == "skip" and why in result.detail, result.detail


def test_dim_above_width_is_torchs_broadcast_error(adapter):
    result = verdict(adapter, "rope_from_base/half/invalid-dim-above-width")
    assert result.status == "pass" and "RuntimeError" in result.detail, result.detail


def test_sincos2d_is_the_same_table_in_1d(adapter):
    """build_sincos2d_pos_embed on a 1-D grid is the marian table the adapter reads off build_fourier."""
    table = as_numpy(adapter.sinusoidal(np.arange(6), 8, convention="marian", options={}, dtype="float32"))
    np.testing.assert_array_equal(table, LIB.build_sincos2d_pos_embed([6], dim=16).numpy())


def test_rot_is_the_interleaved_pair_rotation():
    x = torch.arange(6.0)
    assert LIB.rot(x).tolist() == [-1.0, 0.0, -3.0, 2.0, -5.0, 4.0]  # pairs (2i, 2i + 1)


def test_any_positions_come_from_one_grid(adapter):
    """Rows of one table over min..max, picked by keep indices, equal a table built at each offset."""
    inputs = case_inputs("rope_cos_sin/half/proportional-tail")
    cos, _ = adapter.rope_cos_sin(
        inputs["positions"], inputs["inv_freq"], attention_factor=1.0, layout="half", dtype="float32"
    )
    bands = torch.tensor(inputs["inv_freq"], dtype=torch.float32)
    for row, p in zip(as_numpy(cos), inputs["positions"], strict=True):
        _, alone = LIB.build_rotary_pos_embed(
            [1], bands=bands, in_pixels=False, grid_offset=float(p), rotate_half=True
        )
        np.testing.assert_array_equal(row, alone[0].numpy())


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("rope_cos_sin/interleaved/large-positions-d16", "float32"),  # any positions: no grid
        ("rope/interleaved/large-block-2e24-llama3.1", "float32"),
        ("rope_heads/interleaved/bhsd-runs-2e20-2e24", "float32"),
    ],
)
def test_mixed_passes(mixed, case_id, dtype):
    result = verdict(mixed, case_id, dtype)
    assert result.status == "pass", result.detail


def test_mixed_has_no_half_layout(mixed):
    result = verdict(mixed, "rope_cos_sin/half/basic-d8")
    assert result.status == "skip" and "layout 'half' not supported" in result.detail, result.detail


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("patch_grid_resize/vit/cls-4x4-to-6x6", "float32"),  # resample_abs_pos_embed, bicubic
        ("patch_grid_resize/registers/4-prefix-3x4-to-2x6", "float32"),  # num_prefix_tokens=4, old_size
        ("patch_grid_resize/dinov2-registers/antialias-5x5-to-3x4", "float32"),  # antialias=True
        ("patch_grid_resize/vilt/bilinear-align-corners-3x3-to-4x6", "float32"),  # align_corners=True
        ("patch_grid_resize/timesformer/nearest-2x3-to-4x5", "float32"),
        ("grid_resize/bicubic/antialias-down-8x8-to-5x5", "float32"),  # resample_abs_pos_embed_nhwc
        ("grid_resize/nearest/down-5x5-to-3x2", "float32"),
    ],
)
def test_grid_resize_passes(adapter, case_id, dtype):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "pass", result.detail


@pytest.mark.parametrize(
    ("case_id", "why"),
    [
        ("patch_grid_resize/idefics/scale-factor-4x4-to-5x6", "no scale_factor"),
        ("grid_resize/linear-1d/sam-7-to-13", "one [n, m, D] grid"),
    ],
)
def test_grid_resize_out_of_reach(adapter, case_id, why):
    result = verdict(adapter, case_id)
    assert result.status == "skip" and why in result.detail, result.detail
    assert (
        verdict(adapter, "patch_grid_resize/vit/cls-4x4-to-6x6", "float64").status == "skip"
    )  # float32 only


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("sincos_2d/rt_detr/3x5", "float32"),  # build_sincos2d_pos_embed(interleave_sin_cos=True)
        ("sincos_2d/omdet_turbo/7x2", "float32"),  # reverse_coord=True: w-major rows, [w | h]
        ("sincos_2d/rt_detr/block-offset", "float32"),  # rows of the grid arange(44) x arange(66)
        ("sincos_2d/invalid/dim-6", "float32"),  # timm's assert dim % 4 == 0
        ("rope_2d_cos_sin/sam2/grid-2x3", "float32"),  # build_rotary_pos_embed(grid_indexing="xy")
        ("rope_2d_cos_sin/llama4_vision/grid-2x4-cls", "float32"),  # grid_offset 1: cls (-1, -1) at 0
    ],
)
def test_vision_passes(adapter, case_id, dtype):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "pass", result.detail


@pytest.mark.parametrize(
    ("case_id", "why"),
    [
        ("sincos_2d/vit_mae/2x6", "no 'vit_mae' layout"),
        ("sincos_2d/rt_detr/cls", "no cls row"),
        ("rope_2d_cos_sin/pixtral/grid-2x3", "same on both axes"),
        ("rope_2d_cos_sin/gemma4_vision/grid-2x3", "a half per axis"),
        ("rope_2d_cos_sin/kimi_k25/grid-2x3", "side by side"),
        ("rope_2d_cos_sin/dinov3/centres-2x4", "takes a grid shape, not coordinates"),
    ],
)
def test_vision_out_of_reach(adapter, case_id, why):
    result = verdict(adapter, case_id)
    assert result.status == "skip" and why in result.detail, result.detail
    assert verdict(adapter, "sincos_2d/rt_detr/3x5", "float64").status == "skip"  # float32 only


def test_sincos_2d_on_its_grid_is_timms_table(adapter):
    """On arange(H) x arange(W) the row pick is the identity: the table is timm's own."""
    table = adapter.sincos_2d(
        np.arange(3),
        np.arange(5),
        8,
        temperature=100.0,
        convention="rt_detr",
        cls_token=False,
        dtype="float32",
    )
    expected = LIB.build_sincos2d_pos_embed([3, 5], dim=8, temperature=100.0, interleave_sin_cos=True)
    np.testing.assert_array_equal(as_numpy(table), expected.numpy())
