"""RoPE frequencies: the declaration shared helpers of the RoPE family and the rope_frequencies cases.

The other RoPE modules build on the helpers here: ``rope_tables`` (cos/sin,
apply_rope, rope, rope_heads), ``rope_base`` (rope_from_base: frequencies the
implementation derives itself), ``rope_positions`` (xPos scales, M-RoPE ids and
angles).  Named variants of a scaling type (:func:`frequency_formula`) are
shared by ``rope_frequencies`` and ``rope_from_base``, so a kernel that owns its
frequencies declares the same variant for both.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import oracle, variants
from ...oracle._numeric import mp
from ..functions import (
    EPS32,
    EPS64,
    FunctionSpec,
    Tolerance,
    angle_tolerance,
    declare,
    flatten,
    max_abs,
    tol,
)
from ..notes import add_note
from ._common import case

# --- helpers shared by the RoPE modules ------------------------------------------------------------


def _channel_frequencies(inv_freq: list[Any], layout: str, width: int) -> list[Any]:
    """The frequency of each of ``width`` channels (0 past the rotated ones)."""
    n = len(inv_freq)
    rotated = [inv_freq[c % n] if layout == "half" else inv_freq[c // 2] for c in range(2 * n)]
    return rotated + [0.0] * (width - 2 * n)


def _scaling_type(inp: dict[str, Any]) -> str | None:
    scaling = inp.get("scaling")
    if not isinstance(scaling, dict):
        return "default"
    return scaling.get("rope_type", scaling.get("type", "default"))


def _max_angle(positions: Any, inv_freq: list[Any]) -> float:
    return max(abs(int(p)) for p in flatten(positions)) * max(abs(float(t)) for t in inv_freq)


def _apply_tolerance(x: Any, table_scale: float) -> Tolerance:
    """A rotation of ``x`` by cos/sin of magnitude up to ``table_scale``: 4 roundings of its largest term."""
    m = max_abs(x) * max(table_scale, 1.0) * 2
    return tol(atol64=4 * EPS64 * m, ulp64=4, atol32=4 * EPS32 * m, ulp32=4)


def _rotation_tolerance(
    x: Any, positions: Any, inv_freq: list[Any], factor: float, strict: bool
) -> Tolerance:
    """End-to-end rotation: the angle's tolerance (strict at the accuracy claim) plus the rotation's."""
    scale = 2 * max_abs(x) * max(abs(factor), 1.0)
    angle = angle_tolerance(_max_angle(positions, inv_freq), scale, strict, freq_ulps=4)
    prod = _apply_tolerance(x, 1.0)  # the angle's part carries the attention factor
    return {
        dt: {"atol": angle[dt]["atol"] + prod[dt]["atol"], "rtol": 0.0, "maxUlp": 4}
        for dt in ("float64", "float32")
    }


def _ntk_vllm(dim: int, *, base: float, scaling: Any, seq_len: Any = None) -> tuple[list[Any], Any]:
    return oracle.rope.ntk_vllm(dim, base=base, factor=scaling["factor"]), mp.mpf(1)


def _yarn(choice: dict[str, str]) -> Callable[..., tuple[list[Any], Any]]:
    if choice == variants.canonical("yarn"):
        return oracle.rope.rope_frequencies

    def formula(dim: int, *, base: float, scaling: Any, seq_len: Any = None) -> tuple[list[Any], Any]:
        return oracle.rope.yarn_variant(
            dim,
            base=base,
            scaling=scaling,
            attention_factor=choice["yarn-attention-factor"],
            truncate=choice["yarn-truncate"],
        )

    return formula


#: axis -> non-canonical value -> its oracle ``(dim, *, base, scaling, seq_len) -> (inv_freq, factor)``,
#: for the topics of one axis (YaRN's two axes are :func:`_yarn`'s).
_ONE_AXIS: dict[str, dict[str, Callable[..., tuple[list[Any], Any]]]] = {
    "ntk": {"vllm": _ntk_vllm},
    "longrope": {"phi3-ratio": oracle.rope.longrope_phi3},
    "proportional": {"gemma4": oracle.rope.proportional_gemma4},
}
#: The scaling types with variant axes (golden/variants.py).
FREQUENCY_TOPICS = ("ntk", "yarn", "longrope", "proportional")


def frequency_formula(topic: str, choice: dict[str, str]) -> Callable[..., tuple[list[Any], Any]]:
    """The oracle of ``topic``'s frequencies under the axis values ``choice``."""
    if topic == "yarn":
        return _yarn(choice)
    value = choice[topic]
    return _ONE_AXIS[topic].get(value, oracle.rope.rope_frequencies)


