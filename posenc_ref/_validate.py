"""Argument checks shared by every public function; every error message of the library is built here.

Each message starts with the parameter name, states the rule, and shows what
arrived: ``"dim must be a positive integer; got 0"``, plus the type when the
type is wrong and, for string options, the close match or known alias.  Wrong
types and dtypes raise ``TypeError``, wrong values ``ValueError``.  Checks
that are specific to one function build their message with
:func:`value_error` / :func:`type_error`, so the wording has one form
everywhere; nothing outside this module constructs an exception itself
(``tests/test_validate.py`` enforces it).

Limits.  Sizes that only steer host-side loops or allocations are bounded so
that a mistaken size fails at once instead of running for minutes or
exhausting memory; each limit states its reason where it is defined.
"""

from __future__ import annotations

import difflib
import functools
import math
import numbers
import warnings
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from . import _compat

__all__ = [
    "MAX_BUCKETS",
    "MAX_CHANNELS",
    "MAX_ELEMENTS",
    "MAX_HEADS",
    "POSITION_LIMIT",
    "broadcast_shapes",
    "check_bool",
    "check_choice",
    "check_compute_dtype",
    "check_device",
    "check_dim",
    "check_finite_values",
    "check_float_array",
    "check_float_dtype",
    "check_index",
    "check_int",
    "check_integer_array",
    "check_mask_array",
    "check_namespace",
    "check_nonnegative_positions",
    "check_options",
    "check_position_pair",
    "check_position_range",
    "check_positions",
    "check_real",
    "check_relative",
    "check_sequence",
    "checked_positions",
    "dtype_name",
    "namespace",
    "output_dtype",
    "text",
    "type_error",
    "value_error",
    "value_range",
]

#: Widest ``dim`` (channels of a sinusoidal, RoPE, xPos or Sandwich table).  Frequencies are computed
#: on the host in 42-60 digit decimal arithmetic, one per channel pair: about 2 s at 2**15 and 5-8 s at
#: 2**16.  The widest model dimension in use is 18432 (PaLM's d_model), so 2**15 covers every real
#: model while a mistaken size (2**40) fails at once instead of running for hours.
MAX_CHANNELS = 2**15
#: Most attention heads (ALiBi slopes, Sandwich).  Real models have at most a few hundred; slopes and
#: scales are host lists, and every bias holds ``heads * Lq * Lk`` values, so 2**15 is generous.
MAX_HEADS = 2**15
#: Most T5 buckets.  Bucket boundaries are exact big-integer roots whose cost grows about as
#: ``num_buckets**3`` (about 2 s at 2**12); T5, mT5, LongT5 and friends use 32 to 256.
MAX_BUCKETS = 2**12
#: Most elements of an array built from Python sizes alone (M-RoPE and vision ids, an interpolated
#: table): 2**30 is 8 GiB of int64 or float64.  A 10M-token M-RoPE id array has 3e7 elements; larger
#: requests are a unit mistake that would exhaust memory before failing.
MAX_ELEMENTS = 2**30
#: Positions (and Python integers that are positions or distances) must satisfy ``|p| < 2**62``, so
#: that every difference ``k - q`` fits int64.  On JAX without x64 (int32 indices) the bound is 2**30.
POSITION_LIMIT = 2**62

CHANNELS_REASON = "wider tables are refused: their host-side frequencies would take minutes"
HEADS_REASON = "real models have at most a few hundred heads"
BUCKETS_REASON = "exact bucket boundaries cost about num_buckets**3; T5 models use 32 to 256"
ELEMENTS_REASON = "an array of 2**30 elements is 8 GiB; larger ones would exhaust memory"
POSITION_REASON = "|positions| < 2**62, so that every difference of positions fits int64"


# --- message builders ---------------------------------------------------------------------------


class _Text(str):
    """A description shown as is after "got" (``"shape (2, 3)"``), not as a repr."""

    def __repr__(self) -> str:
        return str(self)


def text(description: str) -> Any:
    """``description`` shown verbatim after "got" in a message (shapes, dtypes, ranges)."""
    return _Text(description)


