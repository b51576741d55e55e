"""T5 relative attention bias: declarations and cases of the bucket function and the table lookup."""

from __future__ import annotations

from typing import Any

from ... import oracle
from ..functions import FunctionSpec, declare, flatten, per_batch, reshape, shape_of, tol
from ..notes import add_note
from ._common import F, I, _dyadic, case

# --- declarations ------------------------------------------------------------------------------


def _buckets(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {k: inp[k] for k in ("bidirectional", "num_buckets", "max_distance")}
    flat = flatten(inp["relative"])
    exact = [oracle.t5.t5_bucket(r, **kw) for r in flat]
    float32 = [oracle.t5.t5_bucket_float32(r, **kw) for r in flat]
    shape = shape_of(inp["relative"])
    out = {"buckets": reshape(exact, shape)}
    if exact != float32:
        out["acceptable:buckets"] = reshape(float32, shape)
    return out


def _t5_bias(inp: dict[str, Any]) -> dict[str, Any]:
    def bias(float32: bool) -> Any:
        return per_batch(
            inp["q_positions"],
            inp["k_positions"],
            lambda q, k: oracle.t5.t5_bias(
                q,
                k,
                inp["table"],
                bidirectional=inp["bidirectional"],
                max_distance=inp["max_distance"],
                float32=float32,
            ),
        )

    out = {"bias": bias(False)}
    alternative = bias(True)
    if alternative != out["bias"]:
        out["acceptable:bias"] = alternative
    return out


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
        _buckets,
        positional=1,
        output_kind="int",
    )
)
declare(
    FunctionSpec(
        "t5_bias",
        "t5",
        "t5_bias(q_positions[..., Lq], k_positions[..., Lk], table[num_buckets, H], bidirectional, "
        "max_distance) -> bias[..., H, Lq, Lk] = table[bucket(k - q), h]",
        {
            "q_positions": ("positions", "int64 [..., Lq]"),
            "k_positions": ("positions", "int64 [..., Lk]"),
            "table": ("float", "float64 [num_buckets, H] (HF relative_attention_bias.weight)"),
            "bidirectional": ("bool", "bool"),
            "max_distance": ("int", "int"),
        },
        {"bias": "float"},
        _t5_bias,
        positional=3,
        cast_inputs=("table",),
        tolerances=tol(),  # a lookup: the table's own values, exactly
    )
)

# --- T5 buckets ----------------------------------------------------------------------------------------


