"""Vision features: SAM's random Fourier features, NaViT fractional buckets, factorised 2-D tables.

Declarations and cases of ``fourier_features``, ``fourier_grid`` (SAM, SAM 2, EdgeTAM, SAM-HQ,
SAM 3 tracker), ``navit_position_ids`` (Idefics 2/3, SmolVLM, MiniCPM-V), ``bbox_embedding``
(LayoutLM v1/v2/v3) and ``row_col_embedding`` (Pix2Struct, Kosmos-2.5, DETR's learned embedding).
Gaussian matrices and tables are dyadic rationals (exact in float32 and float64); pixel
coordinates are dyadic too.
"""

from __future__ import annotations

import math
from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, max_abs, tol
from ..notes import add_note
from ._common import B, F, I, _dyadic, case

# --- declarations ------------------------------------------------------------------------------


def _points(coords: Any) -> list[Any]:
    """The [..., 2] points of a nested list, flattened to [N][2], and the leading shape."""
    if isinstance(coords[0], (int, float)):
        return [coords]
    return [p for row in coords for p in _points(row)]


def _nest(flat: list[Any], like: Any) -> Any:
    """``flat`` (one entry per point of ``like``) in the leading shape of ``like``."""
    it = iter(flat)

    def build(x: Any) -> Any:
        return next(it) if isinstance(x[0], (int, float)) else [build(r) for r in x]

    return build(like)


def _fourier(inp: dict[str, Any]) -> dict[str, Any]:
    coords = inp["coords"]
    flat = oracle.fourier_features.fourier_features(
        _points(coords), inp["gaussian"], input_shape=inp["input_shape"], offset=inp["offset"]
    )
    return {"features": _nest(flat, coords)}


def _phase_bound(gaussian: Any, cmax: tuple[float, float]) -> float:
    """``A = 2 pi sum_k max_f |G_kf| (|c'_k|max + 2)``: the scale of the angle errors (see below)."""
    return 2 * math.pi * sum(max_abs(row) * (c + 2) for row, c in zip(gaussian, cmax, strict=True))


def _fourier_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """A plain evaluation in the run's dtype (unit roundoff u), SAM's order of operations.

    The shift and the division by the image side round once each: the normalised coordinate
    errs by 2u |c|; ``c' = 2c - 1`` adds one rounding, so ``|dc'_k| <= u (|c'_k| + 2)`` (|c| <= 1).
    The dot product ``c'_x G_x + c'_y G_y`` rounds two products and one sum: at most
    ``2u sum_k |c'_k G_k|``; the propagated coordinate errors add ``sum_k |G_k| u (|c'_k| + 2)``;
    ``2 pi`` (rounded) and the product round twice more, relative 2u of ``|z| <= A``.  So
    ``|dz| <= 4 u A`` with ``A = 2 pi sum_k max|G_k| (max|c'_k| + 2)``; sin/cos add one rounding and
    the float64-then-cast path one more: atol = (4 A + 2) u, rtol 0.
    """
    pts = _points(inp["coords"])
    shape = inp["input_shape"]
    cmax = tuple(max(abs(2 * (p[k] + inp["offset"]) / shape[1 - k] - 1) for p in pts) for k in (0, 1))
    a = 4 * _phase_bound(inp["gaussian"], cmax) + 2
    return tol(atol64=a * EPS64, ulp64=4, atol32=a * EPS32, ulp32=4)


def _grid(inp: dict[str, Any]) -> dict[str, Any]:
    g = inp["gaussian"]
    return {"features": oracle.fourier_features.fourier_grid(g, height=inp["height"], width=inp["width"])}


def _grid_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """As fourier_features with ``|c'| < 1`` and the pixel centres ``(j + 1/2)/W`` rounded once:
    atol = (4 A + 2) u, ``A = 2 pi sum_k 3 max|G_k|``."""
    a = 4 * _phase_bound(inp["gaussian"], (1.0, 1.0)) + 2
    return tol(atol64=a * EPS64, ulp64=4, atol32=a * EPS32, ulp32=4)


