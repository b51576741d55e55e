"""Property checks every correct implementation passes, seeded and reproducible.

Each invariant calls the adapter's canonical functions (NumPy in, anything
array-like out), so it tests the implementation without golden values: RoPE's
relative-shift invariance, norm preservation, identity at 0 and layout
equivalence; sinusoidal boundedness and shift-linearity; ALiBi's Toeplitz
structure, causal-form equivalence and blockwise construction; T5 bucket range,
monotonicity and sign partition; Shaw clipping; NoPE permutation equivariance.
Results are ``CaseResult`` rows with ids ``invariant/<scheme>/<name>``.
"""

from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..adapters.base import Adapter
from ..compare import Mismatch, as_numpy
from ..isolation import CallFailed
from ..results import CaseResult

__all__ = ["INVARIANTS", "Invariant", "InvariantFailure", "run_invariants"]


class InvariantFailure(AssertionError):
    """The property does not hold; the message says where and by how much."""


@dataclasses.dataclass(frozen=True)
class Invariant:
    """A named property: ``check(adapter, dtype, rng)`` returns the worst error (raises if violated)."""

    id: str
    scheme: str
    needs: tuple[str, ...]
    check: Callable[[Adapter, str, np.random.Generator], float]
    flags: tuple[str, ...] = ()
    seed: int = 0
    float_outputs: bool = True
    requires: Callable[[Adapter], str | None] | None = None


INVARIANTS: list[Invariant] = []


def invariant(
    scheme: str,
    name: str,
    *needs: str,
    seed: int,
    flags: tuple[str, ...] = (),
    float_outputs: bool = True,
    requires: Callable[[Adapter], str | None] | None = None,
) -> Callable[[Callable[..., float]], Callable[..., float]]:
    """Register a check function as ``invariant/<scheme>/<name>``."""

    def register(fn: Callable[..., float]) -> Callable[..., float]:
        INVARIANTS.append(
            Invariant(f"invariant/{scheme}/{name}", scheme, needs, fn, flags, seed, float_outputs, requires)
        )
        return fn

    return register


def host(x: Any, dtype: str | None = None) -> np.ndarray:
    """An adapter output as a float64 (or given dtype) NumPy array."""
    a = as_numpy(x)
    return a.astype(np.float64) if dtype is None else a.astype(dtype)


def run_invariants(adapter: Adapter, *, only: set[str] | None = None) -> list[CaseResult]:
    """Run every registered invariant once, at float64 if the adapter has it, else float32.

    ``adapter`` is the suite's :class:`~..isolation.ProxyAdapter`: its calls return
    host arrays or raise :class:`~..isolation.CallFailed` (skip when unsupported).
    """
    from . import alibi, nope, relative, rope, sinusoidal, t5  # noqa: F401 - registration

    dtype = "float64" if "float64" in adapter.capabilities.dtypes else "float32"
    out = []
    for inv in INVARIANTS:
        if only and inv.scheme not in only:
            continue
        run_dtype = dtype if inv.float_outputs else "int"
        base = CaseResult(inv.id, "invariant", inv.scheme, run_dtype, "skip", flags=inv.flags)
        missing = [f for f in inv.needs if not adapter.supports(f)]
        reason = inv.requires(adapter) if inv.requires else None
        if missing or reason:
            detail = reason or f"needs {', '.join(missing)}"
            out.append(dataclasses.replace(base, detail=detail))
            continue
        try:
            err = inv.check(adapter, dtype, np.random.default_rng(inv.seed))
        except NotImplementedError as exc:  # CallUnsupported: the adapter raised Unsupported
            out.append(dataclasses.replace(base, detail=f"unsupported: {exc}"))
        except (InvariantFailure, Mismatch, CallFailed) as exc:
            out.append(dataclasses.replace(base, status="fail", detail=str(exc)))
        except Exception as exc:  # the adapter's output broke the check's own arithmetic
            where = traceback.extract_tb(exc.__traceback__)[-1]
            detail = (
                f"the adapter's output broke the check: {type(exc).__name__}: {exc} [line {where.lineno}]"
            )
            out.append(dataclasses.replace(base, status="fail", detail=detail))
        else:
            out.append(dataclasses.replace(base, status="pass", max_abs_err=float(err)))
    return out


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
