"""Adapters: the built-in ones and :func:`load_adapter` for third-party ones.

An adapter spec is one string (the ``check`` argument or ``POSENC_REF_ADAPTER``):

* ``posenc_ref`` or ``posenc_ref:BACKEND`` (``numpy``, ``array_api_strict``,
  ``mlx``, ``torch``, ``jax.numpy``, ``jax.numpy:x32``, ``dask.array``, ``cupy``);
* ``mlx``: MLX's own layers (``mx.fast.rope``, ``nn.RoPE``, ``nn.ALiBi``,
  ``nn.SinusoidalPositionalEncoding``);
* ``transformers`` or ``transformers:VARIANT`` (``mpt``, ``m2m100``, ``fsmt``,
  ``gptj``): Hugging Face transformers' own functions (see
  :mod:`posenc_ref_conformance.adapters.transformers`);
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
import inspect
import pathlib
import sys
from typing import Any

from .base import CANONICAL_FUNCTIONS, Adapter, Capabilities, ModuleAdapter, Unsupported

__all__ = [
    "Adapter",
    "AdapterError",
    "Capabilities",
    "ModuleAdapter",
    "Unsupported",
    "check_adapter",
    "load_adapter",
]


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
    if spec == "transformers" or spec.startswith("transformers:"):
        from .transformers import ADAPTERS

        variant = spec.partition(":")[2] or "default"
        if variant not in ADAPTERS:
            msg = f"adapter 'transformers:{variant}': variant must be one of {sorted(ADAPTERS)}"
            raise AdapterError(msg)
        return ADAPTERS[variant]()  # AdapterError if torch or transformers is missing
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
    """An Adapter from what ``label`` names: an instance, a subclass, a factory, or a module-like object."""
    if isinstance(obj, Adapter):
        return obj
    if isinstance(obj, type):
        if issubclass(obj, Adapter):
            return obj()
        msg = f"adapter {label!r} names the class {obj.__name__}, which is not an Adapter subclass"
        raise AdapterError(msg)
    if inspect.isfunction(obj) or inspect.ismethod(obj) or inspect.isbuiltin(obj):
        made = obj()  # a factory
        if isinstance(made, Adapter) or inspect.ismodule(made):
            return _wrap(made, label)
        msg = f"adapter factory {label!r} returned {type(made).__name__}; expected an Adapter or a module"
        raise AdapterError(msg)
    return ModuleAdapter(obj, name=label)


def check_adapter(adapter: Adapter, label: str) -> list[str]:
    """Refuse an adapter that implements no canonical function; return its warnings (misspelt names)."""
    warnings = list(getattr(adapter, "warnings", []))
    if not any(adapter.supports(f) for f in CANONICAL_FUNCTIONS):
        detail = f" ({'; '.join(warnings)})" if warnings else ""
        msg = (
            f"adapter {label!r} implements none of the canonical functions "
            f"({', '.join(CANONICAL_FUNCTIONS)}){detail}"
        )
        raise AdapterError(msg)
    return warnings


def _load(spec: str) -> Adapter:
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


def load_adapter(spec: str) -> Adapter:
    """The adapter named by ``spec`` (see the module docstring); :class:`AdapterError` if none.

    Invalid ``CAPABILITIES`` and adapters that implement no canonical function
    are AdapterErrors too (usage errors: nothing could be checked).
    """
    spec = spec.strip()
    if not spec:
        msg = "adapter must be named: pass ADAPTER or set POSENC_REF_ADAPTER (e.g. 'posenc_ref')"
        raise AdapterError(msg)
    try:
        adapter = _load(spec)
    except (TypeError, ValueError) as exc:
        if isinstance(exc, AdapterError):
            raise
        msg = f"adapter {spec!r}: {exc}"
        raise AdapterError(msg) from exc
    check_adapter(adapter, spec)
    return adapter
