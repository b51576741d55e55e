"""ALiBi: declarations and cases of the slopes, the bias for given slopes, from a head count, from a mask."""

from __future__ import annotations

from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, shape_of, tol
from ..notes import add_note
from ._common import RUN_2E24, B, ConsecutiveRun, F, I, case

# --- declarations ------------------------------------------------------------------------------


def _alibi_slopes(inp: dict[str, Any]) -> dict[str, Any]:
    return {"slopes": oracle.alibi.alibi_slopes(inp["num_heads"], max_bias=inp["max_bias"])}


def _alibi_slopes_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    # The original computes start * start**i (BLOOM: torch.pow of a float32 base): the rounding of the
    # base is raised to the power i, so up to ~i ulp from the exact 2**(-8(i+1)/n), in either dtype.
    heads = inp["num_heads"]
    return tol(rtol64=(heads + 4) * EPS64, ulp64=4, rtol32=(heads + 4) * EPS32, ulp32=4)


def _alibi_bias(inp: dict[str, Any]) -> dict[str, Any]:
    return {
        "bias": oracle.alibi.alibi_bias(
            inp["q_positions"], inp["k_positions"], inp["slopes"], form=inp["form"]
        )
    }


def _span(inp: dict[str, Any]) -> int:
    """The largest |position| + 1: what a row form's per-row constant m q (or m (L - 1)) can reach."""
    return max(abs(p) for p in inp["q_positions"] + inp["k_positions"]) + 1


def _bias_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance | None:
    """Tolerance of causal cases (symmetric ones: the file's); slopes cast to the run's dtype, times d.

    float64: the slopes are exact, so one rounding of the product (2 ulp / 2 eps allowed).  float32:
    the cast rounds m (relative u = 2**-24) and the product rounds again, so an element is within
    (2u + u**2) |m d| of the exact m d: rtol 3u, 3 ulp.  Causal row forms (m k, m (k - L + 1)) are
    compared after removing the row constant, so the error of the constant (up to m * span, the
    same two roundings) adds: atol 4u m span in float64, 5u m span in float32 (the cast's rounding of
    m enters the constant and the element alike).
    """
    if inp["form"] != "causal":
        return None
    m = max(abs(s) for s in inp["slopes"]) * _span(inp)
    return tol(
        atol64=4 * EPS64 * m, rtol64=2 * EPS64, ulp64=2, atol32=5 * EPS32 * m, rtol32=3 * EPS32, ulp32=3
    )


def _from_heads(inp: dict[str, Any]) -> dict[str, Any]:
    slopes = oracle.alibi.alibi_slopes(inp["num_heads"], max_bias=inp["max_bias"])
    return {"bias": oracle.alibi.alibi_bias(inp["q_positions"], inp["k_positions"], slopes, form=inp["form"])}


def _own_slopes_tol(heads: int, m_span: float, causal: bool) -> Tolerance:
    """Slopes the implementation derives ((H + 4) eps, as alibi_slopes allows) times d, rounded once more.

    Causal row forms: the row constant carries the same relative error, times m * span.
    """
    r64, r32 = (heads + 6) * EPS64, (heads + 6) * EPS32
    a64, a32 = (2 * r64 * m_span, 2 * r32 * m_span) if causal else (0.0, 0.0)
    return tol(atol64=a64, rtol64=r64, ulp64=4, atol32=a32, rtol32=r32, ulp32=4)


def _from_heads_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    m = float(oracle.alibi.alibi_slopes(inp["num_heads"], max_bias=inp["max_bias"])[0]) * _span(inp)
    return _own_slopes_tol(inp["num_heads"], m, inp["form"] == "causal")


def _from_mask(inp: dict[str, Any]) -> dict[str, Any]:
    def walk(mask: Any) -> Any:
        if len(shape_of(mask)) == 1:
            return oracle.alibi.alibi_bias_from_mask(
                mask, num_heads=inp["num_heads"], max_bias=inp["max_bias"]
            )
        return [walk(row) for row in mask]

    return {"bias": walk(inp["mask"])}


def _from_mask_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    return _own_slopes_tol(inp["num_heads"], 0.0, causal=False)


_POSITIONS = {"q_positions": ("positions", "int64 [Lq]"), "k_positions": ("positions", "int64 [Lk]")}
_FORM = ("string", "symmetric | causal")

