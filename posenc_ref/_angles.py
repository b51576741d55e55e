r"""Accurate ``cos``/``sin`` of ``2 pi m t`` at integer positions ``m``, and MLX-safe ``exp``.

The library's one angle reduction (sinusoidal and RoPE tables, Sandwich).  A
float product ``m * omega`` is off by half an ulp of itself (0.03 rad at
``m = 2**20`` in float32, 1e-10 rad at ``2**24`` in float64), so the phase is
formed in turns ``t = omega / 2pi`` with exact arithmetic in the compute dtype
(``p`` significand bits, ``v`` digit bits, grid ``2**-F``):

1. ``m = sum_j m_j 2**(v j)``, balanced digits ``|m_j| <= 2**(v-1)`` (integer
   ops), as many as the largest ``|m|`` needs: read from the values on eager
   backends, else from the dtype.  Zero digits add exactly nothing.
2. ``frac(2**(v j) t)`` (centred) is ``h_j`` on the grid ``2**-F`` plus tails in
   quarter turns: float64 an exact ``mid_j`` on ``2**-p`` and a rounded
   ``low_j``; float32 one rounded tail.  Host pieces come from exact rationals,
   device pieces from ``inv_freq`` values taken as exact (Dekker's product with
   a two-float ``1/2pi``, then error-free sums).
3. ``E = sum_j m_j h_j`` is exact (``F`` bounds it to ``p`` bits); whole turns go
   (``E - round(E)``), and ``4 E = k + a``, ``k = round(4 E)`` in ``{-2..2}``: exact.
4. ``r = a + sum_j m_j mid_j + sum_j m_j low_j``: the ``mid`` sums are exact too
   (grid ``2**-p``, ``|r| <= 1/2 + 2**-5``); only the tiny ``low`` terms round
   (float32: ``r = a + sum_j m_j tail_j``, rounded).
5. ``cos``/``sin`` of ``x = r pi/2`` (Taylor sums on MLX float64, whose
   ``cos``/``sin``/``exp`` have float32 accuracy), rotated by ``k`` quarter turns
   (products with 0 and +-1: exact).

Host arrays (NumPy, PyTorch CPU) are processed in row blocks that stay in cache;
the values do not depend on the blocking.

Error bound.  Float64 (``v = 23``, ``F = 30``): ``r`` carries one rounding
relative to itself (so also near the zeros of cos and sin, where it is small),
``x`` one more plus ``0.35 * 2**-53`` from ``pi/2``, then the backend's
``cos``/``sin`` on ``|x| <= 0.84``: a few ulp (measured <= 2 ulp to ``2**24``).
Float32 (``v = 10``, ``F = 13``): the rounded tail (at most ``digits/8`` quarter
turn) costs about ``2**-26`` absolute; with ``x`` and ``cos``/``sin``, measured
< 1.2e-7 to ``2**20``.  Device pieces know ``t`` to ``2p`` bits: ``inv_freq``
phases stay accurate to about ``|m| = 2**50`` (float64) or ``2**21`` (float32).
"""

from __future__ import annotations

import decimal
import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from . import _compat
from ._mlx_float64 import cos_sin_small

__all__ = ["PI", "cos_sin", "cos_sin_turns", "power_turns"]

# pi to 80 significant digits; the library's only high-precision constant.
PI = decimal.Decimal("3.1415926535897932384626433832795028841971693993751058209749445923078164062862090")
_INV_TWO_PI = 1 / (2 * Fraction(PI))
_TURNS_CONTEXT = decimal.Context(prec=42)  # host-side frequencies: 42 digits cover 2**-139


