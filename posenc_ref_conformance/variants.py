"""Variant axes: the independent points where real implementations compute different formulas under one name.

An *axis* belongs to a *topic* (a scaling type such as ``yarn``, or ``fully-masked-rows`` of
attention).  Its first value is the canonical one (the golden files' default, HF's
``rope_parameters`` semantics); the others are named after the implementations that compute
them.  An adapter declares the value it computes per axis (``Capabilities.variants``), for every
function or per function.  Each golden case records, under ``assumes``, the axes its expected
values depend on (found by the generator, which evaluates the case under every combination of
its topic's axes) and the value it assumes for each: a case runs when the adapter's declaration
agrees on every axis the case assumes, and on every other axis it does not matter.

A *preset* is a shorthand for a combination (``{"yarn": "deepseek"}``: DeepSeek's own YaRN,
both YaRN axes non-canonical), kept because it names what one real code base computes.

This module is plain data (no mpmath): the adapter protocol, the generator and the docs read it.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator, Mapping

__all__ = [
    "AXES",
    "PRESETS",
    "Axis",
    "Value",
    "axes_of",
    "canonical",
    "choice_of",
    "choices",
    "expand",
    "topic_of",
]


@dataclasses.dataclass(frozen=True)
class Value:
    """One value of an axis: what it computes, as a formula, and which implementations compute it."""

    meaning: str
    formula: str
    used_by: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Axis:
    """An axis of one topic; ``values`` in order, the canonical value first."""

    topic: str
    what: str
    values: dict[str, Value]

    @property
    def canonical(self) -> str:
        return next(iter(self.values))


AXES: dict[str, Axis] = {
    "ntk": Axis(
        "ntk",
        "The frequencies of the rope_type 'ntk' (static NTK-aware scaling).",
        {
            "hf": Value(
                "bloc97's NTK-aware base: the base is raised, every frequency follows from it",
                "theta_i = (b s^(d/(d-2)))^(-2i/d)",
                (
                    "posenc-ref",
                    "transformers (v4.4x dev snapshot)",
                    "rotary-embedding-torch theta_rescale_factor",
                ),
            ),
            "vllm": Value(
                "vLLM's NTKScalingRotaryEmbedding: the base times s, then every frequency divided by s^(2/d)",
                "theta_i = (b s)^(-2i/d) / s^(2/d)",
                ("vLLM",),
            ),
        },
    ),
    "yarn-attention-factor": Axis(
        "yarn",
        "How YaRN's attention factor (the cos/sin magnitude) is formed from factor, mscale, mscale_all_dim "
        "and attention_factor.",
        {
            "hf": Value(
                "HF: an explicit attention_factor wins; else get_mscale(s, mscale) / "
                "get_mscale(s, mscale_all_dim) when both are set (truthy), else get_mscale(s, 1)",
                "get_mscale(s, m) = 0.1 m ln s + 1 (1 for s <= 1)",
                ("posenc-ref", "transformers", "vLLM yarn"),
            ),
            "deepseek": Value(
                "DeepSeek: attention_factor is not read; mscale defaults to 1 and mscale_all_dim to 0, "
                "so either alone changes the factor",
                "get_mscale(s, mscale or 1) / get_mscale(s, mscale_all_dim or 0)",
                (
                    "DeepSeek-V2/V3 modeling_deepseek.py",
                    "vLLM deepseek_yarn",
                    "mlx-lm YarnRoPE",
                    "megatron-core",
                ),
            ),
        },
    ),
    "yarn-truncate": Axis(
        "yarn",
        "Whether YaRN's correction range is rounded to whole dimensions (the truncate key; gpt-oss "
        "sets it false).",
        {
            "honoured": Value(
                "truncate is read: floor/ceil of the correction dimensions when true (the default), "
                "exact when false",
                "low, high = floor(c(beta_fast)), ceil(c(beta_slow)) if truncate, else c(beta_fast), "
                "c(beta_slow)",
                ("posenc-ref", "transformers", "vLLM yarn", "megatron-core"),
            ),
            "ignored": Value(
                "truncate is not read: the correction range is always floored and ceiled",
                "low = floor(c(beta_fast)), high = ceil(c(beta_slow))",
                ("DeepSeek-V2/V3 modeling_deepseek.py", "vLLM deepseek_yarn", "mlx-lm YarnRoPE"),
            ),
        },
    ),
    "longrope": Axis(
        "longrope",
        "LongRoPE's attention factor.",
        {
            "hf": Value(
                "HF: attention_factor if given, else sqrt(1 + ln(factor) / ln L) from factor (or from "
                "max / original when factor is absent)",
                "sqrt(1 + ln s / ln L), L = original_max_position_embeddings",
                ("posenc-ref", "transformers"),
            ),
            "phi3-ratio": Value(
                "Phi-3: factor and attention_factor are not read; s = max_position_embeddings / original",
                "sqrt(1 + ln(max / original) / ln original)",
                ("Phi-3 modeling_phi3.py", "vLLM", "llama.cpp converter"),
            ),
        },
    ),
    "proportional": Axis(
        "proportional",
        "The frequencies of Gemma 4's rope_type 'proportional'.",
        {
            "hf": Value(
                "HF: b^(-2i/head_dim) on the rotated pairs, divided by factor, 0 beyond",
                "theta_i = b^(-2i/head_dim) / s for i < partial_rotary_factor head_dim / 2, else 0",
                ("posenc-ref", "transformers"),
            ),
            "gemma4": Value(
                "vLLM's Gemma 4: the same without the division by factor",
                "theta_i = b^(-2i/head_dim) for i < partial_rotary_factor head_dim / 2, else 0",
                ("vLLM gemma4_rope.py",),
            ),
        },
    ),
    "fully-masked-rows": Axis(
        "fully-masked-rows",
        "What attention returns for a query whose mask hides every key.",
        {
            "zero": Value(
                "zeros: no key contributes",
                "out = 0",
                ("posenc-ref",),
            ),
            "uniform": Value(
                "the mean of v: masked logits are finfo.min, so every key gets the same weight",
                "out = mean_k v_k",
                ("transformers eager attention",),
            ),
        },
    ),
}

#: topic -> preset name -> the axis values it stands for.
PRESETS: dict[str, dict[str, dict[str, str]]] = {
    "yarn": {"deepseek": {"yarn-attention-factor": "deepseek", "yarn-truncate": "ignored"}},
}


def axes_of(topic: str) -> tuple[str, ...]:
    """The axes of ``topic``, in :data:`AXES` order."""
    return tuple(name for name, axis in AXES.items() if axis.topic == topic)


def canonical(topic: str) -> dict[str, str]:
    """Every axis of ``topic`` at its canonical value."""
    return {name: AXES[name].canonical for name in axes_of(topic)}


def choices(topic: str) -> Iterator[dict[str, str]]:
    """Every combination of ``topic``'s axis values, the canonical one first."""
    names = axes_of(topic)
    for values in itertools.product(*(tuple(AXES[n].values) for n in names)):
        yield dict(zip(names, values, strict=True))


