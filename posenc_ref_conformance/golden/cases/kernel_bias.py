"""Distance-kernel biases: declarations and cases of Sandwich (NeMo) and KERPLE (log and power kernels)."""

from __future__ import annotations

import math
from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, max_abs, per_batch, tol
from ..notes import add_note
from ._common import F, I, case

# --- declarations ------------------------------------------------------------------------------


def _max_distance(inp: dict[str, Any]) -> int:
    def rows(q: Any, k: Any) -> int:
        return max(abs(b - a) for a in q for b in k)

    pairs: list[int] = []
    per_batch(inp["q_positions"], inp["k_positions"], lambda q, k: pairs.append(rows(q, k)))
    return max(pairs)


def _sandwich(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {"num_heads": inp["num_heads"], "dim": inp["dim"], "base": inp["base"]}
    return {
        "bias": per_batch(
            inp["q_positions"], inp["k_positions"], lambda q, k: oracle.kernel_bias.sandwich_bias(q, k, **kw)
        )
    }


def _sandwich_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """A plain evaluation in the run's dtype (unit roundoff u), term by term.

    Frequencies base**(-2k/d) by pow: relative error up to (ln(base) + 4) u (the rounded exponent 2k/d
    is multiplied by ln(base)).  Each angle r theta_k then errs by up to r theta_k (ln(base) + 5) u and
    its cosine by that plus u; the sum of d/2 terms of magnitude <= 1 adds (d/2)**2 u, subtracting
    d/2 and the division by 8h/H a few more.  The output is that sum times H/(8h) <= H/8:
    atol = H/8 u (sum_k r theta_k (ln(base) + 5) + (d/2)**2 + 4 d/2), rtol 4u.
    """
    half, heads, r = inp["dim"] // 2, inp["num_heads"], _max_distance(inp)
    base = inp["base"]
    angles = sum(r * base ** (-2.0 * k / inp["dim"]) for k in range(1, half + 1)) * (math.log(base) + 5)
    scale = heads / 8 * (angles + half * half + 4 * half)
    return tol(
        atol64=scale * EPS64, rtol64=4 * EPS64, ulp64=4, atol32=scale * EPS32, rtol32=4 * EPS32, ulp32=4
    )


def _kerple(inp: dict[str, Any]) -> dict[str, Any]:
    r1, r2, kind = inp["r1"], inp["r2"], inp["kind"]
    return {
        "bias": per_batch(
            inp["q_positions"],
            inp["k_positions"],
            lambda q, k: oracle.kernel_bias.kerple_bias(q, k, r1, r2, kind=kind),
        )
    }


def _kerple_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """log: log(1 + r2 d) with 1 + r2 d rounded first errs by u absolute, so atol 2u max r1, rtol 4u.

    power: d**r2 as exp(r2 ln d) errs by (|r2| ln d + 2) u relative; times r1 one more: rtol
    (2 max|r2| ln(max d) + 4) u.
    """
    if inp["kind"] == "log":
        a = 2 * max_abs(inp["r1"])
        return tol(atol64=a * EPS64, rtol64=4 * EPS64, ulp64=4, atol32=a * EPS32, rtol32=4 * EPS32, ulp32=4)
    rel = 2 * max_abs(inp["r2"]) * math.log(max(_max_distance(inp), 1)) + 4
    return tol(rtol64=rel * EPS64, ulp64=4, rtol32=rel * EPS32, ulp32=4)


_POSITIONS = {
    "q_positions": ("positions", "int64 [..., Lq]"),
    "k_positions": ("positions", "int64 [..., Lk]"),
}

declare(
    FunctionSpec(
        "sandwich_bias",
        "kernel_bias",
        "sandwich_bias(q_positions[..., Lq], k_positions[..., Lk], num_heads, dim, base) -> "
        "bias[..., H, Lq, Lk] "
        "= (sum_{k=1}^{d/2} cos((k_j - q_i) base**(-2k/d)) - d/2) / (8h/H)",
        {
            **_POSITIONS,
            "num_heads": ("int", "int"),
            "dim": ("int", "even width d of the kernel (NeMo's hidden_size per head)"),
            "base": ("number", "number"),
        },
        {"bias": "float"},
        _sandwich,
        positional=2,
        takes_dtype=True,
        case_tolerances=_sandwich_tol,
    )
)
declare(
    FunctionSpec(
        "kerple_bias",
        "kernel_bias",
        "kerple_bias(q_positions[..., Lq], k_positions[..., Lk], r1[H], r2[H], kind) -> "
        "bias[..., H, Lq, Lk]: "
        "log -r1 ln(1 + r2 |d|), power -r1 |d|**r2",
        {
            **_POSITIONS,
            "r1": ("float", "float64 [H] (the factor in front)"),
            "r2": ("float", "float64 [H] (inside the kernel)"),
            "kind": ("string", "log | power"),
        },
        {"bias": "float"},
        _kerple,
        positional=4,
        cast_inputs=("r1", "r2"),
        case_tolerances=_kerple_tol,
    )
)


def _positions(inputs: dict[str, Any]) -> None:
    for name in ("q_positions", "k_positions"):
        if not isinstance(inputs[name], F):
            inputs[name] = I(inputs[name])


# --- Sandwich -------------------------------------------------------------------------------------

_SANDWICH = add_note(
    "SandwichKernel",
    "ConventionMismatch",
    "NeMo's Sandwich bias sums cos(r / base**(2k/d)) over k = 1 .. d/2 (the arange starts at 1, not at "
    "RoPE's 0), subtracts d/2 and divides head h = 1..H by 8h/H: a frequency set shifted by one or a "
    "head scale 8h/H inverted changes every entry.",
    "https://arxiv.org/abs/2212.10356",
    "https://github.com/NVIDIA/NeMo/blob/main/nemo/collections/nlp/modules/common/megatron/position_embedding/"
    "sandwich_relative_position_embedding.py",
)


def _sandwich_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("base", 10000.0)
    _positions(inputs)
    case(f"sandwich_bias/{id}", comment, flags, error, **inputs)


_sandwich_case(
    "square/4-heads-d8",
    "8 x 8, 4 heads, d = 8: zero on the diagonal, symmetric, non-positive.",
    ("Basic", _SANDWICH),
    q_positions=list(range(8)),
    k_positions=list(range(8)),
    num_heads=4,
    dim=8,
)
_sandwich_case(
    "square/12-heads-d64",
    "12 heads of width 64 (a NeMo GPT layout), 10 x 10.",
    _SANDWICH,
    q_positions=list(range(10)),
    k_positions=list(range(10)),
    num_heads=12,
    dim=64,
)
_sandwich_case(
    "decode/step",
    "One query at 20 over keys 0..20.",
    (_SANDWICH, "KVCacheOffset"),
    q_positions=[20],
    k_positions=list(range(21)),
    num_heads=4,
    dim=16,
)
_sandwich_case(
    "block/of-65536",
    "A 4 x 16 block far into a 65536-token sequence.",
    (_SANDWICH, "BlockOfLargeBias"),
    q_positions=list(range(65000, 65004)),
    k_positions=list(range(64990, 65006)),
    num_heads=2,
    dim=8,
)
_sandwich_case(
    "batched/offsets",
    "Per-batch positions [2, 3] and [2, 4].",
    "BatchedPositions",
    q_positions=[[0, 1, 2], [100, 101, 102]],
    k_positions=[[0, 1, 2, 3], [99, 100, 101, 102]],
    num_heads=3,
    dim=6,
)
_sandwich_case(
    "square/base-500-d2",
    "d = 2 (one frequency, 1/base) and base 500.",
    _SANDWICH,
    q_positions=list(range(6)),
    k_positions=list(range(6)),
    num_heads=2,
    dim=2,
    base=500.0,
)
for _name, _kw, _error in [
    ("odd-dim", {"dim": 7, "num_heads": 4}, ("ValueError", "dim")),
    ("zero-heads", {"dim": 8, "num_heads": 0}, ("ValueError", "num_heads")),
    ("base-1", {"dim": 8, "num_heads": 4, "base": 1.0}, ("ValueError", "base")),
]:
    _sandwich_case(
        f"invalid/{_name}",
        f"{_error[1]} out of range.",
        (),
        _error,
        q_positions=[0],
        k_positions=[0, 1],
        **_kw,
    )
_sandwich_case(
    "invalid/float-positions",
    "Positions must be integers.",
    (),
    ("TypeError", "q_positions"),
    q_positions=F([0.0, 1.0]),
    k_positions=[0, 1],
    num_heads=4,
    dim=8,
)

# --- KERPLE ---------------------------------------------------------------------------------------

_LOG = add_note(
    "KerpleLog",
    "ConventionMismatch",
    "KERPLE's log kernel -r1 ln(1 + r2 |d|) (ParallelKerpleLog: r1 = bias_p, r2 = bias_a): swapping the "
    "two parameters, or dropping the minus sign, still gives a Toeplitz bias that looks plausible.",
    "https://arxiv.org/abs/2205.09921",
    "https://github.com/chijames/KERPLE/blob/main/megatron/mpu/layers.py",
)
_POWER = add_note(
    "KerplePower",
    "ConventionMismatch",
    "KERPLE's power kernel -r1 |d|**r2 (ParallelKerplePower: r1 = bias_a, r2 = bias_p, 0 < r2 <= 2); r2 = 1 "
    "is ALiBi with slope r1.",
    "https://arxiv.org/abs/2205.09921",
    "https://github.com/chijames/KERPLE/blob/main/megatron/mpu/layers.py",
)
_R1 = [0.5, 1.25, 2.0, 0.0625]
_R2_LOG = [0.25, 1.0, 0.03125, 1.5]
_R2_POW = [0.5, 1.0, 1.75, 2.0]


def _kerple_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    _positions(inputs)
    for name in ("r1", "r2"):
        inputs[name] = F(inputs[name])
    case(f"kerple_bias/{id}", comment, flags, error, **inputs)


for _kind, _r2, _flag in (("log", _R2_LOG, _LOG), ("power", _R2_POW, _POWER)):
    _kerple_case(
        f"{_kind}/square",
        f"7 x 7, 4 heads, the {_kind} kernel.",
        ("Basic", _flag),
        q_positions=list(range(7)),
        k_positions=list(range(7)),
        r1=_R1,
        r2=_r2,
        kind=_kind,
    )
    _kerple_case(
        f"{_kind}/decode-step",
        "One query at 30 over keys 0..31 (key 31 after the query).",
        (_flag, "KVCacheOffset"),
        q_positions=[30],
        k_positions=list(range(32)),
        r1=_R1,
        r2=_r2,
        kind=_kind,
    )
    _kerple_case(
        f"{_kind}/block-of-65536",
        "A 3 x 10 block far into a 65536-token sequence.",
        (_flag, "BlockOfLargeBias"),
        q_positions=list(range(65530, 65533)),
        k_positions=list(range(65500, 65540, 4)),
        r1=_R1[:2],
        r2=_r2[:2],
        kind=_kind,
    )
_kerple_case(
    "power/batched",
    "Per-batch positions [2, 4] and [2, 4], two heads.",
    (_POWER, "BatchedPositions"),
    q_positions=[[0, 1, 2, 3], [50, 51, 52, 53]],
    k_positions=[[0, 1, 2, 3], [50, 51, 52, 53]],
    r1=[0.75, 3.0],
    r2=[0.25, 1.5],
    kind="power",
)
for _name, _why, _kw, _error in [
    ("kind", "Unknown kernel name.", {"kind": "gaussian"}, ("ValueError", "kind")),
    ("shapes", "r1 and r2 must have one value per head each.", {"r1": [1.0, 2.0]}, ("ValueError", "r2")),
    (
        "float-positions",
        "Positions must be integers.",
        {"q_positions": F([0.0])},
        ("TypeError", "q_positions"),
    ),
]:
    _kerple_case(
        f"invalid/{_name}",
        _why,
        (),
        _error,
        **{"q_positions": [0], "k_positions": [0, 1], "r1": [1.0], "r2": [1.0], "kind": "log", **_kw},
    )
