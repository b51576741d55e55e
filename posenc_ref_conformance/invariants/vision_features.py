"""Vision-feature invariants: unit-norm Fourier pairs, NaViT ids in range and monotone, additive bbox sums."""

from __future__ import annotations

import numpy as np

from .core import expect_close, expect_true, host, ints, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}


def _dyadic(rng, shape, denominator=64, span=128):
    return rng.integers(-span, span + 1, size=shape) / denominator


@invariant("fourier_features", "fourier-unit-norm", "fourier_features", seed=2501)
def fourier_unit_norm(adapter, dtype, rng):
    """sin(z_f)**2 + cos(z_f)**2 = 1 for every frequency f of every point (each rounded once: 4u)."""
    feats = 16
    gaussian = _dyadic(rng, (2, feats)).astype(dtype)
    coords = (rng.integers(0, 1024, size=(3, 5, 2)) / 1024).astype(dtype)
    out = host(adapter.fourier_features(coords, gaussian, input_shape=[1, 1], offset=0.0))
    norm = out[..., :feats] ** 2 + out[..., feats:] ** 2
    return expect_close(norm, np.ones_like(norm), 6 * EPS[dtype], "sin**2 + cos**2 of each pair")


@invariant("navit", "navit-range-monotone", "navit_position_ids", seed=2502)
def navit_range_monotone(adapter, dtype, rng):
    """Ids lie in [0, N**2), padding is 0, buckets never decrease along a row or a column, and an
    unpadded N x N image gets the ids 0 .. N**2 - 1 in order."""
    side = 12
    sizes = [(int(rng.integers(1, 30)), int(rng.integers(1, 30))) for _ in range(3)]
    rows, cols = max(h for h, _ in sizes), max(w for _, w in sizes)
    mask = np.zeros((len(sizes), rows, cols), dtype=bool)
    for b, (h, w) in enumerate(sizes):
        mask[b, :h, :w] = True
    ids = host(adapter.navit_position_ids(mask, num_patches_per_side=side, arithmetic="float32"))
    expect_true((ids >= 0) & (ids < side * side), "ids within the N**2-row table")
    expect_true(ids[~mask.reshape(len(sizes), -1)] == 0, "padding patches get id 0")
    for b, (h, w) in enumerate(sizes):
        grid = ids[b].reshape(rows, cols)[:h, :w]
        bucket_h, bucket_w = grid // side, grid % side
        expect_true(np.diff(bucket_h, axis=0) >= 0, "row buckets non-decreasing down the image")
        expect_true(np.diff(bucket_w, axis=1) >= 0, "column buckets non-decreasing across the image")
    full = host(
        adapter.navit_position_ids(
            np.ones((1, side, side), dtype=bool), num_patches_per_side=side, arithmetic="float32"
        )
    )
    expect_true(full[0] == np.arange(side * side), "an N x N image takes every row once, in order")
    return 0.0


@invariant("learned_2d", "bbox-additive-corners", "bbox_embedding", seed=2503)
def bbox_additive(adapter, dtype, rng):
    """With zero height/width tables the sum is X[x0] + Y[y0] + X[x1] + Y[y1]: exchanging the y corners
    of two boxes leaves the total of their embeddings unchanged (two sums of 8 terms: 16u M)."""
    rows, dim = 32, 4
    x, y = _dyadic(rng, (rows, dim)).astype(dtype), _dyadic(rng, (rows, dim)).astype(dtype)
    zero = np.zeros((rows, dim), dtype=dtype)
    a = ints([[2, 3, 10, 12], [0, 5, 31, 20]])
    b = ints([[2, 5, 10, 20], [0, 3, 31, 12]])  # the y corners exchanged
    ea = host(adapter.bbox_embedding(x, y, zero, zero, a, combine="sum", clip_shape=False))
    eb = host(adapter.bbox_embedding(x, y, zero, zero, b, combine="sum", clip_shape=False))
    bound = 16 * EPS[dtype] * 4 * max(np.abs(x).max(), np.abs(y).max())
    return expect_close(ea.sum(axis=0), eb.sum(axis=0), bound, "total embedding after exchanging y corners")
