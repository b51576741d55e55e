"""The invariant framework: registration, tolerances from the precision classes, the run.

A family module registers a check with :func:`invariant`; :func:`run_invariants`
runs every registered check at each dtype and variant (layout, convention) the
adapter declares, with tolerances from :func:`phase_tolerance`.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..adapters.base import Adapter
from ..compare import BEYOND_FRACTION, PRODUCT_CONSTANT, UNIT_ROUNDOFF, Mismatch, as_numpy
from ..isolation import CallFailed
from ..results import INVARIANT, CaseResult

__all__ = [
    "INVARIANTS",
    "BeyondPrecision",
    "Invariant",
    "InvariantFailure",
    "phase_tolerance",
    "run_invariants",
]


class InvariantFailure(AssertionError):
    """The property does not hold; the message says where and by how much."""


class BeyondPrecision(Exception):
    """The adapter's declared precision class cannot hold the property to anything useful here."""


@dataclasses.dataclass(frozen=True)
class Invariant:
    """A named property: ``check(adapter, dtype, rng[, variant])`` returns the worst error, or raises.

    ``variants(adapter)``: the layouts / conventions the property is checked for,
    one result each (``invariant/<scheme>/<name>/<variant>``); ``None`` for one result.
    """

    id: str
    scheme: str
    needs: tuple[str, ...]
    check: Callable[..., float]
    flags: tuple[str, ...] = ()
    seed: int = 0
    float_outputs: bool = True
    requires: Callable[[Adapter], str | None] | None = None
    variants: Callable[[Adapter], tuple[str, ...]] | None = None


INVARIANTS: list[Invariant] = []


