"""Shared machinery for the posenc-ref benchmarks: backends, synchronisation, skips.

Every benchmark class is parameterised over :data:`BACKENDS` (the same list on every
machine; asv's rule is that ``params`` never depend on what is installed).  A backend
that does not import, or a ``posenc_ref`` function that does not exist at the commit
being benchmarked, makes ``setup`` raise ``NotImplementedError``, which asv records
as "skipped" rather than failed.

Timed bodies end with :meth:`Backend.sync` on their result, so lazy or asynchronous
backends are measured for the work they do and not for queueing it:
``mx.eval`` (MLX), ``jax.block_until_ready`` (JAX), ``torch.cuda.synchronize``
(PyTorch on CUDA) and a stream synchronise (CuPy).  Inputs made in ``setup`` are
synchronised there too.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import importlib
import math
import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np

#: Backend ids, in the order they appear in asv's tables: ids or aliases of
#: ``posenc_ref.backends.BACKENDS`` (the one table of backends; ``jax`` is ``jax.numpy`` with x64),
#: spelled as asv's stored results already name them.
BACKENDS = ["numpy", "array_api_strict", "mlx", "torch", "jax", "cupy"]

#: The two float dtypes every numeric benchmark is run in.
DTYPES = ["float32", "float64"]

#: ``POSENC_REF_BENCH_QUICK=1`` (set by ``scripts/asv_ci.sh``) skips sizes above this
#: many elements and the slowest combinations, so a CI smoke run stays short.
QUICK_MAX_ELEMENTS = 1 << 21


def quick() -> bool:
    """Whether this is a CI smoke run (``POSENC_REF_BENCH_QUICK`` set and not 0)."""
    return os.environ.get("POSENC_REF_BENCH_QUICK", "") not in ("", "0")


def limit_size(elements: int) -> None:
    """Skip a large size in a CI smoke run; every code path still runs at the small size."""
    if quick() and elements > QUICK_MAX_ELEMENTS:
        skip(f"{elements} elements: large sizes are skipped when POSENC_REF_BENCH_QUICK is set")


def skip(reason: str) -> None:
    """Skip this parameter combination (asv's skip mechanism)."""
    raise NotImplementedError(reason)


def require(name: str) -> Any:
    """``posenc_ref.<name>``, or skip when this commit of the library lacks it."""
    pr = importlib.import_module("posenc_ref")  # a broken package fails, it is not skipped
    func = getattr(pr, name, None)
    if func is None:
        skip(f"posenc_ref.{name} does not exist at this commit")
    return func


def require_module(name: str) -> Any:
    """Import ``name`` or skip (optional dependencies, conformance modules)."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        skip(f"{name} is not importable: {exc}")
        raise  # unreachable; keeps type checkers quiet


def _flatten(obj: Any) -> list[Any]:
    if obj is None or isinstance(obj, (int, float, str)):
        return []
    if isinstance(obj, (tuple, list)):
        return [leaf for item in obj for leaf in _flatten(item)]
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return [leaf for f in dataclasses.fields(obj) for leaf in _flatten(getattr(obj, f.name))]
    return [obj]


@dataclasses.dataclass
class Backend:
    """One array library as the benchmarks see it."""

    name: str
    xp: Any
    device: Any
    module: Any

    def dtype(self, name: str) -> Any:
        return getattr(self.xp, name)

    def asarray(self, host: np.ndarray, dtype: str | None = None) -> Any:
        """Copy a NumPy array onto this backend's device and wait until it is there."""
        host = np.ascontiguousarray(host if dtype is None else host.astype(dtype))
        if self.name == "numpy":
            out = host
        elif self.name == "torch":
            out = self.module.from_numpy(host).to(self.device)
        elif self.name == "jax":
            out = self.module.device_put(host, self.device)
        elif self.name == "mlx":
            out = self.module.array(host, dtype=getattr(self.module, str(host.dtype)))
        elif self.name == "cupy":
            out = self.module.asarray(host)
        else:
            out = self.xp.asarray(host)
        self.sync(out)
        return out

    def sync(self, result: Any) -> Any:
        """Wait until ``result`` (an array, or a tuple/dataclass of arrays) is computed."""
        leaves = [leaf for leaf in _flatten(result) if not isinstance(leaf, np.ndarray)]
        if not leaves:
            return result
        if self.name == "mlx":
            self.module.eval(*leaves)
        elif self.name == "jax":
            self.module.block_until_ready(leaves)
        elif self.name == "torch" and self.device.type == "cuda":
            self.module.cuda.synchronize()
        elif self.name == "cupy":
            self.module.cuda.get_current_stream().synchronize()
        return result

    def copy(self, x: Any) -> Any:
        """A plain copy of ``x`` (the memory-bandwidth floor)."""
        if self.name == "numpy":
            return x.copy()
        if self.name == "mlx":
            return self.module.array(x)  # MLX copies on construction from an array
        return self.xp.asarray(x, copy=True)

    def to_numpy(self, x: Any) -> np.ndarray:
        from posenc_ref._compat import to_numpy

        return np.asarray(to_numpy(x))


#: For commits that predate the table in ``posenc_ref.backends`` (asv runs today's benchmarks
#: on old commits too): namespace module and library module of each id above.  Frozen: a new
#: backend goes into ``posenc_ref/backends.py`` (and its id into :data:`BACKENDS`), not here.
_BEFORE_THE_TABLE = {
    "numpy": ("array_api_compat.numpy", "numpy"),
    "array_api_strict": ("array_api_strict", "array_api_strict"),
    "mlx": ("mlx.core", "mlx.core"),
    "torch": ("array_api_compat.torch", "torch"),
    "jax": ("jax.numpy", "jax"),
    "cupy": ("array_api_compat.cupy", "cupy"),
}


def _namespace_and_module(name: str) -> tuple[Any, Any]:
    """The array namespace of backend ``name`` (configured as posenc_ref's table says) and its library."""
    try:
        from posenc_ref.backends import namespace, resolve
    except ImportError:  # a commit before the table
        if name not in _BEFORE_THE_TABLE:
            skip(f"backend {name} is not known at this commit")
        namespace_module, module = _BEFORE_THE_TABLE[name]
        if name == "jax":
            import jax

            jax.config.update("jax_enable_x64", True)
            jax.config.update("jax_default_matmul_precision", "highest")
        return importlib.import_module(namespace_module), importlib.import_module(module)
    return namespace(name), importlib.import_module(resolve(name).version_module)


def _default_device(name: str, module: Any) -> Any:
    """Where inputs go: the GPU for PyTorch when there is one, JAX's first device, else the default."""
    if name == "numpy":
        return "cpu"
    if name == "torch":
        return module.device("cuda" if module.cuda.is_available() else "cpu")
    if name == "jax":
        return module.devices()[0]
    return None


@functools.cache
def _load(name: str) -> Backend:
    """The backend ``name`` (an id of :data:`BACKENDS`), resolved through ``posenc_ref.backends``."""
    if name not in BACKENDS:
        msg = f"backend must be one of {BACKENDS}; got {name!r}"
        raise ValueError(msg)
    xp, module = _namespace_and_module(name)
    return Backend(name, xp, _default_device(name, module), module)


def backend(name: str) -> Backend:
    """The named backend, or skip when it is not importable here.

    ``POSENC_REF_BENCH_BACKENDS=numpy,mlx`` restricts a run to some backends (the
    others are skipped, not removed, so result keys stay stable).
    """
    wanted = os.environ.get("POSENC_REF_BENCH_BACKENDS")
    if wanted and name not in {w.strip() for w in wanted.split(",")}:
        skip(f"backend {name} not selected by POSENC_REF_BENCH_BACKENDS")
    try:
        return _load(name)
    except Exception as exc:  # absent or broken: a skip, with the reason
        skip(f"backend {name} is not available: {type(exc).__name__}: {exc}")
        raise  # unreachable


def float64_ok(be: Backend) -> bool:
    """Whether float64 arithmetic exists for this backend on its default device."""
    from posenc_ref._compat import has_float64

    return bool(has_float64(be.xp, be.device))


def require_dtype(be: Backend, dtype: str) -> None:
    if dtype == "float64" and not float64_ok(be):
        skip(f"no float64 on {be.name} here")


def shape_of(label: str) -> tuple[int, ...]:
    """``"1x32x4096x128"`` -> ``(1, 32, 4096, 128)`` (shapes are strings in params).

    Also skips the size in a CI smoke run when it is large (:func:`limit_size`).
    """
    shape = tuple(int(n) for n in label.split("x"))
    limit_size(math.prod(shape))
    return shape


def spacing(values: np.ndarray, dtype: str) -> np.ndarray:
    """One unit in the last place of ``values`` in ``dtype`` (never zero)."""
    v = np.abs(values).astype(dtype)
    return np.spacing(np.maximum(v, np.finfo(dtype).tiny)).astype(np.float64)


def max_ulp(actual: np.ndarray, expected: np.ndarray, dtype: str) -> float:
    """Largest error of ``actual`` against the float64 ``expected``, in ulps of ``dtype``."""
    err = np.abs(actual.astype(np.float64) - expected.astype(np.float64))
    return float(np.max(err / spacing(expected, dtype))) if err.size else 0.0


def run_python(args: list[str], *, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    """Run ``python ARGS`` in a fresh interpreter that imports the same ``posenc_ref``.

    The directory holding the ``posenc_ref`` that asv imported goes first on
    ``PYTHONPATH`` (asv 0.6.5+ strips ``PYTHONPATH`` from benchmark processes).
    """
    import posenc_ref

    root = str(pathlib.Path(posenc_ref.__file__).resolve().parents[1])
    path = os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run(
        [sys.executable, *args], capture_output=True, text=True, timeout=timeout, env=env, check=False
    )


def _preload() -> None:
    """Import every selected backend once (no device initialisation).

    With ``--launch-method forkserver`` asv imports this module in the fork server,
    so each benchmark process starts with the libraries already imported; that
    cuts a CI smoke run from ~1 s to ~0.1 s per parameter combination.
    """
    try:
        from posenc_ref.backends import resolve

        table = {name: (resolve(name).namespace_module, resolve(name).version_module) for name in BACKENDS}
    except ImportError:  # a commit before the table
        table = _BEFORE_THE_TABLE
    wanted = os.environ.get("POSENC_REF_BENCH_BACKENDS")
    names = [w.strip() for w in wanted.split(",")] if wanted else [n for n in BACKENDS if n != "cupy"]
    for name in names:
        for module in reversed(table.get(name, ())):  # the library first, then its namespace
            try:
                importlib.import_module(module)
            except Exception:  # absent backends are skipped later, with the reason
                break
    importlib.import_module("array_api_compat.numpy")
    importlib.import_module("posenc_ref")


#: glibc ``mallopt`` parameters (``<malloc.h>``) and the values every benchmark process runs with.
M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
STEADY_ALLOCATOR = {M_MMAP_THRESHOLD: 32 << 20, M_TRIM_THRESHOLD: 1 << 30, M_TOP_PAD: 64 << 20}


def steady_allocator() -> bool:
    """Fix glibc's allocator so that a process's timings do not depend on its allocation history.

    By default glibc serves blocks of 128 KiB and more with a fresh ``mmap`` (every page
    faulted in again on each call) until a freed block raises its threshold, and returns
    freed heap memory to the system past 128 KiB.  Which regime a benchmark process lands
    in depends on what it allocated before, so the same call timed in two processes was
    bimodal: PyTorch's float64 ``cos`` + ``sin`` of 4096 x 64 took 0.6 ms in some processes
    and 1.9 ms in others (min of 15 samples, quiet machine), ``t5_bucket`` 0.7 or 1.7 ms.
    A fixed mmap threshold (32 MiB, glibc's largest), a trim threshold of 1 GiB and a top
    pad of 64 MiB make every process alike (0.56 - 0.61 ms and 0.67 - 0.82 ms in six).
    Blocks above 32 MiB (the gate's large sizes) are always mapped afresh, the same way in
    every process.  Returns False where there is no glibc ``mallopt`` (macOS, musl).

    Applied when ``POSENC_REF_BENCH_ALLOCATOR=steady`` (``scripts/asv_history.sh`` sets it for
    the dashboard's small sizes).  Not for the speed gate's large sizes, whose limits were
    measured with glibc's own settings: there the fixed settings made the 8192 x 1024
    sinusoidal ratio 1.39 - 1.53 instead of 1.09 - 1.28 (three processes each).
    """
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return all(mallopt(param, value) == 1 for param, value in STEADY_ALLOCATOR.items())


if os.environ.get("POSENC_REF_BENCH_ALLOCATOR", "") == "steady":  # set by the dashboard's short run
    steady_allocator()
if os.environ.get("POSENC_REF_BENCH_PRELOAD", "") not in ("", "0"):
    _preload()
