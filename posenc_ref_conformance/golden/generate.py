"""Generate the golden vectors from the oracle: deterministic, byte-identical on every run.

``posenc-ref golden generate`` writes ``posenc_ref_conformance/golden/vectors/*.json`` and
``index.json``; ``--check`` writes nothing and fails if any file would change.
The output depends only on this package's source (no time stamps, no library
versions), so a rerun anywhere reproduces every byte.
"""

from __future__ import annotations

import hashlib
import itertools
import pathlib
from collections import Counter
from collections.abc import Callable
from typing import Any

from .. import oracle, variants
from . import SCHEMA_PATH, VECTORS_DIR, _format
from .cases import CASES, FUNCTIONS, B, Case, F, I
from .functions import FunctionSpec
from .notes import NOTES
from .schema import schema_bytes

__all__ = [
    "FORMAT_VERSION",
    "GENERATOR_VERSION",
    "SCHEMA_NAME",
    "VECTORS_DIR",
    "build",
    "check",
    "write",
]

FORMAT_VERSION = 1
GENERATOR_VERSION = "1.0.0"
SCHEMA_NAME = "golden_schema_v1.json"

_HEADER = [
    "Golden vectors of posenc-ref's conformance suite: one canonical function per file.",
    "Expected values are the oracle's exact results for the given inputs "
    "(pure Python + mpmath, written from the papers' formulas, independent of posenc_ref), "
    "rounded once to float64 (round to nearest, ties to even).",
    "Arrays: {dtype, shape (row-major), hex (C99 %a, exact) and decimal} for float64; "
    "{dtype, shape, values} for int64 and bool.",
    "A float element passes when |actual - expected| <= atol + rtol * |expected| or "
    "when actual is within maxUlp units in the last place of expected rounded to the run's dtype; "
    "tolerances are per dtype, per case where given, else per file. "
    "Integer and boolean outputs must be equal; "
    "an element also passes when it equals the case's 'acceptable' value.",
    "compare 'causal_rowshift': only entries with key position <= query position are compared, "
    "after removing a constant per query row (the difference at the row's last such entry).",
    "Float inputs named in castInputs are cast to the run's dtype (they are exact in float32, "
    "except ALiBi slopes, the exact slopes rounded to float64, whose float32 tolerances include the cast); "
    "other float inputs are parameters and stay float64. result 'invalid': the call must raise "
    "(expected.error names the exception type of the reference, expected.parameter the argument at fault).",
    "A case listing 'dtypes' runs only in those of the file's dtypes; the others skip it.",
]


class Encoder:
    """How a case's arrays are written: here always inline JSON (``export`` stores large ones as files).

    ``where`` names the array (``case id:role``, e.g. ``rope_cos_sin/...:expected.cos``);
    ``values`` is a nested list (floats already rounded to float64) or a NumPy array.
    """

    def array(self, kind: str, values: Any, where: str) -> dict[str, Any]:
        if hasattr(values, "tolist"):
            values = values.tolist()
        if kind == "float":
            return _format.float_array(values)
        return _format.int_array(values) if kind == "int" else _format.bool_array(values)


_JSON = Encoder()


def _encode_input(value: Any, encoder: Encoder = _JSON, where: str = "") -> Any:
    if isinstance(value, F):
        return encoder.array("float", value.values, where)
    if isinstance(value, I):
        return encoder.array("int", value.values, where)
    if isinstance(value, B):
        return encoder.array("bool", value.values, where)
    return value


def _plain(value: Any) -> Any:
    """Case inputs as the oracle sees them (arrays unwrapped)."""
    return value.values if isinstance(value, (F, I, B)) else value


def _encode_output(kind: str, value: Any, encoder: Encoder = _JSON, where: str = "") -> dict[str, Any]:
    if kind != "float" or hasattr(value, "dtype"):  # NumPy float arrays arrive rounded to float64
        return encoder.array(kind, value, where)

    def rnd(x: Any) -> Any:
        return [rnd(v) for v in x] if isinstance(x, (list, tuple)) else oracle.round_float64(x)

    return encoder.array("float", rnd(value), where)


#: A case's oracle: plain inputs -> raw outputs (mpf nested lists, or float64 NumPy arrays already rounded).
Compute = Callable[[dict[str, Any]], dict[str, Any]]