declare(
    FunctionSpec(
        "alibi_slopes",
        "alibi",
        "alibi_slopes(num_heads, max_bias) -> slopes[num_heads]",
        {"num_heads": ("int", "int"), "max_bias": ("number", "number")},
        {"slopes": "float"},
        _alibi_slopes,
        positional=1,
        takes_dtype=True,
        case_tolerances=_alibi_slopes_tol,
    )
)
declare(
    FunctionSpec(
        "alibi_bias",
        "alibi",
        "alibi_bias(q_positions[Lq], k_positions[Lk], slopes[H], form) -> bias[H, Lq, Lk]",
        {**_POSITIONS, "slopes": ("float", "float64 [H]"), "form": _FORM},
        {"bias": "float"},
        _alibi_bias,
        positional=3,
        options={"form": "alibi_forms"},
        cast_inputs=("slopes",),
        tolerances=tol(rtol64=2 * EPS64, ulp64=2, rtol32=3 * EPS32, ulp32=3),  # see _bias_tol
        case_tolerances=_bias_tol,
    )
)
declare(
    FunctionSpec(
        "alibi_bias_from_heads",
        "alibi",
        "alibi_bias_from_heads(q_positions[Lq], k_positions[Lk], num_heads, max_bias, form) -> "
        "bias[H, Lq, Lk] "
        "with the implementation's own slopes (BLOOM, MPT, MLX nn.ALiBi, keras-hub AlibiBias)",
        {**_POSITIONS, "num_heads": ("int", "int"), "max_bias": ("number", "number"), "form": _FORM},
        {"bias": "float"},
        _from_heads,
        positional=2,
        takes_dtype=True,
        options={"form": "alibi_forms"},
        case_tolerances=_from_heads_tol,
    )
)
declare(
    FunctionSpec(
        "alibi_bias_from_mask",
        "alibi",
        "alibi_bias_from_mask(mask[..., L], num_heads, max_bias) -> bias[..., H, 1, L] = "
        "m_h (cumsum(mask) - 1) "
        "mask (HF BLOOM build_alibi_tensor: padding-aware key index, the same in every query row)",
        {
            "mask": ("mask", "bool or int64 [..., L], non-zero = real token"),
            "num_heads": ("int", "int"),
            "max_bias": ("number", "number"),
        },
        {"bias": "float"},
        _from_mask,
        positional=1,
        takes_dtype=True,
        case_tolerances=_from_mask_tol,
    )
)

# --- ALiBi ----------------------------------------------------------------------------------------------

for _h in [1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 40, 112]:
    _pow2 = _h & (_h - 1) == 0
    case(
        f"alibi_slopes/max-bias-8/heads-{_h}",
        f"{_h} heads" + ("" if _pow2 else " (recursion)"),
        ("AlibiSlopeOffByOne",) if _pow2 else ("AlibiNonPowerOfTwo",),
        num_heads=_h,
        max_bias=8.0,
    )
for _h, _mb in [(8, 16.0), (12, 16.0), (6, 4.0)]:
    case(
        f"alibi_slopes/max-bias-{int(_mb)}/heads-{_h}",
        f"MPT alibi_bias_max {_mb}, {_h} heads.",
        "AlibiMaxBias",
        num_heads=_h,
        max_bias=_mb,
    )
case(
    "alibi_slopes/invalid/zero-heads",
    "num_heads must be >= 1.",
    (),
    ("ValueError", "num_heads"),
    num_heads=0,
    max_bias=8.0,
)
case(
    "alibi_slopes/invalid/zero-max-bias",
    "max_bias must be > 0.",
    (),
    ("ValueError", "max_bias"),
    num_heads=8,
    max_bias=0.0,
)

# Slopes as float64 values (the exact slopes rounded once): a float64 library that computes its own
# slopes gets the same ones; a float32 run casts them (see _bias_tol for what the cast costs).
with oracle.working_precision():
    _S4 = [oracle.round_float64(s) for s in oracle.alibi.alibi_slopes(4)]
    _S12 = [oracle.round_float64(s) for s in oracle.alibi.alibi_slopes(12)]
