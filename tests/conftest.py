"""Backends for every test: an ``xp`` fixture over each importable array library.

Each backend's id (``numpy``, ``array_api_strict``, ``mlx``, ``torch``,
``jax.numpy``, ``jax.numpy:x32``, ``dask.array``, ``cupy``) appears in the test
name; a backend that is not installed is skipped with the reason, and a test
that does not apply to some backends says so once, with a mark
(``@pytest.mark.skip_xp_backend(Backend.DASK, reason=...)``, ``xp_backends``,
``needs_float64``, ``float32_only``, ``needs_dtype``: see :data:`MARKS`).  Select a
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
from posenc_ref._compat import has_float64


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


# --- backend skips, declared once per test as marks (array-api-extra's skip_xp_backend) ----------------

MARKS = {
    "skip_xp_backend": "skip_xp_backend(*backends, reason): skip the test on these Backend members",
    "xp_backends": "xp_backends(*backends, reason): run the test on these Backend members only",
    "needs_float64": "needs_float64: skip where the backend has no float64 here (MLX on a GPU, JAX x32)",
    "float32_only": "float32_only: run only where the backend has no float64 (what happens without it)",
    "needs_dtype": "needs_dtype(name): skip where the namespace has no dtype of that name",
}


def pytest_configure(config: pytest.Config) -> None:
    for line in MARKS.values():
        config.addinivalue_line("markers", line)


def _marked_backends(mark: pytest.Mark) -> set[Backend]:
    """The Backend members of a skip_xp_backend/xp_backends mark; a TypeError when it is misused."""
    if not mark.args or not all(isinstance(b, Backend) for b in mark.args) or not mark.kwargs.get("reason"):
        msg = f"{mark.name} takes Backend members and reason=...; got {mark.args!r}, {mark.kwargs!r}"
        raise TypeError(msg)
    return set(mark.args)


def _skip_by_backend(node: pytest.Item, library: Backend) -> None:
    for mark in node.iter_markers("skip_xp_backend"):
        if library in _marked_backends(mark):
            pytest.skip(f"{library.value}: {mark.kwargs['reason']}")
    for mark in node.iter_markers("xp_backends"):
        if library not in _marked_backends(mark):
            pytest.skip(f"{library.value}: {mark.kwargs['reason']}")


def _skip_by_capability(node: pytest.Item, library: Backend, xp: Any) -> None:
    float64 = has_float64(xp)
    if node.get_closest_marker("needs_float64") and not float64:
        pytest.skip(f"{library.value} has no float64 here")
    if node.get_closest_marker("float32_only") and float64:
        pytest.skip(f"{library.value} has float64: the float32-only behaviour is not reachable")
    for mark in node.iter_markers("needs_dtype"):
        if getattr(xp, mark.args[0], None) is None:
            pytest.skip(f"{library.value} has no {mark.args[0]}")


#: Marks many tests share.
UNREAD_ON_DASK = pytest.mark.skip_xp_backend(
    Backend.DASK, reason="values are not known without computing (checks of values skipped by design)"
)
JAX_ONLY = pytest.mark.xp_backends(Backend.JAX, Backend.JAX_X32, reason="jax.jit applies to JAX only")
#: ``float64`` as a parameter value, skipped where the backend has none.
FLOAT64 = pytest.param("float64", marks=pytest.mark.needs_float64)


@pytest.fixture(params=_selected(), ids=lambda b: b.value)
def library(request: pytest.FixtureRequest) -> Backend:
    """The Backend enum member under test (skip_xp_backend / xp_backends marks applied)."""
    _skip_by_backend(request.node, request.param)
    return request.param


@pytest.fixture
def xp(request: pytest.FixtureRequest, library: Backend) -> Any:
    """The array namespace under test (skipped, with a reason, when absent; capability marks applied)."""
    namespace = _import_backend(library)
    _skip_by_capability(request.node, library, namespace)
    return namespace


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
