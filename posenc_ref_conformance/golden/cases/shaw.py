"""Relative positions and Shaw et al. (2018): declarations and cases of the index, table size, table terms."""

from __future__ import annotations

from typing import Any

from ... import oracle
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
from ._common import F, I, _dyadic, case

# --- declarations ------------------------------------------------------------------------------


def _relative_positions(inp: dict[str, Any]) -> dict[str, Any]:
    q, k = inp["q_positions"], inp["k_positions"]
    if len(shape_of(q)) == 1:
        return {"relative": oracle.relative.relative_positions(q, k)}
    return {"relative": [oracle.relative.relative_positions(a, b) for a, b in zip(q, k, strict=True)]}


def _shaw_index(inp: dict[str, Any]) -> dict[str, Any]:
    flat = flatten(inp["relative"])
    md = inp["max_distance"]
    conv = inp["convention"]
    if conv == "bert":
        idx = [oracle.relative.bert_index(r, max_position_embeddings=md) for r in flat]
    elif conv == "speecht5":
        idx = [oracle.relative.speecht5_index(r, max_length=md) for r in flat]
    elif conv == "vits":
        idx = [oracle.relative.vits_index(r, window=md) for r in flat]
    elif conv == "granite_speech":
        c, m = md
        idx = [oracle.relative.granite_speech_index(r, context_size=c, max_pos_emb=m) for r in flat]
    else:
        left, right = (md, md) if isinstance(md, int) else md
        idx = [oracle.relative.shaw_index(r, left=left, right=right) for r in flat]
    return {"index": reshape(idx, shape_of(inp["relative"]))}


def _limits(max_distance: Any) -> tuple[int, int]:
    return (max_distance, max_distance) if isinstance(max_distance, int) else tuple(max_distance)


def _shaw_table_rows(inp: dict[str, Any]) -> dict[str, Any]:
    md, convention = inp["max_distance"], inp["convention"]
    if convention in ("bert", "speecht5", "vits"):
        left, right = 0, md
    else:
        left, right = _limits(md)
    return {"rows": oracle.relative.shaw_table_rows(left, right, convention=convention)}


def _broadcast_walk(nodes: dict[str, Any], depth: dict[str, int], leaf: Any) -> Any:
    """``leaf(**nodes)`` over the leading axes of the deepest input (shallower ones are shared)."""
    top = max(depth.values())
    if top == 2:
        return leaf(**nodes)
    lead = next(n for n in nodes if depth[n] == top)
    out = []
    for i in range(len(nodes[lead])):
        sub = {n: (v[i] if depth[n] == top else v) for n, v in nodes.items()}
        out.append(_broadcast_walk(sub, {n: d - (d == top) for n, d in depth.items()}, leaf))
    return out


def _shaw_logits(inp: dict[str, Any]) -> dict[str, Any]:
    nodes = {"q": inp["q"], "index": inp["index"]}
    if inp["k"] is not None:
        nodes["k"] = inp["k"]
    depth = {n: len(shape_of(v)) for n, v in nodes.items()}
    table = inp["table"]
    return {
        "logits": _broadcast_walk(nodes, depth, lambda **a: oracle.relative.shaw_logits(table=table, **a))
    }


def _shaw_logits_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    # Each logit is one or two dot products of D terms: |error| <= 2 (D + 1) u * D max|t| (max|q| + max|k|).
    width = shape_of(inp["table"])[-1]
    scale = width * max_abs(inp["table"]) * (max_abs(inp["q"]) + (max_abs(inp["k"]) if inp["k"] else 0.0))
    return tol(
        atol64=2 * (width + 1) * EPS64 * scale, ulp64=4, atol32=2 * (width + 1) * EPS32 * scale, ulp32=4
    )


def _shaw_values(inp: dict[str, Any]) -> dict[str, Any]:
    nodes = {"weights": inp["weights"], "index": inp["index"]}
    depth = {n: len(shape_of(v)) for n, v in nodes.items()}
    table = inp["table"]
    return {"out": _broadcast_walk(nodes, depth, lambda **a: oracle.relative.shaw_values(table=table, **a))}


