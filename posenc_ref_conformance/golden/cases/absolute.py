"""Absolute encodings: declarations and cases of sinusoidal (every convention), learned, token positions."""

from __future__ import annotations

import math
from typing import Any

from ... import oracle
from ...oracle.sinusoidal import CONVENTIONS as SINUSOIDAL
from ..functions import (
    EPS32,
    EPS64,
    FunctionSpec,
    Tolerance,
    angle_tolerance,
    declare,
    flatten,
    max_abs,
    phase_record,
    reshape,
    shape_of,
    tol,
)
from ..notes import add_note
from ._common import BIG, RUN_2E20, RUN_2E24, B, ConsecutiveRun, F, I, _dyadic, case

# --- declarations ------------------------------------------------------------------------------


def _sinusoidal(inp: dict[str, Any]) -> dict[str, Any]:
    options = dict(inp["options"])
    table = oracle.sinusoidal.sinusoidal(flatten(inp["positions"]), inp["dim"], inp["convention"], **options)
    return {"table": reshape(table, shape_of(inp["positions"]))}


def _sinusoidal_max_angle(inp: dict[str, Any]) -> float:
    conv, options, dim = inp["convention"], inp["options"], inp["dim"]
    top = max(abs(int(p)) for p in flatten(inp["positions"]))
    if conv == "fairseq":
        top += options.get("padding_idx", 1) + 1
    if conv == "tensor2tensor":
        top *= max(options.get("min_timescale", 1.0), 1.0)
    if conv == "mlx":
        top *= options.get("max_freq", 1.0) * (2 * math.pi if options.get("full_turns") else 1.0)
    if conv == "patchtst":  # every value depends on the whole table, up to row N - 1
        top = max(top, int(options["num_positions"]) - 1)
    return float(top) if dim else 0.0


def _sinusoidal_scale(inp: dict[str, Any], out: dict[str, Any]) -> float:
    """The largest factor an angle error is multiplied by in an output element.

    PatchTST's ``(T - m) / (10 s)``: an error ``e`` in the entries moves ``T - m`` by up
    to ``2e`` and ``s`` by ``e``, so the element by ``e (2 + |T - m| / s) / (10 s)``;
    ``|T - m| / s < 3`` for these tables, so ``1 / s`` bounds the factor (with room
    for the float32 sums over the table).
    """
    if inp["convention"] == "patchtst" and inp["dim"] % 2 == 0:
        return float(1 / oracle.sinusoidal.patchtst_std(inp["dim"], int(inp["options"]["num_positions"])))
    return max_abs(out["table"]) or 1.0


def _sinusoidal_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    scale = _sinusoidal_scale(inp, out)
    scaled = inp["convention"] == "mlx" and inp["options"].get("scale", None) != 1.0
    return angle_tolerance(
        _sinusoidal_max_angle(inp), scale, "LargePosition" in flags, freq_ulps=32, scaled=scaled
    )


def _sinusoidal_phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    conv, options = inp["convention"], inp["options"]
    freqs, span = oracle.sinusoidal.column_frequencies(inp["dim"], conv, **options)
    flat = oracle.sinusoidal.phase_positions(flatten(inp["positions"]), conv, **options)
    scale = _sinusoidal_scale(inp, out)
    error = math.ceil(3 * float(span) + 6)
    return phase_record(reshape(flat, shape_of(inp["positions"])), freqs, error, scale)


def _learned(inp: dict[str, Any]) -> dict[str, Any]:
    shift = {
        "plain": 0,
        "opt": 2,
        "roberta": (1 if inp.get("padding_idx") is None else inp["padding_idx"]) + 1,
    }
    rows = oracle.learned.learned(inp["table"], flatten(inp["positions"]), offset=shift[inp["offset"]])
    return {"rows": reshape(rows, shape_of(inp["positions"]))}


def _interpolate(inp: dict[str, Any]) -> dict[str, Any]:
    return {"table": oracle.learned.interpolate_table(inp["table"], inp["new_length"])}


def _token_positions(inp: dict[str, Any]) -> dict[str, Any]:
    def walk(mask: Any) -> Any:
        if len(shape_of(mask)) == 1:
            return oracle.learned.token_positions(mask, cache_length=inp["cache_length"])
        return [walk(row) for row in mask]

    return {"positions": walk(inp["mask"])}


_POS = "int64 array, any shape"

