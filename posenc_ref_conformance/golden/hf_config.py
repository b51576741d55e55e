"""The positional encoding a Hugging Face ``config.json`` declares, read by the suite for ``golden export``.

Why the suite reads configs itself rather than calling ``posenc_ref.rope_config_from_hf``:
exported vectors judge implementations, the library among them.  Had they come from the
library's reading of the config, a key it misreads (Phi-3's top-level
``original_max_position_embeddings``, a v5 per-layer dict, DeepSeek's ``qk_rope_head_dim``)
would be written into the vectors and then pass against itself.  So this module reads
``config.json`` again from transformers' rules (v5 ``RotaryEmbeddingConfigMixin`` /
``standardize_rope_params``, v4 ``rope_scaling`` with the legacy ``type`` key; see
``reference/rope_variants.md``) with code of its own, and the tests compare the two readings
on real config snippets: a disagreement is a failing test, never a silent export.
Reading keys is not oracle arithmetic; the numbers still come from the mpmath oracle.

:func:`read_config` returns a :class:`ModelPlan`: one :class:`RopeLayer` per RoPE layer type
(per-layer ``rope_parameters``, Gemma 3's v4 ``rope_local_base_freq``), or the ALiBi
(BLOOM, MPT, Falcon with ``alibi``) or T5 (T5, mT5, UMT5, ByT5) settings.  Every config it
cannot serve raises :class:`ConfigError` naming the key.

Refusals follow the library's reader.  Every value is read by the rules of
``rope_config_from_hf``: a key that is present is always checked (``rope_theta: 0`` or
``partial_rotary_factor: 0`` is an error, never the default); booleans are not numbers,
nor is ``4096.0`` an integer; NaN and Infinity are refused; a wrong type is a
:class:`ConfigTypeError` (a ``TypeError`` as the library's, and a ``ConfigError``).  After
this module has read a RoPE config, ``posenc_ref.rope_config_from_hf`` reads it too, as a
gate only: whatever it refuses is refused with its message and class (the values exported
stay this module's reading).  A config whose ``rope_parameters`` and ``rope_scaling``
disagree is refused there.  This module refuses more than the library (an unknown key, a
hidden size that heads do not divide, a value past its bound), never less.

Every size-like value has a stated bound (:data:`BOUNDS`), checked before any work: the
largest value in use in a real model, with headroom, so that a mistaken or hostile config
is refused at once instead of running for minutes or exhausting memory; and the minimum a
formula needs (NTK's ``dim/(dim-2)``, LongRoPE's ``1/ln(original)``, T5's ``ln(D/max_exact)``).
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import numbers
import re
from collections.abc import Mapping
from typing import Any

__all__ = [
    "BOUNDS",
    "MAX_ATTENTION",
    "MAX_CONTEXT",
    "MAX_DISTANCE",
    "MAX_FACTOR",
    "MAX_HEADS",
    "MAX_HEAD_DIM",
    "MAX_T5_BUCKETS",
    "SCALING_TYPES",
    "AlibiPlan",
    "ConfigError",
    "ConfigTypeError",
    "ModelPlan",
    "RopeLayer",
    "T5Plan",
    "plan_from_scaling",
    "read_config",
]

SCALING_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional")
#: Old names: Phi-3's first release said "su"; Qwen2-VL's "mrope" is default RoPE per position section.
_LEGACY_TYPES = {"su": "longrope", "mrope": "default"}
#: Keys of a scaling dict that are not about 1-D RoPE frequencies (M-RoPE sections) and are dropped.
_DROPPED_KEYS = ("mrope_section", "mrope_interleaved")
_NUMBER_KEYS = (
    "factor",
    "beta_fast",
    "beta_slow",
    "mscale",
    "mscale_all_dim",
    "attention_factor",
    "low_freq_factor",
    "high_freq_factor",
)
_INT_KEYS = ("original_max_position_embeddings", "max_position_embeddings")
_KNOWN_KEYS = {"rope_type", "truncate", "short_factor", "long_factor", *_NUMBER_KEYS, *_INT_KEYS}
_REQUIRED = {
    "linear": ("factor",),
    "ntk": ("factor",),
    "dynamic": ("factor", "max_position_embeddings"),
    "llama3": ("factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"),
    "longrope": ("short_factor", "long_factor", "original_max_position_embeddings"),
}
_NEEDS_LIMIT = ("dynamic", "yarn", "longrope")
_NEEDS_ORIGINAL = ("llama3", "yarn", "longrope")
#: Keys whose presence says the model uses RoPE.
_ROPE_KEYS = (
    "rope_theta",
    "rope_scaling",
    "rope_parameters",
    "partial_rotary_factor",
    "rotary_dim",
    "rotary_pct",
    "rotary_emb_base",
    "qk_rope_head_dim",
)
_T5_TYPES = ("t5", "mt5", "umt5")


class ConfigError(ValueError):
    """A config ``golden export`` cannot serve; the message names the key."""


class ConfigTypeError(ConfigError, TypeError):
    """A value of the wrong type: a ``TypeError`` (as the library's reader raises) and a ``ConfigError``."""


# --- bounds ------------------------------------------------------------------------------------------------

#: Widest head (``head_dim``, ``qk_rope_head_dim``, ``hidden_size // num_attention_heads``).  The widest
#: in use is 256 (Gemma, Gemma 2/3, Qwen3-Next); each exported q/k is 2 x 64 x head_dim and each
#: frequency an mpmath evaluation, so 1024 (4x) costs seconds, not minutes.
MAX_HEAD_DIM = 1024
#: Most attention heads (ALiBi slopes; the head count a RoPE head size is derived from).  The most in
#: use: 112 (BLOOM-176B, ALiBi), 232 (Falcon-180B).  An ALiBi bias case is heads x 64 x 64 exact
#: products: about 70 s for both forms at 1024 heads.
MAX_HEADS = 1024
#: Longest context (``max_position_embeddings``, ``original_max_position_embeddings``, ``max_seq_len``,
#: ``seq_length``, ``n_positions``).  The longest in use is 10,485,760 (Llama 4 Scout); 2**30 is 100x,
#: and 2**30 x MAX_FACTOR stays below 2**53 (every exported position is an exact float64).
MAX_CONTEXT = 2**30
_CONTEXT_WHY = "the longest context in use is 10,485,760 (Llama 4 Scout)"
_HEAD_DIM_WHY = "the widest head in use is 256"
_HEADS_WHY = "the most heads in use: 232 (Falcon-180B)"
_HIDDEN_WHY = "at most 1024 heads of at most 1024 channels"
#: Largest scaling ``factor``.  In use: 4 to 40 (Qwen2.5 and DeepSeek-V3 YaRN), 32 (gpt-oss, Phi-3's
#: LongRoPE), 8 to 16 (Llama 3.1/4); 2**16 is over 1000x.
MAX_FACTOR = 2**16
#: Largest ``attention_factor``, ``mscale`` and ``mscale_all_dim`` (YaRN, LongRoPE).  In use: 0.707 to
#: 1.4; cos/sin are scaled by the attention factor and are also exported in float32 (``apply_rope``),
#: whose range they must stay far inside.
MAX_ATTENTION = 2**10
#: Most T5 buckets: T5, mT5, UMT5, LongT5 and ByT5 use 32; 1024 is 32x.
MAX_T5_BUCKETS = 1024
#: Largest T5 ``relative_attention_max_distance``: 128 in every T5 family model.  The export covers
#: -2D..2D per direction, each an mpmath bucket (about 100 us): 4096 (32x) takes about 3 s.
MAX_DISTANCE = 4096
#: Most layer types of a per-layer ``rope_parameters`` (Gemma 3 has 2), and their names: each becomes
#: part of case ids and ``.npy`` file names, which must stay valid, short file names.
MAX_LAYER_TYPES = 16
_LAYER_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")

#: The bounds, as the guide's table states them: key -> (minimum, maximum, why).
BOUNDS: dict[str, tuple[str, str, str]] = {
    "head_dim / qk_rope_head_dim / hidden_size // num_attention_heads": (
        "1 (rotated dim >= 2, even; >= 4 for ntk and dynamic)",
        str(MAX_HEAD_DIM),
        "widest in use 256; NTK's and dynamic NTK's exponent dim/(dim-2) needs dim > 2",
    ),
    "num_attention_heads / n_head / n_heads": ("1", str(MAX_HEADS), "most in use 232 (Falcon-180B)"),
    "hidden_size / d_model (where a head size is derived)": (
        "1",
        str(MAX_HEADS * MAX_HEAD_DIM),
        "MAX_HEADS x MAX_HEAD_DIM",
    ),
    "max_position_embeddings, original_max_position_embeddings, max_seq_len, seq_length, n_positions": (
        "1 (2 for longrope's original: its attention factor divides by ln(original))",
        "2**30",
        "longest in use 10,485,760 (Llama 4 Scout)",
    ),
    "rope_scaling factor": ("1", "2**16", "in use 4 to 40"),
    "attention_factor, mscale, mscale_all_dim": (
        "> 0 (the library's rule)",
        str(MAX_ATTENTION),
        "in use 0.707 to 1.4; cos/sin scaled by it stay finite in float32",
    ),
    "longrope short_factor / long_factor": ("dim/2 entries", "dim/2 <= 512", "one per frequency"),
    "relative_attention_num_buckets": (
        "4 (2 for a decoder only): max_exact = buckets/4 (/2) >= 1 divides",
        str(MAX_T5_BUCKETS),
        "32 in every T5 model",
    ),
    "relative_attention_max_distance": (
        "max_exact + 1: ln(max_distance / max_exact) divides",
        str(MAX_DISTANCE),
        "128 in every T5 model; the export covers -2D..2D",
    ),
    "layer types of a per-layer rope_parameters": (
        "1",
        f"{MAX_LAYER_TYPES} names of 1-64 letters, digits, _ . -",
        "names become case ids and file names",
    ),
}


@dataclasses.dataclass(frozen=True)
class RopeLayer:
    """The RoPE of one layer type: what ``rope_frequencies`` gets, and the context edges.

    ``dim``: the rotated channels (``2 len(inv_freq)``); ``head_dim``: the width of q/k
    per head (DeepSeek's ``qk_rope_head_dim``), of which the first ``dim`` rotate (all
    of it for ``proportional``, whose tail has zero frequencies).
    """

    name: str
    head_dim: int
    dim: int
    base: float
    scaling: dict[str, Any]
    max_position_embeddings: int | None

    @property
    def rope_type(self) -> str:
        return self.scaling["rope_type"]

    def edges(self) -> list[int]:
        """Context lengths that matter: original, extended (factor x original) and the model's limit."""
        original = self.scaling.get("original_max_position_embeddings")
        found = {original, self.max_position_embeddings}
        factor = self.scaling.get("factor")
        if original is not None and factor is not None:
            found.add(int(factor * original))
        return sorted(e for e in found if e)

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclasses.dataclass(frozen=True)
class AlibiPlan:
    """ALiBi: ``num_heads`` slopes 2**(-max_bias k / n) by the original recursion."""

    num_heads: int
    max_bias: float


@dataclasses.dataclass(frozen=True)
class T5Plan:
    """T5 relative buckets; ``bidirectional``: the directions the model uses (encoder True, decoder False)."""

    num_buckets: int
    max_distance: int
    bidirectional: tuple[bool, ...]


@dataclasses.dataclass(frozen=True)
class ModelPlan:
    """What one config declares: RoPE layer types, or ALiBi, or T5 buckets."""

    model_type: str | None
    rope: tuple[RopeLayer, ...] = ()
    alibi: AlibiPlan | None = None
    t5: T5Plan | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "modelType": self.model_type,
            "rope": [layer.as_dict() for layer in self.rope],
            "alibi": None if self.alibi is None else dataclasses.asdict(self.alibi),
            "t5": None
            if self.t5 is None
            else {**dataclasses.asdict(self.t5), "bidirectional": list(self.t5.bidirectional)},
        }