def _shaw_values_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    # A sum of Lk products: |error| <= 2 (Lk + 1) u * Lk max|w| max|t|.
    keys = shape_of(inp["index"])[-1]
    scale = keys * max_abs(inp["weights"]) * max_abs(inp["table"])
    return tol(atol64=2 * (keys + 1) * EPS64 * scale, ulp64=4, atol32=2 * (keys + 1) * EPS32 * scale, ulp32=4)


_CONVENTION = ("string", "tensor2tensor | bert | speecht5 | vits | granite_speech")

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
            "max_distance": ("int|pair", "int, [left, right], or granite_speech [context_size, max_pos_emb]"),
            "convention": _CONVENTION,
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
        "shaw_table_rows",
        "shaw",
        "shaw_table_rows(max_distance, convention) -> rows of the table shaw_index indexes "
        "(2k + 1, left + right + 1; 2P - 1 bert, 2L speecht5, 2w + 2 vits, 2M + 1 granite_speech)",
        {"max_distance": ("int|pair", "int or [left, right]"), "convention": _CONVENTION},
        {"rows": "int"},
        _shaw_table_rows,
        positional=1,
        options={"convention": "shaw_conventions"},
        output_kind="int",
    )
)
declare(
    FunctionSpec(
        "shaw_logits",
        "shaw",
        "shaw_logits(q[..., Lq, D], index[..., Lq, Lk], table[R, D], k[..., Lk, D] | null) -> "
        "q_i . table[index_ij] (+ k_j . table[index_ij]) [..., Lq, Lk]",
        {
            "q": ("float", "float64 [..., Lq, D]"),
            "index": ("positions", "int64 [..., Lq, Lk] (rows from shaw_index)"),
            "table": ("float", "float64 [R, D]"),
            "k": ("float|null", "float64 [..., Lk, D] or null"),
        },
        {"logits": "float"},
        _shaw_logits,
        positional=3,
        cast_inputs=("q", "table", "k"),
        case_tolerances=_shaw_logits_tol,
    )
)
declare(
    FunctionSpec(
        "shaw_values",
        "shaw",
        "shaw_values(weights[..., Lq, Lk], index[..., Lq, Lk], table[R, Dv]) -> "
        "sum_j weights_ij table[index_ij] [..., Lq, Dv]",
        {
            "weights": ("float", "float64 [..., Lq, Lk] (attention weights)"),
            "index": ("positions", "int64 [..., Lq, Lk] (rows from shaw_index)"),
            "table": ("float", "float64 [R, Dv]"),
        },
        {"out": "float"},
        _shaw_values,
        positional=3,
        cast_inputs=("weights", "table"),
        case_tolerances=_shaw_values_tol,
    )
)


# --- relative positions, Shaw indices --------------------------------------------------------------

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

case(
    "shaw_index/tensor2tensor/asymmetric-0-3",
    "left 0, right 3: every key before the query shares row 0 (one-sided limits).",
    "ShawAsymmetric",
    relative=I(list(range(-5, 6))),
    max_distance=[0, 3],
    convention="tensor2tensor",
)

