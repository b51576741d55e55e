"""Run a function the lazy way: under ``jax.jit`` on JAX, with computing forbidden on Dask."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from tests.conftest import Backend

__all__ = ["LAZY_BACKENDS", "run_lazily"]

#: The mark of a test that runs a function lazily: eager backends have nothing lazy to check.
LAZY_BACKENDS = pytest.mark.xp_backends(
    Backend.JAX, Backend.JAX_X32, Backend.DASK, reason="eager backend: nothing lazy to check"
)


def _refuse_compute(*args: Any, **kwargs: Any) -> Any:
    msg = "the library computed a Dask graph; it must stay lazy"
    raise AssertionError(msg)


def run_lazily(library: Any, fn: Callable[..., Any], *arrays: Any) -> Any:
    """``fn(*arrays)`` jitted (JAX) or built without any compute (Dask): for tests marked LAZY_BACKENDS."""
    name = library.value
    if name.startswith("jax.numpy"):
        import jax

        return jax.jit(fn)(*arrays)
    if name == "dask.array":
        import dask

        with dask.config.set(scheduler=_refuse_compute):
            return fn(*arrays)
    msg = f"run_lazily on the eager backend {name}: mark the test with LAZY_BACKENDS"
    raise TypeError(msg)
