"""Positions and scales around RoPE: xPos scales, M-RoPE (t, h, w) ids, vision-patch ids, M-RoPE angles."""

from __future__ import annotations

import math
from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, flatten, reshape, shape_of, tol
from ..notes import add_note
from ._common import F, I, _freqs, case

# --- declarations ------------------------------------------------------------------------------------


def _xpos(inp: dict[str, Any]) -> dict[str, Any]:
    q, k = oracle.rope.xpos_scale(
        flatten(inp["positions"]),
        inp["dim"],
        scale_base=inp["scale_base"],
        gamma=inp["gamma"],
        offset=inp["offset"],
        layout=inp["layout"],
    )
    shape = shape_of(inp["positions"])
    return {"q_scale": reshape(q, shape), "k_scale": reshape(k, shape)}


def _xpos_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """``zeta^p = exp(p ln zeta)``, ``p = (m - c) / B``: relative error ``u (4 |p| + 2 |p ln zeta_0| + 8)``.

    ``zeta_i = (2i/d + gamma)/(1 + gamma)`` computed in the run's dtype is off by
    a few roundings (``<= 3 u``), which the power multiplies by ``|p|``; ``p ln zeta``
    rounds once more (``|p ln zeta| u``, twice that for ``pow``'s internal log) and
    ``exp``/the cast add a few.  ``zeta_0 = gamma / (1 + gamma)`` has the largest ``|ln|``.
    """
    p = max(abs(int(m) - inp["offset"]) for m in flatten(inp["positions"])) / inp["scale_base"]
    e = p * abs(math.log(inp["gamma"] / (1 + inp["gamma"])))
    return tol(rtol64=EPS64 * (4 * p + 2 * e + 8), ulp64=4, rtol32=EPS32 * (4 * p + 2 * e + 8), ulp32=4)


def _mrope_ids(inp: dict[str, Any]) -> dict[str, Any]:
    ids = oracle.mrope.mrope_position_ids(inp["segments"], time_interval=inp["time_interval"])
    return {"position_ids": ids}


def _vision_ids(inp: dict[str, Any]) -> dict[str, Any]:
    ids = oracle.mrope.vision_position_ids(
        inp["grid_t"], inp["grid_h"], inp["grid_w"], merge_size=inp["merge_size"]
    )
    return {"position_ids": ids}


def _mrope_angles(inp: dict[str, Any]) -> dict[str, Any]:
    ids = inp["position_ids"]
    width = len(ids[0][0]) if isinstance(ids[0][0], list) else None
    if width is None:  # [C, L]
        return {
            "angles": oracle.mrope.mrope_angles(
                ids, inp["inv_freq"], inp["mrope_section"], inp["section_order"]
            )
        }
    batches = [[ids[c][b] for c in range(len(ids))] for b in range(len(ids[0]))]  # [C, B, L] -> B x [C, L]
    return {
        "angles": [
            oracle.mrope.mrope_angles(one, inp["inv_freq"], inp["mrope_section"], inp["section_order"])
            for one in batches
        ]
    }


_LAYOUT = ("string", "half | interleaved")