def _navit(inp: dict[str, Any]) -> dict[str, Any]:
    return {
        "position_ids": oracle.navit.navit_position_ids(
            inp["patch_attention_mask"],
            num_patches_per_side=inp["num_patches_per_side"],
            arithmetic=inp["arithmetic"],
        )
    }


def _boxes(bbox: Any) -> list[Any]:
    return [bbox] if isinstance(bbox[0], int) else [b for row in bbox for b in _boxes(row)]


def _nest_boxes(flat: list[Any], like: Any) -> Any:
    it = iter(flat)

    def build(x: Any) -> Any:
        return next(it) if isinstance(x[0], int) else [build(r) for r in x]

    return build(like)


def _bbox(inp: dict[str, Any]) -> dict[str, Any]:
    flat = oracle.learned_2d.bbox_embedding(
        inp["x_table"],
        inp["y_table"],
        inp["h_table"],
        inp["w_table"],
        _boxes(inp["bbox"]),
        combine=inp["combine"],
        clip_shape=inp["clip_shape"],
    )
    return {"embedding": _nest_boxes(flat, inp["bbox"])}


def _bbox_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """concat: copies of table entries, exact (0).  sum: six entries added left to right; each of the
    five additions rounds by at most u times the partial sum, bounded by
    ``M = 2 max|X| + 2 max|Y| + max|H| + max|W|``, and a float64 sum cast to the run dtype once more:
    atol = 6 u M, rtol 0."""
    if inp["combine"] == "concat":
        return tol()
    m = 2 * max_abs(inp["x_table"]) + 2 * max_abs(inp["y_table"]) + max_abs(inp["h_table"])
    m += max_abs(inp["w_table"])
    return tol(atol64=6 * m * EPS64, atol32=6 * m * EPS32)


def _row_col(inp: dict[str, Any]) -> dict[str, Any]:
    rows, cols = inp["rows"], inp["cols"]

    def flat(x: Any) -> list[int]:
        return [x] if isinstance(x, int) else [v for r in x for v in flat(r)]

    def nest(values: list[Any], like: Any) -> Any:
        it = iter(values)

        def build(x: Any) -> Any:
            return next(it) if isinstance(x, int) else [build(r) for r in x]

        return build(like)

    got = oracle.learned_2d.row_col_embedding(
        inp["row_table"], inp["col_table"], flat(rows), flat(cols), combine=inp["combine"]
    )
    return {"embedding": nest(got, rows)}


def _row_col_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """concat: exact copies (0).  sum: one addition and one cast, each at most u of
    ``M = max|Row| + max|Col|``: atol = 2 u M, rtol 0."""
    if inp["combine"] == "concat":
        return tol()
    m = 2 * (max_abs(inp["row_table"]) + max_abs(inp["col_table"]))
    return tol(atol64=m * EPS64, atol32=m * EPS32)


