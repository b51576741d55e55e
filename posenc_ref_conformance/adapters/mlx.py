"""Built-in adapter ``mlx``: MLX's own layers, honestly mapped.

* ``sinusoidal`` (``convention="mlx"`` only): ``mlx.nn.SinusoidalPositionalEncoding``
  applied to the positions (it encodes values: ``pe(positions)``), float32.
* ``rope``: ``mlx.nn.RoPE`` when the frequencies are the default ``base**(-2i/d)``
  for some base, else ``mx.fast.rope(..., freqs=1/inv_freq)``.  Both take a scalar
  ``offset``, so positions must be contiguous; an attention factor other than 1
  is applied by scaling the rotated channels of ``x`` first, as mlx-lm does (MLX
  itself has no such argument).  Angles are float32 products ``m * theta``.
* ``alibi_slopes``: ``nn.ALiBi.create_alibi_slope`` (``max_bias`` 8 only).
* ``alibi_bias``: ``nn.ALiBi()(scores, offset)`` on zero scores: keys ``0..Lk-1``,
  queries ``offset..``, MLX's own slopes, the symmetric ``-m|i - j|`` form.  The
  symmetric matrix is also offered for ``causal`` cases: it equals the causal
  form on ``k <= q`` up to a per-row constant, which is all a causal mask keeps.

Everything is float32 (MLX's layers compute in float32; Metal has no float64).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._kernel import default_base
from .base import Adapter, Capabilities, Unsupported

__all__ = ["MlxAdapter"]


def _contiguous_offset(positions: np.ndarray) -> int:
    positions = np.asarray(positions).reshape(-1)
    start = int(positions[0]) if positions.size else 0
    if not np.array_equal(positions, start + np.arange(positions.size)):
        msg = "MLX rope/ALiBi take a scalar offset: positions must be contiguous (offset + arange(L))"
        raise Unsupported(msg)
    return start


class MlxAdapter(Adapter):
    """MLX core layers (``mlx.core.fast``, ``mlx.nn``)."""

    name = "mlx"
    capabilities = Capabilities(
        functions=("sinusoidal", "rope", "alibi_slopes", "alibi_bias"),
        dtypes=("float32",),
        sinusoidal_conventions=("mlx",),
        notes={
            "rope": "nn.RoPE / mx.fast.rope: contiguous positions only; attention factor applied to x "
            "(mlx-lm glue)",
            "alibi_bias": "nn.ALiBi: symmetric only, keys from 0, its own slopes; used for causal cases too",
            "sinusoidal": "nn.SinusoidalPositionalEncoding on the positions; only the 'mlx' convention",
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
        mx = self.mx
        offset = _contiguous_offset(positions)
        inv_freq = np.asarray(inv_freq, dtype=np.float64)
        dims = 2 * inv_freq.size
        data = np.asarray(x)
        if attention_factor != 1.0:  # mlx-lm scales the rotated channels of x (YarnRoPE, SuScaledRoPE)
            data = data.copy()
            data[..., :dims] *= np.float32(attention_factor)
        array = mx.array(data)
        if array.ndim < 3:
            array = array.reshape((1,) * (3 - array.ndim) + tuple(array.shape))
        traditional = layout == "interleaved"
        base = default_base(inv_freq)
        if base is not None:
            out = self.nn.RoPE(dims, traditional=traditional, base=base)(array, offset=offset)
        else:
            with np.errstate(divide="ignore"):
                periods = np.where(inv_freq > 0, 1.0 / np.where(inv_freq > 0, inv_freq, 1.0), np.inf)
            out = mx.fast.rope(
                array,
                dims,
                traditional=traditional,
                base=None,
                scale=1.0,
                offset=offset,
                freqs=mx.array(periods.astype(np.float32)),
            )
        return out.reshape(data.shape)

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        if max_bias != 8.0:
            msg = "nn.ALiBi has no max_bias option (always 8)"
            raise Unsupported(msg)
        return self.nn.ALiBi.create_alibi_slope(num_heads, dtype=self.mx.float32).reshape(-1)

    def alibi_bias(self, q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
        if form not in ("symmetric", "causal"):
            msg = f"nn.ALiBi has no form argument to check {form!r} against"
            raise Unsupported(msg)
        k = np.asarray(k_positions)
        if _contiguous_offset(k) != 0:
            msg = "nn.ALiBi places keys at 0 .. Lk-1"
            raise Unsupported(msg)
        offset = _contiguous_offset(q_positions)
        heads = int(np.asarray(slopes).shape[-1])
        own = np.asarray(self.nn.ALiBi.create_alibi_slope(heads, dtype=self.mx.float32)).reshape(-1)
        if not np.array_equal(own, np.asarray(slopes, dtype=np.float32)):
            msg = "nn.ALiBi uses its own slopes; these differ"
            raise Unsupported(msg)
        scores = self.mx.zeros((1, heads, np.asarray(q_positions).size, k.size), dtype=self.mx.float32)
        return self.nn.ALiBi()(scores, offset=offset)[0]