def power_turns(base: float, dim: int, exponents: range) -> tuple[decimal.Decimal, ...]:
    """``base**(-2k/dim) / (2 pi)`` for ``k`` in ``exponents``, to 42 digits (Vaswani and Sandwich).

    ``base`` is read as the decimal number it prints as (``1e4`` is exactly 10**4).
    """
    ctx = _TURNS_CONTEXT
    log_base = ctx.ln(decimal.Decimal(repr(float(base))))
    two_pi = ctx.multiply(2, PI)
    return tuple(
        ctx.divide(ctx.exp(ctx.multiply(ctx.divide(-2 * k, dim), log_base)), two_pi) for k in exponents
    )


@dataclass(frozen=True)
class _Format:
    """Significand bits ``p``, digit bits ``v``, grid bits ``F`` of ``h``, tails per digit."""

    mantissa: int
    digit_bits: int
    grid_bits: int
    tails: int  # 2: an exact mid and a rounded low tail; 1: one rounded tail


# int64 needs 3 (float64) or 7 (float32) digits; (digits + 1) * 2**(v-2) * 2**F <= 2**p keeps
# sum_j m_j h_j exact (+ 1: a host offset); the tails sum to at most 2**-5 (float32: 1) quarter turn.
_FLOAT64 = _Format(mantissa=53, digit_bits=23, grid_bits=30, tails=2)
_FLOAT32 = _Format(mantissa=24, digit_bits=10, grid_bits=13, tails=1)


