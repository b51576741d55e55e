r"""RoPE from a base: implementations that derive their own frequencies (rope_from_base).

torchtune, keras-hub, MLX ``nn.RoPE``, GPT-J, ggml and vLLM take ``rope_theta``
and a scaling type, never an ``inv_freq`` array.  ``rope_from_base`` rotates
``x`` with the frequencies and attention factor of :func:`oracle.rope.rope_frequencies`
for ``(dim, base, scaling, seq_len)``, exactly; the cases' ``phase`` records say
the implementation derives its frequencies, so the product class allows it
``frequencyError = ceil(3 L + 6)`` unit roundoffs of relative frequency error,
``L`` = :func:`oracle.rope.log_span` (``|ln b'| + |ln s|``: the largest ``|ln|`` the
frequency formula exponentiates, ``s`` a factor that divides frequencies).
Why: ``b^{-2i/d}`` is ``exp(-(2i/d) ln b)`` or ``pow(b, 2i/d)``; its exponent
carries three roundings (``ln b``, ``2i/d``, their product) of size up to ``L u``
each, so the frequency is off by ``3 L u`` relative, plus a few ulp for
``exp``/``pow``, the reciprocal, the division by ``s`` and a blend (YaRN's ramp,
Llama 3's band): the ``+ 6``.  Linear scaling applied to positions instead
(``(m / s) theta``, rotary-embedding-torch ``interpolate_factor``, keras-hub
``scaling_factor``, MLX ``scale``) adds one rounding of the position, inside the
same allowance since ``3 |ln s| >= 1`` for ``s >= 1.4`` and the ``+ 6`` covers the rest.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from ... import oracle
from ..functions import FunctionSpec, Tolerance, declare, max_abs, phase_record, shape_of
from ..notes import add_note
from ._common import RUN_2E20, RUN_2E24, ConsecutiveRun, F, I, _dyadic, case
from .rope import (
    _DYN,
    _GPT_OSS,
    _L31,
    _LONG,
    _channel_frequencies,
    _rotation_tolerance,
    _scaling_type,
    variants_of,
)
from .rope_tables import _BLOCK_2E20, PositionBlock, _rotate_rows

# --- declaration ---------------------------------------------------------------------------------------


def _rotate_with(formula: Callable[..., tuple[list[Any], Any]]) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``compute`` of rope_from_base for one frequency formula (canonical or a variant's)."""

    def compute(inp: dict[str, Any]) -> dict[str, Any]:
        inv, factor = formula(inp["dim"], base=inp["base"], scaling=inp["scaling"], seq_len=inp["seq_len"])
        rotation = {"inv_freq": inv, "attention_factor": factor, "layout": inp["layout"]}
        out = _rotate_rows(inp["x"], [int(p) for p in inp["positions"]], rotation)
        return {"out": out, "inv_freq": inv, "attention_factor": factor}  # the last two feed phase/tolerances

    return compute


def _frequency_error(inp: dict[str, Any]) -> int:
    span = oracle.rope.log_span(inp["dim"], base=inp["base"], scaling=inp["scaling"], seq_len=inp["seq_len"])
    return math.ceil(3 * float(span) + 6)


def _phase(inp: dict[str, Any], out: dict[str, Any]) -> dict[str, Any]:
    freqs = _channel_frequencies(out["inv_freq"], inp["layout"], shape_of(inp["x"])[-1])
    scale = 2 * max_abs(inp["x"]) * max(abs(float(out["attention_factor"])), 1.0)
    return phase_record(inp["positions"], freqs, _frequency_error(inp), scale)


def _tolerance(inp: dict[str, Any], out: dict[str, Any], flags: set[str]) -> Tolerance:
    factor = float(out["attention_factor"])
    return _rotation_tolerance(inp["x"], inp["positions"], out["inv_freq"], factor, "LargePosition" in flags)


declare(
    FunctionSpec(
        "rope_from_base",
        "rope",
        "rope_from_base(x[..., S, D], positions[S], dim, base, scaling, seq_len, layout) -> x rotated on its "
        "first dim channels with the frequencies and attention factor of rope_frequencies(dim, base, "
        "scaling, seq_len), derived by the implementation",
        {
            "x": ("float", "float64 [..., S, D]"),
            "positions": ("positions", "int64 [S]"),
            "dim": ("int", "rotated channels (proportional: the head dimension, as for rope_frequencies)"),
            "base": ("number", "rope_theta"),
            "scaling": ("scaling|null", "object (HF rope_parameters keys) or null"),
            "seq_len": ("int|null", "int or null"),
            "layout": ("string", "half | interleaved"),
        },
        {"out": "float"},
        _rotate_with(oracle.rope.rope_frequencies),
        positional=2,
        options={"layout": "layouts", "scaling": "scaling_types"},
        cast_inputs=("x",),
        case_tolerances=_tolerance,
        phase=_phase,
        topic=_scaling_type,
        variants=variants_of(_rotate_with),
    )
)

