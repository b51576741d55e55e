"""The array backends posenc_ref runs on: the one table of them, and what this machine has.

:data:`BACKENDS` is the project's only list of backends.  Every place that
names a backend reads it: the suite's ``posenc_ref:<backend>`` adapter, the
test suite's ``xp`` fixture (and ``POSENC_REF_BACKENDS``), the asv benchmarks
and ``posenc-ref info``.  An id is the namespace module, with a ``:tag`` for a
variant (``jax.numpy:x32`` is JAX with 64-bit types off); short aliases
(``jax``, ``dask``) are accepted wherever an id is.

:func:`namespace` imports a backend's namespace and configures it as its id
says (JAX's ``jax_enable_x64`` flag, and the highest matmul precision so that
no TF32-style shortcut enters a reference computation).  :func:`backend_info`
is what ``posenc-ref info`` prints.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

from ._compat import has_float64
from ._validate import check_choice

__all__ = ["BACKENDS", "BackendSpec", "backend_info", "namespace", "resolve"]


@dataclass(frozen=True)
class BackendSpec:
    """One row of :data:`BACKENDS`.

    Attributes
    ----------
    id : str
        The canonical name (test ids, adapter specs, reports).
    namespace_module : str
        The array-API namespace to import (array-api-compat's wrapper where the
        library itself is not one).
    version_module : str
        The library module whose ``__version__`` is reported; also the raw
        module a caller needs for library-specific calls (``torch.from_numpy``,
        ``mx.eval``, ``jax.block_until_ready``).
    aliases : tuple of str
        Other names accepted for this backend.
    jax_x64 : bool or None
        For JAX ids, the value ``jax_enable_x64`` is set to on import; ``None``
        for other backends.
    """

    id: str
    namespace_module: str
    version_module: str
    aliases: tuple[str, ...] = ()
    jax_x64: bool | None = None


#: Every backend, in the order of tests, reports and ``posenc-ref info``.
BACKENDS: tuple[BackendSpec, ...] = (
    BackendSpec("numpy", "array_api_compat.numpy", "numpy", aliases=("np",)),
    BackendSpec("array_api_strict", "array_api_strict", "array_api_strict", aliases=("array-api-strict",)),
    BackendSpec("mlx", "mlx.core", "mlx.core", aliases=("mlx.core",)),
    BackendSpec("torch", "array_api_compat.torch", "torch", aliases=("pytorch",)),
    BackendSpec("jax.numpy", "jax.numpy", "jax", aliases=("jax",), jax_x64=True),
    BackendSpec("jax.numpy:x32", "jax.numpy", "jax", aliases=("jax:x32",), jax_x64=False),
    BackendSpec("dask.array", "array_api_compat.dask.array", "dask", aliases=("dask",)),
    BackendSpec("cupy", "array_api_compat.cupy", "cupy"),
)

_BY_NAME = {name: b for b in BACKENDS for name in (b.id, *b.aliases)}
_ALIAS_HINTS = {alias: f"{alias!r} is accepted for {b.id!r}" for b in BACKENDS for alias in b.aliases}


def resolve(name: str) -> BackendSpec:
    """The row of :data:`BACKENDS` that ``name`` (an id or an alias) names.

    Raises
    ------
    TypeError
        ``name`` not a string.
    ValueError
        An unknown name (the message lists the ids and suggests a close one).

    Examples
    --------
    >>> from posenc_ref.backends import resolve
    >>> resolve("jax").id, resolve("jax:x32").jax_x64
    ('jax.numpy', False)
    """
    if isinstance(name, str) and name in _BY_NAME:
        return _BY_NAME[name]
    return _BY_NAME[check_choice(name, "backend", [b.id for b in BACKENDS], aliases=_ALIAS_HINTS)]


def namespace(name: str) -> Any:
    """Import the array namespace of backend ``name`` and configure it as its id says.

    JAX ids set ``jax_enable_x64`` (on for ``jax.numpy``, off for
    ``jax.numpy:x32``) and ``jax_default_matmul_precision="highest"``; both
    are process-wide JAX settings.  CuPy must also see a CUDA device.

    Raises
    ------
    ValueError, TypeError
        An unknown backend name (see :func:`resolve`).
    ImportError, RuntimeError
        The backend is not installed or cannot run here (CuPy without a GPU).

    Examples
    --------
    >>> from posenc_ref.backends import namespace
    >>> namespace("numpy").__name__
    'array_api_compat.numpy'
    """
    backend = resolve(name)
    if backend.id == "cupy":
        import cupy

        cupy.cuda.runtime.getDeviceCount()  # raises without a usable CUDA runtime and device
    xp = importlib.import_module(backend.namespace_module)
    if backend.jax_x64 is not None:
        import jax

        jax.config.update("jax_enable_x64", backend.jax_x64)
        jax.config.update("jax_default_matmul_precision", "highest")
    return xp


def backend_info() -> list[dict[str, Any]]:
    """One row per backend: ``name``, ``available``, ``version``, ``float64``, ``error``.

    The ``:tag`` variants (``jax.numpy:x32``) share their library's row and
    are not listed; importing does not change JAX's x64 flag.

    Examples
    --------
    >>> from posenc_ref.backends import backend_info
    >>> row = backend_info()[0]
    >>> row["name"], row["available"], row["float64"]
    ('numpy', True, True)
    """
    rows = []
    for backend in BACKENDS:
        if ":" in backend.id:
            continue
        row: dict[str, Any] = {
            "name": backend.id,
            "available": False,
            "version": None,
            "float64": None,
            "error": None,
        }
        try:
            module = importlib.import_module(backend.version_module)
            xp = importlib.import_module(backend.namespace_module)
            row["version"] = getattr(module, "__version__", None) or _distribution_version(backend.id)
            row["float64"] = has_float64(xp)
            row["available"] = True
        except Exception as exc:  # an absent or broken backend is a row, not a crash
            row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:80]
        rows.append(row)
    return rows


def _distribution_version(name: str) -> str | None:
    """The installed distribution's version, for modules without ``__version__`` (``mlx.core``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name.split(".")[0])
    except PackageNotFoundError:
        return None