# --- value checks (each names its key; the library reader's rules) ------------------------------------------


def _shown(value: Any) -> str:
    shown = repr(value)
    return shown if len(shown) <= 120 else shown[:100] + " ... " + shown[-12:]


def _int(value: Any, key: str, *, minimum: int = 1, maximum: int | None = None, why: str = "") -> int:
    """An integer in ``[minimum, maximum]``: not a bool, not a float (``4096.0``), as the library reads it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        msg = f"{key} must be an integer; got {_shown(value)} of type {type(value).__name__}"
        raise ConfigTypeError(msg)
    value = int(value)
    if value < minimum:
        rule = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        msg = f"{key} must be {rule}; got {value!r}" + (f" ({why})" if why and minimum > 1 else "")
        raise ConfigError(msg)
    if maximum is not None and value > maximum:
        msg = f"{key} must be an integer <= {maximum}; got {value!r}" + (f" ({why})" if why else "")
        raise ConfigError(msg)
    return value


def _number(value: Any, key: str) -> float:
    """A finite real number (not a bool), as the library reads it."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        msg = f"{key} must be a real number; got {_shown(value)} of type {type(value).__name__}"
        raise ConfigTypeError(msg)
    try:
        finite = math.isfinite(value)
    except OverflowError:  # an int beyond float range
        finite = False
    if not finite:
        msg = f"{key} must be finite; got {_shown(value)}"
        raise ConfigError(msg)
    return value


