"""Comparing an adapter's output with a golden value: tolerances, ulp, special compare modes.

Stdlib + NumPy only, so the runner works from a plain wheel install.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from .golden import GoldenError, _format

__all__ = [
    "Mismatch",
    "PhaseBound",
    "Verdict",
    "as_numpy",
    "compare_output",
    "product_bound",
    "ulp_distance",
    "within_tolerance",
]

_FLOAT_DTYPES = {"float64": np.float64, "float32": np.float32}

#: Failing elements a verdict lists (the worst).
WORST = 3

#: Smallest |expected| whose ulp distance enters the reported max ulp.
ULP_FLOOR = 2.0**-32


class Mismatch(Exception):
    """The output has the wrong type, shape, dtype or values (message says which)."""


@dataclasses.dataclass
class Verdict:
    """Result of one comparison.

    ``ok``: every judged element is within tolerance.  ``judged`` / ``beyond``:
    elements compared, and elements whose precision-class bound is too wide to
    say anything (not judged; see :func:`product_bound`).  ``max_abs_err`` and
    ``worst_position`` cover every element, judged or not (the accuracy grade).
    ``exact``: every element is within the exact-class tolerance.  ``used``: the
    largest fraction of its allowance any judged element uses (error / allowed;
    at most 1 on a pass): how close to the edge of its tolerance the output is.
    """

    ok: bool
    max_abs_err: float = 0.0
    max_ulp: float = 0.0
    detail: str = ""
    judged: int = 0
    beyond: int = 0
    worst_position: int | None = None
    exact: bool = True
    used: float = 0.0
    #: Up to :data:`WORST` failing elements, worst first: (flat index, actual, expected, error, allowed).
    worst: list[tuple[int, float, float, float, float]] = dataclasses.field(default_factory=list)
    #: The failing elements' mask, in the output's shape (``None`` for the row-shift mode and non-floats).
    failing: np.ndarray | None = dataclasses.field(default=None, repr=False)


def as_numpy(x: Any) -> np.ndarray:
    """Host NumPy array of anything an adapter may return (NumPy, torch, JAX, MLX, CuPy, Dask, DLPack).

    Always a base-class ``numpy.ndarray`` (a view where one suffices): a subclass
    (a masked array, one overriding ``__eq__`` or ``__array_ufunc__``) is read as
    its plain data.  Objects of other libraries are read through DLPack first
    (``np.from_dlpack``), then through ``np.asarray``.
    """
    if isinstance(x, np.ndarray):
        return np.ndarray.view(x, np.ndarray)
    if isinstance(x, (bool, int, float, np.generic)):
        return np.asarray(x)
    module = type(x).__module__.split(".")[0]
    if module == "torch":
        return np.asarray(x.detach().cpu().numpy())
    if module == "cupy":
        return np.asarray(x.get())
    if module == "dask":
        return np.asarray(x.compute())
    if module not in ("jax", "jaxlib", "mlx") and hasattr(x, "__dlpack__"):
        try:
            return np.asarray(np.from_dlpack(x))
        except Exception:  # e.g. memory NumPy cannot reach: the array protocols may still read it
            pass
    try:
        return np.asarray(x)
    except Exception:
        pass
    msg = f"output of type {type(x).__name__} is neither NumPy-convertible nor DLPack"
    raise Mismatch(msg)


def _ordered(bits: np.ndarray) -> np.ndarray:
    """Integer keys that order floats like their values (for ulp distances)."""
    sign_min = np.int64(-(2**31)) if bits.itemsize == 4 else np.int64(-(2**63))
    bits = bits.astype(np.int64)
    return np.where(bits < 0, sign_min - bits, bits)


def ulp_distance(actual: np.ndarray, expected: np.ndarray, dtype: str) -> np.ndarray:
    """Units in the last place of ``dtype`` between ``actual`` and ``expected`` rounded to ``dtype``."""
    np_dtype = _FLOAT_DTYPES[dtype]
    a = np.asarray(actual, dtype=np_dtype)
    e = np.asarray(expected, dtype=np.float64).astype(np_dtype)
    view = np.int32 if np_dtype is np.float32 else np.int64
    ka, ke = _ordered(a.view(view)), _ordered(e.view(view))
    safe = (np.abs(ka) < 2**62) & (np.abs(ke) < 2**62)  # int64 difference cannot overflow
    exact = np.abs(np.where(safe, ka, 0) - np.where(safe, ke, 0)).astype(np.float64)
    return np.where(safe, exact, np.abs(ka.astype(np.float64) - ke.astype(np.float64)))


def _check_form(actual: np.ndarray, expected: np.ndarray, kind: str, dtype: str | None, name: str) -> None:
    if tuple(actual.shape) != tuple(expected.shape):
        msg = f"{name}: shape {tuple(actual.shape)}, expected {tuple(expected.shape)}"
        raise Mismatch(msg)
    if kind == "float":
        if actual.dtype != np.dtype(_FLOAT_DTYPES[dtype]) and actual.shape != ():
            msg = f"{name}: dtype {actual.dtype}, expected {dtype}"
            raise Mismatch(msg)
        if not np.all(np.isfinite(actual)):
            msg = f"{name}: {int(np.sum(~np.isfinite(actual)))} non-finite values (NaN or inf)"
            raise Mismatch(msg)
    elif kind == "int" and not np.issubdtype(actual.dtype, np.integer):
        msg = f"{name}: dtype {actual.dtype}, expected an integer dtype"
        raise Mismatch(msg)
    elif kind == "bool" and actual.dtype != np.bool_:
        msg = f"{name}: dtype {actual.dtype}, expected bool"
        raise Mismatch(msg)


def _rowshift(
    actual: np.ndarray, expected: np.ndarray, q: np.ndarray, k: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(actual, expected) restricted to k <= q, each row shifted to agree at its last such key."""
    allowed = k[None, :] <= q[:, None]  # [Lq, Lk]
    diff = actual.astype(np.float64) - expected
    keys = np.where(allowed, k[None, :], np.iinfo(np.int64).min)
    ref = np.argmax(keys, axis=-1)  # the allowed key nearest the query
    has = allowed.any(axis=-1)
    shift = np.take_along_axis(diff, np.broadcast_to(ref[:, None], (*diff.shape[:-1], 1)), axis=-1)
    shifted = actual.astype(np.float64) - shift
    mask = np.broadcast_to(allowed & has[:, None], diff.shape)
    return shifted[mask], expected[mask]


