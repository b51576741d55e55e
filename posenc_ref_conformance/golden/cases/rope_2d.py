"""2-D RoPE tables of vision encoders: declaration and cases of ``rope_2d_cos_sin``.

Pixtral, Gemma 4 vision and DINOv3 each rotate a patch by its row and column,
with their own frequencies and channel layout; every grid here is non-square so
a swapped row/column axis shows.  Positions are a ``"float"`` input: patch
indices (integers, exact in float32) for Pixtral and Gemma 4, patch-centre
coordinates in ``[-1, 1]`` (dyadic rationals) for DINOv3.
"""

from __future__ import annotations

import math
from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, flatten, tol
from ..notes import add_note
from ._common import F, case

# --- declaration ---------------------------------------------------------------------------------


def _rope_2d(inp: dict[str, Any]) -> dict[str, Any]:
    rows, cols = inp["positions"]
    batched = isinstance(rows[0], list)
    kw = {"head_dim": inp["head_dim"], "base": inp["base"], "convention": inp["convention"]}
    if not batched:
        cos, sin = oracle.rope_2d.rope_2d_cos_sin(rows, cols, **kw)
        return {"cos": cos, "sin": sin}
    tables = [oracle.rope_2d.rope_2d_cos_sin(r, c, **kw) for r, c in zip(rows, cols, strict=True)]
    return {"cos": [t[0] for t in tables], "sin": [t[1] for t in tables]}


def _rope_2d_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """An angle ``s c w`` (``s`` 1 or 2 pi, ``c`` the coordinate, ``w = base**(-e)``) in the run's dtype.

    The exponent ``e = 4k/D`` (or ``(4k+2)/D``) is exact for a power-of-two ``D``
    and otherwise one rounding, or two where it is ``k`` times a rounded step
    (DINOv3's ``arange(0, 1, 4/D)``): ``2 e u`` relative, which ``pow`` multiplies by
    ``ln(base)``, plus ``2 u`` for ``pow`` and the reciprocal.  The coordinate is
    exact (Llama 4 adds 1 to it, exactly); ``2 pi`` and the two products round three
    times.  So the angle ``a`` errs by ``a (2 ln(base) + 5) u`` at most, its cosine and sine by that plus
    the ``u`` of their own rounding and the ``u`` of a final cast:
    ``atol = u (a_max (2 ln(base) + 6) + 4)`` (``a_max`` the largest angle), rtol 4u.
    """
    a_max = max((abs(float(p)) for p in flatten(inp["positions"])), default=0.0)
    if inp["convention"] == "llama4_vision":  # positions + 1
        a_max += 1
    if inp["convention"] == "dinov3":
        a_max *= 2 * math.pi
    slope = 2 * math.log(max(inp["base"], math.e)) + 6
    return tol(
        atol64=EPS64 * (a_max * slope + 4),
        rtol64=4 * EPS64,
        ulp64=4,
        atol32=EPS32 * (a_max * slope + 4),
        rtol32=4 * EPS32,
        ulp32=4,
    )


declare(
    FunctionSpec(
        "rope_2d_cos_sin",
        "rope",
        "rope_2d_cos_sin(positions[2, ..., L], head_dim, base, convention) -> (cos, sin)[..., L, head_dim]: "
        "pixtral [y w_even | x w_odd] x2, gemma4_vision [y w | y w | x w | x w], dinov3 2 pi [y w | x w] x2, "
        "llama4_vision [(x+1) w | (y+1) w] pairwise, sam2 [x w | y w] pairwise, "
        "kimi_k25 [x w_0, y w_0, x w_1, ...] x2",
        {
            "positions": (
                "float",
                "float64 [2, L] or [2, B, L]: (row, column) indices, or DINOv3 coordinates",
            ),
            "head_dim": ("int", "channels per head, a multiple of 4"),
            "base": ("number", "rope_theta (Pixtral 10000, Gemma 4 vision 100, DINOv3 100, Llama 4 10000)"),
            "convention": ("string", "pixtral | gemma4_vision | dinov3 | llama4_vision | sam2 | kimi_k25"),
        },
        {"cos": "float", "sin": "float"},
        _rope_2d,
        positional=2,
        takes_dtype=True,
        case_tolerances=_rope_2d_tol,
    )
)

# --- notes ---------------------------------------------------------------------------------------

