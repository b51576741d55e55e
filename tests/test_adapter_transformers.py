"""The built-in ``transformers`` adapter: its verdicts stay what the matrix page classifies.

The module imports without torch and transformers, and loading the adapter then
fails with the install hint (tested always, by hiding the package).  With
transformers installed: the known failures are exactly the adopter xfail file
(docs/matrix/xfails/transformers.txt, classified in docs/matrix/classification.json),
chosen cases keep their verdicts (passes the library must keep, discrepancies the
suite must keep detecting, cases it declares out of reach), each variant swaps in
its HF implementation, and the float64 it declares for ``apply_rope`` and
``learned`` holds.
"""

from __future__ import annotations

import pathlib
import sys

import pytest

from posenc_ref_conformance.adapters import AdapterError, load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.runner import Report, load_xfails, run

XFAILS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "matrix" / "xfails" / "transformers.txt"
MISSING = hf.missing()
needs_transformers = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")


def test_without_transformers_loading_fails_with_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)  # import transformers -> ImportError
    assert "pip install transformers" in (hf.missing() or "")
    with pytest.raises(AdapterError, match="needs torch and transformers"):
        load_adapter("transformers")
    with pytest.raises(AdapterError, match="needs torch and transformers"):
        load_adapter("posenc_ref_conformance.adapters.transformers:mpt")


def test_unknown_variant_is_a_usage_error() -> None:
    with pytest.raises(
        AdapterError, match=r"the variant must be one of \[(\S+ )*'fsmt', (\S+ )*'gptj', (\S+ )*'mpt'"
    ):
        load_adapter("transformers:no_such_family")


def _learned_functions(variant: str) -> tuple[str, ...]:
    """The functions the family's learned-zoo row adds to its variant (none without a row)."""
    from posenc_ref_conformance.adapters._transformers_learned_families import LEARNED_FAMILIES

    row = LEARNED_FAMILIES.get(variant)
    return row.functions() if row else ()


@pytest.fixture(scope="module")
def report() -> Report:
    return run(load_adapter("transformers"), xfails=load_xfails(XFAILS))


def _statuses(report: Report) -> dict[str, str]:
    return {r.result_id: r.status for r in report.results}


@needs_transformers
def test_known_failures_are_exactly_the_xfail_file(report: Report) -> None:
    failed = [f"{r.result_id}: {r.detail}" for r in report.results if r.status in ("fail", "xpass")]
    assert not failed, failed
    assert not report.stale_xfails, report.stale_xfails
    assert report.counts()["pass"] > 100


#: Cases transformers must keep passing: each names a real convention the HF code gets right.
MUST_PASS = [
    "rope_frequencies/yarn/gpt-oss[float32]",  # truncate=False honoured
    "rope_frequencies/yarn/deepseek-v3[float32]",  # mscale / mscale_all_dim ratio
    "rope_frequencies/yarn/factor-null-32768-over-4096[float32]",  # factor: null derives max / original
    "rope_frequencies/llama3/llama3.1[float32]",
    "rope_frequencies/dynamic/seq-len-10000[float32]",  # config.max_position_embeddings, not original
    "rope_frequencies/longrope/seq-len-4097[float32]",  # long factors past original_max
    "rope_frequencies/proportional/gemma-quarter[float32]",
    "rope_cos_sin/interleaved/gpt-oss-yarn[float32]",  # Cohere's repeat_interleave table
    "rope_cos_sin/half/large-positions-d16[float32]",  # within the float32 product class's bound
    "apply_rope/half/partial-r4-d10[float32]",  # GPT-NeoX's partial rotary
    "apply_rope/interleaved/batched-heads[float32]",  # GPT-J's rotate_every_two
    "rope_from_base/half/yarn-gpt-oss[float32]",  # LlamaRotaryEmbedding(config) end to end
    "rope_from_base/half/dynamic-seq-len-10000[float32]",  # dynamic_rope_update grows the base
    "rope_from_base/interleaved/longrope-seq-len-4097[float32]",  # Cohere's module switches to long
    "rope_heads/half/bshd-offsets-partial[float32]",  # unsqueeze_dim=2, partial rotary
    "rope_heads/interleaved/bhsd-offsets-partial[float32]",  # GLM's apply_rotary_pos_emb (partial)
    "t5_bucket/bidirectional/1000-32768-float32[int]",  # float32 log at a bucket boundary
    "t5_bias/bidirectional/block-of-70000[float32]",  # compute_bias with past_seen_tokens
    "t5_bias/umt5/decoder-layer-7[float32]",
    "alibi_slopes/max-bias-8/heads-12[float32]",  # BLOOM's non-power-of-two rule
    "alibi_bias/causal/block-of-65536[float32]",
    "alibi_bias_from_mask/padded/left-12-heads[float32]",  # BLOOM's cumsum key index
    "token_positions/padded/left[int]",  # fairseq's make_positions
    "mrope_position_ids/two-images[int]",  # Qwen2.5-VL get_rope_index
    "sinusoidal/vaswani/odd-dim-5[float32]",  # XLM
    "sinusoidal/marian/odd-dim-5[float32]",  # ceil/floor split
    "sinusoidal/fairseq/padding-idx-3[float32]",  # Speech2Text rows p + padding_idx + 1
    "learned/opt/basic[float32]",  # OPT's offset 2, padding position -1
    "causal_mask/chunked/4[bool]",
    "attention/bias/alibi[float32]",  # eager_attention_forward with a bias in the mask
    "attention/uniform-masked/fully-masked-row[float32]",  # the declared variant: mean of v
    "invariant/rope/layout-equivalence[float32]",
]

