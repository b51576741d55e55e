"""Transformer-XL relative attention: declarations and cases of the distance sequence, its sinusoid
table, the relative shift and the whole logit ``(q + u) k + shift((q + v) R)``."""

from __future__ import annotations

from typing import Any

from ... import oracle
from ..functions import EPS32, EPS64, FunctionSpec, Tolerance, declare, max_abs, shape_of, tol
from ..notes import add_note
from ._common import F, _dyadic, case
from .absolute import _sinusoidal_phase, _sinusoidal_tol

_TABLES = tuple(oracle.transformer_xl.LAYOUT)
_SHIFTS = ("transformer_xl", "xlnet", "gemma3n")

# --- declarations ------------------------------------------------------------------------------


def _positions(inp: dict[str, Any]) -> dict[str, Any]:
    seq = oracle.transformer_xl.positions(
        inp["qlen"], inp["klen"], inp["convention"], inp["clamp_len"], inp["bi_data"]
    )
    return {"positions": seq}


def _as_sinusoidal(inp: dict[str, Any]) -> dict[str, Any]:
    """The case as the sinusoidal call it is: its distances, the layout, no options."""
    seq = oracle.transformer_xl.positions(
        inp["qlen"], inp["klen"], inp["convention"], inp["clamp_len"], inp["bi_data"]
    )
    return {
        "positions": seq,
        "dim": inp["dim"],
        "convention": oracle.transformer_xl.LAYOUT[inp["convention"]],
        "options": {},
    }


def _table(inp: dict[str, Any]) -> dict[str, Any]:
    args = (inp["qlen"], inp["dim"], inp["klen"], inp["convention"], inp["clamp_len"], inp["bi_data"])
    return {"table": oracle.transformer_xl.table(*args)}


def _table_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    return _sinusoidal_tol(_as_sinusoidal(inp), out, flags)


def _table_phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    return _sinusoidal_phase(_as_sinusoidal(inp), out)


def _shift(inp: dict[str, Any]) -> dict[str, Any]:
    return {"out": oracle.transformer_xl.rel_shift(inp["x"], inp["klen"], inp["convention"], inp["shift"])}


def _scores(inp: dict[str, Any]) -> dict[str, Any]:
    args = (inp["q"], inp["k"], inp["r"], inp["u"], inp["v"], inp["convention"], inp["shift"], inp["scale"])
    return {"scores": oracle.transformer_xl.rel_attention_scores(*args)}


def _scores_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    """Two dot products of D terms, each of a biased query (one rounding), summed and scaled.

    Each dot product errs by at most (D + 1) u D max|q + b| max|k or r| (the biased query's rounding
    and D - 1 additions plus the products); the sum and the scale add 2u of the result:
    atol 2 (D + 3) u |s| D (max|q| + max|u, v|) (max|k| + max|r|), 4 ulp.
    """
    width = shape_of(inp["q"])[-1]
    s = width**-0.5 if inp["scale"] is None else abs(float(inp["scale"]))
    bias = max(
        max_abs(inp["u"]) if inp["u"] is not None else 0.0, max_abs(inp["v"]) if inp["v"] is not None else 0.0
    )
    scale = s * width * (max_abs(inp["q"]) + bias) * (max_abs(inp["k"]) + max_abs(inp["r"]))
    bound = 2 * (width + 3) * scale
    return tol(atol64=bound * EPS64, ulp64=4, atol32=bound * EPS32, ulp32=4)


