"""Windowed 2-D relative positions: declarations and cases of the Swin/BEiT bias gather, Swin-V2's log
coordinates and SAM/ViTDet's decomposed terms."""

from __future__ import annotations

from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, max_abs, shape_of, tol
from ..notes import add_note
from ._common import F, _dyadic, case

# --- declarations ------------------------------------------------------------------------------


def _window_bias(inp: dict[str, Any]) -> dict[str, Any]:
    return {"bias": oracle.window_bias.window_bias(inp["table"], inp["window_size"], inp["cls_token"])}


def _swinv2(inp: dict[str, Any]) -> dict[str, Any]:
    pre = inp["pretrained_window_size"] or None
    return {"coords": oracle.window_bias.swinv2_log_coords(inp["window_size"], pre)}


def _swinv2_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """A plain evaluation in the run's dtype (unit roundoff u), as HF's float32 one.

    x = 8 d / (P - 1) carries one rounding (u |x|); 1 + |x| one more, so log2(1 + |x|) errs by at most
    2u / ln 2 < 3u absolute from its argument, plus 2 ulp of its own (a libm log2, 2u |log2|); the
    division by 3 adds u of the result.  With v = log2(1 + |x|) / 3: |error| <= u (1 + 2|v| + |v|)
    <= 4u max(1, max |v|): atol 4u max(1, max |v|), 4 ulp.
    """
    scale = max(1.0, max_abs(out["coords"]))
    return tol(atol64=4 * EPS64 * scale, ulp64=4, atol32=4 * EPS32 * scale, ulp32=4)


def _decomposed(inp: dict[str, Any]) -> dict[str, Any]:
    return {
        "bias": oracle.window_bias.decomposed_rel_pos(
            inp["query"], inp["rel_pos_h"], inp["rel_pos_w"], inp["k_size"], inp["coords"]
        )
    }


def _decomposed_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """Two dot products of C terms and their sum: |error| <= 2 (C + 2) u * C max|q| (max|Rh| + max|Rw|)."""
    width = shape_of(inp["query"])[-1]
    scale = width * max_abs(inp["query"]) * (max_abs(inp["rel_pos_h"]) + max_abs(inp["rel_pos_w"]))
    return tol(
        atol64=2 * (width + 2) * EPS64 * scale, ulp64=4, atol32=2 * (width + 2) * EPS32 * scale, ulp32=4
    )


declare(
    FunctionSpec(
        "window_bias",
        "window_bias",
        "window_bias(table[(2Wh-1)(2Ww-1) (+3), H], window_size, cls_token) -> bias[H, N(+1), N(+1)] = "
        "table[idx(a, b), h], idx = (h_a - h_b + Wh - 1)(2Ww - 1) + (w_a - w_b + Ww - 1)",
        {
            "table": ("float", "float64 [(2Wh-1)(2Ww-1) (+3 with cls_token), H]"),
            "window_size": ("ints", "[Wh, Ww]"),
            "cls_token": ("bool", "bool"),
        },
        {"bias": "float"},
        _window_bias,
        positional=2,
        cast_inputs=("table",),
        tolerances=tol(),
    )
)
declare(
    FunctionSpec(
        "swinv2_log_coords",
        "window_bias",
        "swinv2_log_coords(window_size, pretrained_window_size) -> coords[2Wh-1, 2Ww-1, 2] = "
        "sign(x) log2(1 + |x|) / 3, x = 8 (dh, dw) / (P - 1)",
        {
            "window_size": ("ints", "[Wh, Ww]"),
            "pretrained_window_size": ("ints", "[Ph, Pw], or [] for none (HF 0)"),
        },
        {"coords": "float"},
        _swinv2,
        positional=1,
        takes_dtype=True,
        case_tolerances=_swinv2_tol,
    )
)
declare(
    FunctionSpec(
        "decomposed_rel_pos",
        "window_bias",
        "decomposed_rel_pos(query[..., qh, qw, C], rel_pos_h[2max(qh,kh)-1, C], rel_pos_w[2max(qw,kw)-1, C], "
        "k_size, coords) -> q . Rh[r_h] + q . Rw[r_w] [..., qh, qw, kh, kw]",
        {
            "query": ("float", "float64 [..., qh, qw, C]"),
            "rel_pos_h": ("float", "float64 [2 max(qh, kh) - 1, C]"),
            "rel_pos_w": ("float", "float64 [2 max(qw, kw) - 1, C]"),
            "k_size": ("ints", "[kh, kw]"),
            "coords": ("string", "float32 | exact"),
        },
        {"bias": "float"},
        _decomposed,
        positional=3,
        cast_inputs=("query", "rel_pos_h", "rel_pos_w"),
        case_tolerances=_decomposed_tol,
    )
)