PositionInterpolation = add_note(
    "PositionInterpolation",
    "ConventionMismatch",
    "Linear scaling written as a factor on positions, (m / s) theta (rotary-embedding-torch "
    "interpolate_factor, keras-hub scaling_factor, MLX nn.RoPE scale = 1/s), equals m (theta / s) "
    "exactly; the position's extra rounding is within the product class.",
)
DerivedFrequencyError = add_note(
    "DerivedFrequencyError",
    "NumericalPrecision",
    "Llama 2's d=128, b=1e4 with frequencies derived in float32: pow/exp costs up to 3 ln(b) + 6 = 34 ulp at "
    "the last pairs (ggml's iterative theta_scale**i product: 36), a visible part of the angle error at "
    "Llama 2's last positions and at 2**20.",
)

# --- cases ---------------------------------------------------------------------------------------------


def _base_case(
    id: str,
    comment: str,
    flags: Any,
    x: Any,
    positions: list[int],
    dim: int,
    base: float = 10000.0,
    scaling: Any = None,
    seq_len: int | None = None,
    layout: str = "half",
    error: Any = None,
    variant: str | None = None,
) -> None:
    flags = (flags,) if isinstance(flags, str) else tuple(flags)
    lay = "HalfLayout" if layout == "half" else "InterleavedLayout"
    case(
        f"rope_from_base/{layout}/{id}",
        comment,
        (*flags, lay) if error is None else flags,
        error,
        variant=variant,
        x=F(x),
        positions=I(positions),
        dim=dim,
        base=base,
        scaling=scaling,
        seq_len=seq_len,
        layout=layout,
    )


def _block(start: int, k: int) -> list[int]:
    return list(range(start, start + k))


for _layout in ("half", "interleaved"):
    _base_case(
        "default-d16",
        "Default frequencies b = 1e4, d = 16.",
        "Basic",
        _dyadic(51, (2, 4, 16)),
        _block(5, 4),
        16,
        layout=_layout,
    )
    _base_case(
        "partial-d8-of-12",
        "dim 8 of 12 channels rotated; 4 pass through.",
        "PartialRotary",
        _dyadic(52, (3, 12)),
        [0, 1, 2],
        8,
        layout=_layout,
    )
    for _factor, _start in ((4.0, 40), (3.0, 1000)):
        _base_case(
            f"linear-factor-{_factor:g}",
            f"Linear scaling s = {_factor:g}: theta / s, or the positions divided by s.",
            ("LinearScaling", PositionInterpolation),
            _dyadic(53 + int(_factor), (4, 16)),
            _block(_start, 4),
            16,
            scaling={"rope_type": "linear", "factor": _factor},
            layout=_layout,
        )
    _base_case(
        "ntk-factor-8",
        "Static NTK-aware base 1e4 * 8**(16/14).",
        "NtkScaling",
        _dyadic(58, (3, 16)),
        _block(100, 3),
        16,
        scaling={"rope_type": "ntk", "factor": 8.0},
        layout=_layout,
    )
    for _seq, _why, _seed in ((10000, "above the limit", 59), (1000, "below the limit: unscaled", 60)):
        _base_case(
            f"dynamic-seq-len-{_seq}",
            f"Dynamic NTK with seq_len {_seq}, {_why} (max_position_embeddings 4096).",
            ("DynamicNtkLimit", "DynamicNtkMaxPositions"),
            _dyadic(_seed, (3, 64)),
            _block(_seq - 3, 3),
            64,
            scaling=_DYN,
            seq_len=_seq,
            layout=_layout,
        )
    _base_case(
        "yarn-gpt-oss",
        "gpt-oss YaRN (truncate false), attention factor 1.3466, around original_max 4096.",
        ("YarnTruncate", "YarnAttentionFactor", "AttentionFactor"),
        _dyadic(61, (4, 64)),
        _block(4094, 4),
        64,
        150000.0,
        _GPT_OSS,
        layout=_layout,
    )
    _base_case(
        "llama3.1",
        "Llama 3.1 bands, d = 128, b = 5e5, around original_max 8192.",
        "Basic",
        _dyadic(62, (4, 128)),
        _block(8190, 4),
        128,
        500000.0,
        _L31,
        layout=_layout,
    )
    for _seq in (4096, 4097):
        _base_case(
            f"longrope-seq-len-{_seq}",
            f"LongRoPE at seq_len {_seq}: {'short' if _seq == 4096 else 'long'} factors, attention factor "
            "sqrt(1 + ln 32 / ln 4096).",
            ("LongRopeSwitch", "LongRopeAttentionFactor", "AttentionFactor"),
            _dyadic(63, (3, 16)),
            _block(_seq - 3, 3),
            16,
            scaling=_LONG,
            seq_len=_seq,
            layout=_layout,
        )
    _base_case(
        "proportional-half-factor-8",
        "proportional: head_dim 64, half rotated, factor 8; the tail passes through (frequency 0).",
        "ProportionalTail",
        _dyadic(64, (3, 64)),
        _block(10, 3),
        64,
        scaling={"rope_type": "proportional", "partial_rotary_factor": 0.5, "factor": 8.0},
        layout=_layout,
    )
    _base_case(
        "llama2-d128",
        "Llama 2 (d = 128, b = 1e4) at the end of its 4096 context, 2 heads.",
        DerivedFrequencyError,
        _dyadic(65, (2, 4, 128)),
        _block(4093, 4),
        128,
        layout=_layout,
    )
    _base_case(
        "run-2e24-llama2-d128",
        "Llama 2 frequencies on the consecutive run 2**24 - 2 .. 2**24 + 2.",
        ("LargePosition", "Float32PositionRounding", ConsecutiveRun, DerivedFrequencyError),
        _dyadic(78, (5, 128)),
        RUN_2E24,
        128,
        layout=_layout,
    )
    _base_case(
        "run-2e20-llama3.1",
        "Llama 3.1 scaling (d = 128, b = 500000) on the consecutive run 2**20 - 2 .. 2**20 + 2.",
        ("LargePosition", ConsecutiveRun, DerivedFrequencyError),
        _dyadic(79, (5, 128)),
        RUN_2E20,
        128,
        500000.0,
        _L31,
        layout=_layout,
    )
    _base_case(
        "run-2e24-gpt-oss-yarn",
        "gpt-oss YaRN (d = 64, truncate false) on the consecutive run 2**24 - 2 .. 2**24 + 2.",
        ("LargePosition", "Float32PositionRounding", ConsecutiveRun, "YarnTruncate", DerivedFrequencyError),
        _dyadic(80, (5, 64)),
        RUN_2E24,
        64,
        150000.0,
        _GPT_OSS,
        layout=_layout,
    )
    _base_case(
        "large-block-2e20-llama2-d128",
        "Llama 2 frequencies on the block 2**20 + arange(3), at the accuracy claim.",
        ("LargePosition", PositionBlock, DerivedFrequencyError),
        _dyadic(66, (3, 128)),
        _BLOCK_2E20,
        128,
        layout=_layout,
    )