def variants_of(compute: Callable[[Callable[..., tuple[list[Any], Any]]], Any]) -> dict[str, Any]:
    """topic -> (axis values -> ``compute(formula)``): a function's variants from its frequency formula."""
    return {t: (lambda choice, t=t: compute(frequency_formula(t, choice))) for t in FREQUENCY_TOPICS}


# --- rope_frequencies -------------------------------------------------------------------------------


def _frequencies_with(
    formula: Callable[..., tuple[list[Any], Any]],
) -> Callable[[dict[str, Any]], dict[str, Any]]:
    def compute(inp: dict[str, Any]) -> dict[str, Any]:
        inv, factor = formula(inp["dim"], base=inp["base"], scaling=inp["scaling"], seq_len=inp["seq_len"])
        return {"inv_freq": inv, "attention_factor": factor}

    return compute


declare(
    FunctionSpec(
        "rope_frequencies",
        "rope",
        "rope_frequencies(dim, base, scaling, seq_len) -> (inv_freq[dim/2], attention_factor)",
        {
            "dim": ("int", "rotated channels"),
            "base": ("number", "rope_theta"),
            "scaling": ("scaling|null", "object (HF rope_parameters keys) or null"),
            "seq_len": ("int|null", "int or null"),
        },
        {"inv_freq": "float", "attention_factor": "float"},
        _frequencies_with(oracle.rope.rope_frequencies),
        positional=1,
        takes_dtype=True,
        options={"scaling": "scaling_types"},
        topic=_scaling_type,
        variants=variants_of(_frequencies_with),
        # pow() with a rounded exponent costs ~|ln theta| ulp; HF builds inv_freq in float32.
        tolerances=tol(rtol64=64 * EPS64, ulp64=64, rtol32=32 * EPS32, ulp32=32),
    )
)

UnitFactor = add_note(
    "UnitFactor",
    "Functionality",
    "A scaling whose factors are all 1 (linear, ntk, yarn, llama3, longrope, proportional) must give the "
    "default frequencies and attention factor 1: code that applies a correction unconditionally "
    "(an mscale, a base rescale evaluated at dim - 2 = 0, a ramp) breaks it.",
)
YarnMscaleAllDimOnly = add_note(
    "YarnMscaleAllDimOnly",
    "ConventionMismatch",
    "mscale_all_dim without mscale: HF's truthiness test falls back to 0.1 ln(s) + 1; DeepSeek's own "
    "code (and vLLM's deepseek_yarn) divides get_mscale(s, 1) by get_mscale(s, mscale_all_dim).",
    "https://github.com/vllm-project/vllm/issues/48621",
)
YarnFactorNull = add_note(
    "YarnFactorNull",
    "ConventionMismatch",
    "An explicit factor: null derives the YaRN factor from max_position_embeddings / "
    "original_max_position_embeddings, as HF v5's _compute_yarn_parameters does (its validate_rope "
    "rejects an absent key, so a config spells the derivation as null).",
    "https://github.com/huggingface/transformers/pull/40320",
)


