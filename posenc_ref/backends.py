"""The array backends posenc_ref runs on, and what this machine has of them.

:func:`backend_info` is what ``posenc-ref info`` prints: for each backend,
whether it imports, its version, and whether float64 exists on its default
device.
"""

from __future__ import annotations

import importlib
from typing import Any

from ._compat import has_float64

__all__ = ["BACKEND_MODULES", "backend_info"]

#: Backend id -> (module to import for the version, namespace module to test).
BACKEND_MODULES: dict[str, tuple[str, str]] = {
    "numpy": ("numpy", "array_api_compat.numpy"),
    "array_api_strict": ("array_api_strict", "array_api_strict"),
    "mlx": ("mlx.core", "mlx.core"),
    "torch": ("torch", "array_api_compat.torch"),
    "jax.numpy": ("jax", "jax.numpy"),
    "dask.array": ("dask", "array_api_compat.dask.array"),
    "cupy": ("cupy", "array_api_compat.cupy"),
}


def backend_info() -> list[dict[str, Any]]:
    """One row per backend: ``name``, ``available``, ``version``, ``float64``, ``error``.

    Examples
    --------
    >>> from posenc_ref.backends import backend_info
    >>> row = backend_info()[0]
    >>> row["name"], row["available"], row["float64"]
    ('numpy', True, True)
    """
    rows = []
    for name, (version_module, namespace_module) in BACKEND_MODULES.items():
        row: dict[str, Any] = {
            "name": name,
            "available": False,
            "version": None,
            "float64": None,
            "error": None,
        }
        try:
            module = importlib.import_module(version_module)
            xp = importlib.import_module(namespace_module)
            row["version"] = getattr(module, "__version__", None) or _mlx_version(module)
            row["float64"] = has_float64(xp)
            row["available"] = True
        except Exception as exc:  # an absent or broken backend is a row, not a crash
            row["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0][:80]
        rows.append(row)
    return rows


def _mlx_version(module: Any) -> str | None:
    try:
        from importlib.metadata import version

        return version("mlx") if module.__name__.startswith("mlx") else None
    except Exception:
        return None