#: Discrepancies the suite must keep detecting (classified in docs/matrix/classification.json).
MUST_DETECT = [
    "rope_frequencies/yarn/factor-from-lengths[float32]",  # convention: factor required
    "sinusoidal/tensor2tensor/dim-2[float32]",  # bug: Whisper divides by zero
    "rope_frequencies/invalid/beta-order[float32]",  # bug: validation only logs
    "mrope_position_ids/video-3-frames[int]",  # bug: text after a video reuses its ids
    "token_positions/invalid/negative-cache[int]",  # bug: cache_length not checked
]

#: Declared out of reach: skipped with a reason, never compared.
MUST_SKIP = [
    "rope_frequencies/ntk/factor-8[float32]",  # HF has no static ntk type
    "sinusoidal/mlx/defaults-d8[float32]",
    "alibi_bias/symmetric/square-4-heads[float32]",  # HF's ALiBi is the causal form only
    "rope_frequencies/default/d8[float64]",  # HF computes inv_freq in float32
    "rope_heads/half/thd-shared-positions[float32]",  # no [tokens, heads, dim] rotation
    "attention/mask/fully-masked-row[float32]",  # the canonical zero rows: HF computes the variant
    "mrope_position_ids/invalid-empty-block[int]",  # an empty block has no tokens to hand HF
]


@needs_transformers
def test_chosen_verdicts(report: Report) -> None:
    statuses = _statuses(report)
    expected = {
        **dict.fromkeys(MUST_PASS, "pass"),
        **dict.fromkeys(MUST_DETECT, "xfail"),
        **dict.fromkeys(MUST_SKIP, "skip"),
    }
    assert {rid: statuses.get(rid) for rid in expected} == expected


@needs_transformers
def test_float32_phase_is_the_product_class_not_exact(report: Report) -> None:
    """At m = 2**24 the product m * theta loses whole radians: within its class, far from exact."""
    (result,) = [r for r in report.results if r.result_id == "rope_cos_sin/half/large-positions-d16[float32]"]
    assert result.status == "pass" and result.phase == "product"
    assert result.max_abs_err is not None and result.max_abs_err > 0.5


