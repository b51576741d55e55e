"""Built-in adapter for keras-hub's position layers, Keras 3 on the torch backend.

Run::

    scripts/matrix/setup_keras_hub.sh /work/venvs/keras    # keras 3.15.1, keras-hub 0.32.0
    KERAS_BACKEND=torch posenc-ref check keras_hub

(``KERAS_BACKEND`` defaults to ``torch`` here when unset.)  Coverage (canonical
function -> keras-hub):

* ``sinusoidal`` (``convention="vaswani"``, option ``base``):
  ``keras_hub.layers.SinePositionEncoding(max_wavelength=base, dtype=dtype)`` called
  on zeros of shape ``[batch, seq, dim]`` with ``positions=``; it returns the
  encoding itself (to be added by the caller), interleaved ``[sin, cos, ...]``
  with ``base**(-2(j//2)/dim)``.
* ``learned`` (offset ``plain``): ``keras_hub.layers.PositionEmbedding(
  sequence_length=rows, initializer=keras.initializers.Constant(table))`` called
  with ``positions=`` (``ops.take`` of its weight).
* ``rope`` (layout ``half``, float32): ``keras_hub.layers.RotaryEmbedding(
  max_wavelength=base)`` called on ``x`` as ``[batch, seq, dim]`` with
  ``positions=``; ``base`` is recovered from a default ``inv_freq`` (the layer
  builds its own frequencies), anything else is skipped.
* ``rope_from_base`` (half, float32): ``RotaryEmbedding(max_wavelength=base,
  rope_type=..., scaling_factor=factor, beta_fast, beta_slow,
  original_max_position_embeddings, truncate)``, which builds its own (scaled)
  frequencies: ``default``, ``linear``, ``dynamic`` and ``yarn`` (its attention
  factor ``0.1 ln(factor) + 1`` is computed inside).
* ``rope_heads`` (``bshd``, ``bhsd``): ``RotaryEmbedding(sequence_axis=1 | 2,
  feature_axis=-1)`` called on ``x`` with ``positions [batch, seq]``.
* ``alibi_slopes`` / ``alibi_bias`` / ``alibi_bias_from_heads`` (form ``causal``):
  ``keras_hub.layers.AlibiBias(alibi_bias_max=max_bias)`` added to zero scores
  ``[1, H, Lq, Lk]``: it returns ``m_h (k - Lk + 1)`` for key index ``k``, the
  row-identical causal form with the layer's own slopes (it takes no slopes and no
  query positions).  ``alibi_slopes`` reads them from the same call at ``Lk = 2``,
  ``k = 0``: ``-bias``.

Convention differences bridged by glue (format only): NumPy <-> Keras tensors;
positions of any shape viewed as ``[batch, seq]`` and back; ``x[..., S, D]``
viewed as ``[batch, S, D]``; the layer's ``dtype`` is the run's dtype; a bias
read as a slope by its sign (``AlibiBias`` at ``Lk = 2``).  ``alibi_bias``
checks that the case's slopes are the layer's own (else skipped); ALiBi keys
must be contiguous (the layer numbers them ``0 .. Lk-1``; a key offset only
shifts every row by a constant, which the causal comparison ignores).
``RotaryEmbedding`` rotates the whole feature axis (no partial rotary) and has
no attention-factor argument.

Precision class: ``RotaryEmbedding`` forms positions and inverse frequencies in
float32 whatever its dtype (``ops.cast(positions, "float32")``,
``ops.power(float32(base), ...)``): the phase is a float32 product, so its
functions are declared float32.  ``SinePositionEncoding`` computes in the layer's
dtype (phase: a product in that dtype).

Not expressible yet: ``RotaryEmbedding(denominator_dim=...)`` (frequencies
``b**(-2i/denominator_dim)`` over a narrower rotated width, Gemma's partial
rotary) needs a rotated width apart from the frequency denominator, which
``rope_from_base`` has only for ``proportional`` scaling (with HF's ``factor``).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from ..compare import as_numpy
from ._glue import check_layout, contiguous_offset, require_default_base, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTER", "KerasHubAdapter"]

_SCALING_OPTIONS = {
    "linear": ("factor",),
    "dynamic": ("factor",),
    "yarn": ("factor", "beta_fast", "beta_slow", "original_max_position_embeddings", "truncate"),
}


class KerasHubAdapter(Adapter):
    """keras-hub ``SinePositionEncoding``, ``PositionEmbedding``, ``RotaryEmbedding``, ``AlibiBias``."""

    name = "keras_hub"
    capabilities = Capabilities(
        functions=(
            "sinusoidal",
            "learned",
            "rope",
            "rope_from_base",
            "rope_heads",
            "alibi_slopes",
            "alibi_bias",
            "alibi_bias_from_heads",
        ),
        # RotaryEmbedding casts positions and frequencies to float32 whatever its dtype
        dtypes={
            "default": ["float64", "float32"],
            "rope": ["float32"],
            "rope_from_base": ["float32"],
            "rope_heads": ["float32"],
        },
        phase="product",  # positions cast to the layer dtype, angle = position * frequency
        error_types={"learned": ["IndexError"]},  # torch take past the table
        layouts=("half",),
        head_layouts=("bhsd", "bshd"),  # sequence_axis 2 or 1, feature_axis -1
        scaling_types=("default", "linear", "dynamic", "yarn"),  # RotaryEmbedding's rope_type
        alibi_forms=("causal",),
        sinusoidal_conventions=("vaswani",),
        learned_offsets=("plain",),
        notes={
            "sinusoidal": "SinePositionEncoding(max_wavelength=base)(zeros, positions=...)",
            "learned": "PositionEmbedding(initializer=Constant(table))(zeros, positions=...)",
            "rope": "RotaryEmbedding(max_wavelength=base)(x, positions=...); default inv_freq, float32",
            "alibi_slopes": "-AlibiBias(alibi_bias_max)(zeros[1, H, 1, 2])[0, :, 0, 0]",
            "alibi_bias": "AlibiBias(zeros[1, H, Lq, Lk]): causal row form, its own slopes",
            "alibi_bias_from_heads": "AlibiBias(alibi_bias_max)(zeros[1, H, Lq, Lk]): causal row form",
            "rope_from_base": "RotaryEmbedding(max_wavelength, rope_type, scaling_factor, ...); float32",
            "rope_heads": "RotaryEmbedding(sequence_axis=1 | 2)(x, positions [B, S]); default inv_freq",
        },
    )

    def __init__(self) -> None:
        os.environ.setdefault("KERAS_BACKEND", "torch")
        try:
            import keras
            import keras_hub
        except ImportError as exc:
            from . import AdapterError

            msg = f"adapter keras_hub needs keras and keras-hub (scripts/matrix/setup_keras_hub.sh): {exc}"
            raise AdapterError(msg) from exc
        self.keras, self.layers = keras, keras_hub.layers

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {
            "name": self.name,
            "keras-hub": version("keras-hub"),
            "keras": version("keras"),
            "backend": self.keras.backend.backend(),
        }

    def _tensor(self, a: Any, dtype: str | None = None) -> Any:
        array = np.asarray(a) if dtype is None else np.asarray(a, dtype=dtype)
        return self.keras.ops.convert_to_tensor(np.ascontiguousarray(array))

    # --- absolute ----------------------------------------------------------------------------------

    def sinusoidal(
        self, positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str
    ) -> Any:
        if convention != "vaswani":
            msg = f"keras-hub's SinePositionEncoding has no {convention!r} convention"
            raise Unsupported(msg)
        extra = sorted(set(options) - {"base"})
        if extra:
            msg = f"SinePositionEncoding has no option {extra} (only max_wavelength = base)"
            raise Unsupported(msg)
        if dim < 1:
            msg = "SinePositionEncoding has no dim argument to reject: its width is its input's last axis"
            raise Unsupported(msg)
        pos = _integer_positions(positions)
        rows = pos.reshape(-1, pos.shape[-1]) if pos.ndim else pos.reshape(1, 1)
        layer = self.layers.SinePositionEncoding(max_wavelength=options.get("base", 10000.0), dtype=dtype)
        zeros = self._tensor(np.zeros((*rows.shape, dim), dtype=dtype))
        out = layer(zeros, positions=self._tensor(rows))
        return self.keras.ops.reshape(out, (*pos.shape, dim))

    def learned(self, table: Any, positions: Any, *, offset: str, padding_idx: int | None) -> Any:
        if offset != "plain" or padding_idx is not None:
            msg = "PositionEmbedding looks rows up as given (no offset, no padding row)"
            raise Unsupported(msg)
        table = np.asarray(table)
        pos = _integer_positions(positions)
        rows = pos.reshape(-1, pos.shape[-1]) if pos.ndim else pos.reshape(1, 1)
        layer = self.layers.PositionEmbedding(
            sequence_length=table.shape[0],
            initializer=self.keras.initializers.Constant(table),
            dtype=table.dtype.name,
        )
        zeros = self._tensor(np.zeros((*rows.shape, table.shape[1]), dtype=table.dtype))
        out = layer(zeros, positions=self._tensor(rows))
        return self.keras.ops.reshape(out, (*pos.shape, table.shape[1]))

    # --- RoPE ----------------------------------------------------------------------------------------

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        check_layout(layout, ("half",), "keras-hub RotaryEmbedding")
        if attention_factor != 1.0:
            msg = "RotaryEmbedding has no attention factor argument (YaRN's is computed inside)"
            raise Unsupported(msg)
        base = require_default_base(inv_freq, "keras-hub RotaryEmbedding")
        return self._rotate(x, positions, dim=2 * np.size(inv_freq), max_wavelength=base)

    def _rotate(self, x: Any, positions: Any, *, dim: int, **options: Any) -> Any:
        data = np.asarray(x)
        if data.dtype != np.float32:
            msg = "RotaryEmbedding forms positions and frequencies in float32 whatever its dtype"
            raise Unsupported(msg)
        if data.shape[-1] != dim:
            msg = f"RotaryEmbedding rotates the whole feature axis ({data.shape[-1]}), not {dim} channels"
            raise Unsupported(msg)
        seq = data.shape[-2]
        layer = self.layers.RotaryEmbedding(**options, dtype="float32")
        out = layer(self._tensor(data.reshape(-1, seq, dim)), positions=self._tensor(positions))
        return self.keras.ops.reshape(out, data.shape)

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
        """``RotaryEmbedding(max_wavelength=base, rope_type=..., ...)`` rotating ``x``."""
        check_layout(layout, ("half",), "keras-hub RotaryEmbedding")
        kind, params = scaling_kind(scaling), dict(scaling or {})
        if kind == "default":
            return self._rotate(x, positions, dim=dim, max_wavelength=base)
        if kind not in _SCALING_OPTIONS:
            msg = f"RotaryEmbedding has no {kind!r} rope_type"
            raise Unsupported(msg)
        names = {"factor": "scaling_factor"}
        options = {names.get(k, k): params[k] for k in _SCALING_OPTIONS[kind] if k in params}
        return self._rotate(x, positions, dim=dim, max_wavelength=base, rope_type=kind, **options)

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
        check_layout(layout, ("half",), "keras-hub RotaryEmbedding")
        if head_layout not in ("bhsd", "bshd"):
            msg = f"RotaryEmbedding takes a sequence_axis and a feature_axis; got head_layout {head_layout!r}"
            raise Unsupported(msg)
        if attention_factor != 1.0:
            msg = "RotaryEmbedding has no attention factor argument (YaRN's is computed inside)"
            raise Unsupported(msg)
        base = require_default_base(inv_freq, "keras-hub RotaryEmbedding")
        data = np.asarray(x)
        if data.dtype != np.float32 or data.shape[-1] != 2 * np.size(inv_freq):
            msg = "RotaryEmbedding rotates the whole feature axis, in float32"
            raise Unsupported(msg)
        layer = self.layers.RotaryEmbedding(
            max_wavelength=base, sequence_axis=2 if head_layout == "bhsd" else 1, dtype="float32"
        )
        return layer(self._tensor(data), positions=self._tensor(positions))

    # --- ALiBi ---------------------------------------------------------------------------------------

    def _alibi(self, heads: int, q_len: int, k_len: int, max_bias: float, dtype: str) -> Any:
        layer = self.layers.AlibiBias(alibi_bias_max=max_bias, dtype=dtype)
        return layer(self._tensor(np.zeros((1, heads, q_len, k_len), dtype=dtype)))[0]

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        return -self._alibi(num_heads, 1, 2, max_bias, dtype)[:, 0, 0]

    def alibi_bias(self, q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
        if form != "causal":
            msg = f"AlibiBias builds the causal row form only, not {form!r}"
            raise Unsupported(msg)
        contiguous_offset(k_positions, "AlibiBias (keys 0 .. Lk-1)")
        slopes = np.asarray(slopes)
        dtype = slopes.dtype.name
        own = as_numpy(self.alibi_slopes(slopes.shape[0], max_bias=8.0, dtype=dtype))
        if not np.array_equal(own, slopes):
            msg = "AlibiBias computes its own slopes (alibi_bias_max=8); these differ"
            raise Unsupported(msg)
        return self._alibi(slopes.shape[0], np.size(q_positions), np.size(k_positions), 8.0, dtype)

    def alibi_bias_from_heads(
        self, q_positions: Any, k_positions: Any, *, num_heads: int, max_bias: float, form: str, dtype: str
    ) -> Any:
        if form != "causal":
            msg = f"AlibiBias builds the causal row form only, not {form!r}"
            raise Unsupported(msg)
        q, k = np.asarray(q_positions), np.asarray(k_positions)
        if not np.issubdtype(q.dtype, np.integer):
            msg = "AlibiBias takes no query positions; the positions are the adapter's format"
            raise Unsupported(msg)
        contiguous_offset(k, "AlibiBias (keys 0 .. Lk-1)")
        return self._alibi(num_heads, q.size, k.size, max_bias, dtype)


def _integer_positions(positions: Any) -> np.ndarray:
    pos = np.asarray(positions)
    if not np.issubdtype(pos.dtype, np.integer):
        msg = "keras-hub layers take real-valued positions by design; there is no integer check to run"
        raise Unsupported(msg)
    return pos


ADAPTER = KerasHubAdapter

#: The variants of this built-in adapter (``posenc-ref check keras_hub``).
ADAPTERS: dict[str, type[Adapter]] = {"default": KerasHubAdapter}
