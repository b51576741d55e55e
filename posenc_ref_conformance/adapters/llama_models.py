"""Built-in adapter for Meta's reference Llama code, ``llama-models`` (its RoPE functions).

Run::

    scripts/matrix/setup_llama_models.sh /work/mvenvs/llama_models   # llama-models 0.3.0, fairscale 0.4.13
    posenc-ref check llama_models            # llama_models.llama3.model (Llama 3 / 3.1 / 3.2)
    posenc-ref check llama_models:llama4     # llama_models.llama4.model (Llama 4)

llama-models 0.3.0 has two different copies of the RoPE functions, one per variant:

* ``default``: ``llama_models.llama3.model`` (``llama3.multimodal`` imports the same functions).
  ``apply_scaling(freqs)`` is vectorised (``torch.where``) and hard-codes the Llama 3.1 constants
  ``scale_factor=8, low_freq_factor=1, high_freq_factor=4, old_context_len=8192``;
  ``precompute_freqs_cis(dim, end, theta=10000.0, use_scaled=False)``.
* ``llama4``: ``llama_models.llama4.model``.  ``apply_scaling(freqs, scale_factor,
  high_freq_factor)`` is a Python loop over the frequencies (keep if ``wavelen < high_wl``,
  divide if ``wavelen > low_wl``, else smooth) with ``low_freq_factor=1`` and
  ``old_context_len=8192`` hard-coded; ``precompute_freqs_cis(dim, end, theta, use_scaled,
  scale_factor, high_freq_factor)``.

(The wheel also ships a top-level package ``models`` whose files are identical to
``llama_models``'s: not a separate copy.)  Both copies band exactly like HF's
``_compute_llama3_parameters`` (medium band ``high_wl <= wavelen <= low_wl``, inclusive), in float32.

Coverage (canonical function -> llama-models), the same in both variants:

* ``rope_frequencies``: ``precompute_freqs_cis(dim, 2, base, use_scaled, ...)``, row 1 (position 1,
  where the angle is the frequency itself), read back as ``torch.angle`` of the complex64 entry
  (in float64, then rounded to float32): Meta holds its frequencies only as unit complex numbers,
  so this reading adds up to one float32 ulp.  Scaling ``default``, and ``llama3`` with the
  constants the copy hard-codes (the others, and any other parameter, are Unsupported);
  attention factor 1 (Meta has none).
* ``rope_cos_sin`` (``interleaved``): rows ``p0 .. p0 + n - 1`` of ``precompute_freqs_cis(dim,
  p0 + n, base)``: Meta's table starts at position 0 and a model slices it
  (``freqs_cis[start_pos : start_pos + seqlen]``), so positions are ``consecutive`` (one
  offset per row).  Real and imaginary parts, each repeated per pair (the canonical per-channel
  layout).
* ``apply_rope`` (``interleaved``): ``apply_rotary_emb(x, x, freqs_cis)`` with ``freqs_cis =
  torch.complex(cos, sin)`` of one channel per pair (pairs whose two channels differ are
  Unsupported); its modulus carries an attention factor.
* ``rope``: ``apply_rotary_emb`` with the rows of ``precompute_freqs_cis`` as in ``rope_cos_sin``.
* ``rope_heads`` (``bshd``: Meta's own ``[bsz, seqlen, n_heads, head_dim]``): the same, one call
  for the batch when its rows share an offset, else one call per sequence (Meta's
  ``Transformer.forward`` takes one ``start_pos`` per batch).
* ``rope_from_base``: ``precompute_freqs_cis`` from the base (``use_scaled`` for ``llama3``, as
  ``rope_frequencies``), sliced and applied as in ``rope``.

Glue (format only):

* ``inv_freq`` inputs are exact; Meta builds frequencies from ``theta``.  A default table
  ``b**(-2i/d)`` is recognised and ``theta = b`` is passed; any other table is Unsupported
  (``rope_from_base`` checks the scaled ones).
* ``x[..., S, D]`` is viewed as ``[b, S, 1, D]`` (leading axes flattened) and back;
  ``apply_rotary_emb`` rotates the whole head dim (no partial rotary: Unsupported).
* Meta precomputes the whole table from position 0 (``end x dim/2`` complex64): tables over 2 GiB
  are Unsupported (``2**24`` positions at ``d = 128`` would be 8 GiB).
* No attention factor argument anywhere: a factor other than 1 is Unsupported, except in
  ``apply_rope`` where it is part of the given ``cos``/``sin``.

Precision class: everything is float32.  ``t = torch.arange(end, dtype=float32)`` (positions above
2**24 rounded to float32), ``torch.outer(t, freqs)`` (a float32 product: ``"product"``), then
``torch.polar`` in float32; ``apply_rotary_emb`` computes in float32 (``xq.float()``) whatever the
input dtype, so float64 is not declared.
"""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

