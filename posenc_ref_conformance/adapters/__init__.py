"""Adapters: the built-in ones and :func:`load_adapter` for third-party ones.

An adapter spec is one string (the ``check`` argument or ``POSENC_REF_ADAPTER``):

* ``posenc_ref`` or ``posenc_ref:BACKEND`` (``numpy``, ``array_api_strict``,
  ``mlx``, ``torch``, ``jax.numpy``, ``jax.numpy:x32``, ``dask.array``, ``cupy``,
  or an alias such as ``jax``: :data:`posenc_ref.backends.BACKENDS`);
* a real library's own code, by name (``LIBRARIES``; a variant after ``:``):
  ``mlx``, ``transformers[:FAMILY]`` (one variant per model family), ``torchtune``,
  ``rotary_embedding_torch``, ``keras_hub``, ``vllm[:native|deepseek]``, ``ggml``, ``mlx_lm``,
  ``timm[:mixed]``, ``x_transformers``, ``onnxruntime[:onnx]``, ``megatron_core``,
  ``llama_models[:llama4]``;
  ``INSTALL`` says how to get each library (``scripts/matrix/setup_<name>.sh``);
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

from .base import (
    CANONICAL_CALLS,
    CANONICAL_FUNCTIONS,
    Adapter,
    Capabilities,
    ModuleAdapter,
    Unsupported,
    call_text,
)

__all__ = [
    "INSTALL",
    "LIBRARIES",
    "Adapter",
    "AdapterError",
    "Capabilities",
    "ModuleAdapter",
    "Unsupported",
    "builtin_names",
    "check_adapter",
    "load_adapter",
]


class AdapterError(ValueError):
    """The adapter spec names nothing loadable (a usage error)."""


#: Built-in adapters of real libraries: spec name -> module under adapters/, whose ``ADAPTERS`` maps
#: a variant (``"default"`` for the bare name) to an Adapter class.  Hyphens may replace underscores.
LIBRARIES = {
    "mlx": "mlx",
    "transformers": "transformers",
    "torchtune": "torchtune",
    "rotary_embedding_torch": "rotary_embedding_torch",
    "keras_hub": "keras_hub",
    "vllm": "vllm",
    "ggml": "ggml",
    "mlx_lm": "mlx_lm",
    "timm": "timm",
    "x_transformers": "x_transformers",
    "onnxruntime": "onnxruntime",
    "megatron_core": "megatron_core",
    "llama_models": "llama_models",
}
#: How to get each library (what a user needs when its adapter cannot load).
INSTALL = {
    "mlx": "pip install 'posenc-ref[mlx]'",
    "transformers": "scripts/matrix/setup_transformers.sh VENV",
    "torchtune": "scripts/matrix/setup_torchtune.sh VENV",
    "rotary_embedding_torch": "scripts/matrix/setup_rotary_embedding_torch.sh VENV",
    "keras_hub": "scripts/matrix/setup_keras_hub.sh VENV",
    "vllm": "scripts/matrix/setup_vllm.sh VENV",
    "ggml": "scripts/matrix/setup_ggml.sh VENV",
    "mlx_lm": "scripts/matrix/setup_mlx_lm.sh VENV",
    "timm": "scripts/matrix/setup_timm.sh VENV",
    "x_transformers": "scripts/matrix/setup_x_transformers.sh VENV",
    "onnxruntime": "scripts/matrix/setup_onnxruntime.sh VENV",
    "megatron_core": "scripts/matrix/setup_megatron_core.sh VENV",
    "llama_models": "scripts/matrix/setup_llama_models.sh VENV",
}


def builtin_names() -> list[str]:
    """Every built-in spec: ``posenc_ref[:BACKEND]`` and each library with its variants."""
    names = ["posenc_ref"]
    for name, module in LIBRARIES.items():
        try:
            variants = importlib.import_module(f"{__name__}.{module}").ADAPTERS
        except ImportError:
            variants = {"default": None}
        names += [name if v == "default" else f"{name}:{v}" for v in variants]
    return names


def _posenc_ref(spec: str) -> Adapter:
    from posenc_ref.backends import resolve

    from .posenc_ref import PosencRefAdapter

    backend = spec.partition(":")[2] or "numpy"
    try:
        backend = resolve(backend).id
    except (TypeError, ValueError) as exc:
        msg = f"adapter 'posenc_ref:{backend}': {exc}"
        raise AdapterError(msg) from exc
    try:
        return PosencRefAdapter(backend)
    except ImportError as exc:
        msg = f"adapter {spec!r}: backend {backend} is not installed ({exc})"
        raise AdapterError(msg) from exc


def _builtin(spec: str) -> Adapter | None:
    name, _, variant = spec.partition(":")
    if name == "posenc_ref":
        return _posenc_ref(spec)
    name = name.replace("-", "_")
    if name not in LIBRARIES:
        return None
    try:
        module = importlib.import_module(f"{__name__}.{LIBRARIES[name]}")
        variants = module.ADAPTERS
        if (variant or "default") not in variants:
            named = sorted(v for v in variants if v != "default")
            msg = f"adapter {spec!r}: the variant must be one of {named}; got {variant!r}"
            raise AdapterError(msg)
        return variants[variant or "default"]()
    except ImportError as exc:
        msg = f"adapter {spec!r} needs its library ({INSTALL[name]}): {exc}"
        raise AdapterError(msg) from exc


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
    """Refuse an adapter that implements no canonical function, or one whose functions cannot take
    their declared call; return its warnings (misspelt names)."""
    warnings = list(getattr(adapter, "warnings", []))
    if not any(adapter.supports(f) for f in CANONICAL_FUNCTIONS):
        detail = f" ({'; '.join(warnings)})" if warnings else ""
        msg = (
            f"adapter {label!r} implements none of the canonical functions "
            f"({', '.join(CANONICAL_FUNCTIONS)}){detail}"
        )
        raise AdapterError(msg)
    problems = [
        p for f in CANONICAL_FUNCTIONS if adapter.supports(f) and (p := signature_problem(adapter, f))
    ]
    if problems:
        msg = f"adapter {label!r}: " + "; ".join(problems)
        raise AdapterError(msg)
    return warnings


def signature_problem(adapter: Adapter, function: str) -> str | None:
    """Why ``adapter``'s ``function`` cannot be called as the protocol calls it, or None.

    The suite passes the declared positional arguments by position and the rest by keyword
    (``call_text``); a function that cannot bind them would fail every case alike.  A callable
    whose signature cannot be read (a C builtin) is not judged here.
    """
    impl = getattr(adapter, function, None)
    if impl is None:
        return None
    try:
        signature = inspect.signature(impl)
    except (TypeError, ValueError):
        return None
    declared = CANONICAL_CALLS[function]["signature"]
    keywords = [*declared["keyword"], *(["dtype"] if declared["takesDtype"] else [])]
    try:
        signature.bind(*declared["positional"], **dict.fromkeys(keywords))
    except TypeError as exc:
        return f"{function}{signature} cannot take the call {call_text(function)} ({exc})"
    return None


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