def invariant(
    scheme: str,
    name: str,
    *needs: str,
    seed: int,
    flags: tuple[str, ...] = (),
    float_outputs: bool = True,
    requires: Callable[[Adapter], str | None] | None = None,
    variants: Callable[[Adapter], tuple[str, ...]] | None = None,
) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Register a check function as ``invariant/<scheme>/<name>``."""

    def register(fn: Callable[..., float]) -> Callable[..., float]:
        INVARIANTS.append(
            Invariant(
                f"invariant/{scheme}/{name}",
                scheme,
                needs,
                fn,
                flags,
                seed,
                float_outputs,
                requires,
                variants,
            )
        )
        return fn

    return register


def phase_tolerance(
    adapter: Adapter,
    function: str,
    dtype: str,
    angle: float | np.ndarray,
    exact: float | np.ndarray,
    *,
    frequency_error: float = 1.0,
) -> float | np.ndarray:
    """The tolerance (per unit of output scale) for values computed from angles up to ``angle``.

    ``exact``: what the exact class must meet.  Under the ``product`` class the
    bound of :func:`~..compare.product_bound` applies instead, whenever it is
    wider; a bound above ``BEYOND_FRACTION`` raises :class:`BeyondPrecision`.
    """
    if adapter.capabilities.phase_of(function) != "product":
        return exact
    bound = UNIT_ROUNDOFF[dtype] * ((2.0 + frequency_error) * np.abs(angle) + PRODUCT_CONSTANT)
    if np.max(bound) > BEYOND_FRACTION:
        msg = (
            f"the {dtype} product class allows errors up to {float(np.max(bound)):.3g} at angles up to "
            f"{float(np.max(angle)):.3g} rad: not judged"
        )
        raise BeyondPrecision(msg)
    return np.maximum(exact, bound)


def run_invariants(adapter: Adapter, *, only: set[str] | None = None) -> list[CaseResult]:
    """Run every registered invariant at each declared dtype and variant (layout, convention).

    ``adapter`` is the suite's :class:`~..isolation.ProxyAdapter`: its calls return
    host arrays or raise :class:`~..isolation.CallFailed` (skip when unsupported).
    """
    out = []
    for inv in INVARIANTS:
        if only and inv.scheme not in only and not (set(inv.needs) & only):
            continue
        dtypes = adapter.capabilities.dtypes_of(inv.needs[0]) if inv.float_outputs else ("int",)
        names = inv.variants(adapter) if inv.variants else (None,)
        for variant in names:
            for dtype in dtypes:
                out.append(_run_one(adapter, inv, dtype, variant))
    return out


def _run_one(adapter: Adapter, inv: Invariant, dtype: str, variant: str | None) -> CaseResult:
    rid = inv.id if variant is None else f"{inv.id}/{variant}"
    base = CaseResult(rid, INVARIANT, inv.scheme, dtype, "skip", flags=inv.flags)
    missing = [f for f in inv.needs if not adapter.supports(f)]
    reason = inv.requires(adapter) if inv.requires else None
    if missing or reason:
        return dataclasses.replace(base, detail=reason or f"needs {', '.join(missing)}")
    rng = np.random.default_rng(inv.seed)
    try:
        run_dtype = "float64" if dtype == "int" else dtype
        args = (adapter, run_dtype, rng) if variant is None else (adapter, run_dtype, rng, variant)
        err = inv.check(*args)
    except NotImplementedError as exc:  # CallUnsupported: the adapter raised Unsupported
        # CallUnsupported's text is the outcome's, which starts "unsupported: " already
        detail = str(exc) if isinstance(exc, CallFailed) else f"unsupported: {exc}"
        return dataclasses.replace(base, detail=detail)
    except BeyondPrecision as exc:
        return dataclasses.replace(base, status="beyond-precision", detail=str(exc))
    except (InvariantFailure, Mismatch, CallFailed) as exc:
        return dataclasses.replace(base, status="fail", detail=str(exc))
    except (ValueError, TypeError, IndexError, ArithmeticError) as exc:
        # NumPy's errors on an output of the wrong shape or values: the adapter's failure.  Any other
        # exception (KeyError, AttributeError, ...) is a bug of the check: the run stops as SUITE ERROR.
        where = traceback.extract_tb(exc.__traceback__)[-1]
        detail = f"the adapter's output broke the check: {type(exc).__name__}: {exc} [line {where.lineno}]"
        return dataclasses.replace(base, status="fail", detail=detail)
    return dataclasses.replace(base, status="pass", max_abs_err=float(err))


def host(x: Any, dtype: str | None = None) -> np.ndarray:
    """An adapter output as a float64 (or given dtype) NumPy array."""
    a = as_numpy(x)
    return a.astype(np.float64) if dtype is None else a.astype(dtype)


def expect_close(actual: np.ndarray, expected: np.ndarray, tol: float | np.ndarray, what: str) -> float:
    """The max abs difference; raises :class:`InvariantFailure` beyond ``tol``."""
    actual, expected = np.asarray(actual, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if actual.shape != expected.shape:
        msg = f"{what}: shape {actual.shape} vs {expected.shape}"
        raise InvariantFailure(msg)
    if not np.all(np.isfinite(actual)):
        msg = f"{what}: non-finite values"
        raise InvariantFailure(msg)
    err = np.abs(actual - expected)
    bad = err > tol
    if np.any(bad):
        i = int(np.argmax(np.where(bad, err, -1)))
        msg = (
            f"{what}: {int(bad.sum())} of {bad.size} values off; worst {float(actual.ravel()[i])!r} vs "
            f"{float(expected.ravel()[i])!r} (diff {float(err.ravel()[i]):.3g} > tol "
            f"{float(np.broadcast_to(tol, err.shape).ravel()[i]):.3g})"
        )
        raise InvariantFailure(msg)
    return float(err.max()) if err.size else 0.0


def expect_true(condition: np.ndarray | bool, what: str) -> None:
    """Raise :class:`InvariantFailure` unless every element of ``condition`` holds."""
    cond = np.asarray(condition)
    if not np.all(cond):
        first = int(np.argmin(cond))
        msg = f"{what}: violated at {int((~cond).sum())} of {cond.size} entries (first flat index {first})"
        raise InvariantFailure(msg)


def ints(values: Iterable[int] | np.ndarray) -> np.ndarray:
    """int64 positions."""
    return np.asarray(list(values) if not isinstance(values, np.ndarray) else values, dtype=np.int64)
