"""Built-in adapter for torchtune's RoPE modules (and its T5 encoder's relative position bias).

Run::

    scripts/matrix/setup_torchtune.sh /work/venvs/torchtune   # torchtune 0.6.1, torchao 0.11.0
    posenc-ref check torchtune

Coverage (canonical function -> torchtune):

* ``rope_frequencies``: the ``theta`` buffer of
  ``torchtune.modules.RotaryPositionalEmbeddings(dim, base=base)`` (scaling
  ``default``) or of ``torchtune.models.llama3_1.Llama3ScaledRoPE(dim, base=base,
  scale_factor=factor, low_freq_factor=..., high_freq_factor=...,
  old_context_len=original_max_position_embeddings)`` (scaling ``llama3``);
  attention factor 1 (torchtune has none).
* ``rope_cos_sin``: the ``cache`` buffer of the same modules, rows ``positions``.
  ``interleaved``: ``RotaryPositionalEmbeddings`` (``cache[..., i, 0]`` is
  ``cos(m theta_i)``, ``[..., i, 1]`` the sine), repeated per pair;
  ``half``: ``torchtune.models.qwen2.Qwen2RotaryPositionalEmbeddings``, whose
  ``cache`` row is already ``[cos | sin]`` of ``cat(freqs, freqs)``.
* ``rope``, ``rope_heads`` (``bshd``: torchtune's own ``[b, s, n_h, h_d]`` with
  ``input_pos [b, s]``): ``forward(x, input_pos=positions)`` of the same two modules.
* ``rope_from_base``: the module built from the base (and ``Llama3ScaledRoPE``
  from a ``llama3`` scaling: interleaved only) rotating ``x``; torchtune computes
  its own frequencies.
* ``t5_bucket`` (bidirectional only): the ``relative_position_to_bucket`` table of
  ``torchtune.models.t5.t5_encoder(...).relative_position_bias``, read at
  ``[0, r]`` for ``r >= 0`` and ``[-r, 0]`` for ``r < 0`` (its entry ``[q, k]``
  is the bucket of ``k - q``).
* ``t5_bias`` (bidirectional only): that module's ``forward()`` (``[1, H, S, S]``,
  entry ``[q, k]`` the table row of ``bucket(k - q)``) with the case's table loaded
  into its ``embedding``, indexed at the case's positions.

Convention differences bridged by glue (format only):

* ``rope_cos_sin``, ``rope`` and ``rope_heads`` take an exact ``inv_freq``;
  torchtune builds its frequencies from a ``base``.  A default table
  ``b**(-2i/d)`` is recognised and the module is built with that base (any other
  ``inv_freq`` is skipped; ``rope_from_base`` checks the scaled ones).
* The modules precompute a cache of ``max_seq_len`` rows and index it with
  ``input_pos`` (an index past it is an ``IndexError``, a negative one wraps);
  the adapter builds ``max_seq_len`` up to the next multiple of 2**20 above the
  largest position and keeps one module per configuration, as a model does.
  Negative positions are skipped.
* ``x[..., S, D]`` is viewed as torchtune's ``[b, s, n_h, h_d]`` with the
  leading axes flattened into ``b`` and ``n_h = 1``; the output is viewed back.
  torchtune rotates the whole head dim (no partial rotary).
* Interleaved ``cos``/``sin`` tables are torchtune's per-pair columns repeated
  twice (``repeat_interleave``), the canonical per-channel layout.
* T5 tables cover ``|q - k| < max_seq_len``; the adapter builds them on the
  smallest span holding the case's positions, shifted to start at 0 (the
  bucket depends on ``k - q`` only), at most 4096 (the table is quadratic), on a
  one-layer encoder of width ``num_heads`` whose other weights are never used.

Precision class: everything is float32 (``"product"``); the phase is the
float32 product ``arange(max_seq_len, dtype=float32) * theta`` (positions above
2**24 are rounded to float32 first), then ``cos``/``sin`` in float32.  Every
capability torchtune has is declared; nothing is left for the suite to express.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._glue import check_layout, require_default_base, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "TorchtuneAdapter"]

_CACHE_STEP = 2**20  # cache lengths are rounded up to this, so one module serves nearby positions
_CACHE_LIMIT = 2**32  # bytes of one cache (4 GiB): a d=128 cache past 2**24 rows is 9 GiB, the machine 24
_T5_MAX_TABLE = 4096


def _llama3_params(scaling: dict[str, Any] | None) -> dict[str, Any]:
    """``Llama3ScaledRoPE``'s keyword arguments for an HF ``llama3`` scaling dict (names only)."""
    params = dict(scaling or {})
    return {
        "scale_factor": params["factor"],
        "low_freq_factor": params["low_freq_factor"],
        "high_freq_factor": params["high_freq_factor"],
        "old_context_len": params["original_max_position_embeddings"],
    }


