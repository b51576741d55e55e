"""The adapter protocol: how the suite calls *your* implementation.

An adapter maps the suite's canonical calls onto a third party's functions.
Inputs are NumPy arrays (positions ``int64``; float inputs in the dtype of the
run); outputs may be anything :func:`numpy.asarray` or DLPack accepts (NumPy,
PyTorch, JAX, MLX, CuPy, Dask arrays, or Python numbers for scalars).  Float
outputs must have the run's dtype (``"float64"`` or ``"float32"``, passed as
``dtype`` where the call has no float input to take it from).

Write one either as a subclass of :class:`Adapter` (override what you support;
everything else raises :class:`Unsupported` and its cases are *skipped*) or as
a plain module defining any of the canonical functions below plus an optional
``CAPABILITIES`` (a :class:`Capabilities` or a dict of its fields).  Declare what
you support in ``capabilities``: cases needing another layout, scaling type,
ALiBi form, sinusoidal convention or dtype are skipped, not failed.  Raise
:class:`Unsupported` from a call for anything finer-grained.

``inv_freq`` arguments are float64 and exact: use their values as given.
``layout`` is ``"half"`` (pairs ``i, i + d/2``) or ``"interleaved"`` (``2i, 2i+1``);
``scaling`` is a dict of HF ``rope_parameters`` keys (or ``None``).  ``rope``
defaults to ``apply_rope(x, *rope_cos_sin(...))``.

The canonical calls (keyword names are part of the protocol), as the shipped
golden vectors' ``index.json`` declares them (each golden file states its own
call the same way, under ``signature``)::

"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import json
import pathlib
from typing import Any, NoReturn

from .. import variants as variant_axes

__all__ = [
    "ALIBI_FORMS",
    "CANONICAL_FUNCTIONS",
    "CANONICAL_OUTPUTS",
    "CHOICES",
    "HEAD_LAYOUTS",
    "LAYOUTS",
    "SCALING_TYPES",
    "SINUSOIDAL_CONVENTIONS",
    "Adapter",
    "Capabilities",
    "ModuleAdapter",
    "Unsupported",
]

LAYOUTS = ("half", "interleaved")
SCALING_TYPES = ("default", "linear", "ntk", "dynamic", "yarn", "llama3", "longrope", "proportional")
#: Axis orders of x in rope_heads: [batch, heads, seq, dim], [batch, seq, heads, dim], [tokens, heads, dim].
HEAD_LAYOUTS = ("bhsd", "bshd", "thd")
ALIBI_FORMS = ("symmetric", "causal")
SINUSOIDAL_CONVENTIONS = ("vaswani", "tensor2tensor", "fairseq", "marian", "mlx", "patchtst")
LEARNED_OFFSETS = ("plain", "opt", "roberta")
SHAW_CONVENTIONS = ("tensor2tensor", "bert", "speecht5", "vits", "granite_speech")


def _declared_calls() -> dict[str, dict[str, Any]]:
    """Each canonical function's entry of the shipped ``index.json`` (its call, outputs, scheme)."""
    index = pathlib.Path(__file__).resolve().parents[1] / "golden" / "vectors" / "index.json"
    return {entry["function"]: entry for entry in json.loads(index.read_text(encoding="ascii"))["files"]}


#: The canonical functions, each with its declared call (``signature``): the golden vectors' own list.
CANONICAL_CALLS = _declared_calls()
CANONICAL_FUNCTIONS = tuple(CANONICAL_CALLS)
#: Output names of the canonical functions with more than one output (the others return one array).
CANONICAL_OUTPUTS = {
    name: tuple(entry["signature"]["outputs"])
    for name, entry in CANONICAL_CALLS.items()
    if len(entry["signature"]["outputs"]) > 1
}
#: Variant axis -> its values, the canonical one first (from every function's declared call).
VARIANTS: dict[str, tuple[str, ...]] = {}
for _entry in CANONICAL_CALLS.values():
    for _axis, _values in _entry["signature"]["variants"].items():
        VARIANTS[_axis] = tuple(_values)
DTYPES = ("float64", "float32")
#: Precision classes of phase computations (see Capabilities.phase).
PHASES = ("exact", "product")
#: What position inputs a function takes (see Capabilities.positions).
POSITION_FORMS = ("any", "consecutive")


class Unsupported(NotImplementedError):
    """Raised by an adapter for a call or option it does not implement: the case is skipped.

    Any ``NotImplementedError`` is treated the same way.
    """


