"""Namespace, device and dtype handling: the only place that knows backend quirks.

Library code resolves ``xp`` with :func:`array_namespace`, creates arrays with
:func:`asarray`, :func:`arange`, :func:`zeros` and :func:`full` (which put them on
the given device), and picks the precision of intermediate results with
:func:`compute_dtype`.  Nothing else in ``posenc_ref`` imports array-api-compat,
numpy or mlx.

MLX (``mlx.core``) is reached through MLX's own ``__array_namespace__`` because
array-api-compat does not wrap it.  Its differences live here and only here:

* ``x.__array_namespace__(api_version=...)`` raises, so it is called bare;
* arrays have no ``.device`` and creation functions take no ``device=``: the
  device of an MLX array is ``None`` here and arrays go to MLX's default device;
* float64 exists on the CPU device only.
"""

from __future__ import annotations

import sys
from typing import Any

import array_api_compat

__all__ = [
    "arange",
    "array_namespace",
    "asarray",
    "compute_dtype",
    "device",
    "full",
    "has_float64",
    "index_dtype",
    "is_lazy",
    "is_mlx_array",
    "is_mlx_namespace",
    "to_numpy",
    "zeros",
]


def is_mlx_array(x: object) -> bool:
    """True if ``x`` is an ``mlx.core.array`` (without importing MLX)."""
    mx = sys.modules.get("mlx.core")
    return mx is not None and isinstance(x, mx.array)


def is_mlx_namespace(xp: Any) -> bool:
    """True if ``xp`` is the ``mlx.core`` module."""
    return getattr(xp, "__name__", None) == "mlx.core"


def _is_array(x: object) -> bool:
    return is_mlx_array(x) or array_api_compat.is_array_api_obj(x)


def array_namespace(*arrays: object, xp: Any = None) -> Any:
    """The array namespace of ``arrays`` (``None`` and Python scalars ignored).

    An explicit ``xp`` wins; a plain ``numpy`` module is replaced by
    array-api-compat's wrapper so that standard names (``concat``, ``pow``,
    ``permute_dims``) exist.  With neither arrays nor ``xp``, NumPy is used.
    """
    if xp is not None:
        if getattr(xp, "__name__", None) == "numpy":
            import array_api_compat.numpy as compat_numpy

            return compat_numpy
        return xp
    real = [a for a in arrays if a is not None and _is_array(a)]
    if not real:
        import array_api_compat.numpy as compat_numpy

        return compat_numpy
    mlx_arrays = [a for a in real if is_mlx_array(a)]
    if mlx_arrays:
        if len(mlx_arrays) != len(real):
            msg = "arrays must all come from one library; got a mix of MLX and other arrays"
            raise TypeError(msg)
        return real[0].__array_namespace__()
    return array_api_compat.array_namespace(*real)


def is_lazy(x: object) -> bool:
    """True for arrays whose values are not known without computing them (Dask, JAX)."""
    return not is_mlx_array(x) and array_api_compat.is_lazy_array(x)


def device(x: object) -> Any:
    """The device of ``x``; ``None`` for MLX arrays (they have no ``.device``)."""
    if is_mlx_array(x):
        return None
    return array_api_compat.device(x)


def _device_kwargs(xp: Any, dev: Any) -> dict[str, Any]:
    if dev is None or is_mlx_namespace(xp):
        return {}
    return {"device": dev}


def asarray(obj: Any, *, xp: Any, dtype: Any = None, device: Any = None) -> Any:
    """``xp.asarray`` on ``device`` (ignored on MLX)."""
    return xp.asarray(obj, dtype=dtype, **_device_kwargs(xp, device))


def arange(start: int, stop: int | None = None, *, xp: Any, dtype: Any, device: Any = None) -> Any:
    """``xp.arange(start, stop)`` with an explicit dtype, on ``device``."""
    if stop is None:
        start, stop = 0, start
    return xp.arange(start, stop, dtype=dtype, **_device_kwargs(xp, device))


def zeros(shape: tuple[int, ...], *, xp: Any, dtype: Any, device: Any = None) -> Any:
    """``xp.zeros`` with an explicit dtype, on ``device``."""
    return xp.zeros(shape, dtype=dtype, **_device_kwargs(xp, device))


def full(shape: tuple[int, ...], fill_value: float, *, xp: Any, dtype: Any, device: Any = None) -> Any:
    """``xp.full`` with an explicit dtype, on ``device``."""
    return xp.full(shape, fill_value, dtype=dtype, **_device_kwargs(xp, device))


def has_float64(xp: Any, device: Any = None) -> bool:
    """Whether float64 arithmetic is available for ``xp`` on ``device``.

    False for MLX off the CPU, for JAX without ``jax_enable_x64`` and for
    PyTorch on Apple's MPS device; True elsewhere.
    """
    if is_mlx_namespace(xp):
        import mlx.core as mx

        return mx.default_device() == mx.cpu
    if array_api_compat.is_jax_namespace(xp):
        import jax

        return bool(jax.config.read("jax_enable_x64"))
    if array_api_compat.is_torch_namespace(xp):
        return getattr(device, "type", "cpu") != "mps"
    return True