declare(
    FunctionSpec(
        "sinusoidal",
        "sinusoidal",
        "sinusoidal(positions, dim, convention, options) -> table[*positions.shape, dim]",
        {
            "positions": ("positions", _POS),
            "dim": ("int", "table width"),
            "convention": ("string", " | ".join(SINUSOIDAL)),
            "options": ("options", "the convention's options (base, padding_idx, timescales, ...)"),
        },
        {"table": "float"},
        _sinusoidal,
        positional=2,
        takes_dtype=True,
        options={"convention": "sinusoidal_conventions"},
        case_tolerances=_sinusoidal_tol,
        phase=_sinusoidal_phase,
    )
)
declare(
    FunctionSpec(
        "learned",
        "learned",
        "learned(table, positions, offset, padding_idx) -> rows[*positions.shape, table.shape[1]]",
        {
            "table": ("float", "float64 [rows, dim]"),
            "positions": ("positions", _POS),
            "offset": ("string", "plain | opt | roberta"),
            "padding_idx": ("int|null", "int or null"),
        },
        {"rows": "float"},
        _learned,
        positional=2,
        options={"offset": "learned_offsets"},
        cast_inputs=("table",),
        tolerances=tol(),
    )
)
declare(
    FunctionSpec(
        "interpolate_table",
        "learned",
        "interpolate_table(table, new_length) -> table[new_length, dim] (linear, aligned corners)",
        {"table": ("float", "float64 [rows, dim]"), "new_length": ("int", "rows of the result")},
        {"table": "float"},
        _interpolate,
        positional=2,
        cast_inputs=("table",),
        tolerances=tol(
            atol64=4 * EPS64, rtol64=4 * EPS64, ulp64=4, atol32=4 * EPS32, rtol32=4 * EPS32, ulp32=4
        ),
    )
)


declare(
    FunctionSpec(
        "token_positions",
        "learned",
        "token_positions(mask[..., L], cache_length) -> positions[..., L]: (cache_length + cumsum(mask)) * "
        "mask - 1 (real tokens count from cache_length, padding -1)",
        {
            "mask": ("mask", "bool or int64 [..., L], non-zero = real token"),
            "cache_length": ("int", "tokens already in the cache"),
        },
        {"positions": "int"},
        _token_positions,
        positional=1,
        output_kind="int",
    )
)


# --- sinusoidal ---------------------------------------------------------------------------------------


def _sin(
    id: str,
    comment: str,
    flags: Any,
    positions: Any,
    dim: int,
    convention: str,
    error: Any = None,
    **options: Any,
) -> None:
    case(
        f"sinusoidal/{convention}/{id}",
        comment,
        flags,
        error,
        positions=I(positions),
        dim=dim,
        convention=convention,
        options=options,
    )


_sin(
    "basic-d8",
    "The paper's table, 8 positions.",
    ("Basic", "VaswaniFrequencies", "InterleavedLayout"),
    list(range(8)),
    8,
    "vaswani",
)
_sin(
    "odd-dim-5",
    "Odd width: the last column is a sine of frequency 10000**(-4/5).",
    "OddDim",
    list(range(4)),
    5,
    "vaswani",
)
_sin("dim-1", "One column: sin(p).", "OddDim", [0, 1, 3], 1, "vaswani")
_sin(
    "base-500",
    "keras-hub max_wavelength (= base) other than 10000.",
    "VaswaniFrequencies",
    [0, 1, 7, 100],
    6,
    "vaswani",
    base=500.0,
)
_sin(
    "batched-offsets",
    "Per-batch positions with a KV-cache offset.",
    ("BatchedPositions", "KVCacheOffset"),
    [[5, 6, 7], [1030, 1031, 1032]],
    4,
    "vaswani",
)
_sin(
    "negative",
    "Negative positions (defined by the formula).",
    "NegativePosition",
    [-3, -1, 0, 2],
    4,
    "vaswani",
)
_sin(
    "dim-512-sample",
    "Width 512: column 128 has frequency 0.01 (tensor2tensor's differs).",
    "VaswaniFrequencies",
    [1, 37],
    512,
    "vaswani",
)
_sin(
    "large-positions",
    "Positions 2**20 .. 2**24 + 1 at the accuracy claim.",
    ("LargePosition", "Float32PositionRounding"),
    BIG,
    16,
    "vaswani",
)
for _conv in ("vaswani", "tensor2tensor"):
    for _name, _run in (("2e20", RUN_2E20), ("2e24", RUN_2E24)):
        _sin(
            f"run-{_name}",
            f"The consecutive run {_run[0]} .. {_run[-1]} (an offset-only table), d = 16.",
            ("LargePosition", ConsecutiveRun),
            _run,
            16,
            _conv,
        )
