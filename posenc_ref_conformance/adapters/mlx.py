"""Built-in adapter ``mlx``: MLX's own layers, honestly mapped.

* ``sinusoidal`` (``convention="mlx"`` only): ``mlx.nn.SinusoidalPositionalEncoding``
  applied to the positions (it encodes values: ``pe(positions)``), float32.
* ``rope``: ``mx.fast.rope(..., freqs=1/inv_freq)`` (the given frequencies, as
  periods; ``nn.RoPE(base=...)`` derives its own in float32, which is what the
  planned ``rope_from_base`` call is for).  It takes a scalar
  ``offset``, so positions must be contiguous; an attention factor other than 1
  is applied by scaling the rotated channels of ``x`` first, as mlx-lm does (MLX
  itself has no such argument).  Angles are float32 products ``m * theta``.
* ``alibi_slopes``: ``nn.ALiBi.create_alibi_slope`` (``max_bias`` 8 only).
* ``alibi_bias``: ``nn.ALiBi()(scores, offset)`` on zero scores: keys ``0..Lk-1``,
  queries ``offset..``, MLX's own slopes, the symmetric ``-m|i - j|`` form.  The
  symmetric matrix is also offered for ``causal`` cases: it equals the causal
  form on ``k <= q`` up to a per-row constant, which is all a causal mask keeps.

Everything is float32 (MLX's layers compute in float32; Metal has no float64).

``docs/examples/mlx_adapter.py`` is the teaching version of this adapter: it
declares the same capabilities and gets the same verdicts (a test asserts it),
but applies the attention factor to the output, where this adapter scales ``x``
first as mlx-lm does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ._glue import check_layout, contiguous_offset
from .base import Adapter, Capabilities, Unsupported

__all__ = ["PLANNED_CAPABILITIES", "MlxAdapter"]


#: What this adapter would declare with the capability keys planned for the suite.
PLANNED_CAPABILITIES: dict[str, Any] = {
    "phase": {"sinusoidal": "product", "rope": "product"},
    "dtypes": {f: ["float32"] for f in ("sinusoidal", "rope", "alibi_slopes", "alibi_bias")},
    "positions": {"rope": "float32 (offset + arange in the kernel)", "sinusoidal": "float32"},
    "frequencies": {"rope": "float32 (base**(-2i/d) in the kernel, or the given periods)"},
    "error_types": {"sinusoidal": ["ValueError"], "alibi_slopes": ["ValueError (math domain)"]},
    "variants": {
        "layouts": {"half": "traditional=False", "interleaved": "traditional=True"},
        "alibi_forms": {"symmetric": "nn.ALiBi: -m|i - j|, used for causal cases too"},
        "sinusoidal_conventions": {"mlx": "nn.SinusoidalPositionalEncoding"},
    },
    "apply_layouts": ["[..., seq, dim]"],
    "new_calls": {
        "rope_from_base": "rope_from_base(x, positions, *, dim, base, scaling, layout): nn.RoPE(dims, "
        "base=base, scale=1/factor) for linear scaling (MLX scales positions)",
        "alibi_bias_from_heads": "alibi_bias_from_heads(q_positions, k_positions, *, num_heads, max_bias, "
        "form): nn.ALiBi computes its own slopes",
    },
}


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
        check_layout(layout, ("half", "interleaved"), "MLX")
        offset = contiguous_offset(positions, "MLX rope")
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
        # The canonical rope takes the given frequencies: mx.fast.rope(freqs=periods).  nn.RoPE(base=...)
        # derives its own in float32 (a wider error, the planned rope_from_base call's business).
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
        if contiguous_offset(k, "nn.ALiBi") != 0:
            msg = "nn.ALiBi places keys at 0 .. Lk-1"
            raise Unsupported(msg)
        offset = contiguous_offset(q_positions, "nn.ALiBi")
        heads = int(np.asarray(slopes).shape[-1])
        own = np.asarray(self.nn.ALiBi.create_alibi_slope(heads, dtype=self.mx.float32)).reshape(-1)
        if not np.array_equal(own, np.asarray(slopes, dtype=np.float32)):
            msg = "nn.ALiBi uses its own slopes; these differ"
            raise Unsupported(msg)
        scores = self.mx.zeros((1, heads, np.asarray(q_positions).size, k.size), dtype=self.mx.float32)
        return self.nn.ALiBi()(scores, offset=offset)[0]


#: The variants of this built-in adapter (``posenc-ref check mlx``).
ADAPTERS: dict[str, type[Adapter]] = {"default": MlxAdapter}
