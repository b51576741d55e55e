"""Assertions for multi-backend tests: namespace, dtype, shape, device, then values.

Also :func:`load_script`, for tests of the tools under ``scripts/``.
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
from types import ModuleType
from typing import Any

import numpy as np

from posenc_ref import _compat

__all__ = [
    "assert_close",
    "assert_equal",
    "float_dtype",
    "float_tolerance",
    "floats",
    "ints",
    "load_script",
    "to_numpy",
]

to_numpy = _compat.to_numpy


def ints(xp: Any, values: Any, device: Any = None, dtype: Any = None) -> Any:
    """Positions (or any integers) on ``xp``: the index dtype (int64; int32 on JAX without x64) by default."""
    if _compat.is_mlx_namespace(xp):
        values = np.asarray(values)  # MLX takes NumPy arrays, but not NumPy scalars inside a list
    elif isinstance(values, np.ndarray):
        values = values.tolist()
    return _compat.asarray(
        values, xp=xp, dtype=_compat.index_dtype(xp) if dtype is None else dtype, device=device
    )


def float_dtype(xp: Any, device: Any = None) -> Any:
    """The widest float dtype ``xp`` has here: float64, else float32 (MLX on a GPU, JAX without x64)."""
    return _compat.compute_dtype(xp, device)


def floats(xp: Any, values: Any, device: Any = None, dtype: Any = None) -> Any:
    """Real values on ``xp``, in :func:`float_dtype` by default."""
    return _compat.asarray(
        values, xp=xp, dtype=float_dtype(xp, device) if dtype is None else dtype, device=device
    )


def float_tolerance(xp: Any, dtype: Any) -> dict[str, float]:
    """Per-dtype tolerances for values computed from formulas: a few ulp at 1.0.

    float64: 8 ulp relative (2.2e-16 * 8) plus 1e-15 absolute for values near 0.
    float32: 8 ulp relative plus 1e-6 absolute, which covers cos/sin of float32
    arguments rounded once (|error| <= 2**-24 * |angle| for angles up to ~16).
    """
    if dtype == xp.float64:
        return {"rtol": 8 * 2.0**-52, "atol": 1e-15}
    if dtype == xp.float32:
        return {"rtol": 8 * 2.0**-23, "atol": 1e-6}
    return {"rtol": 4e-3, "atol": 4e-3}


def _check_meta(actual: Any, expected_shape: tuple[int, ...], xp: Any, dtype: Any, device: Any) -> None:
    __tracebackhide__ = True
    actual_xp = _compat.array_namespace(actual)
    assert actual_xp.__name__ == xp.__name__, f"namespace {actual_xp.__name__} != {xp.__name__}"
    if dtype is not None:
        assert actual.dtype == dtype, f"dtype {actual.dtype} != {dtype}"
    assert tuple(actual.shape) == tuple(expected_shape), (
        f"shape {tuple(actual.shape)} != {tuple(expected_shape)}"
    )
    if device is not None:
        assert _compat.device(actual) == device, f"device {_compat.device(actual)} != {device}"


def assert_close(
    actual: Any,
    expected: Any,
    *,
    xp: Any,
    dtype: Any = None,
    device: Any = None,
    rtol: float | None = None,
    atol: float | None = None,
) -> None:
    """Check namespace, dtype, shape and device of ``actual``, then its values.

    ``expected`` is host data (lists or NumPy) computed independently in the test.
    Default tolerances come from :func:`float_tolerance` for ``actual.dtype``.
    """
    __tracebackhide__ = True
    expected = np.asarray(expected, dtype=np.float64)
    _check_meta(actual, expected.shape, xp, dtype, device)
    tol = float_tolerance(xp, actual.dtype)
    rtol = tol["rtol"] if rtol is None else rtol
    atol = tol["atol"] if atol is None else atol
    np.testing.assert_allclose(to_numpy(actual).astype(np.float64), expected, rtol=rtol, atol=atol)


def assert_equal(actual: Any, expected: Any, *, xp: Any, dtype: Any = None, device: Any = None) -> None:
    """Exact equality after the namespace, dtype, shape and device checks."""
    __tracebackhide__ = True
    expected = np.asarray(expected)
    _check_meta(actual, expected.shape, xp, dtype, device)
    np.testing.assert_array_equal(to_numpy(actual), expected)


def load_script(name: str) -> ModuleType:
    """``scripts/<name>.py`` as a module (registered in ``sys.modules``, as dataclasses need)."""
    path = pathlib.Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