def _freq(
    id: str,
    comment: str,
    flags: Any,
    dim: int,
    base: float = 10000.0,
    scaling: Any = None,
    seq_len: int | None = None,
    error: Any = None,
    variant: str | None = None,
) -> None:
    case(
        f"rope_frequencies/{id}",
        comment,
        flags,
        error,
        variant=variant,
        dim=dim,
        base=base,
        scaling=scaling,
        seq_len=seq_len,
    )


_freq("default/d8", "theta_i = 10000**(-2i/8).", "Basic", 8)
_freq("default/d128-llama3-base", "Llama 3 base 500000, head_dim 128.", "Basic", 128, 500000.0)
_freq("default/d64-base-1e7", "A large base.", "Basic", 64, 1.0e7)
_freq("default/d2", "One pair: theta_0 = 1.", "Basic", 2)
_freq(
    "default/explicit-type", "rope_type 'default' spelled out.", "Basic", 16, scaling={"rope_type": "default"}
)
_freq(
    "linear/factor-4",
    "Position interpolation: theta / 4.",
    "LinearScaling",
    32,
    scaling={"rope_type": "linear", "factor": 4.0},
)
_freq(
    "linear/legacy-type-key",
    "v4 rope_scaling {'type': 'linear'}.",
    ("LinearScaling", "LegacyTypeKey"),
    16,
    scaling={"type": "linear", "factor": 2.0},
)
_freq(
    "ntk/factor-8",
    "Static NTK-aware base 10000 * 8**(64/62).",
    "NtkScaling",
    64,
    scaling={"rope_type": "ntk", "factor": 8.0},
)
_freq(
    "ntk/factor-4-d128",
    "Static NTK-aware at Llama 3's base: b' = 5e5 * 4**(128/126).",
    "NtkScaling",
    128,
    500000.0,
    scaling={"rope_type": "ntk", "factor": 4.0},
)
for _dim, _base, _factor in ((64, 10000.0, 8.0), (128, 500000.0, 4.0)):
    _freq(
        f"ntk-vllm/factor-{_factor:g}-d{_dim}",
        f"vLLM's 'ntk' (a variant): theta_i = ({_base:g} * {_factor:g})**(-2i/{_dim}) "
        f"/ {_factor:g}**(2/{_dim}).",
        ("NtkScaling", "NamedVariant"),
        _dim,
        _base,
        scaling={"rope_type": "ntk", "factor": _factor},
        variant="vllm",
    )
_DYN = {
    "rope_type": "dynamic",
    "factor": 2.0,
    "max_position_embeddings": 4096,
    "original_max_position_embeddings": 2048,
}
for _seq, _why in [
    (None, "seq_len None: the limit"),
    (1000, "below the limit: unscaled"),
    (4096, "at the limit: unscaled"),
    (4097, "just above the limit"),
    (10000, "well above"),
]:
    _freq(
        f"dynamic/seq-len-{_seq}",
        f"Dynamic NTK, {_why}; divides by max_position_embeddings (4096), not original_max (2048).",
        ("DynamicNtkLimit", "DynamicNtkMaxPositions"),
        64,
        scaling=_DYN,
        seq_len=_seq,
    )
