"""The canonical functions of the golden files: inputs, outputs, oracle, tolerances.

Each golden file holds the cases of one canonical function (the suite's
calling convention, mirrored by the adapter protocol in
``posenc_ref_conformance.adapters.base``).  This module says, per function, what the
inputs and outputs are, how the oracle computes the outputs, which float inputs
follow the dtype of a run, and the tolerance policy (stored in the files as data).

Tolerances: an element passes when ``|actual - expected| <= atol + rtol *
|expected|`` *or* when ``actual`` is within ``maxUlp`` units in the last place of
``expected`` rounded to the run's dtype.  Integer and boolean outputs must be
equal (``compare: "exact"``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import oracle
from ..oracle._numeric import mp

__all__ = ["FUNCTIONS", "FunctionSpec", "Tolerance", "phase_record"]

EPS64 = 2.0**-53  # unit roundoff
EPS32 = 2.0**-24

Tolerance = dict[str, dict[str, float]]


def _tol(
    atol64: float = 0.0,
    rtol64: float = 0.0,
    ulp64: int = 0,
    atol32: float = 0.0,
    rtol32: float = 0.0,
    ulp32: int = 0,
) -> Tolerance:
    return {
        "float64": {"atol": atol64, "rtol": rtol64, "maxUlp": ulp64},
        "float32": {"atol": atol32, "rtol": rtol32, "maxUlp": ulp32},
    }


@dataclasses.dataclass(frozen=True)
class FunctionSpec:
    """What a golden file of one canonical function contains."""

    name: str
    scheme: str
    summary: str
    inputs: dict[str, str]
    outputs: dict[str, str]
    compute: Callable[[dict[str, Any]], dict[str, Any]]
    output_kind: str = "float"  # float | int | bool
    cast_inputs: tuple[str, ...] = ()
    tolerances: Tolerance | None = None
    case_tolerances: Callable[[dict[str, Any], dict[str, Any], set[str]], Tolerance | None] | None = None
    #: The case's phase data (see :func:`phase_record`) for functions whose outputs are cos/sin of angles.
    phase: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None

    @property
    def dtypes(self) -> tuple[str, ...]:
        return ("float64", "float32") if self.output_kind == "float" else (self.output_kind,)


# --- nested-list helpers ---------------------------------------------------------------------------


def _flatten(nested: Any) -> list[Any]:
    if isinstance(nested, (list, tuple)):
        return [v for item in nested for v in _flatten(item)]
    return [nested]


def _shape(nested: Any) -> list[int]:
    shape = []
    while isinstance(nested, (list, tuple)):
        shape.append(len(nested))
        nested = nested[0] if nested else None
    return shape


def _reshape(flat: Sequence[Any], shape: Sequence[int]) -> Any:
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = math.prod(shape[1:])
    return [_reshape(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def _map_rows(positions: Any, row: Callable[[int], list[Any]]) -> Any:
    """Apply ``row`` to every position of a nested position array; result shape + (width,)."""
    return _reshape([row(p) for p in _flatten(positions)], _shape(positions))


def _max_abs(nested: Any) -> float:
    values = [abs(float(v)) for v in _flatten(nested)]
    return max(values) if values else 0.0


# --- absolute ----------------------------------------------------------------------------------------


def _sinusoidal(inp: dict[str, Any]) -> dict[str, Any]:
    options = dict(inp["options"])
    table = oracle.sinusoidal.sinusoidal(_flatten(inp["positions"]), inp["dim"], inp["convention"], **options)
    return {"table": _reshape(table, _shape(inp["positions"]))}


def _sinusoidal_max_angle(inp: dict[str, Any]) -> float:
    conv, options, dim = inp["convention"], inp["options"], inp["dim"]
    top = max(abs(int(p)) for p in _flatten(inp["positions"]))
    if conv == "fairseq":
        top += options.get("padding_idx", 1) + 1
    if conv == "tensor2tensor":
        top *= max(options.get("min_timescale", 1.0), 1.0)
    if conv == "mlx":
        top *= options.get("max_freq", 1.0) * (2 * math.pi if options.get("full_turns") else 1.0)
    return float(top) if dim else 0.0


def _angle_tolerance(
    max_angle: float, scale: float, strict: bool, *, freq_ulps: int, scaled: bool = False
) -> Tolerance:
    """Angle-based tolerance; ``strict``: the accuracy claim, else one rounding of the angle allowed.

    ``scaled``: the values are multiplied by a factor (MLX's sqrt(2/d)), two more roundings.
    """
    if strict:
        # 4 ulp, or 4 ulp of the largest value (|cos|, |sin| <= 1) absolute: near zero,
        # absolute is the measure.
        return _tol(atol64=scale * 2.0**-50, ulp64=6 if scaled else 4, atol32=scale * 2e-6, ulp32=4)
    return _tol(
        atol64=scale * (4 * EPS64 + freq_ulps * EPS64 * max_angle),
        ulp64=4,
        atol32=scale * (2e-6 + 2 * EPS32 * max_angle),
        ulp32=4,
    )


def _sinusoidal_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    scale = _max_abs(out["table"]) or 1.0
    scaled = inp["convention"] == "mlx" and inp["options"].get("scale", None) != 1.0
    return _angle_tolerance(
        _sinusoidal_max_angle(inp), scale, "LargePosition" in flags, freq_ulps=32, scaled=scaled
    )


def phase_record(
    positions: Any, frequencies: list[Any], frequency_error: float, scale: float
) -> dict[str, Any]:
    """What the ``product`` precision class needs to bound each element of a case (see compare.py).

    ``positions`` (the output's shape without its last axis) and ``frequencies``
    (one per output column): the element's angle is ``|position| * |frequency|``.
    ``frequencyError``: how many unit roundoffs of relative error a product
    implementation's frequencies may carry (1 when they are given and only cast;
    ``3 L + 6`` when it derives them, see ``oracle.sinusoidal.column_frequencies``).
    ``scale``: the largest magnitude an output element is multiplied by.
    """
    return {
        "positions": positions,
        "frequencies": [oracle.round_float64(mp.mpf(f)) for f in frequencies],
        "frequencyError": float(frequency_error),
        "scale": float(scale),
    }


def _sinusoidal_phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    conv, options = inp["convention"], inp["options"]
    freqs, span = oracle.sinusoidal.column_frequencies(inp["dim"], conv, **options)
    flat = oracle.sinusoidal.phase_positions(_flatten(inp["positions"]), conv, **options)
    scale = _max_abs(out["table"]) or 1.0
    error = math.ceil(3 * float(span) + 6)
    return phase_record(_reshape(flat, _shape(inp["positions"])), freqs, error, scale)


def _channel_frequencies(inv_freq: list[float], layout: str, width: int) -> list[float]:
    """The frequency of each of ``width`` channels (0 past the rotated ones)."""
    n = len(inv_freq)
    rotated = [inv_freq[c % n] if layout == "half" else inv_freq[c // 2] for c in range(2 * n)]
    return rotated + [0.0] * (width - 2 * n)


def _learned(inp: dict[str, Any]) -> dict[str, Any]:
    shift = {
        "plain": 0,
        "opt": 2,
        "roberta": (1 if inp.get("padding_idx") is None else inp["padding_idx"]) + 1,
    }
    rows = oracle.learned.learned(inp["table"], _flatten(inp["positions"]), offset=shift[inp["offset"]])
    return {"rows": _reshape(rows, _shape(inp["positions"]))}


def _interpolate(inp: dict[str, Any]) -> dict[str, Any]:
    return {"table": oracle.learned.interpolate_table(inp["table"], inp["new_length"])}


# --- RoPE ---------------------------------------------------------------------------------------------


def _rope_frequencies(inp: dict[str, Any]) -> dict[str, Any]:
    inv, factor = oracle.rope.rope_frequencies(
        inp["dim"], base=inp["base"], scaling=inp["scaling"], seq_len=inp["seq_len"]
    )
    return {"inv_freq": inv, "attention_factor": factor}


def _rope_cos_sin(inp: dict[str, Any]) -> dict[str, Any]:
    cos, sin = oracle.rope.rope_cos_sin(
        _flatten(inp["positions"]),
        inp["inv_freq"],
        attention_factor=inp["attention_factor"],
        layout=inp["layout"],
    )
    shape = _shape(inp["positions"])
    return {"cos": _reshape(cos, shape), "sin": _reshape(sin, shape)}


def _rope_max_angle(inp: dict[str, Any]) -> float:
    return max(abs(int(p)) for p in _flatten(inp["positions"])) * max(abs(t) for t in inp["inv_freq"])


def _rope_cos_sin_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    scale = max(abs(inp["attention_factor"]), 1.0)
    return _angle_tolerance(_rope_max_angle(inp), scale, "LargePosition" in flags, freq_ulps=4)


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

    return {"out": walk(x, len(_shape(x)))}


def _product_scale(inp: dict[str, Any]) -> float:
    return _max_abs(inp["x"]) * max(_max_abs(inp.get("cos", [1.0])), _max_abs(inp.get("sin", [1.0])), 1.0) * 2


def _apply_rope_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    m = _product_scale(inp)
    return _tol(atol64=4 * EPS64 * m, ulp64=4, atol32=4 * EPS32 * m, ulp32=4)


def _rope(inp: dict[str, Any]) -> dict[str, Any]:
    positions = _flatten(inp["positions"])

    def walk(node: Any, depth: int) -> Any:
        if depth == 2:
            return [
                oracle.rope.rotate(
                    row, p, inp["inv_freq"], attention_factor=inp["attention_factor"], layout=inp["layout"]
                )
                for row, p in zip(node, positions, strict=True)
            ]
        return [walk(n, depth - 1) for n in node]

    return {"out": walk(inp["x"], len(_shape(inp["x"])))}


def _rope_phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    width = _shape(inp["x"])[-1]
    freqs = _channel_frequencies(inp["inv_freq"], inp["layout"], width)
    scale = 2 * _max_abs(inp["x"]) * max(abs(inp["attention_factor"]), 1.0)
    return phase_record(inp["positions"], freqs, 1, scale)


def _rope_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    scale = 2 * _max_abs(inp["x"]) * max(abs(inp["attention_factor"]), 1.0)
    angle = _angle_tolerance(_rope_max_angle(inp), scale, "LargePosition" in flags, freq_ulps=4)
    prod = _apply_rope_tol(inp, out, flags)
    return {
        dt: {"atol": angle[dt]["atol"] + prod[dt]["atol"], "rtol": 0.0, "maxUlp": 4}
        for dt in ("float64", "float32")
    }


# --- relative / bias -----------------------------------------------------------------------------------


def _t5(inp: dict[str, Any]) -> dict[str, Any]:
    kw = {k: inp[k] for k in ("bidirectional", "num_buckets", "max_distance")}
    flat = _flatten(inp["relative"])
    exact = [oracle.t5.t5_bucket(r, **kw) for r in flat]
    float32 = [oracle.t5.t5_bucket_float32(r, **kw) for r in flat]
    shape = _shape(inp["relative"])
    out = {"buckets": _reshape(exact, shape)}
    if exact != float32:
        out["acceptable:buckets"] = _reshape(float32, shape)
    return out


def _alibi_slopes(inp: dict[str, Any]) -> dict[str, Any]:
    return {"slopes": oracle.alibi.alibi_slopes(inp["num_heads"], max_bias=inp["max_bias"])}


def _alibi_slopes_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    # The original computes start * start**i (BLOOM: torch.pow of a float32 base): the rounding of the
    # base is raised to the power i, so up to ~i ulp from the exact 2**(-8(i+1)/n), in either dtype.
    heads = inp["num_heads"]
    return _tol(rtol64=(heads + 4) * EPS64, ulp64=4, rtol32=(heads + 4) * EPS32, ulp32=4)


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
    return _tol(
        atol64=4 * EPS64 * m, rtol64=2 * EPS64, ulp64=2, atol32=4 * EPS32 * m, rtol32=2 * EPS32, ulp32=2
    )


def _relative_positions(inp: dict[str, Any]) -> dict[str, Any]:
    q, k = inp["q_positions"], inp["k_positions"]
    if len(_shape(q)) == 1:
        return {"relative": oracle.relative.relative_positions(q, k)}
    return {"relative": [oracle.relative.relative_positions(a, b) for a, b in zip(q, k, strict=True)]}


def _shaw_index(inp: dict[str, Any]) -> dict[str, Any]:
    flat = _flatten(inp["relative"])
    md = inp["max_distance"]
    if inp["convention"] == "bert":
        idx = [oracle.relative.bert_index(r, max_position_embeddings=md) for r in flat]
    else:
        left, right = (md, md) if isinstance(md, int) else md
        idx = [oracle.relative.shaw_index(r, left=left, right=right) for r in flat]
    return {"index": _reshape(idx, _shape(inp["relative"]))}


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
        _flatten(inp["positions"]), floor_scale=inp["floor_scale"], attn_scale=inp["attn_scale"]
    )
    return {"scale": _reshape(flat, _shape(inp["positions"]))}


def _attention(inp: dict[str, Any]) -> dict[str, Any]:
    q, k, v = inp["q"], inp["k"], inp["v"]
    depth = len(_shape(q))
    scale = mp.mpf(inp["scale"]) if inp["scale"] is not None else 1 / mp.sqrt(_shape(q)[-1])

    def walk(qn: Any, kn: Any, vn: Any, d: int) -> Any:
        if d == 2:
            return oracle.attention.attention(qn, kn, vn, scale=scale, bias=inp["bias"], mask=inp["mask"])
        return [walk(a, b, c, d - 1) for a, b, c in zip(qn, kn, vn, strict=True)]

    return {"out": walk(q, k, v, depth)}


def _attention_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    vmax = _max_abs(inp["v"])
    logit = _max_abs(inp["q"]) * _max_abs(inp["k"]) * _shape(inp["q"])[-1] + 1
    logit += _max_abs(inp["bias"]) if inp["bias"] is not None else 0.0
    return _tol(atol64=64 * EPS64 * vmax * logit, ulp64=8, atol32=64 * EPS32 * vmax * logit, ulp32=8)


# --- the table -----------------------------------------------------------------------------------------

_POS = "int64 array, any shape"

FUNCTIONS: dict[str, FunctionSpec] = {
    spec.name: spec
    for spec in [
        FunctionSpec(
            "sinusoidal",
            "sinusoidal",
            "sinusoidal(positions, dim, convention, options) -> table[*positions.shape, dim]",
            {"positions": _POS, "dim": "int", "convention": "string", "options": "object"},
            {"table": "float"},
            _sinusoidal,
            case_tolerances=_sinusoidal_tol,
            phase=_sinusoidal_phase,
        ),
        FunctionSpec(
            "learned",
            "learned",
            "learned(table, positions, offset, padding_idx) -> rows[*positions.shape, table.shape[1]]",
            {
                "table": "float64 [rows, dim]",
                "positions": _POS,
                "offset": "plain | opt | roberta",
                "padding_idx": "int or null",
            },
            {"rows": "float"},
            _learned,
            cast_inputs=("table",),
            tolerances=_tol(),
        ),
        FunctionSpec(
            "interpolate_table",
            "learned",
            "interpolate_table(table, new_length) -> table[new_length, dim] (linear, aligned corners)",
            {"table": "float64 [rows, dim]", "new_length": "int"},
            {"table": "float"},
            _interpolate,
            cast_inputs=("table",),
            tolerances=_tol(
                atol64=4 * EPS64, rtol64=4 * EPS64, ulp64=4, atol32=4 * EPS32, rtol32=4 * EPS32, ulp32=4
            ),
        ),
        FunctionSpec(
            "rope_frequencies",
            "rope",
            "rope_frequencies(dim, base, scaling, seq_len) -> (inv_freq[dim/2], attention_factor)",
            {
                "dim": "int",
                "base": "number",
                "scaling": "object (HF rope_parameters keys) or null",
                "seq_len": "int or null",
            },
            {"inv_freq": "float", "attention_factor": "float"},
            _rope_frequencies,
            # pow() with a rounded exponent costs ~|ln theta| ulp; HF builds inv_freq in float32.
            tolerances=_tol(rtol64=64 * EPS64, ulp64=64, rtol32=32 * EPS32, ulp32=32),
        ),
        FunctionSpec(
            "rope_cos_sin",
            "rope",
            "rope_cos_sin(positions, inv_freq, attention_factor, layout) "
            "-> (cos, sin)[*positions.shape, 2*len(inv_freq)]",
            {
                "positions": _POS,
                "inv_freq": "float64 [n] (exact values; not cast)",
                "attention_factor": "float64 scalar (exact)",
                "layout": "half | interleaved",
            },
            {"cos": "float", "sin": "float"},
            _rope_cos_sin,
            case_tolerances=_rope_cos_sin_tol,
            phase=_rope_cos_sin_phase,
        ),
        FunctionSpec(
            "apply_rope",
            "rope",
            "apply_rope(x[..., S, D], cos[S, R], sin[S, R], layout) -> x rotated on its first R channels",
            {
                "x": "float64 [..., S, D]",
                "cos": "float64 [S, R]",
                "sin": "float64 [S, R]",
                "layout": "half | interleaved",
            },
            {"out": "float"},
            _apply_rope,
            cast_inputs=("x", "cos", "sin"),
            case_tolerances=_apply_rope_tol,
        ),
        FunctionSpec(
            "rope",
            "rope",
            "rope(x[..., S, D], positions[S], inv_freq, attention_factor, layout) -> rotated x (end to end)",
            {
                "x": "float64 [..., S, D]",
                "positions": "int64 [S]",
                "inv_freq": "float64 [n] (exact; not cast)",
                "attention_factor": "float64 scalar (exact)",
                "layout": "half | interleaved",
            },
            {"out": "float"},
            _rope,
            cast_inputs=("x",),
            case_tolerances=_rope_tol,
            phase=_rope_phase,
        ),
        FunctionSpec(
            "t5_bucket",
            "t5",
            "t5_bucket(relative, bidirectional, num_buckets, max_distance) -> buckets (same shape)",
            {
                "relative": "int64 array (key - query)",
                "bidirectional": "bool",
                "num_buckets": "int",
                "max_distance": "int",
            },
            {"buckets": "int"},
            _t5,
            output_kind="int",
        ),
        FunctionSpec(
            "alibi_slopes",
            "alibi",
            "alibi_slopes(num_heads, max_bias) -> slopes[num_heads]",
            {"num_heads": "int", "max_bias": "number"},
            {"slopes": "float"},
            _alibi_slopes,
            case_tolerances=_alibi_slopes_tol,
        ),
        FunctionSpec(
            "alibi_bias",
            "alibi",
            "alibi_bias(q_positions[Lq], k_positions[Lk], slopes[H], form) -> bias[H, Lq, Lk]",
            {
                "q_positions": "int64 [Lq]",
                "k_positions": "int64 [Lk]",
                "slopes": "float64 [H]",
                "form": "symmetric | causal",
            },
            {"bias": "float"},
            _alibi_bias,
            cast_inputs=("slopes",),
            tolerances=_tol(rtol64=2 * EPS64, ulp64=2, rtol32=2 * EPS32, ulp32=2),
            case_tolerances=_alibi_bias_tol,
        ),
        FunctionSpec(
            "relative_positions",
            "shaw",
            "relative_positions(q_positions, k_positions) -> key - query [..., Lq, Lk]",
            {"q_positions": "int64 [..., Lq]", "k_positions": "int64 [..., Lk]"},
            {"relative": "int"},
            _relative_positions,
            output_kind="int",
        ),
        FunctionSpec(
            "shaw_index",
            "shaw",
            "shaw_index(relative, max_distance, convention) -> table row per relative position",
            {
                "relative": "int64 array",
                "max_distance": "int or [left, right]",
                "convention": "tensor2tensor | bert",
            },
            {"index": "int"},
            _shaw_index,
            output_kind="int",
        ),
        FunctionSpec(
            "causal_mask",
            "nope",
            "causal_mask(q_positions[Lq], k_positions[Lk], sliding_window, chunk_size) -> bool[Lq, Lk]",
            {
                "q_positions": "int64 [Lq]",
                "k_positions": "int64 [Lk]",
                "sliding_window": "int or null",
                "chunk_size": "int or null",
            },
            {"mask": "bool"},
            _causal_mask,
            output_kind="bool",
        ),
        FunctionSpec(
            "llama4_attn_scale",
            "nope",
            "llama4_attn_scale(positions, floor_scale, attn_scale) -> scale (positions' shape)",
            {"positions": _POS, "floor_scale": "number", "attn_scale": "number"},
            {"scale": "float"},
            _llama4_scale,
            tolerances=_tol(rtol64=8 * EPS64, ulp64=8, rtol32=8 * EPS32, ulp32=8),
        ),
        FunctionSpec(
            "attention",
            "attention",
            "attention(q[..., Lq, D], k[..., Lk, D], v[..., Lk, Dv], bias[Lq, Lk], mask[Lq, Lk], scale) "
            "-> [..., Lq, Dv]",
            {
                "q": "float64",
                "k": "float64",
                "v": "float64",
                "bias": "float64 [Lq, Lk] or null",
                "mask": "bool [Lq, Lk] or null",
                "scale": "number or null (1/sqrt(D))",
            },
            {"out": "float"},
            _attention,
            cast_inputs=("q", "k", "v", "bias"),
            case_tolerances=_attention_tol,
        ),
    ]
}
