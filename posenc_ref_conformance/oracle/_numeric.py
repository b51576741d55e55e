"""High-precision arithmetic for the oracle: one mpmath context, exact inputs, one rounding.

Every oracle function works on :class:`mpmath.mpf` values at the *current*
mpmath precision; :func:`working_precision` sets it.  Inputs that arrive as
Python floats are taken as the exact binary fractions they are (``mpf(0.1)`` is
0.1000000000000000055511151231257827..., not 1/10), so the oracle answers the
question "what is the exact result for these float64 inputs?".

Rounding to a machine format happens once, at the end, with round-to-nearest,
ties-to-even (:func:`round_float64`, :func:`round_float32`).  With 80 significant
digits (about 266 bits) the computed value differs from the exact one by far
less than the distance to the nearest float64 rounding boundary, except for
values that sit within ~1e-80 (relative) of a tie; the golden generator proves
this for every stored number by recomputing at :data:`CHECK_DIGITS` digits and
comparing the float64 bit patterns (``posenc-ref golden lint``).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

import mpmath

__all__ = [
    "CHECK_DIGITS",
    "DEFAULT_DIGITS",
    "IllConditioned",
    "exact",
    "floor_checked",
    "round_float32",
    "round_float64",
    "working_precision",
]

#: Significant decimal digits used to generate the golden vectors.
DEFAULT_DIGITS = 80
#: Digits of the independent recomputation that proves the float64 rounding.
CHECK_DIGITS = 120

mp = mpmath.mp


class IllConditioned(ValueError):
    """A discrete decision (floor, band, bucket) sits too close to its boundary.

    Golden cases must be well posed: a case whose answer depends on how the
    last bit of an intermediate float rounds is rejected unless the oracle
    documents the tie rule it applies there.
    """


@contextlib.contextmanager
def working_precision(digits: int = DEFAULT_DIGITS) -> Iterator[None]:
    """Run the oracle at ``digits`` significant decimal digits."""
    with mp.workdps(digits):
        yield


def exact(value: float | int | str) -> mpmath.mpf:
    """``value`` as an mpf; exact for Python ints and floats (finite)."""
    if isinstance(value, float) and not math.isfinite(value):
        msg = f"value must be finite; got {value!r}"
        raise ValueError(msg)
    return mp.mpf(value)


def _round(x: mpmath.mpf, bits: int) -> float:
    """``x`` rounded to ``bits`` significant bits (nearest, ties to even), as a Python float.

    Public mpmath only: unary ``+`` inside ``mp.workprec(bits)`` rounds to the
    working precision, round-to-nearest with ties to even (mpmath's arithmetic
    rounding; ``tests/test_conformance_oracle.py`` checks ties on every supported
    mpmath).  A value of at most 53 significant bits then converts to float
    exactly (normal range; the callers reject the rest).
    """
    with mp.workprec(bits):
        rounded = +mp.mpf(x)
    if not rounded:
        return 0.0  # the sign of zero is not significant in the golden files
    return float(rounded)


def round_float64(x: mpmath.mpf) -> float:
    """``x`` rounded to the nearest float64 (ties to even); normal range only."""
    result = _round(x, 53)
    if result and abs(result) < 2.0**-1022:
        msg = f"value {result!r} is subnormal in float64; the oracle does not round subnormals"
        raise ValueError(msg)
    return result


def round_float32(x: mpmath.mpf) -> float:
    """``x`` rounded to the nearest float32 (ties to even), returned as a Python float."""
    result = _round(x, 24)
    if result and not 2.0**-126 <= abs(result) < 2.0**128:
        msg = f"value {result!r} is outside the normal float32 range"
        raise ValueError(msg)
    return result


def floor_checked(x: mpmath.mpf, what: str, *, margin: float = 1e-9) -> int:
    """``floor(x)``, refusing values within ``margin`` of an integer (see IllConditioned)."""
    nearest = mp.nint(x)
    if abs(x - nearest) <= margin * max(1, abs(x)) and x != nearest:
        msg = f"{what} = {mpmath.nstr(x, 25)} is within {margin:g} of the integer {int(nearest)}"
        raise IllConditioned(msg)
    return int(mp.floor(x))