#: Capability fields holding a set of names, and the names each may contain.
CHOICES = {
    "functions": CANONICAL_FUNCTIONS,
    "layouts": LAYOUTS,
    "head_layouts": HEAD_LAYOUTS,
    "scaling_types": SCALING_TYPES,
    "alibi_forms": ALIBI_FORMS,
    "sinusoidal_conventions": SINUSOIDAL_CONVENTIONS,
    "learned_offsets": LEARNED_OFFSETS,
    "shaw_conventions": SHAW_CONVENTIONS,
}


@dataclasses.dataclass(frozen=True)
class Capabilities:
    """What an adapter supports; cases outside it are skipped with the reason.

    ``functions=None`` means every canonical function the adapter defines.
    ``dtypes``: the run dtypes (``float64``, ``float32``; at least one), for every
    function, or a dict ``{function: [dtypes], "default": [dtypes]}`` (HF builds
    RoPE tables in float32 even in a float64 model).
    ``phase``: how the implementation computes phases (sinusoidal tables, RoPE
    cos/sin), ``"exact"`` (reduced modulo one turn with extra precision, as
    posenc_ref does) or ``"product"`` (the angle is the product of position and
    frequency rounded in the run's dtype, positions cast to it first), for every
    function or as a dict like ``dtypes``, whose keys may also name one option
    value (``"sinusoidal:fairseq"``: an adapter running several implementations).
    Tolerances follow the class's error
    model.  Undeclared is ``"exact"``: the suite assumes no precision class for
    you; when the product class explains every failure, the diagnosis says so
    and names the declaration (``"phase": "product"``) that judges the code as
    it is.
    ``head_layouts``: the axis orders ``rope_heads`` takes x in, ``"bhsd"`` (``[batch,
    heads, seq, dim]``, positions ``[batch, seq]``), ``"bshd"`` (``[batch, seq, heads,
    dim]``) and ``"thd"`` (``[tokens, heads, dim]``, one position per token).
    ``invalid_inputs=False`` skips every invalid-input case;
    ``data_dependent_errors=False`` only those whose error depends on array
    values (flag ``DataDependentCheck``), which lazy backends cannot check.
    ``error_types``: names of exception classes the implementation raises for
    bad input instead of (or besides) ``ValueError``/``TypeError`` (a list, or a
    per-function dict); an invalid-input case passes on the error type the golden
    case names (or a subclass), or on one of these.  ``invalid_inputs`` may also
    be a per-function dict.  ``variants``: variant axis -> value, for where
    the implementation computes a *named variant* under a canonical name
    (``{"ntk": "vllm"}``: its ``ntk`` scaling is vLLM's formula, not HF's;
    ``{"yarn-attention-factor": "deepseek"}``: DeepSeek's attention factor,
    ``truncate`` still read), for every function or per function
    (``{"rope_from_base": {...}, "default": {...}}``).  The axes are
    independent: a case runs when the declaration agrees on every axis its
    expected values depend on (its ``assumes``), so a case the variants agree on
    runs for all.  A preset names a combination (``{"yarn": "deepseek"}``: both
    YaRN axes).  :data:`VARIANTS` lists the axes and values; the docs page
    "Variants" gives each one's formula and the libraries that use it.
    ``notes`` maps a function name to free text shown in reports (why it is
    limited, what glue the adapter adds).  ``context``: the context length (in
    positions) the implementation must serve, a positive integer or ``None``
    (no claim); a reach below it (see the ``Reach`` golden cases) fails the run,
    naming both numbers.  ``posenc-ref check --context N`` overrides it.
    ``positions``: ``"any"`` (the default: any integer position arrays) or
    ``"consecutive"`` (the implementation takes a start offset, not positions:
    ``mx.fast.rope(offset=)``, a cache table sliced from ``p0``), for every
    function or as a dict like ``dtypes``.  A ``"consecutive"`` function is
    given only cases whose position inputs (``positions``, ``q_positions``,
    ``k_positions``) run ``p0, p0 + 1, ...`` along their last axis (``p0`` may
    differ per row); the others are skipped with that reason.  The golden
    cases flagged ``ConsecutiveRun`` are such runs at large offsets (2**20,
    2**24 - 2 .. 2**24 + 2), so an offset-only implementation is still judged
    where precision matters.

    Every field is checked when the object is made: a name outside the allowed
    set, a string where a list is meant, or an empty ``dtypes`` is a ValueError /
    TypeError naming the field.
    """

    functions: tuple[str, ...] | None = None
    dtypes: tuple[str, ...] | dict[str, tuple[str, ...]] = DTYPES
    phase: str | dict[str, str] = "exact"
    layouts: tuple[str, ...] = LAYOUTS
    head_layouts: tuple[str, ...] = HEAD_LAYOUTS
    scaling_types: tuple[str, ...] = SCALING_TYPES
    alibi_forms: tuple[str, ...] = ALIBI_FORMS
    sinusoidal_conventions: tuple[str, ...] = SINUSOIDAL_CONVENTIONS
    learned_offsets: tuple[str, ...] = LEARNED_OFFSETS
    shaw_conventions: tuple[str, ...] = SHAW_CONVENTIONS
    invalid_inputs: bool | dict[str, bool] = True
    data_dependent_errors: bool = True
    error_types: tuple[str, ...] | dict[str, tuple[str, ...]] = ()
    variants: dict[str, str] = dataclasses.field(default_factory=dict)
    notes: dict[str, str] = dataclasses.field(default_factory=dict)
    context: int | None = None
    positions: str | dict[str, str] = "any"

    def __post_init__(self) -> None:
        for name, allowed in CHOICES.items():
            value = getattr(self, name)
            if value is None and name == "functions":
                continue
            object.__setattr__(self, name, _names(value, name, allowed))
        object.__setattr__(self, "dtypes", _per_function(self.dtypes, "dtypes", _dtype_list))
        object.__setattr__(self, "phase", _per_function(self.phase, "phase", _one_of(PHASES)))
        object.__setattr__(
            self, "positions", _per_function(self.positions, "positions", _one_of(POSITION_FORMS))
        )
        object.__setattr__(
            self,
            "error_types",
            _per_function(self.error_types, "error_types", lambda v, f: _names(v, f, None)),
        )
        object.__setattr__(
            self, "invalid_inputs", _per_function(self.invalid_inputs, "invalid_inputs", _flag)
        )
        object.__setattr__(self, "variants", _check_variants(self.variants))
        _flag(self.data_dependent_errors, "data_dependent_errors")
        if not isinstance(self.notes, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.notes.items()
        ):
            msg = f"notes must be a dict of function name -> text; got {self.notes!r}"
            raise TypeError(msg)
        if self.context is not None:
            check_context(self.context, "context")

    def dtypes_of(self, function: str, option: str | None = None) -> tuple[str, ...]:
        """The run dtypes declared for ``function`` (or ``function:option``, e.g. ``sinusoidal:fairseq``)."""
        return _lookup(self.dtypes, function, DTYPES, option)  # type: ignore[return-value]

    def phase_of(self, function: str, option: str | None = None) -> str:
        """The precision class declared for ``function`` (or ``function:option``)."""
        return _lookup(self.phase, function, "exact", option)  # type: ignore[return-value]

    def positions_of(self, function: str) -> str:
        """The position inputs ``function`` takes: ``"any"`` or ``"consecutive"``."""
        return _lookup(self.positions, function, "any")  # type: ignore[return-value]

    def error_types_of(self, function: str) -> tuple[str, ...]:
        """The extra exception names declared for ``function``'s invalid inputs."""
        return _lookup(self.error_types, function, ())  # type: ignore[return-value]

    def variants_of(self, function: str) -> dict[str, str]:
        """The axis values ``function`` computes (undeclared axes at their canonical value)."""
        declared = self.variants
        if any(isinstance(v, dict) for v in declared.values()):
            declared = {**declared.get("default", {}), **declared.get(function, {})}
        return {**{axis: values[0] for axis, values in VARIANTS.items()}, **variant_axes.expand(declared)}

    def invalid_inputs_of(self, function: str) -> bool:
        """Whether ``function``'s invalid-input cases are run."""
        return bool(_lookup(self.invalid_inputs, function, True))

    @classmethod
    def from_any(cls, value: Any) -> Capabilities:
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if isinstance(value, dict):
            fields = [f.name for f in dataclasses.fields(cls)]
            unknown = sorted(set(value) - set(fields))
            if unknown:
                hints = [
                    f"{u!r} -> {m[0]!r}" for u in unknown if (m := difflib.get_close_matches(u, fields, 1))
                ]
                hint = f" (did you mean {', '.join(hints)}?)" if hints else ""
                msg = f"CAPABILITIES must only use the keys {fields}; got {unknown}{hint}"
                raise ValueError(msg)
            return cls(**value)
        msg = f"CAPABILITIES must be a Capabilities or a dict; got {type(value).__name__}"
        raise TypeError(msg)


