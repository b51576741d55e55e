"""Sandwich and KERPLE invariants: Toeplitz, symmetric, shift-invariant, signs; KERPLE power 1 = ALiBi."""

from __future__ import annotations

import math

import numpy as np

from .core import expect_close, expect_true, host, ints, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}


def _sandwich_tol(dtype: str, heads: int, dim: int, distance: int, base: float = 10000.0) -> float:
    """The golden cases' error model of a plain evaluation (see golden/cases/kernel_bias.py), doubled."""
    half = dim // 2
    angles = sum(distance * base ** (-2.0 * k / dim) for k in range(1, half + 1)) * (math.log(base) + 5)
    return 2 * heads / 8 * (angles + half * half + 4 * half) * EPS[dtype]


@invariant("kernel_bias", "sandwich-toeplitz-symmetric", "sandwich_bias", seed=701)
def sandwich_structure(adapter, dtype, rng):
    """b[i+1, j+1] = b[i, j], b[i, j] = b[j, i] (cos is even), 0 on the diagonal, <= 0 everywhere."""
    q = k = ints(range(12))
    b = host(adapter.sandwich_bias(q, k, num_heads=4, dim=16, base=10000.0, dtype=dtype))
    tol = _sandwich_tol(dtype, 4, 16, 11)
    worst = expect_close(b[:, 1:, 1:], b[:, :-1, :-1], tol, "b[i+1, j+1] vs b[i, j]")
    worst = max(worst, expect_close(b, np.swapaxes(b, -1, -2), tol, "b vs its transpose"))
    diagonal = np.diagonal(b, axis1=-2, axis2=-1)
    worst = max(worst, expect_close(diagonal, np.zeros_like(diagonal), tol, "the diagonal"))
    expect_true(b <= tol, "sum of cosines minus d/2 is <= 0")
    return worst


@invariant("kernel_bias", "sandwich-shift-invariance", "sandwich_bias", seed=702)
def sandwich_shift(adapter, dtype, rng):
    """Shifting every query and key position by the same amount (65536) changes nothing."""
    q, k = ints(range(6)), ints(range(9))
    b = host(adapter.sandwich_bias(q, k, num_heads=3, dim=8, base=10000.0, dtype=dtype))
    far = host(adapter.sandwich_bias(q + 65536, k + 65536, num_heads=3, dim=8, base=10000.0, dtype=dtype))
    return expect_close(far, b, _sandwich_tol(dtype, 3, 8, 8), "bias after shifting every position by 65536")


_R1 = np.asarray([0.5, 1.25, 2.0])
_R2 = np.asarray([0.25, 1.0, 1.75])


@invariant("kernel_bias", "kerple-toeplitz-symmetric", "kerple_bias", seed=703)
def kerple_structure(adapter, dtype, rng):
    """Both kernels: Toeplitz, symmetric, 0 on the diagonal, < 0 off it for positive parameters."""
    q = k = ints(range(10))
    worst = 0.0
    for kind in ("log", "power"):
        b = host(adapter.kerple_bias(q, k, _R1.astype(dtype), _R2.astype(dtype), kind=kind))
        tol = 16 * EPS[dtype] * (1 + np.abs(b))
        worst = max(worst, expect_close(b[:, 1:, 1:], b[:, :-1, :-1], tol[:, 1:, 1:], f"{kind}: Toeplitz"))
        worst = max(worst, expect_close(b, np.swapaxes(b, -1, -2), tol, f"{kind}: symmetric"))
        off = ~np.eye(10, dtype=bool)
        expect_true(np.diagonal(b, axis1=-2, axis2=-1) == 0, f"{kind}: zero on the diagonal")
        expect_true(b[:, off] < 0, f"{kind}: negative off the diagonal (-r1 times a positive kernel)")
    return worst


def _symmetric_alibi(adapter) -> str | None:
    return None if "symmetric" in adapter.capabilities.alibi_forms else "alibi form 'symmetric' not supported"


@invariant(
    "kernel_bias", "kerple-power-1-is-alibi", "kerple_bias", "alibi_bias", seed=704, requires=_symmetric_alibi
)
def kerple_alibi(adapter, dtype, rng):
    """The power kernel with r2 = 1 is the symmetric ALiBi bias with slopes r1."""
    q, k = ints(range(3, 9)), ints(range(11))
    slopes = (2.0 ** -np.arange(1, 5)).astype(dtype)
    power = host(adapter.kerple_bias(q, k, slopes, np.ones(4, dtype=dtype), kind="power"))
    alibi = host(adapter.alibi_bias(q, k, slopes, form="symmetric"))
    return expect_close(power, alibi, 8 * EPS[dtype] * np.abs(alibi), "kerple power (r2 = 1) vs alibi")