declare(
    FunctionSpec(
        "rel_sinusoid_positions",
        "transformer_xl",
        "rel_sinusoid_positions(qlen, klen, convention, clamp_len, bi_data) -> distances[P] (or [2, P]) of "
        "the table rows, largest first",
        {
            "qlen": ("int", "queries"),
            "klen": ("int|null", "keys (memory + queries); null: qlen"),
            "convention": ("string", " | ".join(_TABLES)),
            "clamp_len": ("int|null", "XLNet clamp_len, or null"),
            "bi_data": ("bool", "bool"),
        },
        {"positions": "int"},
        _positions,
        positional=1,
        output_kind="int",
    )
)
declare(
    FunctionSpec(
        "rel_sinusoid_table",
        "transformer_xl",
        "rel_sinusoid_table(qlen, dim, klen, convention, clamp_len, bi_data) -> sinusoidal(distances, dim, "
        "vaswani (conformer) | marian (xlnet, transformer_xl)) [P, dim] (or [2, P, dim])",
        {
            "qlen": ("int", "queries"),
            "dim": ("int", "table width"),
            "klen": ("int|null", "keys (memory + queries); null: qlen"),
            "convention": ("string", " | ".join(_TABLES)),
            "clamp_len": ("int|null", "XLNet clamp_len, or null"),
            "bi_data": ("bool", "bool"),
        },
        {"table": "float"},
        _table,
        positional=2,
        takes_dtype=True,
        case_tolerances=_table_tol,
        phase=_table_phase,
    )
)
declare(
    FunctionSpec(
        "rel_shift",
        "transformer_xl",
        "rel_shift(x[..., Q, P], klen, convention, shift) -> [..., Q, klen]: the pad-and-reshape trick of "
        "transformer_xl (left pad, drop a row) | xlnet (drop shift rows) | gemma3n (right pad to klen + 1)",
        {
            "x": ("float", "float64 [..., Q, P]"),
            "klen": ("int|null", "keys kept; null: the untrimmed width"),
            "convention": ("string", " | ".join(_SHIFTS)),
            "shift": ("int", "rows dropped (xlnet; 1 otherwise)"),
        },
        {"out": "float"},
        _shift,
        positional=1,
        cast_inputs=("x",),
        tolerances=tol(),
    )
)
declare(
    FunctionSpec(
        "rel_attention_scores",
        "transformer_xl",
        "rel_attention_scores(q[..., Q, D], k[..., K, D], r[..., P, D], u[..., D], v[..., D], convention, "
        "shift, scale) -> scale ((q + u) k^T + rel_shift((q + v) r^T, klen=K)) [..., Q, K]",
        {
            "q": ("float", "float64 [..., Q, D]"),
            "k": ("float", "float64 [..., K, D]"),
            "r": ("float", "float64 [..., P, D]"),
            "u": ("float|null", "float64 [..., D] or null"),
            "v": ("float|null", "float64 [..., D] or null"),
            "convention": ("string", " | ".join(_SHIFTS)),
            "shift": ("int", "rows dropped (xlnet; 1 otherwise)"),
            "scale": ("number|null", "number or null (1/sqrt(D))"),
        },
        {"scores": "float"},
        _scores,
        positional=3,
        cast_inputs=("q", "k", "r", "u", "v"),
        case_tolerances=_scores_tol,
    )
)

# --- notes -------------------------------------------------------------------------------------

_ROWS = add_note(
    "RelSinusoidRows",
    "ConventionMismatch",
    "The distances the rows of a Transformer-XL table stand for, largest first: klen - 1 .. -(klen - 1) "
    "(the Conformers), klen .. -(qlen - 1) (XLNet, one more row than the Conformers use), klen - 1 .. 0 "
    "(the paper). A table one row off shifts every relative position by one, which no shape check sees.",
    "https://arxiv.org/abs/1901.02860",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/xlnet/modeling_xlnet.py",
)
_MEMORY = add_note(
    "SegmentMemory",
    "Functionality",
    "More keys than queries (klen > qlen): Transformer-XL / XLNet memory, Nemotron-ASR's cached frames. "
    "Code written for klen = qlen puts the query at position i instead of klen - qlen + i.",
    "https://arxiv.org/abs/1901.02860",
)
_CLAMP = add_note(
    "XLNetClampBiData",
    "ConventionMismatch",
    "XLNet's clamp_len clips the distances to [-clamp_len, clamp_len]; bi_data adds the negated "
    "sequence for the second half of the batch (clamped the same way).",
    "https://github.com/zihangdai/xlnet/blob/master/modeling.py",
)
_GARBAGE = add_note(
    "RelShiftGarbage",
    "ConventionMismatch",
    "The entries the pad-and-reshape shift fills from the pad or the next (previous) query's row, "
    "past the valid distances: the paper's masked upper right, an untrimmed width, a table too short. "
    "A reference must state them exactly; an index-formula shift (gather) differs there.",
    "https://arxiv.org/abs/1901.02860",
)
_SHIFT_NOTE = add_note(
    "RelShiftIndex",
    "ConventionMismatch",
    "The relative shift moves table row j + Q - 1 - i (left pad: Transformer-XL, ESPnet, NeMo, the HF "
    "Conformers), j + s (Q - i) (no pad, s rows dropped: XLNet, Funnel) or j - i (right pad: Gemma "
    "audio) under key j of query i; the three tricks are not interchangeable.",
    "https://arxiv.org/abs/1901.02860",
)
_BIASES = add_note(
    "RelBiasesUV",
    "ConventionMismatch",
    "Transformer-XL's global biases: u joins the query in the content term (q + u) . k, v in the "
    "position term (q + v) . R; swapping them, or adding one to both terms, gives plausible logits.",
    "https://arxiv.org/abs/1901.02860",
)