for _form, _cmp, _flag in [
    ("symmetric", None, "AlibiSymmetric"),
    ("causal", "causal_rowshift", "AlibiCausalForm"),
]:
    case(
        f"alibi_bias/{_form}/square-4-heads",
        "5 x 5, 4 heads.",
        ("Basic", _flag),
        compare=_cmp,
        q_positions=I(list(range(5))),
        k_positions=I(list(range(5))),
        slopes=F(_S4),
        form=_form,
    )
    case(
        f"alibi_bias/{_form}/12-heads",
        "12 heads (non-power-of-two slopes).",
        (_flag, "AlibiNonPowerOfTwo"),
        compare=_cmp,
        q_positions=I(list(range(4))),
        k_positions=I(list(range(6))),
        slopes=F(_S12),
        form=_form,
    )
    case(
        f"alibi_bias/{_form}/decode-step",
        "One query at 7 over keys 0..8 (key 8 is in the future).",
        (_flag, "KVCacheOffset"),
        compare=_cmp,
        q_positions=I([7]),
        k_positions=I(list(range(9))),
        slopes=F(_S4),
        form=_form,
    )
    case(
        f"alibi_bias/{_form}/block-of-65536",
        "A 4 x 16 block far into a 65536-token sequence.",
        (_flag, "BlockOfLargeBias"),
        compare=_cmp,
        q_positions=I(list(range(65000, 65004))),
        k_positions=I(list(range(64990, 65006))),
        slopes=F(_S4),
        form=_form,
    )
case(
    "alibi_bias/symmetric/run-2e24",
    "Queries and keys on the consecutive run 2**24 - 2 .. 2**24 + 2: a bias formed as m k - m q "
    "in float32 loses the distances (the causal form's row constant m q is beyond the file's "
    "tolerance bound there).",
    ("AlibiSymmetric", "LargePosition", ConsecutiveRun),
    q_positions=I(RUN_2E24),
    k_positions=I(RUN_2E24),
    slopes=F(_S4),
    form="symmetric",
)
case(
    "alibi_bias/unknown/invalid-form",
    "Unknown form name.",
    (),
    ("ValueError", "form"),
    q_positions=I([0]),
    k_positions=I([0]),
    slopes=F(_S4),
    form="bidirectional",
)


# --- ALiBi with the implementation's own slopes ---------------------------------------------------------

_PADDING = add_note(
    "AlibiPaddingMask",
    "ConventionMismatch",
    "BLOOM's build_alibi_tensor indexes keys by (cumsum(mask) - 1) * mask: real tokens count from 0 at "
    "the first real token, padding gets 0, so a left-padded sequence has the bias of the unpadded one "
    "on its real tokens.  arange(L) as the key index shifts every bias of a left-padded row by m * pads.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/bloom/modeling_bloom.py",
)


def _heads_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("max_bias", 8.0)
    for name in ("q_positions", "k_positions"):
        if not isinstance(inputs[name], F):
            inputs[name] = I(inputs[name])
    compare = "causal_rowshift" if inputs["form"] == "causal" and error is None else None
    case(f"alibi_bias_from_heads/{id}", comment, flags, error, compare=compare, **inputs)


for _form, _flag in (("symmetric", "AlibiSymmetric"), ("causal", "AlibiCausalForm")):
    _heads_case(
        f"{_form}/square-8-heads",
        "6 x 6, 8 heads: slopes 2**-1 .. 2**-8.",
        ("Basic", _flag, "AlibiSlopeOffByOne"),
        q_positions=list(range(6)),
        k_positions=list(range(6)),
        num_heads=8,
        form=_form,
    )
    _heads_case(
        f"{_form}/12-heads",
        "12 heads: the 8-head slopes, then 2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5.",
        (_flag, "AlibiNonPowerOfTwo"),
        q_positions=list(range(5)),
        k_positions=list(range(7)),
        num_heads=12,
        form=_form,
    )
    _heads_case(
        f"{_form}/decode-step",
        "One query at 9 over keys 0..9 (MLX nn.ALiBi's offset; one KV-cache step).",
        (_flag, "KVCacheOffset"),
        q_positions=[9],
        k_positions=list(range(10)),
        num_heads=4,
        form=_form,
    )
    _heads_case(
        f"{_form}/block-of-65536",
        "A 3 x 12 block far into a 65536-token sequence, 6 heads.",
        (_flag, "BlockOfLargeBias", "AlibiNonPowerOfTwo"),
        q_positions=list(range(65530, 65533)),
        k_positions=list(range(65522, 65534)),
        num_heads=6,
        form=_form,
    )