@dataclasses.dataclass(frozen=True)
class PhaseBound:
    """The per-element tolerance of a precision class, its not-judged mask and each element's position."""

    bound: np.ndarray
    beyond: np.ndarray
    positions: np.ndarray
    label: str


#: Unit roundoff of each run dtype.
UNIT_ROUNDOFF = {"float64": 2.0**-53, "float32": 2.0**-24}
#: Unit roundoffs of error the product class allows on top of the angle's (trig, factors, output rounding).
PRODUCT_CONSTANT = 8.0
#: A product-class bound above this fraction of the output's scale cannot tell right from wrong.
BEYOND_FRACTION = 1.0 / 16


def product_bound(phase: dict[str, Any], shape: tuple[int, ...], dtype: str) -> PhaseBound:
    """The ``product`` precision class's tolerance for each element of an output of ``shape``.

    The class: positions cast to ``dtype`` (unit roundoff ``u``), the angle the
    rounded product of position and frequency, then cos/sin in ``dtype``.  Each
    step rounds once, so with ``e`` the frequencies' relative error in units of
    ``u`` (``phase["frequencyError"]``), the angle is off by at most
    ``(2 + e) u |m theta|`` (to first order), and cos/sin move by no more than
    their argument.  Adding ``PRODUCT_CONSTANT`` unit roundoffs for the trig
    functions, the attention factor and the final rounding, an element of scale
    ``s`` is within::

        s u ((2 + e) |m theta| + PRODUCT_CONSTANT)

    of the exact value.  Elements where that exceeds ``BEYOND_FRACTION * s`` are
    *beyond precision*: any value near the right size would pass, so they are
    reported but not judged.  Derivation: docs/guide/tolerance.md.
    """
    u = UNIT_ROUNDOFF[dtype]
    positions = np.abs(_format.decode(phase["positions"]).astype(np.float64))
    frequencies = np.abs(_format.decode(phase["frequencies"]))
    angle = positions[..., None] * frequencies
    scale = float(phase["scale"])
    bound = scale * u * ((2.0 + float(phase["frequencyError"])) * angle + PRODUCT_CONSTANT)
    at = np.broadcast_to(positions[..., None], angle.shape)
    return PhaseBound(
        np.broadcast_to(bound, shape),
        np.broadcast_to(bound > BEYOND_FRACTION * scale, shape),
        np.broadcast_to(at, shape),
        f"{dtype} product",
    )


