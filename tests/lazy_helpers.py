"""Run a function the lazy way: under ``jax.jit`` on JAX, with computing forbidden on Dask."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

__all__ = ["run_lazily"]


def _refuse_compute(*args: Any, **kwargs: Any) -> Any:
    msg = "the library computed a Dask graph; it must stay lazy"
    raise AssertionError(msg)


def run_lazily(library: Any, fn: Callable[..., Any], *arrays: Any) -> Any:
    """``fn(*arrays)`` jitted (JAX) or built without any compute (Dask); skips other backends."""
    name = library.value
    if name.startswith("jax.numpy"):
        import jax

        return jax.jit(fn)(*arrays)
    if name == "dask.array":
        import dask

        with dask.config.set(scheduler=_refuse_compute):
            return fn(*arrays)
    pytest.skip(f"{name} is eager: nothing lazy to check")
    return None
