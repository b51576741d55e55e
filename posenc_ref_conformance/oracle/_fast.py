"""Correctly rounded RoPE cos/sin tables for many positions: double-double products, proven roundings.

``oracle.rope.rope_cos_sin`` evaluates every element in mpmath (about 30 us for a
cos and a sin at 80 digits), which for a model's whole context (131072 positions
x 64 frequencies) takes minutes.  :func:`rope_cos_sin_table` gives the same
float64 values (the exact ``a cos(m theta)``, ``a sin(m theta)`` rounded once,
to nearest) in seconds, vectorised with NumPy:

1. Write ``|m|`` in base ``B = 2**b``: ``|m| = sum_t d_t B**t``.  For every level
   ``t`` and digit ``d`` that occurs, mpmath computes ``exp(i d B**t theta)``
   from the exact angle (``theta`` is a float64, taken exactly) at 140 bits and
   stores it as a double-double (hi + lo, |error| <= 2**-106).
2. ``exp(i m theta)`` is the product of one table entry per level, multiplied
   in double-double complex arithmetic (error-free products by Dekker's split;
   Joldes, Muller, Popescu, "Tight and rigorous error bounds for basic building
   blocks of double-word arithmetic", ACM TOMS 2017), then conjugated for
   negative ``m`` and scaled by ``a``.  Each complex product of unit-modulus
   factors adds at most ``2**-100`` absolute error; with ``L <= 8`` levels the
   total stays below ``|a| 2**-96``.
3. Ziv's rounding test: with the result ``hi + lo`` and the bound
   ``E = |a| 2**-90`` (64 times the derived one), the exact value lies in
   ``[hi + lo - E, hi + lo + E]``; when that interval sits strictly inside the
   rounding interval of ``hi`` (half the gap to each float64 neighbour), ``hi``
   *is* the correctly rounded value.  Every element that fails the test (exact
   zeros, values near a rounding boundary: a few in a million) is recomputed
   with mpmath at the working precision, exactly as ``rope_cos_sin`` does.

Zero frequencies (the unrotated tail of ``proportional``) and position 0 are
exact (``cos = a``, ``sin = 0``).  Imports NumPy and mpmath, nothing from
``posenc_ref``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from ._numeric import exact, mp, round_float64

__all__ = ["TableStats", "rope_cos_sin_table"]

#: Digit width of the position decomposition is at most this many bits (tables of <= 1024 entries).
_MAX_DIGIT_BITS = 10
#: Levels the error bound is derived for.
_MAX_LEVELS = 8
#: The rounding test's error bound per unit of |attention factor| (64 x the derived 2**-96).
_BOUND = 2.0**-90
#: Elements per block of the vectorised product (keeps temporaries small).
_BLOCK_ELEMENTS = 1 << 16
_SPLIT = 134217729.0  # 2**27 + 1


@dataclasses.dataclass
class TableStats:
    """What one :func:`rope_cos_sin_table` call did: elements, proven by the test, recomputed in mpmath."""

    elements: int = 0
    exact: int = 0
    recomputed: int = 0
    table_entries: int = 0


# --- double-double arithmetic on arrays (error-free transformations) --------------------------------------


def _two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fast_two_sum(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    s = a + b
    return s, b - (s - a)


def _split(a: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    t = _SPLIT * a
    hi = t - (t - a)
    return hi, a - hi


def _two_prod(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = a * b
    ah, al = _split(a)
    bh, bl = _split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _mul(ah: np.ndarray, al: np.ndarray, bh: np.ndarray, bl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Double-double product (DWTimesDW, relative error <= 5 u**2 for u = 2**-53)."""
    p, e = _two_prod(ah, bh)
    return _fast_two_sum(p, e + (ah * bl + al * bh))