def expand(declared: Mapping[str, str]) -> dict[str, str]:
    """``declared`` (axis or preset topic -> value) as axis -> value; ValueError naming a bad key/value.

    A key is an axis (its value one of the axis's values) or a topic with presets (its value a
    preset name, or, for a topic with one axis, that axis's value).
    """
    out: dict[str, str] = {}
    for key, value in declared.items():
        if key in AXES:
            if value not in AXES[key].values:
                msg = f"variants[{key!r}] must be one of {list(AXES[key].values)}; got {value!r}"
                raise ValueError(msg)
            out[key] = value
        elif key in PRESETS:
            if value not in PRESETS[key]:
                msg = f"variants[{key!r}] (a preset) must be one of {sorted(PRESETS[key])}; got {value!r}"
                raise ValueError(msg)
            out.update(PRESETS[key][value])
        else:
            known = sorted({*AXES, *PRESETS})
            msg = f"variants keys must be variant axes or presets {known}; got {key!r}"
            raise ValueError(msg)
    return out


def topic_of(key: str) -> str:
    """The topic of an axis or of a preset's topic name."""
    return AXES[key].topic if key in AXES else key


def choice_of(key: str, value: str) -> dict[str, str]:
    """Every axis of ``key``'s topic: canonical, except what the declaration ``{key: value}`` names."""
    return {**canonical(topic_of(key)), **expand({key: value})}