@needs_transformers
@pytest.mark.parametrize(
    ("variant", "only", "must_pass", "must_fail"),
    [
        (
            "mpt",
            ["alibi_slopes", "alibi_bias"],
            "alibi_slopes/max-bias-16/heads-12",
            "alibi_slopes/invalid/zero-max-bias",
        ),
        ("m2m_100", ["sinusoidal"], "sinusoidal/fairseq/odd-dim-7", None),
        ("fsmt", ["sinusoidal"], "sinusoidal/fairseq/batched", None),
        ("gptj", ["rope"], "rope_from_base/interleaved/default-d16", None),
        ("conditional_detr", ["detr_sine_2d"], "detr_sine_2d/detr/padded-batch", None),
        ("dab_detr", ["detr_sine_2d"], "detr_sine_2d/dab/temperatures-padded", None),
        ("grounding_dino", ["detr_sine_2d"], "detr_sine_2d/detr/padded-batch", None),
    ],
)
def test_variants_use_their_own_implementation(
    variant: str, only: list[str], must_pass: str, must_fail: str | None
) -> None:
    adapter = load_adapter(f"transformers:{variant}")
    assert adapter.describe()["sources"] != load_adapter("transformers").describe()["sources"]
    report = run(adapter, only=only, xfails=load_xfails(XFAILS))
    statuses = {r.id: r.status for r in report.results}
    assert statuses[must_pass] == "pass"
    failed = {r.id for r in report.results if r.status == "fail"}
    assert failed == ({must_fail} if must_fail else set())


@needs_transformers
def test_declared_float64_holds_for_apply_rope_and_learned(report: Report) -> None:
    """apply_rope and learned follow their input dtype: float64 passes at float64 tolerances."""
    declared = load_adapter("transformers").capabilities
    assert declared.dtypes_of("apply_rope") == declared.dtypes_of("learned") == ("float64", "float32")
    valid = [
        r
        for r in report.results
        if r.function in ("apply_rope", "learned") and r.dtype == "float64" and "InvalidInput" not in r.flags
    ]
    assert valid and {r.status for r in valid} <= {"pass", "skip"}, [r.detail for r in valid]
    assert sum(r.status == "pass" for r in valid) >= 5


#: Windowed 2-D relative positions: every HF family that holds a copy, one variant each.
WINDOW_FUNCTIONS = ["window_bias", "swinv2_log_coords", "decomposed_rel_pos"]
WINDOW_MUST_PASS = [
    "window_bias/swin/nonsquare-2x3[float64]",  # Swin's index, row stride 2Ww - 1
    "window_bias/swin/nonsquare-3x2[float32]",
    "window_bias/beit/cls-2x2[float32]",  # BEiT's cls rows (square: the resize is the identity)
    "window_bias/invalid/table-rows[float32]",  # copy_ refuses a table of another window
    "swinv2_log_coords/window/nonsquare-3x5[float32]",  # [dh, dw] order, float32
    "swinv2_log_coords/pretrained/8-from-4[float32]",
    "decomposed_rel_pos/unequal/q8-k6-float32[float32]",  # the float32 coordinate and .long()
    "decomposed_rel_pos/sam/nonsquare-2x4[float64]",
    "invariant/window_bias/toeplitz-block-toeplitz[float32]",
    "invariant/window_bias/decomposed-separable[float64]",
]
WINDOW_MUST_DETECT = [
    "window_bias/beit/cls-nonsquare-2x3[float32]",  # bug: BEiT's resize on a non-square window
    "swinv2_log_coords/invalid/window-4x1[float32]",  # bug: NaN coordinates
]


# --- grid resize -----------------------------------------------------------------------------------

#: Each HF family the grid-resize methods reach, with a case that must pass through it.
GRID_RESIZE_PASS = {
    "vit": "patch_grid_resize/vit/cls-4x4-to-3x5[float64]",  # ViTEmbeddings
    "dinov2": "patch_grid_resize/vit/cls-4x4-to-3x5[float32]",  # Dinov2Embeddings (float32)
    "clip": "patch_grid_resize/clip/cls-3x3-to-5x4[float64]",
    "siglip": "patch_grid_resize/siglip/no-prefix-3x3-to-4x5[float64]",
    "deit": "patch_grid_resize/deit/cls-dist-3x3-to-5x5[float64]",
    "dinov2_with_registers": "patch_grid_resize/dinov2-registers/antialias-5x5-to-3x4[float32]",
    "idefics": "patch_grid_resize/idefics/scale-factor-4x4-to-5x6[float64]",
    "idefics-no-early-return": "patch_grid_resize/idefics/same-grid-resampled[float64]",
    "idefics-early-return": "patch_grid_resize/idefics/same-grid-skipped[float64]",
    "sam": "grid_resize/linear-1d/sam-7-to-13[float64]",
    "timesformer": "patch_grid_resize/timesformer/nearest-3x3-to-5x4[float64]",
    "vit-same-count": "patch_grid_resize/vit/bicubic-4x4-to-8x2-same-count[float64]",
}


