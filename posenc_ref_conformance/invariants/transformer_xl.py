"""Transformer-XL invariants: the shift of a row-independent table is Toeplitz (each query meets its
own distance); the biases' roles (u with the keys, v with the table) in the logits."""

from __future__ import annotations

import numpy as np

from .core import expect_close, host, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}


@invariant("transformer_xl", "shift-reads-the-distance", "rel_shift", seed=901)
def shift_toeplitz(adapter, dtype, rng):
    """Every query holding the same table values g[p]: each kept entry is g at the row of its distance."""
    worst = 0.0
    # (convention, Q, P, K, shift, row read by (i, j) on the valid entries)
    for convention, q, p, k, shift, row in (
        ("transformer_xl", 4, 7, 4, 1, lambda i, j: j + 4 - 1 - i),  # the Conformer table
        ("xlnet", 3, 8, 5, 1, lambda i, j: j + 3 - i),  # XLNet, 2 memory positions
        ("xlnet", 2, 10, 4, 2, lambda i, j: j + 2 * (2 - i)),  # Funnel's pooled queries
        ("gemma3n", 3, 4, 6, 1, lambda i, j: j - i),  # Gemma's blocks: the band 0 <= j - i < P
    ):
        g = (rng.integers(-64, 65, size=p) / 8.0).astype(dtype)
        try:
            out = host(
                adapter.rel_shift(
                    np.broadcast_to(g, (q, p)).copy(), klen=k, convention=convention, shift=shift
                )
            )
        except NotImplementedError:
            continue  # another family's trick
        pairs = [(i, j) for i in range(q) for j in range(k) if 0 <= row(i, j) < p]
        got = np.asarray([out[i, j] for i, j in pairs])
        want = np.asarray([g[row(i, j)] for i, j in pairs])
        worst = max(worst, expect_close(got, want, 0.0, f"{convention} (shift {shift}): the row of i - j"))
    return worst


@invariant("transformer_xl", "bias-roles", "rel_attention_scores", seed=902)
def bias_roles(adapter, dtype, rng):
    """scores(q, k, R, u, v) = scores(q + u, k, 0, -, -) + scores(q + v, 0, R, -, -): u meets the keys only,
    v the table only."""
    h, q, k, d = 2, 3, 3, 4

    def draw(*shape):
        return (rng.integers(-32, 33, size=shape) / 16.0).astype(dtype)

    qa, ka, ra, u, v = draw(1, h, q, d), draw(1, h, k, d), draw(1, h, 2 * k - 1, d), draw(h, d), draw(h, d)
    zeros_k, zeros_r = np.zeros_like(ka), np.zeros_like(ra)
    whole = host(
        adapter.rel_attention_scores(qa, ka, ra, u=u, v=v, convention="transformer_xl", shift=1, scale=1.0)
    )
    content = host(
        adapter.rel_attention_scores(
            (qa + u[None, :, None, :]).astype(dtype),
            ka,
            zeros_r,
            u=None,
            v=None,
            convention="transformer_xl",
            shift=1,
            scale=1.0,
        )
    )
    position = host(
        adapter.rel_attention_scores(
            (qa + v[None, :, None, :]).astype(dtype),
            zeros_k,
            ra,
            u=None,
            v=None,
            convention="transformer_xl",
            shift=1,
            scale=1.0,
        )
    )
    # |q + b| <= 4, |k|, |R| <= 2: each dot product of D terms errs by (D + 1) u 8 D, three of them
    tol = 3 * (d + 1) * EPS[dtype] * 8 * d * 2
    return expect_close(whole, content + position, tol, "content term with u plus position term with v")
