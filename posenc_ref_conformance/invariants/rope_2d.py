"""2-D RoPE invariants: a shifted grid's rotations differ by one rotation per channel; unit modulus."""

from __future__ import annotations

import math

import numpy as np

from .core import expect_close, host, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}
CONVENTIONS = ("pixtral", "gemma4_vision", "dinov3", "llama4_vision", "sam2", "kimi_k25")
_BASE = {
    "pixtral": 10000.0,
    "gemma4_vision": 100.0,
    "dinov3": 100.0,
    "llama4_vision": 10000.0,
    "sam2": 10000.0,
    "kimi_k25": 10000.0,
}


def _conventions(adapter) -> tuple[str, ...]:
    return CONVENTIONS


def _tol(dtype: str, positions: np.ndarray, convention: str) -> float:
    """Twice the golden cases' bound per table entry (golden/cases/rope_2d.py), for a product of two."""
    a_max = (float(np.abs(positions).max()) + 1) * (2 * math.pi if convention == "dinov3" else 1.0)
    return 4 * EPS[dtype] * (a_max * (2 * math.log(_BASE[convention]) + 6) + 4)


def _grids(convention: str) -> tuple[np.ndarray, np.ndarray]:
    """A 3 x 5 grid and the grid shifted by (2, 7) (DINOv3: its centres, shifted by (1/4, -1/2))."""
    rows, cols = np.repeat(np.arange(3.0), 5), np.tile(np.arange(5.0), 3)
    if convention == "dinov3":
        rows, cols = (2 * rows + 1) / 3 - 1, (2 * cols + 1) / 5 - 1  # not dyadic: any real coordinates
        rows, cols = np.round(rows * 64) / 64, np.round(cols * 64) / 64
        return np.stack([rows, cols]), np.stack([rows + 0.25, cols - 0.5])
    return np.stack([rows, cols]), np.stack([rows + 2, cols + 7])


@invariant("rope", "2d-shift-per-axis", "rope_2d_cos_sin", seed=901, variants=_conventions)
def shift_per_axis(adapter, dtype, rng, convention):
    """Shifting every patch by the same (dy, dx) multiplies each channel's rotation by one constant.

    ``z = cos + i sin`` of the shifted grid times the conjugate of the grid's is the same for every
    token, channel by channel: q . k of two rotated patches depends on their offset only.
    """
    grid, moved = _grids(convention)
    head_dim, base = 16, _BASE[convention]
    c0, s0 = (
        host(t)
        for t in adapter.rope_2d_cos_sin(grid, head_dim, base=base, convention=convention, dtype=dtype)
    )
    c1, s1 = (
        host(t)
        for t in adapter.rope_2d_cos_sin(moved, head_dim, base=base, convention=convention, dtype=dtype)
    )
    step = (c1 + 1j * s1) * (c0 - 1j * s0)  # [L, D]
    tol = _tol(dtype, moved, convention)
    worst = expect_close(step.real, np.broadcast_to(step.real[:1], step.shape), 2 * tol, "cos of the shift")
    worst = max(
        worst,
        expect_close(step.imag, np.broadcast_to(step.imag[:1], step.shape), 2 * tol, "sin of the shift"),
    )
    return max(worst, expect_close(c1 * c1 + s1 * s1, np.ones_like(c1), tol, "cos**2 + sin**2"))