@pytest.fixture(scope="module")
def grid_report() -> Report:
    return run(load_adapter("transformers"), only=["grid_resize"], xfails=load_xfails(XFAILS))


@needs_transformers
def test_grid_resize_families_pass(grid_report: Report) -> None:
    statuses = _statuses(grid_report)
    assert {rid: statuses.get(rid) for rid in GRID_RESIZE_PASS.values()} == dict.fromkeys(
        GRID_RESIZE_PASS.values(), "pass"
    )
    assert not [r.result_id for r in grid_report.results if r.status == "fail"]
    # bug: Timesformer keeps the stored table for the pretrained patch count in another shape
    for dtype in ("float64", "float32"):
        assert statuses[f"patch_grid_resize/timesformer/nearest-4x4-to-2x8-same-count[{dtype}]"] == "xfail"
    # DINOv2 with registers casts to float32: its float64 run is declared out of reach, not compared
    assert statuses["patch_grid_resize/dinov2-registers/antialias-5x5-to-3x4[float64]"] == "skip"
    assert statuses["invariant/grid_resize/patch-same-grid-identity[float64]"] == "pass"


@needs_transformers
@pytest.mark.parametrize(
    "variant",
    [
        "default",
        "donut",
        "maskformer",
        "clap",
        "data2vec",
        "swin2sr",
        "vitdet",
        "sam_hq",
        "got_ocr2",
        "seggpt",
    ],
)
def test_window_bias_families_agree(variant: str) -> None:
    """Swin, Donut, MaskFormer-Swin, CLAP, BEiT, data2vec-vision, Swin-V2, Swin2SR, SAM, SAM-HQ, ViTDet,
    GOT-OCR2 and SegGPT:
    the same verdicts, the known failures exactly the xfail file's, "exact" coordinates out of reach."""
    adapter = load_adapter("transformers" if variant == "default" else f"transformers:{variant}")
    report = run(adapter, only=WINDOW_FUNCTIONS, xfails=load_xfails(XFAILS))
    statuses = _statuses(report)
    assert not [rid for rid, status in statuses.items() if status in ("fail", "xpass")]
    expected = {**dict.fromkeys(WINDOW_MUST_PASS, "pass"), **dict.fromkeys(WINDOW_MUST_DETECT, "xfail")}
    expected["decomposed_rel_pos/unequal/q8-k6-exact[float32]"] = "skip"
    if variant != "default":
        # a family's column holds its own code only: the other functions, and the other window
        # layout (a cls token for Swin's copies, none for BEiT's), are the default column's
        declared = adapter.capabilities.functions
        assert declared is not None
        # the family's other schemes (CLAP's RoBERTa text, SAM-HQ's Fourier, MaskFormer's sine) are its own
        assert set(declared) & set(WINDOW_FUNCTIONS) < set(WINDOW_FUNCTIONS)
        cls_rows = "cls_source" in adapter.overrides
        swin_rows = "window_source" in adapter.overrides
        for rid in list(expected):
            function = rid.partition("/")[0]
            if rid.startswith("invariant/"):
                function = "window_bias" if "decomposed" not in rid else "decomposed_rel_pos"
            other_layout = function == "window_bias" and (
                (swin_rows and "/beit/" in rid) or (cls_rows and "/beit/" not in rid)
            )
            if function not in declared or other_layout:
                expected[rid] = "skip"
        assert {rid: statuses.get(rid) for rid in expected} == expected
        assert adapter.describe()["sources"] != load_adapter("transformers").describe()["sources"]
    else:
        assert {rid: statuses.get(rid) for rid in expected} == expected


