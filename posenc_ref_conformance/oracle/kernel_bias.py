"""Distance-kernel biases beyond ALiBi: Sandwich and KERPLE, one head at a time.

Both depend on the distance ``|k - q|`` only.

Sandwich (Chi, Fan, Rudnicky & Ramadge 2023, "Dissecting Transformer Length
Extrapolation via the Lens of Receptive Field Analysis", arXiv:2212.10356,
eq. 3), as NVIDIA NeMo's ``SandwichRelativePositionEmbedding`` computes it:
``inv_freq = 1 / base**(2 k / d)`` for ``k = 1 .. d/2`` (the arange starts at
1), ``sum_k cos(r inv_freq_k) - d/2``, divided by ``8 h / H`` for heads
``h = 1 .. H``.

KERPLE (Chi, Fan, Ramadge & Rudnicky 2022, "KERPLE: Kernelized Relative
Positional Embedding for Length Extrapolation", arXiv:2205.09921), as
chijames/KERPLE ``megatron/mpu/layers.py`` computes it: ``ParallelKerpleLog``
``-bias_p * log(1 + bias_a * |d|)`` and ``ParallelKerplePower``
``-bias_a * |d|**bias_p``.  The canonical parameters are ``r1`` (the factor in
front) and ``r2`` (inside the kernel): log ``r1 = bias_p, r2 = bias_a``; power
``r1 = bias_a, r2 = bias_p``.

The references ``tril`` the distance matrix of a causal decoder (future keys
get distance 0 and are then masked); the values here are ``|k - q|`` everywhere,
equal to theirs on every key a causal mask keeps.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = ["KERPLE_KINDS", "kerple_bias", "sandwich_bias"]

KERPLE_KINDS = ("log", "power")


def sandwich_bias(
    q_positions: Sequence[int], k_positions: Sequence[int], *, num_heads: int, dim: int, base: float = 10000.0
) -> list[list[list[mp.mpf]]]:
    """``[H][Lq][Lk]``: ``(sum_{k=1}^{d/2} cos(r base**(-2k/d)) - d/2) / (8 h / H)``."""
    b = exact(base)
    inv_freq = [mp.power(b, -mp.mpf(2 * k) / dim) for k in range(1, dim // 2 + 1)]
    cache: dict[int, mp.mpf] = {}

    def kernel(r: int) -> mp.mpf:
        if r not in cache:
            cache[r] = mp.fsum(mp.cos(r * t) for t in inv_freq) - mp.mpf(dim) / 2
        return cache[r]

    rows = [[kernel(int(k) - int(q)) for k in k_positions] for q in q_positions]
    return [[[v * num_heads / (8 * h) for v in row] for row in rows] for h in range(1, num_heads + 1)]


def kerple_bias(
    q_positions: Sequence[int],
    k_positions: Sequence[int],
    r1: Sequence[float],
    r2: Sequence[float],
    *,
    kind: str,
) -> list[list[list[mp.mpf]]]:
    """``[H][Lq][Lk]``: log ``-r1 ln(1 + r2 |d|)``, power ``-r1 |d|**r2`` (``0**r2 = 0``)."""
    if kind not in KERPLE_KINDS:
        msg = f"kind must be one of {KERPLE_KINDS}; got {kind!r}"
        raise ValueError(msg)
    out = []
    for a, p in zip(r1, r2, strict=True):
        a, p = exact(a), exact(p)

        def kernel(d: int, a: mp.mpf = a, p: mp.mpf = p) -> mp.mpf:
            if kind == "log":
                return -a * mp.log(1 + p * d)
            return -a * mp.power(d, p) if d else mp.mpf(0)

        out.append([[kernel(abs(int(k) - int(q))) for k in k_positions] for q in q_positions])
    return out
