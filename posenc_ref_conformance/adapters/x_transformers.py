"""Built-in adapter for lucidrains' ``x-transformers`` (the positional modules of its main module).

Run::

    scripts/matrix/setup_x_transformers.sh /work/mvenvs/x_transformers   # x-transformers 2.31.10
    posenc-ref check x_transformers

Coverage (canonical function -> x-transformers):

* ``rope_frequencies``: the ``inv_freq`` buffer of ``RotaryEmbedding(dim, base=base)``
  (scaling ``default``) or ``RotaryEmbedding(dim, base=base, base_rescale_factor=factor)``
  (scaling ``ntk``: the library multiplies the base by ``factor**(dim/(dim-2))``,
  bloc97's NTK-aware rule, HF's ``ntk``); attention factor 1.  Float32 only
  (``arange(...).float()``).
* ``rope_cos_sin``: ``RotaryEmbedding(2 len(inv_freq))`` with the case's ``inv_freq``
  loaded into its ``inv_freq`` buffer (``load_state_dict``: the buffer is part of
  the module's state dict, as a checkpoint restores it); ``forward(positions)``
  returns the angle table (each frequency repeated for its pair) and the adapter
  returns its ``cos()`` and ``sin()``, exactly what ``apply_rotary_pos_emb`` takes
  of it (``freqs.cos()``, ``freqs.sin()``).
* ``rope``: ``apply_rotary_pos_emb(x, freqs, scale=attention_factor)`` with ``freqs``
  from that module's ``forward(positions)``; partial rotary is native (the first
  ``freqs.shape[-1]`` channels), and ``scale`` (the xPos factor) multiplies cos and
  sin, which is exactly the attention factor.
* ``rope_heads`` (``bhsd``, the library's ``[b, h, n, d]``): the same, with
  ``forward(positions[b, n])`` (its ``[b, n, d]`` table is broadcast over heads).
* ``rope_from_base``: ``RotaryEmbedding(dim, base=base)`` rotating ``x`` with its own
  frequencies; ``linear`` scaling is ``interpolation_factor`` (the angles
  ``position * theta`` divided by ``s``), ``ntk`` is ``base_rescale_factor``.
* ``xpos_scale``: the ``scale`` output of ``RotaryEmbedding(dim, use_xpos=True,
  scale_base=B).forward(positions)``, ``zeta_i**((m - c)/B)`` with ``zeta_i = (2i + 0.4 d)
  / (1.4 d)`` and the centre ``c = (max(positions) + 1) // 2`` (over the whole array);
  keys get ``scale ** -1``, as ``Attention.forward`` gives them.  Only ``gamma = 0.4`` and
  that centre are its own.
* ``alibi_slopes``: the ``slopes`` buffer of ``AlibiPositionalBias(num_heads)`` (the
  paper's slopes, non-power-of-two head counts included); ``max_bias`` 8 only.
* ``alibi_bias`` / ``alibi_bias_from_heads`` (``symmetric``, ``-m |k - q|``):
  ``AlibiPositionalBias(H, slopes=slopes).forward_custom_pos(q_positions, k_positions)``
  and ``AlibiPositionalBias(num_heads).forward_custom_pos(...)``.  Float32 only: the
  slopes are a ``Tensor(list)`` (float32) whatever the module's dtype.
* ``t5_bias``: ``RelativePositionBias(scale=1, causal=not bidirectional,
  num_buckets, max_distance, heads)`` with the case's table loaded into its
  ``relative_attention_bias`` embedding; ``forward(i, j)`` is the bias of queries
  ``arange(j - i, j)`` against keys ``arange(j)``.  It takes lengths, not positions:
  consecutive runs only (``positions: consecutive``); both runs are shifted by the
  smaller start (the bias depends on ``k - q`` only) and the case's block is sliced
  out of the smallest ``forward(i, j)`` holding it (at most 4096 keys).
* ``sinusoidal`` (``marian`` convention, even ``dim``): ``ScaledSinusoidalEmbedding(dim,
  theta=base)(x, pos=positions)``, ``[sin | cos]`` of ``p * theta**(-2k/d)``, which
  is HF Marian's table; its learned ``scale`` parameter (initialised to ``dim**-0.5``)
  is loaded as 1, since the canonical table has no scale.  Float32 only.
* ``learned`` (``plain`` offset, no padding row): ``AbsolutePositionalEmbedding(dim,
  len(table))(x, pos=positions)`` with ``emb.weight`` loaded from the table and its
  ``scale`` attribute (``dim**-0.5``, not a parameter) set to 1.

Layout: ``interleaved`` only.  ``rotate_half`` is, despite its name, the pairs
``(2i, 2i+1)`` (``rearrange('... (d r) -> ... d r', r=2)``), and ``forward`` repeats each
frequency for its pair (``stack((freqs, freqs), -1)``).

Not expressible: ``apply_rope`` (``apply_rotary_pos_emb`` takes the angles, not cos/sin
tables); ``t5_bucket`` (``_relative_position_bucket`` is private; ``t5_bias`` checks it
through the module's forward); ALiBi's ``causal`` form (``+m k``: the library has only
``-m |k - q|``); ``DynamicPositionBias`` (an MLP of the distance: nothing canonical);
``CoPE``, the data-dependent ALiBis, ``RelativeProjPositionalBias`` and ``PolarEmbedding``
(no canonical calls).

Glue (format only): NumPy <-> torch; the module is moved to the run's dtype with
``.to(dtype)`` as a model would be (buffers built in float32 by the library stay rounded
to float32: those functions are declared float32); one fresh module per call (the ALiBi
bias cache never carries a value from one case to another); batched position arrays
are one call per row where the library takes one row (``ScaledSinusoidalEmbedding``,
``RelativePositionBias``); a 2-D ``x`` gets a leading axis for ``apply_rotary_pos_emb``
(whose angle table is ``[1, n, d]``), removed from its output.

Precision class: the phase is the product ``position * theta`` in the module's dtype
(``t.type_as(inv_freq)``: positions rounded to float32 above 2**24 in float32 runs), then
divided by ``interpolation_factor``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._glue import check_layout, contiguous_offset, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "ADAPTERS", "XTransformersAdapter"]

_LIBRARY = "x-transformers"
_SETUP = "scripts/matrix/setup_x_transformers.sh"
_T5_MAX_KEYS = 4096  # forward(i, j) is an [H, i, j] table: quadratic in the span
_ALIBI_MAX_BIAS = 8.0  # AlibiPositionalBias: start = 2**(-8/n), the paper's


def _integer_positions(*arrays: Any, what: str) -> None:
    """:class:`Unsupported` for non-integer positions where the library takes none (only lengths)."""
    for array in arrays:
        if not np.issubdtype(np.asarray(array).dtype, np.integer):
            msg = f"{what} takes lengths, not positions: nothing of the library's could reject floats"
            raise Unsupported(msg)


def _rows(positions: Any) -> np.ndarray:
    """``positions`` as a 2-D ``[rows, n]`` array (a 1-D array is one row)."""
    array = np.asarray(positions)
    return array.reshape(-1, array.shape[-1]) if array.ndim else array.reshape(1, 1)


class XTransformersAdapter(Adapter):
    """lucidrains ``x_transformers.x_transformers`` positional modules."""

    name = "x_transformers"
    capabilities = Capabilities(
        functions=(
            "rope_frequencies",
            "rope_cos_sin",
            "rope",
            "rope_heads",
            "rope_from_base",
            "xpos_scale",
            "alibi_slopes",
            "alibi_bias",
            "alibi_bias_from_heads",
            "t5_bias",
            "sinusoidal",
            "learned",
        ),
        # inv_freq (from a base), zeta, the ALiBi slopes and the sinusoid frequencies are built
        # in float32 by the library; a loaded inv_freq, T5 table or learned table keeps the run's dtype
        dtypes={
            "default": ["float64", "float32"],
            "rope_frequencies": ["float32"],
            "rope_from_base": ["float32"],
            "xpos_scale": ["float32"],
            "alibi_slopes": ["float32"],
            "alibi_bias": ["float32"],
            "alibi_bias_from_heads": ["float32"],
            "sinusoidal": ["float32"],
        },
        phase="product",
        positions={"t5_bias": "consecutive", "default": "any"},
        variants={"ntk": "hf"},  # base_rescale_factor: base * factor**(dim / (dim - 2)), HF's rule
        # AssertionError: interpolation_factor < 1, odd sinusoid dim, sequence past max_seq_len;
        # ZeroDivisionError: base_rescale_factor ** (dim / (dim - 2)); IndexError: nn.Embedding
        # past its table; RuntimeError: load_state_dict of a table of the wrong shape
        error_types={
            "rope_frequencies": ["AssertionError", "ZeroDivisionError"],
            "rope_from_base": ["AssertionError", "ZeroDivisionError"],
            "xpos_scale": ["ZeroDivisionError"],
            "t5_bias": ["RuntimeError", "IndexError"],
            "learned": ["IndexError", "AssertionError"],
        },
        layouts=("interleaved",),
        head_layouts=("bhsd",),
        scaling_types=("default", "linear", "ntk"),  # linear: interpolation_factor, rope_from_base only
        alibi_forms=("symmetric",),
        sinusoidal_conventions=("marian",),
        learned_offsets=("plain",),
        notes={
            "rope_frequencies": "RotaryEmbedding(dim, base, base_rescale_factor).inv_freq; float32 only",
            "rope_cos_sin": "cos/sin of RotaryEmbedding.forward(positions); inv_freq by load_state_dict",
            "rope": "apply_rotary_pos_emb(x, forward(positions), scale=attention_factor)",
            "rope_heads": "apply_rotary_pos_emb(x[b, h, n, d], forward(positions[b, n]))",
            "rope_from_base": "RotaryEmbedding(dim, base, interpolation_factor | base_rescale_factor)",
            "xpos_scale": "forward(positions)[1]: centre (max(positions) + 1) // 2, gamma 0.4 only",
            "alibi_slopes": "AlibiPositionalBias(heads).slopes; max_bias 8 only; float32",
            "alibi_bias": "AlibiPositionalBias(H, slopes).forward_custom_pos(q, k); symmetric only",
            "alibi_bias_from_heads": "AlibiPositionalBias(H).forward_custom_pos(q, k); symmetric, max_bias 8",
            "t5_bias": "RelativePositionBias.forward(i, j) (lengths): shifted block of consecutive runs",
            "sinusoidal": "ScaledSinusoidalEmbedding(dim, theta) = marian, its learned scale loaded as 1",
            "learned": "AbsolutePositionalEmbedding(x, pos=positions), emb.weight = table, scale set to 1",
        },
    )

    def __init__(self) -> None:
        try:
            import torch
            from x_transformers import x_transformers as xt
        except ImportError as exc:
            from . import AdapterError

            msg = f"adapter x_transformers needs x-transformers ({_SETUP}): {exc}"
            raise AdapterError(msg) from exc
        self.torch, self.xt = torch, xt

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "x-transformers": version("x-transformers"),
            "torch": self.torch.__version__,
        }

    # --- helpers (format only) -------------------------------------------------------------------

    def _dtype(self, dtype: str) -> Any:
        return {"float64": self.torch.float64, "float32": self.torch.float32}[dtype]

    def _tensor(self, array: Any, dtype: Any = None) -> Any:
        data = self.torch.from_numpy(np.ascontiguousarray(array))
        return data if dtype is None else data.to(dtype)

    def _custom_rotary(self, inv_freq: Any, dtype: str) -> Any:
        """``RotaryEmbedding(2 len(inv_freq))`` in ``dtype``, its ``inv_freq`` buffer loaded from the case."""
        freqs = self._tensor(np.asarray(inv_freq, dtype=np.float64).reshape(-1), self._dtype(dtype))
        module = self.xt.RotaryEmbedding(2 * freqs.shape[0]).to(self._dtype(dtype))
        module.load_state_dict({"inv_freq": freqs})
        return module

    def _rotate(self, module: Any, x: Any, positions: Any, scale: float = 1.0) -> Any:
        """``apply_rotary_pos_emb(x, module(positions))``; a 2-D ``x`` is given a leading axis."""
        data = self._tensor(x)
        freqs, _ = module(self._tensor(np.asarray(positions, dtype=np.int64)))
        if data.ndim >= 3:
            return self.xt.apply_rotary_pos_emb(data, freqs, scale)
        return self.xt.apply_rotary_pos_emb(data[None], freqs, scale)[0]

    # --- RoPE ----------------------------------------------------------------------------------------

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        if dtype != "float32":
            msg = "RotaryEmbedding builds inv_freq in float32 (arange(...).float())"
            raise Unsupported(msg)
        kind = scaling_kind(scaling)
        if kind == "default":
            module = self.xt.RotaryEmbedding(dim, base=base)
        elif kind == "ntk":
            module = self.xt.RotaryEmbedding(
                dim, base=base, base_rescale_factor=(scaling or {}).get("factor")
            )
        elif kind == "linear":  # interpolation_factor divides the angles, never the frequencies
            msg = f"{_LIBRARY}'s linear scaling (interpolation_factor) divides the angles, not inv_freq"
            raise Unsupported(msg)
        else:
            msg = f"{_LIBRARY} has no {kind!r} scaling"
            raise Unsupported(msg)
        return module.inv_freq, 1.0

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        check_layout(layout, ("interleaved",), _LIBRARY)
        if attention_factor != 1.0:
            msg = "RotaryEmbedding's angle table has no attention factor (apply_rotary_pos_emb's scale does)"
            raise Unsupported(msg)
        module = self._custom_rotary(inv_freq, dtype)
        freqs, _ = module(self._tensor(np.asarray(positions, dtype=np.int64)))
        freqs = freqs.reshape(*np.shape(positions), freqs.shape[-1])  # forward adds a batch axis to 1-D input
        return freqs.cos(), freqs.sin()

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        check_layout(layout, ("interleaved",), _LIBRARY)
        module = self._custom_rotary(inv_freq, str(np.asarray(x).dtype))
        return self._rotate(module, x, positions, attention_factor)

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
        check_layout(layout, ("interleaved",), _LIBRARY)
        if head_layout != "bhsd":
            msg = f"apply_rotary_pos_emb takes [b, h, n, d] (the sequence on axis -2); got {head_layout!r}"
            raise Unsupported(msg)
        module = self._custom_rotary(inv_freq, str(np.asarray(x).dtype))
        return self._rotate(module, x, positions, attention_factor)

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
        check_layout(layout, ("interleaved",), _LIBRARY)
        kind, params = scaling_kind(scaling), dict(scaling or {})
        options = {
            "default": {},
            "linear": {"interpolation_factor": params.get("factor")},
            "ntk": {"base_rescale_factor": params.get("factor")},
        }
        if kind not in options:
            msg = f"{_LIBRARY} has no {kind!r} scaling"
            raise Unsupported(msg)
        module = self.xt.RotaryEmbedding(dim, base=base, **options[kind]).to(self._tensor(x).dtype)
        return self._rotate(module, x, positions)

    def xpos_scale(
        self,
        positions: Any,
        dim: int,
        *,
        scale_base: float,
        gamma: float,
        offset: int,
        layout: str,
        dtype: str,
    ) -> tuple[Any, Any]:
        """``(q_scale, k_scale)``: ``RotaryEmbedding(dim, use_xpos=True)(positions)[1]`` and its inverse."""
        check_layout(layout, ("interleaved",), _LIBRARY)
        array = np.asarray(positions, dtype=np.int64)
        if gamma != 0.4:
            msg = f"{_LIBRARY} fixes xPos gamma at 0.4"
            raise Unsupported(msg)
        centre = (int(array.max()) + 1) // 2 if array.size else 0
        if offset != centre:
            msg = f"{_LIBRARY} centres xPos at (max(positions) + 1) // 2 = {centre}"
            raise Unsupported(msg)
        module = self.xt.RotaryEmbedding(dim, use_xpos=True, scale_base=scale_base).to(self._dtype(dtype))
        _, scale = module(self._tensor(array))
        scale = scale.reshape(*array.shape, scale.shape[-1])
        return scale, scale**-1.0  # Attention.forward: k_xpos_scale = xpos_scale ** -1.

    # --- ALiBi ---------------------------------------------------------------------------------------

    @staticmethod
    def _check_form(form: str) -> None:
        if form != "symmetric":
            msg = f"AlibiPositionalBias takes no form argument: its bias is -m|k - q| only (got {form!r})"
            raise Unsupported(msg)

    @staticmethod
    def _check_max_bias(max_bias: float) -> None:
        if max_bias != _ALIBI_MAX_BIAS:
            msg = f"AlibiPositionalBias fixes max_bias at 8 (slopes 2**(-8k/n)); got {max_bias!r}"
            raise Unsupported(msg)

    def _alibi(self, module: Any, q_positions: Any, k_positions: Any) -> Any:
        return module.forward_custom_pos(self._tensor(q_positions), self._tensor(k_positions))

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        self._check_max_bias(max_bias)
        return self.xt.AlibiPositionalBias(num_heads).to(self._dtype(dtype)).slopes.reshape(-1)

    def alibi_bias(self, q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
        self._check_form(form)
        values = np.asarray(slopes).reshape(-1)
        module = self.xt.AlibiPositionalBias(values.size, slopes=values.tolist())
        return self._alibi(module.to(self._tensor(values).dtype), q_positions, k_positions)

    def alibi_bias_from_heads(
        self, q_positions: Any, k_positions: Any, *, num_heads: int, max_bias: float, form: str, dtype: str
    ) -> Any:
        self._check_form(form)
        self._check_max_bias(max_bias)
        module = self.xt.AlibiPositionalBias(num_heads).to(self._dtype(dtype))
        return self._alibi(module, q_positions, k_positions)

    # --- T5 ------------------------------------------------------------------------------------------

    def _t5_block(self, module: Any, q_row: np.ndarray, k_row: np.ndarray) -> Any:
        """The ``[H, Lq, Lk]`` block of ``module.forward(i, j)`` for consecutive runs ``q_row``, ``k_row``."""
        q0 = contiguous_offset(q_row, "RelativePositionBias.forward(i, j)")
        k0 = contiguous_offset(k_row, "RelativePositionBias.forward(i, j)")
        start = min(q0, k0)  # forward's keys start at 0: shift both runs (the bias is of k - q)
        q_rel, k_rel = q0 - start, k0 - start
        span = max(k_rel + k_row.size, q_rel + q_row.size)
        if span > _T5_MAX_KEYS:
            msg = f"the case spans {span} keys; forward(i, j) builds [H, i, j] (at most {_T5_MAX_KEYS} keys)"
            raise Unsupported(msg)
        bias = module(span - q_rel, span)  # queries arange(q_rel, span), keys arange(span)
        return bias[:, : q_row.size, k_rel : k_rel + k_row.size]

    def t5_bias(
        self, q_positions: Any, k_positions: Any, table: Any, *, bidirectional: bool, max_distance: int
    ) -> Any:
        _integer_positions(q_positions, k_positions, what="RelativePositionBias.forward(i, j)")
        weight = self._tensor(table)
        # the constructor takes the table's first two sizes; load_state_dict rejects any other shape
        buckets, heads = (*weight.shape, 1, 1)[:2]
        module = self.xt.RelativePositionBias(
            scale=1.0, causal=not bidirectional, num_buckets=buckets, max_distance=max_distance, heads=heads
        ).to(weight.dtype)
        module.load_state_dict({"relative_attention_bias.weight": weight})
        q_rows, k_rows = _rows(q_positions), _rows(k_positions)
        if q_rows.shape[0] != k_rows.shape[0]:
            msg = "RelativePositionBias.forward(i, j) is one row of queries against one row of keys"
            raise Unsupported(msg)
        blocks = [self._t5_block(module, q, k) for q, k in zip(q_rows, k_rows, strict=True)]
        lead = np.shape(q_positions)[:-1]
        return self.torch.stack(blocks).reshape(*lead, *blocks[0].shape)

    # --- absolute ------------------------------------------------------------------------------------

    def sinusoidal(
        self, positions: Any, dim: int, *, convention: str, options: dict[str, Any] | None, dtype: str
    ) -> Any:
        if convention != "marian":
            msg = f"ScaledSinusoidalEmbedding is the 'marian' table only; got {convention!r}"
            raise Unsupported(msg)
        options = dict(options or {})
        if set(options) - {"base"}:
            msg = f"ScaledSinusoidalEmbedding takes theta only; got options {sorted(options)}"
            raise Unsupported(msg)
        if isinstance(dim, int) and dim > 0 and dim % 2:
            msg = f"ScaledSinusoidalEmbedding asserts an even dim; got {dim}"
            raise Unsupported(msg)
        module = self.xt.ScaledSinusoidalEmbedding(dim, theta=options.get("base", 10000.0))
        module = module.to(self._dtype(dtype))
        module.load_state_dict({"scale": self.torch.ones(1, dtype=self._dtype(dtype))})  # the learned scale
        rows = _rows(positions)
        dummy = self.torch.empty(1, rows.shape[-1], 0)  # forward reads only x.shape[1] and x.device
        tables = [module(dummy, pos=self._tensor(row)) for row in rows]
        return self.torch.stack(tables).reshape(*np.shape(positions), dim)

    def learned(self, table: Any, positions: Any, *, offset: str, padding_idx: int | None) -> Any:
        if offset != "plain" or padding_idx is not None:
            msg = f"AbsolutePositionalEmbedding has no offset or padding row: {offset!r}, {padding_idx!r}"
            raise Unsupported(msg)
        weight = self._tensor(table)
        module = self.xt.AbsolutePositionalEmbedding(weight.shape[1], weight.shape[0]).to(weight.dtype)
        module.load_state_dict({"emb.weight": weight})
        module.scale = 1.0  # a plain attribute (dim**-0.5); the canonical rows are unscaled
        array = np.asarray(positions, dtype=np.int64)
        pos = self._tensor(array.reshape(1, -1) if array.ndim < 2 else array)
        dummy = self.torch.empty(1, pos.shape[-1], 0)  # forward asserts x.shape[1] <= max_seq_len
        return module(dummy, pos=pos).reshape(*array.shape, weight.shape[1])


ADAPTER = XTransformersAdapter

#: The variants of this built-in adapter (``posenc-ref check x_transformers``).
ADAPTERS: dict[str, type[Adapter]] = {"default": XTransformersAdapter}