# --- rel_sinusoid_positions --------------------------------------------------------------------


def _pos_case(id_: str, comment: str, flags: Any, qlen: Any, klen: Any, convention: Any, **kw: Any) -> None:
    error = kw.pop("error", None)
    case(
        id_,
        comment,
        flags,
        error,
        qlen=qlen,
        klen=klen,
        convention=convention,
        clamp_len=kw.get("clamp_len"),
        bi_data=kw.get("bi_data", False),
    )


_pos_case(
    "rel_sinusoid_positions/conformer/l4",
    "Conformer, L = 4: 3 .. -3.",
    ("Basic", _ROWS),
    4,
    None,
    "conformer",
)
_pos_case(
    "rel_sinusoid_positions/conformer/streaming-q3-k7",
    "Nemotron-ASR streaming: 3 new frames, 4 cached, K = 7: 6 .. -6.",
    (_ROWS, _MEMORY),
    3,
    7,
    "conformer",
)
_pos_case(
    "rel_sinusoid_positions/transformer_xl/q3-k5",
    "The paper's klen - 1 .. 0 with 2 memory positions.",
    (_ROWS, _MEMORY),
    3,
    5,
    "transformer_xl",
)
_pos_case(
    "rel_sinusoid_positions/xlnet/bi-q3-k5",
    "XLNet attn_type bi: arange(klen, -qlen, -1) = 5 .. -2.",
    (_ROWS, _MEMORY),
    3,
    5,
    "xlnet",
)
_pos_case(
    "rel_sinusoid_positions/xlnet/uni-q3-k5",
    "XLNet attn_type uni: 5 .. 0.",
    (_ROWS, _MEMORY),
    3,
    5,
    "xlnet_uni",
)
_pos_case(
    "rel_sinusoid_positions/xlnet/clamp-q4-k6-c2",
    "clamp_len 2: 6 .. -3 clipped to [-2, 2].",
    (_CLAMP, _MEMORY),
    4,
    6,
    "xlnet",
    clamp_len=2,
)
_pos_case(
    "rel_sinusoid_positions/xlnet/bi-data-q3",
    "bi_data: 3 .. -2 and -3 .. 2.",
    (_CLAMP, _ROWS),
    3,
    None,
    "xlnet",
    bi_data=True,
)
_pos_case(
    "rel_sinusoid_positions/xlnet/bi-data-clamp-q4-k5-c3",
    "bi_data with clamp_len 3.",
    (_CLAMP, _MEMORY),
    4,
    5,
    "xlnet",
    clamp_len=3,
    bi_data=True,
)
_pos_case(
    "rel_sinusoid_positions/invalid/klen-below-qlen",
    "klen 2 < qlen 3.",
    (_MEMORY,),
    3,
    2,
    "xlnet",
    error=("ValueError", "klen"),
)
_pos_case(
    "rel_sinusoid_positions/invalid/clamp-zero",
    "clamp_len 0 (HF's 'no clamp'): pass null.",
    (_CLAMP,),
    3,
    None,
    "xlnet",
    clamp_len=0,
    error=("ValueError", "clamp_len"),
)
_pos_case(
    "rel_sinusoid_positions/invalid/qlen-zero",
    "No queries.",
    (),
    0,
    None,
    "conformer",
    error=("ValueError", "qlen"),
)
_pos_case(
    "rel_sinusoid_positions/invalid/convention",
    "An unknown convention.",
    (_ROWS,),
    3,
    None,
    "espnet",
    error=("ValueError", "convention"),
)


