"""Built-in adapter for torchtune's RoPE modules (and its T5 encoder's bucket table).

Run::

    scripts/matrix/setup_torchtune.sh /work/venvs/torchtune   # torchtune 0.6.1, torchao 0.11.0
    posenc-ref check posenc_ref_conformance.adapters.torchtune

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
* ``rope``: ``forward(x, input_pos=positions)`` of the same two modules.
* ``t5_bucket`` (bidirectional only): the ``relative_position_to_bucket`` table of
  ``torchtune.models.t5.t5_encoder(...).relative_position_bias``, read at
  ``[0, r]`` for ``r >= 0`` and ``[-r, 0]`` for ``r < 0`` (its entry ``[q, k]``
  is the bucket of ``k - q``).

Convention differences bridged by glue (format only):

* torchtune builds its frequencies from a ``base``; the suite hands over an exact
  ``inv_freq``.  ``rope_cos_sin`` and ``rope`` recognise a default table
  ``b**(-2i/d)`` and construct the module with that base, so torchtune computes
  its own (float32) frequencies; any other ``inv_freq`` is skipped (the
  ``rope_from_base`` call proposed in ``PLANNED_CAPABILITIES`` would cover
  ``Llama3ScaledRoPE`` there too).
* The modules precompute a cache of ``max_seq_len`` rows and index it with
  ``input_pos`` (an index past it is an ``IndexError``, a negative one wraps);
  the adapter builds ``max_seq_len`` up to the next multiple of 2**20 above the
  largest position and keeps one module per configuration, as a model does.
  Negative positions are skipped.
* ``x[..., S, D]`` is viewed as torchtune's ``[b, s, n_h, h_d]`` with the
  leading axes flattened into ``b`` and ``n_h = 1``; the output is viewed back.
* Interleaved ``cos``/``sin`` tables are torchtune's per-pair columns repeated
  twice (``repeat_interleave``), the canonical per-channel layout.
* The T5 bucket table covers ``|r| < max_seq_len``; the adapter builds it for
  ``max|r| + 1`` (at most 4096: the table is quadratic) on a one-layer encoder
  of width 1 whose weights are never used.

Precision class: everything is float32; the phase is the float32 product
``arange(max_seq_len, dtype=float32) * theta`` (positions above 2**24 are
rounded to float32 first), then ``cos``/``sin`` in float32.  Rotation in float32.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._glue import check_layout, require_default_base, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "PLANNED_CAPABILITIES", "TorchtuneAdapter"]

_CACHE_STEP = 2**20  # cache lengths are rounded up to this, so one module serves nearby positions
_T5_MAX_TABLE = 4096

#: What this adapter would declare with the capability keys planned for the suite.
PLANNED_CAPABILITIES: dict[str, Any] = {
    "phase": {"rope_cos_sin": "product", "rope": "product"},
    "dtypes": {
        "rope_frequencies": ["float32"],
        "rope_cos_sin": ["float32"],
        "rope": ["float32"],
        "t5_bucket": ["int64"],
    },
    "positions": {"rope_cos_sin": "float32", "rope": "float32"},  # cast before the product
    "frequencies": {"rope_cos_sin": "float32", "rope": "float32"},
    "error_types": {"rope_frequencies": [], "rope": ["IndexError"]},  # validates nothing
    "variants": {
        "layouts": {
            "interleaved": "torchtune.modules.RotaryPositionalEmbeddings, Llama3ScaledRoPE",
            "half": "torchtune.models.qwen2.Qwen2RotaryPositionalEmbeddings (also Phi3's)",
        },
        "scaling_types": {"llama3": "torchtune.models.llama3_1.Llama3ScaledRoPE"},
        "t5_bucket": {"bidirectional": "T5 encoder only (no causal table)"},
    },
    "apply_layouts": ["[batch, seq, heads, dim]"],
    "new_calls": {
        "rope_from_base": "rope_from_base(x, positions, *, dim, base, scaling, layout) -> like x: the "
        "library builds its own frequencies (RotaryPositionalEmbeddings, Llama3ScaledRoPE)",
    },
}


class TorchtuneAdapter(Adapter):
    """torchtune ``RotaryPositionalEmbeddings``, ``Llama3ScaledRoPE``, Qwen2's RoPE, T5 buckets."""

    name = "torchtune"
    capabilities = Capabilities(
        functions=("rope_frequencies", "rope_cos_sin", "rope", "t5_bucket"),
        dtypes=("float32",),
        phase="product",  # float32(m) * theta32: the cache is built by a float32 product
        error_types={"rope": ["IndexError"]},  # a position past max_seq_len indexes past the cache
        scaling_types=("default", "llama3"),
        notes={
            "rope_frequencies": "theta of RotaryPositionalEmbeddings / Llama3ScaledRoPE (float32)",
            "rope_cos_sin": "cache of RotaryPositionalEmbeddings (interleaved) / Qwen2's (half); "
            "default inv_freq only (rebuilt from the base)",
            "rope": "forward(x as [b, s, 1, d], input_pos); default inv_freq only; no attention factor",
            "t5_bucket": "T5 encoder relative_position_to_bucket table; bidirectional, |r| < 4096",
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
            params = dict(scaling or {})
            module = self._module(
                "llama3",
                dim,
                base,
                scale_factor=params["factor"],
                low_freq_factor=params["low_freq_factor"],
                high_freq_factor=params["high_freq_factor"],
                old_context_len=params["original_max_position_embeddings"],
            )
            return module.theta, 1.0
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
        data = np.asarray(x)
        dim = 2 * np.size(inv_freq)
        if data.shape[-1] != dim:
            msg = f"torchtune rotates the whole head dim ({data.shape[-1]}), not the first {dim} channels"
            raise Unsupported(msg)
        module = self._module(layout, dim, base, positions)
        seq = data.shape[-2]
        tensor = self.torch.from_numpy(np.ascontiguousarray(data)).reshape(-1, seq, 1, dim)
        input_pos = self.torch.from_numpy(np.asarray(positions, dtype=np.int64).reshape(seq))
        return module(tensor, input_pos=input_pos).reshape(data.shape)

    # --- T5 -----------------------------------------------------------------------------------------

    def t5_bucket(self, relative: Any, *, bidirectional: bool, num_buckets: int, max_distance: int) -> Any:
        if not bidirectional:
            msg = "torchtune has the T5 encoder's (bidirectional) buckets only"
            raise Unsupported(msg)
        rel = np.asarray(relative)
        if not np.issubdtype(rel.dtype, np.integer):
            msg = "torchtune builds its table from integer positions; it takes no relative array to check"
            raise Unsupported(msg)
        span = int(np.max(np.abs(rel))) + 1 if rel.size else 1
        if span > _T5_MAX_TABLE:
            msg = f"torchtune's T5 table is [max_seq_len, max_seq_len]; |relative| {span - 1} is too far"
            raise Unsupported(msg)
        encoder = self._t5_encoder(
            embed_dim=1,
            mlp_dim=1,
            num_heads=1,
            head_dim=1,
            num_layers=1,
            rel_pos_num_buckets=num_buckets,
            rel_pos_max_dist=max_distance,
            vocab_size=1,
            norm_eps=1e-6,
            max_seq_len=span,
        )
        table = encoder.relative_position_bias.relative_position_to_bucket.numpy()
        return np.where(rel >= 0, table[0, np.maximum(rel, 0)], table[np.maximum(-rel, 0), 0])


def _no_attention_factor(attention_factor: float) -> None:
    if attention_factor != 1.0:
        msg = "torchtune's RoPE modules have no attention factor"
        raise Unsupported(msg)


ADAPTER = TorchtuneAdapter

#: The variants of this built-in adapter (``posenc-ref check torchtune``).
ADAPTERS: dict[str, type[Adapter]] = {"default": TorchtuneAdapter}
