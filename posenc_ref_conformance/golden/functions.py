"""Declaring a canonical function: the one source of truth for its call, types, oracle and tolerances.

Each family module of ``golden/cases/`` declares its canonical functions with
:func:`declare`, next to its cases: the call (positional and keyword
parameters, whether the run's dtype is passed), the kind of every input
(which fixes its JSON Schema and how adapters receive it), the outputs, the
capability an option is gated by, how the oracle computes the outputs, which
float inputs follow the run's dtype, and the tolerance policy.  From these
declarations come the golden files (which carry the call as data, so a reader
in any language knows how to call the function), ``index.json`` (the canonical
list the runner and the adapter protocol read), the JSON Schema and the docs.

Tolerances: an element passes when ``|actual - expected| <= atol + rtol *
|expected|`` *or* when ``actual`` is within ``maxUlp`` units in the last place of
``expected`` rounded to the run's dtype.  Integer and boolean outputs must be
equal (``compare: "exact"``).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence
from typing import Any

from .. import oracle
from ..oracle._numeric import mp
from ..variants import AXES, axes_of

__all__ = [
    "EPS32",
    "EPS64",
    "FUNCTIONS",
    "KINDS",
    "FunctionSpec",
    "Tolerance",
    "angle_tolerance",
    "declare",
    "flatten",
    "map_rows",
    "max_abs",
    "per_batch",
    "phase_record",
    "reshape",
    "shape_of",
    "tol",
]

EPS64 = 2.0**-53  # unit roundoff
EPS32 = 2.0**-24

Tolerance = dict[str, dict[str, float]]

#: The kinds of input a canonical function may take: how the schema types it and adapters receive it.
KINDS = {
    "positions": "an int64 array (a float array only in invalid-input cases)",
    "float": "a float array (float64 exact values; cast to the run's dtype when listed in castInputs)",
    "scalar": "a float64 number given as a 0-d float array (passed as a Python float)",
    "float|null": "a float array or null",
    "bool|null": "a boolean array or null",
    "mask": "a boolean or int64 array, non-zero = real token (a float array only in invalid-input cases)",
    "int": "an integer",
    "int|null": "an integer or null",
    "int|pair": "an integer or a [left, right] pair of integers",
    "number": "a number",
    "number|null": "a number or null",
    "bool": "true or false",
    "string": "a string",
    "options": "an object of named scalar options",
    "scaling|null": "an HF rope_parameters object or null",
    "ints": "a list of integers",
    "segments": "a list of text-run lengths (integers) and vision blocks ([t, h, w] integer triples)",
}


@dataclasses.dataclass(frozen=True)
class FunctionSpec:
    """One canonical function (see the module docstring).

    ``inputs``: parameter -> (kind from :data:`KINDS`, description), in call
    order; the first ``positional`` are passed positionally, the rest by
    keyword, then ``dtype`` when ``takes_dtype``.  ``options``: parameter ->
    the capability field whose values gate it (``"layout": "layouts"``).
    """

    name: str
    scheme: str
    summary: str
    inputs: dict[str, tuple[str, str]]
    outputs: dict[str, str]
    compute: Callable[[dict[str, Any]], dict[str, Any]]
    positional: int
    takes_dtype: bool = False
    options: dict[str, str] = dataclasses.field(default_factory=dict)
    output_kind: str = "float"  # float | int | bool
    cast_inputs: tuple[str, ...] = ()
    tolerances: Tolerance | None = None
    case_tolerances: Callable[[dict[str, Any], dict[str, Any], set[str]], Tolerance | None] | None = None
    #: The case's phase data (see :func:`phase_record`) for functions whose outputs are cos/sin of angles.
    phase: Callable[[dict[str, Any], dict[str, Any]], dict[str, Any]] | None = None
    #: The topic of a case (``"ntk"`` for an ntk scaling), where real implementations disagree by name.
    topic: Callable[[dict[str, Any]], str | None] | None = None
    #: topic -> (axis values -> the oracle computing them): the formulas real implementations give
    #: under one name, one value per variant axis of the topic (see :mod:`..variants`).
    variants: dict[str, Callable[[dict[str, str]], Callable[[dict[str, Any]], dict[str, Any]]]] = (
        dataclasses.field(default_factory=dict)
    )

    @property
    def dtypes(self) -> tuple[str, ...]:
        return ("float64", "float32") if self.output_kind == "float" else (self.output_kind,)

    @property
    def signature(self) -> dict[str, Any]:
        """The call as data, written into the golden file and index.json."""
        names = list(self.inputs)
        return {
            "positional": names[: self.positional],
            "keyword": names[self.positional :],
            "takesDtype": self.takes_dtype,
            "outputs": list(self.outputs),
            "options": dict(self.options),
            "kinds": {name: kind for name, (kind, _) in self.inputs.items()},
            "variants": {axis: list(AXES[axis].values) for topic in self.variants for axis in axes_of(topic)},
        }


#: Every declared canonical function, in declaration order: filled by the family modules when
#: ``golden.cases`` is imported (read it from there: ``from .cases import FUNCTIONS``).
FUNCTIONS: dict[str, FunctionSpec] = {}


def declare(spec: FunctionSpec) -> FunctionSpec:
    """Register ``spec`` (its name once; every input kind known; options among its inputs)."""
    unknown = {name: kind for name, (kind, _) in spec.inputs.items() if kind not in KINDS}
    if spec.name in FUNCTIONS or unknown or not set(spec.options) <= set(spec.inputs):
        msg = (
            f"bad declaration of {spec.name!r}: duplicate, unknown kinds {unknown} or options {spec.options}"
        )
        raise ValueError(msg)
    if not 0 <= spec.positional <= len(spec.inputs) or not set(spec.cast_inputs) <= set(spec.inputs):
        msg = f"bad declaration of {spec.name!r}: positional or cast_inputs out of its inputs"
        raise ValueError(msg)
    FUNCTIONS[spec.name] = spec
    return spec


# --- helpers for compute and tolerance functions ---------------------------------------------------------


def tol(
    atol64: float = 0.0,
    rtol64: float = 0.0,
    ulp64: int = 0,
    atol32: float = 0.0,
    rtol32: float = 0.0,
    ulp32: int = 0,
) -> Tolerance:
    return {
        "float64": {"atol": atol64, "rtol": rtol64, "maxUlp": ulp64},
        "float32": {"atol": atol32, "rtol": rtol32, "maxUlp": ulp32},
    }


def flatten(nested: Any) -> list[Any]:
    if isinstance(nested, (list, tuple)):
        return [v for item in nested for v in flatten(item)]
    return [nested]


def shape_of(nested: Any) -> list[int]:
    shape = []
    while isinstance(nested, (list, tuple)):
        shape.append(len(nested))
        nested = nested[0] if nested else None
    return shape


def reshape(flat: Sequence[Any], shape: Sequence[int]) -> Any:
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat)
    step = math.prod(shape[1:])
    return [reshape(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]


def map_rows(positions: Any, row: Callable[[int], list[Any]]) -> Any:
    """Apply ``row`` to every position of a nested position array; result shape + (width,)."""
    return reshape([row(p) for p in flatten(positions)], shape_of(positions))


def per_batch(q: Any, k: Any, fn: Callable[[Any, Any], Any]) -> Any:
    """``fn(q_row, k_row)`` over the leading (batch) axes of two equally shaped nested position arrays."""
    if len(shape_of(q)) == 1:
        return fn(q, k)
    return [per_batch(a, b, fn) for a, b in zip(q, k, strict=True)]


def max_abs(nested: Any) -> float:
    values = [abs(float(v)) for v in flatten(nested)]
    return max(values) if values else 0.0


def angle_tolerance(
    max_angle: float, scale: float, strict: bool, *, freq_ulps: int, scaled: bool = False
) -> Tolerance:
    """Angle-based tolerance; ``strict``: the accuracy claim, else one rounding of the angle allowed.

    ``scaled``: the values are multiplied by a factor (MLX's sqrt(2/d)), two more roundings.
    """
    if strict:
        # 4 ulp, or 4 ulp of the largest value (|cos|, |sin| <= 1) absolute: near zero,
        # absolute is the measure.
        return tol(atol64=scale * 2.0**-50, ulp64=6 if scaled else 4, atol32=scale * 2e-6, ulp32=4)
    return tol(
        atol64=scale * (4 * EPS64 + freq_ulps * EPS64 * max_angle),
        ulp64=4,
        atol32=scale * (2e-6 + 2 * EPS32 * max_angle),
        ulp32=4,
    )


def phase_record(
    positions: Any, frequencies: list[Any], frequency_error: float, scale: float
) -> dict[str, Any]:
    """What the ``product`` precision class needs to bound each element of a case (see compare.py).

    ``positions`` (the output's shape without its last axis) and ``frequencies``
    (one per output column): the element's angle is ``|position| * |frequency|``.
    ``frequencyError``: how many unit roundoffs of relative error a product
    implementation's frequencies may carry (1 when they are given and only cast;
    ``3 L + 6`` when it derives them, see ``oracle.sinusoidal.column_frequencies``).
    ``scale``: the largest magnitude an output element is multiplied by.
    """
    return {
        "positions": positions,
        "frequencies": [oracle.round_float64(mp.mpf(f)) for f in frequencies],
        "frequencyError": float(frequency_error),
        "scale": float(scale),
    }
