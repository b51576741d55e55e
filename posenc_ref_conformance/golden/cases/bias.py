"""NoPE masks, Llama 4's temperature and reference attention: declarations and cases.

T5 is in ``t5.py``, ALiBi in ``alibi.py``, relative positions and Shaw in ``shaw.py``,
Sandwich and KERPLE in ``kernel_bias.py``.
"""

from __future__ import annotations

from typing import Any

from ... import oracle
from ...oracle._numeric import mp
from ..functions import (
    EPS32,
    EPS64,
    FunctionSpec,
    Tolerance,
    declare,
    flatten,
    max_abs,
    reshape,
    shape_of,
    tol,
)
from ..notes import add_note
from ._common import B, F, I, _dyadic, case

# --- declarations ------------------------------------------------------------------------------


def _causal_mask(inp: dict[str, Any]) -> dict[str, Any]:
    return {
        "mask": oracle.attention.causal_mask(
            inp["q_positions"],
            inp["k_positions"],
            sliding_window=inp["sliding_window"],
            chunk_size=inp["chunk_size"],
        )
    }


def _llama4_scale(inp: dict[str, Any]) -> dict[str, Any]:
    flat = oracle.attention.llama4_attention_scale(
        flatten(inp["positions"]),
        floor_scale=inp["floor_scale"],
        attn_scale=inp["attn_scale"],
        convention=inp["convention"],
    )
    return {"scale": reshape(flat, shape_of(inp["positions"]))}


def _attention(inp: dict[str, Any], fully_masked: str = "zero") -> dict[str, Any]:
    q, k, v = inp["q"], inp["k"], inp["v"]
    depth = len(shape_of(q))
    scale = mp.mpf(inp["scale"]) if inp["scale"] is not None else 1 / mp.sqrt(shape_of(q)[-1])

    def walk(qn: Any, kn: Any, vn: Any, d: int) -> Any:
        if d == 2:
            return oracle.attention.attention(
                qn, kn, vn, scale=scale, bias=inp["bias"], mask=inp["mask"], fully_masked=fully_masked
            )
        return [walk(a, b, c, d - 1) for a, b, c in zip(qn, kn, vn, strict=True)]

    return {"out": walk(q, k, v, depth)}


def _attention_uniform(inp: dict[str, Any]) -> dict[str, Any]:
    """HF eager attention: finfo.min on masked logits, so a row with no visible key averages every v."""
    return _attention(inp, fully_masked="uniform")


_FULLY_MASKED = "fully-masked-rows"


def _attention_topic(inp: dict[str, Any]) -> str | None:
    """``fully-masked-rows`` for a case whose mask leaves some query no key (where the variants differ)."""
    mask = inp["mask"]
    return _FULLY_MASKED if mask is not None and not all(any(row) for row in mask) else None


def _attention_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    vmax = max_abs(inp["v"])
    logit = max_abs(inp["q"]) * max_abs(inp["k"]) * shape_of(inp["q"])[-1] + 1
    logit += max_abs(inp["bias"]) if inp["bias"] is not None else 0.0
    return tol(atol64=64 * EPS64 * vmax * logit, ulp64=8, atol32=64 * EPS32 * vmax * logit, ulp32=8)


_POS = "int64 array, any shape"

declare(
    FunctionSpec(
        "causal_mask",
        "nope",
        "causal_mask(q_positions[Lq], k_positions[Lk], sliding_window, chunk_size) -> bool[Lq, Lk]",
        {
            "q_positions": ("positions", "int64 [Lq]"),
            "k_positions": ("positions", "int64 [Lk]"),
            "sliding_window": ("int|null", "int or null"),
            "chunk_size": ("int|null", "int or null"),
        },
        {"mask": "bool"},
        _causal_mask,
        positional=2,
        output_kind="bool",
    )
)
declare(
    FunctionSpec(
        "llama4_attn_scale",
        "nope",
        "llama4_attn_scale(positions, floor_scale, attn_scale, convention) -> scale (positions' shape): "
        "llama4 1 + a ln(floor((p + 1)/F) + 1), mistral 1 + a ln(floor(p/F) + 1), beam (1 + (p + 1)/F)**a",
        {
            "positions": ("positions", _POS),
            "floor_scale": ("number", "number"),
            "attn_scale": ("number", "number"),
            "convention": ("string", "llama4 | mistral (Ministral 3, Mistral 4) | beam"),
        },
        {"scale": "float"},
        _llama4_scale,
        positional=1,
        takes_dtype=True,
        tolerances=tol(rtol64=8 * EPS64, ulp64=8, rtol32=8 * EPS32, ulp32=8),
    )
)
declare(
    FunctionSpec(
        "attention",
        "attention",
        "attention(q[..., Lq, D], k[..., Lk, D], v[..., Lk, Dv], bias[Lq, Lk], mask[Lq, Lk], scale) "
        "-> [..., Lq, Dv]",
        {
            "q": ("float", "float64"),
            "k": ("float", "float64"),
            "v": ("float", "float64"),
            "bias": ("float|null", "float64 [Lq, Lk] or null"),
            "mask": ("bool|null", "bool [Lq, Lk] or null"),
            "scale": ("number|null", "number or null (1/sqrt(D))"),
        },
        {"out": "float"},
        _attention,
        positional=3,
        cast_inputs=("q", "k", "v", "bias"),
        case_tolerances=_attention_tol,
        topic=_attention_topic,
        variants={
            _FULLY_MASKED: lambda c: _attention_uniform if c[_FULLY_MASKED] == "uniform" else _attention
        },
    )
)