def _check_variants(value: Any) -> dict[str, Any]:
    """``value`` checked: axis/preset -> value, or function/``default`` -> such a dict."""
    if not isinstance(value, dict):
        msg = f"variants must be a dict of variant axis -> value; got {value!r}"
        raise TypeError(msg)
    if any(isinstance(v, dict) for v in value.values()):
        if not all(isinstance(v, dict) for v in value.values()):
            msg = (
                f"variants must map either axes to values or functions to such dicts, not both; got {value!r}"
            )
            raise TypeError(msg)
        keys = [k for k in value if k != "default" and k not in CANONICAL_FUNCTIONS]
        if keys:
            msg = f"variants keys must be canonical functions or 'default' (values: dicts); got {keys}"
            raise ValueError(msg)
        for function, axes in value.items():
            _expand_variants(axes, f"variants[{function!r}]")
        return {k: dict(v) for k, v in value.items()}
    _expand_variants(value, "variants")
    return dict(value)


def _expand_variants(value: dict[str, Any], field: str) -> dict[str, str]:
    """axis/preset -> value as axis -> value; ValueError naming ``field`` for an unknown key or value."""
    try:
        expanded = variant_axes.expand(value)
    except ValueError as exc:
        msg = str(exc).replace("variants", field, 1)
        raise ValueError(msg) from None
    unknown = sorted(set(expanded) - set(VARIANTS))
    if unknown:
        msg = f"{field}: no golden case depends on the axes {unknown} (axes with cases: {sorted(VARIANTS)})"
        raise ValueError(msg)
    return expanded