Pixtral2d = add_note(
    "Rope2dPixtral",
    "ConventionMismatch",
    "Pixtral's 2-D RoPE takes the frequencies base**(-2k/D) of the whole head and gives the even ones to "
    "rows and the odd ones to columns ([y w_0, y w_2, ... | x w_1, x w_3, ...], then duplicated): the "
    "Qwen2-VL axial layout (both axes the same D/4 frequencies) or rows and columns swapped differ from "
    "the second slot on.",
    "https://arxiv.org/abs/2410.07073",
    "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/pixtral/modeling_pixtral.py",
)
Gemma4Vision2d = add_note(
    "Rope2dGemma4Vision",
    "ConventionMismatch",
    "Gemma 4's vision tower lays its table out as [cos y w | cos y w | cos x w | cos x w] (w = "
    "base**(-4k/D)) and rotates each half of the head on its own (apply_multidimensional_rope): one "
    "half-layout rotation over the whole head with [y w | x w] duplicated pairs channel i with i + D/2, "
    "mixing a row channel with a column channel.",
    "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/gemma4/modeling_gemma4.py",
)
Qwen2Vl2d = add_note(
    "Rope2dQwen2Vl",
    "ConventionMismatch",
    "Qwen2-VL's vision tower (and the towers that copy it) shares D/4 frequencies base**(-4k/D) between "
    "rows and columns and lays the angles out as [y w | x w], duplicated for the half layout: Pixtral's "
    "even/odd split of the full-head frequencies, or the (column, row) order, gives other angles.",
    "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/qwen2_vl/"
    "modeling_qwen2_vl.py",
)
Dinov3Coordinates = add_note(
    "Rope2dDinov3",
    "ConventionMismatch",
    "DINOv3 rotates by continuous patch-centre coordinates in [-1, 1] (2 (i + 1/2)/n - 1 per axis), angles "
    "2 pi c / base**(4k/D): integer patch indices, a missing 2 pi, or corner coordinates i/n give other "
    "angles everywhere.",
    "https://arxiv.org/abs/2508.10104",
    "https://github.com/facebookresearch/dinov3/blob/main/dinov3/layers/rope_position_encoding.py",
)
Llama4Vision2d = add_note(
    "Rope2dLlama4Vision",
    "ConventionMismatch",
    "Llama 4's vision encoder numbers patches from 1 ((x + 1, y + 1)), puts the column angles first and "
    "rotates interleaved complex pairs, with frequencies base**(-4k/D); its cls token gets angle 0 on every "
    "pair (given here as position (-1, -1)).  Positions from 0, rows first, or a half-layout table differ.",
    "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/llama4/modeling_llama4.py",
)
Sam2Memory2d = add_note(
    "Rope2dSam2",
    "ConventionMismatch",
    "SAM 2's memory attention builds its position ids as [w, h] and rotates interleaved pairs by "
    "[x w | y w] (w = base**(-4k/D)), columns first from 0: a [h, w] reading or the half layout swaps "
    "or mixes the axes.",
    "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/sam2_video/"
    "modeling_sam2_video.py",
)
Kimi2d = add_note(
    "Rope2dKimi",
    "ConventionMismatch",
    "Kimi-K2.5's vision tower gives each frequency a (column, row) slot pair, [x w_0, y w_0, x w_1, y w_1, "
    "...] duplicated for the half layout (w = base**(-4k/D)): the Qwen2-VL block layout [y w | x w] or the "
    "(row, column) order puts the axes on other channels.",
    "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/kimi_k25/"
    "modeling_kimi_k25.py",
)
NonSquareGrid = add_note(
    "Rope2dNonSquareGrid",
    "ConventionMismatch",
    "A grid with more columns than rows (or the reverse): on a square grid a row/column swap is only a "
    "transposition of the token order, here it changes the values.",
)


def _grid(h: int, w: int) -> list[list[int]]:
    return [[r for r in range(h) for _ in range(w)], [c for _ in range(h) for c in range(w)]]


def _centres(h: int, w: int) -> list[list[float]]:
    ys = [(2 * i + 1) / h - 1 for i in range(h)]
    xs = [(2 * j + 1) / w - 1 for j in range(w)]
    return [[y for y in ys for _ in xs], [x for _ in ys for x in xs]]


def _as_float(ids: Any) -> Any:
    return [_as_float(v) for v in ids] if isinstance(ids, list) else float(ids)


_WITH_CLS = [[*row, -1] for row in _grid(2, 4)]  # the cls token last, as Llama 4 orders it
_TWO_IMAGES = [a + b for a, b in zip(_grid(2, 1), _grid(1, 3), strict=True)]
_SHIFTED = [[v * 1.5 + 0.125 for v in row] for row in _centres(2, 4)]  # DINOv3's train-time augmentation
_BATCHED = [[row, [v / 2 for v in row]] for row in _centres(1, 4)]  # [2, B=2, L]