def _shown(got: object) -> str:
    shown = repr(got)
    return shown if len(shown) <= 120 else shown[:100] + " ... " + shown[-12:]


def _message(name: str, rule: str, got: object, hint: str | None, *, with_type: bool) -> str:
    msg = f"{name} must be {rule}; got {_shown(got)}"
    if with_type and not isinstance(got, _Text):
        msg += f" of type {type(got).__name__}"
    return msg + (f" ({hint})" if hint else "")


def value_error(name: str, rule: str, got: object, *, hint: str | None = None) -> ValueError:
    """``ValueError("<name> must be <rule>; got <got!r> (<hint>)")``, to be raised by the caller."""
    return ValueError(_message(name, rule, got, hint, with_type=False))


def type_error(name: str, rule: str, got: object, *, hint: str | None = None) -> TypeError:
    """``TypeError("<name> must be <rule>; got <got!r> of type <T> (<hint>)")``."""
    return TypeError(_message(name, rule, got, hint, with_type=True))


def _kind(x: object) -> Any:
    """How a non-conforming argument is shown: an array's dtype, else the object itself."""
    if _compat.namespace_of(x) is not None:
        return text(f"an array of dtype {dtype_name(x.dtype)}")
    return x


def dtype_name(dtype: object) -> str:
    """A dtype as messages show it: ``float32``, ``torch.float32``, ``mlx.core.int8``."""
    return dtype.__name__ if isinstance(dtype, type) else str(dtype)  # NumPy's scalar types


# --- Python scalars and options -----------------------------------------------------------------


def check_int(
    value: object,
    name: str,
    *,
    minimum: int | None = 1,
    maximum: int | None = None,
    reason: str | None = None,
) -> int:
    """``value`` as a Python int in ``[minimum, maximum]`` (``None``: no bound on that side).

    ``reason`` explains an upper limit in the message.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise type_error(name, "an integer", value)
    value = int(value)
    if minimum is not None and value < minimum:
        rule = "a positive integer" if minimum == 1 else f"an integer >= {minimum}"
        raise value_error(name, rule, value)
    if maximum is not None and value > maximum:
        raise value_error(name, f"an integer <= {maximum}", value, hint=reason)
    return value


def check_dim(value: object, name: str = "dim", *, even: bool = False) -> int:
    """A channel count in ``[1, MAX_CHANNELS]`` (``even``: also even)."""
    dim = check_int(value, name, minimum=1, maximum=MAX_CHANNELS, reason=CHANNELS_REASON)
    if even and dim % 2:
        raise value_error(name, "an even positive integer", dim)
    return dim


def check_real(
    value: object,
    name: str,
    *,
    minimum: float | None = None,
    exclusive_minimum: float | None = None,
    maximum: float | None = None,
    hint: str | None = None,
) -> float:
    """``value`` as a finite Python float within the given bounds (``hint`` explains a violation)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise type_error(name, "a real number", value)
    try:
        value = float(value)
    except OverflowError:  # a Python int or Fraction beyond float range
        raise value_error(name, "finite", value, hint=hint) from None
    if not math.isfinite(value):
        raise value_error(name, "finite", value, hint=hint)
    if minimum is not None and value < minimum:
        raise value_error(name, f">= {minimum}", value, hint=hint)
    if exclusive_minimum is not None and value <= exclusive_minimum:
        raise value_error(name, f"> {exclusive_minimum}", value, hint=hint)
    if maximum is not None and value > maximum:
        raise value_error(name, f"<= {maximum}", value, hint=hint)
    return value


def check_bool(value: object, name: str) -> bool:
    """``value`` if it is a Python ``bool``; otherwise a ``TypeError``."""
    if not isinstance(value, bool):
        raise type_error(name, "True or False", value)
    return value


