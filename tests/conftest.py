"""Backends for every test: an ``xp`` fixture over each importable array library.

Each backend's id (``numpy``, ``array_api_strict``, ``mlx``, ``torch``,
``jax.numpy``, ``jax.numpy:x32``, ``dask.array``, ``cupy``) appears in the test
name; a backend that is not installed is skipped with the reason.  Select a
subset with ``POSENC_REF_BACKENDS=numpy,mlx`` (ids or aliases of
:data:`posenc_ref.backends.BACKENDS`, the one table of backends).  The terminal summary shows the
number of tests per backend.
"""

from __future__ import annotations

import collections
import enum
import os
from typing import Any

import pytest

from posenc_ref import backends


def _member_name(backend_id: str) -> str:
    """``jax.numpy:x32`` -> ``JAX_X32``: the library's first module name, then the tag."""
    module, _, tag = backend_id.partition(":")
    return "_".join(part.upper() for part in (module.split(".")[0], tag) if part)


#: Array backends, one member per row of :data:`posenc_ref.backends.BACKENDS`; the value is the test
#: id (``module`` or ``module:tag``): ``Backend.NUMPY``, ``Backend.JAX``, ``Backend.JAX_X32``, ...
Backend = enum.Enum("Backend", [(_member_name(b.id), b.id) for b in backends.BACKENDS])


def _selected() -> list[Backend]:
    wanted = os.environ.get("POSENC_REF_BACKENDS")
    if not wanted:
        return list(Backend)
    try:
        ids = {backends.resolve(w.strip()).id for w in wanted.split(",") if w.strip()}
    except (TypeError, ValueError) as exc:
        msg = f"POSENC_REF_BACKENDS: {exc}"
        raise pytest.UsageError(msg) from exc
    return [b for b in Backend if b.value in ids]


def _import_backend(backend: Backend) -> Any:
    try:
        return backends.namespace(backend.value)
    except Exception as exc:
        pytest.skip(f"backend {backend.value} is not available: {type(exc).__name__}: {exc}".splitlines()[0])


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