class TorchtuneAdapter(Adapter):
    """torchtune ``RotaryPositionalEmbeddings``, ``Llama3ScaledRoPE``, Qwen2's RoPE, T5 buckets."""

    name = "torchtune"
    capabilities = Capabilities(
        functions=(
            "rope_frequencies",
            "rope_cos_sin",
            "rope",
            "rope_heads",
            "rope_from_base",
            "t5_bucket",
            "t5_bias",
        ),
        # float32 buffers; t5_bias is a lookup in the case's table (its dtype kept)
        dtypes={"default": ["float32"], "t5_bias": ["float64", "float32"]},
        phase="product",  # float32(m) * theta32: the cache is built by a float32 product
        error_types={"rope": ["IndexError"]},  # a position past max_seq_len indexes past the cache
        scaling_types=("default", "llama3"),
        head_layouts=("bshd",),  # forward(x [b, s, n_h, h_d], input_pos [b, s])
        notes={
            "rope_frequencies": "theta of RotaryPositionalEmbeddings / Llama3ScaledRoPE (float32)",
            "rope_cos_sin": "cache of RotaryPositionalEmbeddings (interleaved) / Qwen2's (half); "
            "default inv_freq only (rebuilt from the base)",
            "rope": "forward(x as [b, s, 1, d], input_pos); default inv_freq only; no attention factor",
            "t5_bucket": "T5 encoder relative_position_to_bucket table; bidirectional, |r| < 4096",
            "rope_heads": "forward(x [b, s, n_h, h_d], input_pos [b, s]); default inv_freq only",
            "rope_from_base": "RotaryPositionalEmbeddings / Qwen2's / Llama3ScaledRoPE from the base; "
            "whole head dim",
            "t5_bias": "T5 encoder relative_position_bias(), the case's table; bidirectional, span < 4096",
        },
    )

    def __init__(self) -> None:
        try:
            import torch
            from torchtune.models.llama3_1 import Llama3ScaledRoPE
            from torchtune.models.qwen2 import Qwen2RotaryPositionalEmbeddings
            from torchtune.models.t5 import t5_encoder
            from torchtune.modules import RotaryPositionalEmbeddings
        except ImportError as exc:
            from . import AdapterError

            msg = f"adapter torchtune needs torchtune (scripts/matrix/setup_torchtune.sh): {exc}"
            raise AdapterError(msg) from exc
        self.torch = torch
        self._classes = {
            "interleaved": RotaryPositionalEmbeddings,
            "half": Qwen2RotaryPositionalEmbeddings,
            "llama3": Llama3ScaledRoPE,
        }
        self._t5_encoder = t5_encoder
        self._modules: dict[tuple[Any, ...], Any] = {}

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "torchtune": version("torchtune"),
            "torchao": version("torchao"),
            "torch": self.torch.__version__,
        }

    def _module(self, kind: str, dim: int, base: float, positions: Any = None, **params: Any) -> Any:
        """One module per configuration, its cache long enough for ``positions``."""
        top = int(np.max(positions)) if positions is not None and np.size(positions) else 0
        if positions is not None and np.size(positions) and int(np.min(positions)) < 0:
            msg = "torchtune indexes its cache with input_pos: a negative position wraps around"
            raise Unsupported(msg)
        key = (kind, dim, base, *sorted(params.items()))
        module = self._modules.get(key)
        if module is None or module.max_seq_len <= top:
            length = _CACHE_STEP * (top // _CACHE_STEP + 1) if positions is not None else 1
            if length * dim * 4 > _CACHE_LIMIT:  # the module's float32 cache, with temporaries about 3x it
                msg = f"torchtune's cache to position {top} would be {length * dim * 4 / 2**30:.1f} GiB"
                raise Unsupported(msg)
            module = self._classes[kind](dim, max_seq_len=length, base=base, **params)
            self._modules[key] = module
        return module

    # --- frequencies ------------------------------------------------------------------------------

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        kind = scaling_kind(scaling)
        if kind == "default":
            return self._module("interleaved", dim, base).theta, 1.0
        if kind == "llama3":
            return self._module("llama3", dim, base, **_llama3_params(scaling)).theta, 1.0
        msg = f"torchtune has no {kind!r} RoPE scaling"
        raise Unsupported(msg)

    # --- tables and rotation ----------------------------------------------------------------------

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        layout = check_layout(layout, ("half", "interleaved"), "torchtune")
        _no_attention_factor(attention_factor)
        base = require_default_base(inv_freq, "torchtune")
        dim = 2 * np.size(inv_freq)
        module = self._module(layout, dim, base, positions)
        rows = module.cache[self.torch.from_numpy(np.asarray(positions, dtype=np.int64))]
        if layout == "half":  # Qwen2: each row is [cos(cat(f, f)) | sin(cat(f, f))]
            return rows[..., :dim], rows[..., dim:]
        return rows[..., 0].repeat_interleave(2, dim=-1), rows[..., 1].repeat_interleave(2, dim=-1)

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        layout = check_layout(layout, ("half", "interleaved"), "torchtune")
        _no_attention_factor(attention_factor)
        base = require_default_base(inv_freq, "torchtune")
        dim = 2 * np.size(inv_freq)
        return self._rotate_rows(self._module(layout, dim, base, positions), x, positions, dim)

    def _rotate_rows(self, module: Any, x: Any, positions: Any, dim: int) -> Any:
        """``x [..., S, D]`` rotated by ``module`` at ``positions [S]``, viewed as ``[b, s, 1, d]``."""
        data = np.asarray(x)
        if data.shape[-1] != dim:
            msg = f"torchtune rotates the whole head dim ({data.shape[-1]}), not the first {dim} channels"
            raise Unsupported(msg)
        seq = data.shape[-2]
        tensor = self.torch.from_numpy(np.ascontiguousarray(data)).reshape(-1, seq, 1, dim)
        input_pos = self.torch.from_numpy(np.asarray(positions, dtype=np.int64).reshape(seq))
        return module(tensor, input_pos=input_pos).reshape(data.shape)

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
        layout = check_layout(layout, ("half", "interleaved"), "torchtune")
        if head_layout != "bshd":
            msg = f"torchtune's RoPE takes x as [b, s, n_h, h_d] (bshd); got {head_layout!r}"
            raise Unsupported(msg)
        _no_attention_factor(attention_factor)
        base = require_default_base(inv_freq, "torchtune")
        data, dim = np.asarray(x), 2 * np.size(inv_freq)
        if data.shape[-1] != dim:
            msg = f"torchtune rotates the whole head dim ({data.shape[-1]}), not the first {dim} channels"
            raise Unsupported(msg)
        module = self._module(layout, dim, base, positions)
        tensor = self.torch.from_numpy(np.ascontiguousarray(data))
        return module(tensor, input_pos=self.torch.from_numpy(np.asarray(positions, dtype=np.int64)))

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
        layout = check_layout(layout, ("half", "interleaved"), "torchtune")
        kind = scaling_kind(scaling)
        if kind == "default":
            module = self._module(layout, dim, base, positions)
        elif kind == "llama3" and layout == "interleaved":
            module = self._module("llama3", dim, base, positions, **_llama3_params(scaling))
        else:
            msg = f"torchtune has no {kind!r} RoPE in the {layout} layout"
            raise Unsupported(msg)
        return self._rotate_rows(module, x, positions, dim)

    # --- T5 -----------------------------------------------------------------------------------------

    def _t5_bias_module(self, num_buckets: int, max_distance: int, num_heads: int, span: int) -> Any:
        """The relative_position_bias module of a one-layer T5 encoder covering ``span`` positions."""
        if span > _T5_MAX_TABLE:
            msg = f"torchtune's T5 table is [max_seq_len, max_seq_len]; a span of {span} is too far"
            raise Unsupported(msg)
        encoder = self._t5_encoder(
            embed_dim=num_heads,
            mlp_dim=1,
            num_heads=num_heads,
            head_dim=1,
            num_layers=1,
            rel_pos_num_buckets=num_buckets,
            rel_pos_max_dist=max_distance,
            vocab_size=1,
            norm_eps=1e-6,
            max_seq_len=span,
        )
        return encoder.relative_position_bias

    def t5_bucket(self, relative: Any, *, bidirectional: bool, num_buckets: int, max_distance: int) -> Any:
        if not bidirectional:
            msg = "torchtune has the T5 encoder's (bidirectional) buckets only"
            raise Unsupported(msg)
        rel = np.asarray(relative)
        if not np.issubdtype(rel.dtype, np.integer):
            msg = "torchtune builds its table from integer positions; it takes no relative array to check"
            raise Unsupported(msg)
        span = int(np.max(np.abs(rel))) + 1 if rel.size else 1
        table = self._t5_bias_module(num_buckets, max_distance, 1, span).relative_position_to_bucket.numpy()
        return np.where(rel >= 0, table[0, np.maximum(rel, 0)], table[np.maximum(-rel, 0), 0])

    def t5_bias(
        self, q_positions: Any, k_positions: Any, table: Any, *, bidirectional: bool, max_distance: int
    ) -> Any:
        if not bidirectional:
            msg = "torchtune has the T5 encoder's (bidirectional) bias only"
            raise Unsupported(msg)
        torch = self.torch
        table, q, k = np.asarray(table), np.asarray(q_positions), np.asarray(k_positions)
        if table.ndim != 2 or not (np.issubdtype(q.dtype, np.integer) and np.issubdtype(k.dtype, np.integer)):
            msg = "torchtune's T5 bias is an nn.Embedding(num_buckets, num_heads) over integer positions"
            raise Unsupported(msg)
        lead = np.broadcast_shapes(q.shape[:-1], k.shape[:-1])
        q, k = np.broadcast_to(q, (*lead, q.shape[-1])), np.broadcast_to(k, (*lead, k.shape[-1]))
        low = min(int(q.min()), int(k.min())) if q.size and k.size else 0
        span = max(int(q.max()), int(k.max())) - low + 1 if q.size and k.size else 1
        module = self._t5_bias_module(table.shape[0], max_distance, table.shape[1], span)
        weight = torch.from_numpy(np.ascontiguousarray(table))
        module.to(weight.dtype).embedding.load_state_dict({"weight": weight})
        with torch.no_grad():
            bias = module()[0]  # [H, span, span]: entry [q, k] holds table[bucket(k - q)]
        rows = [
            bias[:, torch.from_numpy(q[i] - low)][:, :, torch.from_numpy(k[i] - low)]
            for i in np.ndindex(lead)
        ]
        return torch.stack(rows).reshape(*lead, table.shape[1], q.shape[-1], k.shape[-1])


def _no_attention_factor(attention_factor: float) -> None:
    if attention_factor != 1.0:
        msg = "torchtune's RoPE modules have no attention factor"
        raise Unsupported(msg)


ADAPTER = TorchtuneAdapter

#: The variants of this built-in adapter (``posenc-ref check torchtune``).
ADAPTERS: dict[str, type[Adapter]] = {"default": TorchtuneAdapter}
