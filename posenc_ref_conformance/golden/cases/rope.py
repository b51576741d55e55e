"""RoPE: the declarations and cases of frequencies for every scaling type, cos/sin, apply_rope, rotation."""

from __future__ import annotations

import math
from typing import Any

from ... import oracle
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
    phase_record,
    reshape,
    shape_of,
    tol,
)
from ._common import BIG, F, I, _dyadic, _float32_cos_sin, _freqs, case

# --- declarations ------------------------------------------------------------------------------


def _channel_frequencies(inv_freq: list[float], layout: str, width: int) -> list[float]:
    """The frequency of each of ``width`` channels (0 past the rotated ones)."""
    n = len(inv_freq)
    rotated = [inv_freq[c % n] if layout == "half" else inv_freq[c // 2] for c in range(2 * n)]
    return rotated + [0.0] * (width - 2 * n)


def _rope_frequencies(inp: dict[str, Any]) -> dict[str, Any]:
    inv, factor = oracle.rope.rope_frequencies(
        inp["dim"], base=inp["base"], scaling=inp["scaling"], seq_len=inp["seq_len"]
    )
    return {"inv_freq": inv, "attention_factor": factor}


def _scaling_type(inp: dict[str, Any]) -> str | None:
    scaling = inp.get("scaling")
    if not isinstance(scaling, dict):
        return "default"
    return scaling.get("rope_type", scaling.get("type", "default"))


def _ntk_vllm(inp: dict[str, Any]) -> dict[str, Any]:
    inv = oracle.rope.ntk_vllm(inp["dim"], base=inp["base"], factor=inp["scaling"]["factor"])
    return {"inv_freq": inv, "attention_factor": mp.mpf(1)}


def _rope_cos_sin(inp: dict[str, Any]) -> dict[str, Any]:
    cos, sin = oracle.rope.rope_cos_sin(
        flatten(inp["positions"]),
        inp["inv_freq"],
        attention_factor=inp["attention_factor"],
        layout=inp["layout"],
    )
    shape = shape_of(inp["positions"])
    return {"cos": reshape(cos, shape), "sin": reshape(sin, shape)}


def _rope_max_angle(inp: dict[str, Any]) -> float:
    return max(abs(int(p)) for p in flatten(inp["positions"])) * max(abs(t) for t in inp["inv_freq"])


def _rope_cos_sin_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    scale = max(abs(inp["attention_factor"]), 1.0)
    return angle_tolerance(_rope_max_angle(inp), scale, "LargePosition" in flags, freq_ulps=4)


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


def _product_scale(inp: dict[str, Any]) -> float:
    return max_abs(inp["x"]) * max(max_abs(inp.get("cos", [1.0])), max_abs(inp.get("sin", [1.0])), 1.0) * 2


def _apply_rope_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    m = _product_scale(inp)
    return tol(atol64=4 * EPS64 * m, ulp64=4, atol32=4 * EPS32 * m, ulp32=4)


def _rope(inp: dict[str, Any]) -> dict[str, Any]:
    positions = flatten(inp["positions"])

    def walk(node: Any, depth: int) -> Any:
        if depth == 2:
            return [
                oracle.rope.rotate(
                    row, p, inp["inv_freq"], attention_factor=inp["attention_factor"], layout=inp["layout"]
                )
                for row, p in zip(node, positions, strict=True)
            ]
        return [walk(n, depth - 1) for n in node]

    return {"out": walk(inp["x"], len(shape_of(inp["x"])))}


def _rope_phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    width = shape_of(inp["x"])[-1]
    freqs = _channel_frequencies(inp["inv_freq"], inp["layout"], width)
    scale = 2 * max_abs(inp["x"]) * max(abs(inp["attention_factor"]), 1.0)
    return phase_record(inp["positions"], freqs, 1, scale)


def _rope_tol(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    scale = 2 * max_abs(inp["x"]) * max(abs(inp["attention_factor"]), 1.0)
    angle = angle_tolerance(_rope_max_angle(inp), scale, "LargePosition" in flags, freq_ulps=4)
    prod = _apply_rope_tol(inp, out, flags)
    return {
        dt: {"atol": angle[dt]["atol"] + prod[dt]["atol"], "rtol": 0.0, "maxUlp": 4}
        for dt in ("float64", "float32")
    }


_POS = "int64 array, any shape"
_LAYOUT = ("string", "half | interleaved")

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
        _rope_frequencies,
        positional=1,
        takes_dtype=True,
        options={"scaling": "scaling_types"},
        topic=_scaling_type,
        variants={"ntk": {"vllm": _ntk_vllm}},
        # pow() with a rounded exponent costs ~|ln theta| ulp; HF builds inv_freq in float32.
        tolerances=tol(rtol64=64 * EPS64, ulp64=64, rtol32=32 * EPS32, ulp32=32),
    )
)
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


# --- rope_frequencies ---------------------------------------------------------------------------------


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


_D8 = _freq_d8 = _freqs(8)
_D16 = _freqs(16)
_GPT_OSS_F = _freqs(64, 150000.0, _GPT_OSS)
_L31_F = _freqs(128, 500000.0, _L31)
_PROP_F = _freqs(16, 10000.0, {"rope_type": "proportional", "partial_rotary_factor": 0.5})
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
        "Llama 3.1 frequencies at 2**20 and 2**24 + 1.",
        ("LargePosition", "Float32PositionRounding"),
        [2**20, 2**24 + 1],
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

# --- apply_rope and rope ------------------------------------------------------------------------------

for _layout in ("half", "interleaved"):
    _lay = "HalfLayout" if _layout == "half" else "InterleavedLayout"
    _c, _s = _float32_cos_sin([0, 1, 2], _D8[0], _layout)
    case(
        f"apply_rope/{_layout}/full-d8",
        "Rotate all 8 channels of 3 positions.",
        ("Basic", _lay),
        x=F(_dyadic(21, (3, 8))),
        cos=F(_c),
        sin=F(_s),
        layout=_layout,
    )
    _c4, _s4 = _float32_cos_sin([5, 6, 7], _freqs(4)[0], _layout)
    case(
        f"apply_rope/{_layout}/partial-r4-d10",
        "Rotate 4 of 10 channels; 6 pass through.",
        ("PartialRotary", _lay),
        x=F(_dyadic(22, (3, 10))),
        cos=F(_c4),
        sin=F(_s4),
        layout=_layout,
    )
    case(
        f"apply_rope/{_layout}/batched-heads",
        "x [2, 2, 3, 8] with cos/sin [3, 8] broadcast.",
        ("Basic", _lay),
        x=F(_dyadic(23, (2, 2, 3, 8))),
        cos=F(_c),
        sin=F(_s),
        layout=_layout,
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