_sin(
    "basic-d8",
    "tensor2tensor's [sin | cos] with the num_timescales - 1 denominator.",
    ("Basic", "T2TFrequencies", "ConcatenatedLayout"),
    list(range(8)),
    8,
    "tensor2tensor",
)
_sin(
    "odd-dim-5",
    "Odd width: two frequencies (1, 1e-4) and a zero last column.",
    ("OddDim", "T2TFrequencies"),
    list(range(4)),
    5,
    "tensor2tensor",
)
_sin("dim-2", "One frequency: the max(n - 1, 1) guard.", "T2TFrequencies", [0, 1, 2, 9], 2, "tensor2tensor")
_sin("dim-1", "Width 1: a single zero column.", "OddDim", [0, 5], 1, "tensor2tensor")
_sin(
    "min-timescale-2",
    "min_timescale != 1 multiplies the frequencies (t2t's own quirk, reproduced).",
    "T2TMinTimescale",
    [0, 1, 3],
    6,
    "tensor2tensor",
    min_timescale=2.0,
    max_timescale=1000.0,
)
_sin(
    "negative",
    "Negative positions: sin(-p w) = -sin(p w) in the first half, the cosine half unchanged.",
    ("NegativePosition", "T2TFrequencies"),
    [-7, -2, 0, 5],
    6,
    "tensor2tensor",
)
_sin(
    "min-timescale-half",
    "min_timescale 0.5, max_timescale 100 (t2t multiplies: frequencies 0.5 .. 0.005).",
    ("T2TMinTimescale", "T2TFrequencies"),
    [0, 1, 2, 7],
    8,
    "tensor2tensor",
    min_timescale=0.5,
    max_timescale=100.0,
)
_sin(
    "dim-512-sample",
    "Width 512: column 128 has frequency 0.009821, not 0.01.",
    "T2TFrequencies",
    [1, 37],
    512,
    "tensor2tensor",
)
_sin(
    "large-positions",
    "Positions 2**20 .. 2**24 + 1 at the accuracy claim.",
    ("LargePosition", "Float32PositionRounding"),
    BIG,
    16,
    "tensor2tensor",
)
_sin(
    "basic-d8",
    "fairseq: token 0 is encoded at row padding_idx + 1 = 2; -1 is the zero padding row.",
    ("Basic", "PaddingOffset", "PaddingRow", "T2TFrequencies"),
    list(range(-1, 7)),
    8,
    "fairseq",
)
_sin(
    "padding-idx-0",
    "padding_idx = 0: tokens start at row 1.",
    ("PaddingOffset", "PaddingRow"),
    [-1, 0, 5],
    6,
    "fairseq",
    padding_idx=0,
)
_sin(
    "padding-idx-3",
    "Rows below the padding row (positions -4, -3) are ordinary rows.",
    ("PaddingOffset", "PaddingRow"),
    [-4, -3, -1, 0, 9],
    4,
    "fairseq",
    padding_idx=3,
)
_sin("odd-dim-7", "Odd width: zero last column.", ("OddDim", "PaddingOffset"), [-1, 0, 1, 2], 7, "fairseq")
_sin("dim-1", "Width 1: fairseq's single zero column.", "OddDim", [0, 3], 1, "fairseq")
_sin(
    "batched",
    "Per-batch positions from a padding mask (-1 = padding).",
    ("BatchedPositions", "PaddingRow"),
    [[0, 1, 2, 3], [-1, -1, 0, 1]],
    6,
    "fairseq",
)
_sin(
    "large-positions",
    "Positions 2**20 .. 2**24 + 1 (rows + padding_idx + 1).",
    ("LargePosition", "Float32PositionRounding", "PaddingOffset"),
    BIG,
    16,
    "fairseq",
)
_sin(
    "basic-d8",
    "Marian/Pegasus: Vaswani frequencies, [sin | cos].",
    ("Basic", "VaswaniFrequencies", "ConcatenatedLayout"),
    list(range(8)),
    8,
    "marian",
)
_sin(
    "odd-dim-5",
    "Odd width: 3 sine columns, 2 cosine columns.",
    ("OddDim", "VaswaniFrequencies"),
    list(range(4)),
    5,
    "marian",
)
_sin(
    "large-positions",
    "Positions 2**20 .. 2**24 + 1 at the accuracy claim.",
    ("LargePosition", "Float32PositionRounding"),
    BIG,
    16,
    "marian",
)
_sin(
    "negative",
    "Negative positions in Marian's [sin | cos] table.",
    ("NegativePosition", "VaswaniFrequencies"),
    [-5, -1, 0, 3],
    5,
    "marian",
)
_sin(
    "defaults-d8",
    "mlx.nn.SinusoidalPositionalEncoding defaults: scale sqrt(2/8).",
    ("Basic", "MlxScale", "T2TFrequencies"),
    list(range(8)),
    8,
    "mlx",
)
_sin("cos-first", "cos_first=True.", "MlxScale", [0, 1, 5], 6, "mlx", cos_first=True)
_sin(
    "full-turns",
    "full_turns=True multiplies the frequencies by 2 pi.",
    "MlxScale",
    [0, 1, 3],
    6,
    "mlx",
    full_turns=True,
    min_freq=0.001,
    max_freq=0.25,
)
_sin("scale-1", "scale=1 (no scaling).", "MlxScale", [0, 2, 9], 4, "mlx", scale=1.0)
_sin("scale-0", "An explicit scale of 0.0 is kept (mlx#4098).", "MlxScale", [0, 1], 4, "mlx", scale=0.0)
_sin("dim-2", "One frequency pair: t_0 = 1 (max_freq).", "MlxScale", [0, 1, 4], 2, "mlx")
_sin(
    "large-positions",
    "Positions 2**20 .. 2**24 + 1 at the accuracy claim (min_freq 2**-13, exact in binary "
    "and decimal alike).",
    ("LargePosition", "Float32PositionRounding"),
    BIG,
    16,
    "mlx",
    min_freq=2.0**-13,
)
_sin(
    "cos-first-d8",
    "MusicGen's get_embedding: tensor2tensor frequencies in [cos | sin] order.",
    ("CosFirst", "T2TFrequencies", "ConcatenatedLayout"),
    list(range(8)),
    8,
    "tensor2tensor",
    cos_first=True,
)
_sin(
    "cos-first-odd-dim-7",
    "Odd width with cos_first: [cos | sin] then the zero column, last.",
    ("CosFirst", "OddDim"),
    [0, 1, 5, 2047],
    7,
    "tensor2tensor",
    cos_first=True,
)
_sin(
    "cos-first-large-positions",
    "Positions 2**20 .. 2**24 + 1 with the halves swapped.",
    ("CosFirst", "LargePosition", "Float32PositionRounding"),
    BIG,
    16,
    "tensor2tensor",
    cos_first=True,
)
_sin(
    "basic-d8",
    "PatchTST: the Vaswani table of 8 rows, (T - mean) / (10 std) over all 64 entries (sample std).",
    ("Basic", "TableStandardised", "VaswaniFrequencies"),
    list(range(8)),
    8,
    "patchtst",
    num_positions=8,
)
_sin(
    "rows-of-a-larger-table",
    "Rows 0, 3, 41 of a 42-row table (PatchTST's num_patches 41 plus the cls row): the "
    "statistics are the whole table's, not the rows asked for.",
    ("TableStandardised", "BatchedPositions"),
    [[0, 3], [41, 3]],
    16,
    "patchtst",
    num_positions=42,
)
_sin(
    "one-row",
    "One row [0, 1, 0, 1]: mean 1/2, sample std 1/sqrt(3).",
    "TableStandardised",
    [0],
    4,
    "patchtst",
    num_positions=1,
)
_sin(
    "invalid-position-past-table",
    "Position 8 names no row of an 8-row table.",
    ("TableStandardised", "DataDependentCheck"),
    [0, 8],
    4,
    "patchtst",
    error=("ValueError", "positions"),
    num_positions=8,
)
_sin(
    "invalid-odd-dim",
    "HF's pe[:, 1::2] = cos(...) needs an even width.",
    "OddDim",
    [0, 1],
    5,
    "patchtst",
    error=("ValueError", "dim"),
    num_positions=4,
)
_sin(
    "invalid-no-rows",
    "num_positions is required: the table's size decides every value.",
    (),
    [0, 1],
    4,
    "patchtst",
    error=("TypeError", "num_positions"),
)
_sin("invalid-dim-0", "dim must be positive.", (), [0, 1], 0, "vaswani", error=("ValueError", "dim"))
_sin(
    "invalid-dim-2",
    "fairseq divides by dim // 2 - 1 = 0.",
    (),
    [0, 1],
    2,
    "fairseq",
    error=("ValueError", "dim"),
)
_sin("invalid-odd-dim", "MLX requires an even width.", (), [0, 1], 5, "mlx", error=("ValueError", "dim"))
_sin(
    "invalid-before-row-0",
    "Position -3 names no row of fairseq's table (padding_idx = 1).",
    "DataDependentCheck",
    [-3, 0],
    4,
    "fairseq",
    error=("ValueError", "positions"),
)
case(
    "sinusoidal/unknown/invalid-convention",
    "Unknown convention name.",
    (),
    ("ValueError", "convention"),
    positions=I([0, 1]),
    dim=4,
    convention="neox",
    options={},
)
case(
    "sinusoidal/vaswani/invalid-float-positions",
    "Positions must be integers.",
    (),
    ("TypeError", "positions"),
    positions=F([0.0, 1.5]),
    dim=4,
    convention="vaswani",
    options={},
)

