"""Relative and bias schemes: declarations and cases of T5 buckets, ALiBi, Shaw, NoPE masks, attention."""

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
from ._common import B, F, I, _dyadic, case

# --- declarations ------------------------------------------------------------------------------


def _t5(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {k: inp[k] for k in ("bidirectional", "num_buckets", "max_distance")}
    flat = flatten(inp["relative"])
    exact = [oracle.t5.t5_bucket(r, **kw) for r in flat]
    float32 = [oracle.t5.t5_bucket_float32(r, **kw) for r in flat]
    shape = shape_of(inp["relative"])
    out = {"buckets": reshape(exact, shape)}
    if exact != float32:
        out["acceptable:buckets"] = reshape(float32, shape)
    return out


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


def _alibi_bias_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance | None:
    if inp["form"] != "causal":
        return None
    # Row forms (m k, m (k - L + 1)) carry the row constant's rounding: scale by the largest |position|.
    span = max(abs(p) for p in inp["q_positions"] + inp["k_positions"]) + 1
    m = max(abs(s) for s in inp["slopes"]) * span
    return tol(
        atol64=4 * EPS64 * m, rtol64=2 * EPS64, ulp64=2, atol32=4 * EPS32 * m, rtol32=2 * EPS32, ulp32=2
    )


def _relative_positions(inp: dict[str, Any]) -> dict[str, Any]:
    q, k = inp["q_positions"], inp["k_positions"]
    if len(shape_of(q)) == 1:
        return {"relative": oracle.relative.relative_positions(q, k)}
    return {"relative": [oracle.relative.relative_positions(a, b) for a, b in zip(q, k, strict=True)]}


def _shaw_index(inp: dict[str, Any]) -> dict[str, Any]:
    flat = flatten(inp["relative"])
    md = inp["max_distance"]
    if inp["convention"] == "bert":
        idx = [oracle.relative.bert_index(r, max_position_embeddings=md) for r in flat]
    else:
        left, right = (md, md) if isinstance(md, int) else md
        idx = [oracle.relative.shaw_index(r, left=left, right=right) for r in flat]
    return {"index": reshape(idx, shape_of(inp["relative"]))}


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
        flatten(inp["positions"]), floor_scale=inp["floor_scale"], attn_scale=inp["attn_scale"]
    )
    return {"scale": reshape(flat, shape_of(inp["positions"]))}


def _attention(inp: dict[str, Any]) -> dict[str, Any]:
    q, k, v = inp["q"], inp["k"], inp["v"]
    depth = len(shape_of(q))
    scale = mp.mpf(inp["scale"]) if inp["scale"] is not None else 1 / mp.sqrt(shape_of(q)[-1])

    def walk(qn: Any, kn: Any, vn: Any, d: int) -> Any:
        if d == 2:
            return oracle.attention.attention(qn, kn, vn, scale=scale, bias=inp["bias"], mask=inp["mask"])
        return [walk(a, b, c, d - 1) for a, b, c in zip(qn, kn, vn, strict=True)]

    return {"out": walk(q, k, v, depth)}


def _attention_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    vmax = max_abs(inp["v"])
    logit = max_abs(inp["q"]) * max_abs(inp["k"]) * shape_of(inp["q"])[-1] + 1
    logit += max_abs(inp["bias"]) if inp["bias"] is not None else 0.0
    return tol(atol64=64 * EPS64 * vmax * logit, ulp64=8, atol32=64 * EPS32 * vmax * logit, ulp32=8)


_POS = "int64 array, any shape"

declare(
    FunctionSpec(
        "t5_bucket",
        "t5",
        "t5_bucket(relative, bidirectional, num_buckets, max_distance) -> buckets (same shape)",
        {
            "relative": ("positions", "int64 array (key - query)"),
            "bidirectional": ("bool", "bool"),
            "num_buckets": ("int", "int"),
            "max_distance": ("int", "int"),
        },
        {"buckets": "int"},
        _t5,
        positional=1,
        output_kind="int",
    )
)
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
        {
            "q_positions": ("positions", "int64 [Lq]"),
            "k_positions": ("positions", "int64 [Lk]"),
            "slopes": ("float", "float64 [H]"),
            "form": ("string", "symmetric | causal"),
        },
        {"bias": "float"},
        _alibi_bias,
        positional=3,
        options={"form": "alibi_forms"},
        cast_inputs=("slopes",),
        tolerances=tol(rtol64=2 * EPS64, ulp64=2, rtol32=2 * EPS32, ulp32=2),
        case_tolerances=_alibi_bias_tol,
    )
)
declare(
    FunctionSpec(
        "relative_positions",
        "shaw",
        "relative_positions(q_positions, k_positions) -> key - query [..., Lq, Lk]",
        {"q_positions": ("positions", "int64 [..., Lq]"), "k_positions": ("positions", "int64 [..., Lk]")},
        {"relative": "int"},
        _relative_positions,
        positional=2,
        output_kind="int",
    )
)
declare(
    FunctionSpec(
        "shaw_index",
        "shaw",
        "shaw_index(relative, max_distance, convention) -> table row per relative position",
        {
            "relative": ("positions", "int64 array"),
            "max_distance": ("int|pair", "int or [left, right]"),
            "convention": ("string", "tensor2tensor | bert"),
        },
        {"index": "int"},
        _shaw_index,
        positional=1,
        options={"convention": "shaw_conventions"},
        output_kind="int",
    )
)
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
        "llama4_attn_scale(positions, floor_scale, attn_scale) -> scale (positions' shape)",
        {
            "positions": ("positions", _POS),
            "floor_scale": ("number", "number"),
            "attn_scale": ("number", "number"),
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
    )
)


