r"""Exact angle reduction: ``cos`` and ``sin`` of ``2 pi m t`` at integer positions ``m``.

The library's one angle reduction, used by the sinusoidal tables, the RoPE
tables and the Sandwich bias.

Problem
    A table needs ``cos``/``sin`` of the phase ``m * omega`` for integer
    positions ``m`` (any up to ``2**62``) and angular frequencies ``omega``.
    The float product ``m * omega`` is off by up to half an ulp *of the
    product*: 0.03 rad at ``m = 2**20`` in float32, 1e-10 rad at ``2**24`` in
    float64.  The error grows with ``m`` although ``cos``/``sin`` only see the
    phase modulo one turn.

Idea
    Work in turns, ``t = omega / (2 pi)``, where only the fraction of ``m t``
    matters, and never form ``m t`` itself.  Split ``m`` into balanced digits
    ``m = sum_j m_j 2**(v j)`` with ``|m_j| <= 2**(v-1)`` (``v`` = 23 in float64,
    10 in float32), and precompute, per digit weight, the centred fraction
    ``u_j = frac(2**(v j) t)`` as a coarse part ``h_j`` on the grid ``2**-F``
    plus small tails.  Then ``m t = sum_j m_j u_j`` modulo whole turns, and:

    1. ``E = sum_j m_j h_j`` is exact in the compute dtype (``F`` is small
       enough that every partial sum fits the significand);
    2. whole turns drop exactly (``E - round(E)``), and in quarter turns
       ``4 E = k + a`` with ``k = round(4 E)`` in ``{-2..2}``: exact;
    3. ``r = a + sum_j m_j tail_j``: in float64 the tails are an exact ``mid``
       on the grid ``2**-p`` (whose sum is exact too) and a rounded ``low``,
       so only the tiny ``low`` terms round; float32 has one rounded tail;
    4. ``cos``/``sin`` of ``x = r pi/2`` (``|x| <= 0.84``), rotated by ``k``
       quarter turns with products by 0 and +-1: exact.

    The pieces of ``t`` come from exact rationals on the host (``turns`` given
    as ``Fraction``/``Decimal``: :func:`reduction`'s host path, which also
    applies an integer ``offset`` exactly) or from an ``inv_freq`` array whose
    values are taken as exact (Dekker's product with a two-float ``1/2pi``,
    then error-free sums: the device path).

Guarantee
    The result is ``cos``/``sin`` of the exact phase ``2 pi m t`` up to the
    rounding of the low tails, of ``x = r pi/2`` and of the backend's
    ``cos``/``sin`` on ``|x| <= 0.84`` (Taylor sums on MLX float64, whose own
    functions have float32 accuracy: :mod:`._mlx_float64`).  It does not
    depend on ``m``: position ``2**40`` is as accurate as position 1.

Worked example (float64, ``m = 2**24 + 1``, ``omega = 0.1``)
    The float product ``m * 0.1 = 1677721.7000000002`` is 9.3e-11 rad off the
    exact ``1677721.70000000009313...`` (the float ``0.1`` taken as exact).
    Here ``t = 0.0159154943...`` and ``m = 1 + 2 * 2**23``: digits ``m_0 = 1``,
    ``m_1 = 2``.  ``u_0 = t``, whose ``h_0 = 17089132 * 2**-30``;
    ``u_1 = frac(2**23 t) = -0.157113978...``, ``h_1 = -168699850 * 2**-30``.
    ``E = h_0 + 2 h_1 = -320310568 * 2**-30 = -0.29831246...`` exactly; no
    whole turn to drop; ``4 E = -1.19324985...``, so ``k = -1`` and
    ``a = -0.19324985146...``.  The tails (``4 (u_j - h_j)``: -4.1e-10 and
    1.8e-9) make ``r = -0.1932498483449...``, ``x = r pi/2 = -0.30355615...``,
    and ``cos(m omega) = cos(x - pi/2) = sin x = -0.29891565259979837``,
    ``sin(m omega) = -cos x = -0.95427953589649854``: both correctly rounded,
    where ``cos`` of the float product is 8.9e-11 off.

Bound
    Float64 (``v = 23``, ``F = 30``): ``r`` carries one rounding relative to
    itself (so also near the zeros of cos and sin, where it is small), ``x``
    one more plus ``0.35 * 2**-53`` from ``pi/2``, then the backend's
    ``cos``/``sin``: a few ulp (measured <= 2 ulp to ``2**24``).  Float32
    (``v = 10``, ``F = 13``): the rounded tail (at most ``digits/8`` quarter
    turn) costs about ``2**-26`` absolute; with ``x`` and ``cos``/``sin``,
    measured < 1.2e-7 to ``2**20``.  Device pieces know ``t`` to ``2p`` bits:
    ``inv_freq`` phases stay accurate to about ``|m| = 2**50`` (float64) or
    ``2**21`` (float32).

Float32 answers from float64 addition tables
    A float32 table is asked for far more often than it needs float32
    arithmetic: on NumPy and PyTorch CPU float64 exists, but its ``cos``/``sin``
    cost about 6x the float32 ones, and the float32 reduction above makes two
    dozen passes over the table.  :func:`addition_tables` does neither: for
    eager host positions ``m`` spanning ``S = max - min``, it writes
    ``m - min = d_0 + 2**v d_1`` (``0 <= d_0 < 2**v``, ``2**v`` about
    ``sqrt(S)``), computes two small float64 tables with the exact reduction,
    ``cos``/``sin`` of ``2 pi d_0 t`` (``2**v`` rows) and of
    ``2 pi (min + offset + 2**v d_1) t`` (about ``S / 2**v`` rows), and builds
    every element by the angle-addition formulas
    ``cos(a + b) = cos a cos b - sin a sin b``,
    ``sin(a + b) = sin a cos b + cos a sin b``: four row gathers, six float64
    products and sums, one rounding to float32.  No ``cos`` or ``sin`` is
    evaluated per element.  For consecutive positions (an ``arange``, the
    usual table) a block of ``2**k <= 2**v`` rows lies in one row of the
    second table, so the gathers become a slice of the first table and one
    broadcast row of the second: the same bits, four passes fewer (NumPy:
    about 1x the naive float32 ``cos(m w)``, ``sin(m w)`` tables for both
    RoPE and sinusoidal; ``scripts/asv_ratios.py``).

    Bound: each table entry is within ``e = 2**-51`` of the exact value (the
    float64 guarantee above: a few float64 ulp of numbers at most 1).  In
    ``c0 c1 - s0 s1`` the entries' errors contribute at most
    ``(|c0| + |s0|) e + (|c1| + |s1|) e <= 2 sqrt(2) e`` and the two products
    and the difference one rounding each (``3 * 2**-53``): ``< 2**-49`` in
    all, likewise for the sine.  The one rounding to float32 adds half a
    float32 ulp: error at most ``ulp/2 + 2**-49`` (``2**-25 + 2**-49``
    absolute for values in ``[1/2, 1)``), so the result is the correctly
    rounded float32 value unless the exact one lies within ``2**-49`` of a
    rounding boundary.  The float64 reduction cast once has the same bound;
    neither depends on ``m``.  The caller's scale (an attention factor, MLX's
    ``sqrt(2/d)``), applied in float32, adds half an ulp more (``1.5`` ulp in
    all, as ``s * ulp(x) <= 2 ulp(s x)``).

    Used only where it pays: host arrays whose values can be read, a float64
    compute dtype, and tables (``2**v + S / 2**v + 1`` rows) at most
    :data:`TABLE_SHARE` of the positions; otherwise callers use the float64
    reduction and cast.

Host arrays are processed in row blocks that stay in cache; that is the job of
:mod:`._row_blocks`, not of this module: a :class:`Reduction` (and the
:class:`AdditionTables`) computes the tables of all its positions or of a block
of them, and the callers compose that with their own layout step and hand the
composition to :func:`._row_blocks.in_row_blocks`.
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
from ._mlx_float64 import cos_sin_small

__all__ = [
    "PI",
    "TABLE_SHARE",
    "AdditionTables",
    "Reduction",
    "addition_tables",
    "cos_sin",
    "exact_angles",
    "power_turns",
    "reduction",
]

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


# --- the number formats --------------------------------------------------------------------------


@dataclass(frozen=True)
class _Format:
    """Significand bits ``p``, digit bits ``v``, grid bits ``F`` of ``h``, tails per digit."""

    mantissa: int
    digit_bits: int
    grid_bits: int
    tails: int  # 2: an exact mid and a rounded low tail; 1: one rounded tail


# int64 needs 3 (float64) or 7 (float32) digits.  |m_j| <= 2**(v-1) and |h_j| <= 1/2 on the grid
# 2**-F, so (digits + 1) * 2**(v-2) * 2**F <= 2**p keeps sum_j m_j h_j exact (+ 1: a host offset);
# the tails sum to at most 2**-5 (float32: 1) quarter turn.
_FLOAT64 = _Format(mantissa=53, digit_bits=23, grid_bits=30, tails=2)
_FLOAT32 = _Format(mantissa=24, digit_bits=10, grid_bits=13, tails=1)


# --- step 1: digits of the positions (integer arithmetic) -----------------------------------------


def _digit_count(positions: Any, fmt: _Format, xp: Any) -> int:
    """Balanced digits for the largest ``|m|``: from the values where readable, else the dtype."""
    info = xp.iinfo(positions.dtype)
    largest = max(int(info.max), -int(info.min))
    if _compat.values_known(positions) and math.prod(positions.shape):
        largest = max(int(xp.max(positions)), -int(xp.min(positions)))
    return max(1, -(-(largest.bit_length() + 1) // fmt.digit_bits))


def _digits(positions: Any, count: int, fmt: _Format, *, xp: Any, dtype: Any) -> list[Any]:
    """``m_j`` in ``dtype``, each of shape ``positions.shape + (1,)``: exact integer arithmetic.

    ``m = sum_j m_j 2**(v j)`` with ``-2**(v-1) <= m_j < 2**(v-1)`` for every
    digit but the last, which holds what is left (``count`` is large enough
    that it is as small).
    """
    radix, half = 2**fmt.digit_bits, 2 ** (fmt.digit_bits - 1)
    higher, out = positions, []
    for _ in range(count - 1):
        digit, higher = xp.remainder(higher, radix), xp.floor_divide(higher, radix)  # digit in [0, radix)
        carry = digit >= half  # balance: digit - radix, and one more unit in the higher digits
        higher = xp.where(carry, higher + 1, higher)
        digit = _compat.astype(digit, dtype, xp=xp)
        out.append(xp.where(carry, digit - float(radix), digit))
    out.append(_compat.astype(higher, dtype, xp=xp))
    return [xp.expand_dims(m, axis=-1) for m in out]


# --- step 2a: pieces of exact turns (host, rational arithmetic) ------------------------------------


def _grid(x: Fraction, bits: int) -> Fraction:
    """``x`` rounded to the nearest multiple of ``2**-bits`` (ties to even)."""
    return Fraction(round(x * 2**bits), 2**bits)


@functools.lru_cache(maxsize=128)
def _host_columns(turns: tuple[Any, ...], fmt: _Format, weights: tuple[int, ...]) -> tuple[Any, ...]:
    """Per digit weight ``w``: the columns ``(h, *tails)`` of ``frac(w t)`` for every turn ``t``.

    ``h`` is the centred fraction on the grid ``2**-F``; the rest, in quarter
    turns, is one float (float32) or an exact ``mid`` on ``2**-p`` plus the
    float nearest the remainder (float64).
    """
    out = []
    for w in weights:
        rows = []
        for t in turns:
            fraction = Fraction(t) * w
            fraction -= round(fraction)  # centred: |fraction| <= 1/2
            coarse = _grid(fraction, fmt.grid_bits)
            rest = 4 * (fraction - coarse)  # quarter turns
            mid = _grid(rest, fmt.mantissa)
            if fmt.tails == 1:
                rows.append([float(coarse), float(rest)])
            else:
                rows.append([float(coarse), float(mid), float(rest - mid)])
        out.append(list(zip(*rows, strict=True)))
    return tuple(out)


def _host_pieces(
    turns: Sequence[Any], weights: Sequence[int], fmt: _Format, *, xp: Any, dtype: Any, device: Any
) -> list[tuple[Any, ...]]:
    """Pieces of exact turns (``Fraction``/``Decimal``) for the digit weights, as arrays."""
    columns = _host_columns(tuple(turns), fmt, tuple(weights))
    return [tuple(_compat.asarray(c, xp=xp, dtype=dtype, device=device) for c in cols) for cols in columns]


# --- step 2b: pieces of inv_freq / 2pi (device, error-free float arithmetic) ----------------------


def _split_constant(x: Fraction, bits: int) -> tuple[float, float]:
    """``x`` as a float with ``bits`` significant bits plus the float nearest the rest."""
    exponent = math.floor(math.log2(abs(x)))
    high = _grid(x, bits - 1 - exponent)
    return float(high), float(x - high)


def _veltkamp(a: Any, fmt: _Format) -> tuple[Any, Any]:
    """``a`` as two floats of at most ``p/2`` significant bits each, ``high + low == a`` exactly."""
    scaled = a * float(2 ** ((fmt.mantissa + 1) // 2) + 1)
    high = scaled - (scaled - a)
    return high, a - high


def _two_sum(a: Any, b: Any) -> tuple[Any, Any]:
    """Knuth's error-free sum: ``total + error == a + b`` exactly."""
    total = a + b
    b_part = total - a
    return total, (a - (total - b_part)) + (b - b_part)