# --- notes -------------------------------------------------------------------------------------

_INDEX = add_note(
    "WindowRelativeIndex",
    "ConventionMismatch",
    "Swin's 2-D relative index numbers the offset (query minus key) height-major: (dh + Wh - 1)(2Ww - 1) "
    "+ (dw + Ww - 1). Swapping the axes, the sign, or the stride (2Wh - 1 instead of 2Ww - 1) is "
    "invisible on a square window with a symmetric table and wrong on a non-square one.",
    "https://github.com/microsoft/Swin-Transformer/blob/main/models/swin_transformer.py",
)
_NONSQUARE = add_note(
    "NonSquareWindow",
    "ConventionMismatch",
    "Windows with Wh != Ww: the row stride 2Ww - 1 and the reshape of the table (BEiT's resize reads "
    "the sub-table as (width, height), correct only for square windows) are tested only here.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/beit/modeling_beit.py",
)
_CLS = add_note(
    "BeitClsRows",
    "ConventionMismatch",
    "BEiT's table has three more rows after the (2Wh-1)(2Ww-1) offsets: cls -> token, token -> cls, "
    "cls -> cls, and its (N+1) x (N+1) index puts the cls token first.",
    "https://github.com/microsoft/unilm/blob/master/beit/modeling_finetune.py",
)
_LOG = add_note(
    "Swinv2LogCoords",
    "ConventionMismatch",
    "Swin-V2's continuous position bias input: each offset divided by (pretrained window - 1) (or the "
    "window's), times 8, then sign(x) log2(1 + |x|) / log2(8); the pretrained window, the axis order "
    "[dh, dw] and the base of the log are each a way to get it wrong.",
    "https://arxiv.org/abs/2111.09883",
)
_SAM = add_note(
    "DecomposedRelPos",
    "ConventionMismatch",
    "SAM/ViTDet/MViTv2 decomposed relative positions: rows (i - j) + (k - 1) of per-axis tables, "
    "contracted with the query, rel_h[y, x, ky] + rel_w[y, x, kx]: swapping the two tables, the einsum "
    "axes or the sign of i - j gives plausible terms.",
    "https://github.com/facebookresearch/segment-anything/blob/main/segment_anything/modeling/image_encoder.py",
)
_UNEQUAL = add_note(
    "UnequalGrids",
    "NumericalPrecision",
    "Query and key grids of different sizes: the coordinate i max(k/q, 1) - j max(q/k, 1) + (k - 1) "
    "max(q/k, 1) is evaluated in float32 and truncated by the reference code (.long()); at some sizes "
    "(q = 8, k = 6) that is one row below the exact floor. coords names which.",
    "https://github.com/facebookresearch/segment-anything/blob/main/segment_anything/modeling/image_encoder.py",
)


def _rows(wh: int, ww: int, cls: bool = False) -> int:
    return (2 * wh - 1) * (2 * ww - 1) + 3 * cls


# --- window_bias ------------------------------------------------------------------------------