declare(
    FunctionSpec(
        "xpos_scale",
        "rope",
        "xpos_scale(positions, dim, scale_base, gamma, offset, layout) -> (q_scale, k_scale)"
        "[*positions.shape, dim]: zeta_i**(+-(m - offset)/scale_base), zeta_i = (2i/dim + gamma)/(1 + gamma)",
        {
            "positions": ("positions", "int64 array, any shape"),
            "dim": ("int", "rotated channels (even)"),
            "scale_base": ("number", "B > 0 (512 in the paper and lucidrains)"),
            "gamma": ("number", "gamma > 0 (0.4)"),
            "offset": ("int", "centre c of the exponent (0: paper; lucidrains: len(positions) // 2)"),
            "layout": _LAYOUT,
        },
        {"q_scale": "float", "k_scale": "float"},
        _xpos,
        positional=2,
        takes_dtype=True,
        options={"layout": "layouts"},
        case_tolerances=_xpos_tol,
    )
)
declare(
    FunctionSpec(
        "mrope_position_ids",
        "rope",
        "mrope_position_ids(segments, time_interval) -> int [3, L] (t, h, w) ids of text runs and vision "
        "blocks, each segment from max(previous ids) + 1",
        {
            "segments": ("segments", "text-run lengths and [t, h, w] blocks (the language model's grid)"),
            "time_interval": ("number", "temporal step per frame (Qwen2-VL 1; Qwen2.5-VL videos more)"),
        },
        {"position_ids": "int"},
        _mrope_ids,
        positional=1,
        output_kind="int",
    )
)
declare(
    FunctionSpec(
        "vision_position_ids",
        "rope",
        "vision_position_ids(grid_t, grid_h, grid_w, merge_size) -> int [2, t h w] (row, col) of each "
        "vision-encoder patch, merge_size x merge_size windows contiguous",
        {
            "grid_t": ("int", "frames"),
            "grid_h": ("int", "patch rows (before merging)"),
            "grid_w": ("int", "patch columns (before merging)"),
            "merge_size": ("int", "Qwen2-VL spatial_merge_size"),
        },
        {"position_ids": "int"},
        _vision_ids,
        positional=3,
        output_kind="int",
    )
)
declare(
    FunctionSpec(
        "mrope_angles",
        "rope",
        "mrope_angles(position_ids[C, ..., L], inv_freq[F], mrope_section, section_order) "
        "-> angles[..., L, F], slot s driven by component c(s)",
        {
            "position_ids": ("positions", "int64 [C, L] or [C, B, L]"),
            "inv_freq": ("float", "float64 [F] (exact; not cast)"),
            "mrope_section": ("ints", "slots per component, summing to F"),
            "section_order": (
                "string",
                "chunked (Qwen2/2.5-VL, HunYuan-VL) | interleaved (Qwen3-VL) | ernie (Ernie 4.5 VL)",
            ),
        },
        {"angles": "float"},
        _mrope_angles,
        positional=2,
        takes_dtype=True,
        # one product p * omega: omega cast to the run's dtype and the product rounded, 2 u relative
        tolerances=tol(rtol64=4 * EPS64, ulp64=4, rtol32=4 * EPS32, ulp32=4),
    )
)

XposScale = add_note(
    "XposScale",
    "Functionality",
    "xPos scales zeta_i**((m - c)/B) for queries and their inverses for keys, zeta_i = (2i/d + gamma)/(1 + "
    "gamma): a wrong gamma, base or exponent sign changes every logit by a factor that grows with distance.",
    "https://arxiv.org/abs/2212.10554",
)
XposCentre = add_note(
    "XposCentre",
    "ConventionMismatch",
    "The centre c of the xPos exponent: 0 in the paper, len(positions) // 2 in rotary-embedding-torch's "
    "get_scale; q_n . k_m does not depend on it, but the query and key scales must share it (lucidrains' "
    "cached-keys path centres them differently).",
    "https://github.com/lucidrains/rotary-embedding-torch/issues/27",
)
MropeIds = add_note(
    "MropeIds",
    "Functionality",
    "M-RoPE (t, h, w) ids: text tokens share one id on all three rows; a vision block gets its frame, row "
    "and column offsets from its start; every segment starts at max(previous ids) + 1 (Qwen2-VL "
    "get_rope_index).",
    "https://arxiv.org/abs/2409.12191",
)
MropeVideoSpan = add_note(
    "MropeVideoSpan",
    "ConventionMismatch",
    "A video whose temporal ids run past its spatial ones: the next segment starts after the largest "
    "temporal id (vLLM get_input_positions, HF 4.x, Qwen's code: max(ids) + 1); HF transformers 5.x "
    "get_rope_index advances by max(h, w) only, so later text reuses the video's temporal ids.",
)
VisionPatchOrder = add_note(
    "VisionPatchOrder",
    "ConventionMismatch",
    "Vision-encoder patches are ordered window by window (each merge_size x merge_size window contiguous, "
    "windows row-major, HF Qwen2-VL rot_pos_emb); plain row-major ids rotate the merged patches wrongly.",
)
MropeSections = add_note(
    "MropeSections",
    "ConventionMismatch",
    "Which id drives each frequency slot: contiguous mrope_section chunks (Qwen2/2.5-VL, HF "
    "apply_multimodal_rotary_pos_emb) or interleaved t, h, w (Qwen3-VL apply_interleaved_mrope, "
    "llama.cpp IMROPE); text tokens get the 1-D angles either way.",
)
MropeErnie = add_note(
    "MropeErnie",
    "ConventionMismatch",
    "Ernie 4.5 VL: h and w take turns over the first 2n frequency slots (inv_freq re-ordered even | odd, "
    "then h/w stacked and flattened), t the tail; HF's config lists the section as [h, w, t]. Read as "
    "chunked or interleaved, every vision token's angles move to other frequencies.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/ernie4_5_vl_moe/modeling_ernie4_5_vl_moe.py",
)
MropeXdrope = add_note(
    "MropeXdrope",
    "ConventionMismatch",
    "HunYuan-VL's XD-RoPE: four components (sequence, w, h, t) in chunks of xdrope_section, the same "
    "component for both channels of a rotated pair (Tencent's xdrope_section * 2 is list repetition; "
    "vLLM XDRotaryEmbedding). HF 5.24 doubles each section instead, so a pair's two halves read "
    "different components.",
    "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/rotary_embedding/xdrope.py",
)