for _id, _why, _flags, _positions, _dim, _base, _convention in [
    ("pixtral/grid-2x3", "A 2 x 3 patch grid, D = 16, base 10000.", (Pixtral2d, NonSquareGrid),
     _grid(2, 3), 16, 10000.0, "pixtral"),
    ("pixtral/grid-1x3-d32", "A 1 x 3 grid, D = 32.", (Pixtral2d, NonSquareGrid), _grid(1, 3), 32, 10000.0,
     "pixtral"),
    ("pixtral/two-images", "A 2 x 1 and a 1 x 3 image in one sequence, each numbered from (0, 0).",
     (Pixtral2d, NonSquareGrid), _TWO_IMAGES, 16, 10000.0, "pixtral"),
    ("qwen2_vl/grid-2x3", "A 2 x 3 patch grid, D = 16, base 10000.", (Qwen2Vl2d, NonSquareGrid),
     _grid(2, 3), 16, 10000.0, "qwen2_vl"),
    ("qwen2_vl/grid-3x2-d32", "A 3 x 2 grid, D = 32 (Qwen2-VL's vision head is 80).",
     (Qwen2Vl2d, NonSquareGrid), _grid(3, 2), 32, 10000.0, "qwen2_vl"),
    ("gemma4_vision/grid-2x3", "A 2 x 3 grid, D = 16, base 100.", (Gemma4Vision2d, NonSquareGrid),
     _grid(2, 3), 16, 100.0, "gemma4_vision"),
    ("gemma4_vision/grid-3x1-d32", "A 3 x 1 grid, D = 32, base 100.", (Gemma4Vision2d, NonSquareGrid),
     _grid(3, 1), 32, 100.0, "gemma4_vision"),
    ("dinov3/centres-2x4", "Patch centres of a 2 x 4 grid, D = 16, base 100.",
     (Dinov3Coordinates, NonSquareGrid), _centres(2, 4), 16, 100.0, "dinov3"),
    ("dinov3/centres-1x4-d32", "Patch centres of a 1 x 4 grid, D = 32.",
     (Dinov3Coordinates, NonSquareGrid), _centres(1, 4), 32, 100.0, "dinov3"),
    ("dinov3/augmented", "2 x 4 centres jittered by 1.5 and shifted by 1/8 (train time); |c| up to 1.25.",
     (Dinov3Coordinates,), _SHIFTED, 16, 100.0, "dinov3"),
    ("llama4_vision/grid-2x4-cls", "A 2 x 4 grid, then the cls token (-1, -1), D = 16.",
     (Llama4Vision2d, NonSquareGrid), _WITH_CLS, 16, 10000.0, "llama4_vision"),
    ("llama4_vision/grid-3x1-d32", "A 3 x 1 grid, D = 32.", (Llama4Vision2d, NonSquareGrid), _grid(3, 1), 32,
     10000.0, "llama4_vision"),
    ("sam2/grid-2x3", "A 2 x 3 memory feature grid, D = 16, base 10000.", (Sam2Memory2d, NonSquareGrid),
     _grid(2, 3), 16, 10000.0, "sam2"),
    ("sam2/grid-1x4-repeated", "A 1 x 4 grid twice (keys of two memory frames: repeat_freqs_k), D = 16.",
     (Sam2Memory2d, NonSquareGrid), [r * 2 for r in _grid(1, 4)], 16, 10000.0, "sam2"),
    ("kimi_k25/grid-2x3", "A 2 x 3 grid, D = 16, base 10000.", (Kimi2d, NonSquareGrid), _grid(2, 3), 16,
     10000.0, "kimi_k25"),
    ("kimi_k25/grid-3x1-d32", "A 3 x 1 grid, D = 32.", (Kimi2d, NonSquareGrid), _grid(3, 1), 32, 10000.0,
     "kimi_k25"),
    ("dinov3/batched", "Two coordinate sets [2, B=2, L]: 1 x 4 centres and the centres halved.",
     (Dinov3Coordinates,), _BATCHED, 16, 100.0, "dinov3"),
]:  # fmt: skip
    case(
        f"rope_2d_cos_sin/{_id}",
        _why,
        _flags,
        positions=F(_as_float(_positions)),
        head_dim=_dim,
        base=_base,
        convention=_convention,
    )

for _id, _why, _error, _positions, _dim, _base, _convention in [
    ("invalid-head-dim", "head_dim 6 is not a multiple of 4 (D/4 pairs per axis).", "head_dim",
     _grid(2, 3), 6, 10000.0, "pixtral"),
    ("invalid-axes", "positions [3, L]: three axes, not (row, column).", "positions",
     [*_grid(2, 3), [0] * 6], 16, 10000.0, "pixtral"),
    ("invalid-convention", "convention 'axial' names several layouts (Qwen2-VL's, Pixtral's, Gemma 4's).",
     "convention", _grid(2, 3), 16, 10000.0, "axial"),
    ("invalid-base", "base 0: no frequencies.", "base", _centres(2, 4), 16, 0.0, "dinov3"),
]:  # fmt: skip
    case(
        f"rope_2d_cos_sin/{_id}",
        _why,
        (),
        ("ValueError", _error),
        positions=F(_as_float(_positions)),
        head_dim=_dim,
        base=_base,
        convention=_convention,
    )