case(
    "window_bias/swin/square-2x2",
    "A 2 x 2 window, 3 heads: 9 offset rows.",
    ("Basic", _INDEX),
    table=F(_dyadic(801, (_rows(2, 2), 3))),
    window_size=[2, 2],
    cls_token=False,
)
case(
    "window_bias/swin/nonsquare-2x3",
    "A 2 x 3 window (Wh != Ww): 3 x 5 offsets, row stride 2Ww - 1 = 5.",
    (_INDEX, _NONSQUARE),
    table=F(_dyadic(802, (_rows(2, 3), 2))),
    window_size=[2, 3],
    cls_token=False,
)
case(
    "window_bias/swin/nonsquare-3x2",
    "The transposed window 3 x 2: 5 x 3 offsets.",
    (_INDEX, _NONSQUARE),
    table=F(_dyadic(803, (_rows(3, 2), 2))),
    window_size=[3, 2],
    cls_token=False,
)
case(
    "window_bias/swin/square-4x4",
    "A 4 x 4 window, 2 heads (Swin2SR-sized windows are 8 x 8).",
    (_INDEX,),
    table=F(_dyadic(804, (_rows(4, 4), 2))),
    window_size=[4, 4],
    cls_token=False,
)
case(
    "window_bias/beit/cls-2x2",
    "BEiT: a 2 x 2 window with a cls token: 9 + 3 rows, a 5 x 5 bias.",
    (_CLS, _INDEX),
    table=F(_dyadic(805, (_rows(2, 2, True), 2))),
    window_size=[2, 2],
    cls_token=True,
)
case(
    "window_bias/beit/cls-nonsquare-2x3",
    "BEiT layout on a 2 x 3 window: 15 + 3 rows, a 7 x 7 bias.",
    (_CLS, _NONSQUARE),
    table=F(_dyadic(806, (_rows(2, 3, True), 3))),
    window_size=[2, 3],
    cls_token=True,
)
case(
    "window_bias/invalid/table-rows",
    "A 2 x 3 window needs 15 rows; the table has 9 (the 2 x 2 window's).",
    (),
    ("ValueError", "table"),
    table=F(_dyadic(801, (_rows(2, 2), 3))),
    window_size=[2, 3],
    cls_token=False,
)
case(
    "window_bias/invalid/cls-rows-missing",
    "cls_token with a table of 9 rows: BEiT's 3 extra rows are missing.",
    (_CLS,),
    ("ValueError", "table"),
    table=F(_dyadic(801, (_rows(2, 2), 3))),
    window_size=[2, 2],
    cls_token=True,
)
case(
    "window_bias/invalid/zero-side",
    "A window side of 0.",
    (),
    ("ValueError", "window_size"),
    table=F(_dyadic(801, (_rows(2, 2), 3))),
    window_size=[0, 2],
    cls_token=False,
)

# --- swinv2_log_coords --------------------------------------------------------------------------

case(
    "swinv2_log_coords/window/square-4",
    "A 4 x 4 window, no pretrained window: offsets -3..3 divided by 3.",
    ("Basic", _LOG),
    window_size=[4, 4],
    pretrained_window_size=[],
)
case(
    "swinv2_log_coords/window/nonsquare-3x5",
    "A 3 x 5 window: dh divided by 2, dw by 4; axis 0 of the last dimension is dh.",
    (_LOG, _NONSQUARE),
    window_size=[3, 5],
    pretrained_window_size=[],
)
case(
    "swinv2_log_coords/pretrained/8-from-4",
    "Window 8 with pretrained window 4 (fine-tuning at a larger window): |x| reaches 8 * 7 / 3.",
    (_LOG,),
    window_size=[8, 8],
    pretrained_window_size=[4, 4],
)
case(
    "swinv2_log_coords/pretrained/nonsquare-4x6-from-3x5",
    "Window 4 x 6, pretrained 3 x 5.",
    (_LOG, _NONSQUARE),
    window_size=[4, 6],
    pretrained_window_size=[3, 5],
)
case(
    "swinv2_log_coords/invalid/window-1x1",
    "A 1 x 1 window divides by 1 - 1 = 0 (HF skips the division: zeros).",
    (_LOG,),
    ("ValueError", "window_size"),
    window_size=[1, 1],
    pretrained_window_size=[],
)
case(
    "swinv2_log_coords/invalid/window-4x1",
    "A 4 x 1 window: dw / 0 (HF: 0/0 = NaN in the width column).",
    (_LOG, _NONSQUARE),
    ("ValueError", "window_size"),
    window_size=[4, 1],
    pretrained_window_size=[],
)
case(
    "swinv2_log_coords/invalid/pretrained-1",
    "A pretrained side of 1 (HF: +-inf and NaN).",
    (_LOG,),
    ("ValueError", "pretrained_window_size"),
    window_size=[4, 4],
    pretrained_window_size=[1, 4],
)

