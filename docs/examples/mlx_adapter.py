"""An adapter that checks MLX's own positional-encoding layers with posenc-ref.

Run:  posenc-ref check docs/examples/mlx_adapter.py

A plain module: it defines the canonical functions it can map onto MLX, and
``CAPABILITIES`` says what MLX offers, so the cases MLX has no way to express
(other sinusoidal conventions, float64, arbitrary positions) are *skipped*, not
failed.  Inputs arrive as NumPy arrays; we return MLX arrays, which the suite
converts with ``numpy.asarray``.

This is the teaching copy of the built-in adapter (``posenc-ref check mlx``,
``posenc_ref_conformance/adapters/mlx.py``): same capabilities, same verdicts.
It is shorter, and scales the output by the attention factor where the built-in
one scales ``x`` first, as mlx-lm does; the two differ only in rounding.
"""

# ruff: noqa: EM101, EM102 - inline error messages, as most model code has them

from __future__ import annotations

from typing import Any

import mlx.core as mx
import mlx.nn as nn
import numpy as np

from posenc_ref_conformance.adapters.base import Capabilities, Unsupported

CAPABILITIES = Capabilities(
    # MLX computes in float32 on the GPU; on the CPU float64 exists, but its layers
    # build their tables in float32, so we only claim float32.
    dtypes=("float32",),
    # ... and forms each angle as the float32 product of position and frequency.
    phase="product",
    sinusoidal_conventions=("mlx",),
    # nn.ALiBi builds -m|i - j| only.  Under a causal mask (keys k <= q) that is the
    # causal form m (k - q): causal cases compare only those keys, up to a row constant.
    alibi_forms=("symmetric", "causal"),
    scaling_types=("default",),
    notes={
        "rope": "mx.fast.rope with freqs=1/inv_freq; positions must be contiguous "
        "(one offset per row)",
        "sinusoidal": "nn.SinusoidalPositionalEncoding applied to the positions",
    },
)

_DTYPES = {"float32": mx.float32, "float64": mx.float64}


def describe() -> dict[str, Any]:
    import importlib.metadata

    return {
        "library": "mlx",
        "version": importlib.metadata.version("mlx"),
        "device": str(mx.default_device()),
    }


def sinusoidal(
    positions: np.ndarray,
    dim: int,
    *,
    convention: str,
    options: dict[str, Any],
    dtype: str,
) -> Any:
    if convention != "mlx":
        raise Unsupported(
            f"MLX only has its own sinusoidal convention, not {convention!r}"
        )
    layer = nn.SinusoidalPositionalEncoding(dim, **options)
    return layer(mx.array(positions).astype(_DTYPES[dtype])).astype(_DTYPES[dtype])


def rope(
    x: np.ndarray,
    positions: np.ndarray,
    inv_freq: np.ndarray,
    *,
    attention_factor: float,
    layout: str,
) -> Any:
    """``mx.fast.rope`` rotates x[..., S, D] at positions offset + arange(S)."""
    if layout not in ("half", "interleaved"):
        raise Unsupported(
            f"MLX takes traditional=True/False, no layout {layout!r} to reject"
        )
    offsets = positions[..., :1]
    if not np.array_equal(positions, offsets + np.arange(positions.shape[-1])):
        raise Unsupported("mx.fast.rope takes an offset, not arbitrary positions")
    if len(np.unique(offsets)) != 1:
        raise Unsupported("this adapter passes one scalar offset")
    *lead, seq, width = x.shape
    x3 = mx.array(x).reshape(-1, seq, width)  # fast.rope wants at least 3-D
    out = mx.fast.rope(
        x3,
        2 * inv_freq.shape[-1],  # rotated channels
        traditional=(layout == "interleaved"),
        base=None,
        scale=1.0,
        offset=int(offsets.reshape(-1)[0]),
        freqs=mx.array(
            1.0 / inv_freq, dtype=mx.float32
        ),  # MLX wants periods, not inverse frequencies
    )
    if attention_factor != 1.0:  # scaling cos and sin = scaling the rotated channels
        rotated = 2 * inv_freq.shape[-1]
        out = mx.concatenate(
            [out[..., :rotated] * attention_factor, out[..., rotated:]], axis=-1
        )
    return out.reshape(*lead, seq, width)


def alibi_slopes(num_heads: int, *, max_bias: float, dtype: str) -> Any:
    if max_bias != 8.0:
        raise Unsupported("nn.ALiBi has no max_bias")
    return nn.ALiBi.create_alibi_slope(num_heads, dtype=_DTYPES[dtype]).reshape(-1)


def alibi_bias(
    q_positions: np.ndarray, k_positions: np.ndarray, slopes: np.ndarray, *, form: str
) -> Any:
    """nn.ALiBi builds -m|i - j| for queries offset .. offset + Lq, keys 0 .. Lk - 1."""
    if form not in ("symmetric", "causal"):
        raise Unsupported(f"nn.ALiBi takes no form argument to reject {form!r} with")
    if q_positions.ndim != 1 or not np.array_equal(
        k_positions, np.arange(k_positions.size)
    ):
        raise Unsupported("nn.ALiBi takes lengths and a query offset, not positions")
    offset = int(q_positions[0]) if q_positions.size else 0
    if not np.array_equal(q_positions, offset + np.arange(q_positions.size)):
        raise Unsupported("queries must be contiguous")
    heads = slopes.shape[0]
    if not np.array_equal(
        np.asarray(nn.ALiBi.create_alibi_slope(heads)).reshape(-1),
        slopes.astype(np.float32),
    ):
        raise Unsupported("nn.ALiBi always uses its own slopes")
    # create_alibi_matrix(q_len, k_len, ...) uses query indices offset .. q_len - 1.
    matrix = nn.ALiBi.create_alibi_matrix(
        offset + q_positions.size, k_positions.size, heads, offset=offset
    )
    return matrix.reshape(heads, q_positions.size, k_positions.size)
