"""Validation of RoPE ``scaling`` dicts (HF ``rope_parameters`` keys) for :mod:`posenc_ref.rope_scaling`.

Every message names the key as ``scaling['key']``, the rule and what arrived.
HF itself only warns on most of these; a reference implementation refuses them.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from ._validate import (
    POSITION_LIMIT,
    POSITION_REASON,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_sequence,
    text,
    value_error,
)

__all__ = ["ALLOWED_KEYS", "SCALING_TYPES", "ScalingKeys", "scaling_type"]

SCALING_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional")

_COMMON = frozenset({"rope_type", "type", "rope_theta", "partial_rotary_factor", "max_position_embeddings"})
_ORIGINAL = "original_max_position_embeddings"
ALLOWED_KEYS: dict[str, frozenset[str]] = {
    "default": _COMMON,
    "linear": _COMMON | {"factor"},
    "ntk": _COMMON | {"factor"},
    "dynamic": _COMMON | {"factor", _ORIGINAL},
    "yarn": _COMMON
    | {"factor", _ORIGINAL, "attention_factor", "beta_fast", "beta_slow", "truncate"}
    | {"mscale", "mscale_all_dim"},
    "llama3": _COMMON | {"factor", _ORIGINAL, "low_freq_factor", "high_freq_factor"},
    "longrope": _COMMON | {"factor", _ORIGINAL, "attention_factor", "short_factor", "long_factor"},
    "proportional": _COMMON | {"factor"},
}

_FACTOR_OR_LIMIT = ("factor", "max_position_embeddings")
_TYPE_ALIASES = {
    "su": "Phi-3's early name; use 'longrope'",
    "ntk-aware": "use 'ntk' (static) or 'dynamic'",
    "deepseek_yarn": "use 'yarn' with mscale and mscale_all_dim",
    "none": "use 'default' or scaling=None",
}


def scaling_type(scaling: Mapping[str, Any], name: str = "scaling") -> str:
    """The scaling type of ``scaling``: ``rope_type``, else the legacy ``type``, else 'default'."""
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    legacy = scaling.get("type", rope_type)
    if legacy != rope_type:
        rule = f"equal to {name}['rope_type'] ({rope_type!r}) when both are set"
        raise value_error(f"{name}['type']", rule, legacy)
    return check_choice(rope_type, f"{name}['rope_type']", SCALING_TYPES, aliases=_TYPE_ALIASES)


class ScalingKeys:
    """Typed, validated access to the keys of one ``scaling`` dict, named ``name`` in messages."""

    def __init__(self, scaling: Mapping[str, Any], *, base: float, name: str = "scaling") -> None:
        self.scaling = scaling
        self.prefix = name
        self.rope_type = rope_type = scaling_type(scaling, name)
        allowed = ALLOWED_KEYS[rope_type]
        for key in scaling:
            if key not in allowed:
                names = ", ".join(repr(k) for k in sorted(allowed))
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                hint = f"did you mean {close[0]!r}?" if close else None
                rule = f"a mapping with only the keys {names} for rope_type {rope_type!r}"
                raise value_error(name, rule, text(f"the key {key!r}"), hint=hint)
        theta = self.real("rope_theta", exclusive_minimum=1.0)
        if theta is not None and theta != base:
            rule = f"equal to base ({base!r}) when given"
            raise value_error(self.name("rope_theta"), rule, theta, hint=f"pass it as base={theta!r}")
        factor = self.real("partial_rotary_factor", exclusive_minimum=0.0, maximum=1.0)
        if factor not in (None, 1.0) and rope_type != "proportional":
            rule = f"1 for rope_type {rope_type!r} (only 'proportional' reads it)"
            hint = f"pass dim=int(head_dim * {factor!r}) instead"
            raise value_error(self.name("partial_rotary_factor"), rule, factor, hint=hint)

    def name(self, key: str) -> str:
        return f"{self.prefix}[{key!r}]"

    def missing(self, *keys: str) -> ValueError:
        wanted = " or ".join(repr(k) for k in keys)
        rule = f"a mapping that contains {wanted} for rope_type {self.rope_type!r}"
        return value_error(self.prefix, rule, text(f"keys {sorted(map(str, self.scaling))}"))

    def real(
        self, key: str, *, required: bool = False, hint: str | None = None, **bounds: float
    ) -> float | None:
        """A finite real (``None`` when absent and not required), within ``bounds``.

        A key that is present is always checked: ``0`` never stands for a default.
        """
        value = self.scaling.get(key)
        if value is None:
            if required:
                raise self.missing(key)
            return None
        return check_real(value, self.name(key), hint=hint, **bounds)

    def integer(self, key: str, *, required: bool = False) -> int | None:
        """A positive integer below 2**62 (``None`` when absent and not required)."""
        value = self.scaling.get(key)
        if value is None:
            if required:
                raise self.missing(key)
            return None
        return check_int(value, self.name(key), minimum=1, maximum=POSITION_LIMIT, reason=POSITION_REASON)

    def flag(self, key: str, default: bool) -> bool:
        value = self.scaling.get(key)
        return default if value is None else check_bool(value, self.name(key))

    def factor_list(self, key: str, length: int) -> list[float]:
        """A required list of ``length`` positive reals (LongRoPE's per-pair factors)."""
        value = self.scaling.get(key)
        if value is None:
            raise self.missing(key)
        rule = f"a list of dim // 2 = {length} positive numbers"
        entries = check_sequence(value, self.name(key), rule=rule, minimum=length, maximum=length)
        return [check_real(v, f"{self.name(key)}[{i}]", exclusive_minimum=0.0) for i, v in enumerate(entries)]

    def original_max(self) -> int:
        """``original_max_position_embeddings``, defaulting to ``max_position_embeddings`` (HF v5)."""
        value = self.integer(_ORIGINAL)
        if value is None:
            value = self.integer("max_position_embeddings")
        if value is None:
            raise self.missing(_ORIGINAL, "max_position_embeddings")
        return value

    def factor(self, *, derive: bool = False, default: float | None = None) -> float:
        """``factor`` (>= 1); with ``derive``, ``max_position_embeddings / original_max`` when absent."""
        value = self.real("factor", minimum=1.0)
        if value is not None:
            return value
        if derive:
            longest = self.integer("max_position_embeddings")
            if longest is None:
                raise self.missing(*_FACTOR_OR_LIMIT)
            original = self.original_max()
            if longest < original:
                rule = ">= 1 (none given, and max_position_embeddings / original_max_position_embeddings < 1)"
                raise value_error(self.name("factor"), rule, text(f"{longest} / {original}"))
            return longest / original
        if default is not None:
            return default
        raise self.missing(_FACTOR_OR_LIMIT[0])