_base_case(
    "ntk-vllm/factor-8-d16",
    "vLLM's 'ntk' (a variant): (1e4 * 8)**(-2i/16) / 8**(2/16).",
    ("NtkScaling", "NamedVariant"),
    _dyadic(67, (3, 16)),
    _block(100, 3),
    16,
    scaling={"rope_type": "ntk", "factor": 8.0},
    variant="vllm",
)
_base_case(
    "yarn-deepseek/mscale-only",
    "DeepSeek's YaRN (a variant): mscale 1.5 alone gives 0.1 * 1.5 * ln 8 + 1 = 1.3119.",
    ("YarnMscaleOnly", "AttentionFactor", "NamedVariant"),
    _dyadic(68, (3, 32)),
    _block(4094, 3),
    32,
    scaling={"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096, "mscale": 1.5},
    variant="deepseek",
)
_base_case(
    "yarn-deepseek/truncate-false-ignored",
    "DeepSeek's YaRN (a variant): gpt-oss's truncate=false is not read, so the correction range "
    "8.09 .. 17.40 is floored and ceiled to 8 .. 18.",
    ("YarnTruncate", "NamedVariant"),
    _dyadic(81, (3, 64)),
    _block(4094, 3),
    64,
    150000.0,
    _GPT_OSS,
    variant="deepseek",
)
_base_case(
    "longrope-phi3-ratio/explicit-factor",
    "Phi-3's LongRoPE (a variant): factor 8 not read, sqrt(1 + ln 32 / ln 4096) from the lengths.",
    ("LongRopeAttentionFactor", "AttentionFactor", "NamedVariant"),
    _dyadic(69, (3, 16)),
    _block(97, 3),
    16,
    scaling={**_LONG, "factor": 8.0},
    seq_len=100,
    variant="phi3-ratio",
)
_base_case(
    "proportional-gemma4/half-factor-8",
    "vLLM's Gemma 4 proportional (a variant): factor 8 not read.",
    ("ProportionalTail", "NamedVariant"),
    _dyadic(70, (3, 64)),
    _block(10, 3),
    64,
    scaling={"rope_type": "proportional", "partial_rotary_factor": 0.5, "factor": 8.0},
    variant="gemma4",
)
_base_case(
    "invalid-odd-dim",
    "dim must be even.",
    (),
    _dyadic(71, (2, 8)),
    [0, 1],
    7,
    error=("ValueError", "dim"),
)
_base_case(
    "invalid-dim-above-width",
    "dim 16 > x.shape[-1] = 8.",
    (),
    _dyadic(72, (2, 8)),
    [0, 1],
    16,
    error=("ValueError", "dim"),
)
_base_case(
    "invalid-unknown-type",
    "An unknown rope_type.",
    (),
    _dyadic(73, (2, 8)),
    [0, 1],
    8,
    scaling={"rope_type": "ntk-aware", "factor": 2.0},
    error=("ValueError", "rope_type"),
)
