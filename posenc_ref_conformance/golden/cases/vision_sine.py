"""Vision sines: declarations and cases of DETR's 2-D sine, its coordinate sinusoid and 2-D sincos."""

from __future__ import annotations

import math
from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, flatten, max_abs, tol
from ..notes import add_note
from ._common import B, F, I, case

TWO_PI = 2 * math.pi

# --- declarations ------------------------------------------------------------------------------


def _detr(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {k: inp[k] for k in ("temperature", "temperature_height", "temperature_width", "normalize", "scale")}
    return {
        "embedding": oracle.vision_sine.detr_sine_2d(
            inp["mask"], inp["num_position_features"], convention=inp["convention"], **kw
        )
    }


def _angle_tol(max_angle: float, log_t: float, roundings: int) -> Tolerance:
    a = max_angle * (log_t + roundings) + 2
    return tol(atol64=a * EPS64, ulp64=4, atol32=a * EPS32, ulp32=4)


def _detr_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """A plain evaluation in the run's dtype (unit roundoff u).

    The counts are exact integers.  Normalised, ``(c - delta) / (c_last + 1e-6) * scale`` takes 5
    roundings (the offset, the sum, the division, the scale's own rounding, the product): relative
    error 5u.  ``dim_t = T**(2k/F)``: the exponent rounded (error ``e ln T u``, e <= 1) and the power,
    (ln T + 2)u; the division by it one more: the angle a errs by a (ln T + 8) u.  sin/cos (|.| <= 1) add
    u absolute, the output rounding one more: atol = u (A (ln T + 8) + 2), A the largest angle (the
    largest |normalised position|, scale at most, or the largest count unnormalised), T the larger
    temperature; 4 ulp besides.
    """
    scale, normalize = inp["scale"], inp["normalize"]
    delta = 0.5 if inp["convention"] == "deformable_detr" else 0.0
    biggest = 0.0
    for image in inp["mask"]:
        m = [[1 if v else 0 for v in row] for row in image]
        h, w = len(m), len(m[0])
        for i in range(h):
            for j in range(w):
                y, x = sum(m[r][j] for r in range(i + 1)), sum(m[i][: j + 1])
                if normalize:
                    y = (y - delta) / (sum(m[r][j] for r in range(h)) + 1e-6) * scale
                    x = (x - delta) / (sum(m[i]) + 1e-6) * scale
                biggest = max(biggest, abs(y), abs(x))
    temps = [t for t in (inp["temperature"], inp["temperature_height"], inp["temperature_width"]) if t]
    return _angle_tol(biggest, math.log(max(temps)), 8)


def _coord(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {k: inp[k] for k in ("temperature", "scale", "convention")}
    return {"embedding": oracle.vision_sine.detr_coord_sine(inp["coords"], inp["num_pos_feats"], **kw)}


def _coord_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """As DETR's sine: the angle ``c * scale / dim_t`` errs by a (ln T + 6) u (the scale's rounding, the
    product, dim_t's (ln T + 2) u, the division; the sigmoid of a proposal 3 more, absorbed in the 8 used
    here), sin/cos and the output rounding 2u absolute: atol = u (A (ln T + 8) + 2), A = scale max |c|
    (the sigmoid is below 1).
    """
    big = 1.0 if inp["convention"] == "deformable_detr" else max_abs(inp["coords"])
    return _angle_tol(inp["scale"] * big, math.log(inp["temperature"]), 8)


def _sincos(inp: dict[str, Any]) -> dict[str, Any]:
    table = oracle.vision_sine.sincos_2d(
        inp["h_positions"],
        inp["w_positions"],
        inp["dim"],
        temperature=inp["temperature"],
        convention=inp["convention"],
        cls_token=inp["cls_token"],
    )
    return {"table": table}


def _sincos_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """``omega_k = 1 / T**(k/q)``: the exponent's rounding (k/q <= 1, error ln T u), the power and the
    reciprocal: (ln T + 3) u; the product p omega one more, so the angle a errs by a (ln T + 4) u; sin/cos
    and the output rounding 2u: atol = u (A (ln T + 4) + 2), A the largest |position|.
    """
    big = max_abs([*flatten(inp["h_positions"]), *flatten(inp["w_positions"])])
    return _angle_tol(big, math.log(inp["temperature"]), 4)


declare(
    FunctionSpec(
        "detr_sine_2d",
        "vision_sine",
        "detr_sine_2d(mask[B, H, W], num_position_features F, temperature, temperature_height, "
        "temperature_width, normalize, scale, convention) -> embedding[B, 2F, H, W]: y = cumsum_H(mask), "
        "x = cumsum_W(mask) from 1, normalised (c - delta)/(c_last + 1e-6) * scale (delta 0 detr, 0.5 "
        "deformable_detr), channels [sin, cos](c / T**(2k/F)) interleaved, [y | x]",
        {
            "mask": ("mask", "bool or int64 [B, H, W], non-zero = real pixel"),
            "num_position_features": ("int", "even F, channels per axis"),
            "temperature": ("number", "number"),
            "temperature_height": ("number|null", "DAB-DETR's y temperature, or null"),
            "temperature_width": ("number|null", "DAB-DETR's x temperature, or null"),
            "normalize": ("bool", "bool"),
            "scale": ("number", "number"),
            "convention": ("string", "detr | deformable_detr"),
        },
        {"embedding": "float"},
        _detr,
        positional=2,
        takes_dtype=True,
        case_tolerances=_detr_tol,
    )
)
declare(
    FunctionSpec(
        "detr_coord_sine",
        "vision_sine",
        "detr_coord_sine(coords[..., n], num_pos_feats F, temperature, scale, convention) -> "
        "embedding[..., n F]: per coordinate [sin, cos](scale c / T**(2k/F)) interleaved; "
        "conditional_detr swaps the first two coordinates (y first), deformable_detr takes sigmoid(c)",
        {
            "coords": (
                "float",
                "float64 [..., n] coordinates (conditional_detr) or logits (deformable_detr)",
            ),
            "num_pos_feats": ("int", "even F, channels per coordinate"),
            "temperature": ("number", "number"),
            "scale": ("number", "number"),
            "convention": ("string", "conditional_detr | deformable_detr"),
        },
        {"embedding": "float"},
        _coord,
        positional=2,
        cast_inputs=("coords",),
        case_tolerances=_coord_tol,
    )
)
declare(
    FunctionSpec(
        "sincos_2d",
        "vision_sine",
        "sincos_2d(h_positions[H], w_positions[W], dim D, temperature, convention, cls_token) -> "
        "table[(1 +) H W, D]: per axis [sin | cos](p / T**(k/(D/4))); rt_detr rows h-major, [h | w]; "
        "vit_mae rows h-major, [w | h]; omdet_turbo rows w-major, [w | h]; cls_token: a zero row first",
        {
            "h_positions": ("positions", "int64 [H]"),
            "w_positions": ("positions", "int64 [W]"),
            "dim": ("int", "D, a multiple of 4"),
            "temperature": ("number", "number"),
            "convention": ("string", "rt_detr | vit_mae | omdet_turbo"),
            "cls_token": ("bool", "bool"),
        },
        {"table": "float"},
        _sincos,
        positional=3,
        takes_dtype=True,
        case_tolerances=_sincos_tol,
    )
)

# --- DETR sine ------------------------------------------------------------------------------------

_NORMALISED = add_note(
    "DetrSineNormalised",
    "ConventionMismatch",
    "DETR's sine counts rows and columns from 1 (cumsum of the mask), divides by the last count plus 1e-6 "
    "and multiplies by 2 pi, then interleaves sin (even channels) and cos (odd) of c / T**(2 floor(i/2)/F) "
    "and puts the y block first, channels first: counting from 0, dividing by H instead of the last count, "
    "[x | y], or [sin | cos] halves each give a plausible table with every value wrong.",
    "https://arxiv.org/abs/2005.12872",
    "https://github.com/facebookresearch/detr/blob/main/models/position_encoding.py",
)
_PADDING = add_note(
    "DetrPaddingMask",
    "Functionality",
    "A padded image batch: each image's positions are normalised by its own real extent (the last "
    "cumulative count of its column/row), so a padded image is encoded as if it were alone; padding "
    "pixels repeat the last real count.  An implementation that normalises by the padded size, or "
    "ignores the mask, changes every real pixel of the padded image.",
    "https://github.com/facebookresearch/detr/blob/main/models/position_encoding.py",
)
_DEFORMABLE = add_note(
    "DeformableDetrOffset",
    "ConventionMismatch",
    "Deformable DETR (and its HF copies) normalises (cumsum - 0.5) / (last + 1e-6) * 2 pi: pixel centres, "
    "not DETR's cumsum / (last + 1e-6).",
    "https://github.com/fundamentalvision/Deformable-DETR/blob/main/models/position_encoding.py",
)
_DAB = add_note(
    "DabDetrTemperatures",
    "ConventionMismatch",
    "DAB-DETR gives the y and x axes separate temperatures (temperature_height, temperature_width): "
    "using one for both, or swapping them, changes one block.",
    "https://github.com/IDEA-Research/DAB-DETR/blob/main/models/DAB_DETR/position_encoding.py",
)

_REAL_3x5 = [[True] * 5 for _ in range(3)]
_PADDED = [
    [[True] * 4, [True] * 4, [True] * 4],
    [[True] * 3 + [False], [True] * 3 + [False], [False] * 4],
]


def _detr_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("num_position_features", 4)
    for name, value in (
        ("temperature", 10000.0),
        ("temperature_height", None),
        ("temperature_width", None),
        ("normalize", True),
        ("scale", TWO_PI),
        ("convention", "detr"),
    ):
        inputs.setdefault(name, value)
    if isinstance(inputs["mask"], list):
        inputs["mask"] = B(inputs["mask"])
    case(f"detr_sine_2d/{id}", comment, flags, error, **inputs)


_detr_case(
    "detr/3x5",
    "One 3 x 5 image, no padding, F = 4: DETR's defaults (normalize, 2 pi, T = 10000).",
    ("Basic", _NORMALISED),
    mask=[_REAL_3x5],
)
_detr_case(
    "detr/padded-batch",
    "Two 3 x 4 images, the second padded to 2 x 3 real pixels; F = 8.",
    (_NORMALISED, _PADDING),
    mask=_PADDED,
    num_position_features=8,
)
_detr_case(
    "detr/int-mask",
    "HF's pixel_mask as int64 0/1 (a 5 x 3 image, last column padding), F = 4.",
    (_NORMALISED, _PADDING),
    mask=I([[[1, 1, 0]] * 5]),
    num_position_features=4,
)
_detr_case(
    "detr/unnormalised",
    "normalize=False: the raw counts 1 .. H and 1 .. W (a 2 x 7 image), T = 20, F = 4.",
    "Basic",
    mask=[[[True] * 7] * 2],
    normalize=False,
    temperature=20.0,
)
_detr_case(
    "deformable/3x5",
    "Deformable DETR's (c - 0.5) / (last + 1e-6) * 2 pi on a 3 x 5 image.",
    _DEFORMABLE,
    mask=[_REAL_3x5],
    convention="deformable_detr",
)
_detr_case(
    "deformable/padded-batch",
    "Deformable DETR's offset on a batch whose second image has ragged padding that leaves no row or column "
    "all padding (a padded-out row or column is -0.5 / 1e-6 * 2 pi there, angles of -3e6), F = 4.",
    (_DEFORMABLE, _PADDING),
    mask=[_PADDED[0], [[True] * 4, [True] * 3 + [False], [True] + [False] * 3]],
    convention="deformable_detr",
)
_detr_case(
    "dab/temperatures",
    "DAB-DETR: temperature_height 20, temperature_width 10000 on a 3 x 4 image.",
    _DAB,
    mask=[_PADDED[0]],
    temperature_height=20.0,
    temperature_width=10000.0,
)
_detr_case(
    "dab/temperatures-padded",
    "DAB-DETR's temperatures 100 (y) and 5 (x) on the padded batch.",
    (_DAB, _PADDING),
    mask=_PADDED,
    temperature_height=100.0,
    temperature_width=5.0,
)
_detr_case(
    "detr/scale-1",
    "scale = 1 (positions in (0, 1]), T = 2, F = 6 (three pairs).",
    _NORMALISED,
    mask=[[[True] * 4] * 3],
    num_position_features=6,
    scale=1.0,
    temperature=2.0,
)
for _name, _why, _kw, _error in [
    (
        "odd-features",
        "F must be even (sin and cos pairs).",
        {"num_position_features": 7},
        ("ValueError", "num_position_features"),
    ),
    ("mask-2d", "The mask must be [B, H, W].", {"mask": B([[True, True]])}, ("ValueError", "mask")),
    (
        "float-mask",
        "The mask must be boolean or integer.",
        {"mask": F([[[1.0, 1.0]]])},
        ("TypeError", "mask"),
    ),
    ("convention", "Unknown convention name.", {"convention": "dino"}, ("ValueError", "convention")),
]:
    _detr_case(f"invalid/{_name}", _why, (), _error, **{"mask": [[[True, True]]], **_kw})

# --- coordinate sine ----------------------------------------------------------------------------

_SWAP = add_note(
    "CoordSineYFirst",
    "ConventionMismatch",
    "Conditional DETR's encode_sinusoidal_position_embedding (DAB-DETR, Grounding DINO, LW-DETR, RF-DETR) "
    "swaps the first two coordinates, so (x, y, w, h) comes out as [y | x | w | h] (DETR's [pos_y, pos_x]); "
    "each block interleaves sin and cos of 2 pi c / T**(2 floor(i/2)/F).",
    "https://github.com/Atten4Vis/ConditionalDETR/blob/main/models/transformer.py",
)
_PROPOSAL = add_note(
    "ProposalSigmoid",
    "ConventionMismatch",
    "Deformable DETR's get_proposal_pos_embed encodes sigmoid(proposal logits) * 2 pi, four coordinates in "
    "their order (no swap), F = 128 per coordinate.",
    "https://github.com/fundamentalvision/Deformable-DETR/blob/main/models/deformable_transformer.py",
)


def _coord_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("num_pos_feats", 16)
    inputs.setdefault("temperature", 10000.0)
    inputs.setdefault("scale", TWO_PI)
    inputs.setdefault("convention", "conditional_detr")
    inputs["coords"] = F(inputs["coords"])
    case(f"detr_coord_sine/{id}", comment, flags, error, **inputs)


_coord_case(
    "conditional/points",
    "Three anchor points (x, y) in [0, 1], F = 16: the y block first.",
    ("Basic", _SWAP),
    coords=[[0.25, 0.75], [0.5, 0.125], [1.0, 0.0]],
)
_coord_case(
    "conditional/boxes-batched",
    "Boxes (x, y, w, h), batch 2 x 2 queries, F = 8: y, x, w, h blocks.",
    (_SWAP, "BatchedPositions"),
    coords=[
        [[0.5, 0.25, 0.125, 0.0625], [0.875, 0.375, 0.5, 0.25]],
        [[0.0, 1.0, 1.0, 0.5], [0.3125, 0.6875, 0.25, 0.75]],
    ],
    num_pos_feats=8,
)
_coord_case(
    "conditional/one-coordinate",
    "A single coordinate (nothing to swap), Grounding DINO's text positions 0 .. 4, F = 8, T = 10000.",
    _SWAP,
    coords=[[0.0], [1.0], [2.0], [3.0], [4.0]],
    num_pos_feats=8,
)
_coord_case(
    "conditional/temperature-20",
    "T = 20 (DAB-DETR's query_dim temperature is a config value), F = 32 per coordinate.",
    _SWAP,
    coords=[[0.625, 0.1875]],
    num_pos_feats=32,
    temperature=20.0,
)
_coord_case(
    "deformable/proposals",
    "Deformable DETR's two-stage proposals: logits of four coordinates, batch 1 x 3, F = 16 (HF: d_model/2).",
    _PROPOSAL,
    coords=[[[0.0, -1.5, 2.25, -0.75], [1.0, 0.5, -3.0, 4.0], [-2.0, 0.125, 0.0, -0.25]]],
    convention="deformable_detr",
)
_coord_case(
    "deformable/proposals-small",
    "Proposal logits near 0 and far out (+-8), F = 8.",
    _PROPOSAL,
    coords=[[[-8.0, 8.0, 0.0625, -0.0625]]],
    num_pos_feats=8,
    convention="deformable_detr",
)
for _name, _why, _kw, _error in [
    ("odd-features", "F must be even.", {"num_pos_feats": 5}, ("ValueError", "num_pos_feats")),
    ("temperature", "T must be positive.", {"temperature": 0.0}, ("ValueError", "temperature")),
    ("convention", "Unknown convention name.", {"convention": "dab_detr"}, ("ValueError", "convention")),
]:
    _coord_case(f"invalid/{_name}", _why, (), _error, **{"coords": [[0.5, 0.5]], **_kw})

# --- 2-D sincos ------------------------------------------------------------------------------------

_SINCOS = add_note(
    "Sincos2dLayout",
    "ConventionMismatch",
    "MAE / RT-DETR 2-D sincos: omega_k = 1/T**(k/(D/4)), per axis [sin | cos] halves (not interleaved), "
    "the h block first and rows h-major (HF build_2d_sinusoidal_position_embedding); a grid with H != W "
    "tells the row orders apart.",
    "https://github.com/facebookresearch/mae/blob/main/util/pos_embed.py",
    "https://github.com/lyuwenyu/RT-DETR/blob/main/rtdetr_pytorch/src/zoo/rtdetr/hybrid_encoder.py",
)
_MAE = add_note(
    "Sincos2dMaeSwap",
    "ConventionMismatch",
    "ViT-MAE (and AIMv2, Granite-Docling) swap the halves to [w | h], after the original's naming bug: the "
    "pretrained weights rely on it.",
    "https://github.com/facebookresearch/mae/blob/main/util/pos_embed.py",
)
_OMDET = add_note(
    "Sincos2dWMajor",
    "ConventionMismatch",
    "OmDet-Turbo keeps the original RT-DETR code, meshgrid(grid_w, grid_h, 'ij'): rows w-major (row j H + i) "
    "and [w | h]; on a non-square grid its rows no longer match the h-major flattened features.",
    "https://github.com/lyuwenyu/RT-DETR/blob/main/rtdetr_pytorch/src/zoo/rtdetr/hybrid_encoder.py",
)
_CLS = add_note(
    "Sincos2dClsRow",
    "Functionality",
    "MAE's table has a zero row for the cls token before the H W patch rows.",
    "https://github.com/facebookresearch/mae/blob/main/util/pos_embed.py",
)


def _sincos_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("temperature", 10000.0)
    inputs.setdefault("convention", "rt_detr")
    inputs.setdefault("cls_token", False)
    for name in ("h_positions", "w_positions"):
        if not isinstance(inputs[name], F):
            inputs[name] = I(inputs[name])
    case(f"sincos_2d/{id}", comment, flags, error, **inputs)


_sincos_case(
    "rt_detr/3x5",
    "A 3 x 5 grid, D = 8: rows h-major, [sin h | cos h | sin w | cos w].",
    ("Basic", _SINCOS),
    h_positions=list(range(3)),
    w_positions=list(range(5)),
    dim=8,
)
_sincos_case(
    "rt_detr/2x1-d256",
    "RT-DETR's D = 256 (64 frequencies down to 10000**(-63/64)) on a 2 x 1 feature map.",
    _SINCOS,
    h_positions=list(range(2)),
    w_positions=list(range(1)),
    dim=256,
)
_sincos_case(
    "rt_detr/block-offset",
    "Rows 40 .. 43, columns 60 .. 65 of a larger grid, D = 8, T = 100.",
    (_SINCOS, "KVCacheOffset"),
    h_positions=list(range(40, 44)),
    w_positions=list(range(60, 66)),
    dim=8,
    temperature=100.0,
)
_sincos_case(
    "vit_mae/4x4-cls",
    "ViT-MAE: a 4 x 4 grid with the cls row, D = 16, halves swapped.",
    (_MAE, _CLS),
    h_positions=list(range(4)),
    w_positions=list(range(4)),
    dim=16,
    convention="vit_mae",
    cls_token=True,
)
_sincos_case(
    "vit_mae/2x6",
    "ViT-MAE's [w | h] on a non-square 2 x 6 grid, D = 8.",
    (_MAE, _SINCOS),
    h_positions=list(range(2)),
    w_positions=list(range(6)),
    dim=8,
    convention="vit_mae",
)
_sincos_case(
    "rt_detr/cls",
    "The cls zero row with rt_detr's order, 2 x 3, D = 4.",
    (_CLS, _SINCOS),
    h_positions=list(range(2)),
    w_positions=list(range(3)),
    dim=4,
    cls_token=True,
)
_sincos_case(
    "omdet_turbo/3x5",
    "OmDet-Turbo's w-major rows on a 3 x 5 grid (height 3, width 5), D = 8.",
    _OMDET,
    h_positions=list(range(3)),
    w_positions=list(range(5)),
    dim=8,
    convention="omdet_turbo",
)
_sincos_case(
    "omdet_turbo/7x2",
    "OmDet-Turbo's order on a tall 7 x 2 grid, D = 8.",
    _OMDET,
    h_positions=list(range(7)),
    w_positions=list(range(2)),
    dim=8,
    convention="omdet_turbo",
)
for _name, _why, _kw, _error in [
    ("dim-6", "D must be a multiple of 4.", {"dim": 6}, ("ValueError", "dim")),
    ("convention", "Unknown convention name.", {"convention": "mae"}, ("ValueError", "convention")),
    (
        "float-positions",
        "Positions must be integers.",
        {"h_positions": F([0.0, 1.0])},
        ("TypeError", "h_positions"),
    ),
]:
    _sincos_case(
        f"invalid/{_name}",
        _why,
        (),
        _error,
        **{"h_positions": [0, 1], "w_positions": [0, 1, 2], "dim": 8, **_kw},
    )