# --- T5 -------------------------------------------------------------------------------------------------


def _t5(
    id: str,
    comment: str,
    flags: Any,
    relative: Any,
    bidirectional: bool,
    num_buckets: int = 32,
    max_distance: int = 128,
    error: Any = None,
) -> None:
    kind = "bidirectional" if bidirectional else "causal"
    case(
        f"t5_bucket/{kind}/{id}",
        comment,
        flags,
        error,
        relative=relative if isinstance(relative, F) else I(relative),
        bidirectional=bidirectional,
        num_buckets=num_buckets,
        max_distance=max_distance,
    )


_t5(
    "32-128-range",
    "rp -200..200: boundaries 90/91, bucket 16 unused.",
    ("Basic", "T5BucketBoundary", "T5UnusedBucket"),
    list(range(-200, 201)),
    True,
)
_t5(
    "32-128-range",
    "rp -200..20: boundaries 112/113; keys after the query in bucket 0.",
    ("Basic", "T5BucketBoundary", "T5Causal"),
    list(range(-200, 21)),
    False,
)
for _nb, _md in [(64, 128), (32, 256), (16, 64), (128, 1024)]:
    _lim = 2 * _md + 10
    for _bid in (True, False):
        _t5(
            f"{_nb}-{_md}-range",
            f"num_buckets {_nb}, max_distance {_md}, every distance up to {_lim}.",
            ("T5BucketBoundary", "T5NonStandard") + (() if _bid else ("T5Causal",)),
            list(range(-_lim, _lim + 1, 1 if _md < 1024 else 3)),
            _bid,
            _nb,
            _md,
        )
for _nb, _md in [(20, 50), (33, 100), (4, 8)]:
    for _bid in (True, False):
        _t5(
            f"{_nb}-{_md}-range",
            f"Non-standard num_buckets {_nb}, max_distance {_md}.",
            "T5NonStandard",
            list(range(-2 * _md - 3, 2 * _md + 4)),
            _bid,
            _nb,
            _md,
        )
_t5(
    "saturation",
    "Huge distances stay in the last bucket.",
    "T5Saturation",
    [-(2**40), -(2**24) - 1, -(2**20), 2**20, 2**24 + 1, 2**40],
    True,
)
_t5(
    "saturation",
    "Huge distances stay in the last bucket.",
    ("T5Saturation", "T5Causal"),
    [-(2**40), -(2**24) - 1, -(2**20), 2**20],
    False,
)
_t5(
    "2d-relative",
    "A [4, 5] relative matrix (queries 2..5, keys 0..4).",
    "BatchedPositions",
    [[k - q for k in range(5)] for q in range(2, 6)],
    True,
)
_t5(
    "36-50-tie",
    "rp = -30: the log term is exactly 9; float32 gives 8.99999.",
    ("T5FloatBoundary", "T5Causal"),
    [-29, -30, -31],
    False,
    36,
    50,
)
_t5(
    "55-32768-float32",
    "rp = -3343: just below a bucket boundary; float32 rounds up.",
    ("T5FloatBoundary", "T5Causal"),
    [-3342, -3343, -3344],
    False,
    55,
    32768,
)
_t5(
    "1000-32768-float32",
    "|rp| = 21756: float32 rounds up to the next bucket.",
    "T5FloatBoundary",
    [-21757, -21756, 21756, 21757],
    True,
    1000,
    32768,
)
_t5(
    "9-128-exact-ties",
    "rp = -8, -16, -64: exact ties (float64 gives one bucket less).",
    ("T5FloatBoundary", "T5Causal"),
    [-8, -16, -64],
    False,
    9,
    128,
)
_t5(
    "invalid-num-buckets",
    "num_buckets must be >= 2.",
    (),
    [0, 1],
    False,
    1,
    128,
    ("ValueError", "num_buckets"),
)
_t5(
    "invalid-max-distance",
    "max_distance must exceed max_exact (8 for 32 bidirectional).",
    (),
    [0, 1],
    True,
    32,
    8,
    ("ValueError", "max_distance"),
)
_t5(
    "invalid-float-relative",
    "Relative positions must be integers.",
    (),
    F([0.0, 1.0]),
    True,
    error=("TypeError", "relative"),
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

with oracle.working_precision():
    _S4 = [oracle.round_float32(s) for s in oracle.alibi.alibi_slopes(4)]
    _S12 = [oracle.round_float32(s) for s in oracle.alibi.alibi_slopes(12)]
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
    "alibi_bias/unknown/invalid-form",
    "Unknown form name.",
    (),
    ("ValueError", "form"),
    q_positions=I([0]),
    k_positions=I([0]),
    slopes=F(_S4),
    form="bidirectional",
)