_LLAMA2 = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}
_freq(
    "yarn/llama2-truncate",
    "d=128, b=1e4, L=4096: correction range 20.94/45.03 truncated to 20/46.",
    "YarnTruncate",
    128,
    scaling=_LLAMA2,
)
_freq(
    "yarn/llama2-no-truncate",
    "The same with truncate=false: exact bounds 20.94/45.03.",
    "YarnTruncate",
    128,
    scaling={**_LLAMA2, "truncate": False},
)
_GPT_OSS = {
    "rope_type": "yarn",
    "factor": 32.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "truncate": False,
}
_freq(
    "yarn/gpt-oss",
    "gpt-oss: truncate=false, bounds 8.0928/17.3980, attention factor 0.1 ln 32 + 1.",
    ("YarnTruncate", "YarnAttentionFactor"),
    64,
    150000.0,
    _GPT_OSS,
)
_freq(
    "yarn/explicit-attention-factor",
    "attention_factor=1.0 with factor 64 (poolside Laguna style).",
    "YarnAttentionFactor",
    64,
    10000.0,
    {"rope_type": "yarn", "factor": 64.0, "original_max_position_embeddings": 4096, "attention_factor": 1.0},
)
_freq(
    "yarn/deepseek-v3",
    "DeepSeek-V3: mscale = mscale_all_dim = 1, factor 40: attention factor 1.",
    "YarnMscaleRatio",
    64,
    10000.0,
    {
        "rope_type": "yarn",
        "factor": 40.0,
        "original_max_position_embeddings": 4096,
        "beta_fast": 32.0,
        "beta_slow": 1.0,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    },
)
_freq(
    "yarn/mscale-ratio",
    "mscale 1.0 over mscale_all_dim 0.5: get_mscale ratio != 1.",
    "YarnMscaleRatio",
    32,
    10000.0,
    {
        "rope_type": "yarn",
        "factor": 16.0,
        "original_max_position_embeddings": 2048,
        "mscale": 1.0,
        "mscale_all_dim": 0.5,
    },
)
_freq(
    "yarn/ministral3",
    "factor 16, mscale = mscale_all_dim = 1: 1.0 (vLLM once gave 1.27726).",
    "YarnMscaleRatio",
    128,
    1.0e6,
    {
        "rope_type": "yarn",
        "factor": 16.0,
        "original_max_position_embeddings": 16384,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
    },
)
_freq(
    "yarn/mscale-only",
    "mscale=1.5 without mscale_all_dim: HF falls back to 0.1 ln s + 1.",
    "YarnMscaleOnly",
    64,
    10000.0,
    {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096, "mscale": 1.5},
)
_freq(
    "yarn/factor-from-lengths",
    "No factor: 32768 / 4096 = 8.",
    "YarnFactorFromLengths",
    64,
    10000.0,
    {"rope_type": "yarn", "max_position_embeddings": 32768, "original_max_position_embeddings": 4096},
)
_freq(
    "yarn/explicit-factor-wins",
    "An explicit factor 4 wins over 32768 / 4096 (transformers#38224).",
    "YarnFactorFromLengths",
    64,
    10000.0,
    {
        "rope_type": "yarn",
        "factor": 4.0,
        "max_position_embeddings": 32768,
        "original_max_position_embeddings": 4096,
    },
)
_freq(
    "yarn/qwen2.5",
    "Qwen2.5 YaRN: factor 4, original 32768, base 1e6.",
    "YarnTruncate",
    128,
    1.0e6,
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768},
)
_freq(
    "yarn/equal-bounds",
    "Both bounds clamp to d - 1 = 3: the ramp's +0.001 guard.",
    "YarnEqualBounds",
    4,
    10.0,
    {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 8192},
)
_L31 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}
_freq("llama3/llama3.1", "Llama 3.1: three bands (d=128, b=500000).", "Basic", 128, 500000.0, _L31)


def _edge_low_freq_factor(old: int) -> float:
    """A low_freq_factor whose float64 old / lff equals the float64 wavelength 2 pi / 1.0 exactly."""
    target = 2 * math.pi
    lff = old / target
    for _ in range(8):
        if old / lff == target:
            return lff
        lff = math.nextafter(lff, math.inf if old / lff > target else -math.inf)
    msg = "no low_freq_factor puts the first wavelength on the band edge"
    raise ArithmeticError(msg)


