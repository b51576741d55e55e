"""RoPE given its frequencies: cos/sin tables, apply_rope, the end-to-end rotation, and head layouts.

Every valid ``apply_rope`` case has a *positions form*, a ``rope`` case with the
same ``x``, positions and ``inv_freq`` (``rope/<layout>/apply-<name>``), so
kernels driven by positions (ggml, vLLM) run each of them.  Large positions
come as small contiguous blocks (``offset + arange(k)``), so kernels that take a
scalar offset run them, and a library that precomputes a table needs rows only
up to the block.
"""

from __future__ import annotations

from typing import Any

from ... import oracle
from ..functions import (
    FunctionSpec,
    Tolerance,
    angle_tolerance,
    declare,
    flatten,
    max_abs,
    phase_record,
    reshape,
    shape_of,
)
from ..notes import add_note
from ._common import (
    BIG,
    RUN_2E20,
    RUN_2E24,
    ConsecutiveRun,
    F,
    I,
    _dyadic,
    _float32_cos_sin,
    _freqs,
    case,
)
from .rope import (
    _GPT_OSS,
    _L31,
    _apply_tolerance,
    _channel_frequencies,
    _max_angle,
    _rotation_tolerance,
)

HEAD_LAYOUTS = ("bhsd", "bshd", "thd")

# --- declarations ------------------------------------------------------------------------------


def _rope_cos_sin(inp: dict[str, Any]) -> dict[str, Any]:
    cos, sin = oracle.rope.rope_cos_sin(
        flatten(inp["positions"]),
        inp["inv_freq"],
        attention_factor=inp["attention_factor"],
        layout=inp["layout"],
    )
    shape = shape_of(inp["positions"])
    return {"cos": reshape(cos, shape), "sin": reshape(sin, shape)}


def _rope_cos_sin_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    scale = max(abs(inp["attention_factor"]), 1.0)
    max_angle = _max_angle(inp["positions"], inp["inv_freq"])
    return angle_tolerance(max_angle, scale, "LargePosition" in flags, freq_ulps=4)


def _rope_cos_sin_phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    freqs = _channel_frequencies(inp["inv_freq"], inp["layout"], 2 * len(inp["inv_freq"]))
    return phase_record(inp["positions"], freqs, 1, max(abs(inp["attention_factor"]), 1.0))


def _apply_rope(inp: dict[str, Any]) -> dict[str, Any]:
    x, cos, sin = inp["x"], inp["cos"], inp["sin"]
    seq = len(cos)

    def rotate_block(block: Any) -> Any:  # block: [S][D]
        return [oracle.rope.apply_rope(block[s], cos[s], sin[s], layout=inp["layout"]) for s in range(seq)]

    def walk(node: Any, depth: int) -> Any:
        return rotate_block(node) if depth == 2 else [walk(n, depth - 1) for n in node]

    return {"out": walk(x, len(shape_of(x)))}


def _apply_rope_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    return _apply_tolerance(inp["x"], max(max_abs(inp["cos"]), max_abs(inp["sin"])))


def _rotate_rows(rows: Any, positions: list[int], inp: dict[str, Any]) -> Any:
    """``rows[..., j, :]`` rotated at ``positions[j]`` (the last two axes of ``rows`` are [S][D])."""

    def walk(node: Any, depth: int) -> Any:
        if depth == 2:
            return [
                oracle.rope.rotate(
                    row, p, inp["inv_freq"], attention_factor=inp["attention_factor"], layout=inp["layout"]
                )
                for row, p in zip(node, positions, strict=True)
            ]
        return [walk(n, depth - 1) for n in node]

    return walk(rows, len(shape_of(rows)))


def _rope(inp: dict[str, Any]) -> dict[str, Any]:
    return {"out": _rotate_rows(inp["x"], flatten(inp["positions"]), inp)}


def _rotation_scale(inp: dict[str, Any]) -> float:
    return 2 * max_abs(inp["x"]) * max(abs(inp["attention_factor"]), 1.0)


def _rope_phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    freqs = _channel_frequencies(inp["inv_freq"], inp["layout"], shape_of(inp["x"])[-1])
    return phase_record(inp["positions"], freqs, 1, _rotation_scale(inp))


def _rope_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    strict = "LargePosition" in flags
    return _rotation_tolerance(inp["x"], inp["positions"], inp["inv_freq"], inp["attention_factor"], strict)


