"""DeBERTa disentangled attention: declarations and cases of the log bucket and of the relative-embedding
rows the content-to-position and position-to-content terms read."""

from __future__ import annotations

from typing import Any

from ... import oracle
from ..functions import FunctionSpec, declare, flatten, per_batch, reshape, shape_of
from ..notes import add_note
from ._common import F, I, case

# --- declarations ------------------------------------------------------------------------------


def _buckets(inp: dict[str, Any]) -> dict[str, Any]:
    fn = oracle.deberta.bucket_float32 if inp["arithmetic"] == "float32" else oracle.deberta.bucket
    flat = [fn(r, inp["position_buckets"], inp["max_relative_positions"]) for r in flatten(inp["relative"])]
    return {"buckets": reshape(flat, shape_of(inp["relative"]))}


def _index(inp: dict[str, Any]) -> dict[str, Any]:
    def rows(q: Any, k: Any) -> Any:
        return oracle.deberta.relative_index(
            q,
            k,
            inp["position_buckets"],
            inp["max_relative_positions"],
            inp["term"],
            inp["arithmetic"],
        )

    return {"index": per_batch(inp["q_positions"], inp["k_positions"], rows)}


declare(
    FunctionSpec(
        "deberta_bucket",
        "deberta",
        "deberta_bucket(relative, position_buckets, max_relative_positions, arithmetic) -> buckets: r for "
        "|r| <= m, else sign(r) (m + ceil((m-1) ln(|r|/m) / ln((M-1)/m))), m = position_buckets // 2",
        {
            "relative": ("positions", "int64 array (query - key)"),
            "position_buckets": ("int", "int (HF config.position_buckets)"),
            "max_relative_positions": ("int", "int (HF max_relative_positions)"),
            "arithmetic": ("string", "exact | float32"),
        },
        {"buckets": "int"},
        _buckets,
        positional=1,
        output_kind="int",
    )
)
declare(
    FunctionSpec(
        "deberta_relative_index",
        "deberta",
        "deberta_relative_index(q_positions[..., Lq], k_positions[..., Lk], position_buckets, "
        "max_relative_positions, term, arithmetic) -> index[..., Lq, Lk] = clamp(b(q - k) + S, 0, 2S - 1) "
        "(c2p) or clamp(-b(k - q) + S, 0, 2S - 1) (p2c)",
        {
            "q_positions": ("positions", "int64 [..., Lq]"),
            "k_positions": ("positions", "int64 [..., Lk]"),
            "position_buckets": ("int", "int; <= 0: no buckets (HF -1, DeBERTa v1)"),
            "max_relative_positions": ("int", "int (HF max_relative_positions)"),
            "term": ("string", "c2p | p2c"),
            "arithmetic": ("string", "exact | float32"),
        },
        {"index": "int"},
        _index,
        positional=2,
        output_kind="int",
    )
)

# --- notes -------------------------------------------------------------------------------------

_LOG = add_note(
    "DebertaLogBucket",
    "ConventionMismatch",
    "DeBERTa-v2's log bucket of r = q - k (query minus key, the opposite sign of T5's): r itself up to "
    "|r| = position_buckets // 2, then sign(r) (mid + ceil(...)) with a ceiling (T5 floors) and no "
    "saturation (|r| = max_relative_positions - 1 is bucket 2 mid - 1, farther ones larger).",
    "https://arxiv.org/abs/2006.03654",
    "https://github.com/microsoft/DeBERTa",
)
_FLOAT32 = add_note(
    "DebertaFloat32Bucket",
    "NumericalPrecision",
    "HF evaluates the log term in float32 (abs_pos / mid, log, the division by a float32 log and the "
    "product by mid - 1); near an integer the float32 ceiling is one bucket below or above the exact one "
    "(512/4096 at |r| = 1643: 427, exact 428).  arithmetic names which.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/deberta_v2/"
    "modeling_deberta_v2.py",
)
_SPAN = add_note(
    "DebertaSpan",
    "ConventionMismatch",
    "The rows of the relative embedding table: b + S clamped to [0, 2S - 1], S = position_buckets when "
    "positive, else max_relative_positions.  DeBERTa v1 slices rows [M - s, M + s) with s = "
    "min(max(Lq, Lk), M) and gathers there: the same rows of the whole table for arange positions.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/deberta/modeling_deberta.py",
)
_P2C = add_note(
    "DebertaP2C",
    "ConventionMismatch",
    "The position-to-content term: key j of query i reads Q_r[clamp(-b(k_j - q_i) + S)], gathered "
    "key-major and transposed (the same row as c2p: the bucket is odd).  With Lq != Lk the key-major "
    "table must still pair each key with the real query positions.",
    "https://arxiv.org/abs/2006.03654",
)
_UNEQUAL = add_note(
    "DebertaUnequalLengths",
    "ConventionMismatch",
    "Query and key lengths differ (a query block over a longer memory, one decoding query): HF rebuilds "
    "the p2c positions from the keys alone, with the bucket parameters passed in swapped order "
    "(build_rpos) in DeBERTa-v2.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/deberta_v2/"
    "modeling_deberta_v2.py",
)
_ODD = add_note(
    "DebertaOddBuckets",
    "EdgeCase",
    "An odd position_buckets: mid = position_buckets // 2, but the table has 2 position_buckets rows and "
    "S = position_buckets; position_buckets 2 or 3 (mid 1) puts every |r| > 1 in bucket +-1.",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/deberta_v2/"
    "modeling_deberta_v2.py",
)

