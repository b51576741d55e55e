"""Diagnosis of a failing case: which known bug shape reproduces the output, and where the error lives.

A *hypothesis* is a wrong formula that real implementations have shipped
(a layout swapped, rotation by -theta, positions off by one or rounded to
float16, a dropped attention factor, ALiBi's power-of-two slope rule for any
head count, ...).  For a failing case it computes the exact answer of that
wrong formula from the case's own inputs, and the adapter's output is judged
against it with the case's own tolerance (the same exact-class tolerance and,
when the adapter declares the product class, the same per-element bound).  A
hypothesis is *named* only when

* its own answer fails the case (it is distinguishable from the right one
  here), and
* the adapter's output matches it on every judged element.

So a name is never a guess: it is a second comparison that passed.  Where no
hypothesis matches, :func:`describe_structure` says where the error lives
(which indices of which axes, whether it grows with position, relative or
absolute) instead.

The wrong formulas are computed by the library itself (``posenc_ref`` on
NumPy, float64) called with changed inputs (``positions + 1``, the other
``layout``, ``attention_factor = 1``), or by a few lines of NumPy where the bug
is not a change of input (float16 trigonometry, the tensor2tensor frequencies
in the interleaved layout).  That keeps the diagnosis available in a plain
install (no mpmath) and fast enough for large cases.  It is never a verdict:
verdicts come from the oracle's golden values only.

The catalogue (:data:`HYPOTHESES`) comes from the bugs of the reference notes
and the published matrix; ``tests/test_diagnosis.py`` plants each one into an
honest implementation and checks that the report names it.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from typing import Any

import numpy as np

from . import variants
from .compare import Mismatch, as_numpy

__all__ = [
    "HYPOTHESES",
    "PRODUCT_CLASS",
    "Hypothesis",
    "Subject",
    "axes_of",
    "describe_structure",
    "diagnose",
    "locate",
]

#: Outputs larger than this many elements are not diagnosed: each of a function's ~15 hypotheses
#: recomputes and compares them (a 2**22-element export chunk took ~15 s; 2**18 takes ~1 s).
MAX_ELEMENTS = 1 << 18

#: The text naming the product precision class when it explains every failure of a case.
PRODUCT_CLASS = (
    "the product precision class (the angle is the {dtype} product of position and frequency): "
    'declare "phase": "product" to judge it as it is'
)


@dataclasses.dataclass
class Subject:
    """What a hypothesis sees: the case's function, inputs (float64), golden outputs and a reference call."""

    function: str
    inputs: dict[str, Any]
    expected: dict[str, np.ndarray]
    signature: dict[str, Any]
    reference: Any

    def call(self, **changes: Any) -> dict[str, np.ndarray] | None:
        """The library's float64 answer with some inputs changed; ``None`` when it rejects them."""
        inputs = {**self.inputs, **changes}
        args = [inputs[name] for name in self.signature["positional"]]
        kwargs = {name: inputs[name] for name in self.signature["keyword"]}
        if self.signature["takesDtype"]:
            kwargs["dtype"] = "float64"
        try:
            value = getattr(self.reference, self.function)(*args, **kwargs)
        except Exception:  # a changed input outside what the library takes: the hypothesis does not apply
            return None
        names = self.signature["outputs"]
        values = value if len(names) > 1 else (value,)
        return {name: as_numpy(v) for name, v in zip(names, values, strict=True)}

    def scaling(self) -> dict[str, Any]:
        value = self.inputs.get("scaling")
        return value if isinstance(value, dict) else {}

    def rope_type(self) -> str | None:
        s = self.scaling()
        return s.get("rope_type", s.get("type")) if s else None

    def expected_with(self, **outputs: Any) -> dict[str, np.ndarray]:
        """The golden outputs with some replaced."""
        return {**self.expected, **{k: np.asarray(v) for k, v in outputs.items()}}


Answer = Callable[[Subject], "dict[str, np.ndarray] | None"]


@dataclasses.dataclass(frozen=True)
class Hypothesis:
    """A known bug shape: its text, the canonical functions it applies to, and its exact answer.

    ``precision``: the answer is the formula evaluated in this float format (a
    float32 computation), defined only up to that format's rounding, so it is
    judged at that dtype with a tolerance of 4 ulp (or 4 ulp of the largest
    value): the formula's own roundings are in the answer, only the last bits of
    that format's cos/sin are not.  ``relayout``: the answer
    pairs channels in the other layout, so a per-element precision bound follows
    the frequency each channel then carries.
    """

    text: str
    functions: tuple[str, ...]
    answer: Answer
    precision: str | None = None
    relayout: bool = False


# --- number formats ------------------------------------------------------------------------------------