def _encoded_outputs(
    spec: FunctionSpec, case: Case, raw: dict[str, Any], encoder: Encoder
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(expected, acceptable): the oracle's raw outputs encoded for the golden file."""
    expected, acceptable = {}, {}
    for name in spec.outputs:
        expected[name] = _encode_output(spec.output_kind, raw[name], encoder, f"{case.id}:expected.{name}")
        if f"acceptable:{name}" in raw:
            acceptable[name] = _encode_output(
                spec.output_kind, raw[f"acceptable:{name}"], encoder, f"{case.id}:acceptable.{name}"
            )
    return expected, acceptable


def _expected(
    spec: FunctionSpec, case: Case, encoder: Encoder = _JSON, compute: Compute | None = None
) -> tuple[dict[str, Any], dict[str, Any], Any, Any]:
    """(expected, acceptable, tolerances, phase) of a valid case at the current precision.

    ``compute`` replaces the declared oracle by an equivalent evaluation (``export``'s fast
    cos/sin tables); tolerances and phase data always come from the declaration.
    """
    inputs = {k: _plain(v) for k, v in case.inputs.items()}
    if compute is None:
        topic = _topic(spec, case)
        compute = spec.compute if topic is None else spec.variants[topic](_choice(spec, case))
    raw = compute(inputs)
    expected, acceptable = _encoded_outputs(spec, case, raw, encoder)
    tolerances = spec.case_tolerances(inputs, raw, set(case.flags)) if spec.case_tolerances else None
    phase = None
    if spec.phase is not None:
        record = spec.phase(inputs, raw)
        phase = {
            **record,
            "positions": encoder.array("int", record["positions"], f"{case.id}:phase.positions"),
            "frequencies": encoder.array("float", record["frequencies"], f"{case.id}:phase.frequencies"),
        }
    return expected, acceptable, tolerances, phase


def _topic(spec: FunctionSpec, case: Case) -> str | None:
    """The case's topic, if its function declares variants of that topic (else None)."""
    if spec.topic is None:
        return None
    topic = spec.topic({k: _plain(v) for k, v in case.inputs.items()})
    if case.variant is not None and topic not in spec.variants:
        msg = f"golden case {case.id}: variant {case.variant!r} given, but topic {topic!r} has no variants"
        raise ValueError(msg)
    return topic if topic in spec.variants else None


def _choice(spec: FunctionSpec, case: Case) -> dict[str, str]:
    """The axis values the case's expected values follow: canonical, or its declared variant's.

    A case's ``variant`` is a preset of its topic (``deepseek`` for ``yarn``) or, for a topic of
    one axis, that axis's value.
    """
    topic = _topic(spec, case)
    assert topic is not None
    if case.variant is None:
        return variants.canonical(topic)
    axes = variants.axes_of(topic)
    key = topic if topic in variants.PRESETS or len(axes) != 1 else axes[0]
    try:
        return variants.choice_of(key, case.variant)
    except ValueError as exc:
        msg = f"golden case {case.id}: variant {case.variant!r} is not a preset or value of {topic!r}"
        raise ValueError(msg) from exc


def _choice_or_none(spec: FunctionSpec, case: Case) -> dict[str, str]:
    """Every axis of the case's topic (a conservative ``assumes`` where the variants are not evaluated)."""
    return _choice(spec, case) if _topic(spec, case) is not None else {}


def _assumes(spec: FunctionSpec, case: Case) -> dict[str, str]:
    """The smallest set of axes (with the case's values) on which the expected values depend.

    The case is evaluated under every combination of its topic's axes.  The result is the first
    subset ``S`` (fewest axes first) such that every combination agreeing with the case's own on
    ``S`` gives the same encoded outputs: then any implementation that agrees on ``S`` must
    produce them, whatever it computes on the other axes.
    """
    topic = _topic(spec, case)
    if topic is None:
        return {}
    choice = _choice(spec, case)
    inputs = {k: _plain(v) for k, v in case.inputs.items()}
    outcomes = []
    for combo in variants.choices(topic):
        try:
            outcome = _encoded_outputs(spec, case, spec.variants[topic](combo)(inputs), _JSON)[0]
        except Exception as exc:  # a formula that cannot take these inputs differs from one that can
            outcome = f"{type(exc).__name__}: {exc}"
        outcomes.append((combo, outcome))
    own = next(o for c, o in outcomes if c == choice)
    axes = variants.axes_of(topic)
    for size in range(len(axes) + 1):
        for subset in itertools.combinations(axes, size):
            if all(o == own for c, o in outcomes if all(c[a] == choice[a] for a in subset)):
                return {a: choice[a] for a in subset}
    return choice  # unreachable: the full set always agrees with itself


def _case_document(
    spec: FunctionSpec, case: Case, encoder: Encoder = _JSON, compute: Compute | None = None
) -> dict[str, Any]:
    doc: dict[str, Any] = {"id": case.id, "comment": case.comment, "flags": list(case.flags)}
    doc["result"] = "invalid" if case.error else "valid"
    if case.dtypes is not None:
        if not case.dtypes or not set(case.dtypes) <= set(spec.dtypes):
            msg = f"golden case {case.id}: dtypes {list(case.dtypes)} must be some of {list(spec.dtypes)}"
            raise ValueError(msg)
        doc["dtypes"] = list(case.dtypes)
    doc["inputs"] = {k: _encode_input(v, encoder, f"{case.id}:inputs.{k}") for k, v in case.inputs.items()}
    if case.error:
        doc["expected"] = {"error": case.error[0], "parameter": case.error[1]}
        return doc
    try:
        expected, acceptable, tolerances, phase = _expected(spec, case, encoder, compute)
    except Exception as exc:
        msg = f"golden case {case.id}: the oracle failed: {type(exc).__name__}: {exc}"
        raise RuntimeError(msg) from exc
    doc["expected"] = expected
    if acceptable:
        doc["acceptable"] = acceptable
    assumes = _assumes(spec, case) if compute is None else _choice_or_none(spec, case)
    if assumes:
        doc["assumes"] = assumes
    doc["compare"] = case.compare or ("exact" if spec.output_kind != "float" else "allclose")
    if tolerances is not None:
        doc["tolerances"] = tolerances
    if phase is not None:
        doc["phase"] = phase
    return doc


def _file_document(
    spec: FunctionSpec,
    cases: list[Case],
    digits: int,
    *,
    case_document: Callable[[FunctionSpec, Case], dict[str, Any]] = _case_document,
    export: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """A golden file's document; ``export``: what an exported set records of its source and options."""
    flags = sorted({f for c in cases for f in c.flags})
    unknown = [f for f in flags if f not in NOTES]
    if unknown:
        msg = f"flags without a note: {unknown}"
        raise ValueError(msg)
    doc: dict[str, Any] = {
        "schema": SCHEMA_NAME,
        "formatVersion": FORMAT_VERSION,
        "function": spec.name,
        "scheme": spec.scheme,
        "call": spec.summary,
        "signature": spec.signature,
        "inputTypes": {name: description for name, (_, description) in spec.inputs.items()},
        "outputTypes": spec.outputs,
        "castInputs": list(spec.cast_inputs),
        "dtypes": list(spec.dtypes),
        "header": _HEADER,
        "provenance": {
            "generator": "posenc_ref_conformance.golden.generate",
            "generatorVersion": GENERATOR_VERSION,
            "oracle": "posenc_ref_conformance.oracle (pure Python + mpmath; imports nothing from posenc_ref)",
            "oraclePrecisionDigits": digits,
            "checkPrecisionDigits": oracle.CHECK_DIGITS,
            "rounding": "exact result rounded once to float64, round to nearest, ties to even",
        },
    }
    if export is not None:
        doc["provenance"]["generator"] = "posenc_ref_conformance.golden.export"
        doc["provenance"]["export"] = export
    if spec.output_kind == "float":
        doc["tolerances"] = spec.tolerances or {
            "float64": {"atol": 0.0, "rtol": 0.0, "maxUlp": 0},
            "float32": {"atol": 0.0, "rtol": 0.0, "maxUlp": 0},
        }
    doc["notes"] = {f: NOTES[f] for f in flags}
    doc["numberOfCases"] = len(cases)
    with oracle.working_precision(digits):
        doc["cases"] = [case_document(spec, c) for c in cases]
    doc["checksum"] = {
        "algorithm": "sha256",
        "scope": "this file's bytes with these 64 hex digits replaced by 64 '0' characters",
        "value": _format.CHECKSUM_PLACEHOLDER,
    }
    return doc


def index_document(files: list[tuple[FunctionSpec, str, bytes, int]], **extra: Any) -> dict[str, Any]:
    """The manifest of ``files`` (spec, file name, bytes, number of cases); ``extra`` keys go last."""
    per_scheme: Counter[str] = Counter()
    entries = []
    for spec, name, data, count in files:
        per_scheme[spec.scheme] += count
        entries.append(
            {
                "file": name,
                "function": spec.name,
                "scheme": spec.scheme,
                "numberOfCases": count,
                "sha256": hashlib.sha256(data).hexdigest(),
                "call": spec.summary,
                "signature": spec.signature,
                "outputType": spec.output_kind,
            }
        )
    return {
        "schema": SCHEMA_NAME,
        "formatVersion": FORMAT_VERSION,
        "generatorVersion": GENERATOR_VERSION,
        "totalCases": sum(per_scheme.values()),
        "casesPerScheme": dict(sorted(per_scheme.items())),
        "files": entries,
        **extra,
    }


def build(digits: int = oracle.DEFAULT_DIGITS) -> dict[str, bytes]:
    """File name -> canonical bytes, for every golden file and ``index.json``."""
    by_function: dict[str, list[Case]] = {name: [] for name in FUNCTIONS}
    for case in CASES:
        by_function[case.function].append(case)
    out: dict[str, bytes] = {}
    files = []
    for name, spec in FUNCTIONS.items():
        data = _format.dumps(_file_document(spec, by_function[name], digits))
        out[f"{name}.json"] = data
        files.append((spec, f"{name}.json", data, len(by_function[name])))
    out["index.json"] = _format.dumps(index_document(files))
    return out


PIN_PATH = pathlib.Path(__file__).with_name("_pin.py")


def pin_bytes(index: bytes) -> bytes:
    """The source of ``_pin.py``: the SHA-256 of the shipped ``index.json``."""
    return (
        '"""SHA-256 of the shipped ``vectors/index.json``; written by ``posenc-ref golden generate``.\n\n'
        "``index.json`` lists the SHA-256 of every golden file, so this one digest pins the whole\n"
        "shipped set: :func:`posenc_ref_conformance.golden.verify` refuses vectors that differ.\n"
        '"""\n\n'
        f'INDEX_SHA256 = "{hashlib.sha256(index).hexdigest()}"\n'
    ).encode("ascii")


def _outputs(directory: pathlib.Path) -> dict[pathlib.Path, bytes]:
    """What generation writes: the files, and the schema (and pin) in the package or a copy beside them."""
    files = {directory / name: data for name, data in build().items()}
    if directory.resolve() == VECTORS_DIR.resolve():
        files[SCHEMA_PATH] = schema_bytes()
        files[PIN_PATH] = pin_bytes(files[directory / "index.json"])
    else:
        files[directory / SCHEMA_PATH.name] = schema_bytes()
    return files


def write(directory: pathlib.Path = VECTORS_DIR) -> list[str]:
    """Write every golden file and the schema; returns the names that changed.

    Into the package's ``vectors/`` (the default) the schema goes beside it and ``_pin.py`` is
    rewritten; into any other directory (``golden generate --out DIR``) the schema is copied in
    and nothing of the installed package changes.
    """
    directory.mkdir(parents=True, exist_ok=True)
    changed = []
    for path, data in _outputs(directory).items():
        if not path.exists() or path.read_bytes() != data:
            path.write_bytes(data)
            changed.append(path.name)
    return changed


def check(directory: pathlib.Path = VECTORS_DIR) -> list[str]:
    """Names of files that are missing, differ from a fresh generation, or should not exist."""
    fresh = _outputs(directory)
    problems = [p.name for p, data in fresh.items() if not p.exists() or p.read_bytes() != data]
    extra = sorted(p.name for p in directory.glob("*.json") if p not in fresh)
    return problems + [f"{n} (not generated)" for n in extra]