declare(
    FunctionSpec(
        "fourier_features",
        "fourier_features",
        "fourier_features(coords[..., 2], gaussian[2, F], input_shape, offset) -> features[..., 2F] "
        "= [sin z | cos z], z = 2 pi (2 c - 1) G, c = ((x + offset) / W, (y + offset) / H)",
        {
            "coords": ("float", "float64 [..., 2] points (x, y)"),
            "gaussian": ("float", "float64 [2, F] (SAM's positional_embedding)"),
            "input_shape": ("ints", "[H, W]: x is divided by W, y by H ([1, 1]: already normalised)"),
            "offset": ("number", "added before the division: 0.5 for SAM's prompts"),
        },
        {"features": "float"},
        _fourier,
        positional=2,
        cast_inputs=("coords", "gaussian"),
        case_tolerances=_fourier_tol,
    )
)
declare(
    FunctionSpec(
        "fourier_grid",
        "fourier_features",
        "fourier_grid(gaussian[2, F], height, width) -> features[2F, H, W]: fourier_features of the "
        "pixel centres ((j + 1/2) / W, (i + 1/2) / H), channels first",
        {
            "gaussian": ("float", "float64 [2, F]"),
            "height": ("int", "grid rows H"),
            "width": ("int", "grid columns W"),
        },
        {"features": "float"},
        _grid,
        positional=1,
        cast_inputs=("gaussian",),
        case_tolerances=_grid_tol,
    )
)
declare(
    FunctionSpec(
        "navit_position_ids",
        "navit",
        "navit_position_ids(patch_attention_mask[B, Hmax, Wmax], num_patches_per_side, arithmetic) -> "
        "position_ids[B, Hmax * Wmax] = bucket_h * N + bucket_w (0 at padding), "
        "bucket = bucketize(i / h, arange(1/N, 1, 1/N), right=True)",
        {
            "patch_attention_mask": ("mask", "bool [B, Hmax, Wmax], true for real patches"),
            "num_patches_per_side": ("int", "N: the table has N**2 rows"),
            "arithmetic": ("string", "float32 (Idefics2) | float32_divide (MiniCPM-V) | exact"),
        },
        {"position_ids": "int"},
        _navit,
        positional=1,
        output_kind="int",
    )
)
_TABLES = {
    name: ("float", f"float64 [rows, d] ({what})")
    for name, what in (
        ("x_table", "x coordinates"),
        ("y_table", "y coordinates"),
        ("h_table", "heights y1 - y0"),
        ("w_table", "widths x1 - x0"),
    )
}
declare(
    FunctionSpec(
        "bbox_embedding",
        "learned_2d",
        "bbox_embedding(x_table, y_table, h_table, w_table, bbox[..., 4], combine, clip_shape) -> "
        "embedding[..., d]: sum X[x0] + Y[y0] + X[x1] + Y[y1] + H[y1 - y0] + W[x1 - x0], "
        "or concat [X x0 | Y y0 | X x1 | Y y1 | H h | W w]",
        {
            **_TABLES,
            "bbox": ("positions", "int64 [..., 4] (x0, y0, x1, y1)"),
            "combine": ("string", "sum (LayoutLM) | concat (LayoutLMv2/v3)"),
            "clip_shape": ("bool", "clip h and w to the tables (LayoutLMv3)"),
        },
        {"embedding": "float"},
        _bbox,
        positional=5,
        cast_inputs=tuple(_TABLES),
        case_tolerances=_bbox_tol,
    )
)
declare(
    FunctionSpec(
        "row_col_embedding",
        "learned_2d",
        "row_col_embedding(row_table, col_table, rows[...], cols[...], combine) -> embedding[..., d]: "
        "sum Row[r] + Col[c] (Pix2Struct), or concat [Col[c] | Row[r]] (DETR)",
        {
            "row_table": ("float", "float64 [rows, d]"),
            "col_table": ("float", "float64 [rows, d]"),
            "rows": ("positions", "int64 row index of each patch"),
            "cols": ("positions", "int64 column index, the shape of rows"),
            "combine": ("string", "sum | concat"),
        },
        {"embedding": "float"},
        _row_col,
        positional=4,
        cast_inputs=("row_table", "col_table"),
        case_tolerances=_row_col_tol,
    )
)

# --- notes -------------------------------------------------------------------------------------