def round_to(x: Any, fmt: str) -> np.ndarray:
    """``x`` (float64) rounded to nearest-even in ``fmt`` (float16, bfloat16, float32), as float64."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        if fmt == "float16":
            return x.astype(np.float16).astype(np.float64)
        if fmt == "float32":
            return x.astype(np.float32).astype(np.float64)
        bits = x.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
        return rounded.view(np.float32).astype(np.float64)


FORMATS = ("float16", "bfloat16", "float32")


def _positions_as(fmt: str) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        p = np.asarray(s.inputs["positions"])
        rounded = round_to(p, fmt)
        if not np.all(np.isfinite(rounded)):  # beyond float16's range real code gets inf, then NaN
            return None
        return s.call(positions=rounded.astype(np.int64))

    return answer


def _shifted(delta: int) -> Answer:
    return lambda s: s.call(positions=np.asarray(s.inputs["positions"]) + delta)


def _wrapped(dtype: Any) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        p = np.asarray(s.inputs["positions"])
        wrapped = p.astype(dtype).astype(np.int64)
        return None if np.array_equal(wrapped, p) else s.call(positions=wrapped)

    return answer


def _other_layout(s: Subject) -> dict[str, np.ndarray] | None:
    return s.call(layout="interleaved" if s.inputs["layout"] == "half" else "half")


# --- RoPE ----------------------------------------------------------------------------------------------

ROTATE_WITH_POSITIONS = ("rope", "rope_heads", "rope_from_base")
ROTATING = ("apply_rope", *ROTATE_WITH_POSITIONS)
GIVEN_FREQUENCIES = ("rope_cos_sin", "rope", "rope_heads")
DERIVED_FREQUENCIES = ("rope_frequencies", "rope_from_base")


def _factor(s: Subject) -> float:
    return float(s.inputs.get("attention_factor", 1.0))


def _minus_theta(s: Subject) -> dict[str, np.ndarray] | None:
    if s.function == "apply_rope":
        return s.call(sin=-np.asarray(s.inputs["sin"]))
    return s.call(positions=-np.asarray(s.inputs["positions"]))  # cos is even, sin odd


def _factor_dropped(s: Subject) -> dict[str, np.ndarray] | None:
    return None if _factor(s) == 1.0 else s.call(attention_factor=1.0)


def _factor_twice(s: Subject) -> dict[str, np.ndarray] | None:
    f = _factor(s)
    return None if f == 1.0 else s.call(attention_factor=f * f)


def _rotated_width(s: Subject) -> int:
    if s.function == "apply_rope":
        return int(np.shape(s.inputs["cos"])[-1])
    if s.function == "rope_from_base":
        return int(s.inputs["dim"])
    return 2 * int(np.shape(s.inputs["inv_freq"])[-1])


def _width(s: Subject) -> int:
    """The channels of x."""
    return int(np.shape(s.inputs["x"])[-1])


def _wrong_slice(s: Subject) -> dict[str, np.ndarray] | None:
    """Partial rotary applied to the last r channels instead of the first r."""
    x = np.asarray(s.inputs["x"], dtype=np.float64)
    r, d = _rotated_width(s), _width(s)
    if r >= d:
        return None
    changes: dict[str, Any] = {"x": x[..., d - r :]}
    tail = s.call(**changes)
    if tail is None:
        return None
    return {"out": np.concatenate([x[..., : d - r], tail["out"][..., :r]], axis=-1)}


def _factor_on_pass_through(s: Subject) -> dict[str, np.ndarray] | None:
    f, r, d = _factor(s), _rotated_width(s), _width(s)
    if f == 1.0 or r >= d:
        return None
    out = np.array(s.expected["out"], dtype=np.float64)
    out[..., r:] *= f
    return {"out": out}


def _frequencies_as(fmt: str) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        inv = np.asarray(s.inputs["inv_freq"], dtype=np.float64)
        rounded = round_to(inv, fmt)
        return None if np.array_equal(rounded, inv) else s.call(inv_freq=rounded)

    return answer


def _expand(half: np.ndarray, layout: str) -> np.ndarray:
    return np.concatenate([half, half], axis=-1) if layout == "half" else np.repeat(half, 2, axis=-1)


def _tables_in(angle: np.ndarray, fmt: str, s: Subject) -> dict[str, np.ndarray]:
    """cos/sin of ``angle`` (one per pair) rounded to ``fmt``, times the attention factor in ``fmt``."""
    f = _factor(s)
    out = {}
    for name, trig in (("cos", np.cos), ("sin", np.sin)):
        value = round_to(trig(angle), fmt)
        out[name] = _expand(round_to(value * f, fmt) if f != 1.0 else value, s.inputs["layout"])
    return out


def _trig_in(fmt: str) -> Answer:
    """Angles, cos/sin and the attention factor's product all rounded to ``fmt`` (autocast RoPE)."""

    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        p = np.asarray(s.inputs["positions"], dtype=np.float64)
        angle = round_to(p[..., None] * np.asarray(s.inputs["inv_freq"], dtype=np.float64), fmt)
        return _tables_in(angle, fmt, s)

    return answer


def _float32_product(s: Subject) -> dict[str, np.ndarray] | None:
    """Float32 code: the angle the float32 product of a float32 position and frequency, cos/sin in float32."""
    p = np.asarray(s.inputs["positions"]).astype(np.float32)
    angle = (p[..., None] * np.asarray(s.inputs["inv_freq"]).astype(np.float32)).astype(np.float64)
    return _tables_in(angle, "float32", s)


def _iterated_float32(s: Subject) -> dict[str, np.ndarray] | None:
    """ggml's angles: theta_0 = float32(p), theta_{i+1} = theta_i * theta_scale in float32, then / c_i.

    llama.cpp passes frequencies that are not a plain geometric set (Llama 3,
    LongRoPE) as per-pair divisors ``c_i`` (``freq_factors``) of the plain set of a
    base fitted from the first two; ``theta_scale = powf(base, -2/d)``.  Every step
    is a float32 operation, so the error grows with the pair index and position.
    """
    inv = np.asarray(s.inputs["inv_freq"], dtype=np.float64)
    if inv.size < 2 or not inv[0] > inv[1] > 0:
        return None
    d = 2 * inv.size
    base = (inv[0] / inv[1]) ** (d / 2)
    own = base ** (-np.arange(0, d, 2) / d)
    with np.errstate(divide="ignore"):
        divisors = np.where(inv > 0, own / np.where(inv > 0, inv, 1.0), np.inf).astype(np.float32)
    # powf(freq_base, -2.0f / n_dims): glibc's powf rounds the exact power once (NumPy's float32
    # power does not always), so the power is taken in float64 from the float32 operands
    scale = np.float32(float(np.float32(base)) ** float(np.float32(-2.0) / np.float32(d)))
    thetas = [np.asarray(s.inputs["positions"]).astype(np.float32)]
    for _ in range(inv.size - 1):
        thetas.append((thetas[-1] * scale).astype(np.float32))
    angle = (np.stack(thetas, axis=-1) / divisors).astype(np.float32).astype(np.float64)
    return _tables_in(angle, "float32", s)


def _on_tables(table: Answer) -> Answer:
    """A wrong cos/sin table, or ``rope`` applying it to x (rope = apply_rope(x, *rope_cos_sin(...)))."""

    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        tables = table(s)
        if tables is None or s.function == "rope_cos_sin":
            return tables
        x = np.asarray(s.inputs["x"], dtype=np.float64)
        out = s.reference.apply_rope(x, tables["cos"], tables["sin"], layout=s.inputs["layout"])
        return {"out": as_numpy(out)}

    return answer


# --- RoPE frequencies ----------------------------------------------------------------------------------


def _scaled(**changes: Any) -> Callable[[Subject], dict[str, Any] | None]:
    """A changed scaling dict (``None`` value: remove the key)."""

    def change(s: Subject) -> dict[str, Any] | None:
        scaling = s.scaling()
        if not scaling:
            return None
        new = {k: v for k, v in {**scaling, **changes}.items() if v is not None}
        return new if new != scaling else None

    return change


def _with_scaling(change: Callable[[Subject], dict[str, Any] | None], *types: str) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        if types and s.rope_type() not in types:
            return None
        new = change(s)
        return None if new is None else s.call(scaling=new)

    return answer


def _scaling_ignored(s: Subject) -> dict[str, np.ndarray] | None:
    return None if s.rope_type() in (None, "default") else s.call(scaling=None)


