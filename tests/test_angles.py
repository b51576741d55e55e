"""The exact angle reduction (posenc_ref/_angles.py), piece by piece.

Every expected value comes from exact integer or ``Fraction`` arithmetic, or
from mpmath; none from the code under test.  The pieces run on NumPy (host) and,
where they are array code, on every backend.
"""

from __future__ import annotations

import math
from fractions import Fraction

import array_api_compat.numpy as npx
import mpmath
import numpy as np
import pytest

from posenc_ref import _angles, _compat
from posenc_ref._angles import _FLOAT32, _FLOAT64
from tests.helpers import float_dtype, ints, to_numpy

FORMATS = {"float64": _FLOAT64, "float32": _FLOAT32}
RNG = np.random.default_rng(16)
EDGES = [0, 1, -1, 2**22 - 1, 2**22, -(2**22), 2**23, 2**24 + 1, -(2**24 + 1), 2**46 + 5, 2**62 - 1, -(2**62)]
POSITIONS = EDGES + [int(v) for v in RNG.integers(-(2**62), 2**62, 40)]
PI = Fraction(_angles.PI)  # 80 digits: far beyond what any check here resolves


def exact(x: object) -> Fraction:
    return Fraction(float(x))


def frac(x: Fraction) -> Fraction:
    """The centred fraction: ``x - round(x)``, in ``[-1/2, 1/2]``."""
    return x - round(x)


def significant_bits(x: float) -> int:
    """Bits between the leading and the trailing 1 of a float (0 for 0)."""
    if x == 0:
        return 0
    numerator = abs(Fraction(x)).numerator
    while numerator % 2 == 0:
        numerator //= 2
    return numerator.bit_length()