@needs_transformers
@pytest.mark.parametrize(
    ("table_shape", "prefix", "options", "dtype", "source"),
    [
        ((1, 17, 2), 1, {}, "float64", "vit"),
        ((1, 17, 2), 1, {}, "float32", "dinov2"),
        ((17, 2), 1, {}, "float64", "clip"),
        ((16, 2), 0, {}, "float64", "siglip"),
        ((1, 18, 2), 2, {}, "float64", "deit"),
        ((1, 17, 2), 1, {"aa": True}, "float32", "dinov2_with_registers"),
        ((1, 17, 2), 1, {"factors": [1.275, 1.275]}, "float64", "idefics"),
        ((1, 17, 2), 1, {"mode": "nearest"}, "float64", "timesformer"),
    ],
)
def test_patch_grid_resize_source(table_shape, prefix, options, dtype, source) -> None:
    import numpy as np

    table = np.zeros(table_shape, dtype=dtype)
    kw = {"mode": "bicubic", "align": False, "factors": None, "aa": False, **options}
    assert hf.TransformersAdapter._patch_source(table, prefix, **kw) == source


@needs_transformers
def test_patch_grid_resize_unsupported_calls_are_skips() -> None:
    import numpy as np

    from posenc_ref_conformance.adapters.base import Unsupported

    adapter = load_adapter("transformers")
    table = np.zeros((1, 17, 2))
    common = {"align_corners": False, "scale_factor": None, "antialias": False, "skip_same_grid": False}
    with pytest.raises(Unsupported, match="bicubic"):
        adapter.patch_grid_resize(table, [4, 4], [3, 3], prefix_tokens=1, mode="bilinear", **common)
    with pytest.raises(Unsupported, match="prefix rows"):
        adapter.patch_grid_resize(
            np.zeros((21, 2)), [4, 4], [3, 3], prefix_tokens=5, mode="bicubic", **common
        )
    with pytest.raises(Unsupported, match="square grid"):
        adapter.patch_grid_resize(
            np.zeros((1, 13, 2)), [3, 4], [3, 3], prefix_tokens=1, mode="bicubic", **common
        )
    with pytest.raises(Unsupported, match="get_rel_pos"):
        adapter.grid_resize(
            np.zeros((5, 2)), [8], mode="linear", align_corners=False, scale_factor=None, antialias=False
        )


# --- vision sine ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def vision_report() -> Report:
    return run(load_adapter("transformers"), only=["vision_sine"], xfails=load_xfails(XFAILS))


#: Vision-sine verdicts: passes name the HF code path each exercises; skips are declared out of reach.
VISION_VERDICTS = {
    "detr_sine_2d/detr/padded-batch[float64]": "pass",  # DetrSinePositionEmbedding in the model dtype
    "detr_sine_2d/deformable/padded-batch[float32]": "pass",  # Deformable DETR's (c - 0.5)
    "detr_sine_2d/dab/temperatures[float32]": "skip",  # DETR's own class has one temperature
    "detr_coord_sine/conditional/boxes-batched[float32]": "pass",  # encode_sinusoidal_position_embedding
    "detr_coord_sine/deformable/proposals[float32]": "pass",  # get_proposal_pos_embed
    "detr_coord_sine/conditional/points[float64]": "skip",  # float32 dim_t: declared float32 only
    "sincos_2d/rt_detr/3x5[float64]": "pass",  # build_2d_sinusoidal_position_embedding, h-major
    "sincos_2d/omdet_turbo/7x2[float64]": "pass",  # OmDet-Turbo's original RT-DETR order
    "sincos_2d/vit_mae/4x4-cls[float32]": "pass",  # ViTMAEEmbeddings.initialize_weights' half swap
    "sincos_2d/vit_mae/2x6[float32]": "skip",  # ViT-MAE builds square grids only
    "sincos_2d/rt_detr/block-offset[float32]": "skip",  # HF builds arange grids only
    "invariant/vision_sine/detr-padding-independence[float64]": "pass",
    "invariant/vision_sine/sincos-2d-axis-structure[float64]": "pass",
}


@needs_transformers
def test_vision_sine_verdicts(vision_report: Report) -> None:
    statuses = _statuses(vision_report)
    assert {rid: statuses.get(rid) for rid in VISION_VERDICTS} == VISION_VERDICTS
    assert not [r.result_id for r in vision_report.results if r.status == "fail"]


