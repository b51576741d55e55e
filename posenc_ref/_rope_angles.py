r"""Accurate RoPE phases: cos(m*theta) and sin(m*theta) without a rounded product m*theta.

A float product ``m * theta`` is wrong by up to half an ulp of the product: at
``m = 2**20`` and ``theta = 1`` that is 0.03 rad in float32 and 6e-11 rad in
float64, far above the last bit of a cosine.  This module computes the phase in
*turns* (``theta / 2pi``) with exact arithmetic instead:

1. The turns ``t = theta / 2pi`` of each frequency come from the host, as exact
   rationals (:func:`host_pieces`), or from an ``inv_freq`` array whose values
   are taken as exact (:func:`device_pieces`, an error-free product with a
   two-float ``1/2pi``).
2. The integer position is cut into ``D`` digits of ``v`` bits,
   ``m = sum_j m_j 2**(v j)``, so that ``m t = sum_j m_j frac(2**(v j) t)``
   modulo 1.
3. Each ``u_j = frac(2**(v j) t)``, centred in ``[-1/2, 1/2]``, is stored as
   ``q0 + q1 + q2``: ``q0`` a multiple of ``2**-v``, ``q1`` a multiple of
   ``2**-p`` (``p`` = significand bits of the compute dtype) with
   ``|q1| <= 2**-(v+1)``, and a small rest ``|q2| <= 2**-(p+1)``.  With
   ``2 v <= p`` and ``0 <= m_j < 2**v`` the products ``m_j q0`` and ``m_j q1``
   are exact, so are their centred fractional parts ``x - round(x)``, and so is
   their running sum reduced to ``[-1/2, 1/2]`` (every term lies on the grid
   ``2**-p``).  Only ``sum_j m_j q2`` is rounded, an absolute error below
   ``D 2**(v-2p)`` turns.
4. The exact sum is split into a quarter-turn count ``k`` and a remainder
   ``|r| <= 1/8`` (exact), the small terms are added once, and
   ``cos/sin(2 pi r)`` are rotated by ``k`` quarter turns (swaps and signs).

Formats: float64 uses ``v = 26, D = 2`` (exact for ``|m| < 2**52``); float32
uses ``v = 12, D = 3`` (exact for ``|m| < 2**36``).  The resulting error is
about one rounding of ``2 pi r`` plus the backend's ``cos``/``sin`` on
``|2 pi r| <= pi/4`` (Taylor polynomials for MLX float64, whose ``cos`` and
``sin`` have float32 accuracy): a few ulp in float64, about 1e-7 absolute in
float32, at any position in range.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from . import _compat

__all__ = ["PI", "TurnFormat", "device_pieces", "host_pieces", "reduced_cos_sin", "turn_format"]

# pi to 80 significant digits; the library's only high-precision constant.
PI = decimal.Decimal("3.1415926535897932384626433832795028841971693993751058209749445923078164062862090")
_TWO_PI = 2 * Fraction(PI)

Pieces = list[tuple[Any, Any, Any]]


@dataclass(frozen=True)
class TurnFormat:
    """Digit layout for one compute dtype: significand bits, digit bits, digit count."""

    mantissa: int
    digit_bits: int
    digits: int


_FLOAT64 = TurnFormat(mantissa=53, digit_bits=26, digits=2)
_FLOAT32 = TurnFormat(mantissa=24, digit_bits=12, digits=3)


def turn_format(xp: Any, dtype: Any) -> TurnFormat:
    """The :class:`TurnFormat` for ``dtype`` (float64 or float32) of ``xp``."""
    return _FLOAT64 if dtype == xp.float64 else _FLOAT32


def _round_to_grid(x: Fraction, bits: int) -> Fraction:
    """``x`` rounded to the nearest multiple of ``2**-bits``."""
    scale = 1 << bits
    return Fraction(round(x * scale), scale)


def _round_significant(x: Fraction, bits: int) -> Fraction:
    """``x`` rounded to ``bits`` significant bits."""
    if x == 0:
        return x
    exponent = abs(x.numerator).bit_length() - x.denominator.bit_length()
    while abs(x) >= Fraction(2) ** (exponent + 1):
        exponent += 1
    while abs(x) < Fraction(2) ** exponent:
        exponent -= 1
    return _round_to_grid(x, bits - 1 - exponent)


def _split_turn(u: Fraction, fmt: TurnFormat) -> tuple[Fraction, Fraction, Fraction]:
    """``u`` (centred in [-1/2, 1/2]) as ``q0 + q1 + q2`` on the grids of step 3."""
    q0 = _round_to_grid(u, fmt.digit_bits)
    q1 = _round_to_grid(u - q0, fmt.mantissa)
    return q0, q1, u - q0 - q1


@functools.lru_cache(maxsize=64)
def _host_columns(turns: tuple[Fraction, ...], fmt: TurnFormat) -> tuple[tuple[list[float], ...], ...]:
    """Per digit ``j``: the lists ``(q0, q1, q2)`` of ``frac(2**(v j) t)``, centred, for each turn ``t``."""
    out = []
    for j in range(fmt.digits):
        shift = 1 << (fmt.digit_bits * j)
        columns: tuple[list[float], list[float], list[float]] = ([], [], [])
        for t in turns:
            scaled = t * shift
            for column, value in zip(columns, _split_turn(scaled - round(scaled), fmt), strict=True):
                column.append(float(value))
        out.append(columns)
    return tuple(out)


def host_pieces(turns: Sequence[Fraction], fmt: TurnFormat, *, xp: Any, dtype: Any, device: Any) -> Pieces:
    """Per digit ``j``: arrays ``(q0, q1, q2)`` of ``frac(2**(v j) t)`` for exact turns ``t``."""
    return [
        tuple(_compat.asarray(c, xp=xp, dtype=dtype, device=device) for c in columns)
        for columns in _host_columns(tuple(turns), fmt)
    ]


def _veltkamp(a: Any, fmt: TurnFormat) -> tuple[Any, Any]:
    """Split float ``a`` into two halves of at most ``p/2`` significant bits each."""
    c = a * float((1 << ((fmt.mantissa + 1) // 2)) + 1)
    high = c - (c - a)
    return high, a - high


def device_pieces(inv_freq: Any, fmt: TurnFormat, *, xp: Any) -> Pieces:
    """Like :func:`host_pieces`, taking the values of ``inv_freq`` (of the format's dtype) as exact.

    ``t = theta / 2pi`` is formed as ``hi + lo`` with Dekker's error-free
    product against a two-float ``1/2pi``, so ``t`` is known to about ``2p``
    bits; each of ``hi`` and ``lo`` is then cut on the grids of step 3 and the
    cuts are added (exactly for ``q0`` and ``q1``).
    """
    theta = inv_freq
    inverse = 1 / _TWO_PI
    c_hi = _round_significant(inverse, fmt.mantissa)
    c_lo = float(inverse - c_hi)
    b_hi = _round_significant(c_hi, fmt.mantissa // 2)
    b_lo, b_hi, c_hi = float(c_hi - b_hi), float(b_hi), float(c_hi)
    hi = theta * c_hi
    a_hi, a_lo = _veltkamp(theta, fmt)
    lo = (((a_hi * b_hi - hi) + a_hi * b_lo) + a_lo * b_hi) + a_lo * b_lo + theta * c_lo
    grid_v, grid_p = float(1 << fmt.digit_bits), float(1 << fmt.mantissa)
    pieces = []
    for j in range(fmt.digits):
        shift = float(1 << (fmt.digit_bits * j))
        total = None
        for part in (hi, lo):
            u = part * shift
            u = u - xp.round(u)
            q0 = xp.round(u * grid_v) / grid_v
            rest = u - q0
            q1 = xp.round(rest * grid_p) / grid_p
            cut = (q0, q1, rest - q1)
            total = cut if total is None else tuple(s + c for s, c in zip(total, cut, strict=True))
        pieces.append(total)
    return pieces


# Taylor coefficients of sin(x)/x and cos(x) in x**2; on |x| <= 0.8 the first
# omitted terms are below 1e-21.
_SIN = [(-1) ** k / math.factorial(2 * k + 1) for k in range(10)]
_COS = [(-1) ** k / math.factorial(2 * k) for k in range(11)]


def _horner(x2: Any, coefficients: list[float]) -> Any:
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * x2 + c
    return acc


def _cos_sin_small(phase: Any, *, xp: Any, dtype: Any) -> tuple[Any, Any]:
    """cos and sin of ``|phase| <= pi/4`` (a little more), accurate to about an ulp.

    The backend's functions where they are accurate; Taylor polynomials for
    MLX float64, whose ``cos``/``sin`` have float32 accuracy.
    """
    if dtype != xp.float64 or _compat.has_accurate_float64_math(xp):
        return xp.cos(phase), xp.sin(phase)
    x2 = phase * phase
    return _horner(x2, _COS), phase * _horner(x2, _SIN)


def _centre(x: Any, xp: Any) -> Any:
    return x - xp.round(x)


def reduced_cos_sin(
    positions: Any, pieces: Pieces, fmt: TurnFormat, *, xp: Any, dtype: Any
) -> tuple[Any, Any]:
    """``cos`` and ``sin`` of ``2 pi m t``, shape ``positions.shape + (n,)``, in ``dtype``."""
    rest = xp.expand_dims(positions, axis=-1)
    step = 1 << fmt.digit_bits
    exact = None
    small = None
    for j, (q0, q1, q2) in enumerate(pieces):
        if j < fmt.digits - 1:
            digit, rest = rest % step, rest // step
        else:
            digit = rest
        m = xp.astype(digit, dtype)
        for q in (q0, q1):
            term = _centre(m * q, xp)
            exact = term if exact is None else _centre(exact + term, xp)
        term = m * q2
        small = term if small is None else small + term
    quarter = xp.round(exact * 4.0)
    r = (exact - quarter * 0.25) + small
    two_pi_hi = float(_TWO_PI)
    phase = r * two_pi_hi + r * float(_TWO_PI - Fraction(two_pi_hi))
    c, s = _cos_sin_small(phase, xp=xp, dtype=dtype)
    k = xp.where(quarter < 0, quarter + 4.0, quarter)
    odd = (k == 1.0) | (k == 3.0)
    a, b = xp.where(odd, s, c), xp.where(odd, c, s)
    cos = xp.where((k == 1.0) | (k == 2.0), -a, a)
    sin = xp.where(k >= 2.0, -b, b)
    return cos, sin