# --- xpos_scale ------------------------------------------------------------------------------------


def _xpos_case(
    id: str,
    comment: str,
    flags: Any,
    positions: Any,
    dim: int,
    *,
    offset: int,
    layout: str,
    scale_base: float = 512.0,
    gamma: float = 0.4,
    error: Any = None,
) -> None:
    flags = (flags,) if isinstance(flags, str) else tuple(flags)
    lay = "HalfLayout" if layout == "half" else "InterleavedLayout"
    case(
        f"xpos_scale/{layout}/{id}",
        comment,
        (*flags, lay) if error is None else flags,
        error,
        positions=I(positions),
        dim=dim,
        scale_base=scale_base,
        gamma=gamma,
        offset=offset,
        layout=layout,
    )


for _layout in ("half", "interleaved"):
    _xpos_case(
        "paper-d8",
        "The paper's scales (centre 0, B = 512, gamma = 0.4), positions up to 1000.",
        XposScale,
        [0, 1, 2, 100, 512, 1000],
        8,
        offset=0,
        layout=_layout,
    )
    _xpos_case(
        "lucidrains-centre-16",
        "rotary-embedding-torch's get_scale(arange(16)): centre 16 // 2 = 8.",
        (XposScale, XposCentre),
        list(range(16)),
        16,
        offset=8,
        layout=_layout,
    )
    _xpos_case(
        "batched-far",
        "Batched positions up to 4096 from centre 0, B = 256, gamma = 0.2: scales 3.5e-13 to 2.8e12.",
        XposScale,
        [[0, 2048, 4096], [1, 2, 3]],
        16,
        offset=0,
        scale_base=256.0,
        gamma=0.2,
        layout=_layout,
    )
_xpos_case(
    "lucidrains-centre-odd-length",
    "get_scale(arange(7)): centre 7 // 2 = 3, negative exponents before it.",
    (XposScale, XposCentre),
    list(range(7)),
    8,
    offset=3,
    layout="interleaved",
)
_xpos_case(
    "decoding-centre",
    "One decoding step at position 1000 with the centre of a 1024-key cache (512).",
    (XposScale, XposCentre),
    [1000],
    32,
    offset=512,
    layout="interleaved",
)
for _id, _why, _dim, _kw, _param in [
    ("invalid-odd-dim", "dim must be even.", 7, {}, "dim"),
    ("invalid-scale-base-0", "scale_base must be > 0.", 8, {"scale_base": 0.0}, "scale_base"),
    ("invalid-gamma-0", "gamma must be > 0.", 8, {"gamma": 0.0}, "gamma"),
]:
    _xpos_case(_id, _why, (), [0, 1], _dim, offset=0, layout="half", error=("ValueError", _param), **_kw)