_SAM = "https://github.com/facebookresearch/segment-anything/blob/main/segment_anything/modeling/prompt_encoder.py"
_FOURIER = add_note(
    "RandomFourierFeatures",
    "ConventionMismatch",
    "SAM's encoding of a point: c' = 2c - 1 in [-1, 1], z = 2 pi c' G, [sin z | cos z] (sines first): "
    "dropping the 2c - 1 map or the 2 pi, or putting the cosines first, still gives unit-norm pairs.",
    "https://arxiv.org/abs/2006.10739",
    _SAM,
)
_AXES = add_note(
    "SamAxisOrder",
    "ConventionMismatch",
    "x is divided by the width input_shape[1] and y by the height input_shape[0]: on a non-square image "
    "swapping them moves every point (square images hide the bug).",
    _SAM,
)
_SHIFT = add_note(
    "SamPixelCentre",
    "ConventionMismatch",
    "Point and box prompts are shifted by +0.5 (the pixel centre) before the division "
    "(SamPromptEncoder._embed_points / _embed_boxes); the image-wide grid uses the centres "
    "(cumsum(ones) - 0.5) / size.",
    _SAM,
)
_NAVIT = add_note(
    "NavitBuckets",
    "ConventionMismatch",
    "NaViT fractional positions: patch row i of an h-row image goes to bucket floor(N i / h) of the N x N "
    "table (row-major id bucket_h * N + bucket_w); padding patches get id 0.",
    "https://arxiv.org/abs/2307.06304",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/idefics2/modeling_idefics2.py",
)
_NAVIT32 = add_note(
    "NavitFloat32Boundary",
    "NumericalPrecision",
    "Where i / h is exactly a bucket boundary k / N, Idefics2's float32 fraction fl(i fl(1/h)) can fall "
    "below the float32 boundary and the patch lands one bucket lower than floor(N i / h) (h = 25, N = 5 or "
    "70; h = 49, N = 70), while MiniCPM-V's fl(i / h) does not; PyTorch's float32 arange boundaries can sit "
    "above k / N (N = 19) for both: an implementation in other arithmetic assigns other table rows than "
    "the checkpoints were trained with.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/idefics2/modeling_idefics2.py",
)
_PADDED = add_note(
    "PaddedImages",
    "Functionality",
    "A batch of images of different patch grids padded to one size: each image's own h, w (counted in its "
    "mask's first column and row) sets its buckets, and padding patches take id 0.",
)
_LAYOUT = "https://github.com/huggingface/transformers/blob/main/src/transformers/models/layoutlm/modeling_layoutlm.py"
_BBOX_SUM = add_note(
    "BboxSum",
    "ConventionMismatch",
    "LayoutLM adds X[x0] + Y[y0] + X[x1] + Y[y1] + H[y1 - y0] + W[x1 - x0]: the x table is shared by both x "
    "corners, the y table by both y corners; height from y, width from x.",
    "https://arxiv.org/abs/1912.13318",
    _LAYOUT,
)
_BBOX_CAT = add_note(
    "BboxConcat",
    "ConventionMismatch",
    "LayoutLMv2/v3 concatenate [X x0 | Y y0 | X x1 | Y y1 | H h | W w] (coordinate_size and shape_size "
    "slices) instead of adding; the order of the six slices is the convention.",
    "https://arxiv.org/abs/2204.08387",
)
_CLIP = add_note(
    "BboxClipShape",
    "EdgeCase",
    "LayoutLMv3 clips the height and width to [0, 1023] before the lookup (a box with x1 < x0 gets width 0); "
    "LayoutLM v1/v2 index the tables with the raw difference and fail on it.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/layoutlmv3/modeling_layoutlmv3.py",
)
_ROWCOL = add_note(
    "RowColumnSum",
    "ConventionMismatch",
    "Pix2Struct adds Row[r] + Col[c] with r, c read from channels 0 and 1 of each flattened patch "
    "(1-based, 0 for padding patches); swapping the two tables transposes the grid.",
    "https://arxiv.org/abs/2210.03347",
)
_DETR = add_note(
    "DetrLearnedGrid",
    "ConventionMismatch",
    "DETR's learned position embedding concatenates the column (x) embedding first: [Col[j] | Row[i]] at "
    "(i, j); non-square grids tell the order of the halves and of the axes apart.",
    "https://arxiv.org/abs/2005.12872",
)

# --- fourier_features ----------------------------------------------------------------------------


def _fourier_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("input_shape", [1, 1])
    inputs.setdefault("offset", 0.0)
    for name in ("coords", "gaussian"):
        if not isinstance(inputs[name], (F, I)):
            inputs[name] = F(inputs[name])
    case(f"fourier_features/{id}", comment, flags, error, **inputs)