def _digit_count(positions: Any, fmt: _Format, xp: Any) -> int:
    """Balanced digits for the largest ``|m|``: from the values where readable, else the dtype."""
    info = xp.iinfo(positions.dtype)
    largest = max(int(info.max), -int(info.min))
    if _compat.values_known(positions) and math.prod(positions.shape):
        largest = max(int(xp.max(positions)), -int(xp.min(positions)))
    return max(1, -(-(largest.bit_length() + 1) // fmt.digit_bits))


def _digits(positions: Any, count: int, fmt: _Format, *, xp: Any, dtype: Any) -> list[Any]:
    """``m_j`` in ``dtype``, shape ``positions.shape + (1,)``; exact integer arithmetic."""
    full, half = 2**fmt.digit_bits, 2 ** (fmt.digit_bits - 1)
    rest, out = positions, []
    for _ in range(count - 1):
        low, rest = xp.remainder(rest, full), xp.floor_divide(rest, full)
        up = low >= half
        rest = xp.where(up, rest + 1, rest)
        low = _compat.astype(low, dtype, xp=xp)
        out.append(xp.where(up, low - float(full), low))
    out.append(_compat.astype(rest, dtype, xp=xp))
    return [xp.expand_dims(m, axis=-1) for m in out]


def _grid(x: Fraction, bits: int) -> Fraction:
    return Fraction(round(x * 2**bits), 2**bits)


@functools.lru_cache(maxsize=128)
def _host_columns(turns: tuple[Any, ...], fmt: _Format, weights: tuple[int, ...]) -> tuple[Any, ...]:
    """Per digit weight ``w``: the columns ``(h, *tails)`` of ``frac(w t)`` for every turn ``t``."""
    out = []
    for w in weights:
        rows = []
        for t in turns:
            u = Fraction(t) * w
            u -= round(u)
            h = _grid(u, fmt.grid_bits)
            rest = 4 * (u - h)  # quarter turns
            mid = _grid(rest, fmt.mantissa)
            rows.append(
                [float(h), float(rest)] if fmt.tails == 1 else [float(h), float(mid), float(rest - mid)]
            )
        out.append(list(zip(*rows, strict=True)))
    return tuple(out)


def _host_pieces(
    turns: Sequence[Any], weights: Sequence[int], fmt: _Format, *, xp: Any, dtype: Any, device: Any
) -> list[tuple[Any, ...]]:
    """Pieces of exact turns (``Fraction``/``Decimal``) for the digit weights."""
    columns = _host_columns(tuple(turns), fmt, tuple(weights))
    return [tuple(_compat.asarray(c, xp=xp, dtype=dtype, device=device) for c in cols) for cols in columns]


def _split_constant(x: Fraction, bits: int) -> tuple[float, float]:
    """``x`` as a float with ``bits`` significant bits plus the float nearest the rest."""
    exponent = math.floor(math.log2(abs(x)))
    hi = _grid(x, bits - 1 - exponent)
    return float(hi), float(x - hi)


def _veltkamp(a: Any, fmt: _Format) -> tuple[Any, Any]:
    """``a`` as two floats of at most ``p/2`` significant bits each (exact)."""
    c = a * float(2 ** ((fmt.mantissa + 1) // 2) + 1)
    high = c - (c - a)
    return high, a - high


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """Knuth's error-free sum: ``s + e == a + b`` exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _device_pieces(inv_freq: Any, count: int, fmt: _Format, *, xp: Any) -> list[tuple[Any, ...]]:
    """Pieces of ``t = inv_freq / 2pi`` with the values of ``inv_freq`` taken as exact."""
    c_hi, c_lo = _split_constant(_INV_TWO_PI, fmt.mantissa)
    b_hi, b_lo = _split_constant(Fraction(c_hi), fmt.mantissa // 2)
    a_hi, a_lo = _veltkamp(inv_freq, fmt)
    t_hi = inv_freq * c_hi  # Dekker: t_hi + t_lo = inv_freq * (c_hi + c_lo) to ~2p bits
    t_lo = (((a_hi * b_hi - t_hi) + a_hi * b_lo) + a_lo * b_hi) + a_lo * b_lo + inv_freq * c_lo
    grid, fine = float(2**fmt.grid_bits), float(2**fmt.mantissa)
    pieces = []
    for j in range(count):
        scale = float(2 ** (fmt.digit_bits * j))
        x, y = t_hi * scale, t_lo * scale
        hi, lo = _two_sum(x - xp.round(x), y - xp.round(y))  # frac(2**(v j) t) exactly
        h = xp.round(hi * grid) / grid
        rest, lo = (hi - h) * 4.0, lo * 4.0
        h = h - xp.round(h)
        if fmt.tails == 1:
            pieces.append((h, rest + lo))
        else:
            mid = xp.round(rest * fine) / fine
            pieces.append((h, mid, (rest - mid) + lo))
    return pieces


def _phase(digits: list[Any], pieces: list[tuple[Any, ...]], xp: Any) -> tuple[Any, Any]:
    """``sum_j m_j u_j`` modulo one turn as ``(k + r)`` quarter turns, ``k`` in ``{-2..2}``.

    A piece past the last digit is a host offset's (weight 1).  In-place
    operators only touch arrays made here (JAX and Dask rebind the name).
    """

    def total(i: int) -> Any:
        acc = digits[0] * pieces[0][i]
        for m, piece in zip(digits[1:], pieces[1:], strict=False):
            acc += m * piece[i]
        for piece in pieces[len(digits) :]:
            acc += piece[i]
        return acc

    e = total(0)
    e -= xp.round(e)
    e *= 4.0
    k = xp.round(e)
    e -= k
    for i in range(1, len(pieces[0])):  # tails: summed first (small), then added once
        e += total(i)
    return e, k


def _rotate(c: Any, s: Any, k: Any, xp: Any) -> tuple[Any, Any]:
    """``cos``, ``sin`` of ``x + k pi/2`` from ``c = cos x``, ``s = sin x``, ``k`` in ``{-2..2}``;
    exact (``cos(k pi/2)``, ``sin(k pi/2)`` are 0 or +-1).  Reuses the fresh ``c``, ``s``, ``k``."""
    a = xp.abs(k)
    a *= -1.0
    a += 2.0  # 2 - |k|
    k *= a  # b = k (2 - |k|) = sin(k pi/2)
    a -= 1.0  # a = 1 - |k| = cos(k pi/2)
    bc = k * c
    k *= s
    c *= a
    c -= k
    s *= a
    s += bc
    return c, s


def _cos_sin_phase(r: Any, k: Any, xp: Any) -> tuple[Any, Any]:
    """``cos``/``sin`` of ``(k + r) pi/2`` for fresh arrays ``r`` (small) and ``k`` in ``{-2..2}``."""
    r *= math.pi / 2
    return _rotate(*cos_sin_small(r, xp=xp), k, xp)


_BLOCK = 2**16  # elements per block on host backends: a dozen temporaries stay in a 4 MiB L2 cache


def _blockwise(
    fn: Callable[[list[Any]], tuple[Any, ...]], digits: list[Any], width: int, xp: Any
) -> tuple[Any, ...]:
    """``fn(digits)`` for host digits of shape ``(rows, 1)``, on blocks of rows written into
    preallocated outputs (NumPy and PyTorch CPU allow item assignment); same values as one call."""
    rows, step = digits[0].shape[0], max(1, _BLOCK // max(width, 1))
    if rows <= step:
        return fn(digits)
    outs: list[Any] = []
    for start in range(0, rows, step):
        stop = min(start + step, rows)
        parts = fn([m[start:stop, ...] for m in digits])
        if not outs:
            device = _compat.device(parts[0])
            outs = [xp.empty((rows, *p.shape[1:]), dtype=p.dtype, device=device) for p in parts]
        for out, part in zip(outs, parts, strict=True):
            out[start:stop, ...] = part
    return tuple(outs)


def cos_sin(
    positions: Any,
    *,
    turns: Sequence[Any] | None = None,
    inv_freq: Any = None,
    xp: Any,
    dtype: Any,
    offset: int = 0,
    finish: Callable[[Any, Any], tuple[Any, ...]] | None = None,
) -> tuple[Any, ...]:
    """``cos`` and ``sin`` of ``2 pi (m + offset) t``, shape ``positions.shape + (n,)``, in ``dtype``.

    ``positions``: integer array, any shape.  Frequencies either as exact
    ``turns`` (``Fraction``/``Decimal``, host side; ``offset`` is applied exactly
    there) or as ``inv_freq``, an array of ``n`` angular frequencies in ``dtype``
    whose values are taken as exact (``offset`` must be 0).  ``dtype``:
    ``xp.float64`` or ``xp.float32``.  ``finish(cos, sin)``, if given, turns the
    tables into the returned arrays (any leading shape in, the same out; it may
    run on row blocks).  Results are on the positions' device.
    """
    fmt = _FLOAT64 if dtype == xp.float64 else _FLOAT32
    count = _digit_count(positions, fmt, xp)
    if turns is None:
        pieces = _device_pieces(inv_freq, count, fmt, xp=xp)
    else:
        weights = [2 ** (fmt.digit_bits * j) for j in range(count)] + ([offset] if offset else [])
        device = _compat.device(positions)
        pieces = _host_pieces(turns, weights, fmt, xp=xp, dtype=dtype, device=device)

    def block(digits: list[Any]) -> tuple[Any, ...]:
        c, s = _cos_sin_phase(*_phase(digits, pieces, xp), xp)
        return (c, s) if finish is None else finish(c, s)

    if not _compat.is_host_array(positions):
        return block(_digits(positions, count, fmt, xp=xp, dtype=dtype))
    flat = _digits(xp.reshape(positions, (-1,)), count, fmt, xp=xp, dtype=dtype)
    outs = _blockwise(block, flat, pieces[0][0].shape[0], xp)
    return tuple(xp.reshape(out, (*positions.shape, *out.shape[1:])) for out in outs)


def cos_sin_turns(turns: Any, *, xp: Any) -> tuple[Any, Any]:
    """``cos`` and ``sin`` of ``2 pi turns`` (a float array; whole turns dropped exactly), to about
    an ulp on every backend beyond the error already in ``turns``."""
    e = (turns - xp.round(turns)) * 4.0
    k = xp.round(e)
    return _cos_sin_phase(e - k, k, xp)