case(
    "shaw_index/speecht5/l-3",
    "SpeechT5 max_length 3: clip(query - key, -3, 2) + 3 over -6..6 (rows 0..5, mirrored).",
    ("ShawSpeechT5", "ShawClipping"),
    relative=I(list(range(-6, 7))),
    max_distance=3,
    convention="speecht5",
)
case(
    "shaw_index/speecht5/2d",
    "A relative matrix [4, 5] (queries 0..3, keys 0..4), max_length 2: i - j = 2 clips to 1.",
    ("ShawSpeechT5", "BatchedPositions"),
    relative=I([[k - q for k in range(5)] for q in range(4)]),
    max_distance=2,
    convention="speecht5",
)
case(
    "shaw_index/speecht5/l-1",
    "max_length 1: two rows; every key after the query reads row 0, the rest row 1.",
    ("ShawSpeechT5", "ShawClipping"),
    relative=I([-5, -1, 0, 1, 5]),
    max_distance=1,
    convention="speecht5",
)
case(
    "shaw_index/speecht5/invalid-pair",
    "SpeechT5 takes one max_length, not a pair.",
    (),
    ("TypeError", "max_distance"),
    relative=I([0, 1]),
    max_distance=[2, 2],
    convention="speecht5",
)
case(
    "shaw_index/vits/window-2",
    "VITS window 2 over -5..5: r + 2 inside |r| <= 2, the zero row 5 outside (no clipping).",
    ("ShawVitsWindow", "Basic"),
    relative=I(list(range(-5, 6))),
    max_distance=2,
    convention="vits",
)
case(
    "shaw_index/vits/self-attention-6",
    "The [6, 6] self-attention of length 6 with window 4 (VITS's default): corners beyond the window.",
    ("ShawVitsWindow", "BatchedPositions"),
    relative=I([[k - q for k in range(6)] for q in range(6)]),
    max_distance=4,
    convention="vits",
)
case(
    "shaw_index/vits/invalid-window-0",
    "window_size 0 disables VITS's relative attention: no table to index.",
    (),
    ("ValueError", "max_distance"),
    relative=I([0, 1]),
    max_distance=0,
    convention="vits",
)
case(
    "shaw_index/granite_speech/block-4",
    "One block of 4 frames, context_size 4, max_pos_emb 6: (i - j) + 6 (the clamp never binds).",
    ("ShawGraniteBlock", "BatchedPositions"),
    relative=I([[k - q for k in range(4)] for q in range(4)]),
    max_distance=[4, 6],
    convention="granite_speech",
)
case(
    "shaw_index/granite_speech/clamp",
    "Relative positions past context_size 2 clamp to +-2 (offset 3).",
    ("ShawGraniteBlock", "ShawClipping"),
    relative=I(list(range(-5, 6))),
    max_distance=[2, 3],
    convention="granite_speech",
)
case(
    "shaw_index/granite_speech/invalid-context",
    "context_size 5 above max_pos_emb 4: Granite Speech raises ValueError.",
    (),
    ("ValueError", "max_distance"),
    relative=I([0, 1]),
    max_distance=[5, 4],
    convention="granite_speech",
)

# --- Shaw table sizes -----------------------------------------------------------------------------

for _md, _conv, _flags, _why in [
    (2, "tensor2tensor", ("Basic", "ShawClipping"), "2k + 1 = 5 rows"),
    (20, "tensor2tensor", "ShawClipping", "tensor2tensor's max_relative_position * 2 + 1 = 41"),
    ([64, 8], "tensor2tensor", "ShawAsymmetric", "Wav2Vec2-BERT: left + right + 1 = 73"),
    ([0, 3], "tensor2tensor", "ShawAsymmetric", "left 0, right 3: 4 rows"),
    (512, "bert", "ShawBertSign", "HF BERT nn.Embedding(2 * 512 - 1, head_size): 1023, not 1025"),
    (160, "speecht5", "ShawSpeechT5", "SpeechT5 nn.Embedding(2 * 160, dim): 320 rows, not 321"),
    (4, "vits", "ShawVitsWindow", "VITS emb_rel_k [1, 2 * 4 + 1, head_dim] plus the zero row: 10"),
    ([200, 512], "granite_speech", "ShawGraniteBlock", "Granite Speech nn.Embedding(2 * 512 + 1): 1025"),
]:
    _id = "-".join(map(str, _md)) if isinstance(_md, list) else str(_md)
    case(f"shaw_table_rows/{_conv}/{_id}", _why + ".", _flags, max_distance=_md, convention=_conv)
case(
    "shaw_table_rows/tensor2tensor/invalid-k-0",
    "max_distance must be >= 1.",
    (),
    ("ValueError", "max_distance"),
    max_distance=0,
    convention="tensor2tensor",
)
case(
    "shaw_table_rows/granite_speech/invalid-int",
    "granite_speech takes the pair (context_size, max_pos_emb), not one integer.",
    (),
    ("TypeError", "max_distance"),
    max_distance=4,
    convention="granite_speech",
)
case(
    "shaw_table_rows/bert/invalid-pair",
    "bert takes max_position_embeddings, an integer, not a pair.",
    (),
    ("TypeError", "max_distance"),
    max_distance=[4, 4],
    convention="bert",
)

# --- Shaw table terms -----------------------------------------------------------------------------