def _head_positions(inp: dict[str, Any]) -> Any:
    """The position of every row of x (x's shape without its last axis), as the head layout implies."""
    positions, shape = inp["positions"], shape_of(inp["x"])
    if inp["head_layout"] == "bhsd":  # x [B, H, S, D], positions [B, S]
        return [[list(positions[b]) for _ in range(shape[1])] for b in range(shape[0])]
    if inp["head_layout"] == "bshd":  # x [B, S, H, D], positions [B, S]
        return [[[p] * shape[2] for p in positions[b]] for b in range(shape[0])]
    return [[p] * shape[1] for p in positions]  # thd: x [T, H, D], positions [T]


def _rope_heads(inp: dict[str, Any]) -> dict[str, Any]:
    rows = flatten(_head_positions(inp))
    width = shape_of(inp["x"])[-1]
    flat_x = [flatten(inp["x"])[i * width : (i + 1) * width] for i in range(len(rows))]
    out = _rotate_rows([flat_x], rows, inp)[0]
    return {"out": reshape(flatten(out), shape_of(inp["x"]))}


def _rope_heads_phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    freqs = _channel_frequencies(inp["inv_freq"], inp["layout"], shape_of(inp["x"])[-1])
    return phase_record(_head_positions(inp), freqs, 1, _rotation_scale(inp))


_POS = "int64 array, any shape"
_LAYOUT = ("string", "half | interleaved")

declare(
    FunctionSpec(
        "rope_cos_sin",
        "rope",
        "rope_cos_sin(positions, inv_freq, attention_factor, layout) "
        "-> (cos, sin)[*positions.shape, 2*len(inv_freq)]",
        {
            "positions": ("positions", _POS),
            "inv_freq": ("float", "float64 [n] (exact values; not cast)"),
            "attention_factor": ("scalar", "float64 scalar (exact)"),
            "layout": _LAYOUT,
        },
        {"cos": "float", "sin": "float"},
        _rope_cos_sin,
        positional=2,
        takes_dtype=True,
        options={"layout": "layouts"},
        case_tolerances=_rope_cos_sin_tol,
        phase=_rope_cos_sin_phase,
    )
)
declare(
    FunctionSpec(
        "apply_rope",
        "rope",
        "apply_rope(x[..., S, D], cos[S, R], sin[S, R], layout) -> x rotated on its first R channels",
        {
            "x": ("float", "float64 [..., S, D]"),
            "cos": ("float", "float64 [S, R]"),
            "sin": ("float", "float64 [S, R]"),
            "layout": _LAYOUT,
        },
        {"out": "float"},
        _apply_rope,
        positional=3,
        options={"layout": "layouts"},
        cast_inputs=("x", "cos", "sin"),
        case_tolerances=_apply_rope_tol,
    )
)
declare(
    FunctionSpec(
        "rope",
        "rope",
        "rope(x[..., S, D], positions[S], inv_freq, attention_factor, layout) -> rotated x (end to end)",
        {
            "x": ("float", "float64 [..., S, D]"),
            "positions": ("positions", "int64 [S]"),
            "inv_freq": ("float", "float64 [n] (exact; not cast)"),
            "attention_factor": ("scalar", "float64 scalar (exact)"),
            "layout": _LAYOUT,
        },
        {"out": "float"},
        _rope,
        positional=3,
        options={"layout": "layouts"},
        cast_inputs=("x",),
        case_tolerances=_rope_tol,
        phase=_rope_phase,
    )
)
declare(
    FunctionSpec(
        "rope_heads",
        "rope",
        "rope_heads(x, positions, inv_freq, attention_factor, layout, head_layout) -> rotated x, where x is "
        "bhsd [B, H, S, D] or bshd [B, S, H, D] with positions [B, S], or thd [T, H, D] with positions [T]",
        {
            "x": ("float", "float64 in the head layout: bhsd [B, H, S, D], bshd [B, S, H, D], thd [T, H, D]"),
            "positions": ("positions", "int64 [B, S] (bhsd, bshd: per sequence) or [T] (thd: per token)"),
            "inv_freq": ("float", "float64 [n] (exact; not cast)"),
            "attention_factor": ("scalar", "float64 scalar (exact)"),
            "layout": _LAYOUT,
            "head_layout": ("string", "bhsd | bshd | thd"),
        },
        {"out": "float"},
        _rope_heads,
        positional=3,
        options={"layout": "layouts", "head_layout": "head_layouts"},
        cast_inputs=("x",),
        case_tolerances=_rope_tol,
        phase=_rope_heads_phase,
    )
)

