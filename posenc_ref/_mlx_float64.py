"""``cos``, ``sin`` and ``exp`` accurate to float64 on every backend, MLX included.

MLX's float64 ``sin``, ``cos`` and ``exp`` (0.32, CPU device) return float64
arrays with float32 accuracy: errors near 1.5e-7, and 8e-6 for ``exp`` near 3;
its ``+``, ``*``, ``round``, ``log``, ``expm1`` and ``sqrt`` are exact or
correctly rounded.  This module is the one place that knows it: on MLX
float64 :func:`cos_sin_small` sums Taylor series and :func:`exp` reduces by
powers of two around ``expm1``; everywhere else both are the backend's own
functions.  Callers (the angle reduction, xPos scales, the attention softmax)
use these and never test for MLX themselves.
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat

__all__ = ["cos_sin_small", "exp", "has_accurate_float64_math"]


def has_accurate_float64_math(xp: Any) -> bool:
    """Whether ``xp.sin``/``xp.cos``/``xp.exp`` are float64-accurate on float64 input (not on MLX)."""
    return not _compat.is_mlx_namespace(xp)


# Taylor coefficients of sin(x)/x and cos(x) in x**2: on |x| <= 1.2 the first omitted terms are < 1e-18.
_SIN = [(-1) ** k / math.factorial(2 * k + 1) for k in range(10)]
_COS = [(-1) ** k / math.factorial(2 * k) for k in range(11)]


def _horner(x2: Any, coefficients: list[float]) -> Any:
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = acc * x2 + c
    return acc


def cos_sin_small(x: Any, *, xp: Any) -> tuple[Any, Any]:
    """``cos x`` and ``sin x`` for ``|x| <= 1.2``: the backend's, or Taylor sums on MLX float64."""
    if x.dtype != xp.float64 or has_accurate_float64_math(xp):
        return xp.cos(x), xp.sin(x)
    x2 = x * x
    return _horner(x2, _COS), x * _horner(x2, _SIN)


# Cody-Waite split of ln 2 (fdlibm): LN2_HI has 32 significant bits, so n * LN2_HI is exact for |n| < 2**21.
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10


def exp(x: Any, *, xp: Any) -> Any:
    """``exp(x)``, float64-accurate on MLX too: there ``2**a (2**b (expm1(r) + 1))`` with
    ``x = (a + b) ln2 + r``, MLX's accurate ``expm1`` and exact powers of two (``a, b`` halves of
    the exponent, so that only the last product can under- or overflow).  Arguments beyond
    ``+-800`` (where float64 under- or overflows anyway, ``+-inf`` included) are clamped first."""
    if x.dtype != xp.float64 or has_accurate_float64_math(xp):
        return xp.exp(x)
    x = xp.clip(x, -800.0, 800.0)  # keeps +-inf out of the reduction; exp(+-800) is 0 or inf anyway
    n = xp.round(x * (1.0 / math.log(2.0)))
    r = (x - n * _LN2_HI) - n * _LN2_LO
    two = _compat.asarray(2.0, xp=xp, dtype=x.dtype, device=_compat.device(x))
    half = xp.floor(n / 2.0)
    return ((xp.expm1(r) + 1.0) * xp.pow(two, n - half)) * xp.pow(two, half)