_KEY_QUERY = add_note(
    "ShawKeyQuery",
    "ConventionMismatch",
    "HF BERT relative_key_query adds k_j . w[idx_ij] to q_i . w[idx_ij] (Huang et al. 2020, method 4); "
    "relative_key and tensor2tensor add only the query term.",
    "https://github.com/huggingface/transformers/blob/v4.46.0/src/transformers/models/bert/modeling_bert.py",
)


def _t2t_index(q: list[int], k: list[int], left: int, right: int) -> list[list[int]]:
    return [[oracle.relative.shaw_index(b - a, left=left, right=right) for b in k] for a in q]


def _bert_index(q: list[int], k: list[int], rows: int) -> list[list[int]]:
    return [[oracle.relative.bert_index(b - a, max_position_embeddings=rows) for b in k] for a in q]


def _speecht5_index(n: int, max_length: int) -> list[list[int]]:
    index = oracle.relative.speecht5_index
    return [[index(j - i, max_length=max_length) for j in range(n)] for i in range(n)]


def _vits_index(n: int, window: int) -> list[list[int]]:
    return [[oracle.relative.vits_index(j - i, window=window) for j in range(n)] for i in range(n)]


def _zero_last(table: list[list[float]]) -> list[list[float]]:
    """VITS's table: its 2w + 1 rows and the zero row its padding reads beyond the window."""
    return [*table[:-1], [0.0] * len(table[-1])]


