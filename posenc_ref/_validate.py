"""Argument checks shared by every public function; all error messages live here.

Each message starts with the parameter name, states the rule, and shows what
arrived: ``"dim must be a positive integer; got 0"``.  Wrong types and dtypes
raise ``TypeError``, wrong values ``ValueError``.
"""

from __future__ import annotations

import difflib
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from ._compat import values_known

__all__ = [
    "check_bool",
    "check_choice",
    "check_float_array",
    "check_float_dtype",
    "check_int",
    "check_integer_array",
    "check_mask_array",
    "check_nonnegative_positions",
    "check_options",
    "check_position_range",
    "check_real",
]


def check_int(value: object, name: str, *, minimum: int | None = 1) -> int:
    """``value`` as a Python int, at least ``minimum`` (``None``: no bound)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        msg = f"{name} must be an integer; got {value!r} of type {type(value).__name__}"
        raise TypeError(msg)
    value = int(value)
    if minimum is not None and value < minimum:
        rule = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        msg = f"{name} must be {rule}; got {value!r}"
        raise ValueError(msg)
    return value


def check_real(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float | None = None,
) -> float:
    """``value`` as a finite Python float within the given bounds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        msg = f"{name} must be a real number; got {value!r} of type {type(value).__name__}"
        raise TypeError(msg)
    value = float(value)
    if not math.isfinite(value):
        msg = f"{name} must be finite; got {value!r}"
        raise ValueError(msg)
    if minimum is not None and value < minimum:
        msg = f"{name} must be >= {minimum}; got {value!r}"
        raise ValueError(msg)
    if exclusive_minimum is not None and value <= exclusive_minimum:
        msg = f"{name} must be > {exclusive_minimum}; got {value!r}"
        raise ValueError(msg)
    if maximum is not None and value > maximum:
        msg = f"{name} must be <= {maximum}; got {value!r}"
        raise ValueError(msg)
    return value


def check_choice(
    value: object,
    name: str,
    choices: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
) -> str:
    """``value`` if it is one of ``choices``; otherwise a ``ValueError`` listing them.

    ``aliases`` maps names people use elsewhere (``"neox"``) to the advice shown
    when they are passed (``"GPT-NeoX uses 'half'"``).
    """
    if isinstance(value, str) and value in choices:
        return value
    allowed = ", ".join(repr(c) for c in choices)
    msg = f"{name} must be one of {allowed}; got {value!r}"
    if isinstance(value, str):
        if aliases and value in aliases:
            msg += f" ({aliases[value]})"
        else:
            close = difflib.get_close_matches(value, choices, n=1)
            if close:
                msg += f" (did you mean {close[0]!r}?)"
    raise ValueError(msg)


def check_integer_array(x: Any, name: str, xp: Any) -> None:
    """A ``TypeError`` unless ``x`` is an array of an integer dtype."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or not xp.isdtype(dtype, "integral"):
        got = dtype if dtype is not None else type(x).__name__
        msg = f"{name} must be an array of an integer dtype; got {got}"
        raise TypeError(msg)


def check_nonnegative_positions(x: Any, name: str, xp: Any) -> None:
    """A ``ValueError`` if an integer array holds a negative value.

    Reads one scalar back from the device; skipped when values are unknown
    (Dask, JAX under ``jit``: see ``_compat.values_known``).
    """
    if not values_known(x):
        return
    smallest = int(xp.min(x)) if math.prod(x.shape) else 0
    if smallest < 0:
        msg = f"{name} must be non-negative; got a minimum of {smallest}"
        raise ValueError(msg)


def check_bool(value: object, name: str) -> bool:
    """``value`` if it is a Python ``bool``; otherwise a ``TypeError``."""
    if not isinstance(value, bool):
        msg = f"{name} must be True or False; got {value!r} of type {type(value).__name__}"
        raise TypeError(msg)
    return value


def check_options(
    options: Mapping[str, object],
    defaults: Mapping[str, object],
    context: str,
    *,
    elsewhere: Mapping[str, str] | None = None,
) -> dict[str, object]:
    """``defaults`` updated with ``options``; a ``TypeError`` naming any unknown option.

    ``context`` says whose options these are (``"convention 'vaswani'"``);
    ``elsewhere`` maps option names that belong to something else to advice.
    """
    for name in options:
        if name not in defaults:
            allowed = ", ".join(repr(d) for d in defaults) or "none"
            msg = f"{name} is not an option of {context}; its options are: {allowed}"
            if elsewhere and name in elsewhere:
                msg += f" ({elsewhere[name]})"
            else:
                close = difflib.get_close_matches(name, list(defaults), n=1)
                if close:
                    msg += f" (did you mean {close[0]!r}?)"
            raise TypeError(msg)
    return {**defaults, **options}


def check_float_dtype(dtype: Any, name: str, xp: Any, *, float64_available: bool = True) -> Any:
    """``dtype`` if it is a real floating dtype of ``xp`` (float64 only where available)."""
    try:
        ok = xp.isdtype(dtype, "real floating")
    except (TypeError, ValueError, AttributeError):
        ok = False
    if not ok:
        msg = f"{name} must be a real floating dtype of {xp.__name__}; got {dtype!r}"
        raise TypeError(msg)
    if dtype == xp.float64 and not float64_available:
        msg = f"{name} must be float32 or narrower on this backend/device; got {dtype!r} (no float64 here)"
        raise ValueError(msg)
    return dtype


def check_position_range(x: Any, name: str, xp: Any, *, low: int | None, high: int | None, rule: str) -> None:
    """A ``ValueError`` if an integer array has a value below ``low`` or above ``high``.

    ``rule`` completes "``name`` must be ...".  Reads back the extremes; skipped
    when values are unknown (Dask, JAX under ``jit``: see ``_compat.values_known``).
    """
    if not values_known(x) or not math.prod(x.shape):
        return
    if high is not None:
        largest = int(xp.max(x))
        if largest > high:
            msg = f"{name} must be {rule}; got a maximum of {largest}"
            raise ValueError(msg)
    if low is not None:
        smallest = int(xp.min(x))
        if smallest < low:
            msg = f"{name} must be {rule}; got a minimum of {smallest}"
            raise ValueError(msg)


def check_float_array(x: Any, name: str, xp: Any) -> None:
    """A ``TypeError`` unless ``x`` is an array of a real floating dtype."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or not xp.isdtype(dtype, "real floating"):
        got = dtype if dtype is not None else type(x).__name__
        msg = f"{name} must be an array of a real floating dtype; got {got}"
        raise TypeError(msg)


def check_mask_array(x: Any, name: str, xp: Any) -> None:
    """A ``TypeError`` unless ``x`` is a bool or integer array; a ``ValueError`` if it is 0-d."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or not xp.isdtype(dtype, ("bool", "integral")):
        got = dtype if dtype is not None else type(x).__name__
        msg = f"{name} must be an array of a bool or integer dtype; got {got}"
        raise TypeError(msg)
    if not x.shape:
        msg = f"{name} must have at least one dimension; got a 0-d array"
        raise ValueError(msg)