_heads_case(
    "symmetric/run-2e24",
    "Queries and keys on the consecutive run 2**24 - 2 .. 2**24 + 2, 4 heads.",
    ("AlibiSymmetric", "LargePosition", ConsecutiveRun),
    q_positions=RUN_2E24,
    k_positions=RUN_2E24,
    num_heads=4,
    form="symmetric",
)
_heads_case(
    "causal/mpt-max-bias-16",
    "MPT alibi_bias_max 16, 8 heads: slopes 2**-2 .. 2**-16.",
    ("AlibiCausalForm", "AlibiMaxBias"),
    q_positions=list(range(5)),
    k_positions=list(range(5)),
    num_heads=8,
    max_bias=16.0,
    form="causal",
)
_heads_case(
    "symmetric/keras-max-bias-4-heads-12",
    "keras-hub AlibiBias(alibi_bias_max=4), 12 heads (non-power-of-two recursion with max_bias 4).",
    ("AlibiSymmetric", "AlibiMaxBias", "AlibiNonPowerOfTwo"),
    q_positions=list(range(4)),
    k_positions=list(range(4)),
    num_heads=12,
    max_bias=4.0,
    form="symmetric",
)
_heads_case(
    "symmetric/1-head",
    "One head: slope 2**-8, not 1.",
    ("AlibiSymmetric", "AlibiSlopeOffByOne"),
    q_positions=list(range(3)),
    k_positions=list(range(3)),
    num_heads=1,
    form="symmetric",
)
for _name, _why, _kw, _error in [
    ("zero-heads", "num_heads must be >= 1.", {"num_heads": 0}, ("ValueError", "num_heads")),
    (
        "zero-max-bias",
        "max_bias must be > 0 (MPT's alibi_bias_max=0 makes every slope 1).",
        {"max_bias": 0.0, "form": "causal"},
        ("ValueError", "max_bias"),
    ),
    ("form", "Unknown form name.", {"form": "alibi"}, ("ValueError", "form")),
    (
        "float-positions",
        "Positions must be integers.",
        {"q_positions": F([0.0])},
        ("TypeError", "q_positions"),
    ),
]:
    _heads_case(
        f"invalid/{_name}",
        _why,
        (),
        _error,
        **{"q_positions": [0], "k_positions": [0, 1], "num_heads": 4, "form": "symmetric", **_kw},
    )

# --- ALiBi from a padding mask (BLOOM) --------------------------------------------------------------


def _mask_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("max_bias", 8.0)
    case(f"alibi_bias_from_mask/{id}", comment, flags, error, **inputs)


_mask_case(
    "padded/right",
    "Right padding [2, 6]: real tokens 0..3 then two pads (index 0).",
    ("Basic", _PADDING),
    mask=B([[True, True, True, True, False, False], [True] * 6]),
    num_heads=4,
)
_mask_case(
    "padded/left-12-heads",
    "Left padding: the real tokens of row 0 are indexed 0..3, as if unpadded; 12 heads.",
    (_PADDING, "AlibiNonPowerOfTwo"),
    mask=B([[False, False, True, True, True, True], [True] * 6]),
    num_heads=12,
)
_mask_case(
    "padded/int-attention-mask",
    "HF's attention_mask as int64 0/1, a pad between real tokens (packed rows).",
    (_PADDING,),
    mask=I([[0, 1, 1, 0, 1, 1, 1], [1, 1, 1, 1, 1, 0, 0]]),
    num_heads=8,
)
_mask_case(
    "unpadded/1d",
    "No padding, one sequence: m_h * k for keys 0..8.",
    ("Basic", "AlibiSlopeOffByOne"),
    mask=B([True] * 9),
    num_heads=2,
)
_mask_case(
    "padded/batched-3d",
    "A [2, 2, 5] mask (leading axes kept): left and right padding.",
    (_PADDING, "BatchedPositions"),
    mask=B([[[0, 1, 1, 1, 1], [1, 1, 1, 0, 0]], [[1] * 5, [0, 0, 0, 1, 1]]]),
    num_heads=3,
)
_mask_case(
    "invalid/float-mask",
    "The mask must be boolean or integer.",
    (),
    ("TypeError", "mask"),
    mask=F([1.0, 1.0, 0.0]),
    num_heads=4,
)
_mask_case(
    "invalid/zero-heads",
    "num_heads must be >= 1.",
    (),
    ("ValueError", "num_heads"),
    mask=B([True, True]),
    num_heads=0,
)
