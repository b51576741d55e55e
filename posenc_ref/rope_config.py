"""Read the RoPE settings of a Hugging Face ``config.json`` (transformers v4 and v5).

:func:`rope_config_from_hf` resolves what HF's ``standardize_rope_params`` and
the ``_compute_*_parameters`` functions read: ``rope_theta``, the scaling dict
(v4 ``rope_scaling`` with legacy ``type``, or v5 ``rope_parameters``, possibly
one dict per layer type), ``partial_rotary_factor``, ``head_dim`` and the
context lengths, into a :class:`RopeConfig` whose ``scaling`` dict
:func:`posenc_ref.rope_frequencies` accepts as is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._rope_params import SCALING_TYPES
from ._validate import (
    MAX_CHANNELS,
    POSITION_LIMIT,
    POSITION_REASON,
    check_choice,
    check_int,
    check_real,
    check_sequence,
    text,
    type_error,
    value_error,
)
from .rope_scaling import RopeFrequencies, exact_frequencies, rope_frequencies

__all__ = ["RopeConfig", "rope_config_from_hf"]

_NEEDS_ORIGINAL = ("llama3", "yarn", "longrope")
_NEEDS_LIMIT = ("dynamic", "yarn", "longrope")
# Phi-3's first configs said "su"; Qwen2-VL's "mrope" is default RoPE per position component (HF v4
# rewrites it to "default"; the sections are for posenc_ref.mrope_angles and are dropped here).
_LEGACY_TYPES = {"su": "longrope", "mrope": "default"}
_OTHER_KEYS = ("mrope_section", "mrope_interleaved")


@dataclass(frozen=True)
class RopeConfig:
    """RoPE settings of one model (or one layer type of it).

    Attributes
    ----------
    dim : int
        Channels covered by the cos/sin tables: ``int(head_dim *
        partial_rotary_factor)``, or ``head_dim`` for ``proportional``.
    head_dim : int
        Per-head width (``qk_rope_head_dim`` for DeepSeek's MLA).
    base : float
        ``rope_theta``.
    scaling : dict
        ``rope_type`` and that type's keys, with ``max_position_embeddings``
        and ``original_max_position_embeddings`` filled in the way HF does.
    max_position_embeddings : int or None
        The model's context length.

    Examples
    --------
    Linear scaling by 2 of ``dim=4``, base 10000: the default frequencies
    ``10000**(-2i/4) = 1, 0.01`` divided by 2.

    >>> cfg = RopeConfig(dim=4, head_dim=4, base=10000.0, scaling={"rope_type": "linear", "factor": 2.0})
    >>> cfg.rope_type
    'linear'
    >>> cfg.frequencies().inv_freq.tolist()
    [0.5, 0.005]
    """

    dim: int
    head_dim: int
    base: float
    scaling: dict[str, Any]
    max_position_embeddings: int | None = None

    def __post_init__(self) -> None:
        check_int(self.head_dim, "head_dim", maximum=MAX_CHANNELS)
        check_int(self.dim, "dim", maximum=self.head_dim)
        if self.max_position_embeddings is not None:
            _length(self.max_position_embeddings, "max_position_embeddings")
        exact_frequencies(self.dim, self.base, self.scaling, None)  # dim, base and every scaling key

    @property
    def rope_type(self) -> str:
        """The scaling type, one of ``SCALING_TYPES``."""
        return self.scaling["rope_type"]

    def frequencies(
        self, seq_len: int | None = None, *, compute_dtype: Any = None, xp: Any = None, device: Any = None
    ) -> RopeFrequencies:
        """:func:`posenc_ref.rope_frequencies` for this configuration."""
        return rope_frequencies(
            self.dim,
            base=self.base,
            scaling=self.scaling,
            seq_len=seq_len,
            compute_dtype=compute_dtype,
            xp=xp,
            device=device,
        )


def _rope_dict(config: Mapping[str, Any], layer_type: str | None) -> tuple[dict[str, Any], bool, str]:
    """The scaling dict for ``layer_type`` (a copy), whether the config is per-layer, and its name."""
    key = "rope_parameters" if config.get("rope_parameters") is not None else "rope_scaling"
    name = f"config[{key!r}]"
    params = config.get(key)
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise type_error(name, "a mapping or null", params)
    layer_types = config.get("layer_types")
    if layer_types is not None:
        entries = check_sequence(layer_types, "config['layer_types']", rule="a list of layer type names")
        layer_types = [v if isinstance(v, str) else str(v) for v in entries]
    else:
        layer_types = []
    nested = bool(params) and all(isinstance(k, str) and isinstance(v, Mapping) for k, v in params.items())
    nested = nested and (not layer_types or set(params) <= set(layer_types))
    if nested:
        kinds = sorted(params)
        if layer_type is None:
            raise value_error("layer_type", f"one of {kinds} for this per-layer RoPE config", None)
        kind = check_choice(layer_type, "layer_type", kinds)
        return dict(params[kind]), True, f"{name}[{kind!r}]"
    if layer_type is not None:
        if not isinstance(layer_type, str):
            raise type_error("layer_type", "None or a layer type name", layer_type)
        if layer_types and layer_type not in layer_types:
            raise value_error("layer_type", f"one of {sorted(set(layer_types))} or None", layer_type)
    return dict(params), False, name


def _head_dim(config: Mapping[str, Any]) -> tuple[int, str]:
    """The per-head width and the key it came from."""
    for key in ("qk_rope_head_dim", "head_dim"):
        if config.get(key) is not None:
            return check_int(config[key], f"config[{key!r}]", maximum=MAX_CHANNELS), f"config[{key!r}]"
    hidden, heads = config.get("hidden_size"), config.get("num_attention_heads")
    if hidden is None or heads is None:
        rule = "a mapping with 'head_dim' or both 'hidden_size' and 'num_attention_heads'"
        raise value_error("config", rule, text(f"keys {sorted(map(str, config))[:12]}"))
    hidden = check_int(hidden, "config['hidden_size']", maximum=MAX_CHANNELS * 2**10)
    heads = check_int(heads, "config['num_attention_heads']", maximum=hidden)
    return check_int(
        hidden // heads, "config['hidden_size'] // config['num_attention_heads']", maximum=MAX_CHANNELS
    ), "config['hidden_size']"


def _length(value: object, name: str) -> int | None:
    """A context length (``None`` stays ``None``): a positive integer below 2**62."""
    if value is None:
        return None
    return check_int(value, name, maximum=POSITION_LIMIT, reason=POSITION_REASON)


def _scaling(config: Mapping[str, Any], params: dict[str, Any], nested: bool, name: str) -> dict[str, Any]:
    rope_type, legacy = params.pop("rope_type", None), params.pop("type", None)
    rope_type = legacy if rope_type is None else rope_type  # HF v5: rope_type, else the legacy type
    rope_type = "default" if rope_type is None else rope_type
    if isinstance(rope_type, str):
        rope_type = _LEGACY_TYPES.get(rope_type, rope_type)
    for key in _OTHER_KEYS:
        params.pop(key, None)
    check_choice(rope_type, f"{name}['rope_type']", SCALING_TYPES)
    scaling = {"rope_type": rope_type, **params}
    limit = _length(config.get("max_position_embeddings"), "config['max_position_embeddings']")
    if rope_type in _NEEDS_LIMIT and limit is not None:
        scaling.setdefault("max_position_embeddings", limit)
    if rope_type in _NEEDS_ORIGINAL:
        top = _length(
            config.get("original_max_position_embeddings"), "config['original_max_position_embeddings']"
        )
        if top is not None and not nested:  # Phi-3: the top-level value wins (HF v5)
            scaling["original_max_position_embeddings"] = top
        elif limit is not None:
            scaling.setdefault("original_max_position_embeddings", limit)
    return scaling


def _setting(
    params: dict[str, Any], config: Mapping[str, Any], key: str, name: str, default: float
) -> tuple[Any, str]:
    """A value from the rope dict, else the top level, else ``default``: a present 0 stays 0."""
    value = params.pop(key, None)
    if value is not None:
        return value, f"{name}[{key!r}]"
    value = config.get(key)
    return (default, key) if value is None else (value, f"config[{key!r}]")


def _both_agree(config: Mapping[str, Any], layer_type: str | None) -> None:
    """A config with both ``rope_parameters`` (v5) and ``rope_scaling`` (v4): the two must read the same.

    Identical dicts agree at once; otherwise each is read alone (so the legacy ``type`` key,
    ``"su"``, and a ``rope_theta`` moved into the v5 dict compare by meaning) and the
    entries that differ are named.
    """
    v5, v4 = config.get("rope_parameters"), config.get("rope_scaling")
    if v5 is None or v4 is None or v5 == v4:
        return
    if not isinstance(v4, Mapping):
        raise type_error("config['rope_scaling']", "a mapping or null (beside config['rope_parameters'])", v4)
    new = rope_config_from_hf({k: v for k, v in config.items() if k != "rope_scaling"}, layer_type=layer_type)
    old = rope_config_from_hf(
        {k: v for k, v in config.items() if k != "rope_parameters"}, layer_type=layer_type
    )

    def shown(scaling: Mapping[str, Any], key: str) -> str:
        return repr(scaling[key]) if key in scaling else "absent"

    differing = [
        f"{key}: {shown(old.scaling, key)} here, {shown(new.scaling, key)} in config['rope_parameters']"
        for key in sorted(set(new.scaling) | set(old.scaling))
        if new.scaling.get(key) != old.scaling.get(key) or (key in new.scaling) != (key in old.scaling)
    ]
    if new.base != old.base:
        differing.append(f"rope_theta: {old.base!r} here, {new.base!r} in config['rope_parameters']")
    if new.dim != old.dim:
        differing.append(f"rotated dim: {old.dim} here, {new.dim} in config['rope_parameters']")
    if differing:
        rule = (
            "the same setting as config['rope_parameters'] when a config has both "
            "(the transformers v4 and v5 names of one dict)"
        )
        got = text(f"{len(differing)} different {'entry' if len(differing) == 1 else 'entries'}")
        raise value_error("config['rope_scaling']", rule, got, hint="; ".join(differing))


def rope_config_from_hf(config: Mapping[str, Any], *, layer_type: str | None = None) -> RopeConfig:
    """Resolve the RoPE settings of a Hugging Face model config.

    Follows transformers v5 (``RotaryEmbeddingConfigMixin``): ``rope_theta``,
    ``partial_rotary_factor`` and the scaling type come from the rope dict
    first, then the top level (defaults 10000.0, 1.0, ``"default"``); for
    ``llama3``/``yarn``/``longrope`` a top-level
    ``original_max_position_embeddings`` (Phi-3) wins, else the dict's, else
    ``max_position_embeddings``.  v4 configs (``rope_scaling``, legacy
    ``type``, Phi-3's ``"su"``) resolve to the same result.  Qwen2-VL's
    ``"mrope"`` resolves to ``"default"`` as in HF, without
    ``mrope_section`` (see :func:`posenc_ref.mrope_angles` for the sections).

    Parameters
    ----------
    config : mapping
        A parsed ``config.json`` (or ``PretrainedConfig.to_dict()``).
    layer_type : str, optional
        For per-layer RoPE (v5 ``rope_parameters`` keyed by ``layer_types``,
        e.g. Gemma 3's ``"full_attention"`` / ``"sliding_attention"``): which
        layer type.  Required there; optional elsewhere.

    Returns
    -------
    RopeConfig

    Raises
    ------
    TypeError
        Values of the wrong type.
    ValueError
        No head size, per-layer config without a valid ``layer_type``,
        unknown scaling type, ``rope_theta <= 1``, ``partial_rotary_factor``
        outside (0, 1] or rotating an odd number of channels, or any scaling
        key that :func:`posenc_ref.rope_frequencies` refuses.  A key that is
        missing or ``null`` takes its default; a key that is present is
        always checked, so ``rope_theta: 0`` or ``head_dim: 0`` is an error,
        never the default.  A config with both ``rope_parameters`` and
        ``rope_scaling`` whose readings differ (the differing entries are
        named; identical or equivalent copies are fine).  Messages name the
        key as it appears in the config (``config['rope_scaling']['factor']``).

    Notes
    -----
    ``head_dim`` is ``qk_rope_head_dim`` (DeepSeek-V2/V3, whose MLA rotates
    only that part), else ``head_dim``, else ``hidden_size //
    num_attention_heads``.  HF's YaRN reads ``truncate`` from the top-level
    ``rope_parameters`` even for per-layer dicts; here each layer's own dict
    is read.

    Examples
    --------
    >>> cfg = rope_config_from_hf({"hidden_size": 4096, "num_attention_heads": 32,
    ...     "rope_theta": 500000.0, "max_position_embeddings": 131072,
    ...     "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
    ...                      "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})
    >>> cfg.dim, cfg.base, cfg.rope_type
    (128, 500000.0, 'llama3')
    """
    if not isinstance(config, Mapping):
        raise type_error("config", "a mapping (a parsed config.json)", config)
    _both_agree(config, layer_type)
    params, nested, name = _rope_dict(config, layer_type)
    base, base_name = _setting(params, config, "rope_theta", name, 10000.0)
    base = check_real(base, base_name, exclusive_minimum=1.0)
    proportion, proportion_name = _setting(params, config, "partial_rotary_factor", name, 1.0)
    proportion = check_real(proportion, proportion_name, exclusive_minimum=0.0, maximum=1.0)
    head_dim, head_name = _head_dim(config)
    scaling = _scaling(config, params, nested, name)
    if scaling["rope_type"] == "proportional":
        dim = head_dim
        scaling["partial_rotary_factor"] = proportion
    else:
        dim = int(head_dim * proportion)
    if dim < 2 or dim % 2:
        culprit, got = (head_name, head_dim) if proportion == 1.0 else (proportion_name, proportion)
        rule = f"a value that rotates an even, positive number of channels (head_dim {head_dim} -> dim {dim})"
        raise value_error(culprit, rule, got)
    limit = _length(config.get("max_position_embeddings"), "config['max_position_embeddings']")
    exact_frequencies(dim, base, scaling, None, scaling_name=name)  # validate every key now, not at first use
    return RopeConfig(dim=dim, head_dim=head_dim, base=base, scaling=scaling, max_position_embeddings=limit)