PositionBlock = add_note(
    "PositionBlock",
    "Functionality",
    "Large positions as small contiguous blocks (offset + arange(k)): kernels that take a scalar offset "
    "(mx.fast.rope offset, torchtune input_pos, ggml/vLLM positions) run them, and a library that "
    "precomputes a table needs rows only up to the block (a d=128 table to 2**24 + 1 rows is 8 GiB).",
)
PositionsForm = add_note(
    "PositionsForm",
    "Functionality",
    "An apply_rope case again as an end-to-end rope case (the same x, positions and inv_freq), so "
    "kernels that take positions rather than cos/sin tables (ggml, vLLM) run every apply case.",
)
_HEAD_FLAGS = {
    "bhsd": add_note(
        "HeadLayoutBHSD",
        "Functionality",
        "x as [batch, heads, seq, head_dim] (HF eager attention, unsqueeze_dim=1) with positions [batch, "
        "seq]: cos/sin broadcast over the head axis.",
    ),
    "bshd": add_note(
        "HeadLayoutBSHD",
        "Functionality",
        "x as [batch, seq, heads, head_dim] (torchtune, keras-hub, HF unsqueeze_dim=2, flash-attn) with "
        "positions [batch, seq]: broadcasting cos/sin over the wrong axis rotates heads by the wrong "
        "positions.",
    ),
    "thd": add_note(
        "HeadLayoutTHD",
        "Functionality",
        "x as [tokens, heads, head_dim] with one position per token (vLLM, ggml, packed variable-length "
        "batches): positions restart per packed sequence.",
    ),
}

# --- rope_cos_sin -------------------------------------------------------------------------------------


def _table(
    id: str, comment: str, flags: Any, positions: Any, inv: list[float], factor: float, layout: str
) -> None:
    flags = (flags,) if isinstance(flags, str) else tuple(flags)
    flags = (*flags, "HalfLayout" if layout == "half" else "InterleavedLayout")
    case(
        f"rope_cos_sin/{layout}/{id}",
        comment,
        flags,
        positions=I(positions),
        inv_freq=F(inv),
        attention_factor=F(factor),
        layout=layout,
    )


_D8 = _freqs(8)
_D16 = _freqs(16)
_GPT_OSS_F = _freqs(64, 150000.0, _GPT_OSS)
_L31_F = _freqs(128, 500000.0, _L31)
_PROP_F = _freqs(16, 10000.0, {"rope_type": "proportional", "partial_rotary_factor": 0.5})
_YARN16_F = _freqs(
    16, 10000.0, {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2048}
)
_BLOCK_2E20 = [2**20, 2**20 + 1, 2**20 + 2]
_BLOCK_2E24 = [2**24 - 1, 2**24, 2**24 + 1]
for _layout in ("half", "interleaved"):
    _table(
        "basic-d8",
        "Default frequencies, positions 0..7.",
        ("Basic", "IdentityAtZero"),
        list(range(8)),
        *_D8,
        _layout,
    )
    _table(
        "batched-offsets",
        "Per-batch KV-cache offsets.",
        ("BatchedPositions", "KVCacheOffset"),
        [[0, 1, 2], [4093, 4094, 4095]],
        *_D8,
        _layout,
    )
    _table(
        "gpt-oss-yarn",
        "gpt-oss YaRN frequencies with attention factor 1.3466.",
        "AttentionFactor",
        [0, 1, 4095, 4096, 131071],
        *_GPT_OSS_F,
        _layout,
    )
    _table(
        "large-positions-d16",
        "Positions 2**20 .. 2**24 + 1 at the accuracy claim.",
        ("LargePosition", "Float32PositionRounding"),
        BIG,
        *_D16,
        _layout,
    )
    _table(
        "large-positions-llama3.1",
        "Llama 3.1 frequencies (d=128) on the block 2**20 + arange(3).",
        ("LargePosition", PositionBlock),
        _BLOCK_2E20,
        *_L31_F,
        _layout,
    )
    _table(
        "proportional-tail",
        "Zero frequencies: cos 1, sin 0 on the unrotated tail.",
        "ProportionalTail",
        [0, 3, 1000],
        *_PROP_F,
        _layout,
    )
    for _name, _run in (("2e20", RUN_2E20), ("2e24", RUN_2E24)):
        _table(
            f"run-{_name}-d16",
            f"Default frequencies (d = 16) on the consecutive run {_run[0]} .. {_run[-1]}.",
            ("LargePosition", ConsecutiveRun),
            _run,
            *_D16,
            _layout,
        )
    _table(
        "large-block-2e24-llama3.1",
        "Llama 3.1 frequencies (d=128) on the block 2**24 - 1 + arange(3): 2**24 + 1 is not a float32.",
        ("LargePosition", "Float32PositionRounding", PositionBlock),
        _BLOCK_2E24,
        *_L31_F,
        _layout,
    )

# --- apply_rope and its positions form; rope ------------------------------------------------------