def _add(ah: np.ndarray, al: np.ndarray, bh: np.ndarray, bl: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Accurate double-double sum (AccurateDWPlusDW, relative error <= 3 u**2)."""
    s, e = _two_sum(ah, bh)
    t, f = _two_sum(al, bl)
    s, e = _fast_two_sum(s, e + t)
    return _fast_two_sum(s, e + f)


def _complex_mul(
    x: tuple[np.ndarray, ...], y: tuple[np.ndarray, ...]
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(re hi, re lo, im hi, im lo) of x * y, each given as (re hi, re lo, im hi, im lo)."""
    rr = _mul(x[0], x[1], y[0], y[1])
    ii = _mul(x[2], x[3], y[2], y[3])
    ri = _mul(x[0], x[1], y[2], y[3])
    ir = _mul(x[2], x[3], y[0], y[1])
    re = _add(rr[0], rr[1], -ii[0], -ii[1])
    im = _add(ri[0], ri[1], ir[0], ir[1])
    return re[0], re[1], im[0], im[1]


def _proven(hi: np.ndarray, lo: np.ndarray, bound: float) -> np.ndarray:
    """Where ``hi`` is the correctly rounded value of every number within ``bound`` of ``hi + lo``."""
    up = np.nextafter(hi, np.inf) - hi
    down = hi - np.nextafter(hi, -np.inf)
    return (hi != 0) & (lo + 2 * bound < 0.5 * up) & (lo - 2 * bound > -0.5 * down)


# --- the table ----------------------------------------------------------------------------------------------


def _digit_bits(max_abs: int, count: int) -> tuple[int, int]:
    """(bits per digit, levels) for ``count`` positions up to ``max_abs``: the cheapest split.

    Cost per frequency, in microseconds measured once: ~70 per table entry (mpmath), ~0.16 per
    position and extra level (one vectorised complex double-double product).
    """
    bits = max(max_abs.bit_length(), 1)
    options = []
    for levels in range(-(-bits // _MAX_DIGIT_BITS), _MAX_LEVELS + 1):
        width = -(-bits // levels)
        entries = min(levels << width, levels * count)
        options.append((70 * entries + 0.16 * count * (levels - 1), width, levels))
    if not options:
        msg = f"positions must be below 2**{_MAX_DIGIT_BITS * _MAX_LEVELS}; got {max_abs}"
        raise ValueError(msg)
    _, width, levels = min(options)
    return width, levels


def _entries(inv_freq: Sequence[float], digits: list[int], scale: int) -> np.ndarray:
    """[4, len(digits), n]: exp(i d scale theta_j) as (re hi, re lo, im hi, im lo), from exact angles."""
    out = np.zeros((4, len(digits), len(inv_freq)))
    with mp.workprec(140):
        for j, theta in enumerate(inv_freq):
            t = exact(float(theta)) * scale
            for k, d in enumerate(digits):
                z = mp.expj(t * d)
                for row, part in ((0, z.real), (2, z.imag)):
                    hi = float(part)  # hi + lo within 2**-106 |part| needs only faithful conversions
                    out[row, k, j], out[row + 1, k, j] = hi, float(part - hi)
    return out


def _exact_element(position: int, theta: float, factor: float) -> tuple[float, float]:
    """mpmath at the working precision, as ``oracle.rope.rope_cos_sin``: (a cos(m theta), a sin(m theta))."""
    angle = exact(position) * exact(theta)
    a = exact(factor)
    return round_float64(a * mp.cos(angle)), round_float64(a * mp.sin(angle))


def _scaled(hi: np.ndarray, lo: np.ndarray, factor: float) -> tuple[np.ndarray, np.ndarray]:
    """factor * (hi + lo) as a double-double."""
    p, e = _two_prod(hi, np.full_like(hi, factor))
    return _fast_two_sum(p, e + lo * factor)


def rope_cos_sin_table(
    positions: Sequence[int] | np.ndarray,
    inv_freq: Sequence[float],
    attention_factor: float = 1.0,
    *,
    stats: TableStats | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """``(cos, sin)`` of shape ``[len(positions), len(inv_freq)]``: ``a cos(m theta_j)`` rounded once.

    The same float64 values as rounding ``oracle.rope.rope_cos_sin`` (before its
    layout expansion) element by element, computed as the module docstring says;
    the working precision is that of the elements the rounding test sends back
    to mpmath.  ``positions``: int64 values of magnitude below ``2**62``;
    ``inv_freq`` and ``attention_factor``: float64 values, taken exactly.
    """
    pos = np.asarray(positions, dtype=np.int64).reshape(-1)
    freqs = [float(t) for t in inv_freq]
    factor = float(attention_factor)
    stats = stats if stats is not None else TableStats()
    n = len(freqs)
    stats.elements += pos.size * n
    cos, sin = np.full((pos.size, n), factor), np.zeros((pos.size, n))
    if pos.size == 0 or n == 0:
        return cos, sin
    if int(pos.min()) <= -(2**62) or int(pos.max()) >= 2**62:
        msg = "positions must have magnitude below 2**62"
        raise ValueError(msg)
    magnitude = np.abs(pos)
    bits, levels = _digit_bits(int(magnitude.max()), pos.size)
    digits = [(magnitude >> (bits * t)) & ((1 << bits) - 1) for t in range(levels)]
    tables = []
    for t, d in enumerate(digits):
        present = np.unique(d)
        lookup = np.zeros(1 << bits, dtype=np.intp)
        lookup[present] = np.arange(present.size)
        tables.append((_entries(freqs, present.tolist(), 1 << (bits * t)), lookup))
        stats.table_entries += present.size * n
    exact_columns = np.asarray([t == 0 for t in freqs])
    bound = abs(factor) * _BOUND
    for start in range(0, pos.size, max(1, _BLOCK_ELEMENTS // n)):
        block = slice(start, min(start + max(1, _BLOCK_ELEMENTS // n), pos.size))
        entries, lookup = tables[0]
        z = tuple(entries[:, lookup[digits[0][block]]])
        for (entries, lookup), d in zip(tables[1:], digits[1:], strict=True):
            z = _complex_mul(z, tuple(entries[:, lookup[d[block]]]))
        sign = np.where(pos[block] < 0, -1.0, 1.0)[:, None]
        c_hi, c_lo = _scaled(z[0], z[1], factor)
        s_hi, s_lo = _scaled(z[2], z[3], factor)
        exact_here = (pos[block] == 0)[:, None] | exact_columns[None, :]
        cos[block] = np.where(exact_here, factor, c_hi)
        sin[block] = np.where(exact_here, 0.0, s_hi * sign)
        good = exact_here | (_proven(c_hi, c_lo, bound) & _proven(s_hi, s_lo, bound))
        stats.exact += int(exact_here.sum())
        for k, j in zip(*np.nonzero(~good), strict=True):
            row = start + int(k)
            cos[row, j], sin[row, j] = _exact_element(int(pos[row]), freqs[j], factor)
            stats.recomputed += 1
    return cos, sin