# --- mrope_position_ids, vision_position_ids ----------------------------------------------------------

for _id, _why, _flags, _segments, _interval in [
    ("text-only", "Five text tokens: 0 .. 4 on every row.", (MropeIds,), [5], 1.0),
    (
        "image-in-text",
        "3 text tokens, a 1 x 2 x 3 image, 2 text tokens (Qwen2-VL).",
        (MropeIds,),
        [3, [1, 2, 3], 2],
        1.0,
    ),
    (
        "two-images",
        "Text, a 2 x 2 image, text, a 4 x 2 image, text: each segment from max + 1.",
        (MropeIds,),
        [2, [1, 2, 2], 3, [1, 4, 2], 1],
        1.0,
    ),
    (
        "image-first",
        "A 2 x 3 image before any text (start 0), then text.",
        (MropeIds,),
        [[1, 2, 3], 4],
        1.0,
    ),
    (
        "video-3-frames",
        "Qwen2-VL video of 3 frames of 2 x 2: temporal ids 0 .. 2 outrun the spatial 0 .. 1.",
        (MropeIds, MropeVideoSpan),
        [1, [3, 2, 2], 2],
        1.0,
    ),
    (
        "video-interval-2",
        "Qwen2.5-VL video, time interval 2 (tokens_per_second 2 x 1 s per grid): temporal ids 0, 2, 4, 6.",
        (MropeIds, MropeVideoSpan),
        [2, [4, 2, 2], 3],
        2.0,
    ),
    (
        "video-interval-half",
        "Time interval 0.5: temporal ids floor(f / 2) = 0, 0, 1, 1.",
        (MropeIds,),
        [1, [4, 1, 2], 1],
        0.5,
    ),
    (
        "qwen3-vl-frames",
        "Qwen3-VL style: frames as 1 x 2 x 2 blocks separated by timestamp text.",
        (MropeIds,),
        [3, [1, 2, 2], 2, [1, 2, 2], 1],
        1.0,
    ),
]:
    case(f"mrope_position_ids/{_id}", _why, _flags, segments=_segments, time_interval=_interval)
case(
    "mrope_position_ids/invalid-empty-block",
    "A vision block of 0 rows.",
    (),
    ("ValueError", "segments"),
    segments=[2, [1, 0, 2]],
    time_interval=1.0,
)
for _id, _why, _flags, _grid in [
    ("merge-1", "1 x 2 x 3 patches, merge 1: row-major.", (), (1, 2, 3, 1)),
    (
        "merge-2",
        "1 x 4 x 4 patches, merge 2: each 2 x 2 window contiguous.",
        (VisionPatchOrder,),
        (1, 4, 4, 2),
    ),
    (
        "frames-2-merge-2",
        "2 x 4 x 6 patches, merge 2: the frames repeat the ids.",
        (VisionPatchOrder,),
        (2, 4, 6, 2),
    ),
]:
    case(
        f"vision_position_ids/{_id}",
        _why,
        _flags or ("Basic",),
        grid_t=_grid[0],
        grid_h=_grid[1],
        grid_w=_grid[2],
        merge_size=_grid[3],
    )
case(
    "vision_position_ids/invalid-merge-size",
    "merge_size 3 does not divide a 4 x 4 grid.",
    (),
    ("ValueError", "merge_size"),
    grid_t=1,
    grid_h=4,
    grid_w=4,
    merge_size=3,
)

# --- mrope_angles ----------------------------------------------------------------------------------------