# --- learned ------------------------------------------------------------------------------------------

TABLE = _dyadic(11, (6, 4))
case(
    "learned/plain/basic",
    "GPT-2/BERT: row = position.",
    ("Basic",),
    table=F(TABLE),
    positions=I([0, 5, 2]),
    offset="plain",
    padding_idx=None,
)
case(
    "learned/plain/batched",
    "Batched positions.",
    ("BatchedPositions",),
    table=F(TABLE),
    positions=I([[0, 1], [4, 5]]),
    offset="plain",
    padding_idx=None,
)
case(
    "learned/opt/basic",
    "OPT/BART: row = position + 2; -1 (padding) is row 1.",
    ("LearnedOffset",),
    table=F(TABLE),
    positions=I([-1, 0, 3]),
    offset="opt",
    padding_idx=None,
)
case(
    "learned/roberta/basic",
    "RoBERTa/fairseq: row = position + padding_idx + 1.",
    ("LearnedOffset", "PaddingOffset"),
    table=F(TABLE),
    positions=I([-1, 0, 3]),
    offset="roberta",
    padding_idx=1,
)
case(
    "learned/roberta/padding-idx-0",
    "padding_idx = 0: row = position + 1.",
    ("LearnedOffset", "PaddingOffset"),
    table=F(TABLE),
    positions=I([-1, 0, 4]),
    offset="roberta",
    padding_idx=0,
)
case(
    "learned/plain/from-zero",
    "Positions 0 .. 5: what a model without position_ids numbers itself (LXMERT: arange(L)).",
    ("Basic",),
    table=F(TABLE),
    positions=I([[0, 1, 2, 3, 4, 5]]),
    offset="plain",
    padding_idx=None,
)
case(
    "learned/plain/cache-offset",
    "Positions 3, 4, 5 in each row: the range a model numbers itself from cache_length = 3.",
    ("BatchedPositions",),
    table=F(TABLE),
    positions=I([[3, 4, 5], [3, 4, 5]]),
    offset="plain",
    padding_idx=None,
)
case(
    "learned/roberta/left-padded",
    "A left-padded batch as fairseq numbers it: the pad -1 (row padding_idx), real tokens from 0.",
    ("LearnedOffset", "PaddingOffset", "BatchedPositions"),
    table=F(TABLE),
    positions=I([[-1, 0, 1], [0, 1, 2]]),
    offset="roberta",
    padding_idx=1,
)
case(
    "learned/opt/padded-after-cache",
    "OPT's attention-mask count after 2 cached tokens: 2, 3, then a pad (-1, row 1).",
    ("LearnedOffset",),
    table=F(TABLE),
    positions=I([[2, 3, -1]]),
    offset="opt",
    padding_idx=None,
)
case(
    "learned/plain/invalid-past-table",
    "Position 6 of a 6-row table.",
    ("PastTable", "DataDependentCheck"),
    ("ValueError", "positions"),
    table=F(TABLE),
    positions=I([0, 6]),
    offset="plain",
    padding_idx=None,
)
case(
    "learned/opt/invalid-past-table",
    "Position 4 maps to row 6 of a 6-row table.",
    ("PastTable", "DataDependentCheck"),
    ("ValueError", "positions"),
    table=F(TABLE),
    positions=I([4]),
    offset="opt",
    padding_idx=None,
)
case(
    "learned/roberta/invalid-negative",
    "Position -3 maps to row -1.",
    "DataDependentCheck",
    ("ValueError", "positions"),
    table=F(TABLE),
    positions=I([-3]),
    offset="roberta",
    padding_idx=1,
)
case(
    "learned/plain/invalid-padding-idx",
    "padding_idx only belongs to offset='roberta'.",
    (),
    ("ValueError", "padding_idx"),
    table=F(TABLE),
    positions=I([0]),
    offset="plain",
    padding_idx=1,
)
case(
    "interpolate_table/extend/4-to-7",
    "Extend 4 rows to 7 (aligned corners).",
    ("Basic",),
    table=F(_dyadic(12, (4, 3))),
    new_length=7,
)
case(
    "interpolate_table/extend/4-to-10",
    "Extend 4 rows to 10.",
    (),
    table=F(_dyadic(13, (4, 3))),
    new_length=10,
)
case("interpolate_table/shrink/5-to-3", "Shrink 5 rows to 3.", (), table=F(_dyadic(14, (5, 2))), new_length=3)
case("interpolate_table/edge/to-1", "One row: the first row.", (), table=F(_dyadic(15, (3, 2))), new_length=1)
case(
    "interpolate_table/edge/from-1", "From one row: repeated.", (), table=F(_dyadic(16, (1, 3))), new_length=4
)
case(
    "interpolate_table/invalid/zero-length",
    "new_length must be >= 1.",
    (),
    ("ValueError", "new_length"),
    table=F(_dyadic(17, (3, 2))),
    new_length=0,
)