_EDGE_LFF = _edge_low_freq_factor(8192)
_freq(
    "llama3/low-band-edge",
    "theta_0 = 1 has wavelength 2 pi = 8192 / low_freq_factor exactly in float64: "
    "the inclusive middle band scales it by 1/8.",
    "Llama3BandEdge",
    16,
    500000.0,
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": _EDGE_LFF,
        "high_freq_factor": 2 * _EDGE_LFF,
        "original_max_position_embeddings": 8192,
    },
)
_freq(
    "llama3/equal-factors",
    "Llama 4 style low_freq_factor == high_freq_factor == 1, factor 16.",
    "Llama3EqualFactors",
    128,
    500000.0,
    {
        "rope_type": "llama3",
        "factor": 16.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
    },
)
_LONG = {
    "rope_type": "longrope",
    "original_max_position_embeddings": 4096,
    "max_position_embeddings": 131072,
    "short_factor": [1.0 + i / 16 for i in range(8)],
    "long_factor": [1.0 + 1.5 * i for i in range(8)],
}
for _seq, _why in [
    (None, "no seq_len: short factors"),
    (4095, "below original_max: short"),
    (4096, "at original_max: still short ('>' not '>=')"),
    (4097, "original_max + 1: long"),
    (131072, "at max_position_embeddings: long"),
]:
    _freq(
        f"longrope/seq-len-{_seq}",
        f"LongRoPE {_why}; attention factor sqrt(1 + ln 32 / ln 4096).",
        ("LongRopeSwitch", "LongRopeAttentionFactor"),
        16,
        10000.0,
        _LONG,
        _seq,
    )
_freq(
    "longrope/explicit-attention-factor",
    "An explicit attention_factor 1.25.",
    "LongRopeAttentionFactor",
    16,
    10000.0,
    {**_LONG, "attention_factor": 1.25},
    5000,
)
_freq(
    "longrope/explicit-factor",
    "factor 8 given: attention factor sqrt(1 + ln 8 / ln 4096).",
    "LongRopeAttentionFactor",
    16,
    10000.0,
    {**_LONG, "factor": 8.0},
    100,
)
_freq(
    "proportional/gemma-quarter",
    "head_dim 256, partial_rotary_factor 0.25: 32 pairs rotated, 96 zero.",
    "ProportionalTail",
    256,
    1.0e6,
    {"rope_type": "proportional", "partial_rotary_factor": 0.25},
)
_freq(
    "proportional/half-factor-8",
    "head_dim 64, half rotated, factor 8.",
    "ProportionalTail",
    64,
    10000.0,
    {"rope_type": "proportional", "partial_rotary_factor": 0.5, "factor": 8.0},
)
_freq(
    "proportional/all",
    "No partial_rotary_factor: every pair rotated.",
    "ProportionalTail",
    16,
    10000.0,
    {"rope_type": "proportional"},
)
# --- rope_frequencies: factor null, unit factors, second cases of thin flags, named variants ---------

for _max, _orig, _dim, _base in ((32768, 4096, 64, 10000.0), (131072, 32768, 128, 1.0e6)):
    _freq(
        f"yarn/factor-null-{_max}-over-{_orig}",
        f"factor: null, as an HF v5 config spells it: {_max} / {_orig} = {_max // _orig}.",
        ("YarnFactorFromLengths", YarnFactorNull),
        _dim,
        _base,
        {
            "rope_type": "yarn",
            "factor": None,
            "max_position_embeddings": _max,
            "original_max_position_embeddings": _orig,
        },
    )
for _type, _scaling in [
    ("linear", {"rope_type": "linear", "factor": 1.0}),
    ("ntk", {"rope_type": "ntk", "factor": 1.0}),
    ("yarn", {"rope_type": "yarn", "factor": 1.0, "original_max_position_embeddings": 4096}),
    ("llama3", {**_L31, "factor": 1.0}),
    (
        "longrope",
        {
            "rope_type": "longrope",
            "factor": 1.0,
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 4096,
            "short_factor": [1.0] * 16,
            "long_factor": [1.0] * 16,
        },
    ),
    ("proportional", {"rope_type": "proportional", "factor": 1.0, "partial_rotary_factor": 1.0}),
]:
    _freq(
        f"{_type}/unit-factor",
        f"{_type} with every factor 1: the default frequencies, attention factor 1.",
        UnitFactor,
        32,
        10000.0,
        _scaling,
        4096 if _type == "longrope" else None,
    )