import numpy as np

from ._glue import check_layout, contiguous_offset, require_default_base, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTERS", "Llama3Adapter", "Llama4Adapter"]

_MAX_TABLE_BYTES = 2**31  # the complex64 table precompute_freqs_cis builds from position 0
_LLAMA3_KEYS = {"factor", "low_freq_factor", "high_freq_factor", "original_max_position_embeddings"}
_TYPE_KEYS = {"rope_type", "type"}

_NOTES = {
    "rope_frequencies": "angle of row 1 of precompute_freqs_cis(dim, 2, base, use_scaled) (float32, up to "
    "1 ulp from reading the complex64 back); llama3 only with the constants this copy hard-codes",
    "rope_cos_sin": "precompute_freqs_cis(dim, p0 + n, base)[p0 : p0 + n] (interleaved); default inv_freq "
    "only (rebuilt from the base); consecutive positions; no attention factor",
    "apply_rope": "apply_rotary_emb(x [b, S, 1, D], x, torch.complex(cos, sin) per pair); whole head dim",
    "rope": "apply_rotary_emb with precompute_freqs_cis(dim, p0 + S, base)[p0:]; default inv_freq only; "
    "no attention factor; whole head dim",
    "rope_heads": "apply_rotary_emb(x [b, s, n_h, h_d], ...): one call per distinct offset; default "
    "inv_freq only",
    "rope_from_base": "precompute_freqs_cis from the base (use_scaled for llama3) + apply_rotary_emb; "
    "whole head dim",
}