_G8 = _dyadic(2501, (2, 8), denominator=64, span=192)
_G4 = _dyadic(2502, (2, 4), denominator=32, span=64)
_fourier_case(
    "normalised/unit-square",
    "Normalised points (input_shape [1, 1]) at the corners, the centre and quarter points; F = 4.",
    ("Basic", _FOURIER),
    coords=[[0.0, 0.0], [1.0, 1.0], [0.5, 0.5], [0.25, 0.75], [1.0, 0.0]],
    gaussian=_G4,
)
_fourier_case(
    "prompt/points-1024",
    "Point prompts in pixels on SAM's 1024 x 1024 input, shifted by 0.5 (_embed_points); F = 8.",
    (_FOURIER, _SHIFT),
    coords=[[[10.0, 20.0], [0.0, 0.0], [1023.0, 1023.0], [511.5, 300.25]]],
    gaussian=_G8,
    input_shape=[1024, 1024],
    offset=0.5,
)
_fourier_case(
    "prompt/boxes-batched",
    "Two images, two boxes each, as corner pairs [B, boxes, 2, 2] (_embed_boxes), on a 64 x 64 input.",
    (_SHIFT, "BatchedPositions"),
    coords=[
        [[[3.0, 4.0], [40.0, 60.0]], [[0.0, 0.0], [63.0, 63.0]]],
        [[[10.5, 2.25], [12.0, 30.0]], [[31.0, 31.0], [32.0, 32.0]]],
    ],
    gaussian=_G4,
    input_shape=[64, 64],
    offset=0.5,
)
_fourier_case(
    "nonsquare/768x1024",
    "A 768-row, 1024-column input: x is divided by 1024 (input_shape[1]), y by 768.",
    (_AXES, _SHIFT),
    coords=[[100.0, 700.0], [1000.0, 5.0], [767.0, 767.0], [0.0, 512.0]],
    gaussian=_G8,
    input_shape=[768, 1024],
    offset=0.5,
)
_fourier_case(
    "nonsquare/600x900-no-shift",
    "A 600 x 900 input (divisions that do not round exactly) without the pixel shift.",
    (_AXES,),
    coords=[[450.0, 300.0], [899.0, 1.0], [3.0, 599.0]],
    gaussian=_G4,
    input_shape=[600, 900],
)
_fourier_case(
    "sam2/f128",
    "SAM 2's width: hidden_size 256, F = 128 frequencies, a few normalised points.",
    (_FOURIER,),
    coords=[[0.125, 0.875], [0.9375, 0.4375]],
    gaussian=_dyadic(2503, (2, 128), denominator=64, span=128),
)
for _name, _kw, _error in [
    ("coords-width-3", {"coords": [[0.0, 0.5, 1.0]]}, ("ValueError", "coords")),
    ("gaussian-3-rows", {"gaussian": [[1.0], [0.5], [0.25]]}, ("ValueError", "gaussian")),
    ("shape-3", {"input_shape": [4, 4, 4]}, ("ValueError", "input_shape")),
    ("zero-height", {"input_shape": [0, 4]}, ("ValueError", "input_shape")),
]:
    _fourier_case(
        f"invalid/{_name}",
        f"{_error[1]} out of range.",
        (),
        _error,
        **{"coords": [[0.5, 0.5]], "gaussian": [[1.0], [0.5]], **_kw},
    )

# --- fourier_grid --------------------------------------------------------------------------------


def _grid_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    if not isinstance(inputs["gaussian"], (F, I)):
        inputs["gaussian"] = F(inputs["gaussian"])
    case(f"fourier_grid/{id}", comment, flags, error, **inputs)


