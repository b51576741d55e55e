"""Adapters: the built-in ones and :func:`load_adapter` for third-party ones.

An adapter spec is one string (the ``check`` argument or ``POSENC_REF_ADAPTER``):

* ``posenc_ref`` or ``posenc_ref:BACKEND`` (``numpy``, ``array_api_strict``,
  ``mlx``, ``torch``, ``jax.numpy``, ``jax.numpy:x32``, ``dask.array``, ``cupy``);
* ``mlx``: MLX's own layers (``mx.fast.rope``, ``nn.RoPE``, ``nn.ALiBi``,
  ``nn.SinusoidalPositionalEncoding``);
* ``vllm`` and ``vllm:native``: vLLM's RoPE layers (``get_rope``) through the CPU
  custom op or the PyTorch path (``scripts/matrix/setup_vllm.sh`` installs them);
* ``ggml``: ggml's ``ggml_rope_ext`` CPU kernel through ggml-python
  (``scripts/matrix/setup_ggml.sh``);
* ``package.module`` or ``package.module:NAME``: an importable module defining
  canonical functions, or an :class:`Adapter` subclass / instance / factory named
  ``NAME`` (default: the module's ``ADAPTER`` attribute if it has one);
* ``path/to/file.py`` or ``path/to/file.py:NAME``: the same, from a file.
"""

from __future__ import annotations

import importlib
import importlib.util
import pathlib
import sys
from typing import Any

from .base import Adapter, Capabilities, ModuleAdapter, Unsupported

__all__ = ["Adapter", "AdapterError", "Capabilities", "ModuleAdapter", "Unsupported", "load_adapter"]


class AdapterError(ValueError):
    """The adapter spec names nothing loadable (a usage error)."""


def _builtin(spec: str) -> Adapter | None:
    if spec == "posenc_ref" or spec.startswith("posenc_ref:"):
        from .posenc_ref import BACKENDS, PosencRefAdapter

        backend = spec.partition(":")[2] or "numpy"
        if backend not in BACKENDS:
            msg = f"adapter 'posenc_ref:{backend}': backend must be one of {sorted(BACKENDS)}"
            raise AdapterError(msg)
        try:
            return PosencRefAdapter(backend)
        except ImportError as exc:
            msg = f"adapter {spec!r}: backend {backend} is not installed ({exc})"
            raise AdapterError(msg) from exc
    if spec == "mlx":
        try:
            from .mlx import MlxAdapter
        except ImportError as exc:
            msg = f"adapter 'mlx' needs MLX (pip install 'posenc-ref[mlx]'): {exc}"
            raise AdapterError(msg) from exc
        return MlxAdapter()
    if spec in _HEAVY:
        module_name, attr, install = _HEAVY[spec]
        try:
            module = importlib.import_module(f"{__name__}.{module_name}")
            return getattr(module, attr)()
        except ImportError as exc:
            msg = f"adapter {spec!r} needs {install}: {exc}"
            raise AdapterError(msg) from exc
    return None


#: Built-in adapters of heavy third-party stacks: spec -> (module, class, how to install).
_HEAVY = {
    "vllm": ("vllm", "VllmAdapter", "vLLM's CPU wheel (scripts/matrix/setup_vllm.sh VENV)"),
    "vllm:native": ("vllm", "NativeAdapter", "vLLM's CPU wheel (scripts/matrix/setup_vllm.sh VENV)"),
    "ggml": ("ggml", "GgmlAdapter", "ggml-python (scripts/matrix/setup_ggml.sh VENV)"),
}


def _module_from_file(path: pathlib.Path) -> Any:
    name = f"posenc_ref_adapter_{abs(hash(str(path.resolve())))}"
    loader_spec = importlib.util.spec_from_file_location(name, path)
    if loader_spec is None or loader_spec.loader is None:
        msg = f"adapter file {str(path)!r} cannot be imported"
        raise AdapterError(msg)
    module = importlib.util.module_from_spec(loader_spec)
    sys.modules[name] = module
    loader_spec.loader.exec_module(module)
    return module


def _wrap(obj: Any, label: str) -> Adapter:
    if isinstance(obj, Adapter):
        return obj
    if isinstance(obj, type) and issubclass(obj, Adapter):
        return obj()
    if callable(obj) and not isinstance(obj, type) and not hasattr(obj, "__dict__"):
        return _wrap(obj(), label)
    return ModuleAdapter(obj, name=label)


def load_adapter(spec: str) -> Adapter:
    """The adapter named by ``spec`` (see the module docstring); :class:`AdapterError` if none."""
    spec = spec.strip()
    if not spec:
        msg = "adapter must be named: pass ADAPTER or set POSENC_REF_ADAPTER (e.g. 'posenc_ref')"
        raise AdapterError(msg)
    builtin = _builtin(spec)
    if builtin is not None:
        return builtin
    target, _, attr = spec.partition(":") if not spec.endswith(".py") or ":" in spec else (spec, "", "")
    if target.endswith(".py"):
        path = pathlib.Path(target)
        if not path.is_file():
            msg = f"adapter file {target!r} does not exist"
            raise AdapterError(msg)
        module = _module_from_file(path)
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            msg = f"adapter module {target!r} cannot be imported: {exc}"
            raise AdapterError(msg) from exc
    name = attr or ("ADAPTER" if hasattr(module, "ADAPTER") else "")
    if name:
        if not hasattr(module, name):
            msg = f"adapter {spec!r}: {target} has no attribute {name!r}"
            raise AdapterError(msg)
        return _wrap(getattr(module, name), spec)
    return ModuleAdapter(module, name=spec)