def _factor_inverted(s: Subject) -> dict[str, np.ndarray] | None:
    factor = s.scaling().get("factor")
    if not isinstance(factor, (int, float)) or factor in (0, 1):
        return None
    return s.call(scaling={**s.scaling(), "factor": 1.0 / factor})


def _default_base(s: Subject) -> dict[str, np.ndarray] | None:
    return None if float(s.inputs.get("base", 10000.0)) == 10000.0 else s.call(base=10000.0)


def _frequency_outputs(s: Subject) -> tuple[np.ndarray, float] | None:
    if s.function != "rope_frequencies":
        return None
    return np.asarray(s.expected["inv_freq"]), float(np.asarray(s.expected["attention_factor"]))


def _inv_freq_as(fmt: str) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        got = _frequency_outputs(s)
        return None if got is None else s.expected_with(inv_freq=round_to(got[0], fmt))

    return answer


def _output_factor(value: Callable[[float, Subject], float | None]) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        got = _frequency_outputs(s)
        if got is None:
            return None
        new = value(got[1], s)
        return None if new is None or new == got[1] else s.expected_with(attention_factor=new)

    return answer


def _mlx_lm_mscale(_: float, s: Subject) -> float | None:
    """mlx-lm's YaRN: ``mscale`` without ``mscale_all_dim`` divides by get_mscale(s, 0) = 1."""
    c = s.scaling()
    if s.rope_type() != "yarn" or not c.get("mscale") or c.get("mscale_all_dim"):
        return None
    if c.get("attention_factor") is not None or not c.get("factor", 1) > 1:
        return None
    return 0.1 * float(c["mscale"]) * math.log(float(c["factor"])) + 1.0


def _exponent_over_d_minus_2(s: Subject) -> dict[str, np.ndarray] | None:
    """Frequency exponents 2i/(d - 2) (tensor2tensor's timescales, i/(d/2 - 1)) instead of 2i/d."""
    if s.function != "rope_frequencies" or s.rope_type() not in (None, "default") or int(s.inputs["dim"]) < 4:
        return None
    d, base = int(s.inputs["dim"]), float(s.inputs["base"])
    return s.expected_with(inv_freq=base ** (-np.arange(0, d, 2) / (d - 2)))


def _llama3_exclusive_edges(s: Subject) -> dict[str, np.ndarray] | None:
    """Llama 3 bands with strict edges: a wavelength equal to an edge stays in the outer band."""
    if s.function != "rope_frequencies" or s.rope_type() != "llama3":
        return None
    c, d, base = s.scaling(), int(s.inputs["dim"]), float(s.inputs["base"])
    factor, old = float(c["factor"]), float(c["original_max_position_embeddings"])
    low, high = float(c["low_freq_factor"]), float(c["high_freq_factor"])
    inv = base ** (-np.arange(0, d, 2) / d)
    wavelen = 2 * math.pi / inv
    out = np.where(wavelen > old / low, inv / factor, inv)
    smooth = (old / wavelen - low) / (high - low) if high != low else np.zeros_like(inv)
    medium = (wavelen > old / high) & (wavelen < old / low)
    out = np.where(medium, (1 - smooth) * out / factor + smooth * out, out)
    return s.expected_with(inv_freq=out)


def _seq_len_moved(delta: int) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        seq = s.inputs.get("seq_len")
        if s.rope_type() not in ("longrope", "dynamic") or not isinstance(seq, int) or seq + delta < 1:
            return None
        return s.call(seq_len=seq + delta)

    return answer


def _seq_len_ignored(s: Subject) -> dict[str, np.ndarray] | None:
    if s.rope_type() not in ("longrope", "dynamic") or s.inputs.get("seq_len") is None:
        return None
    return s.call(seq_len=None)


def _dynamic_original_max(s: Subject) -> dict[str, np.ndarray] | None:
    c = s.scaling()
    if s.rope_type() != "dynamic" or "original_max_position_embeddings" not in c:
        return None
    return s.call(scaling={**c, "max_position_embeddings": c["original_max_position_embeddings"]})


def _dynamic_unclamped_complex(s: Subject) -> dict[str, np.ndarray] | None:
    """Dynamic NTK below the trained length, unclamped: a negative base term to a fractional power.

    HF uses ``max(seq_len, max_position_embeddings)``; without the clamp the term
    ``factor * L / max - (factor - 1)`` is negative for short ``L``, Python's ``**``
    makes the base complex, and the frequencies keep the real part (vLLM).
    """
    c, seq = s.scaling(), s.inputs.get("seq_len")
    if s.function != "rope_frequencies" or s.rope_type() != "dynamic" or not isinstance(seq, int):
        return None
    limit, factor, d = c.get("max_position_embeddings"), float(c.get("factor", 1.0)), int(s.inputs["dim"])
    if not isinstance(limit, int) or seq >= limit or d <= 2:
        return None
    stretch = complex(factor * seq / limit - (factor - 1))
    base = float(s.inputs["base"]) * stretch ** (d / (d - 2))
    inv = (1.0 / base ** (np.arange(0, d, 2) / d)).real
    return s.expected_with(inv_freq=inv)


def _dynamic_as_linear(s: Subject) -> dict[str, np.ndarray] | None:
    """Dynamic NTK computed as linear scaling by factor^(d/(d-2)) at every length (keras-hub)."""
    if s.rope_type() != "dynamic" or int(s.inputs.get("dim", 0)) <= 2:
        return None
    d, factor = int(s.inputs["dim"]), float(s.scaling().get("factor", 1.0))
    return s.call(scaling={"rope_type": "linear", "factor": factor ** (d / (d - 2))}, seq_len=None)


#: The named variants of the golden files (topic, name) as a person reads them.
#: (variant axis or preset topic, value) -> what the formula is (posenc_ref_conformance/variants.py).
VARIANT_TEXTS = {
    ("ntk", "vllm"): "vLLM's ntk (base times s, every frequency divided by s^(2/d))",
    ("yarn", "deepseek"): "DeepSeek's own YaRN (always truncated; mscale and mscale_all_dim default 1 and 0)",
    ("yarn-attention-factor", "deepseek"): "YaRN with DeepSeek's attention factor (mscale and mscale_all_dim "
    "default 1 and 0), truncate read (megatron-core)",
    ("yarn-truncate", "ignored"): "YaRN with truncate not read (the correction range always rounded)",
    ("longrope", "phi3-ratio"): "Phi-3's LongRoPE (attention factor from max / original length)",
    ("proportional", "gemma4"): "vLLM's Gemma 4 proportional (no division by factor)",
}