def _mapping(value: Any, key: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        msg = f"{key} must be an object (a JSON dict); got {type(value).__name__}"
        raise ConfigTypeError(msg)
    return value


def _flag(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        msg = f"{key} must be true or false; got {_shown(value)}"
        raise ConfigTypeError(msg)
    return value


def _setting(params: dict[str, Any], config: Mapping[str, Any], where: str, *keys: str) -> tuple[Any, str]:
    """The first of ``keys`` present (not null) in the rope dict, then at the top level; (None, '') if none.

    A value that is present is returned as is, ``0`` included: it is checked, never replaced by a default.
    """
    value = params.pop(keys[0], None)
    if value is not None:
        return value, f"{where}[{keys[0]!r}]"
    for key in keys:
        if config.get(key) is not None:
            return config[key], f"config[{key!r}]"
    return None, ""


def _check_scaling(scaling: dict[str, Any], dim: int, where: str) -> None:
    """Types and ranges of the scaling keys (the rules ``rope_frequencies`` enforces), by key."""
    for key in _NUMBER_KEYS:
        if key in scaling:
            _number(scaling[key], f"{where}[{key!r}]")
    for key in _INT_KEYS:
        if key in scaling:
            _int(scaling[key], f"{where}[{key!r}]", maximum=MAX_CONTEXT, why=_CONTEXT_WHY)
    kind = scaling["rope_type"]
    missing = [k for k in _REQUIRED.get(kind, ()) if scaling.get(k) is None]
    if kind == "yarn" and scaling.get("factor") is None and scaling.get("max_position_embeddings") is None:
        missing.append("factor")
    if missing:
        msg = f"{where} of rope_type {kind!r} must contain {missing}"
        raise ConfigError(msg)
    for key in ("attention_factor", "mscale", "mscale_all_dim"):
        if scaling.get(key) is not None and scaling[key] > MAX_ATTENTION:
            msg = (
                f"{where}[{key!r}] must be <= {MAX_ATTENTION}; got {scaling[key]!r} (in use: 0.707 to 1.4; "
                "cos/sin are scaled by the attention factor and exported in float32 too)"
            )
            raise ConfigError(msg)
    factor = scaling.get("factor")
    if factor is not None and not 1 <= factor <= MAX_FACTOR:
        msg = f"{where}['factor'] must be in [1, {MAX_FACTOR}]; got {factor!r} (factors in use: 4 to 40)"
        raise ConfigError(msg)
    if "truncate" in scaling:
        _flag(scaling["truncate"], f"{where}['truncate']")
    if kind in ("ntk", "dynamic") and dim < 4:
        msg = (
            f"dim must be > 2 for rope_type {kind!r} (the base exponent is dim/(dim-2)); got {dim} "
            "(the rotated width: head_dim x partial_rotary_factor)"
        )
        raise ConfigError(msg)
    if kind == "longrope":
        original = scaling["original_max_position_embeddings"]
        if original < 2:
            msg = (
                f"{where}['original_max_position_embeddings'] must be an integer >= 2 for rope_type "
                f"'longrope' (its attention factor divides by ln(original)); got {original!r}"
            )
            raise ConfigError(msg)
    if kind == "yarn" and (scaling.get("beta_fast") or 32) <= (scaling.get("beta_slow") or 1):
        msg = f"{where}['beta_fast'] must exceed beta_slow; got {scaling.get('beta_fast')!r}"
        raise ConfigError(msg)
    if kind == "llama3":
        if scaling["low_freq_factor"] <= 0 or scaling["high_freq_factor"] < scaling["low_freq_factor"]:
            msg = (
                f"{where}['high_freq_factor'] must be >= low_freq_factor > 0; got "
                f"{scaling['high_freq_factor']!r} and {scaling['low_freq_factor']!r}"
            )
            raise ConfigError(msg)
    if kind == "longrope":
        for key in ("short_factor", "long_factor"):
            values = scaling[key]
            if not isinstance(values, list) or len(values) != dim // 2:
                count = len(values) if isinstance(values, list) else type(values).__name__
                msg = f"{where}[{key!r}] must be a list of dim/2 = {dim // 2} numbers; got {count}"
                raise (ConfigError if isinstance(values, list) else ConfigTypeError)(msg)
            for n, v in enumerate(values):
                if _number(v, f"{where}[{key!r}][{n}]") <= 0:
                    msg = f"{where}[{key!r}][{n}] must be > 0; got {v!r}"
                    raise ConfigError(msg)


# --- RoPE ---------------------------------------------------------------------------------------------------


def _layer_types(config: Mapping[str, Any]) -> list[str]:
    """``layer_types``: a list (of layer type names), or absent."""
    value = config.get("layer_types")
    if value is None:
        return []
    if not isinstance(value, list):
        msg = f"config['layer_types'] must be a list of layer type names; got {_shown(value)}"
        raise ConfigTypeError(msg)
    return [v if isinstance(v, str) else str(v) for v in value]


def _rope_dicts(config: Mapping[str, Any]) -> tuple[list[tuple[str, str, dict[str, Any]]], str]:
    """[(layer name, where, scaling dict copy)] and their kind: 'flat', 'per-layer' (v5) or 'gemma3-v4'."""
    key = "rope_parameters" if config.get("rope_parameters") is not None else "rope_scaling"
    params = config.get(key)
    params = {} if params is None else dict(_mapping(params, f"config[{key!r}]"))
    layer_types = _layer_types(config)
    nested = bool(params) and all(isinstance(k, str) and isinstance(v, Mapping) for k, v in params.items())
    nested = nested and (not layer_types or set(params) <= set(layer_types))
    if nested:
        bad = [n for n in params if not _LAYER_NAME.fullmatch(n)]
        if len(params) > MAX_LAYER_TYPES or bad:
            msg = (
                f"config[{key!r}] must hold at most {MAX_LAYER_TYPES} layer types named by 1 to 64 letters, "
                f"digits, '_', '.' or '-' (they become case ids and file names); got {len(params)} layer "
                f"types" + (f", among them {_shown(bad[0])}" if bad else "")
            )
            raise ConfigError(msg)
        return [(name, f"config[{key!r}][{name!r}]", dict(p)) for name, p in params.items()], "per-layer"
    layers = [("model", f"config[{key!r}]", params)]
    if config.get("rope_local_base_freq") is not None and "sliding_attention" in layer_types:
        # Gemma 3 in transformers v4: global layers use rope_theta + rope_scaling, sliding ones
        # default RoPE at rope_local_base_freq.
        local = {"rope_type": "default", "rope_theta": config["rope_local_base_freq"]}
        layers = [
            ("full_attention", f"config[{key!r}]", params),
            ("sliding_attention", "config['rope_local_base_freq']", local),
        ]
        return layers, "gemma3-v4"
    return layers, "flat"


def _head_dim(config: Mapping[str, Any]) -> int:
    """The per-head width: ``qk_rope_head_dim``, else ``head_dim``, else hidden size / heads."""
    for key in ("qk_rope_head_dim", "head_dim"):
        if config.get(key) is not None:
            return _int(config[key], f"config[{key!r}]", maximum=MAX_HEAD_DIM, why=_HEAD_DIM_WHY)
    hidden_key = "hidden_size" if config.get("hidden_size") is not None else "d_model"
    heads_key = "num_attention_heads" if config.get("num_attention_heads") is not None else "n_head"
    hidden, heads = config.get(hidden_key), config.get(heads_key)
    if hidden is None or heads is None:
        msg = "config must contain 'head_dim', or 'hidden_size' and 'num_attention_heads'"
        raise ConfigError(msg)
    heads = _int(heads, f"config[{heads_key!r}]", maximum=MAX_HEADS, why=_HEADS_WHY)
    hidden = _int(hidden, f"config[{hidden_key!r}]", maximum=MAX_HEADS * MAX_HEAD_DIM, why=_HIDDEN_WHY)
    if hidden % heads:
        msg = f"config[{hidden_key!r}] = {hidden} is not a multiple of {heads_key} = {heads}; give 'head_dim'"
        raise ConfigError(msg)
    if hidden // heads > MAX_HEAD_DIM:
        msg = (
            f"config[{hidden_key!r}] // config[{heads_key!r}] must be an integer <= {MAX_HEAD_DIM}; got "
            f"{hidden // heads} ({_HEAD_DIM_WHY})"
        )
        raise ConfigError(msg)
    return hidden // heads


def _base(config: Mapping[str, Any], params: dict[str, Any], where: str) -> float:
    value, key = _setting(params, config, where, "rope_theta", "rotary_emb_base")
    if value is None:
        return 10000.0
    base = float(_number(value, key))
    if base <= 1:
        msg = f"{key} must be > 1.0; got {base!r}"
        raise ConfigError(msg)
    return base


def _fraction(config: Mapping[str, Any], params: dict[str, Any], where: str) -> float:
    value, key = _setting(params, config, where, "partial_rotary_factor", "rotary_pct")
    if value is None:
        return 1.0
    fraction = float(_number(value, key))
    if fraction <= 0:
        msg = f"{key} must be > 0.0; got {fraction!r}"
        raise ConfigError(msg)
    if fraction > 1:
        msg = f"{key} must be <= 1.0; got {fraction!r}"
        raise ConfigError(msg)
    return fraction


def _layer(
    config: Mapping[str, Any], name: str, where: str, params: dict[str, Any], nested: bool
) -> RopeLayer:
    base = _base(config, params, where)
    fraction = _fraction(config, params, where)
    rope_type, legacy = params.pop("rope_type", None), params.pop("type", None)
    rope_type = legacy if rope_type is None else rope_type  # as transformers v5: rope_type, else type
    rope_type = "default" if rope_type is None else rope_type
    if isinstance(rope_type, str):
        rope_type = _LEGACY_TYPES.get(rope_type, rope_type)
    if rope_type not in SCALING_TYPES:
        allowed = ", ".join(map(repr, SCALING_TYPES))
        msg = f"{where}['rope_type'] must be one of {allowed}; got {_shown(rope_type)}"
        if not isinstance(rope_type, str):
            msg += f" of type {type(rope_type).__name__}"
            raise ConfigTypeError(msg)
        close = difflib.get_close_matches(rope_type, SCALING_TYPES, n=1)
        raise ConfigError(msg + (f" (did you mean {close[0]!r}?)" if close else ""))
    for key in _DROPPED_KEYS:
        params.pop(key, None)
    unknown = sorted(map(str, set(params) - _KNOWN_KEYS))
    if unknown:
        msg = f"{where} has keys the export does not know: {unknown} (known: {sorted(_KNOWN_KEYS)})"
        raise ConfigError(msg)
    scaling = {"rope_type": rope_type, **params}
    limit = config.get("max_position_embeddings")
    if limit is not None:
        limit = _int(limit, "config['max_position_embeddings']", maximum=MAX_CONTEXT, why=_CONTEXT_WHY)
        if rope_type in _NEEDS_LIMIT:
            scaling.setdefault("max_position_embeddings", limit)
    if rope_type in _NEEDS_ORIGINAL:
        top = config.get("original_max_position_embeddings")
        if top is not None:
            key = "config['original_max_position_embeddings']"
            top = _int(top, key, maximum=MAX_CONTEXT, why=_CONTEXT_WHY)
        if top is not None and not nested:  # Phi-3: the top-level key wins (transformers v5)
            scaling["original_max_position_embeddings"] = top
        elif limit is not None:
            scaling.setdefault("original_max_position_embeddings", limit)
    head_dim = _head_dim(config)
    if rope_type == "proportional":
        dim = head_dim
        scaling["partial_rotary_factor"] = fraction
    elif config.get("rotary_dim") is not None:  # GPT-J, CodeGen
        dim = _int(config["rotary_dim"], "config['rotary_dim']", maximum=MAX_HEAD_DIM, why=_HEAD_DIM_WHY)
    else:
        dim = int(head_dim * fraction)
    if dim % 2 or dim < 2 or dim > head_dim:
        msg = (
            f"the rotated width must be even and in [2, head_dim = {head_dim}]; got {dim} "
            f"(from head_dim {head_dim} and partial_rotary_factor {fraction} or rotary_dim)"
        )
        raise ConfigError(msg)
    _check_scaling(scaling, dim, where)
    return RopeLayer(name, head_dim, dim, float(base), scaling, limit)


def _library_gate(config: Mapping[str, Any], layers: tuple[RopeLayer, ...], kind: str) -> None:
    """Refuse what ``posenc_ref.rope_config_from_hf`` refuses, with its message and class.

    The library reads the head size from ``head_dim`` or ``hidden_size`` / ``num_attention_heads``
    only; for GPT-J's ``n_embd`` / ``n_head`` (or ``d_model``) it is given the head size read
    here.  Gemma 3's v4 local layers (``rope_local_base_freq``) are this module's reading alone.
    """
    from posenc_ref import rope_config_from_hf

    has_size = any(config.get(k) is not None for k in ("qk_rope_head_dim", "head_dim")) or all(
        config.get(k) is not None for k in ("hidden_size", "num_attention_heads")
    )
    view = config if has_size else {**config, "head_dim": layers[0].head_dim}
    for name in [layer.name for layer in layers] if kind == "per-layer" else [None]:
        try:
            rope_config_from_hf(view, layer_type=name)
        except TypeError as exc:
            raise ConfigTypeError(str(exc)) from exc
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        except Exception as exc:  # a failure of the library's reader is still a refusal, never a crash
            msg = f"posenc_ref.rope_config_from_hf failed on this config: {type(exc).__name__}: {exc}"
            raise ConfigError(msg) from exc


# --- the config ---------------------------------------------------------------------------------------------


def _heads(config: Mapping[str, Any], *keys: str) -> int:
    for key in keys:
        if config.get(key) is not None:
            return _int(config[key], f"config[{key!r}]", maximum=MAX_HEADS, why=_HEADS_WHY)
    msg = f"config must contain the number of attention heads ({' or '.join(map(repr, keys))})"
    raise ConfigError(msg)


#: Context lengths of an ALiBi or T5 config: the context edges of its default positions.
_BIAS_CONTEXT_KEYS = ("max_position_embeddings", "max_seq_len", "seq_length", "n_positions")


def _bias_contexts(config: Mapping[str, Any]) -> None:
    for key in _BIAS_CONTEXT_KEYS:
        if config.get(key) is not None:
            _int(config[key], f"config[{key!r}]", maximum=MAX_CONTEXT, why=_CONTEXT_WHY)


def _given(config: Mapping[str, Any], key: str, default: Any) -> Any:
    value = config.get(key)
    return default if value is None else value


def _t5_plan(config: Mapping[str, Any], model_type: str | None) -> ModelPlan:
    """T5 buckets: each direction needs ``max_exact >= 1`` and ``max_distance > max_exact``.

    ``max_exact`` is ``num_buckets // 4`` bidirectionally (half the buckets per direction) and
    ``num_buckets // 2`` causally; the log term divides by ``ln(max_distance / max_exact)``.
    """
    encoder_decoder = _flag(_given(config, "is_encoder_decoder", True), "config['is_encoder_decoder']")
    decoder = _flag(_given(config, "is_decoder", False), "config['is_decoder']")
    directions = (True, False) if encoder_decoder else (not decoder,)
    key = "config['relative_attention_num_buckets']"
    minimum = 4 if True in directions else 2
    why = f"max_exact = num_buckets // {minimum} must be >= 1; T5 models use 32"
    buckets = _int(
        _given(config, "relative_attention_num_buckets", 32),
        key,
        minimum=minimum,
        maximum=MAX_T5_BUCKETS,
        why=why,
    )
    max_exact = max(buckets // 4 if bidirectional else buckets // 2 for bidirectional in directions)
    key = "config['relative_attention_max_distance']"
    distance = _int(
        _given(config, "relative_attention_max_distance", 128),
        key,
        maximum=MAX_DISTANCE,
        why="T5 models use 128; the export covers -2 max_distance .. 2 max_distance",
    )
    if distance <= max_exact:
        msg = (
            f"{key} must be an integer > {max_exact} (max_exact of {buckets} buckets: the log term divides "
            f"by ln(max_distance / max_exact)); got {distance}"
        )
        raise ConfigError(msg)
    _bias_contexts(config)
    return ModelPlan(model_type, t5=T5Plan(buckets, distance, directions))


def _bias_plan(config: Mapping[str, Any], model_type: str | None) -> ModelPlan | None:
    """ALiBi or T5 settings, or None when the config declares neither."""
    falcon_alibi = model_type == "falcon" and _flag(_given(config, "alibi", False), "config['alibi']")
    if model_type == "bloom" or falcon_alibi:
        heads = _heads(config, "n_head", "num_attention_heads")
        _bias_contexts(config)
        return ModelPlan(model_type, alibi=AlibiPlan(heads, 8.0))
    if model_type == "mpt":
        attn = _mapping(_given(config, "attn_config", {}), "config['attn_config']")
        if not _flag(_given(attn, "alibi", False), "config['attn_config']['alibi']"):
            msg = "config['attn_config']['alibi'] is false: this MPT uses learned absolute positions"
            raise ConfigError(msg)
        max_bias = _number(_given(attn, "alibi_bias_max", 8), "config['attn_config']['alibi_bias_max']")
        if max_bias <= 0:
            msg = f"config['attn_config']['alibi_bias_max'] must be > 0; got {max_bias!r}"
            raise ConfigError(msg)
        heads = _heads(config, "n_heads", "num_attention_heads")
        _bias_contexts(config)
        return ModelPlan(model_type, alibi=AlibiPlan(heads, max_bias))
    if model_type in _T5_TYPES or (model_type is None and "relative_attention_num_buckets" in config):
        return _t5_plan(config, model_type)
    return None


def read_config(config: Mapping[str, Any]) -> ModelPlan:
    """The positional encoding ``config`` (a parsed ``config.json``) declares.

    RoPE: ``rope_theta``, the scaling dict (v4 ``rope_scaling``, legacy ``type`` and
    Phi-3's ``"su"``; v5 ``rope_parameters``, one dict per layer type when its keys are
    layer types), ``partial_rotary_factor``, ``head_dim`` (``qk_rope_head_dim`` first,
    else ``head_dim``, else ``hidden_size // num_attention_heads``), GPT-NeoX's
    ``rotary_pct`` / ``rotary_emb_base`` and GPT-J's ``rotary_dim``; for
    ``llama3``/``yarn``/``longrope`` a top-level ``original_max_position_embeddings``
    wins, else the dict's, else ``max_position_embeddings``.  ALiBi: ``bloom``, ``mpt``
    with ``attn_config.alibi``, ``falcon`` with ``alibi``.  T5 buckets: ``t5``, ``mt5``,
    ``umt5`` (ByT5 and FLAN-T5 say ``t5``).

    Raises :class:`ConfigError` (a ``ValueError``) naming the key for configs it cannot
    serve: no positional encoding it knows, an unknown ``rope_type``, missing or
    ill-typed keys (:class:`ConfigTypeError`, also a ``TypeError``), inconsistent head
    sizes, a value outside its bound (:data:`BOUNDS`), or anything
    ``posenc_ref.rope_config_from_hf`` refuses (``rope_parameters`` and ``rope_scaling``
    that disagree among them).
    """
    config = _mapping(config, "config")
    model_type = config.get("model_type")
    plan = _bias_plan(config, model_type)
    if plan is not None:
        return plan
    if not any(config.get(key) is not None for key in _ROPE_KEYS):
        msg = (
            f"config (model_type {model_type!r}) declares no positional encoding the export knows: "
            f"RoPE keys {list(_ROPE_KEYS)}, ALiBi (bloom, mpt attn_config.alibi, falcon alibi) or "
            f"T5 buckets ({', '.join(_T5_TYPES)})"
        )
        raise ConfigError(msg)
    dicts, kind = _rope_dicts(config)
    layers = tuple(_layer(config, n, w, p, kind != "flat") for n, w, p in dicts)
    _library_gate(config, layers, kind)
    return ModelPlan(model_type, rope=layers)


def plan_from_scaling(
    scaling: Mapping[str, Any] | None,
    *,
    head_dim: int,
    base: float,
    max_position_embeddings: int | None = None,
    partial_rotary_factor: float | None = None,
) -> ModelPlan:
    """One RoPE layer from a plain rope-parameters dict (``golden export --scaling``)."""
    params = dict(_mapping(scaling or {}, "scaling"))
    theta = params.pop("rope_theta", None)
    if theta is not None and theta != base:
        msg = f"scaling['rope_theta'] = {theta!r} differs from base = {base!r}"
        raise ConfigError(msg)
    config: dict[str, Any] = {
        "head_dim": _int(head_dim, "head_dim", maximum=MAX_HEAD_DIM, why=_HEAD_DIM_WHY),
        "rope_theta": base,
        "rope_parameters": params,
    }
    if max_position_embeddings is not None:
        config["max_position_embeddings"] = max_position_embeddings
    if partial_rotary_factor is not None:
        config["partial_rotary_factor"] = partial_rotary_factor
    return read_config(config)