_grid_case(
    "square/8x8",
    "An 8 x 8 image-wide grid (SAM's is 64 x 64), F = 4, channels first.",
    ("Basic", _FOURIER, _SHIFT),
    gaussian=_G4,
    height=8,
    width=8,
)
_grid_case(
    "nonsquare/4x6",
    "A 4-row, 6-column grid (SAM 2 divides y by size[0], x by size[1]).",
    (_AXES, _SHIFT),
    gaussian=_dyadic(2504, (2, 3), denominator=16, span=48),
    height=4,
    width=6,
)
_grid_case(
    "nonsquare/3x1",
    "One column of three rows.",
    (_AXES,),
    gaussian=_G4,
    height=3,
    width=1,
)
for _name, _kw, _error in [
    ("zero-height", {"height": 0}, ("ValueError", "height")),
    ("gaussian-1-row", {"gaussian": [[1.0, 2.0]]}, ("ValueError", "gaussian")),
]:
    _grid_case(
        f"invalid/{_name}",
        f"{_error[1]} out of range.",
        (),
        _error,
        **{"gaussian": [[1.0], [0.5]], "height": 2, "width": 2, **_kw},
    )

# --- navit_position_ids --------------------------------------------------------------------------


def _mask(images: list[tuple[int, int]], rows: int, cols: int) -> B:
    return B([[[i < h and j < w for j in range(cols)] for i in range(rows)] for h, w in images])


def _navit_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("arithmetic", "float32")
    case(f"navit_position_ids/{id}", comment, flags, error, **inputs)


_navit_case(
    "full/4x4-on-4",
    "One unpadded 4 x 4 image on a 4 x 4 table: the ids are 0 .. 15.",
    ("Basic", _NAVIT),
    patch_attention_mask=_mask([(4, 4)], 4, 4),
    num_patches_per_side=4,
)
_navit_case(
    "padded/batch-on-8",
    "Three images (3 x 5, 2 x 2, 1 x 4) padded to 3 x 5 on an 8 x 8 table.",
    (_NAVIT, _PADDED),
    patch_attention_mask=_mask([(3, 5), (2, 2), (1, 4)], 3, 5),
    num_patches_per_side=8,
)
_navit_case(
    "padded/idefics2-70",
    "Idefics2's 70 x 70 table (980 / 14): images of 7 x 12 and 12 x 3 patches padded to 12 x 12.",
    (_NAVIT, _PADDED),
    patch_attention_mask=_mask([(7, 12), (12, 3)], 12, 12),
    num_patches_per_side=70,
)
for _arith in ("float32", "float32_divide", "exact"):
    _tag = {"float32": "", "float32_divide": "-divide", "exact": "-exact"}[_arith]
    _navit_case(
        f"boundary/25-on-5{_tag}",
        f"25 patch rows on a 5 x 5 table, {_arith} arithmetic: rows 5, 10, 15, 20 sit on the boundaries "
        "k/5 (float32 puts them one bucket lower).",
        (_NAVIT, _NAVIT32),
        patch_attention_mask=_mask([(25, 3)], 25, 3),
        num_patches_per_side=5,
        arithmetic=_arith,
    )
    _navit_case(
        f"boundary/idefics2-25-and-49{_tag}",
        f"Images of 25 x 2 and 49 x 1 patches (350 and 686 pixels high) on Idefics2's 70 x 70 table, "
        f"{_arith} arithmetic.",
        (_NAVIT, _NAVIT32, _PADDED),
        patch_attention_mask=_mask([(25, 2), (49, 1)], 49, 2),
        num_patches_per_side=70,
        arithmetic=_arith,
    )