_freq(
    "yarn/legacy-type-key",
    "v4 rope_scaling {'type': 'yarn'} (DeepSeek and Qwen configs spell it so).",
    ("LegacyTypeKey", "YarnTruncate"),
    64,
    10000.0,
    {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
)
_freq(
    "yarn/explicit-attention-factor-over-mscale",
    "attention_factor 0.8 wins over the mscale / mscale_all_dim ratio (1.0 here).",
    "YarnAttentionFactor",
    32,
    10000.0,
    {
        "rope_type": "yarn",
        "factor": 16.0,
        "original_max_position_embeddings": 2048,
        "mscale": 1.0,
        "mscale_all_dim": 1.0,
        "attention_factor": 0.8,
    },
)
_freq(
    "yarn/mscale-only-deepseek-v2",
    "mscale=0.707 without mscale_all_dim, factor 40: HF gives 0.1 ln 40 + 1 = 1.3689.",
    "YarnMscaleOnly",
    64,
    10000.0,
    {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096, "mscale": 0.707},
)
_freq(
    "yarn/mscale-all-dim-only",
    "mscale_all_dim=0.707 without mscale, factor 40: HF falls back to 0.1 ln 40 + 1 = 1.3689.",
    YarnMscaleAllDimOnly,
    64,
    10000.0,
    {"rope_type": "yarn", "factor": 40.0, "original_max_position_embeddings": 4096, "mscale_all_dim": 0.707},
)
_freq(
    "yarn/equal-bounds-no-truncate",
    "d=8, b=100, L=2**20, truncate=false: 7.43 and 10.4 both clamp to d - 1 = 7; the +0.001 guard.",
    ("YarnEqualBounds", "YarnTruncate"),
    8,
    100.0,
    {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 2**20, "truncate": False},
)
_EDGE_LFF_4K = _edge_low_freq_factor(32768)
_freq(
    "llama3/low-band-edge-d64",
    "theta_0 = 1 on the low band edge again (32768 / low_freq_factor = 2 pi in float64), d=64, "
    "b=10000, factor 4.",
    "Llama3BandEdge",
    64,
    10000.0,
    {
        "rope_type": "llama3",
        "factor": 4.0,
        "low_freq_factor": _EDGE_LFF_4K,
        "high_freq_factor": 4 * _EDGE_LFF_4K,
        "original_max_position_embeddings": 32768,
    },
)
_freq(
    "llama3/equal-factors-2",
    "low_freq_factor == high_freq_factor == 2, factor 8, d=64, b=500000: a jump at 8192 / 2.",
    "Llama3EqualFactors",
    64,
    500000.0,
    {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 2.0,
        "high_freq_factor": 2.0,
        "original_max_position_embeddings": 8192,
    },
)
_YARN_DS = {
    "rope_type": "yarn",
    "original_max_position_embeddings": 4096,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
}
for _id, _why, _flags, _scaling in [
    (
        "mscale-only",
        "mscale 1.5 alone, factor 8: 0.1 * 1.5 * ln 8 + 1 = 1.3119 (mscale_all_dim defaults to 0); "
        "HF gives 1.2079",
        ("YarnMscaleOnly",),
        {**_YARN_DS, "factor": 8.0, "mscale": 1.5},
    ),
    (
        "mscale-all-dim-only",
        "mscale_all_dim 0.707 alone, factor 40: (0.1 ln 40 + 1) / (0.0707 ln 40 + 1) = 1.0857 (mscale "
        "defaults to 1); HF gives 0.1 ln 40 + 1 = 1.3689",
        (YarnMscaleAllDimOnly,),
        {**_YARN_DS, "factor": 40.0, "mscale_all_dim": 0.707},
    ),
    (
        "truncate-false-ignored",
        "gpt-oss's truncate=false is not read: the range 8.09 / 17.40 is floored and ceiled to 8 / 18",
        ("YarnTruncate",),
        {**_GPT_OSS},
    ),
]:
    _freq(
        f"yarn-deepseek/{_id}",
        f"DeepSeek's own YaRN (a variant): {_why}.",
        (*_flags, "NamedVariant"),
        64,
        150000.0 if _id == "truncate-false-ignored" else 10000.0,
        _scaling,
        variant="deepseek",
    )
for _id, _why, _scaling, _seq in [
    (
        "explicit-factor",
        "factor 8 is not read: sqrt(1 + ln 32 / ln 4096) from 131072 / 4096",
        {**_LONG, "factor": 8.0},
        100,
    ),
    (
        "explicit-attention-factor",
        "attention_factor 1.25 is not read: sqrt(1 + ln 32 / ln 4096)",
        {**_LONG, "attention_factor": 1.25},
        5000,
    ),
]:
    _freq(
        f"longrope-phi3-ratio/{_id}",
        f"Phi-3's own LongRoPE (a variant): {_why}.",
        ("LongRopeAttentionFactor", "NamedVariant"),
        16,
        10000.0,
        _scaling,
        _seq,
        variant="phi3-ratio",
    )
for _id, _dim, _base, _scaling in [
    (
        "half-factor-8",
        64,
        10000.0,
        {"rope_type": "proportional", "partial_rotary_factor": 0.5, "factor": 8.0},
    ),
    (
        "gemma-quarter-factor-2",
        256,
        1.0e6,
        {"rope_type": "proportional", "partial_rotary_factor": 0.25, "factor": 2.0},
    ),
]:
    _freq(
        f"proportional-gemma4/{_id}",
        "vLLM's Gemma 4 proportional (a variant): b**(-2i/head_dim) on the rotated pairs, 0 beyond, "
        "factor not read.",
        ("ProportionalTail", "NamedVariant"),
        _dim,
        _base,
        _scaling,
        variant="gemma4",
    )
_freq("invalid/odd-dim", "dim must be even.", (), 7, error=("ValueError", "dim"))
_freq("invalid/base-1", "base must be > 1.", (), 8, 1.0, error=("ValueError", "base"))
_freq(
    "invalid/factor-below-1",
    "factor 0.5 < 1.",
    (),
    8,
    scaling={"rope_type": "linear", "factor": 0.5},
    error=("ValueError", "factor"),
)
_freq(
    "invalid/missing-factor",
    "linear needs factor.",
    (),
    8,
    scaling={"rope_type": "linear"},
    error=("ValueError", "factor"),
)
_freq(
    "invalid/beta-order",
    "beta_fast must exceed beta_slow.",
    (),
    64,
    scaling={
        "rope_type": "yarn",
        "factor": 4.0,
        "original_max_position_embeddings": 4096,
        "beta_fast": 1.0,
        "beta_slow": 32.0,
    },
    error=("ValueError", "beta_fast"),
)
_freq(
    "invalid/longrope-length",
    "short_factor must have dim/2 entries.",
    (),
    16,
    scaling={**_LONG, "short_factor": [1.0, 1.0, 1.0]},
    error=("ValueError", "short_factor"),
)
_freq(
    "invalid/llama3-factor-order",
    "high_freq_factor below low_freq_factor.",
    (),
    64,
    500000.0,
    {**_L31, "high_freq_factor": 0.5},
    error=("ValueError", "high_freq_factor"),
)
_freq(
    "invalid/unknown-type",
    "An unknown rope_type.",
    (),
    8,
    scaling={"rope_type": "ntk-aware", "factor": 2.0},
    error=("ValueError", "rope_type"),
)