def _tolerance_used(err: np.ndarray, allowed: np.ndarray, judged: np.ndarray) -> float:
    """max over judged elements of err / allowed (an exact match with nothing allowed uses 0)."""
    if not np.any(judged):
        return 0.0
    e, a = err[judged], allowed[judged]
    with np.errstate(over="ignore", divide="ignore"):  # a huge error over a tiny allowance is inf: fine
        ratio = np.where(a > 0, e / np.where(a > 0, a, 1.0), np.where(e > 0, np.inf, 0.0))
    return float(np.max(ratio))


def _checked_tolerance(tolerance: dict[str, Any]) -> dict[str, float]:
    """``tolerance`` if each of atol, rtol and maxUlp is a finite number >= 0, else a GoldenError.

    The golden set's validator bounds tolerances per function; this is the
    comparison's own guard, so no caller can hand it an ``atol`` of ``inf``.
    """
    for key in ("atol", "rtol", "maxUlp"):
        value = tolerance.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < math.inf:
            msg = f"tolerance {key} must be a finite number >= 0; the golden case gives {value!r}"
            raise GoldenError(msg)
    return tolerance


def within_tolerance(
    err: np.ndarray, expected: np.ndarray, ulps: np.ndarray | None, tolerance: dict[str, float]
) -> np.ndarray:
    """Per element: ``err <= atol + rtol |expected|``, or (``ulps`` given) within ``maxUlp`` ulps.

    The exact class's element test (the golden file's stored tolerance at the run dtype).
    A non-finite expected value is compared by exact equality, and outputs are
    finite (:func:`compare_output` refuses others), so it never matches: without
    that, ``rtol |inf|`` would accept any finite output.
    """
    finite = np.isfinite(expected)
    ok = err <= tolerance["atol"] + tolerance["rtol"] * np.abs(np.where(finite, expected, 0.0))
    if ulps is not None:
        ok |= ulps <= tolerance.get("maxUlp", 0)
    return ok & finite