def host(values: list[int]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


class TestDigits:
    @pytest.mark.parametrize("dtype_name", ["float64", "float32"])
    def test_balanced_digits_rebuild_every_position(self, dtype_name: str) -> None:
        fmt = FORMATS[dtype_name]
        positions = npx.asarray(POSITIONS, dtype=npx.int64)
        count = _angles._digit_count(positions, fmt, npx)
        digits = _angles._digits(positions, count, fmt, xp=npx, dtype=getattr(npx, dtype_name))
        v, half = fmt.digit_bits, 2 ** (fmt.digit_bits - 1)
        for i, m in enumerate(POSITIONS):
            ms = [int(d[i, 0]) for d in digits]
            assert all(float(d[i, 0]).is_integer() for d in digits)
            assert sum(mj * 2 ** (v * j) for j, mj in enumerate(ms)) == m
            assert all(-half <= mj < half for mj in ms[:-1]), ms
            assert abs(ms[-1]) <= half, ms

    @pytest.mark.parametrize("dtype_name", ["float64", "float32"])
    def test_digit_count_covers_the_largest_position(self, dtype_name: str) -> None:
        fmt = FORMATS[dtype_name]
        for largest in (0, 1, 2**22, 2**24 + 1, 2**40, 2**62):
            count = _angles._digit_count(npx.asarray([0, largest], dtype=npx.int64), fmt, npx)
            # balanced digits reach sum_j 2**(v-1) 2**(v j) < 2**(v count - 1)
            assert 2 ** (fmt.digit_bits * count - 1) > largest
        every_int64 = {"float64": 3, "float32": 7}[dtype_name]  # from the dtype when values are not read
        assert _angles._digit_count(npx.asarray([], dtype=npx.int64), fmt, npx) == every_int64

    def test_digits_on_every_backend(self, xp) -> None:
        positions = ints(xp, [2**24 + 1, -5, 0])
        dtype = float_dtype(xp)
        fmt = _FLOAT64 if dtype == xp.float64 else _FLOAT32
        digits = _angles._digits(positions, 3, fmt, xp=xp, dtype=dtype)
        rebuilt = sum(
            to_numpy(d)[:, 0].astype(np.int64) * 2 ** (fmt.digit_bits * j) for j, d in enumerate(digits)
        )
        assert rebuilt.tolist() == [2**24 + 1, -5, 0]


class TestHostPieces:
    @pytest.mark.parametrize("dtype_name", ["float64", "float32"])
    def test_pieces_are_the_fraction_on_its_grids(self, dtype_name: str) -> None:
        fmt = FORMATS[dtype_name]
        turns = (Fraction(1, 7), Fraction(10**40 + 3, 10**41), Fraction(-2, 3) / PI)
        weights = (1, 2**fmt.digit_bits, 2 ** (2 * fmt.digit_bits), 12345)
        columns = _angles._host_columns(turns, fmt, weights)
        for w, cols in zip(weights, columns, strict=True):
            for t, piece in zip(turns, zip(*cols, strict=True), strict=True):
                u = frac(t * w)
                coarse = Fraction(piece[0])
                assert (coarse * 2**fmt.grid_bits).denominator == 1 and abs(coarse) <= Fraction(1, 2)
                tails = [Fraction(p) for p in piece[1:]]
                if fmt.tails == 2:  # mid exact on 2**-p; the low tail the nearest float to the rest
                    assert (tails[0] * 2**fmt.mantissa).denominator == 1
                    rest = 4 * (u - coarse) - tails[0]
                    assert abs(tails[1] - rest) <= abs(rest) * 2.0**-53
                else:
                    rest = 4 * (u - coarse)
                    assert abs(tails[0] - rest) <= abs(rest) * 2.0**-53
                assert abs(4 * (u - coarse)) <= Fraction(2, 2**fmt.grid_bits)

    def test_the_worked_example_of_the_module_docstring(self) -> None:
        # m = 2**24 + 1 = 1 + 2 * 2**23, omega = 0.1 (the float, taken as exact), float64
        t = exact(0.1) / (2 * PI)
        columns = _angles._host_columns((t,), _FLOAT64, (1, 2**23))
        h0, h1 = (Fraction(cols[0][0]) for cols in columns)
        assert h0 == Fraction(17089132, 2**30) and h1 == Fraction(-168699850, 2**30)
        e = 1 * h0 + 2 * h1
        assert e == Fraction(-320310568, 2**30) and round(4 * e) == -1
        assert float(4 * e + 1) == pytest.approx(-0.19324985146, abs=1e-11)
        with mpmath.workdps(40):
            angle = mpmath.mpf(2**24 + 1) * mpmath.mpf(0.1)
            expected = (float(mpmath.cos(angle)), float(mpmath.sin(angle)))
        assert expected == (-0.29891565259979837, -0.9542795358964985)
        assert abs(math.cos((2**24 + 1) * 0.1) - expected[0]) > 8e-11  # the float product's error


class TestErrorFreeTransforms:
    def test_split_constant(self) -> None:
        for x in (1 / (2 * PI), Fraction(1, 3), Fraction(-7, 10**9)):
            for bits in (53, 26, 24, 12):
                high, low = _angles._split_constant(x, bits)
                assert significant_bits(high) <= bits
                rest = x - Fraction(high)
                assert abs(Fraction(low) - rest) <= abs(rest) * 2.0**-53

    @pytest.mark.parametrize("dtype_name", ["float64", "float32"])
    def test_veltkamp_halves_are_exact(self, dtype_name: str) -> None:
        fmt = FORMATS[dtype_name]
        values = npx.asarray(
            [0.1, 1.0, 2.0 / 3.0, 1e-4, 0.8659643233600653, 3.0e-9], dtype=getattr(npx, dtype_name)
        )
        high, low = _angles._veltkamp(values, fmt)
        for a, h, lo in zip(values.tolist(), high.tolist(), low.tolist(), strict=True):
            assert Fraction(h) + Fraction(lo) == Fraction(a)
            assert significant_bits(h) <= fmt.mantissa // 2 and significant_bits(lo) <= fmt.mantissa // 2

    def test_two_sum_is_error_free(self) -> None:
        a = npx.asarray([1.0, 1e16, 0.1, -3.0, 2.0**-60], dtype=npx.float64)
        b = npx.asarray([1e-17, 1.0, 0.2, 3.0, 1.0], dtype=npx.float64)
        total, error = _angles._two_sum(a, b)
        for x, y, s, e in zip(a.tolist(), b.tolist(), total.tolist(), error.tolist(), strict=True):
            assert Fraction(s) + Fraction(e) == Fraction(x) + Fraction(y)
            assert s == x + y


class TestDevicePieces:
    @pytest.mark.parametrize("dtype_name", ["float64", "float32"])
    def test_pieces_of_inv_freq_over_2pi(self, dtype_name: str) -> None:
        fmt = FORMATS[dtype_name]
        inv_freq = npx.asarray([1.0, 0.1, 0.8659643233600653, 1e-4, 3.0e-7], dtype=getattr(npx, dtype_name))
        pieces = _angles._device_pieces(inv_freq, 3, fmt, xp=npx)
        for j, piece in enumerate(pieces):
            for i, value in enumerate(inv_freq.tolist()):
                u = frac(Fraction(value) * 2 ** (fmt.digit_bits * j) / (2 * PI))
                coarse = Fraction(piece[0][i].item())
                assert (coarse * 2**fmt.grid_bits).denominator == 1 and abs(coarse) <= Fraction(1, 2)
                tails = sum(Fraction(p[i].item()) for p in piece[1:])
                # t is known to about 2p bits: the error grows with the weight 2**(v j)
                bound = Fraction(2 ** (fmt.digit_bits * j + 8), 2 ** (2 * fmt.mantissa))
                assert abs(frac(coarse + tails / 4 - u)) <= bound


class TestPhaseAndRotation:
    @pytest.mark.parametrize("dtype_name", ["float64", "float32"])
    def test_phase_is_m_t_modulo_one_turn(self, dtype_name: str) -> None:
        fmt, dtype = FORMATS[dtype_name], getattr(npx, dtype_name)
        turns = (Fraction(1, 7), exact(0.1) / (2 * PI), Fraction(3, 2**40))
        positions = npx.asarray(POSITIONS, dtype=npx.int64)
        angles = _angles.reduction(positions, turns=turns, xp=npx, dtype=dtype)
        rest, k = _angles._phase(list(angles.digits), angles.pieces, npx)
        assert set(np.unique(k).tolist()) <= {-2.0, -1.0, 0.0, 1.0, 2.0}
        assert float(np.max(np.abs(rest))) <= (0.5 + 2.0**-5 if fmt.tails == 2 else 1.5)  # 1/2 + the tails
        tolerance = 2.0**-50 if dtype_name == "float64" else 2.0**-20  # the rounded tails, in quarter turns
        for i, m in enumerate(POSITIONS):
            for n, t in enumerate(turns):
                got = (Fraction(float(k[i, n])) + Fraction(float(rest[i, n]))) / 4
                assert abs(frac(got - m * t)) <= tolerance / 4, (m, t)

    @pytest.mark.parametrize("k", [-2, -1, 0, 1, 2])
    def test_rotation_by_quarter_turns_is_exact(self, xp, k: int) -> None:
        dtype = float_dtype(xp)
        x = [0.1, -0.7, 0.0, 0.84]
        c = _compat.asarray([math.cos(v) for v in x], xp=xp, dtype=dtype)
        s = _compat.asarray([math.sin(v) for v in x], xp=xp, dtype=dtype)
        quarters = _compat.asarray([float(k)] * 4, xp=xp, dtype=dtype)
        expected_c, expected_s = to_numpy(c).copy(), to_numpy(s).copy()
        for _ in range(k % 4):  # (cos, sin) of x + pi/2 is (-sin, cos): exact
            expected_c, expected_s = -expected_s, expected_c
        cos, sin = _angles._rotate(c, s, quarters, xp)
        np.testing.assert_array_equal(to_numpy(cos), expected_c)
        np.testing.assert_array_equal(to_numpy(sin), expected_s)


class TestEndToEnd:
    def test_power_turns(self) -> None:
        # 42-digit arithmetic: ln, two products, exp, a quotient, each off by <= 5e-42 relative; exp turns
        # the exponent's absolute error (|x| <= ln base <= 14 here) into a relative one: < 3e-40 in all.
        with mpmath.workdps(60):
            for base, dim in ((10000.0, 128), (1e6, 64), (2.5, 8)):
                got = _angles.power_turns(base, dim, range(dim // 2))
                for k, turn in enumerate(got):
                    want = mpmath.power(mpmath.mpf(repr(base)), mpmath.mpf(-2 * k) / dim) / (2 * mpmath.pi)
                    assert abs(mpmath.mpf(str(turn)) - want) <= mpmath.mpf(3) * mpmath.mpf(10) ** -40 * want

    @pytest.mark.parametrize("source", ["turns", "inv_freq"])
    def test_cos_sin_against_mpmath(self, xp, source: str) -> None:
        dtype = float_dtype(xp)
        omegas = [1.0, 0.1, 0.8659643233600653, 1e-4]
        largest = 2**46 if source == "turns" or dtype == xp.float64 else 2**20
        values = [0, 1, -3, 2**24 + 1, largest, -largest + 7]
        positions = ints(xp, values)
        if source == "turns":
            turns = [exact(w) / (2 * PI) for w in omegas]
            cos, sin = _angles.cos_sin(positions, turns=turns, xp=xp, dtype=dtype)
        else:
            inv_freq = _compat.asarray(omegas, xp=xp, dtype=dtype)
            cos, sin = _angles.cos_sin(positions, inv_freq=inv_freq, xp=xp, dtype=dtype)
            omegas = to_numpy(inv_freq).astype(np.float64).tolist()  # the values, rounded to dtype
        with mpmath.workdps(60):
            want_c = [[float(mpmath.cos(mpmath.mpf(m) * mpmath.mpf(w))) for w in omegas] for m in values]
            want_s = [[float(mpmath.sin(mpmath.mpf(m) * mpmath.mpf(w))) for w in omegas] for m in values]
        atol = 4 * 2.0**-53 if dtype == xp.float64 else 2e-7
        np.testing.assert_allclose(to_numpy(cos), want_c, rtol=0, atol=atol)
        np.testing.assert_allclose(to_numpy(sin), want_s, rtol=0, atol=atol)

    def test_offset_is_applied_exactly(self) -> None:
        turns = [Fraction(1, 7), Fraction(1, 10**6)]
        with_offset = _angles.cos_sin(
            npx.asarray([0, 5]), turns=turns, xp=npx, dtype=npx.float64, offset=2**50
        )
        with mpmath.workdps(60):
            want = [
                [
                    float(mpmath.cos(2 * mpmath.pi * (m + 2**50) * mpmath.mpf(t.numerator) / t.denominator))
                    for t in turns
                ]
                for m in (0, 5)
            ]
        np.testing.assert_allclose(with_offset[0], want, rtol=0, atol=4 * 2.0**-53)