_IDX = _t2t_index(list(range(4)), list(range(6)), 2, 2)  # [4, 6], rows 0..4
_QS = _dyadic(51, (4, 3), denominator=32)
case(
    "shaw_logits/tensor2tensor/basic",
    "q [4, 3] against rows of a [5, 3] table clipped at k = 2.",
    ("Basic", "ShawClipping"),
    q=F(_QS),
    index=I(_IDX),
    table=F(_dyadic(52, (5, 3))),
    k=None,
)
case(
    "shaw_logits/tensor2tensor/asymmetric",
    "Wav2Vec2-BERT style limits left 3, right 1: a [5, 3] table.",
    ("ShawAsymmetric", "ShawClipping"),
    q=F(_QS),
    index=I(_t2t_index(list(range(4)), list(range(6)), 3, 1)),
    table=F(_dyadic(53, (5, 3))),
    k=None,
)
case(
    "shaw_logits/bert/relative-key",
    "HF BERT relative_key: rows (q - k) + P - 1 of a [2P - 1, 3] table, P = 6.",
    "ShawBertSign",
    q=F(_QS),
    index=I(_bert_index(list(range(4)), list(range(6)), 6)),
    table=F(_dyadic(54, (11, 3))),
    k=None,
)
case(
    "shaw_logits/bert/relative-key-query",
    "HF BERT relative_key_query: the key term k_j . w[idx_ij] too.",
    ("ShawBertSign", _KEY_QUERY),
    q=F(_QS),
    index=I(_bert_index(list(range(4)), list(range(6)), 6)),
    table=F(_dyadic(54, (11, 3))),
    k=F(_dyadic(55, (6, 3), denominator=32)),
)
case(
    "shaw_logits/batched/heads-key-query",
    "q and k with a head axis [2, ...], one index [4, 6] shared by both heads.",
    ("BatchedPositions", _KEY_QUERY, "ShawClipping"),
    q=F(_dyadic(56, (2, 4, 3), denominator=32)),
    index=I(_IDX),
    table=F(_dyadic(57, (5, 3))),
    k=F(_dyadic(58, (2, 6, 3), denominator=32)),
)
case(
    "shaw_logits/speecht5/self-attention",
    "SpeechT5: q [5, 3] against pe_k rows clip(i - j, -2, 1) + 2 of a [4, 3] table.",
    ("ShawSpeechT5", "ShawClipping"),
    q=F(_dyadic(68, (5, 3), denominator=32)),
    index=I(_speecht5_index(5, 2)),
    table=F(_dyadic(69, (4, 3))),
    k=None,
)
case(
    "shaw_logits/vits/self-attention",
    "VITS window 1 over length 5: q . emb_rel_k[j - i + 1] inside the window, 0 outside (zero row 3).",
    ("ShawVitsWindow", "Basic"),
    q=F(_dyadic(70, (5, 3), denominator=32)),
    index=I(_vits_index(5, 1)),
    table=F(_zero_last(_dyadic(71, (4, 3)))),
    k=None,
)
case(
    "shaw_logits/vits/heads",
    "VITS window 2, two heads [2, 4, 2] sharing one [4, 4] index (the table is shared by the heads).",
    ("ShawVitsWindow", "BatchedPositions"),
    q=F(_dyadic(72, (2, 4, 2), denominator=32)),
    index=I(_vits_index(4, 2)),
    table=F(_zero_last(_dyadic(73, (6, 2)))),
    k=None,
)
case(
    "shaw_logits/tensor2tensor/invalid-index",
    "Row 5 of a 5-row table.",
    "DataDependentCheck",
    ("ValueError", "index"),
    q=F(_QS),
    index=I([[0, 1, 2, 3, 4, 5]] * 4),
    table=F(_dyadic(52, (5, 3))),
    k=None,
)
case(
    "shaw_logits/tensor2tensor/invalid-width",
    "q has width 3, the table 2.",
    (),
    ("ValueError", "q"),
    q=F(_QS),
    index=I(_IDX),
    table=F(_dyadic(59, (5, 2))),
    k=None,
)
_W = _dyadic(61, (4, 6), denominator=256, span=64)
case(
    "shaw_values/tensor2tensor/basic",
    "weights [4, 6] over rows of a [5, 2] value table clipped at k = 2.",
    ("Basic", "ShawClipping"),
    weights=F(_W),
    index=I(_IDX),
    table=F(_dyadic(62, (5, 2))),
)
case(
    "shaw_values/tensor2tensor/asymmetric",
    "Limits left 3, right 1.",
    ("ShawAsymmetric", "ShawClipping"),
    weights=F(_W),
    index=I(_t2t_index(list(range(4)), list(range(6)), 3, 1)),
    table=F(_dyadic(63, (5, 4))),
)
case(
    "shaw_values/batched/heads",
    "weights [2, 4, 6] (two heads), one shared index [4, 6].",
    ("BatchedPositions", "ShawClipping"),
    weights=F(_dyadic(64, (2, 4, 6), denominator=256, span=64)),
    index=I(_IDX),
    table=F(_dyadic(65, (5, 3))),
)
case(
    "shaw_values/tensor2tensor/decode-step",
    "One query at 5 over keys 0..7 (clipped at k = 2): rows 0, 0, 0, 0, 1, 2, 3, 4.",
    ("ShawClipping", "KVCacheOffset"),
    weights=F(_dyadic(67, (1, 8), denominator=256, span=64)),
    index=I(_t2t_index([5], list(range(8)), 2, 2)),
    table=F(_dyadic(62, (5, 2))),
)
case(
    "shaw_values/vits/self-attention",
    "VITS value term, window 1 over length 5: weights beyond the window meet the zero row.",
    ("ShawVitsWindow", "Basic"),
    weights=F(_dyadic(74, (5, 5), denominator=256, span=64)),
    index=I(_vits_index(5, 1)),
    table=F(_zero_last(_dyadic(75, (4, 2)))),
)
case(
    "shaw_values/speecht5/self-attention",
    "A value term over SpeechT5's mirrored index (max_length 2, length 4).",
    ("ShawSpeechT5", "BatchedPositions"),
    weights=F(_dyadic(76, (2, 4, 4), denominator=256, span=64)),
    index=I(_speecht5_index(4, 2)),
    table=F(_dyadic(77, (4, 3))),
)
case(
    "shaw_values/tensor2tensor/invalid-index",
    "Index -1 names no row.",
    "DataDependentCheck",
    ("ValueError", "index"),
    weights=F(_W),
    index=I([[-1, 0, 1, 2, 3, 4]] * 4),
    table=F(_dyadic(62, (5, 2))),
)
case(
    "shaw_values/tensor2tensor/invalid-shape",
    "weights [4, 5] against an index [4, 6].",
    (),
    ("ValueError", "weights"),
    weights=F(_dyadic(66, (4, 5))),
    index=I(_IDX),
    table=F(_dyadic(62, (5, 2))),
)