def _variant(key: str, name: str) -> Answer:
    """The golden files' oracle of a named variant (needs mpmath, as the oracle does)."""
    topic = variants.topic_of(key)

    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        if s.function != "rope_frequencies" or s.rope_type() != topic:
            return None
        try:
            from .golden.cases import FUNCTIONS
        except ImportError:  # a plain install without the test extras: no oracle here
            return None
        out = FUNCTIONS["rope_frequencies"].variants[topic](variants.choice_of(key, name))(s.inputs)
        inv = np.array([float(v) for v in out["inv_freq"]], dtype=np.float64)
        return {"inv_freq": inv, "attention_factor": np.asarray(float(out["attention_factor"]))}

    return answer


# --- absolute ------------------------------------------------------------------------------------------

SINUSOIDAL_CONVENTIONS = ("vaswani", "tensor2tensor", "fairseq", "marian", "mlx")


def _convention(name: str) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        if s.inputs.get("convention") == name:
            return None
        return s.call(convention=name, options={})

    return answer


def _fairseq_offset(sign: int) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        if s.inputs.get("convention") != "fairseq":
            return None
        pad = int((s.inputs.get("options") or {}).get("padding_idx", 1))
        return s.call(positions=np.asarray(s.inputs["positions"]) + sign * (pad + 1))

    return answer