@needs_transformers
def test_detr_sine_without_a_mask_is_the_all_ones_mask() -> None:
    """HF's mask=None path (an arange, not a cumsum) equals the all-true mask the canonical call takes."""
    import numpy as np
    import torch
    from transformers.models.detr.modeling_detr import DetrSinePositionEmbedding

    adapter = load_adapter("transformers")
    module = DetrSinePositionEmbedding(8, normalize=True)
    plain = module(shape=(2, 1, 3, 5), device="cpu", dtype=torch.float64, mask=None)
    ones = adapter.detr_sine_2d(
        np.ones((2, 3, 5), dtype=bool),
        8,
        temperature=10000.0,
        temperature_height=None,
        temperature_width=None,
        normalize=True,
        scale=2 * np.pi,
        convention="detr",
        dtype="float64",
    )
    assert torch.equal(plain, ones)


# --- vision features: SAM Fourier features, NaViT buckets, factorised 2-D tables ---------------------


@pytest.fixture(scope="module")
def vision_adapter():
    return load_adapter("transformers")


@needs_transformers
def test_vision_features_pass_and_reach_each_hf_module(report: Report) -> None:
    statuses = _statuses(report)
    for result_id in (
        "fourier_features/prompt/points-1024[float32]",  # SamPromptEncoder.forward (+0.5)
        "fourier_features/nonsquare/600x900-no-shift[float64]",  # SamPositionalEmbedding, x / W, y / H
        "fourier_grid/square/8x8[float32]",  # SamModel's grid
        "fourier_grid/nonsquare/4x6[float32]",  # Sam2Model's grid
        "navit_position_ids/boundary/idefics2-25-and-49[int]",  # Idefics2's float32 boundary rounding
        "navit_position_ids/boundary/19-on-19[int]",  # PyTorch's vectorised float32 arange
        "navit_position_ids/boundary/idefics2-25-and-49-divide[int]",  # MiniCPM-V's vision_utils
        "bbox_embedding/sum/layoutlm[float32]",
        "row_col_embedding/sum/pix2struct[float32]",
        "row_col_embedding/concat/detr-4x2[float64]",
    ):
        assert statuses[result_id] == "pass", result_id
    # LayoutLMv2 concatenates in a private method only: not reached (no dependency's private attributes)
    assert statuses["bbox_embedding/concat/layoutlmv2[float64]"] == "skip"


@needs_transformers
def test_sam2_positional_embedding_is_sams(vision_adapter) -> None:
    """SAM 2's copy (with its no-op ``coordinates.to(torch.float32)``) gives SAM's values, float64 kept."""
    import numpy as np
    import torch
    from transformers.models.sam2.modeling_sam2 import Sam2PositionalEmbedding

    g = torch.tensor([[1.0, -0.5], [0.25, 2.0]], dtype=torch.float64)
    coords = np.asarray([[[[10.0, 20.0], [500.5, 3.25]]]])
    module = Sam2PositionalEmbedding(types_namespace(hidden_size=4, scale=1.0))
    module.positional_embedding = g.clone()
    with torch.no_grad():
        sam2 = module(torch.from_numpy(coords), (1024, 768))
    sam = vision_adapter.fourier_features(coords, g.numpy(), input_shape=[1024, 768], offset=0.0)
    assert sam2.dtype == torch.float64
    assert torch.equal(sam2, sam)


def types_namespace(**fields):
    import types

    return types.SimpleNamespace(**fields)


@needs_transformers
def test_navit_ids_read_back_exactly(vision_adapter) -> None:
    """The identity-like table returns the ids Idefics2 computes, including its float32 boundary rows."""
    import numpy as np

    import posenc_ref as pr

    mask = np.zeros((2, 25, 3), dtype=bool)
    mask[0, :25, :3] = True
    mask[1, :10, :2] = True
    got = vision_adapter.navit_position_ids(mask, num_patches_per_side=5, arithmetic="float32").numpy()
    assert got.tolist() == pr.navit_position_ids(mask, num_patches_per_side=5).tolist()
    assert got[0, 5 * 3] == 0  # row 5 of 25 on a 5 x 5 grid: bucket 0 in float32 (1 exactly)