def compare_output(
    actual: Any,
    expected: np.ndarray,
    *,
    kind: str,
    dtype: str | None,
    tolerance: dict[str, float] | None,
    name: str,
    acceptable: np.ndarray | None = None,
    mode: str = "allclose",
    positions: tuple[np.ndarray, np.ndarray] | None = None,
    phase: PhaseBound | None = None,
) -> Verdict:
    """Compare one output; raises :class:`Mismatch` for wrong shape, dtype, or non-finite values.

    ``tolerance`` is the exact class's (stored in the golden file); ``phase``, when
    given, widens it per element to the declared precision class's bound and
    marks the elements beyond precision.
    """
    a = as_numpy(actual)
    _check_form(a, expected, kind, dtype, name)
    if kind in ("int", "bool"):
        good = a == expected
        if acceptable is not None:
            good |= a == acceptable
        bad = int(np.sum(~good))
        diff = np.abs(a.astype(np.float64) - expected)
        err = float(np.max(diff)) if a.size else 0.0
        detail = (
            ""
            if not bad
            else f"{name}: {bad} of {a.size} elements differ (first at flat index "
            f"{int(np.argmin(good.ravel()))}: {a.ravel()[np.argmin(good.ravel())]!r} != "
            f"{expected.ravel()[np.argmin(good.ravel())]!r})"
        )
        failing = ~good
        return Verdict(
            bad == 0,
            err,
            0.0,
            detail,
            judged=int(a.size),
            worst=_worst(failing, diff, a, expected, np.zeros(diff.shape)),
            failing=failing,
        )
    tol = _checked_tolerance(tolerance or {"atol": 0.0, "rtol": 0.0, "maxUlp": 0})
    if mode == "causal_rowshift" and positions is not None:
        a64, e = _rowshift(a, expected, *positions)
        ulps = np.zeros_like(e)
    else:
        a64, e = a.astype(np.float64), expected
        ulps = ulp_distance(a, e, dtype) if a.size else np.zeros(0)
    err = np.abs(a64 - e)
    exact_ok = within_tolerance(err, e, None if mode == "causal_rowshift" else ulps, tol)
    if acceptable is not None and mode != "causal_rowshift":
        # the case's other right answer (a rounding tie, e.g. a bucket boundary): an element
        # within tolerance of it is right, and is measured against it
        alt = np.abs(a64 - acceptable)
        alt_ok = within_tolerance(alt, acceptable, ulp_distance(a, acceptable, dtype), tol)
        err = np.where(alt_ok & (alt < err), alt, err)
        exact_ok = exact_ok | alt_ok
    good, judged = exact_ok, np.ones(err.shape, dtype=bool)
    allowed = tol["atol"] + tol["rtol"] * np.abs(e)
    if mode != "causal_rowshift" and tol.get("maxUlp", 0):
        spacing = np.spacing(np.abs(e).astype(_FLOAT_DTYPES[dtype])).astype(np.float64)
        allowed = np.maximum(allowed, tol["maxUlp"] * spacing)
    if phase is not None and mode != "causal_rowshift":
        good = exact_ok | (err <= phase.bound)
        judged = ~phase.beyond
        allowed = np.maximum(allowed, phase.bound)
    used = _tolerance_used(err, allowed, judged)
    max_err = float(np.max(err)) if err.size else 0.0
    # Near zero the ulp count explodes (there are ~4e18 float64 values between 0 and 1e-17):
    # the reported ulp statistic covers |expected| >= 2**-32; there the absolute error is the measure.
    counted = ulps[np.abs(e) >= ULP_FLOOR]
    max_ulp = float(np.max(counted)) if counted.size else 0.0
    worst_at = int(np.argmax(err)) if err.size else 0
    worst_position = int(phase.positions.ravel()[worst_at]) if phase is not None and err.size else None
    n_judged, n_beyond = int(np.sum(judged)), int(np.sum(~judged))
    verdict = Verdict(
        bool(np.all(good | ~judged)),
        max_err,
        max_ulp,
        "",
        used=used,
        judged=n_judged,
        beyond=n_beyond,
        worst_position=worst_position,
        exact=bool(np.all(exact_ok)),
    )
    failing = ~good & judged
    if not np.any(failing):
        if n_beyond:
            verdict.detail = (
                f"{name}: {n_beyond} of {err.size} elements beyond the {phase.label}-class bound "  # type: ignore[union-attr]
                f"(not judged; worst error {max_err:.3g})"
            )
        return verdict
    if mode != "causal_rowshift":
        verdict.worst = _worst(failing, err, a64, e, allowed)
        verdict.failing = failing
    worst = int(np.argmax(np.where(failing, err, -1.0)))
    allowed = tol["atol"] + tol["rtol"] * abs(float(e.ravel()[worst]))
    if phase is not None:
        allowed = max(allowed, float(phase.bound.ravel()[worst]))
    where = f" (position {int(phase.positions.ravel()[worst])})" if phase is not None else ""
    verdict.detail = (
        f"{name}: {int(np.sum(failing))} of {n_judged} judged elements outside tolerance; worst at flat "
        f"index {worst}{where}: {float(a64.ravel()[worst])!r} vs {float(e.ravel()[worst])!r} "
        f"(abs err {float(err.ravel()[worst]):.3g}, allowed {allowed:.3g}"
        f"{', ' + phase.label + ' class' if phase is not None else ''})"
    )
    return verdict


def _worst(
    failing: np.ndarray, err: np.ndarray, actual: np.ndarray, expected: np.ndarray, allowed: np.ndarray
) -> list[tuple[int, float, float, float, float]]:
    """The :data:`WORST` failing elements, worst first: (flat index, actual, expected, error, allowed)."""
    flat = np.flatnonzero(failing)
    if not flat.size:
        return []
    errors = err.ravel()[flat]
    top = flat[np.argsort(-errors, kind="stable")[:WORST]]
    allowed = np.broadcast_to(allowed, err.shape).ravel()
    return [
        (
            int(i),
            float(actual.ravel()[i]),
            float(expected.ravel()[i]),
            float(err.ravel()[i]),
            float(allowed[i]),
        )
        for i in top
    ]


def finite_max(values: list[float]) -> float:
    """max of finite values, 0.0 if none."""
    finite = [v for v in values if math.isfinite(v)]
    return max(finite) if finite else 0.0
