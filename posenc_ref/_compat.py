"""Namespace, device and dtype handling: the only place that knows backend quirks.

Public functions resolve ``xp`` with ``_validate.namespace`` (arrays, through
:func:`namespace_of`) or ``_validate.check_namespace`` (``xp=``, through
:func:`normalize_namespace`), create arrays with
:func:`asarray`, :func:`arange`, :func:`zeros` and :func:`full` (which put them on
the given device), and pick the precision of intermediate results with
:func:`compute_dtype`.  Nothing else in ``posenc_ref`` imports array-api-compat,
numpy or mlx.

MLX (``mlx.core``) is reached through MLX's own ``__array_namespace__`` because
array-api-compat does not wrap it.  Its differences live here and only here:

* ``x.__array_namespace__(api_version=...)`` raises, so it is called bare;
* arrays have no ``.device`` and creation functions take no ``device=``: the
  device of an MLX array is ``None`` here and arrays go to MLX's default device;
* float64 exists on the CPU device only.

Which 64-bit types a device has is asked of the array-API inspection interface
(``__array_namespace_info__().dtypes(device=...)``) before the per-library
knowledge: :func:`has_float64` and :func:`index_dtype`.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import Any

import array_api_compat

__all__ = [
    "arange",
    "array_namespace",
    "asarray",
    "astype",
    "broadcast_against",
    "clip",
    "compute_dtype",
    "computes_with",
    "count_true",
    "default_namespace",
    "device",
    "full",
    "has_float64",
    "index_dtype",
    "is_host_array",
    "is_lazy",
    "is_mlx_array",
    "is_mlx_namespace",
    "min_max",
    "namespace_of",
    "normalize_namespace",
    "pairwise_difference",
    "take_table",
    "to_numpy",
    "values_known",
    "widen",
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


def default_namespace() -> Any:
    """NumPy through array-api-compat: the namespace of builders called without ``xp``."""
    import array_api_compat.numpy as compat_numpy

    return compat_numpy


#: The namespace of each array type met so far: an array's namespace depends on its type only.
_NAMESPACE_OF_TYPE: dict[type, Any] = {}


def namespace_of(x: object) -> Any:
    """The array namespace of ``x``; ``None`` for anything that is not an array (None, scalars, lists).

    Remembered per array type, so a small call does not pay array-api-compat's
    detection once per argument (several microseconds each).
    """
    known = _NAMESPACE_OF_TYPE.get(type(x))
    if known is not None:
        return known
    if is_mlx_array(x):
        xp = x.__array_namespace__()  # MLX rejects api_version=
    elif isinstance(x, type) or not array_api_compat.is_array_api_obj(x):  # classes carry the method too
        return None
    else:
        xp = array_api_compat.array_namespace(x)
    _NAMESPACE_OF_TYPE[type(x)] = xp
    return xp


#: Plain library modules and the array-api-compat namespace that stands for each.
_WRAPPED = {
    "numpy": "array_api_compat.numpy",
    "torch": "array_api_compat.torch",
    "cupy": "array_api_compat.cupy",
    "dask.array": "array_api_compat.dask.array",
}


def normalize_namespace(xp: object) -> Any:
    """The namespace for a module given as ``xp=``: plain ``numpy``, ``torch``, ``cupy`` and
    ``dask.array`` become array-api-compat's wrappers (which have the standard names); others are
    kept when they look like array namespaces (``asarray``, ``isdtype``, ``float32``), else ``None``."""
    if not isinstance(xp, types.ModuleType):
        return None
    wrapper = _WRAPPED.get(xp.__name__)
    if wrapper is not None:
        return importlib.import_module(wrapper)
    standard = all(hasattr(xp, name) for name in ("asarray", "isdtype", "float32", "int64", "arange"))
    return xp if standard else None


def array_namespace(*arrays: object) -> Any:
    """The namespace of the first array among ``arrays`` (NumPy if none); callers that take several
    arrays check that they agree with ``_validate.namespace``."""
    for x in arrays:
        xp = namespace_of(x)
        if xp is not None:
            return xp
    return default_namespace()


def is_lazy(x: object) -> bool:
    """True for arrays whose values are not known without computing them (Dask, JAX)."""
    return not is_mlx_array(x) and array_api_compat.is_lazy_array(x)


def device(x: object) -> Any:
    """The device of ``x``; ``None`` for MLX arrays (they have no ``.device``).

    A PyTorch tensor's own ``.device`` is what array-api-compat returns for it,
    read directly (a small call asks this several times).
    """
    if array_api_compat.is_torch_array(x):
        return x.device
    if is_mlx_array(x):
        return None
    return array_api_compat.device(x)


def min_max(x: Any, xp: Any) -> tuple[Any, Any]:
    """``(xp.min(x), xp.max(x))``, as 0-D arrays of ``x``'s namespace.

    PyTorch's ``torch.aminmax`` gives both in one reduction, one pass over
    ``x`` and one kernel launch instead of two (the same values: min and max
    are exact).
    """
    if array_api_compat.is_torch_array(x):
        import torch

        return tuple(torch.aminmax(x))
    return xp.min(x), xp.max(x)


def _device_kwargs(xp: Any, dev: Any) -> dict[str, Any]:
    if dev is None or is_mlx_namespace(xp):
        return {}
    return {"device": dev}


def asarray(obj: Any, *, xp: Any, dtype: Any = None, device: Any = None) -> Any:
    """``xp.asarray`` on ``device`` (ignored on MLX)."""
    return xp.asarray(obj, dtype=dtype, **_device_kwargs(xp, device))


def astype(x: Any, dtype: Any, *, xp: Any) -> Any:
    """``x`` in ``dtype``: ``x`` itself when it already is, else ``xp.astype(x, dtype)`` (a new array)."""
    return x if x.dtype == dtype else xp.astype(x, dtype)


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


#: ``(float64, int64)`` as :func:`_ask_types` answered, by ``(xp, device)``, or by ``(xp, device,
#: state)`` where a global setting also decides (:func:`_global_state`).
_TYPES: dict[tuple[Any, ...], tuple[bool, bool]] = {}


def _global_state(xp: Any) -> Any:
    """The process-wide setting that decides ``xp``'s 64-bit types beside the device, or ``None``.

    MLX: its default device (MLX arrays have no device here, so it decides;
    ``mx.set_default_device`` changes it).  JAX: the ``jax_enable_x64`` flag
    (``posenc_ref.backends.namespace`` sets it).
    """
    if is_mlx_namespace(xp):
        import mlx.core as mx

        return mx.default_device()
    if array_api_compat.is_jax_namespace(xp):
        import jax

        return bool(jax.config.read("jax_enable_x64"))
    return None


def _inspected(xp: Any, device: Any, kind: str, name: str) -> bool | None:
    """Whether ``xp.__array_namespace_info__().dtypes(device=device, kind=kind)`` has the key ``name``.

    ``None`` where the namespace has no inspection API (or only under a newer
    ``api_version``), or the question raises (a device it does not know) or is
    answered with something other than a dict.
    """
    try:
        dtypes = xp.__array_namespace_info__().dtypes(device=device, kind=kind)
    except Exception:  # each library raises its own error here
        return None
    return name in dtypes if isinstance(dtypes, dict) else None


def _ask_types(xp: Any, device: Any, state: Any) -> tuple[bool, bool]:
    """``(float64, int64)`` for ``xp`` on ``device``: the inspection API's answer, then library knowledge.

    A type is missing where the inspection API leaves it out for ``device``
    (``None`` asks about the default device); no inspection answer counts as
    present.  On top, what the inspection may not see: MLX has float64 on its
    CPU only (``state``, its default device, decides: its arrays have no device
    here), JAX without x64 (``state`` False) has neither 64-bit type, PyTorch
    has no float64 on Apple's MPS device.
    """
    float64 = _inspected(xp, device, "real floating", "float64") is not False
    int64 = _inspected(xp, device, "signed integer", "int64") is not False
    if is_mlx_namespace(xp):
        import mlx.core as mx

        float64 = float64 and state == mx.cpu
    elif array_api_compat.is_jax_namespace(xp):
        float64, int64 = float64 and state, int64 and state
    elif array_api_compat.is_torch_namespace(xp):
        float64 = float64 and getattr(device, "type", "cpu") != "mps"
    return float64, int64


def _types(xp: Any, device: Any) -> tuple[bool, bool]:
    """``(float64, int64)`` for ``xp`` on ``device``, remembered per namespace, device and global state.

    Asking costs an inspection call per kind (PyTorch's creates an empty tensor
    of every dtype on the device), and every public call asks.  Namespaces
    without a global state are remembered under ``(xp, device)``, found with
    one lookup; MLX and JAX under ``(xp, device, state)``.  An unhashable
    device is remembered by its type and ``repr``.
    """
    key: tuple[Any, ...] = (xp, device)
    try:
        known = _TYPES.get(key)
    except TypeError:  # an unhashable device
        key = (xp, (type(device), repr(device)))
        known = _TYPES.get(key)
    if known is not None:
        return known
    state = _global_state(xp)
    if state is not None:
        key = (*key, state)
        known = _TYPES.get(key)
        if known is not None:
            return known
    known = _TYPES[key] = _ask_types(xp, device, state)
    return known


def has_float64(xp: Any, device: Any = None) -> bool:
    """Whether float64 arithmetic is available for ``xp`` on ``device`` (``None``: the default device).

    The array-API inspection interface answers first: float64 must be among
    ``xp.__array_namespace_info__().dtypes(device=device, kind="real floating")``
    (array-api-strict's ``Device("no_float64")`` and ``Device("no_x64")`` have
    none).  Where a namespace has no inspection API, or it raises, float64 is
    taken to exist.  Then the per-library knowledge the inspection may lack:
    none for MLX off the CPU, for JAX without ``jax_enable_x64`` or for
    PyTorch on Apple's MPS device.  Remembered per namespace and device
    (:func:`_types`).
    """
    return _types(xp, device)[0]


def compute_dtype(xp: Any, device: Any = None) -> Any:
    """The float dtype for intermediate results: float64 where available, else float32."""
    return xp.float64 if has_float64(xp, device) else xp.float32


def index_dtype(xp: Any, device: Any = None) -> Any:
    """The widest integer dtype for positions on ``device`` (``None``: the default device).

    int64, or int32 where int64 is missing: where the inspection API leaves it
    out of ``dtypes(device=device, kind="signed integer")``
    (array-api-strict's ``Device("no_x64")``) and for JAX without x64.
    """
    return xp.int64 if _types(xp, device)[1] else xp.int32


def computes_with(dtype: Any, xp: Any) -> bool:
    """Whether ``xp`` has comparisons and reductions for the integer ``dtype``: not so for PyTorch's
    uint16/uint32/uint64 (2.x stores them, but ``>=``, ``max`` and ``-`` raise NotImplementedError)."""
    if array_api_compat.is_torch_namespace(xp):
        return dtype not in (xp.uint16, xp.uint32, xp.uint64)
    return True


def widen(x: Any, xp: Any) -> Any:
    """An integer array ``x`` in the index dtype of its device (no copy when it already is).

    int64 arrays are returned at once: a device that holds one has int64, its index dtype.
    """
    if x.dtype == xp.int64:
        return x
    return astype(x, index_dtype(xp, device(x)), xp=xp)


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
    flat_index = xp.reshape(index, (-1,))
    if array_api_compat.is_torch_namespace(xp):
        # array-api-compat's torch take first maps negative indices with a where() over the whole
        # index (1.4x the gather's own time on a 4096**2 T5 index); these indices are in [0, R).
        import torch

        flat = torch.index_select(table, table.ndim - 1, flat_index)
    else:
        flat = xp.take(table, flat_index, axis=table.ndim - 1)
    return xp.reshape(flat, (*table.shape[:-1], *index.shape))


def count_true(mask: Any, *, axis: int, dtype: Any, xp: Any) -> Any:
    """How many elements of the boolean ``mask`` are true along ``axis``, in ``dtype``: the array
    API's ``sum(..., dtype=)`` (a device without 64-bit integers refuses the default int64
    accumulator), MLX's ``sum`` of the cast (it takes no ``dtype`` and keeps the input's)."""
    ones = astype(mask, dtype, xp=xp)
    if is_mlx_namespace(xp):
        return xp.sum(ones, axis=axis)
    return xp.sum(ones, axis=axis, dtype=dtype)


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


def broadcast_against(x: Any, other: Any, *, xp: Any) -> Any:
    """``x`` broadcast to the shape of ``x`` and ``other`` together (a view where the library has them).

    The first array of ``xp.broadcast_arrays(x, other)``; on Dask the result takes its chunks
    from ``other`` along the axes ``other`` adds.  On PyTorch it is ``torch.broadcast_tensors``:
    array-api-compat's ``broadcast_arrays`` computes the shape with ``torch.broadcast_shapes``,
    whose first call in a process imports SymPy (0.5 to 0.8 s on the project's machine).
    """
    if array_api_compat.is_torch_array(x):
        import torch

        return torch.broadcast_tensors(x, other)[0]
    return xp.broadcast_arrays(x, other)[0]


def pairwise_difference(q: Any, k: Any) -> Any:
    """``k[..., j] - q[..., i]`` for every pair: shape ``[..., Lq, Lk]``.  Callers pass positions
    already widened to the index dtype (``_validate.check_position_pair``), so nothing wraps."""
    return k[..., None, :] - q[..., :, None]