def _lookup(value: Any, function: str, fallback: Any, option: str | None = None) -> Any:
    """``value`` itself, or from a per-function dict: ``function:option``, ``function``, ``default``."""
    if not isinstance(value, dict):
        return value
    if option is not None and f"{function}:{option}" in value:
        return value[f"{function}:{option}"]
    return value.get(function, value.get("default", fallback))


def check_context(value: Any, field: str) -> int:
    """``value`` as a context length (a positive int, not a bool); TypeError/ValueError naming ``field``."""
    if isinstance(value, bool) or not isinstance(value, int):
        msg = f"{field} must be a positive integer (a number of positions) or None; got {value!r}"
        raise TypeError(msg)
    if value <= 0:
        msg = f"{field} must be a positive integer (a number of positions) or None; got {value!r}"
        raise ValueError(msg)
    return value


def _flag(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        msg = f"{field} must be True or False; got {value!r}"
        raise TypeError(msg)
    return value


def _dtype_list(value: Any, field: str) -> tuple[str, ...]:
    names = _names(value, field, DTYPES)
    if not names:
        msg = f"{field} must name at least one of {list(DTYPES)}; got []"
        raise ValueError(msg)
    return names


def _one_of(allowed: tuple[str, ...]) -> Any:
    """A check that a value is one of ``allowed`` (ValueError naming the field otherwise)."""

    def check(value: Any, field: str) -> str:
        if value not in allowed:
            msg = f"{field} must be one of {list(allowed)}; got {value!r}"
            raise ValueError(msg)
        return str(value)

    return check


def _per_function(value: Any, field: str, check: Any) -> Any:
    """``value`` checked by ``check``, or a dict ``{function or "default": value}`` of checked values."""
    if not isinstance(value, dict):
        return check(value, field)
    keys = [k for k in value if k != "default" and k.partition(":")[0] not in CANONICAL_FUNCTIONS]
    if keys:
        msg = f"{field} keys must be canonical functions (or function:option) or 'default'; got {keys}"
        raise ValueError(msg)
    return {k: check(v, f"{field}[{k!r}]") for k, v in value.items()}


def _names(value: Any, field: str, allowed: tuple[str, ...] | None) -> tuple[str, ...]:
    """``value`` (a list or tuple of strings, each in ``allowed``) as a tuple; TypeError/ValueError else."""
    if isinstance(value, (str, bytes)) or not isinstance(value, (list, tuple, set, frozenset)):
        msg = f"{field} must be a list of strings; got {value!r}"
        raise TypeError(msg)
    if not all(isinstance(v, str) for v in value):
        msg = f"{field} must be a list of strings; got {value!r}"
        raise TypeError(msg)
    if allowed is not None:
        unknown = [v for v in value if v not in allowed]
        if unknown:
            msg = f"{field} must be chosen from {list(allowed)}; got {unknown}"
            raise ValueError(msg)
    return tuple(value)


class Adapter:
    """Base class of adapters: every canonical call raises :class:`Unsupported` until overridden."""

    name: str = "adapter"
    capabilities: Capabilities = Capabilities()

    def describe(self) -> dict[str, Any]:
        """Name and versions for the report (override to add library versions)."""
        return {"name": self.name}

    def supports(self, function: str) -> bool:
        """Whether ``function`` is implemented (declared, or overridden from this base class)."""
        declared = self.capabilities.functions
        if declared is not None:
            return function in declared
        if function == "rope":
            return self._overrides("rope") or (
                self._overrides("rope_cos_sin") and self._overrides("apply_rope")
            )
        return self._overrides(function)

    def _overrides(self, function: str) -> bool:
        mine = getattr(type(self), function, None)
        return mine is not None and mine is not getattr(Adapter, function, None)

    def _missing(self, function: str) -> NoReturn:
        msg = f"{self.name} does not implement {function}"
        raise Unsupported(msg)

    def rope(self, x: Any, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str) -> Any:
        """Default: ``apply_rope(x, *rope_cos_sin(positions, ...))`` in the dtype of ``x``."""
        import numpy as np

        cos, sin = self.rope_cos_sin(
            positions,
            inv_freq,
            attention_factor=attention_factor,
            layout=layout,
            dtype=str(np.asarray(x).dtype),
        )
        return self.apply_rope(x, cos, sin, layout=layout)


def call_text(function: str) -> str:
    """``function``'s call as written in the protocol: ``name(positional, *, keyword, dtype) -> outputs``."""
    signature = CANONICAL_CALLS[function]["signature"]
    keyword = [*signature["keyword"], *(["dtype"] if signature["takesDtype"] else [])]
    params = [*signature["positional"], *(["*", *keyword] if keyword else [])]
    outputs = signature["outputs"]
    result = outputs[0] if len(outputs) == 1 else f"({', '.join(outputs)})"
    return f"{function}({', '.join(params)}) -> {result}"


def _unsupported_method(function: str) -> Any:
    """The base class's method of ``function``: raises Unsupported, with the declared signature."""

    def method(self: Adapter, *args: Any, **kwargs: Any) -> Any:
        self._missing(function)

    signature = CANONICAL_CALLS[function]["signature"]
    keyword = [*signature["keyword"], *(["dtype"] if signature["takesDtype"] else [])]
    method.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in signature["positional"]]
        + [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY) for n in keyword]
    )
    method.__name__ = method.__qualname__ = function
    method.__doc__ = f"``{call_text(function)}``: ``{CANONICAL_CALLS[function]['call']}``."
    return method