# --- token positions from a padding mask ----------------------------------------------------------

_PADDED = add_note(
    "PaddedPositions",
    "ConventionMismatch",
    "Positions of a padded batch count real tokens only (fairseq utils.make_positions, HF "
    "create_position_ids_from_input_ids, OPT's cumsum(attention_mask)): a left-padded sequence's first "
    "real token is position 0, not the number of pads, and padding gets -1 (the padding row after the "
    "table's offset).  arange(L) shifts every position of a left-padded row.",
    "https://github.com/facebookresearch/fairseq/blob/main/fairseq/utils.py",
    "https://github.com/huggingface/transformers/blob/main/src/transformers/models/roberta/modeling_roberta.py",
)


def _tokens(id: str, comment: str, flags: Any, mask: Any, cache_length: int = 0, error: Any = None) -> None:
    case(f"token_positions/{id}", comment, flags, error, mask=mask, cache_length=cache_length)


_tokens(
    "padded/right",
    "Right padding: 0, 1, 2, then -1 for each pad.",
    ("Basic", _PADDED),
    B([[True, True, True, False, False], [True] * 5]),
)
_tokens(
    "padded/left",
    "Left padding: the first real token is 0 (arange would say 2).",
    (_PADDED,),
    B([[False, False, True, True, True], [True] * 5]),
)
_tokens(
    "padded/int-mask",
    "HF's attention_mask as int64 0/1, with a pad between real tokens (packed rows).",
    (_PADDED,),
    I([[1, 1, 0, 1, 1, 0], [0, 0, 0, 1, 1, 1]]),
)
_tokens(
    "cache/length-3",
    "HF past_key_values_length 3: real tokens count from 3, pads stay -1.",
    (_PADDED, "KVCacheOffset"),
    B([[False, True, True], [True, True, True]]),
    cache_length=3,
)
_tokens("unpadded/1d", "One unpadded sequence: 0 .. 6.", ("Basic",), B([True] * 7))
_tokens(
    "padded/batched-3d",
    "A [2, 2, 4] mask: every leading axis kept.",
    (_PADDED, "BatchedPositions"),
    B([[[1, 1, 1, 0], [0, 1, 1, 1]], [[0, 0, 0, 1], [1, 1, 1, 1]]]),
)
_tokens(
    "invalid/float-mask",
    "The mask must be boolean or integer.",
    (),
    F([1.0, 0.0]),
    error=("TypeError", "mask"),
)
_tokens(
    "invalid/negative-cache", "cache_length must be >= 0.", (), B([True]), -1, ("ValueError", "cache_length")
)
