"""Relative-position and Shaw invariants: antisymmetry, clipping, identity inside the window."""

from __future__ import annotations

import numpy as np

from ..compare import as_numpy
from .core import expect_true, ints, invariant


@invariant("shaw", "relative-antisymmetry", "relative_positions", seed=501, float_outputs=False)
def antisymmetry(adapter, dtype, rng):
    """relative(q, k) = k - q, and relative(k, q) is its negated transpose."""
    q, k = ints(rng.integers(-1000, 1000, size=7)), ints(rng.integers(-1000, 1000, size=9))
    r = as_numpy(adapter.relative_positions(q, k)).astype(np.int64)
    expect_true(r == k[None, :] - q[:, None], "relative == k - q")
    expect_true(as_numpy(adapter.relative_positions(k, q)).astype(np.int64) == -r.T, "antisymmetry")
    return 0.0


@invariant("shaw", "clipping", "shaw_index", seed=502, float_outputs=False)
def clipping(adapter, dtype, rng):
    """Indices lie in [0, 2k]; inside [-k, k] the index is relative + k; outside it saturates."""
    rel = ints(np.concatenate([np.arange(-40, 41), rng.integers(-(2**40), 2**40, size=32)]))
    for k in (1, 2, 20):
        idx = as_numpy(adapter.shaw_index(rel, max_distance=k, convention="tensor2tensor")).astype(np.int64)
        expect_true((idx >= 0) & (idx <= 2 * k), f"k={k}: range [0, 2k]")
        inside = np.abs(rel) <= k
        expect_true(idx[inside] == rel[inside] + k, f"k={k}: identity inside the window")
        expect_true(idx[rel < -k] == 0, f"k={k}: saturates at 0")
        expect_true(idx[rel > k] == 2 * k, f"k={k}: saturates at 2k")
    return 0.0