# --- deberta_bucket ----------------------------------------------------------------------------


def _bucket_case(
    name: str,
    comment: str,
    flags: Any,
    relative: Any,
    position_buckets: int,
    max_relative_positions: int,
    arithmetic: str,
    error: Any = None,
) -> None:
    case(
        f"deberta_bucket/{arithmetic}/{name}",
        comment,
        flags,
        error,
        relative=relative if isinstance(relative, F) else I(relative),
        position_buckets=position_buckets,
        max_relative_positions=max_relative_positions,
        arithmetic=arithmetic,
    )


for _ar in ("exact", "float32"):
    _bucket_case(
        "256-512-range",
        "DeBERTa-v3 / SEW-D: r -1100..1100; exact to 128, bucket 255 at |r| = 511 (a tie), growing after.",
        ("Basic", _LOG),
        list(range(-1100, 1101)),
        256,
        512,
        _ar,
    )
    _bucket_case(
        "4-8-range",
        "4 buckets (mid 2), max_relative_positions 8: r -40..40.",
        (_LOG,),
        list(range(-40, 41)),
        4,
        8,
        _ar,
    )
    _bucket_case(
        "7-20-odd",
        "An odd position_buckets 7 (mid 3): r -60..60.",
        (_LOG, _ODD),
        list(range(-60, 61)),
        7,
        20,
        _ar,
    )
    _bucket_case(
        "2-5-mid-1",
        "position_buckets 2 (mid 1, mid - 1 = 0): every |r| > 1 is bucket +-1.",
        (_ODD,),
        list(range(-12, 13)),
        2,
        5,
        _ar,
    )
    _bucket_case(
        "256-512-far",
        "Far distances up to 2**62 - 1: no saturation, the bucket grows as the log.",
        (_LOG,),
        [-(2**62) + 1, -(2**40), -(2**24) - 1, -(10**6), 10**6, 2**24 + 1, 2**40, 2**62 - 1],
        256,
        512,
        _ar,
    )
    _bucket_case(
        "2d-relative",
        "A [5, 7] table q - k of queries 0..4 over keys 0..6 (mid 4).",
        (_LOG, "BatchedPositions"),
        [[q - k for k in range(7)] for q in range(5)],
        8,
        16,
        _ar,
    )
for _pb, _mp, _r, _what in (
    (512, 4096, 1643, "float32 427, exact 428"),
    (768, 3072, 2341, "float32 717, exact 718"),
    (64, 256, 10134, "float32 118, exact 119"),
    (256, 256, 1292, "float32 554, exact 555"),
):
    for _ar in ("exact", "float32"):
        _bucket_case(
            f"{_pb}-{_mp}-boundary",
            f"|r| = {_r} with {_pb}/{_mp}: {_what} (the log term within float32 rounding of an integer).",
            (_FLOAT32,),
            [-_r - 1, -_r, -_r + 1, _r - 1, _r, _r + 1],
            _pb,
            _mp,
            _ar,
        )
_bucket_case(
    "invalid-position-buckets",
    "position_buckets 1 (mid 0: HF divides by zero).",
    (),
    [0, 1],
    1,
    512,
    "exact",
    ("ValueError", "position_buckets"),
)
_bucket_case(
    "invalid-max-relative-positions",
    "max_relative_positions 129 with 256 buckets: ln((M - 1) / mid) = 0 (HF: inf and NaN).",
    (),
    [0, 200],
    256,
    129,
    "exact",
    ("ValueError", "max_relative_positions"),
)
_bucket_case(
    "invalid-arithmetic",
    "An unknown arithmetic.",
    (),
    [0, 200],
    256,
    512,
    "float16",
    ("ValueError", "arithmetic"),
)
_bucket_case(
    "invalid-float-relative",
    "Relative positions must be integers.",
    (),
    F([0.0, 200.0]),
    256,
    512,
    "exact",
    ("TypeError", "relative"),
)