@needs_transformers
def test_layoutlmv3_clip_matches_clip_shape(vision_adapter) -> None:
    """LayoutLMv3 clips h and w to 0 .. 1023 whatever its tables: on 1024-row tables (too large for the
    shipped golden set) it is ``clip_shape=True``; negative sides clip to row 0."""
    import numpy as np

    import posenc_ref as pr

    rng = np.random.default_rng(7)
    x, y, h, w = (rng.integers(-64, 65, size=(1024, d)) / 32 for d in (2, 2, 1, 1))
    boxes = np.asarray([[[9, 2, 3, 15], [0, 0, 1023, 1023], [1000, 1000, 0, 0]]])
    got = vision_adapter.bbox_embedding(x, y, h, w, boxes, combine="concat", clip_shape=True).numpy()
    want = np.asarray(pr.bbox_embedding(x, y, h, w, boxes, combine="concat", clip_shape=True))
    assert np.array_equal(got, want)


@needs_transformers
def test_rope_2d_maps_each_vision_tower() -> None:
    """Pixtral, Gemma 4 vision, DINOv3 (eval), Llama 4 vision, SAM 2 memory and Kimi-K2.5 vision rotary
    modules pass as rope_2d_cos_sin conventions.

    DINOv3's module builds its own patch centres, so augmented or batched coordinates are out of reach.
    """
    report = run(load_adapter("transformers"), only=["rope_2d_cos_sin"])
    statuses = {r.result_id: r.status for r in report.results}
    expected = {
        "rope_2d_cos_sin/pixtral/grid-2x3[float32]": "pass",
        "rope_2d_cos_sin/pixtral/two-images[float32]": "pass",
        "rope_2d_cos_sin/gemma4_vision/grid-3x1-d32[float32]": "pass",
        "rope_2d_cos_sin/dinov3/centres-1x4-d32[float32]": "pass",
        "rope_2d_cos_sin/llama4_vision/grid-2x4-cls[float32]": "pass",  # +1 offsets, cls row zero
        "rope_2d_cos_sin/sam2/grid-1x4-repeated[float32]": "pass",  # (w, h) ids
        "rope_2d_cos_sin/kimi_k25/grid-2x3[float32]": "pass",  # (w, h) slot pairs
        "rope_2d_cos_sin/dinov3/augmented[float32]": "skip",  # its own centres only
        "rope_2d_cos_sin/pixtral/grid-2x3[float64]": "skip",  # float32 tables only
        "rope_2d_cos_sin/invalid-head-dim[float32]": "skip",  # HF validates nothing here
        "invariant/rope/2d-shift-per-axis/gemma4_vision[float32]": "pass",
        "invariant/rope/2d-shift-per-axis/dinov3[float32]": "skip",
    }
    assert {rid: statuses.get(rid) for rid in expected} == expected
    assert not [r.result_id for r in report.results if r.status == "fail"]


# --- vision sine: each family's own copy ------------------------------------------------------------