class LlamaModelsAdapter(Adapter):
    """Meta's ``precompute_freqs_cis`` / ``apply_scaling`` / ``apply_rotary_emb`` of one package."""

    name = "llama_models"
    package = "llama_models.llama3.model"
    capabilities = Capabilities(
        functions=("rope_frequencies", "rope_cos_sin", "apply_rope", "rope", "rope_heads", "rope_from_base"),
        dtypes=("float32",),  # torch.arange(...).float(), torch.polar in float32, xq.float()
        phase="product",  # torch.outer(arange(end, float32), freqs): a float32 product
        positions={"default": "consecutive", "rope_frequencies": "any", "apply_rope": "any"},
        layouts=("interleaved",),  # view_as_complex on pairs (2i, 2i + 1)
        head_layouts=("bshd",),  # apply_rotary_emb takes xq [bsz, seqlen, n_heads, head_dim]
        scaling_types=("default", "llama3"),
        notes=_NOTES,
    )

    def __init__(self) -> None:
        try:
            import torch

            self.model = importlib.import_module(self.package)
        except ImportError as exc:
            from . import AdapterError

            msg = f"adapter {self.name} needs llama-models (scripts/matrix/setup_llama_models.sh): {exc}"
            raise AdapterError(msg) from exc
        self.torch = torch

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "module": self.package,
            "llama-models": version("llama-models"),
            "fairscale": version("fairscale"),
            "torch": self.torch.__version__,
        }

    # --- the library's calls (one place per variant) -------------------------------------------------

    def _scaled(self, scaling: dict[str, Any] | None) -> tuple[Any, ...]:
        """``precompute_freqs_cis``'s arguments after ``theta`` for ``scaling`` (Unsupported if none fit)."""
        raise NotImplementedError

    def _table(self, dim: int, end: int, base: float, scaling: dict[str, Any] | None) -> Any:
        """``precompute_freqs_cis(dim, end, base, ...)``: complex64 ``[end, dim // 2]``, rows 0 .. end - 1."""
        if end * (dim // 2) * 8 > _MAX_TABLE_BYTES:
            msg = (
                f"precompute_freqs_cis builds the whole table from position 0: {end} x {dim // 2} complex64 "
                f"is over {_MAX_TABLE_BYTES // 2**30} GiB"
            )
            raise Unsupported(msg)
        return self.model.precompute_freqs_cis(dim, end, base, *self._scaled(scaling))

    def _rotate(self, x: Any, freqs_cis: Any) -> Any:
        """``apply_rotary_emb(x, x, freqs_cis)[0]``: ``x [b, S, n_h, D]`` (torch), ``freqs_cis [S, D/2]``."""
        return self.model.apply_rotary_emb(x, x, freqs_cis=freqs_cis)[0]

    # --- frequencies ---------------------------------------------------------------------------------

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        row = self._table(dim, 2, base, scaling)[1]  # position 1: the angle is the frequency
        # torch.angle in float64 of the complex64 entries; Meta exposes no real frequency array
        return row.to(self.torch.complex128).angle().to(self.torch.float32), 1.0

    # --- tables and rotation -------------------------------------------------------------------------

    def _rows(self, positions: Any, dim: int, base: float, scaling: dict[str, Any] | None) -> Any:
        """``freqs_cis`` rows at ``positions [..., n]`` (each last-axis row a run): ``[..., n, dim/2]``."""
        positions = np.asarray(positions)
        n = positions.shape[-1] if positions.ndim else 1
        runs = positions.reshape(-1, n)
        offsets = [
            contiguous_offset(run, "precompute_freqs_cis (sliced from a start position)") for run in runs
        ]
        if min(offsets, default=0) < 0:
            msg = "precompute_freqs_cis starts at position 0: a negative start position has no row"
            raise Unsupported(msg)
        table = self._table(dim, max(offsets, default=0) + n, base, scaling)
        rows = self.torch.stack([table[p0 : p0 + n] for p0 in offsets])
        return rows.reshape(*positions.shape, dim // 2)

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        check_layout(layout, ("interleaved",), "llama-models")
        _no_attention_factor(attention_factor)
        base = require_default_base(inv_freq, "llama-models")
        rows = self._rows(positions, 2 * np.size(inv_freq), base, None)
        return rows.real.repeat_interleave(2, dim=-1), rows.imag.repeat_interleave(2, dim=-1)

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        check_layout(layout, ("interleaved",), "llama-models")
        torch = self.torch
        cos, sin, data = np.asarray(cos), np.asarray(sin), np.asarray(x)
        if cos.ndim != 2 or cos.shape != sin.shape or cos.shape[0] != data.shape[-2]:
            msg = "apply_rotary_emb takes one freqs_cis [seqlen, head_dim / 2] for the batch"
            raise Unsupported(msg)
        _whole_head(data, cos.shape[-1])
        if not (np.array_equal(cos[:, 0::2], cos[:, 1::2]) and np.array_equal(sin[:, 0::2], sin[:, 1::2])):
            msg = "freqs_cis holds one complex number per pair: these cos/sin differ within a pair"
            raise Unsupported(msg)
        freqs_cis = torch.complex(
            torch.from_numpy(cos[:, 0::2].copy()), torch.from_numpy(sin[:, 0::2].copy())
        )
        return self._rotate_seq(data, freqs_cis)

    def _rotate_seq(self, data: np.ndarray, freqs_cis: Any) -> Any:
        """``x [..., S, D]`` viewed as ``[b, S, 1, D]``, rotated by ``freqs_cis [S, D/2]``, viewed back."""
        seq, width = data.shape[-2], data.shape[-1]
        tensor = self.torch.from_numpy(np.ascontiguousarray(data)).reshape(-1, seq, 1, width)
        return self._rotate(tensor, freqs_cis).reshape(data.shape)

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        check_layout(layout, ("interleaved",), "llama-models")
        _no_attention_factor(attention_factor)
        base = require_default_base(inv_freq, "llama-models")
        data, dim = np.asarray(x), 2 * np.size(inv_freq)
        _whole_head(data, dim)
        return self._rotate_seq(data, self._rows(np.asarray(positions).reshape(-1), dim, base, None))

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
        check_layout(layout, ("interleaved",), "llama-models")
        if head_layout != "bshd":
            msg = f"apply_rotary_emb takes xq as [bsz, seqlen, n_heads, head_dim] (bshd); got {head_layout!r}"
            raise Unsupported(msg)
        _no_attention_factor(attention_factor)
        base = require_default_base(inv_freq, "llama-models")
        data, positions, dim = np.asarray(x), np.asarray(positions), 2 * np.size(inv_freq)
        _whole_head(data, dim)
        rows = self._rows(positions, dim, base, None)  # [b, s, dim / 2]
        tensor = self.torch.from_numpy(np.ascontiguousarray(data))
        if all(np.array_equal(p, positions[0]) for p in positions):  # one start_pos for the batch
            return self._rotate(tensor, rows[0])
        return self.torch.cat([self._rotate(tensor[i : i + 1], rows[i]) for i in range(data.shape[0])])

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
        check_layout(layout, ("interleaved",), "llama-models")
        data = np.asarray(x)
        _whole_head(data, dim)
        return self._rotate_seq(data, self._rows(np.asarray(positions).reshape(-1), dim, base, scaling))


class Llama3Adapter(LlamaModelsAdapter):
    """``llama_models.llama3.model``: ``apply_scaling(freqs)`` with Llama 3.1's constants built in."""

    name = "llama_models"
    package = "llama_models.llama3.model"
    #: The constants of llama3/model.py's apply_scaling, as HF rope_parameters.
    CONSTANTS: ClassVar[dict[str, float]] = {
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    }

    def _scaled(self, scaling: dict[str, Any] | None) -> tuple[Any, ...]:
        params = _llama3_or_default(scaling)
        if params is None:
            return (False,)
        differ = sorted(k for k, v in self.CONSTANTS.items() if params[k] != v)
        if differ:
            msg = f"llama3/model.py's apply_scaling hard-codes {self.CONSTANTS}; this case sets {differ}"
            raise Unsupported(msg)
        return (True,)


class Llama4Adapter(LlamaModelsAdapter):
    """``llama_models.llama4.model``: ``apply_scaling(freqs, scale_factor, high_freq_factor)``."""

    name = "llama_models:llama4"
    package = "llama_models.llama4.model"
    #: What llama4/model.py's apply_scaling hard-codes (the rest are arguments).
    CONSTANTS: ClassVar[dict[str, float]] = {"low_freq_factor": 1.0, "original_max_position_embeddings": 8192}

    def _scaled(self, scaling: dict[str, Any] | None) -> tuple[Any, ...]:
        params = _llama3_or_default(scaling)
        if params is None:
            return (False, None, None)  # what llama4 ModelArgs passes when use_scaled_rope is off
        differ = sorted(k for k, v in self.CONSTANTS.items() if params[k] != v)
        if differ:
            msg = f"llama4/model.py's apply_scaling hard-codes {self.CONSTANTS}; this case sets {differ}"
            raise Unsupported(msg)
        return (True, params["factor"], params["high_freq_factor"])


def _llama3_or_default(scaling: dict[str, Any] | None) -> dict[str, Any] | None:
    """The ``llama3`` parameters of ``scaling``, or None for ``default``; Unsupported for anything else."""
    kind = scaling_kind(scaling)
    params = {k: v for k, v in (scaling or {}).items() if k not in _TYPE_KEYS}
    if kind == "default":
        if params:
            msg = f"precompute_freqs_cis takes dim and theta only; this default scaling sets {sorted(params)}"
            raise Unsupported(msg)
        return None
    if kind != "llama3":
        msg = f"llama-models has no {kind!r} RoPE scaling (only Llama 3.1's, use_scaled)"
        raise Unsupported(msg)
    if set(params) != _LLAMA3_KEYS:
        msg = f"llama-models' apply_scaling takes {sorted(_LLAMA3_KEYS)} only; got {sorted(params)}"
        raise Unsupported(msg)
    return params


def _whole_head(data: np.ndarray, dim: int) -> None:
    if data.ndim < 2 or data.shape[-1] != dim:
        msg = f"apply_rotary_emb rotates the whole head dim ({data.shape[-1:]}), not the first {dim} channels"
        raise Unsupported(msg)


def _no_attention_factor(attention_factor: float) -> None:
    if attention_factor != 1.0:
        msg = "llama-models' RoPE has no attention factor"
        raise Unsupported(msg)


ADAPTER = Llama3Adapter

#: The variants of this built-in adapter (``posenc-ref check llama_models[:llama4]``).
ADAPTERS: dict[str, type[Adapter]] = {"default": Llama3Adapter, "llama4": Llama4Adapter}