# --- deberta_relative_index ----------------------------------------------------------------------


def _index_case(
    name: str,
    comment: str,
    flags: Any,
    q: Any,
    k: Any,
    position_buckets: int,
    max_relative_positions: int,
    term: str,
    arithmetic: str = "float32",
    error: Any = None,
) -> None:
    case(
        f"deberta_relative_index/{term}/{name}",
        comment,
        flags,
        error,
        q_positions=q if isinstance(q, F) else I(q),
        k_positions=k if isinstance(k, F) else I(k),
        position_buckets=position_buckets,
        max_relative_positions=max_relative_positions,
        term=term,
        arithmetic=arithmetic,
    )


def _ar(n: int) -> list[int]:
    return list(range(n))


for _term in ("c2p", "p2c"):
    _extra = (_P2C,) if _term == "p2c" else ()
    _index_case(
        "self-48-16-32",
        "Self-attention over 48 tokens, 16 buckets, max_relative_positions 32: the clamp at |b| >= 16.",
        ("Basic", _LOG, _SPAN, *_extra),
        _ar(48),
        _ar(48),
        16,
        32,
        _term,
    )
    _index_case(
        "q4-k400-256-512",
        "4 queries over 400 keys with DeBERTa-v3's 256/512: r down to -399 (log buckets and the clamp).",
        (_UNEQUAL, _LOG, *_extra),
        _ar(4),
        _ar(400),
        256,
        512,
        _term,
    )
    _index_case(
        "q40-k6-16-32",
        "40 queries over 6 keys (queries outnumber keys).",
        (_UNEQUAL, _SPAN, *_extra),
        _ar(40),
        _ar(6),
        16,
        32,
        _term,
    )
    _index_case(
        "q1-k40-16-32",
        "One query (decoding) over 40 keys.",
        (_UNEQUAL, *_extra),
        _ar(1),
        _ar(40),
        16,
        32,
        _term,
    )
    _index_case(
        "v1-self-12-8",
        "No buckets (DeBERTa v1; HF's -1, here 0), 12 tokens, max_relative_positions 8: rows clamp at 0, 15.",
        (_SPAN, *_extra),
        _ar(12),
        _ar(12),
        0,
        8,
        _term,
    )
    _index_case(
        "v1-q5-k3-16",
        "No buckets, 5 queries over 3 keys < max_relative_positions 16 (v1's span is 5: rows 16 + r of 32).",
        (_SPAN, _UNEQUAL, *_extra),
        _ar(5),
        _ar(3),
        0,
        16,
        _term,
    )
    _index_case(
        "v1-q1-k6-16",
        "No buckets, one query over 6 keys.",
        (_SPAN, _UNEQUAL, *_extra),
        _ar(1),
        _ar(6),
        0,
        16,
        _term,
    )
    _index_case(
        "odd-7-20",
        "position_buckets 7 (mid 3, S = 7: 14 rows), 30 tokens.",
        (_ODD, _SPAN, *_extra),
        _ar(30),
        _ar(30),
        7,
        20,
        _term,
    )
    _index_case(
        "batched",
        "Per-batch positions [2, 3] over [2, 5] (a shifted second row): only differences matter.",
        ("BatchedPositions", *_extra),
        [[0, 1, 2], [7, 8, 9]],
        [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]],
        4,
        8,
        _term,
    )
for _arith in ("exact", "float32"):
    _index_case(
        f"boundary-512-4096-{_arith}",
        "1644 queries over one key with 512/4096: q - k = 1643 reads row 940 (exact) or 939 (float32).",
        (_FLOAT32, _UNEQUAL),
        _ar(1644),
        _ar(1),
        512,
        4096,
        "c2p",
        _arith,
    )
_index_case(
    "invalid-term",
    "An unknown term (DeBERTa's p2p is not a gather of the relative table).",
    (),
    _ar(3),
    _ar(3),
    16,
    32,
    "p2p",
    error=("ValueError", "term"),
)
_index_case(
    "invalid-max-relative-positions",
    "max_relative_positions 0 (HF replaces values < 1 by max_position_embeddings: pass that).",
    (_SPAN,),
    _ar(3),
    _ar(3),
    0,
    0,
    "c2p",
    error=("ValueError", "max_relative_positions"),
)
_index_case(
    "invalid-position-buckets",
    "position_buckets 1 (mid 0).",
    (),
    _ar(3),
    _ar(3),
    1,
    32,
    "c2p",
    error=("ValueError", "position_buckets"),
)
_index_case(
    "invalid-float-positions",
    "Positions must be integers.",
    (),
    F([0.0, 1.0]),
    _ar(3),
    16,
    32,
    "c2p",
    error=("TypeError", "q_positions"),
)
