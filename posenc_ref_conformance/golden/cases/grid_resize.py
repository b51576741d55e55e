"""Grid resizing of position tables (ViT interpolate_pos_encoding, SAM's relative table): functions, cases."""

from __future__ import annotations

import math
from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, max_abs, shape_of, tol
from ..notes import add_note
from ._common import F, _dyadic, case

# --- declarations ------------------------------------------------------------------------------

_OPTIONS = ("mode", "align_corners", "scale_factor", "antialias")


def _options(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {name: inp[name] for name in _OPTIONS}
    kw["scale_factor"] = None if kw["scale_factor"] is None else [float(f) for f in kw["scale_factor"]]
    return kw


def _grid_resize(inp: dict[str, Any]) -> dict[str, Any]:
    return {"resized": oracle.grid_resize.grid_resize(inp["table"], inp["size"], **_options(inp))}


def _patch_grid_resize(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {**_options(inp), "prefix_tokens": inp["prefix_tokens"], "skip_same_grid": inp["skip_same_grid"]}
    return {"resized": oracle.grid_resize.patch_grid_resize(inp["table"], inp["grid"], inp["new_grid"], **kw)}


#: Bound on sum_j |dw_j/ds|, how fast an output index's weights move with its source coordinate s:
#: linear 2 (two taps of slope 1); bicubic (A = -0.75) 2 (max|W'| on [0, 1] + on [1, 2]) = 2 (1.35 + 0.75)
#: = 4.2; antialias w_j = f(x_j) / F, x_j = (j - c + 1/2) / sigma: sum_j |dw_j/dc| <= 2 sum_j |f'(x_j)|
#: / (sigma F) with sum_j |f'(x_j)| <= 2 (sigma + 1) max|f'| (taps 1/sigma apart) and F >= 1/2 on
#: every row PyTorch builds (a tap within 1/2 of the centre): 8 (sigma + 1) max|f'| / sigma <= 16 x 1.5.
_SLOPE = {"linear": 2.0, "bilinear": 2.0, "bicubic": 4.5, "antialias": 24.0}


def _axes(inp: dict[str, Any], sides: list[int], size: list[int]) -> list[tuple[int, float, int, float]]:
    """Per resampled axis: (inputs n, max_d sum_j |w(d, j)|, taps, slope bound); copied axes left out."""
    out = []
    for i, (n, n_out) in enumerate(zip(sides, size, strict=True)):
        factor = None if inp["scale_factor"] is None else float(inp["scale_factor"][i])
        rows = oracle.grid_resize.axis_weights(
            n,
            n_out,
            mode=inp["mode"],
            align_corners=inp["align_corners"],
            scale_factor=factor,
            antialias=inp["antialias"],
        )
        copied = all(row == {d: 1} for d, row in enumerate(rows)) and n_out == n
        if inp["mode"] == "nearest" or copied:
            continue
        mass = max(float(sum(abs(w) for w in row.values())) for row in rows)
        taps = max(len(row) for row in rows)
        slope = _SLOPE["antialias" if inp["antialias"] else inp["mode"]]
        out.append((n, mass, taps, slope))
    return out


def _resize_tol(inp: dict[str, Any], sides: list[int], size: list[int]) -> Tolerance:
    """A separable resize in the run's dtype (unit roundoff u), axis after axis, against the exact sum.

    An implementation computes, per axis, the source coordinate s in the run's dtype (PyTorch:
    float32 ``opmath`` for float32 tables): the scale n/n' (or 1/scale_factor) rounded, the product
    with d + 1/2 and the subtraction of 1/2 give |ds| <= 4 u (n + 1) (s <= n).  The weights then move
    by at most slope x |ds| in sum (slope: :data:`_SLOPE`), and each weight's polynomial adds 8 u |w|;
    the sum of ``taps`` products adds taps u sum|w| |v|.  With mass = max sum_j |w_j| (1 for non-negative
    weights, up to 1.25 for bicubic) one axis pass on values of magnitude M errs by
    M u (slope 4 (n + 1) + mass (taps + 8)), and the next pass multiplies the earlier error by its
    mass.  Over the axes: atol = max|T| prod(mass) u sum_axes (slope 4 (n + 1) + mass (taps + 8)),
    rtol 2u (the final rounding, twice for a cast back).  ``nearest`` and copied axes move no value:
    an exact copy (0).
    """
    axes = _axes(inp, sides, size)
    if not axes:
        return tol()
    total_mass = math.prod(mass for _, mass, _, _ in axes)
    per_axis = sum(slope * 4 * (n + 1) + mass * (taps + 8) for n, mass, taps, slope in axes)
    scale = max_abs(inp["table"]) * total_mass * per_axis
    return tol(
        atol64=scale * EPS64, rtol64=2 * EPS64, ulp64=4, atol32=scale * EPS32, rtol32=2 * EPS32, ulp32=4
    )


def _grid_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """See :func:`_resize_tol` (the grid is the ``len(size)`` axes before the last)."""
    shape, k = shape_of(inp["table"]), len(inp["size"])
    return _resize_tol(inp, shape[len(shape) - 1 - k : len(shape) - 1], list(inp["size"]))


def _patch_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """See :func:`_resize_tol`; prefix rows are copies, and so is a skipped same-grid call (0)."""
    if inp["skip_same_grid"] and list(inp["grid"]) == list(inp["new_grid"]):
        return tol()
    return _resize_tol(inp, list(inp["grid"]), list(inp["new_grid"]))


_COMMON = {
    "mode": ("string", "nearest | linear | bilinear | bicubic"),
    "align_corners": ("bool", "F.interpolate's align_corners (false for nearest)"),
    "scale_factor": ("float|null", "float64 [len(size)]: F.interpolate's scale_factor, or null"),
    "antialias": ("bool", "F.interpolate's antialias (linear and bicubic)"),
}

declare(
    FunctionSpec(
        "grid_resize",
        "grid_resize",
        "grid_resize(table[..., *grid, D], size, mode, align_corners, scale_factor, antialias) -> "
        "resized[..., *size, D]: F.interpolate on the channels-first view, grid of 1 or 2 axes",
        {
            "table": ("float", "float64 [..., *grid, D] (channels last)"),
            "size": ("ints", "the new grid, 1 or 2 sides"),
            **_COMMON,
        },
        {"resized": "float"},
        _grid_resize,
        positional=2,
        cast_inputs=("table",),
        case_tolerances=_grid_tol,
    )
)
declare(
    FunctionSpec(
        "patch_grid_resize",
        "grid_resize",
        "patch_grid_resize(table[..., P + n m, D], grid (n, m), new_grid (n', m'), prefix_tokens P, mode, "
        "align_corners, scale_factor, antialias, skip_same_grid) -> table[..., P + n' m', D]: the prefix "
        "rows, then the row-major patch grid resized",
        {
            "table": ("float", "float64 [..., P + n m, D]"),
            "grid": ("ints", "[n, m], rows and columns of the stored grid"),
            "new_grid": ("ints", "[n', m']"),
            "prefix_tokens": ("int", "rows before the patches (cls, distillation, registers)"),
            **_COMMON,
            "skip_same_grid": ("bool", "return the table itself when new_grid == grid"),
        },
        {"resized": "float"},
        _patch_grid_resize,
        positional=3,
        cast_inputs=("table",),
        case_tolerances=_patch_tol,
    )
)

# --- flags -------------------------------------------------------------------------------------

_TORCH = "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/UpSample.h"
_TORCH_AA = "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/cpu/UpSampleKernel.cpp"
_VIT = "https://github.com/huggingface/transformers/blob/main/src/transformers/models/vit/modeling_vit.py"
_BICUBIC = add_note(
    "BicubicA075",
    "ConventionMismatch",
    "F.interpolate's bicubic is Keys' cubic convolution with A = -0.75 (cubic_convolution1/2), taps "
    "outside the grid clamped to the border row: A = -0.5 (PIL, Keys' own choice), zero padding or "
    "reflection give other tables, most visibly near the edges.",
    _TORCH,
    _VIT,
)
_HALF_PIXEL = add_note(
    "HalfPixelCoordinates",
    "ConventionMismatch",
    "align_corners=False with size=: output index d reads source (d + 1/2) n / n' - 1/2 (clamped at 0 "
    "for linear); d n / n' or d (n - 1)/(n' - 1) shift the whole grid.",
    _TORCH,
)
_ALIGN = add_note(
    "AlignCorners",
    "ConventionMismatch",
    "align_corners=True maps the corner samples onto each other: source d (n - 1)/(n' - 1) (ViLT's "
    "bilinear; posenc-ref's 1-D interpolate_table).",
    _TORCH,
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/vilt/modeling_vilt.py",
)
_SCALE_FACTOR = add_note(
    "ScaleFactorMap",
    "ConventionMismatch",
    "With scale_factor= the coordinate map steps by 1/scale_factor, not n/n': Idefics (after DINO) "
    "passes ((h + 0.1)/n, (w + 0.1)/n), so its h x w table is not the size= table of the same shape.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/idefics/vision.py",
    "https://github.com/facebookresearch/dino/issues/8",
)
_ANTIALIAS = add_note(
    "Antialias",
    "ConventionMismatch",
    "antialias=True (DINOv2 with registers, RF-DETR, Tipsv2): PyTorch's separable filter, the triangle "
    "or the cubic kernel with A = -0.5 (not -0.75) widened by the scale (support max(scale, 1) x 1 or "
    "x 2), taps outside the grid dropped and the weights normalised per output; it applies when "
    "enlarging too.",
    _TORCH_AA,
)
_NEAREST = add_note(
    "LegacyNearest",
    "ConventionMismatch",
    "mode='nearest' is PyTorch's legacy rule, source row floor(d n / n') (d // 2 when doubling), not "
    "nearest-exact's floor((d + 1/2) n / n') (Timesformer's time and space tables).",
    _TORCH,
)
_UNCHANGED = add_note(
    "UnchangedAxisCopied",
    "ConventionMismatch",
    "PyTorch's CPU kernels copy an axis whose size a scale_factor leaves unchanged (nearest, bilinear "
    "and every antialiased mode), while bicubic without antialias resamples it with 1/scale_factor.",
    _TORCH_AA,
)
_PREFIX = add_note(
    "PrefixTokens",
    "ConventionMismatch",
    "Rows before the patch grid are kept as they are: none (SigLIP), the class row (ViT, CLIP, DINOv2), "
    "class and distillation rows (DeiT), or class and register rows (timm num_prefix_tokens): splitting "
    "off the wrong count resizes a class row into the grid.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/deit/modeling_deit.py",
)
_NON_SQUARE = add_note(
    "NonSquareGrid",
    "ConventionMismatch",
    "A grid of n rows and m columns, n != m, stored row-major (patch (i, j) is row i m + j): a "
    "column-major reshape, swapped new sides or a sqrt(N) square assumption give another table.",
)
_SKIP = add_note(
    "SameGridShortCircuit",
    "ConventionMismatch",
    "HF's ViT, DeiT, CLIP, SigLIP, DINOv2 and Idefics return the stored table when the patch count is "
    "unchanged and the image square; without that early return a scale_factor call (Idefics at a "
    "non-square image of the same grid) still resamples it.",
    _VIT,
)
_SAME_COUNT = add_note(
    "SameCountOtherShape",
    "ConventionMismatch",
    "A new grid with the stored patch count but another shape (4 x 4 -> 2 x 8) is still a resize: an "
    "early return on the token count alone keeps the stored table and reads it in the wrong shape (HF "
    "Timesformer compares embeddings.size(1) only; ViT's return also requires a square image).",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/timesformer/"
    "modeling_timesformer.py",
)
_SAM = add_note(
    "RelativeTable1D",
    "Functionality",
    "SAM / ViTDet resize a [L, D] relative-position table to 2 max(q, k) - 1 rows with "
    "F.interpolate(mode='linear') on its [1, D, L] view, align_corners=False.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/sam/modeling_sam.py",
)


def _table(seed: int, shape: tuple[int, ...]) -> F:
    return F(_dyadic(seed, shape))


def _grid_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs = {"mode": "bicubic", "align_corners": False, "scale_factor": None, "antialias": False, **inputs}
    if isinstance(inputs["scale_factor"], list):
        inputs["scale_factor"] = F(inputs["scale_factor"])
    order = ("table", "size", *_OPTIONS)
    case(f"grid_resize/{id}", comment, flags, error, **{k: inputs[k] for k in order})


def _patch_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    defaults = {"prefix_tokens": 1, "mode": "bicubic", "align_corners": False, "scale_factor": None}
    inputs = {**defaults, "antialias": False, "skip_same_grid": False, **inputs}
    if isinstance(inputs["scale_factor"], list):
        inputs["scale_factor"] = F(inputs["scale_factor"])
    order = ("table", "grid", "new_grid", "prefix_tokens", *_OPTIONS, "skip_same_grid")
    case(f"patch_grid_resize/{id}", comment, flags, error, **{k: inputs[k] for k in order})


def _idefics(grid: int, new: tuple[int, int]) -> list[float]:
    """Idefics' scale_factor for an image of ``new`` patches: ``(h + 0.1) / n``, as Python computes it."""
    return [(new[0] + 0.1) / math.sqrt(grid * grid), (new[1] + 0.1) / math.sqrt(grid * grid)]


# --- grid_resize -------------------------------------------------------------------------------

_grid_case(
    "bicubic/up-4x4-to-6x6",
    "A 4 x 4 grid of width 2 enlarged to 6 x 6 (ViT fine-tuned at a higher resolution).",
    ("Basic", _BICUBIC, _HALF_PIXEL),
    table=_table(101, (4, 4, 2)),
    size=[6, 6],
)
_grid_case(
    "bicubic/down-6x6-to-4x4",
    "A 6 x 6 grid reduced to 4 x 4 without antialias (weights can be negative).",
    (_BICUBIC, _HALF_PIXEL),
    table=_table(102, (6, 6, 1)),
    size=[4, 4],
)
_grid_case(
    "bicubic/non-square-3x5-to-5x4",
    "A 3 x 5 grid to 5 x 4: one axis enlarged, the other reduced.",
    (_BICUBIC, _NON_SQUARE),
    table=_table(103, (3, 5, 2)),
    size=[5, 4],
)
_grid_case(
    "bicubic/align-corners-4x3-to-7x5",
    "bicubic with align_corners=True: source d (n - 1)/(n' - 1).",
    (_BICUBIC, _ALIGN, _NON_SQUARE),
    table=_table(104, (4, 3, 2)),
    size=[7, 5],
    align_corners=True,
)
_grid_case(
    "bilinear/up-3x3-to-5x7",
    "bilinear, half-pixel coordinates clamped at 0 (DPT, PVT, Radio).",
    (_HALF_PIXEL, _NON_SQUARE),
    table=_table(105, (3, 3, 2)),
    size=[5, 7],
    mode="bilinear",
)
_grid_case(
    "bilinear/align-corners-3x4-to-6x2",
    "bilinear with align_corners=True (ViLT).",
    (_ALIGN, _NON_SQUARE),
    table=_table(106, (3, 4, 2)),
    size=[6, 2],
    mode="bilinear",
    align_corners=True,
)
_grid_case(
    "bilinear/antialias-down-8x8-to-3x5",
    "bilinear antialias reducing 8 x 8 to 3 x 5 (Tipsv2): a triangle widened by 8/3 and 8/5.",
    (_ANTIALIAS, _NON_SQUARE),
    table=_table(107, (8, 8, 1)),
    size=[3, 5],
    mode="bilinear",
    antialias=True,
)
_grid_case(
    "bicubic/antialias-down-8x8-to-5x5",
    "bicubic antialias reducing 8 x 8 to 5 x 5 (DINOv2 with registers): A = -0.5, support 2 x 8/5.",
    (_ANTIALIAS,),
    table=_table(108, (8, 8, 1)),
    size=[5, 5],
    antialias=True,
)
_grid_case(
    "bicubic/antialias-up-3x3-to-5x4",
    "bicubic antialias enlarging: the A = -0.5 kernel, border taps dropped and renormalised.",
    (_ANTIALIAS,),
    table=_table(109, (3, 3, 2)),
    size=[5, 4],
    antialias=True,
)
_grid_case(
    "bicubic/scale-factor-4x4-to-6x6",
    "Idefics' scale_factor (6.1/4, 6.1/4): 6 x 6 with a map of step 4/6.1, not 4/6.",
    (_SCALE_FACTOR, _BICUBIC),
    table=_table(110, (4, 4, 2)),
    size=[6, 6],
    scale_factor=_idefics(4, (6, 6)),
)
_grid_case(
    "bilinear/scale-factor-dyadic",
    "bilinear with scale_factor (1.5, 0.75) from 4 x 4: 6 x 3, steps 2/3 and 4/3.",
    (_SCALE_FACTOR,),
    table=_table(111, (4, 4, 2)),
    size=[6, 3],
    mode="bilinear",
    scale_factor=[1.5, 0.75],
)
_grid_case(
    "bilinear/scale-factor-keeps-rows",
    "bilinear with scale_factor (1.25, 1.5) from 3 x 4: the rows stay 3 and are copied, the columns "
    "resampled.",
    (_UNCHANGED, _SCALE_FACTOR),
    table=_table(112, (3, 4, 2)),
    size=[3, 6],
    mode="bilinear",
    scale_factor=[1.25, 1.5],
)
_grid_case(
    "bicubic/scale-factor-keeps-rows",
    "bicubic with scale_factor (1.25, 1.5) from 3 x 4: the unchanged rows are resampled with step 0.8.",
    (_UNCHANGED, _SCALE_FACTOR, _BICUBIC),
    table=_table(113, (3, 4, 2)),
    size=[3, 6],
    scale_factor=[1.25, 1.5],
)
_grid_case(
    "nearest/up-3x2-to-5x4",
    "nearest from 3 x 2 to 5 x 4 (doubling columns: d // 2): rows floor(3 d / 5).",
    (_NEAREST, _NON_SQUARE),
    table=_table(114, (3, 2, 2)),
    size=[5, 4],
    mode="nearest",
)
_grid_case(
    "nearest/down-5x5-to-3x2",
    "nearest reducing 5 x 5 to 3 x 2: rows 0, 1, 3 and columns 0, 2 (floor, not round).",
    (_NEAREST, _NON_SQUARE),
    table=_table(115, (5, 5, 2)),
    size=[3, 2],
    mode="nearest",
)
_grid_case(
    "linear-1d/sam-7-to-13",
    "SAM's relative table of 7 rows resized to 2 x 7 - 1 = 13 (1-D linear, align_corners=False).",
    ("Basic", _SAM, _HALF_PIXEL),
    table=_table(116, (7, 2)),
    size=[13],
    mode="linear",
)
_grid_case(
    "linear-1d/sam-15-to-9",
    "SAM's table reduced: 15 rows to 9.",
    (_SAM,),
    table=_table(117, (15, 2)),
    size=[9],
    mode="linear",
)
_grid_case(
    "linear-1d/batched",
    "A 1-D resize of a [2, 5, 2] table (leading axis kept): 5 rows to 8.",
    (_SAM,),
    table=_table(118, (2, 5, 2)),
    size=[8],
    mode="linear",
)
_grid_case(
    "bicubic/same-size",
    "A 4 x 3 grid to 4 x 3 (size=): the table itself, bicubic weights (0, 1, 0, 0).",
    (_BICUBIC,),
    table=_table(119, (4, 3, 2)),
    size=[4, 3],
)
for _name, _why, _kw, _error in [
    ("zero-size", "A side of 0.", {"size": [0, 3]}, ("ValueError", "size")),
    ("three-sides", "Grids have 1 or 2 axes.", {"size": [2, 2, 2]}, ("ValueError", "size")),
    ("mode", "Unknown mode.", {"mode": "lanczos"}, ("ValueError", "mode")),
    (
        "nearest-align-corners",
        "F.interpolate refuses align_corners with nearest.",
        {"mode": "nearest", "align_corners": True},
        ("ValueError", "align_corners"),
    ),
    (
        "nearest-antialias",
        "antialias is for linear and bicubic.",
        {"mode": "nearest", "antialias": True},
        ("ValueError", "antialias"),
    ),
    (
        "scale-factor-size",
        "scale_factor (2, 2) gives 6 x 6 from 3 x 3, not the size 5 x 5.",
        {"size": [5, 5], "scale_factor": [2.0, 2.0]},
        ("ValueError", "scale_factor"),
    ),
    (
        "scale-factor-zero",
        "scale_factor must be positive.",
        {"size": [5, 5], "scale_factor": [0.0, 2.0]},
        ("ValueError", "scale_factor"),
    ),
]:
    _grid_case(
        f"invalid/{_name}", _why, (), _error, **{"table": _table(120, (3, 3, 2)), "size": [5, 5], **_kw}
    )
_grid_case(
    "invalid/table-rank",
    "A 2-D grid needs a [n, m, D] table.",
    (),
    ("ValueError", "table"),
    table=_table(121, (3, 2)),
    size=[4, 4],
)

# --- patch_grid_resize -------------------------------------------------------------------------

_patch_case(
    "vit/cls-4x4-to-6x6",
    "ViT: a class row and a 4 x 4 grid to 6 x 6 (bicubic, align_corners=False), in HF's [1, 17, D].",
    ("Basic", _PREFIX, _BICUBIC),
    table=_table(201, (1, 17, 2)),
    grid=[4, 4],
    new_grid=[6, 6],
)
_patch_case(
    "vit/cls-4x4-to-3x5",
    "ViT at a non-square image: 4 x 4 to 3 x 5.",
    (_PREFIX, _NON_SQUARE, _BICUBIC),
    table=_table(202, (1, 17, 2)),
    grid=[4, 4],
    new_grid=[3, 5],
)
_patch_case(
    "clip/cls-3x3-to-5x4",
    "CLIP's [1 + N, D] weight (no batch axis): a class row and 3 x 3 to 5 x 4.",
    (_PREFIX, _NON_SQUARE, _BICUBIC),
    table=_table(213, (10, 2)),
    grid=[3, 3],
    new_grid=[5, 4],
)
_patch_case(
    "siglip/no-prefix-3x3-to-4x5",
    "SigLIP: no class row; 3 x 3 to 4 x 5.",
    (_PREFIX, _NON_SQUARE),
    table=_table(203, (9, 2)),
    grid=[3, 3],
    new_grid=[4, 5],
    prefix_tokens=0,
)
_patch_case(
    "deit/cls-dist-3x3-to-5x5",
    "DeiT: class and distillation rows kept, 3 x 3 to 5 x 5.",
    (_PREFIX,),
    table=_table(204, (1, 11, 2)),
    grid=[3, 3],
    new_grid=[5, 5],
    prefix_tokens=2,
)
_patch_case(
    "registers/4-prefix-3x4-to-2x6",
    "Four prefix rows (class + 3 registers, timm num_prefix_tokens) and a non-square 3 x 4 grid to 2 x 6.",
    (_PREFIX, _NON_SQUARE),
    table=_table(205, (16, 2)),
    grid=[3, 4],
    new_grid=[2, 6],
    prefix_tokens=4,
)
_patch_case(
    "dinov2-registers/antialias-5x5-to-3x4",
    "DINOv2 with registers: bicubic antialias, 5 x 5 reduced to 3 x 4.",
    (_ANTIALIAS, _PREFIX),
    table=_table(206, (1, 26, 2)),
    grid=[5, 5],
    new_grid=[3, 4],
    antialias=True,
)
_patch_case(
    "tipsv2/bilinear-antialias-5x5-to-3x4",
    "TIPSv2: bilinear antialias with a class row, 5 x 5 reduced to 3 x 4.",
    (_ANTIALIAS, _PREFIX),
    table=_table(217, (1, 26, 2)),
    grid=[5, 5],
    new_grid=[3, 4],
    mode="bilinear",
    antialias=True,
)
_patch_case(
    "dinov2/same-grid-skipped",
    "The same grid with skip_same_grid: the stored table itself (HF's early return).",
    (_SKIP,),
    table=_table(207, (1, 10, 2)),
    grid=[3, 3],
    new_grid=[3, 3],
    skip_same_grid=True,
)
_patch_case(
    "idefics/scale-factor-4x4-to-5x6",
    "Idefics: scale_factor ((5 + 0.1)/4, (6 + 0.1)/4) from 4 x 4 (bicubic).",
    (_SCALE_FACTOR, _NON_SQUARE),
    table=_table(208, (1, 17, 2)),
    grid=[4, 4],
    new_grid=[5, 6],
    scale_factor=_idefics(4, (5, 6)),
)
_patch_case(
    "idefics/same-grid-resampled",
    "Idefics' map at the stored 3 x 3 grid without the early return (a non-square image of 3 x 3 "
    "patches): scale 3/3.1, the table moves.",
    (_SKIP, _SCALE_FACTOR),
    table=_table(209, (1, 10, 2)),
    grid=[3, 3],
    new_grid=[3, 3],
    scale_factor=_idefics(3, (3, 3)),
)
_patch_case(
    "idefics/same-grid-skipped",
    "The same call with skip_same_grid: the stored table (Idefics at a square image).",
    (_SKIP, _SCALE_FACTOR),
    table=_table(209, (1, 10, 2)),
    grid=[3, 3],
    new_grid=[3, 3],
    scale_factor=_idefics(3, (3, 3)),
    skip_same_grid=True,
)
_patch_case(
    "vilt/bilinear-align-corners-3x3-to-4x6",
    "ViLT-style bilinear with align_corners=True on a patch table.",
    (_ALIGN, _PREFIX),
    table=_table(210, (10, 2)),
    grid=[3, 3],
    new_grid=[4, 6],
    mode="bilinear",
    align_corners=True,
)
_patch_case(
    "dpt/bilinear-4x4-to-3x5",
    "DPT's _resize_pos_embed: bilinear, half-pixel centres (align_corners=False), one cls row, non-square.",
    (_HALF_PIXEL, _PREFIX, _NON_SQUARE),
    table=_table(211, (17, 2)),
    grid=[4, 4],
    new_grid=[3, 5],
    mode="bilinear",
)
_patch_case(
    "dpt/bilinear-3x3-to-6x4",
    "The same upward: bilinear half-pixel from 3 x 3 to 6 x 4 with the cls row.",
    (_HALF_PIXEL, _PREFIX, _NON_SQUARE),
    table=_table(212, (10, 2)),
    grid=[3, 3],
    new_grid=[6, 4],
    mode="bilinear",
)
_patch_case(
    "timesformer/nearest-2x3-to-4x5",
    "nearest (Timesformer) on a non-square 2 x 3 grid: rows doubled (d // 2), columns floor(3 d / 5).",
    (_NEAREST, _NON_SQUARE),
    table=_table(211, (7, 2)),
    grid=[2, 3],
    new_grid=[4, 5],
    mode="nearest",
)
_patch_case(
    "timesformer/nearest-3x3-to-5x4",
    "Timesformer's space table: a class row and 3 x 3 to 5 x 4 by nearest (rows floor(3 d / 5)).",
    (_NEAREST, _PREFIX),
    table=_table(214, (1, 10, 2)),
    grid=[3, 3],
    new_grid=[5, 4],
    mode="nearest",
)
_patch_case(
    "timesformer/nearest-4x4-to-2x8-same-count",
    "16 patches again, as 2 x 8: rows 0 and 2 of the 4 x 4 grid, each column twice (not the stored table).",
    (_SAME_COUNT, _NEAREST, _NON_SQUARE),
    table=_table(215, (1, 17, 2)),
    grid=[4, 4],
    new_grid=[2, 8],
    mode="nearest",
)
_patch_case(
    "vit/bicubic-4x4-to-8x2-same-count",
    "16 patches again, as 8 x 2 (a tall image): bicubic resize, not the stored table.",
    (_SAME_COUNT, _BICUBIC, _NON_SQUARE),
    table=_table(216, (1, 17, 2)),
    grid=[4, 4],
    new_grid=[8, 2],
)
for _name, _why, _kw, _error in [
    ("rows", "10 rows are not 1 + 4 x 4.", {"grid": [4, 4]}, ("ValueError", "grid")),
    (
        "prefix-negative",
        "prefix_tokens must be >= 0.",
        {"prefix_tokens": -1},
        ("ValueError", "prefix_tokens"),
    ),
    ("grid-length", "grid is [n, m].", {"grid": [9]}, ("ValueError", "grid")),
    ("new-grid-zero", "A new side of 0.", {"new_grid": [0, 4]}, ("ValueError", "new_grid")),
    ("mode", "Unknown mode.", {"mode": "cubic"}, ("ValueError", "mode")),
]:
    _patch_case(
        f"invalid/{_name}",
        _why,
        (),
        _error,
        **{"table": _table(212, (10, 2)), "grid": [3, 3], "new_grid": [4, 4], **_kw},
    )
