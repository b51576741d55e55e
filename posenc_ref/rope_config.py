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
from ._validate import check_choice, check_int, check_real
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
    """

    dim: int
    head_dim: int
    base: float
    scaling: dict[str, Any]
    max_position_embeddings: int | None = None

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


def _rope_dict(config: Mapping[str, Any], layer_type: str | None) -> tuple[dict[str, Any], bool]:
    """The scaling dict for ``layer_type`` (a copy) and whether the config is per-layer."""
    params = config.get("rope_parameters")
    if params is None:
        params = config.get("rope_scaling")
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        msg = f"config['rope_parameters'] must be a mapping or null; got {type(params).__name__}"
        raise TypeError(msg)
    layer_types = config.get("layer_types") or []
    nested = bool(params) and all(isinstance(v, Mapping) for v in params.values())
    nested = nested and (not layer_types or set(params) <= set(layer_types))
    if nested:
        kinds = sorted(params)
        if layer_type is None:
            msg = f"layer_type must be one of {kinds} for this per-layer RoPE config; got None"
            raise ValueError(msg)
        return dict(params[check_choice(layer_type, "layer_type", kinds)]), True
    if layer_type is not None and layer_types and layer_type not in layer_types:
        msg = f"layer_type must be one of {sorted(set(layer_types))} or None; got {layer_type!r}"
        raise ValueError(msg)
    return dict(params), False


def _head_dim(config: Mapping[str, Any]) -> int:
    for key in ("qk_rope_head_dim", "head_dim"):
        if config.get(key):
            return check_int(config[key], f"config[{key!r}]")
    hidden, heads = config.get("hidden_size"), config.get("num_attention_heads")
    if hidden is None or heads is None:
        msg = "config must contain 'head_dim' or both 'hidden_size' and 'num_attention_heads'"
        raise ValueError(msg)
    return check_int(hidden, "config['hidden_size']") // check_int(heads, "config['num_attention_heads']")


def _scaling(config: Mapping[str, Any], params: dict[str, Any], nested: bool) -> dict[str, Any]:
    rope_type = params.pop("rope_type", None) or params.pop("type", None) or "default"
    params.pop("type", None)
    rope_type = _LEGACY_TYPES.get(rope_type, rope_type)
    for key in _OTHER_KEYS:
        params.pop(key, None)
    check_choice(rope_type, "rope_type", SCALING_TYPES)
    scaling = {"rope_type": rope_type, **params}
    limit = config.get("max_position_embeddings")
    if rope_type in _NEEDS_LIMIT and limit is not None:
        scaling.setdefault("max_position_embeddings", limit)
    if rope_type in _NEEDS_ORIGINAL:
        top = config.get("original_max_position_embeddings")
        if top is not None and not nested:  # Phi-3: the top-level value wins (HF v5)
            scaling["original_max_position_embeddings"] = top
        elif limit is not None:
            scaling.setdefault("original_max_position_embeddings", limit)
    return scaling


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
        unknown scaling type, ``partial_rotary_factor`` outside (0, 1], or
        any scaling key that :func:`posenc_ref.rope_frequencies` refuses.

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
        msg = f"config must be a mapping (a parsed config.json); got {type(config).__name__}"
        raise TypeError(msg)
    params, nested = _rope_dict(config, layer_type)
    base = params.pop("rope_theta", None) or config.get("rope_theta") or 10000.0
    base = check_real(base, "rope_theta", exclusive_minimum=1.0)
    proportion = params.pop("partial_rotary_factor", None) or config.get("partial_rotary_factor") or 1.0
    proportion = check_real(proportion, "partial_rotary_factor", exclusive_minimum=0.0, maximum=1.0)
    head_dim = _head_dim(config)
    scaling = _scaling(config, params, nested)
    if scaling["rope_type"] == "proportional":
        dim = head_dim
        scaling["partial_rotary_factor"] = proportion
    else:
        dim = int(head_dim * proportion)
    limit = config.get("max_position_embeddings")
    exact_frequencies(dim, base, scaling, None)  # validate every key now, not at first use
    return RopeConfig(dim=dim, head_dim=head_dim, base=base, scaling=scaling, max_position_embeddings=limit)
