"""T5-bucket variants: declarations and cases of LayoutLM's and UDOP's document biases, WavLM's gated
bias, ProphetNet's stream buckets and CPM-Ant's segment buckets."""

from __future__ import annotations

from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, max_abs, shape_of, tol
from ..notes import add_note
from ._common import F, I, _dyadic, case

# --- declarations ------------------------------------------------------------------------------


def _batched(first: Any, depth: int) -> bool:
    """Whether ``first`` (a nested list) has a leading batch axis above its ``depth`` own axes."""
    return len(shape_of(first)) > depth


def _layout(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {k: inp[k] for k in ("max_rel_pos", "max_rel_2d_pos", "head_dim")}
    tables = (inp["table"], inp["x_table"], inp["y_table"])
    if _batched(inp["positions"], 1):
        return {
            "bias": [
                oracle.t5.layout_bias(p, b, *tables, **kw)
                for p, b in zip(inp["positions"], inp["bbox"], strict=True)
            ]
        }
    return {"bias": oracle.t5.layout_bias(inp["positions"], inp["bbox"], *tables, **kw)}


def _sum_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """A sum of three table entries (two roundings) and one division: 3 u of the summed magnitudes."""
    scale = sum(max_abs(inp[name]) for name in ("table", "x_table", "y_table"))
    root = (inp.get("head_dim") or 1) ** 0.5
    return tol(atol64=3 * EPS64 * scale / root, ulp64=2, atol32=3 * EPS32 * scale / root, ulp32=2)


def _udop(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {k: inp[k] for k in ("max_distance", "max_distance_2d", "scaling_factor", "prefix_buckets")}
    tables = (inp["table"], inp["x_table"], inp["y_table"])
    if _batched(inp["bbox"], 2):
        return {"bias": [oracle.t5.udop_bias(b, *tables, **kw) for b in inp["bbox"]]}
    return {"bias": oracle.t5.udop_bias(inp["bbox"], *tables, **kw)}


def _gated(inp: dict[str, Any]) -> dict[str, Any]:
    args = (inp["table"], inp["gate_weight"], inp["gate_bias"], inp["gate_const"])
    kw = {"max_distance": inp["max_distance"]}
    if _batched(inp["hidden"], 3):
        return {"bias": [oracle.t5.gated_bias(x, *args, **kw) for x in inp["hidden"]]}
    return {"bias": oracle.t5.gated_bias(inp["hidden"], *args, **kw)}


def _gated_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """The gate's rounding, times the table entry, plus the product's.

    ``u = W x + b`` (Dh products, Dh additions) errs by ``(Dh + 1) u P`` with ``P`` the largest
    ``sum |W_c||x| + |b_c|``; four such sums add ``3 u``: ``s`` errs by ``(Dh + 4) 4 u P``.
    ``sigmoid`` has slope <= 1/4 and adds 4 roundings (exp, add, divide, negate): ``a`` and ``b``
    err by ``(Dh + 4) u P + 4 u``; ``g = a (b c - 1) + 2`` by ``(1 + 2 |c|)`` times that plus 4 u
    of ``|c| + 3``; the result by ``|T|`` times that plus one rounding of ``|g T|``.  Doubled.
    """
    width = shape_of(inp["gate_weight"])[-1]
    hidden, weight, bias = max_abs(inp["hidden"]), max_abs(inp["gate_weight"]), max_abs(inp["gate_bias"])
    spread = width * weight * hidden + bias
    c, t = max_abs(inp["gate_const"]), max_abs(inp["table"])

    def bound(u: float) -> float:
        sig = (width + 4) * u * spread + 4 * u
        return 2 * (t * ((1 + 2 * c) * sig + 4 * u * (c + 3)) + u * (c + 3) * t)

    return tol(atol64=bound(EPS64), ulp64=4, atol32=bound(EPS32), ulp32=4)


def _streams(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {"num_buckets": inp["num_buckets"], "max_distance": inp["max_distance"]}
    if _batched(inp["positions"], 1):
        pairs = [oracle.t5.stream_buckets(p, **kw) for p in inp["positions"]]
        return {"main": [m for m, _ in pairs], "predict": [p for _, p in pairs]}
    main, predict = oracle.t5.stream_buckets(inp["positions"], **kw)
    return {"main": main, "predict": predict}


def _segments(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {"num_segments": inp["num_segments"], "max_distance": inp["max_distance"]}
    names = ("q_positions", "k_positions", "q_segments", "k_segments")
    if _batched(inp["q_positions"], 1):
        rows = zip(*(inp[n] for n in names), strict=True)
        return {"bias": [oracle.t5.segment_bias(*row, inp["table"], **kw) for row in rows]}
    return {"bias": oracle.t5.segment_bias(*(inp[n] for n in names), inp["table"], **kw)}


declare(
    FunctionSpec(
        "t5_layout_bias",
        "t5",
        "t5_layout_bias(positions[..., L], bbox[..., L, 4], table[N, H], x_table[N2, H], y_table[N2, H], "
        "max_rel_pos, max_rel_2d_pos, head_dim) -> bias[..., H, L, L] = (Tx[b(x_j - x_i)] + Ty[b(y_j - y_i)] "
        "+ T[b(p_j - p_i)]) / sqrt(head_dim), x = bbox[..., 0], y = bbox[..., 3]",
        {
            "positions": ("positions", "int64 [..., L] (position_ids)"),
            "bbox": ("positions", "int64 [..., L, 4] (x0, y0, x1, y1)"),
            "table": ("float", "float64 [rel_pos_bins, H] (HF rel_pos_bias.weight.T)"),
            "x_table": ("float", "float64 [rel_2d_pos_bins, H] (HF rel_pos_x_bias.weight.T)"),
            "y_table": ("float", "float64 [rel_2d_pos_bins, H] (HF rel_pos_y_bias.weight.T)"),
            "max_rel_pos": ("int", "int"),
            "max_rel_2d_pos": ("int", "int"),
            "head_dim": ("int|null", "int, or null for no division (LayoutLMv2)"),
        },
        {"bias": "float"},
        _layout,
        positional=5,
        cast_inputs=("table", "x_table", "y_table"),
        case_tolerances=_sum_tol,
    )
)
declare(
    FunctionSpec(
        "t5_udop_bias",
        "t5",
        "t5_udop_bias(bbox[..., L, 4], table[N (+2), H], x_table[N2 (+2), H], y_table[N2 (+2), H], "
        "max_distance, max_distance_2d, scaling_factor, prefix_buckets) -> bias[..., H, L, L] = T[b(j - i)] "
        "+ Tx[b(trunc(s (cx_j - cx_i)))] + Ty[b(trunc(s (cy_j - cy_i)))], c = box centres",
        {
            "bbox": ("float", "float64 [..., L, 4] (x0, y0, x1, y1 in [0, 1]; y0 < 0: a prefix token)"),
            "table": ("float", "float64 [num_buckets (+2), H] (the 1-D module's relative_attention_bias)"),
            "x_table": ("float", "float64 [num_buckets_2d (+2), H] (the horizontal module's)"),
            "y_table": ("float", "float64 [num_buckets_2d (+2), H] (the vertical module's)"),
            "max_distance": ("int", "int"),
            "max_distance_2d": ("int", "int"),
            "scaling_factor": ("number", "number > 0"),
            "prefix_buckets": ("bool", "bool"),
        },
        {"bias": "float"},
        _udop,
        positional=4,
        cast_inputs=("bbox", "table", "x_table", "y_table"),
        case_tolerances=_sum_tol,
    )
)
declare(
    FunctionSpec(
        "t5_gated_bias",
        "t5",
        "t5_gated_bias(hidden[..., H, L, Dh], table[N, H], gate_weight[8, Dh], gate_bias[8], gate_const[H], "
        "max_distance) -> bias[..., H, L, L] = g[h, i] T[b(j - i), h], g = a (b c_h - 1) + 2, "
        "a, b = sigmoid(sum4(W x + bias))",
        {
            "hidden": ("float", "float64 [..., H, L, Dh] (the layer input split into heads)"),
            "table": ("float", "float64 [num_buckets, H] (HF rel_attn_embed.weight)"),
            "gate_weight": ("float", "float64 [8, Dh] (HF gru_rel_pos_linear.weight)"),
            "gate_bias": ("float", "float64 [8] (HF gru_rel_pos_linear.bias)"),
            "gate_const": ("float", "float64 [H] (HF gru_rel_pos_const)"),
            "max_distance": ("int", "int"),
        },
        {"bias": "float"},
        _gated,
        positional=5,
        cast_inputs=("hidden", "table", "gate_weight", "gate_bias", "gate_const"),
        case_tolerances=_gated_tol,
    )
)
declare(
    FunctionSpec(
        "t5_stream_buckets",
        "t5",
        "t5_stream_buckets(positions[..., L], num_buckets, max_distance) -> main[..., L, L] = b(p_j - p_i), "
        "predict[..., L, 2L] = b([p - 1, p]_j - p_i) (causal buckets)",
        {
            "positions": ("positions", "int64 [..., L]"),
            "num_buckets": ("int", "int"),
            "max_distance": ("int", "int"),
        },
        {"main": "int", "predict": "int"},
        _streams,
        positional=1,
        output_kind="int",
    )
)
declare(
    FunctionSpec(
        "t5_segment_bias",
        "t5",
        "t5_segment_bias(q_positions[..., Lq], k_positions[..., Lk], q_segments[..., Lq], "
        "k_segments[..., Lk], table[N + S*S, H], num_segments, max_distance) -> bias[..., H, Lq, Lk] = "
        "T[b(k - q)] within a segment, T[N + s_q S + s_k] across",
        {
            "q_positions": ("positions", "int64 [..., Lq]"),
            "k_positions": ("positions", "int64 [..., Lk]"),
            "q_segments": ("positions", "int64 [..., Lq] in [0, num_segments)"),
            "k_segments": ("positions", "int64 [..., Lk] in [0, num_segments)"),
            "table": ("float", "float64 [num_buckets + num_segments**2, H]"),
            "num_segments": ("int", "int"),
            "max_distance": ("int", "int"),
        },
        {"bias": "float"},
        _segments,
        positional=5,
        cast_inputs=("table",),
        tolerances=tol(),  # a lookup: the table's own values, exactly
    )
)

# --- notes -------------------------------------------------------------------------------------

_EDGES = add_note(
    "T5LayoutEdges",
    "ConventionMismatch",
    "LayoutLMv2/v3 bucket the x distance of the left edges (bbox[..., 0]) and the y distance of the "
    "bottom edges (bbox[..., 3]), not of the top edges or centres: boxes whose top and bottom edges move "
    "differently tell the conventions apart.",
    "https://github.com/microsoft/unilm/blob/master/layoutlmv3/layoutlmft/models/layoutlmv3/modeling_layoutlmv3.py",
)
_SCALE = add_note(
    "T5BiasScale",
    "ConventionMismatch",
    "LayoutLMv3 and PP-DocLayout-V2 divide the relative bias by sqrt(head_dim) (the 'CogView' "
    "attention trick of the original code); LayoutLMv2 adds it unscaled. A port that copies one model's "
    "rule into the other is off by a factor sqrt(head_dim).",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/layoutlmv3/modeling_layoutlmv3.py",
)
_TRUNC = add_note(
    "T5ScaledTruncation",
    "ConventionMismatch",
    "UDOP scales the distance of two box centres by scaling_factor (100) and truncates it toward zero "
    "(.long()): a distance -0.78 is bucket 0, as +0.78; floor() or round() moves negative or half-way "
    "distances into the next bucket.",
    "https://github.com/microsoft/i-Code/blob/main/i-Code-Doc/core/models/embedding/relative/relative.py",
)
_PREFIX = add_note(
    "T5PrefixBuckets",
    "ConventionMismatch",
    "UDOP's prefix_bucket: tokens whose box has y0 < 0 are a prefix; prefix queries attending to text "
    "keys take bucket num_buckets, text queries attending to prefix keys num_buckets + 1, in each of the "
    "1-D, horizontal and vertical tables (two more rows each); prefix-prefix pairs keep their buckets.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/udop/modeling_udop.py",
)
_GATE = add_note(
    "T5QueryGate",
    "ConventionMismatch",
    "WavLM multiplies the T5 bias by a per-head, per-query gate a (b c - 1) + 2 of the layer input "
    "(not of the query projection): a = sigmoid of the sum of the first four of 8 projected channels, "
    "b of the last four; c is a learned per-head constant.",
    "https://arxiv.org/abs/2110.13900",
)
_STREAM = add_note(
    "T5PredictStream",
    "ConventionMismatch",
    "ProphetNet's predict streams attend to the main stream shifted by one position (keys p - 1) and "
    "to themselves (keys p), with causal buckets of key minus query: the 2L keys of each query row.",
    "https://github.com/microsoft/ProphetNet/blob/master/ProphetNet_En/prophetnet/ngram_multihead_attention.py",
)
_SEGMENT = add_note(
    "T5SegmentBuckets",
    "ConventionMismatch",
    "CPM-Ant gives a query and a key of different segments the row num_buckets + s_q * segment_types + "
    "s_k of the position-bias table (whatever their distance), the T5 bucket of k - q otherwise: the "
    "segment-pair rows follow the position rows, query segment major.",
    "https://github.com/OpenBMB/CPM-Live/blob/master/cpm-live/cpm_live/layers/position_embedding.py",
)


def _table(rows: int, heads: int, seed: int) -> F:
    """Dyadic entries (multiples of 1/16 in [-16, 16]), a different value almost everywhere."""
    return F(_dyadic(seed, (rows, heads), denominator=16))


# --- LayoutLMv2/v3, PP-DocLayout-V2 --------------------------------------------------------------------


def _layout_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("max_rel_pos", 128)
    inputs.setdefault("max_rel_2d_pos", 256)
    inputs.setdefault("head_dim", 64)
    for name in ("positions", "bbox"):
        if not isinstance(inputs[name], F):
            inputs[name] = I(inputs[name])
    case(f"t5_layout_bias/{id}", comment, flags, error, **inputs)


# boxes whose left edges span 0..1000 (saturating both ways at 256) and whose top and bottom edges
# differ in order (a wrong edge reads other distances)
_BOXES = [
    [0, 900, 40, 910],
    [12, 20, 60, 400],
    [100, 300, 140, 330],
    [400, 10, 480, 30],
    [650, 700, 690, 705],
    [1000, 40, 1000, 980],
]
_layout_case(
    "layoutlmv3/base",
    "LayoutLMv3-base: positions 2..7 (RoBERTa offset), six boxes, 32/128 and 64/256 buckets, head_dim 64.",
    ("Basic", _EDGES, _SCALE, "T5Saturation"),
    positions=list(range(2, 8)),
    bbox=_BOXES,
    table=_table(32, 2, 901),
    x_table=_table(64, 2, 902),
    y_table=_table(64, 2, 903),
)
_layout_case(
    "layoutlmv2/unscaled",
    "LayoutLMv2 adds its bias unscaled: head_dim null, the same boxes, three heads.",
    (_EDGES, _SCALE),
    positions=list(range(6)),
    bbox=_BOXES,
    table=_table(32, 3, 904),
    x_table=_table(64, 3, 905),
    y_table=_table(64, 3, 906),
    head_dim=None,
)
_layout_case(
    "edges/top-vs-bottom",
    "Equal bottom edges, top edges far apart (and the reverse): only bbox[..., 3] moves y's buckets.",
    (_EDGES,),
    positions=list(range(4)),
    bbox=[[0, 0, 10, 500], [0, 480, 10, 500], [5, 100, 20, 120], [5, 100, 20, 900]],
    table=_table(32, 2, 907),
    x_table=_table(64, 2, 908),
    y_table=_table(64, 2, 909),
)
_layout_case(
    "batched",
    "Two documents [2, 5] with their own positions and boxes.",
    ("BatchedPositions",),
    positions=[[2, 3, 4, 5, 6], [2, 3, 4, 1, 1]],
    bbox=[_BOXES[:5], [[5, 5, 9, 9], [700, 5, 900, 40], [0, 0, 0, 0], [0, 0, 0, 0], [0, 0, 0, 0]]],
    table=_table(32, 2, 910),
    x_table=_table(64, 2, 911),
    y_table=_table(64, 2, 912),
)
_layout_case(
    "pp_doclayout_v2/one-d",
    "PP-DocLayout-V2's reading-order encoder: the 1-D bias only (zero x/y tables), head_dim 16.",
    (_SCALE, "T5Saturation"),
    positions=[0, 1, 2, 9, 40, 200, 201],
    bbox=[[0, 0, 1, 1]] * 7,
    table=_table(32, 2, 913),
    x_table=F([[0.0, 0.0]] * 64),
    y_table=F([[0.0, 0.0]] * 64),
    head_dim=16,
)
_layout_case(
    "head-dim-12",
    "head_dim 12: sqrt(12) is irrational, the division rounds once.",
    (_SCALE, "T5NonStandard"),
    positions=list(range(5)),
    bbox=_BOXES[:5],
    table=_table(32, 2, 914),
    x_table=_table(64, 2, 915),
    y_table=_table(64, 2, 916),
    head_dim=12,
)
_layout_case(
    "nonstandard-16-64",
    "16 1-D buckets up to 64, 32 2-D buckets up to 128, positions far into a long document.",
    ("T5NonStandard", "T5BucketBoundary"),
    positions=[70000, 70003, 70011, 70080, 70100],
    bbox=[[0, 0, 1, 1], [3, 5, 4, 9], [90, 0, 100, 60], [91, 200, 120, 130], [500, 1, 501, 2]],
    table=_table(16, 2, 917),
    x_table=_table(32, 2, 918),
    y_table=_table(32, 2, 919),
    max_rel_pos=64,
    max_rel_2d_pos=128,
)
_layout_case(
    "invalid/bbox-3",
    "Boxes have four coordinates.",
    (),
    ("ValueError", "bbox"),
    positions=[0, 1],
    bbox=[[0, 0, 1], [1, 1, 2]],
    table=_table(32, 2, 920),
    x_table=_table(64, 2, 921),
    y_table=_table(64, 2, 922),
)
_layout_case(
    "invalid/y-table-rows",
    "x_table and y_table share rel_2d_pos_bins.",
    (),
    ("ValueError", "y_table"),
    positions=[0, 1],
    bbox=[[0, 0, 1, 1], [1, 1, 2, 2]],
    table=_table(32, 2, 923),
    x_table=_table(64, 2, 924),
    y_table=_table(32, 2, 925),
)
_layout_case(
    "invalid/float-positions",
    "Positions must be integers.",
    (),
    ("TypeError", "positions"),
    positions=F([0.0, 1.0]),
    bbox=[[0, 0, 1, 1], [1, 1, 2, 2]],
    table=_table(32, 2, 926),
    x_table=_table(64, 2, 927),
    y_table=_table(64, 2, 928),
)

# --- UDOP ---------------------------------------------------------------------------------------------


def _udop_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("max_distance", 128)
    inputs.setdefault("max_distance_2d", 100)
    inputs.setdefault("scaling_factor", 100.0)
    inputs.setdefault("prefix_buckets", False)
    if not isinstance(inputs["bbox"], (F, I)):
        inputs["bbox"] = F(inputs["bbox"])
    case(f"t5_udop_bias/{id}", comment, flags, error, **inputs)


def _box(x0: int, y0: int, x1: int, y1: int) -> list[float]:
    """A box in 1/64 units (centres are multiples of 1/128: 100 * distance is exact in float32)."""
    return [x0 / 64, y0 / 64, x1 / 64, y1 / 64]


_UDOP = [_box(0, 0, 8, 4), _box(2, 1, 10, 6), _box(30, 2, 40, 8), _box(60, 40, 64, 44), _box(1, 60, 3, 64)]
_udop_case(
    "default",
    "UDOP's three modules: 1-D 32/128, horizontal and vertical 32/100 with scaling_factor 100.",
    ("Basic", _TRUNC, "T5Saturation"),
    bbox=_UDOP,
    table=_table(32, 2, 931),
    x_table=_table(32, 2, 932),
    y_table=_table(32, 2, 933),
)
_udop_case(
    "truncation",
    "Centre distances of 1/128 and 3/128 (100 d = 0.78, 2.34): truncated toward zero, both signs.",
    (_TRUNC,),
    bbox=[_box(0, 0, 2, 2), _box(1, 0, 2, 3), _box(0, 3, 5, 2), _box(10, 10, 10, 10)],
    table=_table(32, 2, 934),
    x_table=_table(32, 2, 935),
    y_table=_table(32, 2, 936),
)
_udop_case(
    "prefix",
    "prefix_bucket: the first two tokens have y0 < 0; every table has 32 + 2 rows.",
    (_PREFIX,),
    bbox=[[0.0, -1.0, 0.0, -1.0], [0.0, -1.0, 0.0, -1.0], *_UDOP[:4]],
    table=_table(34, 2, 937),
    x_table=_table(34, 2, 938),
    y_table=_table(34, 2, 939),
    prefix_buckets=True,
)
_udop_case(
    "prefix-batched",
    "Two documents with 0 and 3 prefix tokens: the counts are per document.",
    (_PREFIX, "BatchedPositions"),
    bbox=[_UDOP, [[0.0, -1.0, 0.0, -1.0]] * 3 + _UDOP[:2]],
    table=_table(34, 3, 940),
    x_table=_table(34, 3, 941),
    y_table=_table(34, 3, 942),
    prefix_buckets=True,
)
_udop_case(
    "nonstandard",
    "scaling_factor 50, 2-D buckets 16 up to 40, 1-D 64 up to 256.",
    ("T5NonStandard", _TRUNC),
    bbox=_UDOP,
    table=_table(64, 2, 943),
    x_table=_table(16, 2, 944),
    y_table=_table(16, 2, 945),
    max_distance=256,
    max_distance_2d=40,
    scaling_factor=50.0,
)
_udop_case(
    "invalid/scaling-factor",
    "scaling_factor must be positive.",
    (),
    ("ValueError", "scaling_factor"),
    bbox=_UDOP[:2],
    table=_table(32, 2, 946),
    x_table=_table(32, 2, 947),
    y_table=_table(32, 2, 948),
    scaling_factor=0.0,
)
_udop_case(
    "invalid/bbox-3",
    "Boxes have four coordinates.",
    (),
    ("ValueError", "bbox"),
    bbox=[[0.0, 0.0, 0.5], [0.25, 0.0, 0.75]],
    table=_table(32, 2, 949),
    x_table=_table(32, 2, 950),
    y_table=_table(32, 2, 951),
)

# --- WavLM ----------------------------------------------------------------------------------------------


def _gated_case(
    id: str,
    comment: str,
    flags: Any,
    heads: int,
    length: int,
    dim: int,
    seed: int,
    error: Any = None,
    **kw: Any,
) -> None:
    batch = kw.pop("batch", None)
    shape = (heads, length, dim) if batch is None else (batch, heads, length, dim)
    inputs = {
        "hidden": F(_dyadic(seed, shape, denominator=64)),
        "table": kw.pop("table", None) or _table(320, heads, seed + 1),
        "gate_weight": F(kw.pop("gate_weight", None) or _dyadic(seed + 2, (8, dim), denominator=128)),
        "gate_bias": F(_dyadic(seed + 3, (8,), denominator=64)),
        "gate_const": F(kw.pop("gate_const", None) or [1.0] * heads),
        "max_distance": kw.pop("max_distance", 800),
    }
    case(f"t5_gated_bias/{id}", comment, flags, error, **inputs)


_gated_case(
    "wavlm-base",
    "WavLM-base's 320 buckets up to 800, gate constant 1 (its initial value): 2 heads, 12 frames, Dh 8.",
    ("Basic", _GATE),
    2,
    12,
    8,
    961,
)
_gated_case(
    "learned-const",
    "A learned per-head gate constant (0.75, -1.5, 2.25): the gate's b c - 1 per head.",
    (_GATE,),
    3,
    10,
    4,
    965,
    gate_const=[0.75, -1.5, 2.25],
)
_gated_case(
    "saturation-32-16",
    "32 buckets saturating at 16 over 40 frames: the gated bias of the last buckets.",
    (_GATE, "T5Saturation", "T5NonStandard"),
    2,
    40,
    4,
    969,
    table=_table(32, 2, 970),
    max_distance=16,
)
_gated_case(
    "batched",
    "Two utterances [2, H, L, Dh]: the gate is per utterance, the bias shared.",
    (_GATE, "BatchedPositions"),
    2,
    6,
    4,
    973,
    batch=2,
)
_gated_case(
    "invalid/gate-weight",
    "gru_rel_pos_linear maps Dh to 8 channels.",
    (),
    2,
    4,
    4,
    977,
    error=("ValueError", "gate_weight"),
    gate_weight=_dyadic(978, (4, 4)),
)

# --- ProphetNet -------------------------------------------------------------------------------------


def _stream_case(id: str, comment: str, flags: Any, positions: Any, error: Any = None, **kw: Any) -> None:
    case(
        f"t5_stream_buckets/{id}",
        comment,
        flags,
        error,
        positions=positions if isinstance(positions, F) else I(positions),
        num_buckets=kw.get("num_buckets", 32),
        max_distance=kw.get("max_distance", 128),
    )


_stream_case(
    "default",
    "ProphetNet's decoder positions 1..24 (padding_idx + 1 onwards), 32 buckets up to 128.",
    ("Basic", _STREAM, "T5Causal"),
    list(range(1, 25)),
)
_stream_case(
    "saturation",
    "Positions 0 .. 250 in uneven steps: the causal boundaries 112/113 and saturation.",
    (_STREAM, "T5Causal", "T5Saturation", "T5BucketBoundary"),
    [0, 1, 15, 16, 17, 100, 113, 114, 126, 129, 250],
)
_stream_case(
    "batched",
    "Two rows with their own positions [2, 6].",
    (_STREAM, "BatchedPositions"),
    [[1, 2, 3, 4, 5, 6], [40, 41, 42, 43, 44, 45]],
)
_stream_case(
    "64-256",
    "64 buckets up to 256.",
    (_STREAM, "T5NonStandard", "T5Causal"),
    list(range(0, 400, 13)),
    num_buckets=64,
    max_distance=256,
)
_stream_case(
    "invalid/num-buckets",
    "num_buckets must be >= 2.",
    (),
    [0, 1, 2],
    ("ValueError", "num_buckets"),
    num_buckets=1,
)
_stream_case(
    "invalid/float-positions",
    "Positions must be integers.",
    (),
    F([0.0, 1.0]),
    ("TypeError", "positions"),
)

# --- CPM-Ant --------------------------------------------------------------------------------------------


def _segment_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("num_segments", 32)
    inputs.setdefault("max_distance", 2048)
    for name in ("q_positions", "k_positions", "q_segments", "k_segments"):
        if not isinstance(inputs[name], F):
            inputs[name] = I(inputs[name])
    case(f"t5_segment_bias/{id}", comment, flags, error, **inputs)


_CPM_SEG = [0] * 4 + [2] * 10  # CPM-Ant: its prompt tokens in segment 0, text in segment 2
_segment_case(
    "cpmant-default",
    "CPM-Ant's defaults: 512 buckets up to 2048, 32 segment types, a 4-token prompt (0) then text (2).",
    ("Basic", _SEGMENT),
    q_positions=list(range(14)),
    k_positions=list(range(14)),
    q_segments=_CPM_SEG,
    k_segments=_CPM_SEG,
    table=_table(512 + 32 * 32, 2, 981),
)
_segment_case(
    "three-segments",
    "3 segment types in any order, 32 buckets up to 128: every segment pair's row.",
    (_SEGMENT, "T5NonStandard"),
    q_positions=list(range(9)),
    k_positions=list(range(9)),
    q_segments=[0, 1, 2, 2, 1, 0, 0, 2, 1],
    k_segments=[0, 1, 2, 2, 1, 0, 0, 2, 1],
    table=_table(32 + 9, 3, 982),
    num_segments=3,
    max_distance=128,
)
_segment_case(
    "decode-step",
    "One query at 300 over keys 0..300 (a KV cache): the distances saturate, the segments still switch.",
    (_SEGMENT, "KVCacheOffset", "T5Saturation"),
    q_positions=[300],
    k_positions=list(range(0, 301, 4)),
    q_segments=[1],
    k_segments=[0] * 10 + [1] * 66,
    table=_table(32 + 4, 2, 983),
    num_segments=2,
    max_distance=128,
)
_segment_case(
    "batched",
    "Two rows [2, 6] with their own segments.",
    (_SEGMENT, "BatchedPositions"),
    q_positions=[list(range(6)), list(range(6))],
    k_positions=[list(range(6)), list(range(6))],
    q_segments=[[0, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]],
    k_segments=[[0, 0, 1, 1, 1, 1], [1, 1, 1, 0, 0, 0]],
    table=_table(32 + 4, 2, 984),
    num_segments=2,
    max_distance=128,
)
_segment_case(
    "invalid/segment-range",
    "Segment ids must lie in [0, num_segments).",
    ("DataDependentCheck",),
    ("ValueError", "q_segments"),
    q_positions=[0, 1],
    k_positions=[0, 1],
    q_segments=[0, 2],
    k_segments=[0, 1],
    table=_table(32 + 4, 2, 985),
    num_segments=2,
    max_distance=128,
)
_segment_case(
    "invalid/table-rows",
    "The table needs num_buckets >= 4 rows beyond the num_segments**2 segment pairs.",
    (),
    ("ValueError", "table"),
    q_positions=[0, 1],
    k_positions=[0, 1],
    q_segments=[0, 1],
    k_segments=[0, 1],
    table=_table(4 + 2, 2, 986),
    num_segments=2,
    max_distance=128,
)