_navit_case(
    "boundary/19-on-19-divide",
    "19 rows on a 19 x 19 table, MiniCPM-V's division: row 12 also goes to bucket 11 (the boundary).",
    (_NAVIT, _NAVIT32),
    patch_attention_mask=_mask([(19, 1)], 19, 1),
    num_patches_per_side=19,
    arithmetic="float32_divide",
)
_navit_case(
    "boundary/19-on-19",
    "19 rows on a 19 x 19 table: PyTorch's float32 boundary 12/19 is one float32 above the nearest one, "
    "and row 12 goes to bucket 11.",
    (_NAVIT, _NAVIT32),
    patch_attention_mask=_mask([(19, 1)], 19, 1),
    num_patches_per_side=19,
)
for _name, _kw, _error in [
    ("zero-side", {"num_patches_per_side": 0}, ("ValueError", "num_patches_per_side")),
    ("arithmetic", {"arithmetic": "float64"}, ("ValueError", "arithmetic")),
    ("mask-2d", {"patch_attention_mask": B([[True, True]])}, ("ValueError", "patch_attention_mask")),
    ("float-mask", {"patch_attention_mask": F([[[1.0, 1.0]]])}, ("TypeError", "patch_attention_mask")),
]:
    _navit_case(
        f"invalid/{_name}",
        f"{_error[1]} out of range.",
        (),
        _error,
        **{"patch_attention_mask": _mask([(1, 2)], 1, 2), "num_patches_per_side": 4, **_kw},
    )

# --- bbox_embedding ------------------------------------------------------------------------------


def _tables(seed: int, rows: int, dims: tuple[int, int, int, int]) -> dict[str, F]:
    names = ("x_table", "y_table", "h_table", "w_table")
    return {
        n: F(_dyadic(seed + k, (rows, d), denominator=64, span=128))
        for k, (n, d) in enumerate(zip(names, dims, strict=True))
    }


def _bbox_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("combine", "sum")
    inputs.setdefault("clip_shape", False)
    inputs["bbox"] = I(inputs["bbox"]) if not isinstance(inputs["bbox"], F) else inputs["bbox"]
    case(f"bbox_embedding/{id}", comment, flags, error, **inputs)


_T16 = _tables(2600, 16, (4, 4, 4, 4))
_BOXES = [[[0, 0, 3, 5], [2, 7, 9, 15], [15, 15, 15, 15]], [[1, 2, 1, 2], [4, 0, 12, 8], [0, 3, 15, 10]]]
_bbox_case(
    "sum/layoutlm",
    "LayoutLM's sum for a batch of 2 x 3 boxes on 16-row tables, d = 4.",
    ("Basic", _BBOX_SUM, "BatchedPositions"),
    **_T16,
    bbox=_BOXES,
)
_bbox_case(
    "concat/layoutlmv2",
    "LayoutLMv2's concatenation: coordinate_size 3, shape_size 2 (output width 16).",
    (_BBOX_CAT,),
    **_tables(2620, 16, (3, 3, 2, 2)),
    combine="concat",
    bbox=_BOXES,
)
_bbox_case(
    "concat/layoutlmv3-clip",
    "LayoutLMv3: the height and width are clipped to the tables (x1 < x0 gives width 0; 8-row shape "
    "tables clip a 13 to 7).",
    (_BBOX_CAT, _CLIP),
    x_table=_T16["x_table"],
    y_table=_T16["y_table"],
    h_table=F(_dyadic(2630, (8, 2), denominator=64, span=128)),
    w_table=F(_dyadic(2631, (8, 2), denominator=64, span=128)),
    combine="concat",
    clip_shape=True,
    bbox=[[9, 2, 3, 15], [0, 0, 15, 1], [5, 5, 5, 5]],
)
_bbox_case(
    "sum/clip-shape",
    "The clipped height and width with LayoutLM's sum.",
    (_BBOX_SUM, _CLIP),
    **_T16,
    clip_shape=True,
    bbox=[[9, 12, 3, 2], [0, 0, 15, 15]],
)
_T4 = _tables(2660, 4, (1, 1, 1, 1))
for _name, _why, _kw, _error in [
    ("corner-4", "A corner past the 4-row table.", {"bbox": [[0, 0, 4, 2]]}, ("ValueError", "bbox")),
    ("negative-width", "x1 < x0 without clip_shape.", {"bbox": [[3, 0, 2, 1]]}, ("ValueError", "bbox")),
    ("bbox-3", "Boxes need four numbers.", {"bbox": [[1, 2, 3]]}, ("ValueError", "bbox")),
    ("float-bbox", "Boxes must be integers.", {"bbox": F([[0.0, 0.0, 1.0, 1.0]])}, ("TypeError", "bbox")),
    ("combine", "Unknown combine.", {"combine": "mean"}, ("ValueError", "combine")),
    (
        "sum-widths",
        "Widths differ under sum.",
        {"h_table": F(_dyadic(2640, (4, 2), denominator=64, span=128))},
        ("ValueError", "h_table"),
    ),
]:
    _flags = ("DataDependentCheck",) if _name in ("corner-4", "negative-width") else ()
    _bbox_case(f"invalid/{_name}", _why, _flags, _error, **{**_T4, "bbox": [[0, 0, 1, 1]], **_kw})

