"""Validation of RoPE ``scaling`` dicts (HF ``rope_parameters`` keys) for :mod:`posenc_ref.rope_scaling`.

Every message names the key as ``scaling['key']``, the rule and what arrived.
HF itself only warns on most of these; a reference implementation refuses them.
"""

from __future__ import annotations

import difflib
import numbers
from collections.abc import Mapping
from typing import Any

from ._validate import check_choice, check_int, check_real

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


def scaling_type(scaling: Mapping[str, Any]) -> str:
    """The scaling type of ``scaling``: ``rope_type``, else the legacy ``type``, else 'default'."""
    rope_type = scaling.get("rope_type", scaling.get("type", "default"))
    legacy = scaling.get("type", rope_type)
    if legacy != rope_type:
        msg = (
            f"scaling['type'] must equal scaling['rope_type'] when both are set; "
            f"got {legacy!r} and {rope_type!r}"
        )
        raise ValueError(msg)
    return check_choice(rope_type, "scaling['rope_type']", SCALING_TYPES, aliases=_TYPE_ALIASES)


class ScalingKeys:
    """Typed, validated access to the keys of one ``scaling`` dict."""

    def __init__(self, scaling: Mapping[str, Any], rope_type: str, *, base: float) -> None:
        self.scaling = scaling
        self.rope_type = rope_type
        allowed = ALLOWED_KEYS[rope_type]
        for key in scaling:
            if key not in allowed:
                names = ", ".join(repr(k) for k in sorted(allowed))
                msg = f"scaling must only contain keys {names} for rope_type {rope_type!r}; got {key!r}"
                close = difflib.get_close_matches(str(key), sorted(allowed), n=1)
                msg += f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(msg)
        theta = self.real("rope_theta", exclusive_minimum=1.0)
        if theta is not None and theta != base:
            msg = (
                f"scaling['rope_theta'] must equal base ({base!r}) when given; "
                f"got {theta!r} (pass it as base={theta!r})"
            )
            raise ValueError(msg)
        factor = self.real("partial_rotary_factor", exclusive_minimum=0.0, maximum=1.0)
        if factor not in (None, 1.0) and rope_type != "proportional":
            msg = (
                f"scaling['partial_rotary_factor'] must be 1 for rope_type {rope_type!r} (only "
                f"'proportional' reads it); got {factor!r}: pass dim=int(head_dim * {factor!r}) instead"
            )
            raise ValueError(msg)

    def name(self, key: str) -> str:
        return f"scaling[{key!r}]"

    def missing(self, *keys: str) -> ValueError:
        wanted = " or ".join(repr(k) for k in keys)
        got = sorted(self.scaling)
        msg = f"scaling must contain {wanted} for rope_type {self.rope_type!r}; got keys {got}"
        return ValueError(msg)

    def real(self, key: str, *, required: bool = False, **bounds: float) -> float | None:
        """A finite real (``None`` when absent and not required), within ``bounds``."""
        value = self.scaling.get(key)
        if value is None:
            if required:
                raise self.missing(key)
            return None
        return check_real(value, self.name(key), **bounds)

    def integer(self, key: str, *, required: bool = False) -> int | None:
        """A positive integer (``None`` when absent and not required)."""
        value = self.scaling.get(key)
        if value is None:
            if required:
                raise self.missing(key)
            return None
        return check_int(value, self.name(key), minimum=1)

    def flag(self, key: str, default: bool) -> bool:
        value = self.scaling.get(key, default)
        if not isinstance(value, bool):
            msg = f"{self.name(key)} must be True or False; got {value!r} of type {type(value).__name__}"
            raise TypeError(msg)
        return value

    def factor_list(self, key: str, length: int) -> list[float]:
        """A required list of ``length`` positive reals (LongRoPE's per-pair factors)."""
        value = self.scaling.get(key)
        if value is None:
            raise self.missing(key)
        if isinstance(value, (str, bytes)) or not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
            msg = f"{self.name(key)} must be a list of {length} positive numbers; got {type(value).__name__}"
            raise TypeError(msg)
        if len(value) != length:
            msg = f"{self.name(key)} must have length dim // 2 = {length}; got {len(value)}"
            raise ValueError(msg)
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, numbers.Real):
                msg = f"{self.name(key)}[{i}] must be a real number; got {item!r}"
                raise TypeError(msg)
            out.append(check_real(item, f"{self.name(key)}[{i}]", exclusive_minimum=0.0))
        return out

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
                msg = (
                    f"scaling['factor'] must be >= 1; got none, and max_position_embeddings / "
                    f"original_max_position_embeddings = {longest} / {original} < 1"
                )
                raise ValueError(msg)
            return longest / original
        if default is not None:
            return default
        raise self.missing(_FACTOR_OR_LIMIT[0])