for _function in CANONICAL_FUNCTIONS:
    if _function != "rope":
        setattr(Adapter, _function, _unsupported_method(_function))
__doc__ = (__doc__ or "") + "\n".join(f"    {call_text(f)}" for f in CANONICAL_FUNCTIONS) + "\n"


class ModuleAdapter(Adapter):
    """Wraps a module (or any object) that defines canonical functions by name.

    ``warnings`` lists names the module defines that look like misspelt canonical
    functions (``rope_cos_sins``); they are reported, since their cases are skipped.
    """

    def __init__(self, module: Any, name: str | None = None) -> None:
        self._module = module
        self.name = name or getattr(module, "__name__", type(module).__name__)
        self.capabilities = Capabilities.from_any(getattr(module, "CAPABILITIES", None))
        for function in CANONICAL_FUNCTIONS:
            impl = getattr(module, function, None)
            if callable(impl):
                setattr(self, function, impl)
        self.warnings = [
            f"{self.name} defines {attr!r}, which is not a canonical function: did you mean {close[0]!r}?"
            for attr in sorted(set(dir(module)) - set(CANONICAL_FUNCTIONS))
            if not attr.startswith("_")
            and callable(getattr(module, attr, None))
            and (close := difflib.get_close_matches(attr, CANONICAL_FUNCTIONS, 1, 0.85))
        ]

    def supports(self, function: str) -> bool:
        declared = self.capabilities.functions
        if declared is not None:
            return function in declared
        has = callable(getattr(self._module, function, None))
        if function == "rope" and not has:
            return self.supports("rope_cos_sin") and self.supports("apply_rope")
        return has

    def describe(self) -> dict[str, Any]:
        extra = getattr(self._module, "describe", None)
        return {"name": self.name, **(extra() if callable(extra) else {})}