def check_choice(
    value: object,
    name: str,
    choices: Sequence[str],
    *,
    aliases: Mapping[str, str] | None = None,
) -> str:
    """``value`` if it is one of ``choices``: else a ``ValueError`` (a ``TypeError`` for non-strings).

    ``aliases`` maps names people use elsewhere (``"neox"``) to the advice shown
    when they are passed (``"GPT-NeoX uses 'half'"``).
    """
    allowed = "one of " + ", ".join(repr(c) for c in choices)
    if not isinstance(value, str):
        raise type_error(name, allowed, value)
    if value in choices:
        return value
    hint = None
    if aliases and value in aliases:
        hint = aliases[value]
    else:
        close = difflib.get_close_matches(value, choices, n=1)
        hint = f"did you mean {close[0]!r}?" if close else None
    raise value_error(name, allowed, value, hint=hint)


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
            hint = elsewhere.get(name) if elsewhere else None
            if hint is None:
                close = difflib.get_close_matches(name, list(defaults), n=1)
                hint = f"did you mean {close[0]!r}?" if close else None
            raise type_error("options", f"among {allowed} for {context}", text(repr(name)), hint=hint)
    return {**defaults, **options}


def check_sequence(
    value: object, name: str, *, rule: str, minimum: int = 0, maximum: int | None = None
) -> list:
    """``value`` as a list, if it is an ordered, sized sequence (not a string, set or mapping)."""
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise type_error(name, rule, value)
    if len(value) < minimum or (maximum is not None and len(value) > maximum):
        raise value_error(name, rule, text(f"{len(value)} entries"))
    return list(value)


# --- namespaces, devices, dtypes ------------------------------------------------------------------


def namespace(**arrays: object) -> Any:
    """The one array namespace of the named arguments (``None`` and non-arrays are ignored).

    A ``TypeError`` names the first argument whose library differs from the
    earlier ones.  With no array at all, NumPy (through array-api-compat).
    """
    found: tuple[str, Any] | None = None
    for name, x in arrays.items():
        xp = _compat.namespace_of(x)
        if xp is None:
            continue
        if found is None:
            found = (name, xp)
        elif xp is not found[1]:
            rule = f"an array of the same library as {found[0]} ({found[1].__name__})"
            raise type_error(name, rule, text(f"an array of {xp.__name__}"))
    return _compat.default_namespace() if found is None else found[1]


def check_namespace(xp: object) -> Any:
    """The array namespace ``xp`` names (``None``: NumPy); plain ``numpy``/``torch``/... are wrapped."""
    if xp is None:
        return _compat.default_namespace()
    normal = _compat.normalize_namespace(xp)
    if normal is None:
        rule = "an array namespace (numpy, torch, mlx.core, array_api_strict, jax.numpy, ...)"
        raise type_error("xp", rule, xp)
    return normal


def check_device(device: object, xp: Any) -> Any:
    """``device`` if ``xp`` can create arrays on it (``None``: the default; ignored on MLX)."""
    if device is None or _compat.is_mlx_namespace(xp):
        return device
    try:
        _compat.zeros((0,), xp=xp, dtype=xp.float32, device=device)
    except Exception as exc:  # each backend has its own error for a bad device; name the parameter
        raise value_error("device", f"a device of {xp.__name__}", device, hint=str(exc)[:80]) from None
    return device