def compute_dtype(xp: Any, device: Any = None, *, requested: Any = None) -> Any:
    """The float dtype for intermediate results: float64 where available.

    ``requested`` (``xp.float32`` or ``xp.float64``) forces a choice; asking for
    float64 where it does not exist is a ``ValueError``.
    """
    if requested is None:
        return xp.float64 if has_float64(xp, device) else xp.float32
    if requested == xp.float64 and not has_float64(xp, device):
        msg = f"compute_dtype must be float32 on this backend/device; got {requested!r} (no float64 here)"
        raise ValueError(msg)
    if requested not in (xp.float32, xp.float64):
        msg = f"compute_dtype must be float32 or float64; got {requested!r}"
        raise ValueError(msg)
    return requested


def index_dtype(xp: Any) -> Any:
    """The widest integer dtype for positions: int64, or int32 for JAX without x64."""
    if array_api_compat.is_jax_namespace(xp) and not has_float64(xp):
        return xp.int32
    return xp.int64


def to_numpy(x: Any) -> Any:
    """Copy any supported array to a host ``numpy.ndarray`` (tests, adapters)."""
    import numpy as np

    if isinstance(x, np.ndarray):
        return x
    if array_api_compat.is_torch_array(x):
        return x.detach().cpu().numpy()
    if array_api_compat.is_cupy_array(x):
        return x.get()
    if array_api_compat.is_dask_array(x):
        return np.asarray(x.compute())
    if is_mlx_array(x) or array_api_compat.is_jax_array(x):
        return np.asarray(x)
    if hasattr(x, "__dlpack__"):
        try:
            return np.from_dlpack(x)
        except (TypeError, BufferError, RuntimeError):
            pass
    return np.asarray(x)


def values_known(x: object) -> bool:
    """Whether the values of ``x`` can be read now without tracing or a graph compute.

    False for Dask arrays and for JAX arrays under a transformation
    (``jax.jit`` tracers); True for concrete JAX arrays and eager backends.
    """
    if array_api_compat.is_dask_array(x):
        return False
    if array_api_compat.is_jax_array(x):
        import jax

        return not isinstance(x, jax.core.Tracer)
    return not is_lazy(x)


def has_accurate_float64_math(xp: Any) -> bool:
    """Whether ``xp.sin``/``xp.cos``/``xp.exp`` are float64-accurate on float64 input.

    False for MLX: on its CPU device (0.32) float64 ``sin``, ``cos`` and ``exp``
    return float64 arrays with float32 accuracy (errors near 1.5e-7, 8e-6 for
    ``exp`` near 3), while ``+``, ``*``, ``round``, ``log`` and ``sqrt`` are
    exact or correctly rounded.  Callers evaluate these functions themselves.
    """
    return not is_mlx_namespace(xp)


def is_host_array(x: object) -> bool:
    """Whether ``x`` is an eager array in host memory: NumPy (array-api-strict wraps it), PyTorch CPU.

    Elementwise work on these is bound by memory traffic, so callers may work in
    cache-sized blocks; lazy and accelerator arrays are better left whole.
    """
    if array_api_compat.is_numpy_array(x):
        return True
    if array_api_compat.is_torch_array(x):
        return x.device.type == "cpu"
    strict = array_api_compat.is_array_api_obj(x) and not is_mlx_array(x)
    return strict and array_api_compat.is_array_api_strict_namespace(array_api_compat.array_namespace(x))


def take_table(table: Any, index: Any, *, xp: Any) -> Any:
    """``table[..., index]``: gather along the last axis of a small table, any index shape.

    ``table`` has shape ``[*lead, R]`` and ``index`` integer values in
    ``[0, R)``; the result has shape ``[*lead, *index.shape]``.  The generic path
    is ``take`` on the flattened index.  Dask cannot flatten a 2-D chunked array
    without rechunking it into full rows (whole rows of a 131072-wide bias), so
    there every block of ``index`` is gathered on its own, with the whole table
    passed to each block.
    """
    if array_api_compat.is_dask_array(index):
        import dask.array as da
        import numpy as np

        lead = tuple(f"l{i}" for i in range(table.ndim - 1))
        inds = tuple(f"i{i}" for i in range(index.ndim))
        whole = da.asarray(table).rechunk(table.shape)
        return da.blockwise(
            lambda tab, idx: np.take(tab, idx, axis=-1),
            lead + inds,
            whole,
            (*lead, "r"),
            index,
            inds,
            concatenate=True,
            dtype=table.dtype,
        )
    flat = xp.take(table, xp.reshape(index, (-1,)), axis=table.ndim - 1)
    return xp.reshape(flat, (*table.shape[:-1], *index.shape))


def clip(x: Any, lo: int | float, hi: int | float, *, xp: Any) -> Any:
    """``xp.clip(x, lo, hi)`` for Python-scalar bounds, chunk-friendly on Dask.

    array-api-compat's Dask ``clip`` broadcasts each bound to the full shape and
    rechunks it, which materialises two arrays as large as ``x``; there the
    bounds are applied as 0-d arrays instead.
    """
    if array_api_compat.is_dask_array(x):
        low = xp.asarray(lo, dtype=x.dtype)
        high = xp.asarray(hi, dtype=x.dtype)
        return xp.minimum(xp.maximum(x, low), high)
    return xp.clip(x, lo, hi)