#: variant -> (its declared functions, the attribute each reads from its modeling module, a case it passes)
VISION_COPIES = {
    "conditional_detr": (
        ["detr_sine_2d"],
        "ConditionalDetrSinePositionEmbedding",
        "detr_sine_2d/detr/padded-batch[float32]",
    ),
    "table_transformer": (
        ["detr_sine_2d"],
        "TableTransformerSinePositionEmbedding",
        "detr_sine_2d/detr/padded-batch[float32]",
    ),
    "maskformer": (
        ["detr_sine_2d"],
        "MaskFormerSinePositionEmbedding",
        "detr_sine_2d/detr/padded-batch[float32]",
    ),
    "mask2former": (
        ["detr_sine_2d"],
        "Mask2FormerSinePositionEmbedding",
        "detr_sine_2d/detr/padded-batch[float32]",
    ),
    "oneformer": (
        ["detr_sine_2d"],
        "OneFormerSinePositionEmbedding",
        "detr_sine_2d/detr/padded-batch[float32]",
    ),
    "sam2": (["detr_sine_2d"], "Sam2SinePositionEmbedding", "detr_sine_2d/detr/padded-batch[float32]"),
    "edgetam": (["detr_sine_2d"], "EdgeTamSinePositionEmbedding", "detr_sine_2d/detr/padded-batch[float32]"),
    "sam3": (["detr_sine_2d"], "Sam3SinePositionEmbedding", "detr_sine_2d/detr/padded-batch[float32]"),
    "sam3_lite_text": (
        ["detr_sine_2d"],
        "Sam3LiteTextSinePositionEmbedding",
        "detr_sine_2d/detr/padded-batch[float32]",
    ),
    **{
        name: (["detr_sine_2d"], cls, "detr_sine_2d/detr/padded-batch[float32]")
        for name, cls in (
            ("sam2_video", "Sam2VideoPositionEmbeddingSine"),
            ("edgetam_video", "EdgeTamVideoPositionEmbeddingSine"),
            ("sam3_tracker_video", "Sam3TrackerVideoPositionEmbeddingSine"),
        )
    },
    "grounding_dino": (
        ["detr_sine_2d", "detr_coord_sine"],
        "encode_sinusoidal_position_embedding",
        "detr_coord_sine/conditional/boxes-batched[float32]",
    ),
    "mm_grounding_dino": (
        ["detr_sine_2d", "detr_coord_sine"],
        "MMGroundingDinoSinePositionEmbedding",
        "detr_sine_2d/detr/padded-batch[float32]",
    ),
    "dab_detr": (
        ["detr_sine_2d", "detr_coord_sine"],
        "encode_sinusoidal_position_embedding",
        "detr_coord_sine/conditional/boxes-batched[float32]",
    ),
    "lw_detr": (
        ["detr_coord_sine"],
        "encode_sinusoidal_position_embedding",
        "detr_coord_sine/conditional/boxes-batched[float32]",
    ),
    "rf_detr": (
        ["detr_coord_sine"],
        "encode_sinusoidal_position_embedding",
        "detr_coord_sine/conditional/boxes-batched[float32]",
    ),
    **{
        name: (["sincos_2d"], "build_2d_sinusoidal_position_embedding", "sincos_2d/rt_detr/3x5[float64]")
        for name in (
            "rt_detr_v2",
            "d_fine",
            "deimv2",
            "pp_doclayout_v2",
            "pp_doclayout_v3",
            "pp_doclayout_v4",
            "aimv2",
            "granite_docling",
        )
    },
}


def _perturbed(original):
    """The HF function or module class, its output shifted by one: a divergence the check must see."""
    if isinstance(original, type):
        return type(
            original.__name__,
            (original,),
            {"forward": lambda self, *a, **k: original.forward(self, *a, **k) + 1},
        )
    return lambda *args, **kwargs: original(*args, **kwargs) + 1


@needs_transformers
@pytest.mark.parametrize("variant", sorted(VISION_COPIES))
def test_vision_sine_copies_agree(variant: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each family's copy of DETR's sine, the coordinate sinusoid or the 2-D sincos: its functions pass
    (no known failures), the rest of the column is the default's (skipped), and the column runs that
    family's own code: shifting the copy's output turns its passes into failures."""
    import importlib

    functions, attribute, must_pass = VISION_COPIES[variant]
    adapter = load_adapter(f"transformers:{variant}")
    # the family's column: these functions, and its other schemes (SAM 2's Fourier, a RoPE or learned row)
    assert set(functions) | set(_learned_functions(variant)) <= set(adapter.capabilities.functions or ())
    assert adapter.describe()["sources"] != load_adapter("transformers").describe()["sources"]
    report = run(adapter, only=["vision_sine"], xfails=load_xfails(XFAILS))
    assert not [r.result_id for r in report.results if r.status in ("fail", "xpass")]
    passed = {r.result_id.partition("/")[0] for r in report.results if r.status == "pass"} - {"invariant"}
    assert passed == set(functions)
    assert _statuses(report)[must_pass] == "pass"
    modeling = importlib.import_module(f"transformers.models.{variant}.modeling_{variant}")
    monkeypatch.setattr(modeling, attribute, _perturbed(getattr(modeling, attribute)))
    shifted = run(adapter, only=[must_pass.partition("/")[0]], xfails=load_xfails(XFAILS))
    assert _statuses(shifted)[must_pass] == "fail"