# --- rel_sinusoid_table --------------------------------------------------------------------------


def _table_case(
    id_: str, comment: str, flags: Any, qlen: Any, dim: Any, klen: Any, convention: Any, **kw: Any
) -> None:
    error = kw.pop("error", None)
    case(
        id_,
        comment,
        flags,
        error,
        qlen=qlen,
        dim=dim,
        klen=klen,
        convention=convention,
        clamp_len=kw.get("clamp_len"),
        bi_data=kw.get("bi_data", False),
    )


_table_case(
    "rel_sinusoid_table/conformer/l4-d8",
    "Wav2Vec2-Conformer / Parakeet: L = 4, interleaved, distances 3 .. -3.",
    ("Basic", _ROWS, "NegativePosition"),
    4,
    8,
    None,
    "conformer",
)
_table_case(
    "rel_sinusoid_table/conformer/streaming-q2-k5-d6",
    "Nemotron-ASR with 3 cached frames: K = 5 sets the rows.",
    (_ROWS, _MEMORY, "NegativePosition"),
    2,
    6,
    5,
    "conformer",
)
_table_case(
    "rel_sinusoid_table/conformer/l48-d16",
    "A longer sequence: distances up to 47.",
    (_ROWS, "NegativePosition"),
    48,
    16,
    None,
    "conformer",
)
_table_case(
    "rel_sinusoid_table/xlnet/bi-q3-k5-d8",
    "XLNet: [sin | cos], distances 5 .. -2.",
    (_ROWS, _MEMORY, "NegativePosition"),
    3,
    8,
    5,
    "xlnet",
)
_table_case(
    "rel_sinusoid_table/xlnet/funnel-l6-d8",
    "Funnel's first block (and XLNet without memory): 6 .. -5.",
    (_ROWS, "NegativePosition"),
    6,
    8,
    None,
    "xlnet",
)
_table_case(
    "rel_sinusoid_table/xlnet/uni-q2-k4-d4", "XLNet uni: 4 .. 0.", (_ROWS, _MEMORY), 2, 4, 4, "xlnet_uni"
)
_table_case(
    "rel_sinusoid_table/transformer_xl/q3-k5-d6",
    "The paper's table: 4 .. 0.",
    (_ROWS, _MEMORY),
    3,
    6,
    5,
    "transformer_xl",
)
_table_case(
    "rel_sinusoid_table/xlnet/clamp-q4-k6-c2-d4",
    "clamp_len 2: repeated rows at +-2.",
    (_CLAMP, _MEMORY),
    4,
    4,
    6,
    "xlnet",
    clamp_len=2,
)
_table_case(
    "rel_sinusoid_table/xlnet/bi-data-q3-d4",
    "bi_data: the forward and backward tables, [2, 6, 4].",
    (_CLAMP, "NegativePosition"),
    3,
    4,
    None,
    "xlnet",
    bi_data=True,
)
_table_case(
    "rel_sinusoid_table/invalid/dim-zero",
    "A table of width 0.",
    (),
    3,
    0,
    None,
    "conformer",
    error=("ValueError", "dim"),
)
_table_case(
    "rel_sinusoid_table/invalid/klen-below-qlen",
    "klen 1 < qlen 2.",
    (_MEMORY,),
    2,
    4,
    1,
    "conformer",
    error=("ValueError", "klen"),
)


# --- rel_shift --------------------------------------------------------------------------------------


def _shift_case(
    id_: str,
    comment: str,
    flags: Any,
    seed: int,
    shape: tuple[int, ...],
    klen: Any,
    convention: str,
    shift: int = 1,
    error: Any = None,
) -> None:
    case(id_, comment, flags, error, x=F(_dyadic(seed, shape)), klen=klen, convention=convention, shift=shift)


