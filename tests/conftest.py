"""Backends for every test: an ``xp`` fixture over each importable array library.

Each backend's id (``numpy``, ``array_api_strict``, ``mlx``, ``torch``,
``jax.numpy``, ``jax.numpy:x32``, ``dask.array``, ``cupy``) appears in the test
name; a backend that is not installed is skipped with the reason.  Select a
subset with ``POSENC_REF_BACKENDS=numpy,mlx``.  The terminal summary shows the
number of tests per backend.
"""

from __future__ import annotations

import collections
import enum
import importlib
import os
from typing import Any

import pytest


class Backend(enum.Enum):
    """Array backends; the value is the test id (``module`` or ``module:tag``)."""

    NUMPY = "numpy"
    ARRAY_API_STRICT = "array_api_strict"
    MLX = "mlx"
    TORCH = "torch"
    JAX = "jax.numpy"
    JAX_X32 = "jax.numpy:x32"
    DASK = "dask.array"
    CUPY = "cupy"

    @property
    def module_name(self) -> str:
        return {
            Backend.NUMPY: "array_api_compat.numpy",
            Backend.ARRAY_API_STRICT: "array_api_strict",
            Backend.MLX: "mlx.core",
            Backend.TORCH: "array_api_compat.torch",
            Backend.JAX: "jax.numpy",
            Backend.JAX_X32: "jax.numpy",
            Backend.DASK: "array_api_compat.dask.array",
            Backend.CUPY: "array_api_compat.cupy",
        }[self]


def _selected() -> list[Backend]:
    wanted = os.environ.get("POSENC_REF_BACKENDS")
    if not wanted:
        return list(Backend)
    names = {w.strip() for w in wanted.split(",") if w.strip()}
    unknown = names - {b.value for b in Backend}
    if unknown:
        msg = (
            f"POSENC_REF_BACKENDS must name backends from {[b.value for b in Backend]}; got {sorted(unknown)}"
        )
        raise pytest.UsageError(msg)
    return [b for b in Backend if b.value in names]


def _import_backend(backend: Backend) -> Any:
    try:
        if backend is Backend.CUPY:
            import cupy

            cupy.cuda.runtime.getDeviceCount()
        xp = importlib.import_module(backend.module_name)
    except Exception as exc:
        pytest.skip(f"backend {backend.value} is not available: {type(exc).__name__}: {exc}".splitlines()[0])
    if backend in (Backend.JAX, Backend.JAX_X32):
        import jax

        jax.config.update("jax_enable_x64", backend is Backend.JAX)
        jax.config.update("jax_default_matmul_precision", "highest")
    return xp


@pytest.fixture(params=_selected(), ids=lambda b: b.value)
def library(request: pytest.FixtureRequest) -> Backend:
    """The Backend enum member under test."""
    return request.param


@pytest.fixture
def xp(library: Backend) -> Any:
    """The array namespace under test (skipped, with a reason, when absent)."""
    return _import_backend(library)


@pytest.fixture
def device(library: Backend, xp: Any) -> Any:
    """A non-default device where the backend has one (array_api_strict), else its default."""
    if library is Backend.ARRAY_API_STRICT:
        return xp.Device("device1")
    if library is Backend.MLX:
        return None
    from posenc_ref._compat import device as device_of

    return device_of(xp.asarray(0))


_COUNTS: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)


_BACKEND_OF: dict[str, str] = {}
_SKIP_REASON: dict[str, str] = {}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        callspec = getattr(item, "callspec", None)
        backend = callspec.params.get("library") if callspec is not None else None
        _BACKEND_OF[item.nodeid] = backend.value if isinstance(backend, Backend) else "(backend-independent)"


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    backend = _BACKEND_OF.get(report.nodeid, "(backend-independent)")
    if report.when == "call" or (report.when == "setup" and report.outcome != "passed"):
        _COUNTS[backend][report.outcome] += 1
        if report.skipped and backend not in _SKIP_REASON and isinstance(report.longrepr, tuple):
            _SKIP_REASON[backend] = str(report.longrepr[2]).removeprefix("Skipped: ")


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _COUNTS:
        return
    terminalreporter.section("tests per backend")
    for backend in [b.value for b in Backend] + ["(backend-independent)"]:
        c = _COUNTS.get(backend)
        if c:
            parts = ", ".join(f"{n} {k}" for k, n in sorted(c.items()))
            reason = (
                f"  (e.g. {_SKIP_REASON[backend]})" if backend in _SKIP_REASON and not c["passed"] else ""
            )
            terminalreporter.write_line(f"{backend:<24} {parts}{reason}")