# --- relative positions, Shaw ---------------------------------------------------------------------------

case(
    "relative_positions/square/basic",
    "key - query for 4 queries, 6 keys.",
    ("Basic",),
    q_positions=I([0, 1, 2, 3]),
    k_positions=I(list(range(6))),
)
case(
    "relative_positions/decode/step",
    "One query at 5 (a decoding step).",
    ("KVCacheOffset",),
    q_positions=I([5]),
    k_positions=I(list(range(6))),
)
case(
    "relative_positions/batched/offsets",
    "Per-batch positions [2, 3] and [2, 4].",
    ("BatchedPositions",),
    q_positions=I([[0, 1, 2], [10, 11, 12]]),
    k_positions=I([[0, 1, 2, 3], [9, 10, 11, 12]]),
)
_REL = list(range(-12, 13))
case(
    "shaw_index/tensor2tensor/k-2",
    "Clip to [-2, 2], shift to [0, 4].",
    ("ShawClipping", "Basic"),
    relative=I(_REL),
    max_distance=2,
    convention="tensor2tensor",
)
case(
    "shaw_index/tensor2tensor/k-20",
    "tensor2tensor's max_relative_position 20 over -30..30.",
    "ShawClipping",
    relative=I(list(range(-30, 31))),
    max_distance=20,
    convention="tensor2tensor",
)
case(
    "shaw_index/tensor2tensor/asymmetric-64-8",
    "Wav2Vec2-BERT limits: left 64, right 8.",
    "ShawAsymmetric",
    relative=I(list(range(-70, 13))),
    max_distance=[64, 8],
    convention="tensor2tensor",
)
case(
    "shaw_index/tensor2tensor/2d",
    "A relative matrix [3, 4].",
    ("ShawClipping", "BatchedPositions"),
    relative=I([[k - q for k in range(4)] for q in range(3)]),
    max_distance=1,
    convention="tensor2tensor",
)
case(
    "shaw_index/bert/basic",
    "HF BERT relative_key: (query - key) + P - 1, P = 4.",
    "ShawBertSign",
    relative=I([-3, -1, 0, 2, 3]),
    max_distance=4,
    convention="bert",
)
case(
    "shaw_index/bert/invalid-outside",
    "No clipping: |relative| = 4 is outside a P = 4 table.",
    ("ShawBertSign", "DataDependentCheck"),
    ("ValueError", "relative"),
    relative=I([0, 4]),
    max_distance=4,
    convention="bert",
)
case(
    "shaw_index/tensor2tensor/invalid-k-0",
    "max_distance must be >= 1.",
    (),
    ("ValueError", "max_distance"),
    relative=I([0, 1]),
    max_distance=0,
    convention="tensor2tensor",
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
case(
    "llama4_attn_scale/defaults/boundaries",
    "Exactly 1 below 8191; steps at 8191, 16383, ...",
    ("NopeTemperature", "Basic"),
    positions=I([0, 8190, 8191, 8192, 16382, 16383, 1_000_000, 2**24 + 1]),
    floor_scale=8192.0,
    attn_scale=0.1,
)
case(
    "llama4_attn_scale/custom/small-floor",
    "floor_scale 4, attn_scale 0.2.",
    "NopeTemperature",
    positions=I([[0, 3, 4], [7, 8, 100]]),
    floor_scale=4.0,
    attn_scale=0.2,
)
case(
    "llama4_attn_scale/invalid/negative",
    "Positions must be non-negative.",
    "DataDependentCheck",
    ("ValueError", "positions"),
    positions=I([-1, 0]),
    floor_scale=8192.0,
    attn_scale=0.1,
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
case(
    "attention/mask/fully-masked-row",
    "The middle query sees no key: a zero row.",
    ("FullyMaskedRow",),
    q=F(_Q),
    k=F(_K),
    v=F(_V),
    bias=None,
    mask=B([[True] * 5, [False] * 5, [True, False] * 2 + [True]]),
    scale=None,
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