_shift_case(
    "rel_shift/transformer_xl/conformer-l4",
    "The Conformer shift: Q = 4 over P = 7 rows, K = 4 kept; every entry valid (x[i, j + 3 - i]).",
    ("Basic", _SHIFT_NOTE),
    901,
    (2, 4, 7),
    4,
    "transformer_xl",
)
_shift_case(
    "rel_shift/transformer_xl/untrimmed-q3",
    "Parakeet's _rel_shift before [..., :L]: all P = 5 columns, the pad and the next row after j = 2 + i.",
    (_SHIFT_NOTE, _GARBAGE),
    902,
    (3, 5),
    None,
    "transformer_xl",
)
_shift_case(
    "rel_shift/transformer_xl/paper-q3-k5",
    "The paper: P = klen = 5 rows (distances 4 .. 0), Q = 3: the future keys' entries are the pad and "
    "the next query's row.",
    (_GARBAGE, _MEMORY),
    903,
    (1, 3, 5),
    5,
    "transformer_xl",
)
_shift_case(
    "rel_shift/transformer_xl/streaming-q2-k5",
    "Nemotron-ASR: 2 new frames, K = 5 keys, P = 2K - 1 = 9 rows.",
    (_SHIFT_NOTE, _MEMORY),
    904,
    (2, 2, 9),
    5,
    "transformer_xl",
)
_shift_case(
    "rel_shift/transformer_xl/tall-q5-p2",
    "More queries than rows (Q = 5 > P + 1): the trick reads whole rows ahead.",
    (_GARBAGE,),
    905,
    (5, 2),
    None,
    "transformer_xl",
)
_shift_case(
    "rel_shift/xlnet/bi-q3-k5",
    "XLNet rel_shift_bnij: Q = 3, P = klen + qlen = 8, klen 5: x[i, j + 3 - i].",
    (_SHIFT_NOTE, _MEMORY),
    906,
    (2, 2, 3, 8),
    5,
    "xlnet",
)
_shift_case(
    "rel_shift/xlnet/untrimmed-q3-p6",
    "No klen: all P - 1 = 5 columns, the next row's entries past the valid run.",
    (_GARBAGE, _SHIFT_NOTE),
    907,
    (3, 6),
    None,
    "xlnet",
)
_shift_case(
    "rel_shift/xlnet/funnel-shift2",
    "Funnel's pooled-query shift: 2 rows dropped, x[i, j + 2 (Q - i)].",
    (_SHIFT_NOTE,),
    908,
    (1, 2, 3, 10),
    4,
    "xlnet",
    shift=2,
)
_shift_case(
    "rel_shift/gemma3n/block-w3",
    "Gemma 3n audio blocks: W = 3 queries, F = 4 rows (left 2, right 1), C = 6 keys; zeros outside the band.",
    (_SHIFT_NOTE, "BatchedPositions"),
    909,
    (1, 2, 2, 3, 4),
    6,
    "gemma3n",
)
_shift_case(
    "rel_shift/gemma3n/previous-row",
    "W = 4, F = 4, C = 4: for i - j > C + 1 - F the trick reads the previous query's row.",
    (_GARBAGE, _SHIFT_NOTE),
    910,
    (4, 4),
    4,
    "gemma3n",
)
_shift_case(
    "rel_shift/invalid/klen-past-rows",
    "klen 6 > P = 5 (transformer_xl keeps at most P columns).",
    (_SHIFT_NOTE,),
    902,
    (3, 5),
    6,
    "transformer_xl",
    error=("ValueError", "klen"),
)
_shift_case(
    "rel_shift/invalid/shift-transformer-xl",
    "shift 2 with the left-pad trick (only xlnet drops more rows).",
    (_SHIFT_NOTE,),
    902,
    (3, 5),
    None,
    "transformer_xl",
    shift=2,
    error=("ValueError", "shift"),
)
_shift_case(
    "rel_shift/invalid/gemma3n-klen",
    "klen 2 < P - 1 = 3: Gemma's pad width klen + 1 - P would be negative.",
    (_SHIFT_NOTE,),
    910,
    (4, 5),
    2,
    "gemma3n",
    error=("ValueError", "klen"),
)
_shift_case(
    "rel_shift/invalid/convention",
    "An unknown convention.",
    (),
    901,
    (2, 3),
    None,
    "espnet",
    error=("ValueError", "convention"),
)


