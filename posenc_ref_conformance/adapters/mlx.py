"""Built-in adapter ``mlx``: MLX's own layers, honestly mapped.

* ``sinusoidal`` (``convention="mlx"`` only): ``mlx.nn.SinusoidalPositionalEncoding``
  applied to the positions (it encodes values: ``pe(positions)``), float32.
* ``rope``: ``mx.fast.rope(..., freqs=1/inv_freq)`` (the given frequencies, as
  periods).  It takes a scalar ``offset``, so positions must be contiguous; an
  attention factor other than 1 is applied by scaling the rotated channels of
  ``x`` first, as mlx-lm does (MLX itself has no such argument).
* ``rope_heads`` (``bhsd`` only: ``mx.fast.rope`` wants ``[B, *, T, D]``): the same
  call with ``offset`` a vector of one offset per batch row (each row's positions
  contiguous).
* ``rope_from_base``: ``nn.RoPE(dims, traditional=..., base=base, scale=1/factor)``,
  which derives its own frequencies in float32; ``scale`` multiplies the
  positions, so ``linear`` scaling is ``scale = 1/factor``.
* ``alibi_slopes``: ``nn.ALiBi.create_alibi_slope`` (``max_bias`` 8 only).
* ``alibi_bias`` and ``alibi_bias_from_heads``: ``nn.ALiBi()(scores, offset)`` on
  zero scores: keys ``0..Lk-1``, queries ``offset..``, MLX's own slopes, the
  symmetric ``-m|i - j|`` form.  The symmetric matrix is also offered for
  ``causal`` cases: it equals the causal form on ``k <= q`` up to a per-row
  constant, which is all a causal mask keeps.

Everything is float32 (MLX's layers compute in float32; Metal has no float64);
angles are float32 products ``m * theta`` (``"product"``).  Every capability MLX
has is declared.

``docs/examples/mlx_adapter.py`` is the teaching version of this adapter: it
declares the same capabilities for the functions it maps and gets the same
verdicts on them (a test asserts it), but applies the attention factor to the
output, where this adapter scales ``x`` first as mlx-lm does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._glue import check_layout, contiguous_offset, scaling_kind
from .base import Adapter, Capabilities, Unsupported

__all__ = ["MlxAdapter"]


class MlxAdapter(Adapter):
    """MLX core layers (``mlx.core.fast``, ``mlx.nn``)."""

    name = "mlx"
    capabilities = Capabilities(
        phase="product",  # float32 on MLX: the angle is the float32 product of position and frequency
        functions=(
            "sinusoidal",
            "rope",
            "rope_heads",
            "rope_from_base",
            "alibi_slopes",
            "alibi_bias",
            "alibi_bias_from_heads",
        ),
        dtypes=("float32",),
        sinusoidal_conventions=("mlx",),
        head_layouts=("bhsd",),  # mx.fast.rope: [B, *, T, D], one offset per batch row
        scaling_types=("default", "linear"),  # nn.RoPE's scale multiplies positions
        notes={
            "rope": "nn.RoPE / mx.fast.rope: contiguous positions only; attention factor applied to x "
            "(mlx-lm glue)",
            "alibi_bias": "nn.ALiBi: symmetric only, keys from 0, its own slopes; used for causal cases too",
            "sinusoidal": "nn.SinusoidalPositionalEncoding on the positions; only the 'mlx' convention",
            "rope_heads": "mx.fast.rope(x [B, H, S, D], offset=array of B offsets, freqs=periods)",
            "rope_from_base": "nn.RoPE(dims, traditional, base, scale=1/factor); contiguous positions",
            "alibi_bias_from_heads": "nn.ALiBi on zero scores: symmetric, its own slopes, max_bias 8",
        },
    )

    def __init__(self) -> None:
        import mlx.core as mx
        import mlx.nn as nn

        self.mx, self.nn = mx, nn

    def describe(self) -> dict[str, Any]:
        from importlib.metadata import version

        return {"name": self.name, "mlx": version("mlx"), "device": str(self.mx.default_device())}

    def sinusoidal(
        self, positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str
    ) -> Any:
        if convention != "mlx":
            msg = f"MLX has no {convention!r} sinusoidal table"
            raise Unsupported(msg)
        layer = self.nn.SinusoidalPositionalEncoding(dim, **options)
        return layer(self.mx.array(np.asarray(positions)))

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        check_layout(layout, ("half", "interleaved"), "MLX")
        offset = contiguous_offset(positions, "MLX rope")
        data = np.asarray(x)
        array = self.mx.array(data)
        if array.ndim < 3:
            array = array.reshape((1,) * (3 - array.ndim) + tuple(array.shape))
        return self._fast_rope(array, inv_freq, attention_factor, layout, offset).reshape(data.shape)

    def _fast_rope(self, array: Any, inv_freq: Any, attention_factor: float, layout: str, offset: Any) -> Any:
        """``mx.fast.rope`` with the given frequencies (as periods) and the attention factor on ``x``."""
        mx = self.mx
        inv_freq = np.asarray(inv_freq, dtype=np.float64)
        dims = 2 * inv_freq.size
        if attention_factor != 1.0:  # mlx-lm scales the rotated channels of x (YarnRoPE, SuScaledRoPE)
            scale = mx.concatenate(
                [mx.full((dims,), attention_factor, dtype=mx.float32), mx.ones((array.shape[-1] - dims,))]
            )
            array = array * scale
        # The canonical rope takes the given frequencies: mx.fast.rope(freqs=periods).  nn.RoPE(base=...)
        # derives its own in float32 (rope_from_base checks that).
        with np.errstate(divide="ignore"):
            periods = np.where(inv_freq > 0, 1.0 / np.where(inv_freq > 0, inv_freq, 1.0), np.inf)
        return mx.fast.rope(
            array,
            dims,
            traditional=layout == "interleaved",
            base=None,
            scale=1.0,
            offset=offset,
            freqs=mx.array(periods.astype(np.float32)),
        )

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
        check_layout(layout, ("half", "interleaved"), "MLX")
        if head_layout != "bhsd":
            msg = f"mx.fast.rope takes x as [B, *, T, D] (bhsd); got {head_layout!r}"
            raise Unsupported(msg)
        offsets = [contiguous_offset(row, "mx.fast.rope") for row in np.asarray(positions)]
        offset = self.mx.array(np.asarray(offsets, dtype=np.int32))
        return self._fast_rope(self.mx.array(np.asarray(x)), inv_freq, attention_factor, layout, offset)

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
        check_layout(layout, ("half", "interleaved"), "MLX")
        kind = scaling_kind(scaling)
        if kind not in ("default", "linear"):
            msg = f"nn.RoPE has no {kind!r} scaling (only scale, on positions)"
            raise Unsupported(msg)
        scale = 1.0 / float((scaling or {})["factor"]) if kind == "linear" else 1.0
        offset = contiguous_offset(positions, "nn.RoPE")
        data = np.asarray(x)
        array = self.mx.array(data)
        if array.ndim < 3:
            array = array.reshape((1,) * (3 - array.ndim) + tuple(array.shape))
        layer = self.nn.RoPE(dim, traditional=layout == "interleaved", base=base, scale=scale)
        return layer(array, offset=offset).reshape(data.shape)

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        if max_bias != 8.0:
            msg = "nn.ALiBi has no max_bias option (always 8)"
            raise Unsupported(msg)
        return self.nn.ALiBi.create_alibi_slope(num_heads, dtype=self.mx.float32).reshape(-1)

    def alibi_bias(self, q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
        heads = int(np.asarray(slopes).shape[-1])
        own = np.asarray(self.nn.ALiBi.create_alibi_slope(heads, dtype=self.mx.float32)).reshape(-1)
        if not np.array_equal(own, np.asarray(slopes, dtype=np.float32)):
            msg = "nn.ALiBi uses its own slopes; these differ"
            raise Unsupported(msg)
        return self._alibi(q_positions, k_positions, heads, form)

    def alibi_bias_from_heads(
        self, q_positions: Any, k_positions: Any, *, num_heads: int, max_bias: float, form: str, dtype: str
    ) -> Any:
        if max_bias != 8.0:
            msg = "nn.ALiBi has no max_bias option (always 8)"
            raise Unsupported(msg)
        return self._alibi(q_positions, k_positions, num_heads, form)

    def _alibi(self, q_positions: Any, k_positions: Any, heads: int, form: str) -> Any:
        """``nn.ALiBi()(zeros, offset)``: keys ``0 .. Lk-1``, queries from ``offset``, ``[H, Lq, Lk]``."""
        if form not in ("symmetric", "causal"):
            msg = f"nn.ALiBi has no form argument to check {form!r} against"
            raise Unsupported(msg)
        q, k = np.asarray(q_positions), np.asarray(k_positions)
        if not (np.issubdtype(q.dtype, np.integer) and np.issubdtype(k.dtype, np.integer)):
            msg = "nn.ALiBi takes lengths and a query offset; the positions are the adapter's format"
            raise Unsupported(msg)
        if contiguous_offset(k, "nn.ALiBi") != 0:
            msg = "nn.ALiBi places keys at 0 .. Lk-1"
            raise Unsupported(msg)
        offset = contiguous_offset(q, "nn.ALiBi")
        scores = self.mx.zeros((1, heads, q.size, k.size), dtype=self.mx.float32)
        return self.nn.ALiBi()(scores, offset=offset)[0]


#: The variants of this built-in adapter (``posenc-ref check mlx``).
ADAPTERS: dict[str, type[Adapter]] = {"default": MlxAdapter}
