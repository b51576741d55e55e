"""Reach: how far along the positions an implementation stays accurate, from a sweep case's outputs.

A reach-sweep golden case (flag ``Reach``) evaluates one function at positions
0, 1 and ``2**k - 1, 2**k, 2**k + 1`` (to ``2**24 + 1``; a float64-only case
continues to ``2**40``).  :func:`sweep` turns one such case's outputs into its
per-position data: at each swept position the worst absolute error of any
element there, and whether every element there is within the exact class's
tolerance (the element test of :func:`.compare.compare_output`).  The runner
stores it on the case's result (``CaseResult.sweep``), whatever its status; the
report reads the reach off it: the largest swept position up to which every
swept position is within the tolerance.  NumPy only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .compare import ulp_distance, within_tolerance

__all__ = ["sweep"]


def sweep(
    expected: Sequence[np.ndarray],
    actual: Sequence[np.ndarray],
    positions: Sequence[np.ndarray],
    /,
    *,
    tolerance: dict[str, float],
    dtype: str,
) -> dict[str, Any]:
    """Per swept position: the worst absolute error and whether it is within the exact tolerance.

    Parameters
    ----------
    expected, actual, positions
        One array per output of the case (``cos`` and ``sin``, or the one output),
        each output's expected values (float64), the adapter's values (any float
        dtype) and the position of every element (the shape of the output: the
        phase record's positions broadcast over the last axis, as
        :func:`.compare.product_bound` gives them).
    tolerance
        The case's exact-class tolerance at the run dtype (``atol``, ``rtol``, ``maxUlp``).
    dtype
        The run dtype (``"float64"`` or ``"float32"``): the ulps are counted in it.

    Returns
    -------
    dict
        ``{"positions": [ascending unique ints], "errors": [worst |actual - expected| at each,
        float], "withinExact": [bool per position]}``: plain Python values (JSON-serialisable).

    Raises
    ------
    ValueError
        When the three sequences differ in length or an array's shape differs from its output's.
    """
    if not len(expected) == len(actual) == len(positions):
        msg = f"expected, actual and positions must have one array per output; got {len(expected)}, "
        msg += f"{len(actual)} and {len(positions)}"
        raise ValueError(msg)
    at, errors, good = [], [], []
    for e, a, p in zip(expected, actual, positions, strict=True):
        e, a, p = np.asarray(e, dtype=np.float64), np.asarray(a), np.asarray(p)
        if a.shape != e.shape or p.shape != e.shape:
            msg = f"actual and positions must have the expected shape {e.shape}; got {a.shape} and {p.shape}"
            raise ValueError(msg)
        err = np.abs(a.astype(np.float64) - e)
        at.append(p.astype(np.int64).ravel())
        errors.append(err.ravel())
        good.append(within_tolerance(err, e, ulp_distance(a, e, dtype), tolerance).ravel())
    where, err, ok = np.concatenate(at), np.concatenate(errors), np.concatenate(good)
    unique, index = np.unique(where, return_inverse=True)
    worst = np.zeros(unique.size)
    np.maximum.at(worst, index, err)
    within = np.ones(unique.size, dtype=bool)
    np.logical_and.at(within, index, ok)
    return {
        "positions": [int(v) for v in unique],
        "errors": [float(v) for v in worst],
        "withinExact": [bool(v) for v in within],
    }
