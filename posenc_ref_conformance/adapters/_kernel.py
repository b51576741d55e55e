"""Glue shared by the adapters of RoPE kernels (MLX, vLLM, ggml): NumPy only.

Kernels take what the suite's canonical calls do not: a base instead of
frequencies, ``[tokens, heads, head_dim]`` rows instead of ``[..., L, D]``
arrays, one cos/sin value per pair instead of full-width tables.  These pure
helpers convert, and raise :class:`~.base.Unsupported` for what cannot be
expressed, so each adapter states its limits in one place.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ._glue import default_base
from .base import Unsupported

__all__ = ["default_base", "pair_table", "pair_values", "read_pairs", "to_tokens", "unit_pairs"]


def pair_values(table: np.ndarray, layout: str, name: str) -> np.ndarray:
    """The one value per pair of a full-width cos or sin table ``[..., r]`` -> ``[..., r/2]``.

    ``half`` tables repeat the pair values as ``[v, v]``, ``interleaved`` ones as
    ``v.repeat(2)``; a table that does not (a per-channel table) is Unsupported,
    since a kernel holding one value per pair cannot take it.
    """
    table = np.asarray(table)
    half = table.shape[-1] // 2
    if layout == "half":
        first, second = table[..., :half], table[..., half:]
    else:
        first, second = table[..., 0::2], table[..., 1::2]
    if not np.array_equal(first, second):
        msg = f"{name} differs within a pair; the kernel holds one value per pair ({layout} layout)"
        raise Unsupported(msg)
    return first


def pair_table(values: np.ndarray, layout: str) -> np.ndarray:
    """One value per pair ``[..., r/2]`` -> the full-width table ``[..., r]`` of ``layout``."""
    values = np.asarray(values)
    if layout == "half":
        return np.concatenate([values, values], axis=-1)
    return np.repeat(values, 2, axis=-1)


def unit_pairs(tokens: int, head_size: int, rotary_dim: int, layout: str) -> np.ndarray:
    """``[tokens, 1, head_size]`` float32 rows with each pair ``(1, 0)``: a rotation returns ``(cos, sin)``.

    Rotating ``(x_a, x_b) = (1, 0)`` gives ``(cos, -0 * sin + ...)`` exactly:
    ``1 * cos - 0 * sin = cos`` and ``1 * sin + 0 * cos = sin`` in any float
    arithmetic, so a kernel's own cos/sin values can be read off its output.
    """
    rows = np.zeros((tokens, 1, head_size), dtype=np.float32)
    pairs = rotary_dim // 2
    if layout == "half":
        rows[..., :pairs] = 1.0
    else:
        rows[..., 0 : 2 * pairs : 2] = 1.0
    return rows


def read_pairs(out: np.ndarray, rotary_dim: int, layout: str) -> tuple[np.ndarray, np.ndarray]:
    """(cos, sin) per pair ``[tokens, r/2]`` from a rotation of :func:`unit_pairs`."""
    out = np.asarray(out).reshape(out.shape[0], -1)
    pairs = rotary_dim // 2  # an odd rotary_dim (invalid input) reads the pairs a kernel would form
    if layout == "half":
        return out[:, :pairs], out[:, pairs : 2 * pairs]
    return out[:, 0 : 2 * pairs : 2], out[:, 1 : 2 * pairs : 2]


def to_tokens(x: np.ndarray, positions: np.ndarray) -> tuple[np.ndarray, np.ndarray, Callable[[Any], Any]]:
    """``x [..., L, D]`` and positions -> ``(rows [T, H, D], positions [T], back)``.

    Kernels (vLLM, ggml) rotate ``[tokens, heads, head_dim]`` with one position
    per token.  With 1-D positions ``[L]`` and ``x [..., H, L, D]`` the head
    axis stays a head axis (``T = prod(...) * L``); otherwise every row of
    ``x`` is a token of one head, its position broadcast from ``positions``.
    ``back`` maps a ``[T, H, D]`` result to ``x``'s shape.
    """
    x = np.asarray(x)
    positions = np.asarray(positions, dtype=np.int64)
    dim = x.shape[-1]
    if x.ndim >= 3 and positions.ndim == 1 and positions.shape[0] == x.shape[-2]:
        lead, heads, length = x.shape[:-3], x.shape[-3], x.shape[-2]
        rows = np.moveaxis(x, -3, -2).reshape(-1, heads, dim)
        pos = np.tile(positions, int(np.prod(lead, dtype=np.int64)))

        def back(out: Any) -> Any:
            return np.moveaxis(np.asarray(out).reshape(*lead, length, heads, dim), -2, -3)

        return np.ascontiguousarray(rows), pos, back
    pos = np.broadcast_to(positions, x.shape[:-1]).reshape(-1)

    def flat_back(out: Any) -> Any:
        return np.asarray(out).reshape(x.shape)

    return np.ascontiguousarray(x.reshape(-1, 1, dim)), np.ascontiguousarray(pos), flat_back