# --- row_col_embedding ---------------------------------------------------------------------------


def _row_col_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("combine", "sum")
    for name in ("row_table", "col_table"):
        inputs[name] = F(inputs[name])
    for name in ("rows", "cols"):
        if not isinstance(inputs[name], F):
            inputs[name] = I(inputs[name])
    case(f"row_col_embedding/{id}", comment, flags, error, **inputs)


def _grid_indices(h: int, w: int) -> tuple[list[list[int]], list[list[int]]]:
    return [[i] * w for i in range(h)], [list(range(w)) for _ in range(h)]


_R9, _C9 = _dyadic(2700, (9, 4), denominator=64, span=128), _dyadic(2701, (9, 4), denominator=64, span=128)
_row_col_case(
    "sum/pix2struct",
    "Pix2Struct: a 2 x 3 patch grid numbered from 1, then two padding patches (0, 0), flattened.",
    ("Basic", _ROWCOL),
    row_table=_R9,
    col_table=_C9,
    rows=[[1, 1, 1, 2, 2, 2, 0, 0]],
    cols=[[1, 2, 3, 1, 2, 3, 0, 0]],
)
_row_col_case(
    "sum/batched",
    "Two images of different grids (3 x 2 and 1 x 5) in one batch of 6 patches each.",
    (_ROWCOL, "BatchedPositions"),
    row_table=_R9,
    col_table=_C9,
    rows=[[1, 1, 2, 2, 3, 3], [1, 1, 1, 1, 1, 0]],
    cols=[[1, 2, 1, 2, 1, 2], [1, 2, 3, 4, 5, 0]],
)
for _h, _w in ((2, 3), (4, 2)):
    _rows, _cols = _grid_indices(_h, _w)
    _row_col_case(
        f"concat/detr-{_h}x{_w}",
        f"DETR's learned grid, {_h} x {_w}: [Col[j] | Row[i]] at (i, j); tables of 6 rows, d = 3.",
        (_DETR,),
        row_table=_dyadic(2710, (6, 3), denominator=64, span=128),
        col_table=_dyadic(2711, (6, 3), denominator=64, span=128),
        rows=_rows,
        cols=_cols,
        combine="concat",
    )
for _name, _why, _kw, _error in [
    ("row-past-table", "A row index past the 3-row table.", {"rows": [3]}, ("ValueError", "rows")),
    ("shapes", "rows and cols of different shapes.", {"cols": [0, 1]}, ("ValueError", "cols")),
    (
        "float-rows",
        "Indices must be integers (Pix2Struct's .long()).",
        {"rows": F([1.0])},
        ("TypeError", "rows"),
    ),
    (
        "sum-widths",
        "Widths differ under sum.",
        {"col_table": _dyadic(2720, (3, 2), denominator=64, span=128)},
        ("ValueError", "col_table"),
    ),
]:
    _row_col_case(
        f"invalid/{_name}",
        _why,
        ("DataDependentCheck",) if _name == "row-past-table" else (),
        _error,
        **{"row_table": _R9[:3], "col_table": _C9[:3], "rows": [1], "cols": [2], **_kw},
    )
