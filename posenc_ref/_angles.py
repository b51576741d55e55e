r"""Angles ``p * omega`` reduced modulo one turn, accurate to a few ulp for any integer ``p``.

A float product ``p * omega`` carries a relative error of one ulp, i.e. an
absolute error of about ``p * omega * 2**-53`` (float64) or ``2**-24``
(float32) radians: already ``2e-10`` at ``p = 2**20`` in float64 and a
useless ``0.06`` rad in float32.  Sinusoidal encodings only need the angle
modulo ``2*pi``, so we compute it in *turns* and keep only the fraction.

Host side (Python :mod:`decimal`, 42 digits), each frequency becomes a number
of turns per position, ``f = omega / (2*pi)``.  The integer positions are cut
into ``K``-bit chunks, ``p = sum_i c_i * 2**(K*i)`` (``K = 26`` for float64,
``12`` for float32; integer arithmetic, exact).  For chunk ``i`` the fraction
``g = frac(f * 2**(K*i))`` is split into ``g_hi`` (``m - K`` bits after the
binary point, ``m`` = mantissa bits) and ``g_lo = g - g_hi``.  Then

.. math::

    \operatorname{frac}(p f) = \operatorname{frac}\Big(\sum_i
        \operatorname{frac}(c_i g_{hi,i}) + c_i g_{lo,i}\Big)

where ``c_i * g_hi`` is exact (at most ``m`` significant bits), so its
fraction is exact, and ``|c_i * g_lo| <= 1/2`` is rounded once.  The turn
count stays in ``[-1/2, 1/2]``; its error is a few units of ``2**-m`` whatever
the size of ``p``.  :func:`sin_cos` evaluates sine and cosine of the turn
count; where a backend's float64 ``sin``/``cos`` are not float64-accurate
(MLX), it reduces to a quarter turn exactly and sums Taylor series instead.
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Sequence
from decimal import Decimal
from typing import Any

from . import _compat

__all__ = ["CONTEXT", "PI", "reduced_sin_cos", "sin_cos"]

CONTEXT = decimal.Context(prec=42)
"""Decimal context for host-side frequencies: 42 digits cover 2**-139."""

PI = Decimal("3.14159265358979323846264338327950288419716939937510582097494459")
_TWO_PI_HI = float(2 * PI)
_TWO_PI_LO = float(CONTEXT.subtract(2 * PI, Decimal(_TWO_PI_HI)))

_MANTISSA_BITS = {"float64": 53, "float32": 24}


def _integer_bits(xp: Any, dtype: Any) -> int:
    info = xp.iinfo(dtype)
    return int(info.max).bit_length() + (1 if int(info.min) < 0 else 0)


@functools.lru_cache(maxsize=256)
def _split_turns(
    turns: tuple[Decimal, ...], multiplier: int, fmt: tuple[int, int]
) -> tuple[list[float], ...]:
    """``(g_hi, g_mid, g_lo)`` of ``g = frac(multiplier * f)``, centred, for each ``f``.

    ``fmt = (m, K)``: ``g_hi`` lies on the grid ``2**-(m-K)``, ``g_mid`` on
    ``2**-m`` with ``|g_mid| <= 2**-(m-K+1)``, and ``g_lo`` is the small rest.
    """
    mantissa, chunk_bits = fmt
    columns: tuple[list[float], ...] = ([], [], [])
    with decimal.localcontext(CONTEXT):
        coarse, fine = Decimal(2) ** (mantissa - chunk_bits), Decimal(2) ** mantissa
        for f in turns:
            g = f * multiplier
            g -= g.to_integral_value()
            g_hi = (g * coarse).to_integral_value() / coarse
            g_mid = ((g - g_hi) * fine).to_integral_value() / fine
            for column, value in zip(columns, (g_hi, g_mid, g - g_hi - g_mid), strict=True):
                column.append(float(value))
    return columns


def _frac(x: Any, xp: Any) -> Any:
    """``x - round(x)``: exact, in ``[-1/2, 1/2]``."""
    return x - xp.round(x)


def _chunks(positions: Any, chunk_bits: int, xp: Any) -> list[Any]:
    """``c_i`` with ``p = sum_i c_i 2**(K i)``; all but the last in ``[0, 2**K)``; exact.

    As many chunks as the dtype needs, or as the values need where they can be
    read (zero chunks add exactly nothing, so the result is the same).
    """
    bits = _integer_bits(xp, positions.dtype)
    if _compat.values_known(positions) and math.prod(positions.shape):
        largest = max(int(xp.max(positions)), -int(xp.min(positions)))
        bits = min(bits, largest.bit_length() + 1)
    count = max(1, math.ceil(bits / chunk_bits))
    out, rest = [], positions
    for _ in range(count - 1):
        out.append(xp.remainder(rest, 2**chunk_bits))
        rest = xp.floor_divide(rest, 2**chunk_bits)
    return [*out, rest]


def reduced_sin_cos(
    positions: Any, turns: Sequence[Decimal], *, xp: Any, dtype: Any, offset: int = 0
) -> tuple[Any, Any]:
    """``sin`` and ``cos`` of ``2*pi*(p + offset)*f`` for every position ``p`` and frequency ``f``.

    ``positions`` is an integer array of any shape; ``turns`` are non-negative
    turns per unit position, computed host-side with :data:`CONTEXT`; ``dtype``
    is ``xp.float64`` or ``xp.float32``.  ``offset`` is applied host-side (no
    integer overflow).  Returns two arrays of shape
    ``positions.shape + (len(turns),)`` on the positions' device.
    """
    mantissa = _MANTISSA_BITS["float64" if dtype == xp.float64 else "float32"]
    fmt = (mantissa, mantissa // 2)
    dev = _compat.device(positions)
    turns = tuple(turns)
    factors = [xp.expand_dims(xp.astype(c, dtype), axis=-1) for c in _chunks(positions, fmt[1], xp)]
    multipliers = [2 ** (fmt[1] * i) for i in range(len(factors))]
    if offset:  # the offset's turns: one more chunk, with c = 1
        factors.append(1.0)
        multipliers.append(offset)
    exact, small = 0.0, 0.0
    for c, multiplier in zip(factors, multipliers, strict=True):
        g_hi, g_mid, g_lo = (
            _compat.asarray(v, xp=xp, dtype=dtype, device=dev) for v in _split_turns(turns, multiplier, fmt)
        )
        # Sums of two values in [-1/2, 1/2] on the grid 2**-m: exact.
        exact = _frac(exact + _frac(c * g_hi, xp), xp)
        exact = _frac(exact + _frac(c * g_mid, xp), xp)
        small = small + c * g_lo
    return _sin_cos(exact, small, xp=xp)


# Taylor coefficients of sin(x)/x and cos(x) in x**2; for |x| <= pi/4 the first
# omitted terms are below 1e-19 relative.
_SIN = [(-1) ** k / math.factorial(2 * k + 1) for k in range(10)]
_COS = [(-1) ** k / math.factorial(2 * k) for k in range(11)]


def _horner(x2: Any, coefficients: list[float]) -> Any:
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * x2 + c
    return acc


def _sin_cos(exact: Any, small: Any, *, xp: Any) -> tuple[Any, Any]:
    """``sin`` and ``cos`` of ``2*pi*(exact + small)``; ``exact`` in ``[-1/2, 1/2]``, ``small`` tiny.

    The turn count is reduced exactly to a quarter-turn count ``q`` plus
    ``|r| <= 1/8``; ``2*pi*r`` uses a two-term ``2*pi``.  Sine and cosine of
    ``|x| <= pi/4`` come from ``xp`` except for MLX float64 (see
    ``_compat.has_accurate_float64_math``): Taylor polynomials there.
    """
    quarter = xp.round(exact * 4)
    r = (exact - quarter / 4) + small
    x = r * _TWO_PI_HI + r * _TWO_PI_LO
    if exact.dtype == xp.float64 and not _compat.has_accurate_float64_math(xp):
        x2 = x * x
        s, c = x * _horner(x2, _SIN), _horner(x2, _COS)
    else:
        s, c = xp.sin(x), xp.cos(x)
    q = xp.remainder(quarter, 4.0)
    sin = xp.where(q == 0, s, xp.where(q == 1, c, xp.where(q == 2, -s, -c)))
    cos = xp.where(q == 0, c, xp.where(q == 1, -s, xp.where(q == 2, -c, s)))
    return sin, cos


def sin_cos(turns: Any, *, xp: Any) -> tuple[Any, Any]:
    """``sin`` and ``cos`` of ``2*pi*turns`` for a float array of turns in ``[-1/2, 1/2]``.

    Accurate to about an ulp of the dtype on every backend (MLX float64 included).
    """
    return _sin_cos(turns, 0.0, xp=xp)