def _t2t_interleaved(s: Subject) -> dict[str, np.ndarray] | None:
    """Vaswani's interleaved [sin, cos] pairs with tensor2tensor's frequencies (t2t#1423)."""
    dim = int(s.inputs["dim"])
    if s.inputs.get("convention") != "vaswani" or dim % 2 or dim < 4:
        return None
    table = s.call(convention="tensor2tensor", options={})
    if table is None:
        return None
    t = table["table"]
    out = np.empty_like(t)
    out[..., 0::2], out[..., 1::2] = t[..., : dim // 2], t[..., dim // 2 :]
    return {"table": out}


def _sin_cos_swapped(s: Subject) -> dict[str, np.ndarray] | None:
    t, dim = np.asarray(s.expected["table"]), int(s.inputs["dim"])
    if dim % 2:
        return None
    if s.inputs.get("convention") == "vaswani":
        out = np.empty_like(t)
        out[..., 0::2], out[..., 1::2] = t[..., 1::2], t[..., 0::2]
        return {"table": out}
    return {"table": np.concatenate([t[..., dim // 2 :], t[..., : dim // 2]], axis=-1)}


def _offset(name: str) -> Answer:
    return lambda s: None if s.inputs.get("offset") == name else s.call(offset=name)


# --- biases --------------------------------------------------------------------------------------------


def _heads_reversed(axis: int) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        (name, value), *_ = s.expected.items()
        v = np.asarray(value)
        if v.ndim < -axis or v.shape[axis] < 2:
            return None
        return {name: np.flip(v, axis=axis)}

    return answer


def _negated(s: Subject) -> dict[str, np.ndarray] | None:
    return {name: -np.asarray(v, dtype=np.float64) for name, v in s.expected.items()}


def _power_of_two_slopes(n: int, max_bias: float) -> np.ndarray:
    return 2.0 ** (-max_bias * np.arange(1, n + 1) / n)


def _linear_slopes(s: Subject) -> dict[str, np.ndarray] | None:
    n = int(s.inputs["num_heads"])
    if n & (n - 1) == 0:  # a power of two: the rule is the same
        return None
    return {"slopes": _power_of_two_slopes(n, float(s.inputs["max_bias"]))}


def _slopes_off_by_one(s: Subject) -> dict[str, np.ndarray] | None:
    n, max_bias = int(s.inputs["num_heads"]), float(s.inputs["max_bias"])
    return {"slopes": np.asarray(s.expected["slopes"], dtype=np.float64) * 2.0 ** (max_bias / n)}


def _slopes_of_next_power(s: Subject) -> dict[str, np.ndarray] | None:
    n = int(s.inputs["num_heads"])
    if n & (n - 1) == 0:
        return None
    wider = s.call(num_heads=1 << n.bit_length())
    return None if wider is None else {"slopes": wider["slopes"][:n]}


def _slopes_reversed(s: Subject) -> dict[str, np.ndarray] | None:
    return {"slopes": np.asarray(s.expected["slopes"])[::-1]}


def _slopes_as(fmt: str) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        slopes = np.asarray(s.inputs["slopes"], dtype=np.float64)
        return s.call(slopes=round_to(slopes, fmt))

    return answer


def _other_form(s: Subject) -> dict[str, np.ndarray] | None:
    return s.call(form="causal" if s.inputs["form"] == "symmetric" else "symmetric")


def _bias_with_linear_slopes(s: Subject) -> dict[str, np.ndarray] | None:
    """alibi_bias_from_heads with slopes 2^(-8i/n) whatever the head count."""
    n = int(s.inputs["num_heads"])
    if n & (n - 1) == 0:
        return None
    slopes = _power_of_two_slopes(n, float(s.inputs["max_bias"]))
    try:
        out = s.reference.alibi_bias(
            s.inputs["q_positions"], s.inputs["k_positions"], slopes, form=s.inputs["form"]
        )
    except Exception:
        return None
    return {"bias": as_numpy(out)}


def _mask_ignored(s: Subject) -> dict[str, np.ndarray] | None:
    mask = np.asarray(s.inputs["mask"])
    ones = np.ones(mask.shape, dtype=mask.dtype)
    return None if np.array_equal(mask.astype(bool), ones.astype(bool)) else s.call(mask=ones)


def _t5_table_shifted(step: int) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        rows = np.asarray(s.inputs["table"], dtype=np.float64)
        shifted = np.concatenate([rows[1:], rows[-1:]]) if step > 0 else np.concatenate([rows[:1], rows[:-1]])
        return s.call(table=shifted)

    return answer


def _t5_zero_in_upper_half(s: Subject) -> dict[str, np.ndarray] | None:
    if not s.inputs["bidirectional"]:
        return None
    buckets = np.asarray(s.expected["buckets"])
    zero = np.asarray(s.inputs["relative"]) == 0
    return None if not zero.any() else {"buckets": np.where(zero, s.inputs["num_buckets"] // 2, buckets)}


def _buckets_moved(step: int) -> Answer:
    def answer(s: Subject) -> dict[str, np.ndarray] | None:
        b = np.asarray(s.expected["buckets"])
        return {"buckets": np.clip(b + step, 0, int(s.inputs["num_buckets"]) - 1)}

    return answer


def _relative_negated(s: Subject) -> dict[str, np.ndarray] | None:
    return s.call(relative=-np.asarray(s.inputs["relative"]))


def _flipped(name: str) -> Answer:
    return lambda s: s.call(**{name: not s.inputs[name]})


def _shaw_other(s: Subject) -> dict[str, np.ndarray] | None:
    return s.call(convention="bert" if s.inputs["convention"] == "tensor2tensor" else "tensor2tensor")


def _sandwich_from_zero(s: Subject) -> dict[str, np.ndarray] | None:
    """Sandwich with RoPE's frequencies base^(-2k/d), k = 0 .. d/2 - 1, instead of NeMo's k = 1 .. d/2."""
    q, k = np.asarray(s.inputs["q_positions"]), np.asarray(s.inputs["k_positions"])
    dim, base, heads = int(s.inputs["dim"]), float(s.inputs["base"]), int(s.inputs["num_heads"])
    rel = (k[..., None, :] - q[..., :, None]).astype(np.float64)
    total = np.cos(rel[..., None] * base ** (-2.0 * np.arange(dim // 2) / dim)).sum(-1) - dim / 2
    scales = np.arange(1, heads + 1) * 8 / heads
    out = total[..., None, :, :] / scales[:, None, None]
    return {"bias": out} if out.shape == np.shape(s.expected["bias"]) else None


def _llama4_no_floor(s: Subject) -> dict[str, np.ndarray] | None:
    if s.inputs.get("convention", "llama4") != "llama4":
        return None
    p = np.asarray(s.inputs["positions"], dtype=np.float64)
    scale = np.log((p + 1) / float(s.inputs["floor_scale"]) + 1) * float(s.inputs["attn_scale"]) + 1
    return {"scale": scale}


def _attn_scale_shifted(s: Subject) -> dict[str, np.ndarray] | None:
    """Llama 4's floor((p + 1) / F) and Mistral's floor(p / F) swapped: every step one position off."""
    convention = s.inputs.get("convention", "llama4")
    if convention not in ("llama4", "mistral"):
        return None
    p = np.asarray(s.inputs["positions"], dtype=np.int64)
    f = float(s.inputs["floor_scale"])
    shift = 0 if convention == "llama4" else 1
    return {"scale": np.log1p(np.floor((p + shift) / f)) * float(s.inputs["attn_scale"]) + 1}


def _attention_uniform_rows(s: Subject) -> dict[str, np.ndarray] | None:
    """HF eager: finfo.min where masked, so a fully masked row averages v."""
    mask = s.inputs.get("mask")
    if mask is None:
        return None
    empty = ~np.asarray(mask, dtype=bool).any(axis=-1)
    if not empty.any():
        return None
    out = np.array(s.expected["out"], dtype=np.float64)
    v = np.asarray(s.inputs["v"], dtype=np.float64)
    mean = np.broadcast_to(v.mean(axis=-2, keepdims=True), out.shape)
    rows = np.broadcast_to(empty[..., None], out.shape)
    return {"out": np.where(rows, mean, out)}


def _shifted_output(step: int) -> Answer:
    return lambda s: {name: np.asarray(v) + step for name, v in s.expected.items()}


# --- the catalogue -------------------------------------------------------------------------------------

_POSITIONAL = (
    "sinusoidal",
    "learned",
    "rope_cos_sin",
    "rope",
    "rope_heads",
    "rope_from_base",
    "xpos_scale",
    "llama4_attn_scale",
)
_TABLES = ("rope_cos_sin", "rope")
_POSITION_ROUNDED = ("sinusoidal", "rope_cos_sin", "rope", "rope_heads", "rope_from_base")
_LAYOUTS = ("rope_cos_sin", "apply_rope", "rope", "rope_heads", "rope_from_base", "xpos_scale")
_ALIBI_BIASES = ("alibi_bias", "alibi_bias_from_heads", "alibi_bias_from_mask")
_HEAD_BIASES = (*_ALIBI_BIASES, "sandwich_bias", "kerple_bias")


def _catalogue() -> tuple[Hypothesis, ...]:
    h = Hypothesis
    found = [
        h(
            "the other RoPE layout (half and interleaved pairs swapped)",
            _LAYOUTS,
            _other_layout,
            relayout=True,
        ),
        h("rotation by -theta (sin negated)", ("rope_cos_sin", *ROTATING), _minus_theta),
        h("positions off by one (p + 1, or counted from 1)", _POSITIONAL, _shifted(1)),
        h("positions off by one (p - 1)", _POSITIONAL, _shifted(-1)),
        h("positions carrying a padding offset of 2 (p + padding_idx + 1)", _POSITIONAL, _shifted(2)),
        h("positions wrapped to int16", _POSITIONAL, _wrapped(np.int16)),
        h("positions wrapped to int32", _POSITIONAL, _wrapped(np.int32)),
        *(h(f"positions rounded to {f}", _POSITION_ROUNDED, _positions_as(f)) for f in FORMATS),
        *(h(f"frequencies rounded to {f}", GIVEN_FREQUENCIES, _frequencies_as(f)) for f in FORMATS),
        *(
            h(f"cos/sin computed in {f} (angles and results rounded)", _TABLES, _on_tables(_trig_in(f)))
            for f in FORMATS[:2]
        ),
        h(
            "angles formed as float32 products (float32 position x float32 frequency)",
            _TABLES,
            _on_tables(_float32_product),
            precision="float32",
        ),
        h(
            "angles by successive float32 products (theta_{i+1} = theta_i * theta_scale, as ggml)",
            _TABLES,
            _on_tables(_iterated_float32),
            precision="float32",
        ),
        h("attention factor dropped (1.0 used)", ("rope_cos_sin", "rope", "rope_heads"), _factor_dropped),
        h("attention factor applied twice", ("rope_cos_sin", "rope", "rope_heads"), _factor_twice),
        h(
            "attention factor applied to the pass-through channels too",
            ROTATE_WITH_POSITIONS[:2],
            _factor_on_pass_through,
        ),
        h("partial rotary on the last channels instead of the first", ROTATING, _wrong_slice),
        # derived frequencies
        h("inverse frequencies rounded to float16", ("rope_frequencies",), _inv_freq_as("float16")),
        h("inverse frequencies rounded to bfloat16", ("rope_frequencies",), _inv_freq_as("bfloat16")),
        h("attention factor dropped (1.0 returned)", ("rope_frequencies",), _output_factor(lambda f, s: 1.0)),
        h(
            "attention factor applied twice (its square)",
            ("rope_frequencies",),
            _output_factor(lambda f, s: f * f),
        ),
        h(
            "YaRN attention factor 0.1 mscale ln(s) + 1 (mscale without mscale_all_dim, as mlx-lm)",
            ("rope_frequencies",),
            _output_factor(_mlx_lm_mscale),
        ),
        h("scaling ignored (plain RoPE frequencies)", DERIVED_FREQUENCIES, _scaling_ignored),
        h("scaling factor inverted (1 / factor)", DERIVED_FREQUENCIES, _factor_inverted),
        h("base 10000 instead of the configured rope_theta", DERIVED_FREQUENCIES, _default_base),
        h(
            "frequency exponents 2i/(d - 2) (tensor2tensor timescales) instead of 2i/d",
            ("rope_frequencies",),
            _exponent_over_d_minus_2,
        ),
        h(
            "YaRN truncate ignored (correction range always floored/ceiled)",
            DERIVED_FREQUENCIES,
            _with_scaling(_scaled(truncate=True), "yarn"),
        ),
        h(
            "YaRN truncate: false assumed (correction range never rounded)",
            DERIVED_FREQUENCIES,
            _with_scaling(_scaled(truncate=False), "yarn"),
        ),
        h(
            "Llama 3 band edges exclusive (a wavelength on an edge left unscaled)",
            ("rope_frequencies",),
            _llama3_exclusive_edges,
        ),
        h(
            "LongRoPE/dynamic switch one position early (seq_len >= original)",
            DERIVED_FREQUENCIES,
            _seq_len_moved(1),
        ),
        h("LongRoPE/dynamic switch one position late", DERIVED_FREQUENCIES, _seq_len_moved(-1)),
        h(
            "seq_len ignored (LongRoPE short factors / no dynamic rescaling)",
            DERIVED_FREQUENCIES,
            _seq_len_ignored,
        ),
        h(
            "dynamic NTK divided by original_max_position_embeddings instead of max_position_embeddings",
            DERIVED_FREQUENCIES,
            _dynamic_original_max,
        ),
        h(
            "dynamic NTK below the trained length without the clamp (complex base, real part kept, as vLLM)",
            ("rope_frequencies",),
            _dynamic_unclamped_complex,
        ),
        h(
            "dynamic NTK as linear scaling by factor^(d/(d-2)) at every length (as keras-hub)",
            DERIVED_FREQUENCIES,
            _dynamic_as_linear,
        ),
        *(
            h(
                f'{text}: declare variants {{"{topic}": "{name}"}}',
                ("rope_frequencies",),
                _variant(topic, name),
            )
            for (topic, name), text in VARIANT_TEXTS.items()
        ),
        # absolute
        *(
            h(f"the {c} sinusoidal convention", ("sinusoidal",), _convention(c))
            for c in SINUSOIDAL_CONVENTIONS
        ),
        h(
            "fairseq padding offset missing (rows by the 0-based position)",
            ("sinusoidal",),
            _fairseq_offset(-1),
        ),
        h("fairseq padding offset applied twice", ("sinusoidal",), _fairseq_offset(1)),
        h(
            "interleaved [sin, cos] pairs with tensor2tensor's frequencies (no permutation of the paper's)",
            ("sinusoidal",),
            _t2t_interleaved,
        ),
        h("sin and cos swapped", ("sinusoidal",), _sin_cos_swapped),
        *(h(f"the {o} learned-table offset", ("learned",), _offset(o)) for o in ("plain", "opt", "roberta")),
        # ALiBi
        h("slopes 2^(-8i/n) for a head count that is not a power of two", ("alibi_slopes",), _linear_slopes),
        h(
            "slopes 2^(-8i/n) for a head count that is not a power of two",
            ("alibi_bias_from_heads",),
            _bias_with_linear_slopes,
        ),
        h("slopes off by one head (2^(-8(i-1)/n), the first slope 1)", ("alibi_slopes",), _slopes_off_by_one),
        h("the first n slopes of the next power of two", ("alibi_slopes",), _slopes_of_next_power),
        h("slopes in reverse head order", ("alibi_slopes",), _slopes_reversed),
        *(h(f"slopes rounded to {f}", ("alibi_bias",), _slopes_as(f)) for f in FORMATS[:2]),
        h(
            "the other ALiBi form (causal and symmetric swapped)",
            ("alibi_bias", "alibi_bias_from_heads"),
            _other_form,
        ),
        h("heads in reverse order", _HEAD_BIASES, _heads_reversed(-3)),
        h("bias with the opposite sign", (*_HEAD_BIASES, "t5_bias"), _negated),
        h(
            "padding ignored (keys counted as arange(L))",
            ("alibi_bias_from_mask", "token_positions"),
            _mask_ignored,
        ),
        # T5, Shaw, masks, the rest
        h("bidirectional and causal T5 buckets swapped", ("t5_bucket", "t5_bias"), _flipped("bidirectional")),
        h(
            "relative positions with the opposite sign (query - key)",
            ("t5_bucket", "shaw_index"),
            _relative_negated,
        ),
        h(
            "distance 0 in the upper half of bidirectional buckets (relative >= 0)",
            ("t5_bucket",),
            _t5_zero_in_upper_half,
        ),
        h("every bucket one too high", ("t5_bucket",), _buckets_moved(1)),
        h("every bucket one too low", ("t5_bucket",), _buckets_moved(-1)),
        h("T5 bias rows one bucket off (bucket + 1)", ("t5_bias",), _t5_table_shifted(1)),
        h("T5 bias rows one bucket off (bucket - 1)", ("t5_bias",), _t5_table_shifted(-1)),
        h(
            "the other Shaw convention (tensor2tensor's clip and BERT's table rows swapped)",
            ("shaw_index", "shaw_table_rows"),
            _shaw_other,
        ),
        h(
            "the key term dropped",
            ("shaw_logits",),
            lambda s: None if s.inputs.get("k") is None else s.call(k=None),
        ),
        h(
            "the KV cache length ignored",
            ("token_positions",),
            lambda s: None if not s.inputs["cache_length"] else s.call(cache_length=0),
        ),
        h("positions one too high", ("token_positions", "relative_positions"), _shifted_output(1)),
        h("r1 and r2 swapped", ("kerple_bias",), lambda s: s.call(r1=s.inputs["r2"], r2=s.inputs["r1"])),
        h(
            "2-D RoPE rows and columns swapped (positions [x, y] read as [y, x])",
            ("rope_2d_cos_sin",),
            lambda s: s.call(positions=np.ascontiguousarray(np.asarray(s.inputs["positions"])[::-1])),
        ),
        h(
            "Sandwich frequencies from k = 0 (RoPE's) instead of k = 1",
            ("sandwich_bias",),
            _sandwich_from_zero,
        ),
        h("the floor dropped (log((p + 1) / floor_scale + 1))", ("llama4_attn_scale",), _llama4_no_floor),
        h(
            "the staircase one position off: floor(p / F) and floor((p + 1) / F) swapped "
            '(convention "mistral" vs "llama4")',
            ("llama4_attn_scale",),
            _attn_scale_shifted,
        ),
        h(
            "fully masked rows average v (HF eager's finfo.min): "
            'declare variants {"fully-masked-rows": "uniform"}',
            ("attention",),
            _attention_uniform_rows,
        ),
    ]
    return tuple(found)


#: Every known bug shape, in the order a report lists them.
HYPOTHESES: tuple[Hypothesis, ...] = _catalogue()


# --- judging hypotheses --------------------------------------------------------------------------------


@functools.lru_cache(maxsize=1)
def _reference() -> Any:
    """The library on NumPy at float64: the built-in adapter, made once."""
    from .adapters.posenc_ref import PosencRefAdapter

    return PosencRefAdapter("numpy")


def _as_float64(inputs: dict[str, Any]) -> dict[str, Any]:
    """The case's inputs with float32 arrays widened (their values are exact in float64)."""
    return {
        k: v.astype(np.float64) if isinstance(v, np.ndarray) and v.dtype == np.float32 else v
        for k, v in inputs.items()
    }


Judge = Callable[[str, Any, np.ndarray], Any]


def diagnose(
    function: str,
    signature: dict[str, Any],
    inputs: dict[str, Any],
    expected: dict[str, np.ndarray],
    outputs: dict[str, Any],
    own: Judge,
    judge_for: Callable[[str | None, dict[str, Any] | None], Judge],
    dtype: str | None,
    phase: dict[str, Any] | None = None,
) -> tuple[str, ...] | None:
    """The texts of the hypotheses whose answer ``outputs`` matches on every judged element.

    ``own(name, actual, expected) -> Verdict`` is the case's own comparison of one
    output (raising :class:`~.compare.Mismatch` for a wrong shape);
    ``judge_for(precision, phase)`` the comparison of the output with a
    hypothesis's answer: the case's tolerance and bound at the run's dtype when
    both are ``None``, else at ``precision``'s last bits or with another phase
    record (see :class:`Hypothesis`), never the case's other acceptable answer.
    A hypothesis counts only when its own answer, rounded to the run's ``dtype``,
    fails the case: one that agrees with the golden values here cannot explain a
    failure.  ``None``: the outputs are larger than :data:`MAX_ELEMENTS`, and the
    catalogue was not tried.  A hypothesis that raises is one that does not apply.
    """
    if sum(int(np.size(v)) for v in expected.values()) > MAX_ELEMENTS:
        return None
    subject = Subject(function, _as_float64(inputs), expected, signature, _reference())
    named = []
    for hypothesis in HYPOTHESES:
        if function not in hypothesis.functions:
            continue
        try:
            if _reproduces(hypothesis, subject, expected, outputs, own, judge_for, dtype, phase):
                named.append(hypothesis.text)
        except Exception:  # a formula that cannot be evaluated on these inputs does not apply
            continue
    return tuple(named)


def _reproduces(
    hypothesis: Hypothesis,
    subject: Subject,
    expected: dict[str, np.ndarray],
    outputs: dict[str, Any],
    own: Judge,
    judge_for: Callable[[str | None, dict[str, Any] | None], Judge],
    dtype: str | None,
    phase: dict[str, Any] | None,
) -> bool:
    """Whether ``hypothesis``'s answer fails the case and the outputs meet it on every judged element."""
    with np.errstate(all="ignore"):  # wrong formulas overflow (float16 angles) where real code did too
        answer = hypothesis.answer(subject)
        if answer is None or set(answer) != set(expected) or not _finite(answer):
            return False
        if _matches(_rounded(answer, dtype), expected, own):
            return False
        record = relayout(phase, subject) if hypothesis.relayout and phase is not None else None
        precision = hypothesis.precision if hypothesis.precision != dtype else None
        return _matches(outputs, answer, judge_for(precision, record))


def relayout(phase: dict[str, Any], subject: Subject) -> dict[str, Any]:
    """The phase record with each rotated channel's frequency where the other layout puts it."""
    from .golden import _format

    freqs = np.array(_format.decode(phase["frequencies"]), dtype=np.float64)
    r = min(_rotated_width(subject), freqs.shape[-1])
    if subject.inputs.get("layout") == "half":
        freqs[..., :r] = np.repeat(freqs[..., : r // 2], 2, axis=-1)
    else:
        pairs = freqs[..., 0:r:2]
        freqs[..., :r] = np.concatenate([pairs, pairs], axis=-1)
    return {**phase, "frequencies": _format.float_array(freqs.tolist())}


def _finite(values: dict[str, np.ndarray]) -> bool:
    return all(
        np.all(np.isfinite(v)) for v in values.values() if np.issubdtype(np.asarray(v).dtype, np.floating)
    )


def _rounded(values: dict[str, np.ndarray], dtype: str | None) -> dict[str, np.ndarray]:
    """Float answers in the run's dtype (what an implementation of that formula would return)."""
    return {
        k: np.asarray(v).astype(dtype) if dtype and np.issubdtype(np.asarray(v).dtype, np.floating) else v
        for k, v in values.items()
    }


def _matches(
    actual: dict[str, Any], expected: dict[str, np.ndarray], judge: Callable[[str, Any, np.ndarray], Any]
) -> bool:
    """Whether ``actual`` meets ``expected`` on every judged element of every output (and judged some)."""
    judged = 0
    for name, want in expected.items():
        got = np.asarray(actual[name])
        if got.shape != np.shape(want):
            return False
        try:
            verdict = judge(name, got, np.asarray(want, dtype=np.float64))
        except Mismatch:
            return False
        if not verdict.ok:
            return False
        judged += verdict.judged
    return judged > 0


# --- locations and structure ---------------------------------------------------------------------------

_POSITION_TABLES = ("sinusoidal", "learned", "rope_cos_sin", "xpos_scale")
_ROTATIONS = ("apply_rope", "rope", "rope_from_base")


def axes_of(function: str, output: str, inputs: dict[str, Any], shape: tuple[int, ...]) -> list[str]:
    """A name for each axis of one output, in the data's own terms (batch, head, position, channel, ...)."""
    n = len(shape)

    def lead(names: list[str]) -> list[str]:
        return ["batch"] * (n - len(names)) + names if n >= len(names) else names[len(names) - n :]

    if function in _POSITION_TABLES:
        return lead(["position", "channel"])
    if function == "llama4_attn_scale":
        return lead(["position"])
    if function in _ROTATIONS:
        return lead(["head", "position", "channel"]) if n >= 4 else lead(["position", "channel"])
    if function == "rope_heads":
        layout = {
            "bhsd": ["batch", "head", "position", "channel"],
            "bshd": ["batch", "position", "head", "channel"],
        }
        return layout.get(inputs.get("head_layout", ""), ["token", "head", "channel"])[:n]
    if function in (*_HEAD_BIASES, "t5_bias"):
        return lead(["head", "query", "key"]) if n >= 3 else lead(["query", "key"])
    if function in ("relative_positions", "causal_mask"):
        return lead(["query", "key"])
    if function == "rope_frequencies" and output == "inv_freq":
        return ["pair"]
    if function == "alibi_slopes":
        return ["head"]
    return [f"axis {i}" for i in range(n)]


def _position_value(
    function: str, inputs: dict[str, Any], axes: list[str], index: tuple[int, ...]
) -> int | None:
    """The position (value) of one element, where its function has a positions input that names it."""
    key = "position" if "position" in axes else ("token" if "token" in axes else None)
    p = inputs.get("positions")
    if key is None or p is None:
        return None
    p = np.asarray(p)
    at = [index[i] for i, a in enumerate(axes) if a == "batch"] + [index[axes.index(key)]]
    at = at[len(at) - p.ndim :] if p.ndim <= len(at) else at
    try:
        return int(p[tuple(i if dim > 1 else 0 for i, dim in zip(at, p.shape, strict=False))])
    except (IndexError, ValueError, TypeError):
        return None


def _pair(function: str, inputs: dict[str, Any], shape: tuple[int, ...], channel: int | None) -> int | None:
    """The rotated pair of a RoPE channel (``None`` for a pass-through channel or another function)."""
    if (
        channel is None
        or "layout" not in inputs
        or function not in ("rope_cos_sin", *_ROTATIONS, "rope_heads")
    ):
        return None
    if function == "rope_cos_sin":
        r = shape[-1]
    elif function == "apply_rope":
        r = int(np.shape(inputs["cos"])[-1])
    elif function == "rope_from_base":
        r = int(inputs["dim"])
    else:
        r = 2 * int(np.shape(inputs["inv_freq"])[-1])
    if channel >= r or r < 2:
        return None
    return channel // 2 if inputs["layout"] == "interleaved" else channel % (r // 2)


def locate(
    function: str,
    output: str,
    inputs: dict[str, Any],
    shape: tuple[int, ...],
    worst: list[tuple[int, float, float, float, float]],
) -> list[dict[str, Any]]:
    """Each worst element (flat index, actual, expected, error, allowed) in the data's own terms."""
    axes = axes_of(function, output, inputs, shape)
    found = []
    for flat, actual, expected, error, allowed in worst:
        index = tuple(int(i) for i in np.unravel_index(flat, shape)) if shape else ()
        at = dict(zip(axes, index, strict=False))
        pair = _pair(function, inputs, shape, at.get("channel"))
        if pair is not None:
            at["pair"] = pair
        found.append(
            {
                "output": output,
                "at": at,
                "position": _position_value(function, inputs, axes, index),
                "actual": actual,
                "expected": expected,
                "error": error,
                "allowed": allowed,
            }
        )
    return found


def _spans(indices: np.ndarray) -> str:
    """``0-3, 7, 9-12`` for sorted unique indices."""
    parts, start, prev = [], None, None
    for i in [int(v) for v in indices]:
        if start is None:
            start = prev = i
        elif i == prev + 1:
            prev = i
        else:
            parts.append(f"{start}" if start == prev else f"{start}-{prev}")
            start = prev = i
    if start is not None:
        parts.append(f"{start}" if start == prev else f"{start}-{prev}")
    text = ", ".join(parts[:6])
    return text + (f", ... ({len(indices)} in all)" if len(parts) > 6 else "")


def describe_structure(
    function: str,
    output: str,
    inputs: dict[str, Any],
    actual: np.ndarray,
    expected: np.ndarray,
    failing: np.ndarray,
) -> str:
    """Where one output's failing elements are: the axes they occupy, growth, relative or absolute."""
    if not np.any(failing) or failing.shape != expected.shape or expected.ndim == 0:
        return ""
    axes = axes_of(function, output, inputs, expected.shape)
    err = np.abs(actual.astype(np.float64) - expected)
    parts = [f"{output}: {int(failing.sum())} of {failing.size} elements fail"]
    for axis, name in enumerate(axes):
        if expected.shape[axis] < 2:
            continue
        others = tuple(i for i in range(failing.ndim) if i != axis)
        hit = np.flatnonzero(failing.any(axis=others))
        if hit.size < expected.shape[axis]:
            parts.append(f"only at {name} {_spans(hit)} of 0-{expected.shape[axis] - 1}")
    parts.append(_growth(function, inputs, axes, err, failing))
    parts.append(_magnitude(err[failing], np.abs(expected[failing])))
    return "; ".join(p for p in parts if p)


def _magnitude(err: np.ndarray, size: np.ndarray) -> str:
    """The failing elements' absolute and relative errors; "proportional" when the relative varies less."""
    text = f"absolute error {float(err.min()):.2g} to {float(err.max()):.2g}"
    nonzero = (size > 0) & (err > 0)
    if not nonzero.any():
        return text
    rel = err[nonzero] / size[nonzero]
    text += f", relative {float(rel.min()):.2g} to {float(rel.max()):.2g}"
    if rel.size > 4 and np.std(np.log(rel)) < 0.5 * np.std(np.log(err[nonzero])):
        text += " (proportional to the value)"
    return text


def _growth(
    function: str, inputs: dict[str, Any], axes: list[str], err: np.ndarray, failing: np.ndarray
) -> str:
    """Whether the error grows with position (the worst error per position, low half against high half)."""
    p = inputs.get("positions")
    if p is None or "position" not in axes:
        return ""
    positions = np.asarray(p)
    axis = axes.index("position")
    if err.shape[axis] < 4:
        return ""
    per = err.max(axis=tuple(i for i in range(err.ndim) if i != axis))
    values = positions.reshape(-1, positions.shape[-1]).max(axis=0) if positions.ndim else None
    if values is None or values.shape[0] != per.shape[0]:
        return ""
    order = np.argsort(values)
    low, high = per[order[: len(order) // 2]], per[order[len(order) // 2 :]]
    if high.max() > 8 * max(low.max(), 1e-300):
        at = int(values[order][np.argmax(per[order])])
        return f"growing with position (worst {high.max():.2g} at position {at})"
    return "not growing with position"