def _bucket_case(
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


_bucket_case(
    "32-128-range",
    "rp -200..200: boundaries 90/91, bucket 16 unused.",
    ("Basic", "T5BucketBoundary", "T5UnusedBucket"),
    list(range(-200, 201)),
    True,
)
_bucket_case(
    "32-128-range",
    "rp -200..20: boundaries 112/113; keys after the query in bucket 0.",
    ("Basic", "T5BucketBoundary", "T5Causal"),
    list(range(-200, 21)),
    False,
)
for _nb, _md in [(64, 128), (32, 256), (16, 64), (128, 1024)]:
    _lim = 2 * _md + 10
    for _bid in (True, False):
        _bucket_case(
            f"{_nb}-{_md}-range",
            f"num_buckets {_nb}, max_distance {_md}, every distance up to {_lim}.",
            ("T5BucketBoundary", "T5NonStandard")
            + (("T5UnusedBucket",) if _bid and _nb == 64 else ())
            + (() if _bid else ("T5Causal",)),
            list(range(-_lim, _lim + 1, 1 if _md < 1024 else 3)),
            _bid,
            _nb,
            _md,
        )
for _nb, _md in [(20, 50), (33, 100), (4, 8)]:
    for _bid in (True, False):
        _bucket_case(
            f"{_nb}-{_md}-range",
            f"Non-standard num_buckets {_nb}, max_distance {_md}.",
            "T5NonStandard",
            list(range(-2 * _md - 3, 2 * _md + 4)),
            _bid,
            _nb,
            _md,
        )
for _nb, _md, _lim, _model in [(320, 800, 2000, "WavLM"), (512, 2048, 5000, "CPM-Ant")]:
    _bucket_case(
        f"{_nb}-{_md}-range",
        f"{_model}'s {_nb} buckets up to {_md}: distances up to {_lim}.",
        ("T5BucketBoundary", "T5NonStandard"),
        list(range(-_lim, _lim + 1, 1 if _nb < 512 else 3)),
        True,
        _nb,
        _md,
    )
_bucket_case(
    "saturation",
    "Huge distances stay in the last bucket.",
    "T5Saturation",
    [-(2**40), -(2**24) - 1, -(2**20), 2**20, 2**24 + 1, 2**40],
    True,
)
_bucket_case(
    "saturation",
    "Huge distances stay in the last bucket.",
    ("T5Saturation", "T5Causal"),
    [-(2**40), -(2**24) - 1, -(2**20), 2**20],
    False,
)
_bucket_case(
    "2d-relative",
    "A [4, 5] relative matrix (queries 2..5, keys 0..4).",
    "BatchedPositions",
    [[k - q for k in range(5)] for q in range(2, 6)],
    True,
)
_bucket_case(
    "36-50-tie",
    "rp = -30: the log term is exactly 9; float32 gives 8.99999.",
    ("T5FloatBoundary", "T5Causal"),
    [-29, -30, -31],
    False,
    36,
    50,
)
_bucket_case(
    "55-32768-float32",
    "rp = -3343: just below a bucket boundary; float32 rounds up.",
    ("T5FloatBoundary", "T5Causal"),
    [-3342, -3343, -3344],
    False,
    55,
    32768,
)
_bucket_case(
    "1000-32768-float32",
    "|rp| = 21756: float32 rounds up to the next bucket.",
    "T5FloatBoundary",
    [-21757, -21756, 21756, 21757],
    True,
    1000,
    32768,
)
_bucket_case(
    "9-128-exact-ties",
    "rp = -8, -16, -64: exact ties (float64 gives one bucket less).",
    ("T5FloatBoundary", "T5Causal"),
    [-8, -16, -64],
    False,
    9,
    128,
)
_bucket_case(
    "invalid-num-buckets",
    "num_buckets must be >= 2.",
    (),
    [0, 1],
    False,
    1,
    128,
    ("ValueError", "num_buckets"),
)
_bucket_case(
    "invalid-max-distance",
    "max_distance must exceed max_exact (8 for 32 bidirectional).",
    (),
    [0, 1],
    True,
    32,
    8,
    ("ValueError", "max_distance"),
)
_bucket_case(
    "invalid-float-relative",
    "Relative positions must be integers.",
    (),
    F([0.0, 1.0]),
    True,
    error=("TypeError", "relative"),
)


# --- T5 bias: the table lookup ----------------------------------------------------------------------------

_PER_LAYER = add_note(
    "T5PerLayerTable",
    "ConventionMismatch",
    "UMT5 gives every self-attention layer its own relative_attention_bias table; T5 computes the bias "
    "in the first layer and reuses it.  The same positions with two layers' tables give two biases: "
    "an implementation that shares layer 0's table (T5's rule) fails the other layer.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/umt5/modeling_umt5.py",
)


def _table(num_buckets: int, heads: int, *, step: float = 1.0) -> list[list[float]]:
    """A table whose every entry differs (row b, head h: +-(b + 1 + h/4) * step / 8): a wrong bucket shows."""
    return [[(-1) ** h * (b + 1 + h / 4) * step / 8 for h in range(heads)] for b in range(num_buckets)]


def _bias_case(id: str, comment: str, flags: Any, error: Any = None, **inputs: Any) -> None:
    inputs.setdefault("bidirectional", True)
    inputs.setdefault("max_distance", 128)
    for name in ("q_positions", "k_positions"):
        if not isinstance(inputs[name], F):
            inputs[name] = I(inputs[name])
    case(f"t5_bias/{id}", comment, flags, error, **inputs)


_bias_case(
    "bidirectional/32-128-range",
    "Queries 0, 100, 200 over keys 0..300 (relative -200..300): every bucket of 32/128 but 16.",
    ("Basic", "T5BucketBoundary", "T5UnusedBucket", "T5Saturation"),
    q_positions=[0, 100, 200],
    k_positions=list(range(301)),
    table=F(_table(32, 2)),
)
_bias_case(
    "bidirectional/compute-bias-130",
    "HF compute_bias(4, 264, past_seen_tokens=130): relative -133..133, both saturations.",
    ("T5BucketBoundary", "T5UnusedBucket", "T5Saturation", "KVCacheOffset"),
    q_positions=list(range(130, 134)),
    k_positions=list(range(264)),
    table=F(_table(32, 2)),
)
_bias_case(
    "causal/32-128-range",
    "Decoder buckets: queries 0, 60, 150 over keys 0..160; keys after a query share bucket 0.",
    ("T5BucketBoundary", "T5Causal", "T5Saturation"),
    q_positions=[0, 60, 150],
    k_positions=list(range(161)),
    table=F(_table(32, 3)),
    bidirectional=False,
)
_bias_case(
    "causal/decode-step",
    "HF compute_bias with a cache: one query at 57 over keys 0..57.",
    ("T5Causal", "KVCacheOffset"),
    q_positions=[57],
    k_positions=list(range(58)),
    table=F(_table(32, 4)),
    bidirectional=False,
)
_bias_case(
    "bidirectional/block-of-70000",
    "A 4 x 40 block far into a long sequence (only the block is built).",
    ("BlockOfLargeBias", "T5Saturation"),
    q_positions=list(range(70000, 70004)),
    k_positions=list(range(69800, 70200, 10)),
    table=F(_table(32, 2)),
)
_bias_case(
    "bidirectional/batched",
    "Per-batch positions [2, 3] and [2, 5] (left padding shifts the second row).",
    "BatchedPositions",
    q_positions=[[0, 1, 2], [7, 8, 9]],
    k_positions=[[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]],
    table=F(_table(32, 2)),
)
_bias_case(
    "bidirectional/64-256-heads-6",
    "64 buckets, max_distance 256, 6 heads: bucket 32 unused.",
    ("T5NonStandard", "T5UnusedBucket"),
    q_positions=[0, 300],
    k_positions=list(range(0, 601, 3)),
    table=F(_table(64, 6)),
    max_distance=256,
)
for _layer, _seed in ((0, 71), (7, 77)):
    for _bid in (True, False):
        _bias_case(
            f"umt5/{'encoder' if _bid else 'decoder'}-layer-{_layer}",
            f"UMT5 {'encoder' if _bid else 'decoder'} layer {_layer}: its own [32, 4] table.",
            (_PER_LAYER,) + (() if _bid else ("T5Causal",)),
            q_positions=list(range(20, 26)),
            k_positions=list(range(48)),
            table=F(_dyadic(_seed + _bid, (32, 4), denominator=16)),
            bidirectional=_bid,
        )
_bias_case(
    "causal/36-50-tie",
    "rp = -30 with 36/50: the log term is exactly 9; HF's float32 gives 8.99999 (both accepted).",
    ("T5FloatBoundary", "T5Causal", "T5NonStandard"),
    q_positions=[31],
    k_positions=[0, 1, 2, 3],
    table=F(_table(36, 1)),
    bidirectional=False,
    max_distance=50,
)
_bias_case(
    "invalid/table-3d",
    "The table must be [num_buckets, H].",
    (),
    ("ValueError", "table"),
    q_positions=[0],
    k_positions=[0, 1],
    table=F([_table(32, 2)]),
)
_bias_case(
    "invalid/max-distance",
    "max_distance must exceed max_exact (8 for 32 bidirectional).",
    (),
    ("ValueError", "max_distance"),
    q_positions=[0],
    k_positions=[0, 1],
    table=F(_table(32, 2)),
    max_distance=8,
)
_bias_case(
    "invalid/float-positions",
    "Positions must be integers.",
    (),
    ("TypeError", "q_positions"),
    q_positions=F([0.0, 1.0]),
    k_positions=[0, 1],
    table=F(_table(32, 2)),
)