# --- NoPE, attention ------------------------------------------------------------------------------------

_MASK = {"sliding_window": None, "chunk_size": None}
case(
    "causal_mask/plain/square",
    "k <= q for 5 positions.",
    ("CausalMask", "Basic"),
    q_positions=I(list(range(5))),
    k_positions=I(list(range(5))),
    **_MASK,
)
case(
    "causal_mask/plain/decode",
    "One query at 6 over keys 0..7.",
    ("CausalMask", "KVCacheOffset"),
    q_positions=I([6]),
    k_positions=I(list(range(8))),
    **_MASK,
)
case(
    "causal_mask/window/3",
    "Sliding window 3: q - k < 3.",
    "CausalMask",
    q_positions=I(list(range(6))),
    k_positions=I(list(range(6))),
    sliding_window=3,
    chunk_size=None,
)
case(
    "causal_mask/chunked/4",
    "Llama 4 chunks of 4.",
    "CausalMask",
    q_positions=I(list(range(10))),
    k_positions=I(list(range(10))),
    sliding_window=None,
    chunk_size=4,
)
case(
    "causal_mask/window/invalid-0",
    "sliding_window must be >= 1.",
    (),
    ("ValueError", "sliding_window"),
    q_positions=I([0]),
    k_positions=I([0]),
    sliding_window=0,
    chunk_size=None,
)
MistralAttnScale = add_note(
    "MistralAttnScale",
    "ConventionMismatch",
    "Mistral's 'llama_4_scaling' (Ministral 3, Mistral 3 / Large 3, Mistral 4: beta, "
    "original_max_position_embeddings) is 1 + beta ln(floor(p / F) + 1): Llama 4's staircase one "
    "position later (p, not p + 1), and 1 at p = 0. Every Mistral implementation (HF "
    "get_llama_4_attn_scale, vLLM _get_llama_4_scaling) reads it so: reading one as the other moves "
    "every step by one position.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/ministral3/modeling_ministral3.py",
)
BeamAttnScale = add_note(
    "BeamAttnScale",
    "ConventionMismatch",
    "Beam's NoPE layers scale the queries by (1 + (p + 1) / 2048) ** 0.1 (a power law in the position, "
    "no floor): a smooth curve from position 0, where Llama 4's staircase is exactly 1 below F.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/beam/modeling_beam.py",
)
case(
    "llama4_attn_scale/defaults/boundaries",
    "Exactly 1 below 8191; steps at 8191, 16383, ...",
    ("NopeTemperature", "Basic"),
    positions=I([0, 8190, 8191, 8192, 16382, 16383, 1_000_000, 2**24 + 1]),
    floor_scale=8192.0,
    attn_scale=0.1,
    convention="llama4",
)
case(
    "llama4_attn_scale/custom/small-floor",
    "floor_scale 4, attn_scale 0.2.",
    "NopeTemperature",
    positions=I([[0, 3, 4], [7, 8, 100]]),
    floor_scale=4.0,
    attn_scale=0.2,
    convention="llama4",
)
case(
    "llama4_attn_scale/invalid/negative",
    "Positions must be non-negative.",
    "DataDependentCheck",
    ("ValueError", "positions"),
    positions=I([-1, 0]),
    floor_scale=8192.0,
    attn_scale=0.1,
    convention="llama4",
)
case(
    "llama4_attn_scale/mistral/ministral3-boundaries",
    "Ministral 3 (F = 16384, beta 0.1): 1 through 16383, steps at 16384, 32768, ... (p, not p + 1).",
    (MistralAttnScale, "NopeTemperature"),
    positions=I([0, 1, 16382, 16383, 16384, 32767, 32768, 1_000_000, 2**24 + 1]),
    floor_scale=16384.0,
    attn_scale=0.1,
    convention="mistral",
)
case(
    "llama4_attn_scale/mistral/mistral4-batched",
    "Mistral 4 (F = 8192): rows of decoding positions around the steps.",
    (MistralAttnScale, "BatchedPositions"),
    positions=I([[8190, 8191, 8192], [16383, 16384, 24576]]),
    floor_scale=8192.0,
    attn_scale=0.1,
    convention="mistral",
)
case(
    "llama4_attn_scale/mistral/small-floor",
    "F = 4, beta 0.2: the staircase of small-floor, one position later.",
    (MistralAttnScale,),
    positions=I([[0, 3, 4], [7, 8, 100]]),
    floor_scale=4.0,
    attn_scale=0.2,
    convention="mistral",
)
case(
    "llama4_attn_scale/beam/f-2048",
    "Beam (F = 2048, 0.1): (1 + (p + 1)/2048)**0.1 from position 0, smooth past 2047.",
    (BeamAttnScale, "NopeTemperature"),
    positions=I([0, 1, 2046, 2047, 2048, 100_000, 1_000_000, 2**24 + 1]),
    floor_scale=2048.0,
    attn_scale=0.1,
    convention="beam",
)
case(
    "llama4_attn_scale/beam/batched",
    "Beam's power law on two rows of positions (a KV-cache block).",
    (BeamAttnScale, "BatchedPositions"),
    positions=I([[0, 5, 9], [4095, 4096, 65535]]),
    floor_scale=2048.0,
    attn_scale=0.1,
    convention="beam",
)
case(
    "llama4_attn_scale/invalid/convention",
    "An unknown convention is refused, naming the parameter.",
    (),
    ("ValueError", "convention"),
    positions=I([0, 1]),
    floor_scale=8192.0,
    attn_scale=0.1,
    convention="mistral3",
)
_Q, _K, _V = _dyadic(41, (3, 4), denominator=32), _dyadic(42, (5, 4), denominator=32), _dyadic(43, (5, 3))
_CAUSAL = [[k <= q + 2 for k in range(5)] for q in range(3)]
case(
    "attention/plain/basic",
    "softmax(q k^T / 2) v.",
    ("Basic",),
    q=F(_Q),
    k=F(_K),
    v=F(_V),
    bias=None,
    mask=None,
    scale=None,
)
case(
    "attention/plain/t5-scale-1",
    "T5: scale 1.0 (no 1/sqrt(d)).",
    (),
    q=F(_Q),
    k=F(_K),
    v=F(_V),
    bias=None,
    mask=None,
    scale=1.0,
)
with oracle.working_precision():
    _ALIBI = [
        [oracle.round_float64(b) for b in row]
        for row in oracle.alibi.alibi_bias([2, 3, 4], list(range(5)), [0.25], form="symmetric")[0]
    ]