def _device_pieces(inv_freq: Any, count: int, fmt: _Format, *, xp: Any) -> list[tuple[Any, ...]]:
    """Pieces of ``t = inv_freq / 2pi`` with the values of ``inv_freq`` taken as exact."""
    inv_2pi, inv_2pi_tail = _split_constant(_INV_TWO_PI, fmt.mantissa)  # 1/2pi in two floats
    inv_2pi_top, inv_2pi_bottom = _split_constant(Fraction(inv_2pi), fmt.mantissa // 2)  # exact halves
    freq_top, freq_bottom = _veltkamp(inv_freq, fmt)
    # Dekker's product: t_hi + t_lo = inv_freq * (inv_2pi + inv_2pi_tail) to about 2p bits
    t_hi = inv_freq * inv_2pi
    t_lo = (
        (((freq_top * inv_2pi_top - t_hi) + freq_top * inv_2pi_bottom) + freq_bottom * inv_2pi_top)
        + freq_bottom * inv_2pi_bottom
        + inv_freq * inv_2pi_tail
    )
    grid, fine_grid = float(2**fmt.grid_bits), float(2**fmt.mantissa)
    pieces = []
    for j in range(count):
        weight = float(2 ** (fmt.digit_bits * j))
        scaled_hi, scaled_lo = t_hi * weight, t_lo * weight  # exact: a power of two
        # frac(2**(v j) t) as an unevaluated sum frac_hi + frac_lo, exactly
        frac_hi, frac_lo = _two_sum(scaled_hi - xp.round(scaled_hi), scaled_lo - xp.round(scaled_lo))
        coarse = xp.round(frac_hi * grid) / grid
        rest, rest_lo = (frac_hi - coarse) * 4.0, frac_lo * 4.0  # quarter turns
        centred = coarse - xp.round(coarse)
        if fmt.tails == 1:
            pieces.append((centred, rest + rest_lo))
        else:
            mid = xp.round(rest * fine_grid) / fine_grid
            pieces.append((centred, mid, (rest - mid) + rest_lo))
    return pieces


# --- steps 3 and 4: the phase, then cos and sin ---------------------------------------------------


def _phase(digits: list[Any], pieces: Sequence[tuple[Any, ...]], xp: Any) -> tuple[Any, Any]:
    """``sum_j m_j u_j`` modulo one turn as ``(r, k)`` quarter turns, ``k`` in ``{-2..2}``.

    A piece past the last digit is a host offset's (weight 1).  The in-place
    operators only touch arrays made here; each new name takes over the
    previous one's buffer (JAX and Dask rebind it instead).
    """

    def column(i: int) -> Any:
        """``sum_j m_j pieces[j][i]``, plus the offset's piece."""
        acc = digits[0] * pieces[0][i]
        for m, piece in zip(digits[1:], pieces[1:], strict=False):
            acc += m * piece[i]
        for piece in pieces[len(digits) :]:
            acc += piece[i]
        return acc

    turns = column(0)  # E = sum_j m_j h_j: exact
    turns -= xp.round(turns)  # whole turns dropped: exact
    quarters = turns
    quarters *= 4.0  # 4 E: exact
    k = xp.round(quarters)
    rest = quarters
    rest -= k  # a = 4 E - k, |a| <= 1/2: exact
    for i in range(1, len(pieces[0])):  # tails: each column summed first (small), then added once
        rest += column(i)
    return rest, k


def _rotate(c: Any, s: Any, k: Any, xp: Any) -> tuple[Any, Any]:
    """``cos``, ``sin`` of ``x + k pi/2`` from ``c = cos x``, ``s = sin x``, ``k`` in ``{-2..2}``.

    Exact: ``cos(k pi/2) = 1 - |k|`` and ``sin(k pi/2) = k (2 - |k|)`` are 0 or
    +-1.  Works in place on the fresh ``c``, ``s`` and ``k`` (``k``'s buffer
    becomes ``sin_k``, a new one holds ``2 - |k|`` and then ``cos_k``).
    """
    cos_k = xp.abs(k)
    cos_k *= -1.0
    cos_k += 2.0  # 2 - |k|, for now
    sin_k = k
    sin_k *= cos_k  # k (2 - |k|) = sin(k pi/2)
    cos_k -= 1.0  # 1 - |k| = cos(k pi/2)
    sin_k_c = sin_k * c
    sin_k_s = sin_k
    sin_k_s *= s
    c *= cos_k
    c -= sin_k_s  # cos x cos(k pi/2) - sin x sin(k pi/2)
    s *= cos_k
    s += sin_k_c  # sin x cos(k pi/2) + cos x sin(k pi/2)
    return c, s


def _cos_sin_phase(r: Any, k: Any, xp: Any) -> tuple[Any, Any]:
    """``cos``/``sin`` of ``(k + r) pi/2`` for fresh arrays ``r`` (small) and ``k`` in ``{-2..2}``."""
    r *= math.pi / 2
    return _rotate(*cos_sin_small(r, xp=xp), k, xp)


# --- the entry points -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Reduction:
    """The exact reduction prepared for given positions; :meth:`cos_sin` computes any block of them.

    Made by :func:`reduction`, which reads the positions once for the digit
    count and splits every position into its digits (a small array: one row
    per position, whatever the number of frequencies).  :meth:`cos_sin` then
    works on all rows or on a block of them, so the values never depend on the
    blocking.
    """

    fmt: _Format
    digits: tuple[Any, ...]  # m_j, each of shape positions.shape + (1,)
    pieces: tuple[tuple[Any, ...], ...]  # per digit weight (then the host offset): (h, *tails), shape (n,)
    xp: Any
    #: Table elements per row block on host arrays (see :mod:`._row_blocks`).
    block_elements: int = 2**16

    @property
    def width(self) -> int:
        """The number of frequencies ``n``."""
        return int(self.pieces[0][0].shape[0])

    def cos_sin(self, rows: slice | None = None) -> tuple[Any, Any]:
        """``cos`` and ``sin`` at the positions (``rows``: a block of their first axis; ``None``: all).

        Shape ``positions[rows].shape + (n,)``, in the compute dtype.
        """
        digits = list(self.digits) if rows is None else [m[rows, ...] for m in self.digits]
        return _cos_sin_phase(*_phase(digits, self.pieces, self.xp), self.xp)


def reduction(
    positions: Any,
    *,
    turns: Sequence[Any] | None = None,
    inv_freq: Any = None,
    xp: Any,
    dtype: Any,
    offset: int = 0,
) -> Reduction:
    """The :class:`Reduction` of ``2 pi (m + offset) t`` for the positions ``m`` of ``positions``.

    Frequencies either as exact ``turns`` (``Fraction``/``Decimal``, host side;
    ``offset`` is applied exactly there) or as ``inv_freq``, an array of ``n``
    angular frequencies in ``dtype`` whose values are taken as exact
    (``offset`` must be 0).  ``dtype``: ``xp.float64`` or ``xp.float32``.
    Pieces are made on the positions' device.
    """
    fmt = _FLOAT64 if dtype == xp.float64 else _FLOAT32
    count = _digit_count(positions, fmt, xp)
    if turns is None:
        pieces = _device_pieces(inv_freq, count, fmt, xp=xp)
    else:
        weights = [2 ** (fmt.digit_bits * j) for j in range(count)] + ([offset] if offset else [])
        device = _compat.device(positions)
        pieces = _host_pieces(turns, weights, fmt, xp=xp, dtype=dtype, device=device)
    digits = _digits(positions, count, fmt, xp=xp, dtype=dtype)
    return Reduction(fmt, tuple(digits), tuple(pieces), xp)


def cos_sin(
    positions: Any,
    *,
    turns: Sequence[Any] | None = None,
    inv_freq: Any = None,
    xp: Any,
    dtype: Any,
    offset: int = 0,
) -> tuple[Any, Any]:
    """``cos`` and ``sin`` of ``2 pi (m + offset) t``, shape ``positions.shape + (n,)``, in ``dtype``.

    One call, without row blocks: ``reduction(positions, ...).cos_sin()``.
    """
    return reduction(positions, turns=turns, inv_freq=inv_freq, xp=xp, dtype=dtype, offset=offset).cos_sin()


# --- float32 answers from float64 addition tables ----------------------------------------------------

#: The addition tables are used when their rows are at most this share of the positions.
TABLE_SHARE = 0.25


@dataclass(frozen=True)
class AdditionTables:
    """Float32 ``cos``/``sin`` at positions ``min + offset + d_0 + 2**v d_1`` from float64 tables.

    Made by :func:`addition_tables` (see the module notes): ``low`` and
    ``high`` hold ``(cos, sin)`` of the phases of ``d_0`` and of
    ``min + offset + 2**v d_1``, shape ``(rows, n)`` in float64; ``index``
    holds ``d_0`` and ``d_1`` per position (1-D).  :meth:`cos_sin` gathers the
    rows of any block of positions and adds the angles, so the values never
    depend on the blocking.  ``consecutive``: the positions are ``min, min + 1,
    ...`` (an ``arange``), so a block of :attr:`block_elements` is one row of
    ``high`` against a slice of ``low`` and needs no gather.
    """

    index: tuple[Any, Any]  # d_0, d_1: integer arrays of the positions' length
    low: tuple[Any, Any]  # cos, sin of 2 pi d_0 t, shape (2**v, n), float64
    high: tuple[Any, Any]  # cos, sin of 2 pi (min + offset + 2**v d_1) t, float64
    dtype: Any  # the output dtype (float32)
    xp: Any
    consecutive: bool = False

    @property
    def width(self) -> int:
        """The number of frequencies ``n``."""
        return int(self.low[0].shape[1])

    @property
    def block_elements(self) -> int:
        """Table elements per row block: a power of two of rows, at most ``2**v`` (so a block of
        consecutive positions never straddles two rows of ``high``) and at most ``2**14``
        elements (six float64 temporaries of 128 KiB each, near a 512 KiB L2)."""
        rows = 1 << max(0, (2**14 // max(self.width, 1)).bit_length() - 1)
        return min(rows, int(self.low[0].shape[0])) * self.width

    def cos_sin(self, rows: slice | None = None) -> tuple[Any, Any]:
        """``cos`` and ``sin`` at the positions (``rows``: a block of them; ``None``: all), in ``dtype``.

        ``cos = c0 c1 - s0 s1``, ``sin = s0 c1 + c0 s1``, each product and sum rounded as
        written.  Consecutive positions in a block within one row of ``high`` read slices
        of the tables (views, broadcast over the block); others gather their rows.  Both
        give the same bits.
        """
        xp = self.xp
        span = self._one_high_row(rows)
        if span is not None:
            j, first, last = span
            c0, s0 = (t[first:last, ...] for t in self.low)
            c1, s1 = (t[j : j + 1, ...] for t in self.high)
        else:
            d0, d1 = self.index if rows is None else (i[rows] for i in self.index)
            c0, s0 = (xp.take(t, d0, axis=0) for t in self.low)
            c1, s1 = (xp.take(t, d1, axis=0) for t in self.high)
        cos = c0 * c1
        cos -= s0 * s1
        sin = s0 * c1
        sin += c0 * s1
        return _compat.astype(cos, self.dtype, xp=xp), _compat.astype(sin, self.dtype, xp=xp)

    def _one_high_row(self, rows: slice | None) -> tuple[int, int, int] | None:
        """``(d_1, first d_0, last d_0 + 1)`` for a block of consecutive positions in one ``high`` row."""
        if not self.consecutive or rows is None:
            return None
        size = int(self.low[0].shape[0])  # 2**v
        start, stop, _ = rows.indices(int(self.index[0].shape[0]))
        if stop <= start or start // size != (stop - 1) // size:
            return None
        return start // size, start % size, start % size + (stop - start)


def addition_tables(positions: Any, *, xp: Any, dtype: Any, **frequencies: Any) -> AdditionTables | None:
    """The :class:`AdditionTables` of ``2 pi (m + offset) t`` for 1-D host ``positions``, or ``None``.

    ``None`` (use :func:`reduction` instead) unless ``positions`` is a host
    array with float64 (NumPy, PyTorch CPU, array-api-strict) and the two
    tables have at most :data:`TABLE_SHARE` times as many rows as there are
    positions.  ``frequencies``: ``turns`` (and ``offset``) or ``inv_freq``
    (float64), as for :func:`reduction`; ``dtype`` is the output dtype.
    """
    count = math.prod(positions.shape)
    device = _compat.device(positions)
    if not (count and _compat.is_host_array(positions) and _compat.has_float64(xp, device)):
        return None
    low_m, high_m = int(xp.min(positions)), int(xp.max(positions))
    bits = (high_m - low_m).bit_length()
    v = (bits + 1) // 2
    high_rows = ((high_m - low_m) >> v) + 1
    if 2**v + high_rows > TABLE_SHARE * count:
        return None
    shifted = _compat.widen(positions, xp) - low_m
    d0, d1 = xp.remainder(shifted, 2**v), xp.floor_divide(shifted, 2**v)
    index = _compat.index_dtype(xp, device)
    consecutive = count == high_m - low_m + 1 and bool(
        xp.all(shifted == _compat.arange(0, count, xp=xp, dtype=index, device=device))
    )
    low_pos = _compat.arange(0, 2**v, xp=xp, dtype=index, device=device)
    high_pos = _compat.arange(0, high_rows, xp=xp, dtype=index, device=device) * 2**v + low_m
    offset = frequencies.pop("offset", 0)  # the high table's: low + high = min + offset + (m - min)
    low = cos_sin(low_pos, xp=xp, dtype=xp.float64, **frequencies)
    high = cos_sin(high_pos, xp=xp, dtype=xp.float64, offset=offset, **frequencies)
    return AdditionTables((d0, d1), low, high, dtype, xp, consecutive)


def exact_angles(
    positions: Any, *, xp: Any, dtype: Any, out_dtype: Any, **frequencies: Any
) -> AdditionTables | Reduction:
    """The pipeline for exact ``cos``/``sin`` of ``2 pi (m + offset) t``, chosen once per call.

    A float32 answer computed with float64 (``out_dtype`` float32, ``dtype``
    float64) comes from :func:`addition_tables` where they pay; everything else
    from :func:`reduction` in ``dtype``.  ``frequencies`` as for both.
    """
    if out_dtype == xp.float32 and dtype == xp.float64:
        tables = addition_tables(positions, xp=xp, dtype=out_dtype, **frequencies)
        if tables is not None:
            return tables
    return reduction(positions, xp=xp, dtype=dtype, **frequencies)