# --- rel_attention_scores -------------------------------------------------------------------------


def _score_case(
    id_: str,
    comment: str,
    flags: Any,
    seed: int,
    lead: tuple[int, ...],
    qkp: tuple[int, int, int],
    width: int,
    convention: str,
    *,
    r_lead: tuple[int, ...] | None = None,
    biases: tuple[int, ...] | None = (),
    shift: int = 1,
    scale: Any = None,
    error: Any = None,
    r_width: int | None = None,
) -> None:
    qn, kn, pn = qkp
    bias_shape = (*biases, width) if biases is not None else None
    case(
        id_,
        comment,
        flags,
        error,
        q=F(_dyadic(seed, (*lead, qn, width), denominator=32)),
        k=F(_dyadic(seed + 1, (*lead, kn, width), denominator=32)),
        r=F(_dyadic(seed + 2, (*(lead if r_lead is None else r_lead), pn, r_width or width), denominator=32)),
        u=None if bias_shape is None else F(_dyadic(seed + 3, bias_shape, denominator=32)),
        v=None if bias_shape is None else F(_dyadic(seed + 4, bias_shape, denominator=32)),
        convention=convention,
        shift=shift,
        scale=scale,
    )


_score_case(
    "rel_attention_scores/conformer/l3",
    "Wav2Vec2-Conformer: 2 heads, L = 3, D = 4, R of 2L - 1 = 5 rows, u and v per head.",
    ("Basic", _BIASES, _SHIFT_NOTE),
    921,
    (1, 2),
    (3, 3, 5),
    4,
    "transformer_xl",
    biases=(2,),
)
_score_case(
    "rel_attention_scores/conformer/shared-r-batch2",
    "Batch 2 with R shared by the batch ([H, P, D], as Gemma and XLNet hold it).",
    (_BIASES, "BatchedPositions"),
    926,
    (2, 2),
    (3, 3, 5),
    4,
    "transformer_xl",
    r_lead=(2,),
    biases=(2,),
)
_score_case(
    "rel_attention_scores/xlnet/mem-q2-k4",
    "XLNet with 2 memory positions: K = 4, P = klen + qlen = 6, r_w_bias / r_r_bias.",
    (_BIASES, _MEMORY),
    931,
    (1, 2),
    (2, 4, 6),
    4,
    "xlnet",
    biases=(2,),
)
_score_case(
    "rel_attention_scores/transformer_xl/paper-q2-k4",
    "The paper: P = K = 4 rows (distances 3 .. 0); the future keys' terms are the trick's garbage.",
    (_GARBAGE, _MEMORY),
    936,
    (1,),
    (2, 4, 4),
    3,
    "transformer_xl",
    biases=(1,),
)
_score_case(
    "rel_attention_scores/gemma3n/blocks",
    "Gemma 3n audio: no biases, q pre-scaled (scale 1), 2 blocks of W = 3 over C = 5 keys, F = 3 rows.",
    (_SHIFT_NOTE, "BatchedPositions"),
    941,
    (1, 2, 2),
    (3, 5, 3),
    4,
    "gemma3n",
    r_lead=(2, 1),
    biases=None,
    scale=1.0,
)
_score_case(
    "rel_attention_scores/invalid/r-width",
    "R of width 3 for D = 4.",
    (_BIASES,),
    921,
    (1, 2),
    (3, 3, 5),
    4,
    "transformer_xl",
    biases=(2,),
    r_width=3,
    error=("ValueError", "r"),
)
_score_case(
    "rel_attention_scores/invalid/k-past-rows",
    "K = 6 keys over P = 5 rows (the left-pad trick keeps at most P).",
    (_SHIFT_NOTE,),
    946,
    (1,),
    (3, 6, 5),
    4,
    "transformer_xl",
    biases=(1,),
    error=("ValueError", "k"),
)