def _remembered(function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` with its answers remembered per argument tuple, for arguments that hash.

    Small calls ask the same questions of the same dtypes again and again.  Arguments
    that cannot be hashed (or whose hash or ``==`` raises) are answered afresh each time.
    """
    cached = functools.lru_cache(maxsize=256)(function)

    @functools.wraps(function)
    def answer(*args: Any) -> Any:
        try:
            return cached(*args)
        except Exception:  # an unhashable argument; a genuine error is raised again below
            return function(*args)

    return answer


@_remembered
def _is_dtype(dtype: object, xp: Any, kind: Any) -> bool:
    """``xp.isdtype(dtype, kind)``; ``False`` for anything ``xp`` does not know as a dtype (another
    library's dtype makes some backends warn or raise instead)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return bool(xp.isdtype(dtype, kind))
        except Exception:  # each backend has its own error for a foreign object
            return False


#: Python's own number types: not dtypes of any namespace, whatever a backend's ``isdtype`` says.
_PYTHON_TYPES = (bool, int, float, complex)


def check_float_dtype(dtype: object, name: str, xp: Any, device: Any = None) -> Any:
    """``dtype`` if it is a real floating dtype object of ``xp`` that exists on ``device``."""
    if isinstance(dtype, str):
        hint = f"pass the dtype object, e.g. xp.{dtype}, not its name" if dtype.isidentifier() else None
        raise type_error(name, f"a real floating dtype of {xp.__name__}", dtype, hint=hint)
    # By identity (NumPy's float64 dtype == float).  Dask's isdtype takes float for float64 where
    # NumPy's refuses it: refused everywhere.
    if any(dtype is t for t in _PYTHON_TYPES):
        hint = f"pass the dtype object, e.g. xp.{'float64' if dtype is float else 'float32'}"
        raise type_error(name, f"a real floating dtype of {xp.__name__}", _kind(dtype), hint=hint)
    if _compat.namespace_of(dtype) is not None or not _is_dtype(dtype, xp, "real floating"):  # arrays too
        raise type_error(name, f"a real floating dtype of {xp.__name__}", _kind(dtype))
    if dtype == xp.float64 and not _compat.has_float64(xp, device):
        rule = "float32 or narrower on this backend/device (no float64 here)"
        raise value_error(name, rule, text(dtype_name(dtype)))
    return dtype


def output_dtype(dtype: object, name: str, xp: Any, device: Any) -> Any:
    """A checked output dtype; ``None`` gives the compute dtype (float64 where available)."""
    if dtype is None:
        return _compat.compute_dtype(xp, device)
    return check_float_dtype(dtype, name, xp, device)


def check_compute_dtype(dtype: object, name: str, xp: Any, device: Any) -> Any:
    """``xp.float32`` or ``xp.float64`` (where available); ``None`` gives the default."""
    if dtype is None:
        return _compat.compute_dtype(xp, device)
    check_float_dtype(dtype, name, xp, device)
    if dtype not in (xp.float32, xp.float64):
        raise value_error(name, "float32 or float64", text(dtype_name(dtype)))
    return dtype


# --- arrays ---------------------------------------------------------------------------------------


def _check_ndim(x: Any, name: str, min_ndim: int, ndim: int | None) -> None:
    if ndim is not None and x.ndim != ndim:
        raise value_error(name, f"{ndim}-dimensional", text(f"shape {tuple(x.shape)}"))
    if x.ndim < min_ndim:
        raise value_error(name, f"at least {min_ndim}-dimensional", text(f"shape {tuple(x.shape)}"))


def _has_dtype(x: object, xp: Any, kind: Any) -> bool:
    own = _compat.namespace_of(x)
    if own is xp:  # xp's own dtype: no foreign object to guard against
        return bool(xp.isdtype(x.dtype, kind))
    return own is not None and _is_dtype(x.dtype, xp, kind)


def check_integer_array(x: Any, name: str, xp: Any, *, min_ndim: int = 0) -> None:
    """A ``TypeError`` unless ``x`` is an array of an integer dtype with ``min_ndim`` dimensions."""
    if not _has_dtype(x, xp, "integral"):
        raise type_error(name, "an array of an integer dtype", _kind(x))
    _check_ndim(x, name, min_ndim, None)


def check_float_array(x: Any, name: str, xp: Any, *, min_ndim: int = 0, ndim: int | None = None) -> None:
    """A ``TypeError`` unless ``x`` is an array of a real floating dtype; a ``ValueError`` on its rank."""
    if not _has_dtype(x, xp, "real floating"):
        raise type_error(name, "an array of a real floating dtype", _kind(x))
    _check_ndim(x, name, min_ndim, ndim)


def check_mask_array(x: Any, name: str, xp: Any, *, min_ndim: int = 1, bool_only: bool = False) -> None:
    """A ``TypeError`` unless ``x`` is a bool (or integer) array; a ``ValueError`` on its rank."""
    kinds = "bool" if bool_only else ("bool", "integral")
    if not _has_dtype(x, xp, kinds):
        rule = "a boolean array" if bool_only else "an array of a bool or integer dtype"
        raise type_error(name, rule, _kind(x))
    _check_ndim(x, name, min_ndim, None)


def value_range(x: Any, xp: Any) -> tuple[Any, Any] | None:
    """(min, max) of an array whose values are known now, as Python numbers; else ``None``."""
    if not _compat.values_known(x) or math.prod(x.shape) == 0:
        return None
    low, high = _compat.min_max(x, xp)
    if xp.isdtype(x.dtype, "integral"):
        return int(low), int(high)
    return float(low), float(high)


@_remembered
def _integer_range(xp: Any, dtype: Any) -> tuple[int, int]:
    """``(min, max)`` of an integer dtype, as Python ints."""
    info = xp.iinfo(dtype)
    return int(info.min), int(info.max)


def position_limit(xp: Any, index: Any) -> int:
    """``2**62``, or half the largest value of the index dtype ``index`` if smaller (int32: ``2**30``)."""
    return min(POSITION_LIMIT, (_integer_range(xp, index)[1] + 1) // 2)


def _index_dtype_of(x: Any, xp: Any) -> Any:
    """The index dtype of the device of the integer array ``x``: int64 wherever ``x`` is int64."""
    return xp.int64 if x.dtype == xp.int64 else _compat.index_dtype(xp, _compat.device(x))


def _widened(x: Any, name: str, xp: Any) -> tuple[Any, bool]:
    """``x`` in the index dtype of its device, and whether that cast was exact for every value of ``x.dtype``.

    A dtype wider than the index dtype (uint64) is returned as is (``False``),
    unless the backend cannot compare it (PyTorch's uint64): then a ``TypeError``.
    """
    if _integer_range(xp, x.dtype)[1] <= _integer_range(xp, _index_dtype_of(x, xp))[1]:
        return _compat.widen(x, xp), True
    if not _compat.computes_with(x.dtype, xp):
        rule = f"an array of an integer dtype that {xp.__name__} compares and reduces (pass int64)"
        raise type_error(name, rule, _kind(x))
    return x, False


def check_positions(x: Any, name: str, xp: Any, *, min_ndim: int = 0) -> Any:
    """Integer positions ``x``, checked (``|p| < 2**62``) and widened to the index dtype (int64).

    Narrow and unsigned dtypes are widened before any arithmetic, so
    differences such as ``k - q`` never wrap.  The bound is read from the
    values only when the dtype can exceed it (64-bit inputs), and not at all
    where values are unknown (Dask, JAX under ``jit``).
    """
    return checked_positions(x, name, xp, min_ndim=min_ndim)[0]


def checked_positions(x: Any, name: str, xp: Any, *, min_ndim: int = 0) -> tuple[Any, tuple[int, int] | None]:
    """:func:`check_positions`, and the ``(min, max)`` it read (``None`` when it read nothing)."""
    check_integer_array(x, name, xp, min_ndim=min_ndim)
    limit = position_limit(xp, _index_dtype_of(x, xp))
    low, high = _integer_range(xp, x.dtype)
    x, exact = _widened(x, name, xp)
    span = None
    if high >= limit or low <= -limit:
        span = value_range(x, xp)
        if span is not None and (span[0] <= -limit or span[1] >= limit):
            bound = int(math.log2(limit))
            rule = f"positions with |p| < 2**{bound} (so that every difference fits int64)"
            raise value_error(name, rule, text(f"values from {span[0]} to {span[1]}"))
    return (x if exact else _compat.widen(x, xp)), span


def check_relative(x: Any, name: str, xp: Any) -> Any:
    """Integer relative positions ``x`` in the index dtype; unsigned values above its maximum saturate.

    The callers (buckets, clipped indices) saturate far inside that range, so
    saturating changes no result; nothing is read back.  They clip before any
    ``abs`` (``abs(-2**63)`` wraps).
    """
    check_integer_array(x, name, xp)
    x, exact = _widened(x, name, xp)
    if exact:
        return x
    top = int(xp.iinfo(_index_dtype_of(x, xp)).max)  # uint64: saturate before the cast
    return _compat.widen(_compat.clip(x, 0, top, xp=xp), xp)


def check_index(x: Any, name: str, xp: Any, *, rows: int, min_ndim: int = 0) -> Any:
    """Integer row indices ``x`` into a table of ``rows`` rows, widened (read back where known)."""
    check_integer_array(x, name, xp, min_ndim=min_ndim)
    x, exact = _widened(x, name, xp)
    span = value_range(x, xp)
    if span is not None and (span[0] < 0 or span[1] >= rows):
        rule = f"in [0, {rows}) for a table of {rows} rows"
        raise value_error(name, rule, text(f"values from {span[0]} to {span[1]}"))
    return x if exact else _compat.widen(x, xp)


def check_position_pair(q_positions: Any, k_positions: Any, xp: Any) -> tuple[Any, Any]:
    """Query and key positions, each at least 1-D with broadcastable leading dimensions, checked and
    widened (:func:`check_positions`)."""
    q = check_positions(q_positions, "q_positions", xp, min_ndim=1)
    k = check_positions(k_positions, "k_positions", xp, min_ndim=1)
    broadcast_shapes(q_positions=q.shape[:-1], k_positions=k.shape[:-1])
    return q, k


def check_position_range(x: Any, name: str, xp: Any, *, low: int | None, high: int | None, rule: str) -> None:
    """A ``ValueError`` if an integer array has a value below ``low`` or above ``high``.

    ``rule`` completes "``name`` must be ...".  Reads back the extremes; skipped
    when values are unknown (Dask, JAX under ``jit``: see ``_compat.values_known``).
    """
    span = value_range(x, xp)
    if span is None:
        return
    if high is not None and span[1] > high:
        raise value_error(name, rule, text(f"a maximum of {span[1]}"))
    if low is not None and span[0] < low:
        raise value_error(name, rule, text(f"a minimum of {span[0]}"))


def check_nonnegative_positions(x: Any, name: str, xp: Any) -> None:
    """A ``ValueError`` if an integer array holds a negative value (read back where known)."""
    check_position_range(x, name, xp, low=0, high=None, rule="non-negative")


def check_finite_values(x: Any, name: str, xp: Any, *, minimum: float | None = None) -> None:
    """A ``ValueError`` if a float array holds NaN, an infinity or a value below ``minimum``.

    Reads back two scalars; skipped where values are unknown.
    """
    if not _compat.values_known(x) or math.prod(x.shape) == 0:
        return
    finite = bool(xp.all(xp.isfinite(x)))
    span = value_range(x, xp) if finite else None
    if not finite or (minimum is not None and span is not None and span[0] < minimum):
        rule = "finite" if minimum is None else f"finite and >= {minimum}"
        got = "a NaN or infinite value" if not finite else f"a minimum of {span[0]}"
        raise value_error(name, rule, text(got))


def broadcast_shapes(**shapes: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of the named shapes; a ``ValueError`` names the first that does not fit the others."""
    distinct = {tuple(shape) for shape in shapes.values()}
    if len(distinct) == 1:  # the usual case (no leading dimensions, or the same ones): nothing to check
        return distinct.pop()
    out: tuple[int, ...] = ()
    seen: list[str] = []
    for name, shape in shapes.items():
        shape = tuple(shape)
        width = max(len(out), len(shape))
        a, b = (1,) * (width - len(out)) + out, (1,) * (width - len(shape)) + shape
        if any(x != y and 1 not in (x, y) for x, y in zip(a, b, strict=True)):
            rule = f"broadcastable to the shape {out} of {' and '.join(seen)}"
            raise value_error(name, rule, text(f"shape {shape}"))
        out = tuple(y if x == 1 else x for x, y in zip(a, b, strict=True))
        seen.append(name)
    return out