_IDS = oracle.mrope.mrope_position_ids([2, [1, 2, 3], 2])
_QWEN2 = _freqs(128, 1.0e6)[0]
_QWEN3 = _freqs(128, 5.0e6)[0]
_SMALL = _freqs(8, 10000.0)[0]
_TEXT_IDS = oracle.mrope.mrope_position_ids([4])
_BATCHED = [[row, [p + 7 for p in row]] for row in oracle.mrope.mrope_position_ids([1, [1, 2, 2], 1])]
for _id, _why, _ids, _inv, _section, _order in [
    (
        "chunked-qwen2-vl",
        "Qwen2-VL sections [16, 24, 24], d = 128, b = 1e6.",
        _IDS,
        _QWEN2,
        [16, 24, 24],
        "chunked",
    ),
    (
        "interleaved-qwen3-vl",
        "Qwen3-VL sections [24, 20, 20] interleaved, b = 5e6.",
        _IDS,
        _QWEN3,
        [24, 20, 20],
        "interleaved",
    ),
    (
        "chunked-text-is-1d",
        "Text tokens only: the 1-D angles p * omega.",
        _TEXT_IDS,
        _SMALL,
        [2, 1, 1],
        "chunked",
    ),
    (
        "interleaved-batched",
        "ids [3, 2, L] (two sequences), sections [2, 1, 1] interleaved.",
        _BATCHED,
        _SMALL,
        [2, 1, 1],
        "interleaved",
    ),
]:
    case(
        f"mrope_angles/{_id}",
        _why,
        (MropeSections,),
        position_ids=I(_ids),
        inv_freq=F(_inv),
        mrope_section=_section,
        section_order=_order,
    )
_ERNIE = _freqs(128, 5.0e5)[0]
_HUNYUAN = _freqs(128, 1.0e4)[0]
_XD_IDS = [list(range(len(_IDS[0]))), *_IDS[::-1]]  # (sequence, w, h, t): Tencent's row order
for _id, _why, _flags, _ids, _inv, _section, _order in [
    (
        "ernie-4.5-vl",
        "Ernie 4.5 VL: [t, h, w] = [20, 22, 22] (HF's [22, 22, 20]), d = 128, b = 5e5.",
        (MropeErnie, MropeSections),
        _IDS,
        _ERNIE,
        [20, 22, 22],
        "ernie",
    ),
    (
        "ernie-batched",
        "ids [3, 2, L], [t, h, w] = [2, 1, 1]: slots h, w, t, t.",
        (MropeErnie, "BatchedPositions"),
        _BATCHED,
        _SMALL,
        [2, 1, 1],
        "ernie",
    ),
    (
        "ernie-text-is-1d",
        "Ernie, text tokens only: the 1-D angles p * omega.",
        (MropeErnie,),
        _TEXT_IDS,
        _SMALL,
        [2, 1, 1],
        "ernie",
    ),
    (
        "chunked-hunyuan-xdrope",
        "HunYuan-VL XD-RoPE: four components (sequence, w, h, t), xdrope_section [16, 16, 16, 16].",
        (MropeXdrope, MropeSections),
        _XD_IDS,
        _HUNYUAN,
        [16, 16, 16, 16],
        "chunked",
    ),
    (
        "chunked-xdrope-small",
        "Four components, sections [1, 1, 1, 1] over 4 slots: one slot each.",
        (MropeXdrope,),
        [[0, 1, 2, 3], [0, 1, 0, 1], [0, 0, 1, 1], [0, 0, 0, 0]],
        _SMALL,
        [1, 1, 1, 1],
        "chunked",
    ),
]:
    case(
        f"mrope_angles/{_id}",
        _why,
        _flags,
        position_ids=I(_ids),
        inv_freq=F(_inv),
        mrope_section=_section,
        section_order=_order,
    )
case(
    "mrope_angles/invalid-ernie-unequal-hw",
    "Ernie's order needs the same slot count for h and w: [2, 2, 0] is refused.",
    (),
    ("ValueError", "mrope_section"),
    position_ids=I(_TEXT_IDS),
    inv_freq=F(_SMALL),
    mrope_section=[2, 2, 0],
    section_order="ernie",
)
case(
    "mrope_angles/invalid-section-sum",
    "mrope_section [2, 1, 2] sums to 5, not len(inv_freq) = 4.",
    (),
    ("ValueError", "mrope_section"),
    position_ids=I(_TEXT_IDS),
    inv_freq=F(_SMALL),
    mrope_section=[2, 1, 2],
    section_order="chunked",
)
