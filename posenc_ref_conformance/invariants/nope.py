"""NoPE invariants: attention is permutation-equivariant; order enters only through the mask; the
Mistral and Beam query temperatures keep their shapes (steps at multiples of F, a power law)."""

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


def _scale(adapter, positions, dtype, *, floor_scale, attn_scale, convention):
    return host(
        adapter.llama4_attn_scale(
            ints(positions),
            floor_scale=floor_scale,
            attn_scale=attn_scale,
            convention=convention,
            dtype=dtype,
        )
    ).astype(np.float64)


@invariant("nope", "attn-scale-mistral-steps-at-multiples", "llama4_attn_scale", seed=603)
def mistral_steps(adapter, dtype, rng):
    """Mistral's staircase: flat on ``[kF, (k + 1) F - 1]``, steps at ``kF`` (Llama 4: ``kF - 1``)."""
    f = int(rng.integers(2, 5000))
    k = rng.integers(1, 200, size=6)
    below, at, start = k * f - 1, k * f, (k - 1) * f
    kw = {"floor_scale": float(f), "attn_scale": 0.1, "convention": "mistral"}
    s_below, s_at, s_start = (_scale(adapter, p, dtype, **kw) for p in (below, at, start))
    expect_true(s_at > s_below, f"a step at every multiple of F = {f}")
    one = _scale(adapter, [0, f - 1], dtype, **kw)
    expect_true(one == 1.0, f"exactly 1 on [0, F - 1] (F = {f})")
    return expect_close(s_below, s_start, 4 * EPS[dtype] * np.abs(s_start), "flat on [(k - 1) F, k F - 1]")


@invariant("nope", "attn-scale-beam-power-law", "llama4_attn_scale", seed=604)
def beam_power(adapter, dtype, rng):
    """Beam's ``(1 + (p + 1)/F) ** a``: doubling ``a`` squares it, and it grows with ``p`` from 0 on."""
    p = np.sort(rng.integers(0, 2**20, size=16))
    kw = {"floor_scale": 2048.0, "convention": "beam"}
    once = _scale(adapter, p, dtype, attn_scale=0.1, **kw)
    twice = _scale(adapter, p, dtype, attn_scale=0.2, **kw)
    expect_true(np.all(np.diff(once) >= 0) and np.all(once > 1.0), "increasing and > 1 from position 0")
    return expect_close(twice, once * once, 16 * EPS[dtype] * once * once, "s(p; 2a) == s(p; a) ** 2")
