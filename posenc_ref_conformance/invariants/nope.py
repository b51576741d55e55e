"""NoPE invariants: attention is permutation-equivariant; order enters only through the mask."""

from __future__ import annotations

import numpy as np

from ..compare import as_numpy
from .core import expect_close, expect_true, host, ints, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}


def _qkv(rng: np.random.Generator, dtype: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    q = (rng.integers(-64, 65, size=(5, 8)) / 32).astype(dtype)
    k = (rng.integers(-64, 65, size=(7, 8)) / 32).astype(dtype)
    v = (rng.integers(-64, 65, size=(7, 3)) / 16).astype(dtype)
    return q, k, v


@invariant("nope", "permutation-equivariance", "attention", seed=601)
def equivariance(adapter, dtype, rng):
    """Without a mask, permuting keys and values together changes nothing; permuting queries permutes rows."""
    q, k, v = _qkv(rng, dtype)
    out = host(adapter.attention(q, k, v, bias=None, mask=None, scale=None))
    pk, pq = rng.permutation(7), rng.permutation(5)
    tol = 64 * EPS[dtype] * (1 + np.abs(out))
    worst = expect_close(
        host(adapter.attention(q, k[pk], v[pk], bias=None, mask=None, scale=None)),
        out,
        tol,
        "keys and values permuted",
    )
    return max(
        worst,
        expect_close(
            host(adapter.attention(q[pq], k, v, bias=None, mask=None, scale=None)),
            out[pq],
            tol[pq],
            "queries permuted",
        ),
    )


@invariant("nope", "mask-carries-order", "attention", "causal_mask", seed=602)
def mask_order(adapter, dtype, rng):
    """Permuting keys together with their positions leaves causal NoPE attention unchanged."""
    q, k, v = _qkv(rng, dtype)
    qpos, kpos = ints(range(2, 7)), ints(range(7))
    mask = as_numpy(adapter.causal_mask(qpos, kpos, sliding_window=None, chunk_size=None))
    expect_true(mask == (kpos[None, :] <= qpos[:, None]), "causal mask == (k <= q)")
    out = host(adapter.attention(q, k, v, bias=None, mask=mask, scale=None))
    p = rng.permutation(7)
    pmask = as_numpy(adapter.causal_mask(qpos, kpos[p], sliding_window=None, chunk_size=None))
    got = host(adapter.attention(q, k[p], v[p], bias=None, mask=pmask, scale=None))
    return expect_close(got, out, 64 * EPS[dtype] * (1 + np.abs(out)), "keys, values and positions permuted")
