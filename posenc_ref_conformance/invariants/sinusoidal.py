"""Sinusoidal invariants: boundedness and shift-linearity PE(p + k) = R(k) PE(p), per convention;
MusicGen's [cos | sin] halves; PatchTST's standardised table (mean 0, sample std 1/10)."""

from __future__ import annotations

import math

import numpy as np

from ..adapters.base import SINUSOIDAL_CONVENTIONS
from .core import expect_close, expect_true, host, ints, invariant, phase_tolerance

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}
DIM = 8


def _pairs(convention: str, dim: int) -> list[tuple[int, int]]:
    """(sin column, cos column) of each frequency."""
    if convention == "vaswani":
        return [(2 * j, 2 * j + 1) for j in range(dim // 2)]
    if convention == "marian":
        return [(j, (dim + 1) // 2 + j) for j in range(dim // 2)]
    return [(j, dim // 2 + j) for j in range(dim // 2)]


def _table(adapter, convention, positions, dtype):
    scale = math.sqrt(2 / DIM) if convention == "mlx" else 1.0
    table = host(adapter.sinusoidal(ints(positions), DIM, convention=convention, options={}, dtype=dtype))
    return table / scale


def _supported(adapter) -> list[str]:
    """The declared conventions whose tables are plain sinusoids (PatchTST's is standardised)."""
    declared = adapter.capabilities.sinusoidal_conventions
    return [c for c in SINUSOIDAL_CONVENTIONS if c in declared and c != "patchtst"]


def _t2t(adapter) -> str | None:
    if "tensor2tensor" not in adapter.capabilities.sinusoidal_conventions:
        return "the adapter declares no tensor2tensor convention"
    return None


def _patchtst(adapter) -> str | None:
    if "patchtst" not in adapter.capabilities.sinusoidal_conventions:
        return "the adapter declares no patchtst convention"
    return None


#: Relative frequency error (unit roundoffs) of a product implementation: 3 |ln 10000| + 6.
FREQUENCY_ERROR = 3 * math.log(10000.0) + 6


@invariant("sinusoidal", "bounded", "sinusoidal", seed=201, variants=_supported)
def bounded(adapter, dtype, rng, convention):
    """Every entry lies in [-1, 1] (times MLX's default scale sqrt(2/d))."""
    positions = rng.integers(0, 2**20, size=32)
    table = _table(adapter, convention, positions, dtype)
    expect_true(np.abs(table) <= 1 + 4 * EPS[dtype], f"{convention}: |PE| <= 1")
    return 0.0


@invariant("sinusoidal", "shift-linearity", "sinusoidal", seed=202, variants=_supported)
def shift_linearity(adapter, dtype, rng, convention):
    """[s(p+k), c(p+k)] = [s(p) c(k) + c(p) s(k), c(p) c(k) - s(p) s(k)] for every frequency pair.

    R(k) is read from the implementation's own encoding of the shift k (for fairseq, of the token
    whose row sits k rows above row 0, i.e. position k - padding_idx - 1 = k - 2).  Three tables
    enter each identity, so three times the class's angle bound is allowed.
    """
    positions = ints([0, 1, 2, 5, 9, 100, 1000])
    worst = 0.0
    offset = 2 if convention == "fairseq" else 0  # fairseq rows are position + padding_idx + 1
    for shift in (3, 50, 4096):
        a = _table(adapter, convention, positions, dtype)
        b = _table(adapter, convention, positions + shift, dtype)
        r = _table(adapter, convention, ints([shift - offset]), dtype)[0]  # the encoding of angle shift * w
        angle = float(positions.max() + shift + offset)  # every frequency is at most 1
        exact = 8 * EPS[dtype] * (4 + angle)
        tol = 3 * phase_tolerance(adapter, "sinusoidal", dtype, angle, exact, frequency_error=FREQUENCY_ERROR)
        for sc, cc in _pairs(convention, DIM):
            s, c, sk, ck = a[:, sc], a[:, cc], r[sc], r[cc]
            worst = max(worst, expect_close(b[:, sc], s * ck + c * sk, tol, f"{convention} k={shift}: sin"))
            worst = max(worst, expect_close(b[:, cc], c * ck - s * sk, tol, f"{convention} k={shift}: cos"))
    return worst


@invariant("sinusoidal", "cos-first-halves", "sinusoidal", seed=203, requires=_t2t)
def cos_first_halves(adapter, dtype, rng):
    """With cos_first, row 0 starts with dim/2 ones (cos 0) then zeros, and each pair (j, n + j) of
    [cos | sin] columns satisfies cos^2 + sin^2 = 1 (the odd width's zero column stays last)."""
    dim = 7
    positions = ints([0, *rng.integers(1, 4096, size=15)])
    options = {"cos_first": True}
    table = host(adapter.sinusoidal(positions, dim, convention="tensor2tensor", options=options, dtype=dtype))
    half = dim // 2
    tol = 16 * EPS[dtype]
    worst = expect_close(table[0], np.array([1.0] * half + [0.0] * (dim - half)), tol, "row 0: [1.. | 0..]")
    norms = table[:, :half] ** 2 + table[:, half : 2 * half] ** 2
    worst = max(worst, expect_close(norms, np.ones_like(norms), tol, "cos^2 + sin^2 = 1 per pair"))
    return max(worst, expect_close(table[:, -1], np.zeros(len(positions)), 0.0, "the zero column last"))


@invariant("sinusoidal", "standardised-table", "sinusoidal", seed=204, requires=_patchtst)
def standardised_table(adapter, dtype, rng):
    """Over its whole table of N rows PatchTST's encoding has mean 0 and sample std 1/10 (divisor
    N d - 1), for any N; the population std (divisor N d) is 1/10 * sqrt((N d - 1) / (N d))."""
    worst = 0.0
    for rows, dim in ((1, 4), (7, 6), (int(rng.integers(20, 200)), 16)):
        table = host(
            adapter.sinusoidal(
                ints(range(rows)), dim, convention="patchtst", options={"num_positions": rows}, dtype=dtype
            )
        ).astype(np.float64)
        count = rows * dim
        tol = 64 * EPS[dtype] * math.sqrt(count)
        worst = max(worst, expect_close(np.asarray(table.mean()), np.asarray(0.0), tol, f"N={rows}: mean 0"))
        std = np.asarray(table.std(ddof=1))
        worst = max(worst, expect_close(std, np.asarray(0.1), tol, f"N={rows}: sample std 1/10"))
    return worst