def _float32_table(positions: list[int], inv: list[float], factor: float, layout: str) -> tuple[Any, Any]:
    """cos/sin tables times ``factor``, rounded to float32 (exact in float32 and float64 runs)."""
    with oracle.working_precision():
        cos, sin = oracle.rope.rope_cos_sin(positions, inv, attention_factor=factor, layout=layout)
        return (
            [[oracle.round_float32(v) for v in row] for row in cos],
            [[oracle.round_float32(v) for v in row] for row in sin],
        )


def _apply_case(
    name: str, comment: str, flags: tuple[str, ...], layout: str, x: Any, positions: list[int], freqs: Any
) -> None:
    """An apply_rope case with float32 tables, and its positions form ``rope/<layout>/apply-<name>``."""
    inv, factor = freqs
    cos, sin = (
        _float32_cos_sin(positions, inv, layout)
        if factor == 1.0
        else _float32_table(positions, inv, factor, layout)
    )
    case(f"apply_rope/{layout}/{name}", comment, flags, x=F(x), cos=F(cos), sin=F(sin), layout=layout)
    case(
        f"rope/{layout}/apply-{name}",
        f"Positions form of apply_rope/{layout}/{name}: positions {positions[0]}.., the same inv_freq.",
        (*flags, PositionsForm),
        x=F(x),
        positions=I(positions),
        inv_freq=F(inv),
        attention_factor=F(factor),
        layout=layout,
    )


for _layout in ("half", "interleaved"):
    _lay = "HalfLayout" if _layout == "half" else "InterleavedLayout"
    _apply_case(
        "full-d8",
        "Rotate all 8 channels of 3 positions.",
        ("Basic", _lay),
        _layout,
        _dyadic(21, (3, 8)),
        [0, 1, 2],
        _D8,
    )
    _apply_case(
        "partial-r4-d10",
        "Rotate 4 of 10 channels; 6 pass through.",
        ("PartialRotary", _lay),
        _layout,
        _dyadic(22, (3, 10)),
        [5, 6, 7],
        _freqs(4),
    )
    _apply_case(
        "batched-heads",
        "x [2, 2, 3, 8] with cos/sin [3, 8] broadcast.",
        ("Basic", _lay),
        _layout,
        _dyadic(23, (2, 2, 3, 8)),
        [0, 1, 2],
        _D8,
    )
    _rot = {"inv_freq": F(_D8[0]), "attention_factor": F(1.0), "layout": _layout}
    case(
        f"rope/{_layout}/basic-d8",
        "End-to-end rotation, positions 0..3.",
        ("Basic", "IdentityAtZero", _lay),
        x=F(_dyadic(31, (4, 8))),
        positions=I([0, 1, 2, 3]),
        **_rot,
    )
    case(
        f"rope/{_layout}/offset-100",
        "KV-cache offset 100.",
        ("KVCacheOffset", _lay),
        x=F(_dyadic(32, (4, 8))),
        positions=I([100, 101, 102, 103]),
        **_rot,
    )
    case(
        f"rope/{_layout}/batched-heads",
        "x [2, 3, 4, 8], positions [4].",
        ("Basic", _lay),
        x=F(_dyadic(33, (2, 3, 4, 8))),
        positions=I([7, 8, 9, 10]),
        **_rot,
    )
    case(
        f"rope/{_layout}/partial-r8-d12",
        "Rotate 8 of 12 channels.",
        ("PartialRotary", _lay),
        x=F(_dyadic(34, (3, 12))),
        positions=I([0, 1, 2]),
        **_rot,
    )
    case(
        f"rope/{_layout}/yarn-attention-factor",
        "gpt-oss frequencies, attention factor 1.3466.",
        ("AttentionFactor", _lay),
        x=F(_dyadic(35, (3, 64))),
        positions=I([4094, 4095, 4096]),
        inv_freq=F(_GPT_OSS_F[0]),
        attention_factor=F(_GPT_OSS_F[1]),
        layout=_layout,
    )
    case(
        f"rope/{_layout}/large-positions",
        "Contiguous positions from 2**20 at the accuracy claim.",
        ("LargePosition", _lay),
        x=F(_dyadic(36, (3, 16))),
        positions=I([2**20, 2**20 + 1, 2**20 + 2]),
        inv_freq=F(_D16[0]),
        attention_factor=F(1.0),
        layout=_layout,
    )
    _apply_case(
        "attention-factor-yarn",
        "YaRN frequencies (d=16, factor 8): cos/sin carry the attention factor 0.1 ln 8 + 1 = 1.2079.",
        ("AttentionFactor", _lay),
        _layout,
        _dyadic(25, (3, 16)),
        [1000, 1001, 1002],
        _YARN16_F,
    )
    _apply_case(
        "attention-factor-below-1",
        "cos/sin carrying an attention factor 0.75 (an explicit attention_factor below 1).",
        ("AttentionFactor", _lay),
        _layout,
        _dyadic(26, (2, 3, 8)),
        [7, 8, 9],
        (_D8[0], 0.75),
    )
    case(
        f"rope/{_layout}/run-2e24-d16",
        "Default frequencies (d = 16) on the consecutive run 2**24 - 2 .. 2**24 + 2, end to end.",
        ("LargePosition", "Float32PositionRounding", ConsecutiveRun, _lay),
        x=F(_dyadic(38, (5, 16))),
        positions=I(RUN_2E24),
        inv_freq=F(_D16[0]),
        attention_factor=F(1.0),
        layout=_layout,
    )
    case(
        f"rope/{_layout}/large-block-2e24-llama3.1",
        "Llama 3.1 frequencies (d=128) on the block 2**24 - 1 + arange(3), end to end.",
        ("LargePosition", "Float32PositionRounding", PositionBlock, _lay),
        x=F(_dyadic(37, (3, 128))),
        positions=I(_BLOCK_2E24),
        inv_freq=F(_L31_F[0]),
        attention_factor=F(_L31_F[1]),
        layout=_layout,
    )