# --- decomposed_rel_pos --------------------------------------------------------------------------


def _sam_case(
    id_: str,
    comment: str,
    flags: Any,
    seed: int,
    lead: tuple[int, ...],
    q: tuple[int, int],
    k: tuple[int, int],
    width: int,
    coords: str = "float32",
    error: Any = None,
    rows: Any = None,
) -> None:
    rh, rw = rows or (2 * max(q[0], k[0]) - 1, 2 * max(q[1], k[1]) - 1)
    case(
        id_,
        comment,
        flags,
        error,
        query=F(_dyadic(seed, (*lead, *q, width), denominator=32)),
        rel_pos_h=F(_dyadic(seed + 1, (rh, width))),
        rel_pos_w=F(_dyadic(seed + 2, (rw, width))),
        k_size=list(k),
        coords=coords,
    )


_sam_case(
    "decomposed_rel_pos/sam/square-3x3",
    "SAM global attention on a 3 x 3 grid, C = 4.",
    ("Basic", _SAM),
    821,
    (1,),
    (3, 3),
    (3, 3),
    4,
)
_sam_case(
    "decomposed_rel_pos/sam/nonsquare-2x4",
    "A 2 x 4 grid (ViTDet windows on a non-square image), batch 2.",
    (_SAM, _NONSQUARE, "BatchedPositions"),
    824,
    (2,),
    (2, 4),
    (2, 4),
    3,
)
_sam_case(
    "decomposed_rel_pos/unequal/q8-k6-float32",
    "Query grid 8 x 3, key grid 6 x 3: the float32 "
    "coordinate is one row below the exact floor at 8 of 48 (i, j) pairs of the height axis.",
    (_SAM, _UNEQUAL),
    827,
    (1,),
    (8, 3),
    (6, 3),
    2,
)
_sam_case(
    "decomposed_rel_pos/unequal/q8-k6-exact",
    "The same grids with coords='exact'.",
    (_SAM, _UNEQUAL),
    827,
    (1,),
    (8, 3),
    (6, 3),
    2,
    coords="exact",
)
_sam_case(
    "decomposed_rel_pos/unequal/q2-k4",
    "Query grid 2 x 2 (pooled) over 4 x 4 keys: coordinates i * 2 - j + 3.",
    (_SAM, _UNEQUAL),
    830,
    (1,),
    (2, 2),
    (4, 4),
    3,
)
_sam_case(
    "decomposed_rel_pos/invalid/rel-pos-h-rows",
    "rel_pos_h of 4 rows for q = k = 3 (needs 5: resize first).",
    (),
    833,
    (1,),
    (3, 3),
    (3, 3),
    4,
    error=("ValueError", "rel_pos_h"),
    rows=(4, 5),
)
_sam_case(
    "decomposed_rel_pos/invalid/rel-pos-w-rows",
    "rel_pos_w of 3 rows for qw = 2, kw = 4 (needs 7).",
    (),
    836,
    (1,),
    (2, 2),
    (2, 4),
    3,
    error=("ValueError", "rel_pos_w"),
    rows=(3, 3),
)
_sam_case(
    "decomposed_rel_pos/invalid/coords",
    "An unknown coords.",
    (),
    821,
    (1,),
    (3, 3),
    (3, 3),
    4,
    coords="float16",
    error=("ValueError", "coords"),
)