case(
    "attention/bias/alibi",
    "A symmetric ALiBi bias (slope 1/4).",
    ("AlibiSymmetric",),
    q=F(_Q),
    k=F(_K),
    v=F(_V),
    bias=F(_ALIBI),
    mask=None,
    scale=None,
)
case(
    "attention/mask/causal",
    "Causal mask for queries at 2..4 over keys 0..4.",
    ("CausalMask",),
    q=F(_Q),
    k=F(_K),
    v=F(_V),
    bias=None,
    mask=B(_CAUSAL),
    scale=None,
)
_UNIFORM = add_note(
    "UniformMaskedRows",
    "ConventionMismatch",
    "HF's eager attention adds finfo(dtype).min where a key is masked (eager_mask), so a query row with "
    "every key masked has equal logits and softmax gives each key 1/Lk: the row is the mean of v, where "
    "the reference (and torch SDPA with a boolean mask) gives 0.  Only padding queries meet such rows.  "
    "Declared as the variant fully-masked-rows: uniform.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/masking_utils.py",
)
#: Inputs with fully masked rows: one head, the middle query masked; two heads with a bias, queries 0 and 2.
_MASKED_ROWS = {
    "fully-masked-row": {
        "q": F(_Q),
        "k": F(_K),
        "v": F(_V),
        "bias": None,
        "mask": B([[True] * 5, [False] * 5, [True, False] * 2 + [True]]),
    },
    "fully-masked-with-bias": {
        "q": F(_dyadic(47, (2, 3, 4), denominator=32)),
        "k": F(_dyadic(48, (2, 5, 4), denominator=32)),
        "v": F(_dyadic(49, (2, 5, 3))),
        "bias": F(_ALIBI),
        "mask": B([[False] * 5, [True, True, False, False, False], [False] * 5]),
    },
}
for _name, _inputs in _MASKED_ROWS.items():
    _extra = () if _inputs["bias"] is None else ("AlibiSymmetric", "BatchedPositions")
    case(
        f"attention/mask/{_name}",
        "Queries that see no key get a zero row" + (", whatever the bias." if _extra else "."),
        ("FullyMaskedRow", *_extra),
        scale=None,
        **_inputs,
    )
    case(
        f"attention/uniform-masked/{_name}",
        "HF eager (variant uniform): finfo.min swamps every logit"
        + (" and the bias" if _extra else "")
        + ", so a query that sees no key gets the mean of v.",
        ("FullyMaskedRow", "NamedVariant", _UNIFORM, *_extra),
        variant="uniform",
        scale=None,
        **_inputs,
    )
case(
    "attention/batched/heads",
    "q, k, v with a head axis [2, ...].",
    ("Basic",),
    q=F(_dyadic(44, (2, 3, 4), denominator=32)),
    k=F(_dyadic(45, (2, 5, 4), denominator=32)),
    v=F(_dyadic(46, (2, 5, 3))),
    bias=None,
    mask=None,
    scale=None,
)