case(
    "apply_rope/unknown/invalid-layout",
    "Unknown layout name.",
    (),
    ("ValueError", "layout"),
    x=F(_dyadic(24, (1, 4))),
    cos=F([[1.0] * 4]),
    sin=F([[0.0] * 4]),
    layout="neox",
)

# --- rope_heads ----------------------------------------------------------------------------------------

_D12_R8 = _D8  # 4 pairs rotate 8 of 12 channels
for _layout in ("half", "interleaved"):
    _lay = "HalfLayout" if _layout == "half" else "InterleavedLayout"
    for _head, _shape, _shared, _offsets in [
        ("bhsd", (2, 3, 4, 8), [[0, 1, 2, 3]] * 2, [[0, 1, 2, 3], [100, 101, 102, 103]]),
        ("bshd", (2, 4, 3, 8), [[0, 1, 2, 3]] * 2, [[0, 1, 2, 3], [100, 101, 102, 103]]),
        ("thd", (6, 3, 8), [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 0, 1]),
    ]:
        _seed = 40 + HEAD_LAYOUTS.index(_head)
        case(
            f"rope_heads/{_layout}/{_head}-shared-positions",
            f"x {list(_shape)} in {_head}, default frequencies, every sequence at 0 .. 3"
            if _head != "thd"
            else "x [6, 3, 8] in thd: 6 tokens at 0 .. 5, 3 heads",
            ("Basic", _HEAD_FLAGS[_head], _lay),
            x=F(_dyadic(_seed, _shape)),
            positions=I(_shared),
            inv_freq=F(_D8[0]),
            attention_factor=F(1.0),
            layout=_layout,
            head_layout=_head,
        )
        _wide = (*_shape[:-1], 12)
        case(
            f"rope_heads/{_layout}/{_head}-offsets-partial",
            "Per-sequence offsets (the second sequence from 100), 8 of 12 channels rotated, attention "
            "factor 1.2079"
            if _head != "thd"
            else "Two packed sequences (positions 0..3, then 0..1 again), 8 of 12 channels rotated, "
            "attention factor 1.2079",
            ("BatchedPositions", "PartialRotary", "AttentionFactor", _HEAD_FLAGS[_head], _lay),
            x=F(_dyadic(_seed + 10, _wide)),
            positions=I(_offsets),
            inv_freq=F(_D12_R8[0]),
            attention_factor=F(_YARN16_F[1]),
            layout=_layout,
            head_layout=_head,
        )
        if _head != "thd":
            _runs_shape = (2, 2, 5, 16) if _head == "bhsd" else (2, 5, 2, 16)
            case(
                f"rope_heads/{_layout}/{_head}-runs-2e20-2e24",
                f"x {list(_runs_shape)} in {_head}, d = 16: the first sequence at 2**20 - 2 .. 2**20 + 2, "
                "the second at 2**24 - 2 .. 2**24 + 2 (one offset per sequence).",
                ("LargePosition", "BatchedPositions", ConsecutiveRun, _HEAD_FLAGS[_head], _lay),
                x=F(_dyadic(_seed + 20, _runs_shape)),
                positions=I([RUN_2E20, RUN_2E24]),
                inv_freq=F(_D16[0]),
                attention_factor=F(1.0),
                layout=_layout,
                head_layout=_head,
            )
