"""Structural validation of golden files: every field the runner reads, checked before a run.

:func:`~posenc_ref_conformance.golden.verify` proves a directory's files are the ones its
``index.json`` lists, unedited since their checksums were computed.  Checksums only check each
other, though: someone who edits a file and *reseals* it (recomputes its checksum and the index's
SHA-256) passes that test.  This module is the second test: every file, case and field is what the
runner needs, of the right type, shape and range, so a damaged or resealed set is a
:class:`GoldenError` naming the file, the case and the field, never a traceback during the run and
never a tolerance that accepts anything.  What it cannot see is a *consistent* forgery (another
question with another answer): only recomputing the values can, ``posenc-ref golden lint DIR``.

Stdlib + NumPy only (it runs from a plain wheel install, without jsonschema or mpmath).  Its
vocabulary (result words, compare modes, patterns, the keys of every object) is read from the
shipped JSON Schema file; what each canonical function is (its call, outputs, dtypes, cast inputs,
compare modes, which cases carry tolerances or phase data) from the shipped golden set itself,
which ``_pin.py`` pins (:func:`declarations`); only the tolerance bounds are stated here
(:data:`MAX_TOLERANCES`, :func:`angle_bound`).
"""

from __future__ import annotations

import dataclasses
import functools
import json
import math
import pathlib
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np

from ..adapters.base import CHOICES
from . import _format

__all__ = [
    "ERROR_TYPES",
    "MAX_FREQUENCY_ERROR",
    "MAX_PARAMETER",
    "MAX_PHASE_SCALE",
    "MAX_TOLERANCES",
    "TOLERANCE_MARGIN",
    "Declaration",
    "GoldenError",
    "angle_bound",
    "check_entries",
    "check_file",
    "check_index",
    "declarations",
]

_SCHEMA_FILE = pathlib.Path(__file__).with_name("golden_schema_v1.json")


class GoldenError(ValueError):
    """The golden vectors are damaged, incomplete or edited: the suite refuses to run on them."""


#: Exception types an invalid-input case may expect: what the canonical functions raise for bad input
#: (DESIGN: "bad input gets a clear error: ValueError/TypeError").  The schema also lists IndexError,
#: which no case uses; anything broader (Exception, BaseException, object) would pass on any error.
ERROR_TYPES = ("ValueError", "TypeError")
#: Each tolerance bound is 16 times the largest the generator writes, so a regenerated or exported set
#: with other parameters fits, while a tolerance loose enough to accept a wrong answer does not.
TOLERANCE_MARGIN = 16
#: Largest ``frequencyError`` of a phase record: 16 x the largest written (53 unit roundoffs:
#: sinusoidal frequencies derived in 3L + 6 roundings), rounded up to a power of two.
MAX_FREQUENCY_ERROR = 1024.0
#: Largest phase ``scale`` as a multiple of the case's magnitude ``max(1, max |expected|)``: 16 x the
#: largest written (2.09: RoPE's 2 max|x| max(factor, 1)), rounded up to a power of two.
MAX_PHASE_SCALE = 64.0
#: Largest numeric parameter of a valid case (sizes, counts, distances, bases, biases, scales, factors;
#: none is negative, none beyond the positions the exporter takes, ``2**53``).
MAX_PARAMETER = 2**53

_U = {"float64": 2.0**-53, "float32": 2.0**-24}
_P = 2.0  # the bounds below are powers of two: 16 x the largest the generator writes, rounded up

#: Largest tolerance a golden file may state, per canonical function and run dtype: ``(atol, rtol,
#: maxUlp)``.  ``atol`` is a fraction of the case's magnitude ``max(1, max |expected|)`` (for functions
#: with phase data, where the error grows with the angle, :func:`angle_bound` gives it instead: ``None``
#: here).  Each entry is the smallest power of two at least 16 x the largest the generator writes for
#: that function and dtype (in the shipped set; the exporter writes the same formulas); 0 where it
#: writes 0 (exact lookups: a table's own values).  ``tests/test_golden_untrusted.py`` recomputes it.
MAX_TOLERANCES: dict[str, dict[str, tuple[float | None, float, int]]] = {
    "sinusoidal": {"float64": (None, 0.0, 128), "float32": (None, 0.0, 64)},
    "learned": {"float64": (0.0, 0.0, 0), "float32": (0.0, 0.0, 0)},
    "interpolate_table": {"float64": (_P**-48, _P**-47, 64), "float32": (_P**-19, _P**-18, 64)},
    "rope_frequencies": {"float64": (0.0, _P**-43, 1024), "float32": (0.0, _P**-15, 512)},
    "rope_cos_sin": {"float64": (None, 0.0, 64), "float32": (None, 0.0, 64)},
    "apply_rope": {"float64": (_P**-45, 0.0, 64), "float32": (_P**-16, 0.0, 64)},
    "rope": {"float64": (None, 0.0, 64), "float32": (None, 0.0, 64)},
    "rope_heads": {"float64": (None, 0.0, 64), "float32": (None, 0.0, 64)},
    "rope_from_base": {"float64": (None, 0.0, 64), "float32": (None, 0.0, 64)},
    "xpos_scale": {"float64": (0.0, _P**-41, 64), "float32": (0.0, _P**-12, 64)},
    "mrope_angles": {"float64": (0.0, _P**-47, 64), "float32": (0.0, _P**-18, 64)},
    "rope_2d_cos_sin": {"float64": (_P**-42, _P**-47, 64), "float32": (_P**-13, _P**-18, 64)},
    "t5_bias": {"float64": (0.0, 0.0, 0), "float32": (0.0, 0.0, 0)},
    "alibi_slopes": {"float64": (0.0, _P**-42, 64), "float32": (0.0, _P**-13, 64)},
    "alibi_bias": {"float64": (_P**-34, _P**-48, 32), "float32": (_P**-5, _P**-18, 64)},
    "alibi_bias_from_heads": {"float64": (_P**-32, _P**-44, 64), "float32": (_P**-3, _P**-15, 64)},
    "alibi_bias_from_mask": {"float64": (0.0, _P**-44, 64), "float32": (0.0, _P**-15, 64)},
    "shaw_logits": {"float64": (_P**-43, 0.0, 64), "float32": (_P**-14, 0.0, 64)},
    "shaw_values": {"float64": (_P**-41, 0.0, 64), "float32": (_P**-12, 0.0, 64)},
    "llama4_attn_scale": {"float64": (0.0, _P**-46, 128), "float32": (0.0, _P**-17, 128)},
    "attention": {"float64": (_P**-34, 0.0, 128), "float32": (_P**-5, 0.0, 128)},
    "sandwich_bias": {"float64": (_P**-41, _P**-47, 64), "float32": (_P**-12, _P**-18, 64)},
    "kerple_bias": {"float64": (_P**-48, _P**-44, 64), "float32": (_P**-19, _P**-15, 64)},
    "window_bias": {"float64": (0.0, 0.0, 0), "float32": (0.0, 0.0, 0)},
    "swinv2_log_coords": {"float64": (_P**-47, 0.0, 64), "float32": (_P**-18, 0.0, 64)},
    "decomposed_rel_pos": {"float64": (_P**-43, 0.0, 64), "float32": (_P**-14, 0.0, 64)},
    "rel_sinusoid_table": {"float64": (None, 0.0, 64), "float32": (None, 0.0, 64)},
    "rel_shift": {"float64": (0.0, 0.0, 0), "float32": (0.0, 0.0, 0)},
    "rel_attention_scores": {"float64": (_P**-41, 0.0, 64), "float32": (_P**-12, 0.0, 64)},
    "grid_resize": {"float64": (_P**-36, _P**-48, 64), "float32": (_P**-7, _P**-19, 64)},
    "patch_grid_resize": {"float64": (_P**-38, _P**-48, 64), "float32": (_P**-9, _P**-19, 64)},
    "detr_sine_2d": {"float64": (_P**-42, 0.0, 64), "float32": (_P**-13, 0.0, 64)},
    "detr_coord_sine": {"float64": (_P**-40, 0.0, 64), "float32": (_P**-11, 0.0, 64)},
    "sincos_2d": {"float64": (_P**-39, 0.0, 64), "float32": (_P**-10, 0.0, 64)},
    "fourier_features": {"float64": (_P**-40, 0.0, 64), "float32": (_P**-11, 0.0, 64)},
    "fourier_grid": {"float64": (_P**-40, 0.0, 64), "float32": (_P**-11, 0.0, 64)},
    "bbox_embedding": {"float64": (_P**-45, 0.0, 0), "float32": (_P**-16, 0.0, 0)},
    "row_col_embedding": {"float64": (_P**-47, 0.0, 0), "float32": (_P**-18, 0.0, 0)},
    "t5_layout_bias": {"float64": (_P**-46, 0.0, 32), "float32": (_P**-17, 0.0, 32)},
    "t5_udop_bias": {"float64": (_P**-46, 0.0, 32), "float32": (_P**-17, 0.0, 32)},
    "t5_gated_bias": {"float64": (_P**-37, 0.0, 64), "float32": (_P**-8, 0.0, 64)},
    "t5_segment_bias": {"float64": (0.0, 0.0, 0), "float32": (0.0, 0.0, 0)},
}

#: Angle-based tolerances (functions with phase data) as the generator writes them, per run dtype:
#: ``scale * (c0 + c1 * angle)``: float64 4 ulp of the angle (strict: 2**-50) plus the rotation's
#: 4 roundings, up to 32 unit roundoffs of the angle per frequency ulp (sinusoidal: 32, RoPE: 4);
#: float32 2e-6 (the accuracy claim) plus the rotation, two roundings of the angle.
_ANGLE = {
    "float64": (12 * _U["float64"], 32 * _U["float64"]),
    "float32": (2e-6 + 4 * _U["float32"], 2 * _U["float32"]),
}
#: Above this angle (in units of the largest frequency, at least 1) the generator judges at the accuracy
#: claim (``LargePosition``: positions from 2**20), which does not grow with the angle.
_STRICT_FROM = 2.0**20
#: Whatever the angle, an atol is at most this fraction of the scale: twice the generator's loosest
#: (float32 just below 2**20, one rounding of the angle: 1/8), far below a wrong table's errors (~1).
_ANGLE_CAP = 0.25


def angle_bound(dtype: str, scale: float, max_angle: float, top_frequency: float) -> float:
    """Largest ``atol`` of a case with phase data: 16 x the generator's angle tolerance at its angle.

    ``scale``: the phase record's (the largest factor on an element); ``max_angle``: the largest
    ``|position| * max(|frequency|, 1)`` of the record, counted up to ``2**20 * max(top_frequency, 1)``
    (beyond it the generator judges at the accuracy claim, which does not grow); never above a
    quarter of ``scale``.
    """
    c0, c1 = _ANGLE[dtype]
    angle = min(max_angle, _STRICT_FROM * max(top_frequency, 1.0))
    return scale * min(TOLERANCE_MARGIN * (c0 + c1 * angle), _ANGLE_CAP)


# --- the schema's vocabulary -----------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Vocabulary:
    schema: dict[str, Any]

    @functools.cached_property
    def defs(self) -> dict[str, Any]:
        return self.schema["$defs"]

    def props(self, name: str) -> dict[str, Any]:
        return self.defs[name]["properties"]

    def required(self, name: str) -> tuple[str, ...]:
        return tuple(self.defs[name].get("required", ()))

    @functools.cached_property
    def results(self) -> tuple[str, ...]:
        return tuple(self.props("Case")["result"]["enum"])

    @functools.cached_property
    def compare(self) -> tuple[str, ...]:
        return tuple(self.props("Case")["compare"]["enum"])

    @functools.cached_property
    def case_dtypes(self) -> tuple[str, ...]:
        return tuple(self.props("Case")["dtypes"]["items"]["enum"])

    def pattern(self, node: dict[str, Any]) -> re.Pattern[str]:
        """A schema pattern (searched, as JSON Schema does); a final ``$`` is the end, not a last newline."""
        text = node["pattern"]
        return re.compile(text[:-1] + r"\Z" if text.endswith("$") else text)

    @functools.cached_property
    def hex_list(self) -> re.Pattern[str]:
        element = self.props("FloatArray")["hex"]["items"]["pattern"].strip("^$")
        return re.compile(f"(?:{element},)*")  # the elements joined with commas, one match for all

    @functools.cached_property
    def scaling(self) -> dict[str, Any]:
        return self.props("RopeScaling")


@functools.cache
def _vocabulary() -> _Vocabulary:
    return _Vocabulary(json.loads(_SCHEMA_FILE.read_text(encoding="ascii")))


# --- the canonical declarations ------------------------------------------------------------------------

#: File header fields that state what the function is: they must be the shipped file's, word for word.
_CANONICAL_HEADER = ("scheme", "call", "signature", "inputTypes", "outputTypes", "castInputs", "dtypes")
#: Index entry fields that do the same.
_CANONICAL_ENTRY = ("scheme", "call", "signature", "outputType")


@dataclasses.dataclass(frozen=True)
class Declaration:
    """What a canonical function is, as the shipped (pinned) golden set states it.

    ``header``/``entry``: the file header (with its default tolerances) and index entry fields every
    golden file of the function must repeat; ``compare``: the compare modes its valid cases use;
    ``case_tolerances``: the compare modes under which every valid case carries its own tolerances (the
    file's would be wrong); ``phase``: every valid case carries phase data; ``strings``: for each
    string input no capability gates, the values its valid cases use.
    """

    function: str
    header: Mapping[str, Any]
    entry: Mapping[str, Any]
    compare: frozenset[str]
    case_tolerances: frozenset[str]
    phase: bool
    strings: Mapping[str, frozenset[str]]

    @property
    def kind(self) -> str:
        return str(self.entry["outputType"])


def declarations(index: Mapping[str, Any], docs: Iterable[Mapping[str, Any]]) -> dict[str, Declaration]:
    """Each function's :class:`Declaration`, from a golden set whose integrity is proven (the shipped one)."""
    entries = {entry["function"]: entry for entry in index["files"]}
    out = {}
    for doc in docs:
        name = doc["function"]
        valid = [c for c in doc["cases"] if c["result"] == "valid"]
        modes = {c["compare"] for c in valid}
        kinds = doc["signature"]["kinds"]
        gated = set(doc["signature"]["options"])
        strings = {
            param: frozenset(c["inputs"][param] for c in valid)
            for param, kind in kinds.items()
            if kind == "string" and param not in gated
        }
        out[name] = Declaration(
            name,
            json.loads(
                json.dumps({key: doc[key] for key in (*_CANONICAL_HEADER, "tolerances") if key in doc})
            ),
            json.loads(json.dumps({key: entries[name][key] for key in _CANONICAL_ENTRY})),
            frozenset(modes),
            frozenset(m for m in modes if all("tolerances" in c for c in valid if c["compare"] == m)),
            bool(valid) and all("phase" in c for c in valid),
            strings,
        )
    return out


# --- small checks ----------------------------------------------------------------------------------------


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is not an integer here


def _is_number(value: Any) -> bool:
    return (type(value) is int or type(value) is float) and math.isfinite(value)


def _only(items: list[Any], *types: type) -> bool:
    """Whether every item's type is exactly one of ``types`` (``bool`` is not ``int`` here)."""
    return set(map(type, items)) <= set(types)


def _matches(value: Any, types: str | list[str]) -> bool:
    """Whether ``value`` has one of the JSON Schema ``types``."""
    checks: dict[str, Callable[[Any], bool]] = {
        "integer": _is_int,
        "number": _is_number,
        "string": lambda v: isinstance(v, str),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
        "array": lambda v: isinstance(v, list),
        "object": lambda v: isinstance(v, dict),
    }
    return any(checks[t](value) for t in ([types] if isinstance(types, str) else types))


class _Problem(Exception):
    """One problem at a field (raised inside a check, turned into a GoldenError naming the place)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def _fail(field: str, message: str) -> None:
    raise _Problem(field, message)


def _keys(obj: Any, field: str, allowed: Iterable[str], required: Iterable[str] = ()) -> dict[str, Any]:
    if not isinstance(obj, dict):
        _fail(field, f"must be an object; got {_type_name(obj)}")
    allowed = tuple(allowed)
    missing = [k for k in required if k not in obj]
    extra = [k for k in obj if k not in allowed]
    if missing:
        _fail(field, f"lacks {missing}")
    if extra:
        _fail(field, f"has unknown keys {extra} (allowed: {list(allowed)})")
    return obj


def _string(value: Any, field: str, pattern: re.Pattern[str] | None = None) -> str:
    if not isinstance(value, str):
        _fail(field, f"must be a string; got {_type_name(value)}")
    if pattern is not None and not pattern.search(value):  # JSON Schema patterns search (they anchor)
        _fail(field, f"{value[:80]!r} does not match {pattern.pattern.replace(chr(92) + 'Z', '$')}")
    return value


def _strings(value: Any, field: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        _fail(field, "must be a list of strings")
    return value


def _count(value: Any, field: str, minimum: int = 0) -> int:
    if not _is_int(value) or value < minimum:
        _fail(field, f"must be an integer >= {minimum}; got {value!r:.80}")
    return value


def _same(value: Any, canonical: Any, field: str, what: str) -> None:
    """``value`` is ``canonical`` as JSON (``True`` is not ``1``; object key order aside)."""
    if json.dumps(value, sort_keys=True) != json.dumps(canonical, sort_keys=True):
        _fail(field, f"differs from {what} ({json.dumps(value)[:120]} vs {json.dumps(canonical)[:120]})")


# --- index.json -------------------------------------------------------------------------------------------


#: What the runner needs of index.json; the other keys the schema requires (schema, generatorVersion,
#: casesPerScheme) are checked when present (a minimal ``{"formatVersion": 1, "files": [], "totalCases": 0}``
#: is a valid set of zero cases; ``golden lint`` holds an index to the whole schema).
_INDEX_NEEDS = ("formatVersion", "files", "totalCases")


def check_index(index: Any, where: str) -> None:
    """The manifest's structure (before any listed file is read): keys, types, plain file names."""
    vocab = _vocabulary()
    try:
        _keys(index, "index", vocab.props("Index"), _INDEX_NEEDS)
        if "schema" in index:
            _same(index["schema"], vocab.props("Index")["schema"]["const"], "schema", "the schema's name")
        if "generatorVersion" in index:
            _string(index["generatorVersion"], "generatorVersion")
        _count(index["totalCases"], "totalCases")
        if "casesPerScheme" in index:
            per_scheme = index["casesPerScheme"]
            _keys(per_scheme, "casesPerScheme", per_scheme if isinstance(per_scheme, dict) else ())
            for scheme, count in per_scheme.items():
                _count(count, f"casesPerScheme.{scheme}")
        if "export" in index:
            _keys(index["export"], "export", vocab.props("Export"), vocab.required("Export"))
        files = index["files"]
        if not isinstance(files, list):
            _fail("files", f"must be a list; got {_type_name(files)}")
        entry_props = vocab.props("Index")["files"]["items"]
        name_pattern = vocab.pattern(entry_props["properties"]["file"])
        sha = vocab.pattern(entry_props["properties"]["sha256"])
        seen = set()
        for n, entry in enumerate(files):
            field = f"files[{n}]"
            _keys(entry, field, entry_props["properties"], entry_props["required"])
            name = entry["file"]
            if not isinstance(name, str) or not name_pattern.search(name):
                _fail(f"{field}.file", f"{name!r:.80} must be a plain NAME.json beside index.json")
            if name in seen:
                _fail(f"{field}.file", f"{name} is listed twice")
            seen.add(name)
            _string(entry["function"], f"{field}.function")
            _count(entry["numberOfCases"], f"{field}.numberOfCases")
            _string(entry["sha256"], f"{field}.sha256", sha)
    except _Problem as p:
        msg = f"{where}: {p.field}: {p.message}"
        raise GoldenError(msg) from None


def check_entries(index: Mapping[str, Any], where: str, known: Mapping[str, Declaration]) -> None:
    """Every index entry names a canonical function, in its own file, as the shipped index declares it."""
    try:
        for n, entry in enumerate(index["files"]):
            field = f"files[{n}]"
            declaration = known.get(entry["function"])
            if declaration is None:
                _fail(f"{field}.function", f"{entry['function']!r:.80} is not a canonical function")
            if entry["file"] != f"{entry['function']}.json":
                _fail(
                    f"{field}.file",
                    f"{entry['file']} must be named after its function, {entry['function']}.json",
                )
            for key in _CANONICAL_ENTRY:
                _same(entry[key], declaration.entry[key], f"{field}.{key}", "the shipped index's declaration")
    except _Problem as p:
        msg = f"{where}: {p.field}: {p.message}"
        raise GoldenError(msg) from None


# --- a golden file ----------------------------------------------------------------------------------------

#: Reads a binary array reference's file (checked) and returns its contents; raises GoldenError.
BinaryReader = Callable[[dict[str, Any], str], np.ndarray]


def check_file(doc: Any, where: str, known: Mapping[str, Declaration], read_binary: BinaryReader) -> None:
    """Every field of one golden file (header, notes, every case) against what the runner needs.

    Binary array references are read (``read_binary``) as they are met, so their values are checked
    too.  The first problem is a :class:`GoldenError`: ``"<file>: <case id>: <field>: <problem>"``.
    """
    checker = _FileChecker(where, known, read_binary)
    try:
        checker.header(doc)
    except _Problem as p:
        msg = f"{where}: {p.field}: {p.message}"
        raise GoldenError(msg) from None
    for n, case in enumerate(doc["cases"]):
        label = (
            case.get("id") if isinstance(case, dict) and isinstance(case.get("id"), str) else f"cases[{n}]"
        )
        try:
            checker.case(case)
        except _Problem as p:
            msg = f"{where}: {label[:200]}: {p.field}: {p.message}"
            raise GoldenError(msg) from None


@dataclasses.dataclass
class _Array:
    """A checked encoded array: its dtype, shape and values (NumPy, read-only for binary ones)."""

    dtype: str
    shape: tuple[int, ...]
    values: np.ndarray

    @property
    def magnitude(self) -> float:
        return float(np.max(np.abs(self.values))) if self.values.size else 0.0


class _FileChecker:
    def __init__(self, where: str, known: Mapping[str, Declaration], read_binary: BinaryReader) -> None:
        self.where, self.known, self.read_binary = where, known, read_binary
        self.vocab = _vocabulary()
        self.ids: set[str] = set()

    # -- header --

    def header(self, doc: Any) -> None:
        vocab = self.vocab
        _keys(doc, "file", vocab.props("GoldenFile"), vocab.required("GoldenFile"))
        _same(doc["schema"], vocab.props("GoldenFile")["schema"]["const"], "schema", "the schema's name")
        _same(doc["formatVersion"], vocab.props("GoldenFile")["formatVersion"]["const"], "formatVersion", "1")
        function = doc["function"]
        if not isinstance(function, str) or function not in self.known:
            _fail("function", f"{function!r:.80} is not a canonical function")
        self.declaration = declaration = self.known[function]
        self.function = function
        for key in _CANONICAL_HEADER:
            _same(doc[key], declaration.header[key], key, f"the shipped declaration of {function}")
        self.signature = declaration.header["signature"]
        self.outputs = declaration.header["outputTypes"]
        self.dtypes = declaration.header["dtypes"]
        _strings(doc["header"], "header")
        self.provenance(doc["provenance"])
        self.notes = _keys(doc["notes"], "notes", doc["notes"] if isinstance(doc["notes"], dict) else ())
        flag = vocab.pattern(vocab.props("Case")["flags"]["items"])
        for name, note in self.notes.items():
            _string(name, f"notes.{name}", flag)
            self.note(note, f"notes.{name}")
        if declaration.kind == "float":
            if "tolerances" not in doc:
                _fail(
                    "tolerances",
                    f"missing: a file of float outputs ({function}) states its default tolerances",
                )
            self.file_tolerances = self.tolerances(doc["tolerances"], "tolerances")
            # the function's own default (its declaration's, or zeros), the same in every file of it
            _same(
                doc["tolerances"],
                declaration.header.get("tolerances"),
                "tolerances",
                f"{function}'s declared default",
            )
        elif "tolerances" in doc:
            _fail(
                "tolerances", f"{function}'s {declaration.kind} outputs are compared exactly: no tolerances"
            )
        else:
            self.file_tolerances = None
        if not isinstance(doc["cases"], list):
            _fail("cases", f"must be a list; got {_type_name(doc['cases'])}")
        if _count(doc["numberOfCases"], "numberOfCases") != len(doc["cases"]):
            _fail("numberOfCases", f"{doc['numberOfCases']} but the file holds {len(doc['cases'])} cases")
        spec = vocab.props("GoldenFile")["checksum"]
        checksum = _keys(doc["checksum"], "checksum", spec["properties"], spec["required"])
        _same(checksum["algorithm"], "sha256", "checksum.algorithm", "sha256")
        _string(checksum["scope"], "checksum.scope")

    def provenance(self, provenance: Any) -> None:
        props = self.vocab.props("GoldenFile")["provenance"]
        _keys(provenance, "provenance", props["properties"], props["required"])
        for key, spec in props["properties"].items():
            if key == "export" and key in provenance:
                export = self.vocab.defs["Export"]
                _keys(provenance[key], "provenance.export", export["properties"], export["required"])
            elif key in provenance and not _matches(provenance[key], spec["type"]):
                _fail(f"provenance.{key}", f"must be {spec['type']}; got {_type_name(provenance[key])}")
            elif key in provenance and "minimum" in spec and provenance[key] < spec["minimum"]:
                _fail(f"provenance.{key}", f"must be at least {spec['minimum']}; got {provenance[key]!r}")

    def note(self, note: Any, field: str) -> None:
        props = self.vocab.props("Note")
        _keys(note, field, props, self.vocab.required("Note"))
        if note["bugType"] not in props["bugType"]["enum"]:
            _fail(f"{field}.bugType", f"{note['bugType']!r:.80} is not one of {props['bugType']['enum']}")
        _string(note["description"], f"{field}.description")
        link = self.vocab.pattern(props["links"]["items"])
        if not isinstance(note["links"], list):
            _fail(f"{field}.links", "must be a list of https:// links")
        for n, value in enumerate(note["links"]):
            _string(value, f"{field}.links[{n}]", link)

    # -- tolerances --

    def tolerances(self, value: Any, field: str) -> dict[str, dict[str, Any]]:
        vocab = self.vocab
        _keys(value, field, vocab.props("Tolerances"), vocab.required("Tolerances"))
        for dtype, tolerance in value.items():
            _keys(tolerance, f"{field}.{dtype}", vocab.props("Tolerance"), vocab.required("Tolerance"))
            bounds = MAX_TOLERANCES.get(self.function, {}).get(dtype)
            if bounds is None:
                _fail(
                    f"{field}.{dtype}", f"no tolerance bound is declared for {self.function} (MAX_TOLERANCES)"
                )
            atol_max, rtol_max, ulp_max = bounds
            for key in ("atol", "rtol"):
                number = tolerance[key]
                if not _is_number(number) or number < 0:
                    _fail(f"{field}.{dtype}.{key}", f"must be a finite number >= 0; got {number!r:.80}")
            if tolerance["rtol"] > rtol_max:
                _fail(
                    f"{field}.{dtype}.rtol",
                    f"{tolerance['rtol']!r} is above {self.function}'s maximum {rtol_max!r} at {dtype} "
                    f"({TOLERANCE_MARGIN} x the largest the generator writes)",
                )
            ulp = tolerance["maxUlp"]
            if not _is_int(ulp) or ulp < 0:
                _fail(f"{field}.{dtype}.maxUlp", f"must be an integer >= 0; got {ulp!r:.80}")
            if ulp > ulp_max:
                _fail(
                    f"{field}.{dtype}.maxUlp",
                    f"{ulp} is above {self.function}'s maximum {ulp_max} at {dtype} "
                    f"({TOLERANCE_MARGIN} x the largest the generator writes)",
                )
            if atol_max is not None and atol_max == 0 and tolerance["atol"] > 0:
                _fail(
                    f"{field}.{dtype}.atol",
                    f"{tolerance['atol']!r} is above {self.function}'s maximum 0 at {dtype} (exact values)",
                )
        return value

    def case_atol(self, tolerances: dict[str, Any], field: str, magnitude: float, phase: Any) -> None:
        """The atol of the tolerance a valid case is judged with, against its function's bound."""
        for dtype, tolerance in tolerances.items():
            atol = tolerance["atol"]
            relative = MAX_TOLERANCES[self.function][dtype][0]
            if relative is None and phase is None:
                _fail(f"{field}.{dtype}.atol", f"{self.function}'s bound needs the case's phase data")
            if relative is None:
                limit = angle_bound(dtype, phase["scale"], phase["angle"], phase["top"])
                why = "16 x the generator's angle tolerance at the case's phase scale and angle"
            else:
                limit = relative * max(1.0, magnitude)
                why = f"{relative!r} x the case's magnitude max(1, {magnitude:.6g})"
            if atol > limit:
                _fail(
                    f"{field}.{dtype}.atol",
                    f"{atol!r} is above {self.function}'s maximum {limit:.6g} at {dtype} ({why})",
                )

    # -- arrays --

    def array(self, value: Any, field: str, dtypes: Iterable[str], binary: Iterable[str] = ()) -> _Array:
        """An encoded array of one of ``dtypes`` (inline), or of ``binary`` (a .npy reference)."""
        vocab = self.vocab
        dtypes, binary = tuple(dtypes), tuple(binary)
        if not isinstance(value, dict):
            _fail(field, f"must be an encoded array ({' or '.join(dtypes)}); got {_type_name(value)}")
        dtype, shape = value.get("dtype"), value.get("shape")
        if not _format._is_shape(shape):
            _fail(f"{field}.shape", f"must be a list of at most 32 sizes >= 0; got {json.dumps(shape)[:80]}")
        size = math.prod(shape)
        if "file" in value:
            if dtype not in binary:
                _fail(
                    field, f"a binary array must be {' or '.join(binary) or 'inline here'}; got {dtype!r:.40}"
                )
            kind = "BinaryFloatArray" if dtype == "float64" else "BinaryIntArray"
            _keys(value, field, vocab.props(kind), vocab.required(kind))
            props = vocab.props(kind)
            _string(value["file"], f"{field}.file", vocab.pattern(props["file"]))
            _string(value["sha256"], f"{field}.sha256", vocab.pattern(props["sha256"]))
            _same(value["format"], props["format"]["const"], f"{field}.format", "npy")
            _same(value["byteOrder"], props["byteOrder"]["const"], f"{field}.byteOrder", "little")
            try:
                values = self.read_binary(value, f"{self.where}: {field}")
            except GoldenError as exc:
                _fail(field, str(exc))
            return _Array(dtype, tuple(shape), values)
        if dtype not in dtypes:
            _fail(f"{field}.dtype", f"must be {' or '.join(dtypes)} here; got {dtype!r:.40}")
        if dtype == "float64":
            _keys(value, field, vocab.props("FloatArray"), vocab.required("FloatArray"))
            hexes, decimals = value["hex"], value["decimal"]
            if not isinstance(hexes, list) or len(hexes) != size:
                _fail(f"{field}.hex", f"must be a list of {size} hex floats for shape {shape}")
            if not _only(hexes, str) or not vocab.hex_list.fullmatch(
                ",".join(hexes) + ("," if hexes else "")
            ):
                bad = next(
                    (h for h in hexes if not isinstance(h, str) or not vocab.hex_list.fullmatch(h + ",")), ""
                )
                _fail(f"{field}.hex", f"{bad!r:.60} is not a hex float (C99 %a, float.hex)")
            try:
                values = np.fromiter(map(float.fromhex, hexes), dtype=np.float64, count=size)
            except OverflowError:
                _fail(f"{field}.hex", "holds a hex float beyond float64")
            if not np.all(np.isfinite(values)):
                _fail(f"{field}.hex", "holds non-finite values (golden values are finite)")
            if not isinstance(decimals, list) or len(decimals) != size or not _only(decimals, float, int):
                _fail(f"{field}.decimal", f"must be a list of {size} numbers for shape {shape}")
            try:
                numbers = np.array(decimals, dtype=np.float64)
            except OverflowError:
                _fail(f"{field}.decimal", "holds a number beyond float64")
            if not np.array_equal(numbers, values):  # (a non-finite decimal differs from its finite hex)
                at = int(np.argmax(numbers != values))
                _fail(f"{field}.decimal", f"element {at} ({decimals[at]!r}) is not its hex value {hexes[at]}")
        elif dtype == "int64":
            _keys(value, field, vocab.props("IntArray"), vocab.required("IntArray"))
            items = value["values"]
            if not isinstance(items, list) or len(items) != size or not _only(items, int):
                _fail(f"{field}.values", f"must be a list of {size} integers for shape {shape}")
            try:
                values = np.array(items, dtype=np.int64)
            except OverflowError:
                _fail(f"{field}.values", "holds an integer beyond int64")
        else:
            _keys(value, field, vocab.props("BoolArray"), vocab.required("BoolArray"))
            items = value["values"]
            if not isinstance(items, list) or len(items) != size or not _only(items, bool):
                _fail(f"{field}.values", f"must be a list of {size} booleans for shape {shape}")
            values = np.array(items, dtype=np.bool_)
        return _Array(dtype, tuple(shape), values.reshape(shape))

    # -- one case --

    def case(self, case: Any) -> None:
        vocab = self.vocab
        _keys(case, "case", vocab.props("Case"), vocab.required("Case"))
        case_id = _string(case["id"], "id", vocab.pattern(vocab.props("Case")["id"]))
        if not case_id.startswith(f"{self.function}/"):
            _fail("id", f"must start with {self.function}/")
        if case_id in self.ids:
            _fail("id", f"case id {case_id!r} is duplicated in this file")
        self.ids.add(case_id)
        _string(case["comment"], "comment")
        flags = _strings(case["flags"], "flags")
        if len(set(flags)) != len(flags):
            _fail("flags", "has repeated flags")
        unexplained = [f for f in flags if f not in self.notes]
        if unexplained:
            _fail("flags", f"{unexplained} have no note in the file's notes")
        result = case["result"]
        if result not in vocab.results:
            _fail("result", f"{result!r:.40} is not one of {list(vocab.results)}")
        valid = result == "valid"  # the schema's words: valid (outputs expected) or invalid (it raises)
        if "dtypes" in case:
            self.case_dtypes(case["dtypes"])
        self.assumes(case)
        inputs = self.inputs(case["inputs"], valid)
        if not valid:
            self.error(case)
            return
        self.valid(case, inputs)

    def case_dtypes(self, dtypes: Any) -> None:
        allowed = [d for d in self.dtypes if d in self.vocab.case_dtypes]
        if (
            not isinstance(dtypes, list)
            or not dtypes
            or len(set(map(str, dtypes))) != len(dtypes)
            or not all(d in allowed for d in dtypes)
        ):
            _fail(
                "dtypes",
                f"must be a non-empty list of distinct dtypes among {allowed}; got {json.dumps(dtypes)[:80]}",
            )

    def assumes(self, case: dict[str, Any]) -> None:
        """``assumes`` names axes of the function with their values; a NamedVariant case assumes one."""
        flags = case["flags"] if isinstance(case.get("flags"), list) else []
        axes, assumes = self.signature["variants"], case.get("assumes")
        named = isinstance(assumes, dict) and any(
            axis in axes and value != axes[axis][0] for axis, value in assumes.items()
        )
        if ("NamedVariant" in flags) != named:
            _fail(
                "assumes",
                "a case flagged NamedVariant must assume a non-canonical value of a variant axis, and only "
                f"such a case; got flags {flags!r:.80} and assumes {assumes!r:.80}",
            )
        if assumes is None:
            return
        if not isinstance(assumes, dict) or not assumes:
            _fail("assumes", f"must be a non-empty object of variant axis -> value; got {assumes!r:.60}")
        for axis, value in assumes.items():
            if axis not in axes:
                _fail("assumes", f"{axis!r:.60} is not a variant axis of {self.function} ({sorted(axes)})")
            if value not in axes[axis]:
                _fail("assumes", f"{axis}: {value!r:.60} is not one of {axes[axis]}")

    def error(self, case: dict[str, Any]) -> None:
        for key in ("compare", "tolerances", "acceptable", "phase"):
            if key in case:
                _fail(key, "an invalid-input case has none (it must raise)")
        expected = _keys(
            case["expected"], "expected", self.vocab.props("Error"), self.vocab.required("Error")
        )
        if expected["error"] not in ERROR_TYPES:
            _fail(
                "expected.error",
                f"{expected['error']!r:.60} is not an error the function raises ({' or '.join(ERROR_TYPES)})",
            )
        parameter = _string(expected["parameter"], "expected.parameter")
        if not parameter or not parameter.isprintable() or len(parameter) > 200:
            _fail("expected.parameter", "must name the parameter at fault (a short non-empty string)")

    # -- inputs --

    def inputs(self, inputs: Any, valid: bool) -> dict[str, Any]:
        kinds = self.signature["kinds"]
        _keys(inputs, "inputs", kinds, kinds)
        checked = {}
        for name, kind in kinds.items():
            checked[name] = self.input(inputs[name], kind, f"inputs.{name}", valid)
        if valid:
            self.options(inputs)
        return checked

    def input(self, value: Any, kind: str, field: str, valid: bool) -> Any:
        if kind == "positions":
            return self.array(value, field, ("int64",) if valid else ("int64", "float64"), ("int64",))
        if kind == "float":
            return self.array(value, field, ("float64",), ("float64",))
        if kind == "scalar":
            array = self.array(value, field, ("float64",))
            if valid and array.shape != ():
                _fail(f"{field}.shape", f"a scalar input has shape []; got {list(array.shape)}")
            return array
        if kind == "float|null":
            return None if value is None else self.array(value, field, ("float64",), ("float64",))
        if kind == "bool|null":
            return None if value is None else self.array(value, field, ("bool",))
        if kind == "mask":
            return self.array(value, field, ("bool", "int64") if valid else ("bool", "int64", "float64"))
        if kind == "options":
            options = _keys(value, field, value if isinstance(value, dict) else ())
            for key, item in options.items():
                if not (item is None or isinstance(item, bool) or _is_number(item)):
                    _fail(f"{field}.{key}", f"must be a number, a boolean or null; got {_type_name(item)}")
                if valid:
                    self.parameter(item, f"{field}.{key}")
            return value
        if kind == "scaling|null":
            if value is None:
                return None
            props = self.vocab.scaling
            _keys(value, field, props)
            for key, item in value.items():
                spec = props[key]
                if not _matches(item, spec["type"]) or (
                    spec["type"] == "array" and not all(_is_number(v) for v in item)
                ):
                    _fail(f"{field}.{key}", f"must be {spec['type']}; got {_type_name(item)}")
                if valid:
                    for v in item if isinstance(item, list) else [item]:
                        self.parameter(v, f"{field}.{key}")
            return value
        scalar_types = {
            "int": ["integer"],
            "int|null": ["integer", "null"],
            "number": ["number"],
            "number|null": ["number", "null"],
            "bool": ["boolean"],
            "string": ["string"],
        }
        if kind in scalar_types:
            if not _matches(value, scalar_types[kind]):
                _fail(field, f"must be {' or '.join(scalar_types[kind])}; got {_type_name(value)}")
            if valid:
                self.parameter(value, field)
            return value
        if kind in ("int|pair", "ints", "segments"):
            pair = isinstance(value, list) and len(value) == 2
            if kind == "int|pair" and not (_is_int(value) or pair):
                _fail(field, f"must be an integer or a [left, right] pair; got {json.dumps(value)[:60]}")
            items = [value] if kind == "int|pair" and _is_int(value) else value
            if not isinstance(items, list):
                _fail(field, f"must be a list; got {_type_name(value)}")
            for n, item in enumerate(items):
                parts = item if kind == "segments" and isinstance(item, list) else [item]
                if kind == "segments" and isinstance(item, list) and len(item) != 3:
                    _fail(f"{field}[{n}]", "a vision block is [t, h, w]")
                if not all(_is_int(p) for p in parts):
                    _fail(
                        f"{field}[{n}]", f"must be an integer{' or [t, h, w]' if kind == 'segments' else ''}"
                    )
                if valid:
                    for p in parts:
                        self.parameter(p, f"{field}[{n}]")
            return value
        _fail(field, f"has kind {kind!r}, which this version does not know")  # pragma: no cover
        return None

    def parameter(self, value: Any, field: str) -> None:
        """A numeric parameter of a valid case: within [0, 2**53] (see :data:`MAX_PARAMETER`)."""
        if isinstance(value, bool) or value is None or isinstance(value, str):
            return
        if not 0 <= value <= MAX_PARAMETER:
            _fail(field, f"{value!r:.60} is outside [0, 2**53]: no parameter of a valid call is")

    def options(self, inputs: dict[str, Any]) -> None:
        """A valid case's option values are ones the suite knows (an adapter declares them)."""
        for param, field in self.signature["options"].items():
            value = inputs[param]
            if param == "scaling":
                value = _scaling_type(value)
                field = "scaling_types"
            if not isinstance(value, str) or value not in CHOICES[field]:
                _fail(f"inputs.{param}", f"{value!r:.60} is not one of {list(CHOICES[field])}")
        for param, values in self.declaration.strings.items():
            if inputs[param] not in values:
                _fail(f"inputs.{param}", f"{inputs[param]!r:.60} is not one of {sorted(values)}")

    # -- a valid case's outputs --

    def output(self, value: Any, field: str) -> _Array:
        kind = self.declaration.kind
        dtype = {"float": "float64", "int": "int64", "bool": "bool"}[kind]
        return self.array(value, field, (dtype,), (dtype,) if kind != "bool" else ())

    def valid(self, case: dict[str, Any], inputs: dict[str, Any]) -> None:
        declaration = self.declaration
        names = list(self.outputs)
        expected_obj = _keys(case["expected"], "expected", names, names)
        expected = {name: self.output(expected_obj[name], f"expected.{name}") for name in names}
        magnitudes = {name: np.abs(array.values.astype(np.float64)) for name, array in expected.items()}
        if "acceptable" in case:
            acceptable = _keys(case["acceptable"], "acceptable", names)
            for name, value in acceptable.items():
                other = self.output(value, f"acceptable.{name}")
                if other.shape != expected[name].shape:
                    _fail(
                        f"acceptable.{name}.shape",
                        f"{list(other.shape)} differs from expected {list(expected[name].shape)}",
                    )
                magnitudes[name] = np.minimum(magnitudes[name], np.abs(other.values.astype(np.float64)))
        magnitude = max((float(np.max(m)) for m in magnitudes.values() if m.size), default=0.0)
        if "compare" not in case:
            _fail("compare", "missing: a valid case names its comparison")
        mode = case["compare"]
        if not isinstance(mode, str) or mode not in self.vocab.compare or mode not in declaration.compare:
            _fail(
                "compare",
                f"{mode!r:.40} is not a comparison of {self.function} ({sorted(declaration.compare)})",
            )
        if mode == "causal_rowshift":
            self.rowshift(inputs, expected)
        phase = self.phase(case, expected, magnitude)
        if declaration.kind != "float":
            if "tolerances" in case:
                _fail(
                    "tolerances",
                    f"{self.function}'s {declaration.kind} outputs are compared exactly: no tolerances",
                )
            return
        if "tolerances" in case:
            tolerances, field = self.tolerances(case["tolerances"], "tolerances"), "tolerances"
        elif mode in declaration.case_tolerances:
            _fail("tolerances", f"missing: every {self.function} case compared by {mode} carries its own")
        else:
            tolerances, field = self.file_tolerances, "tolerances (the file's)"
        self.case_atol(tolerances, field, magnitude, phase)

    def rowshift(self, inputs: dict[str, Any], expected: dict[str, _Array]) -> None:
        q, k = inputs.get("q_positions"), inputs.get("k_positions")
        if not isinstance(q, _Array) or not isinstance(k, _Array) or len(q.shape) != 1 or len(k.shape) != 1:
            _fail("compare", "causal_rowshift compares rows of q_positions x k_positions (1-D each)")
        for name, array in expected.items():
            if array.shape[-2:] != (q.shape[0], k.shape[0]):
                _fail(
                    f"expected.{name}.shape",
                    f"{list(array.shape)} must end with [len(q), len(k)] = {[q.shape[0], k.shape[0]]}",
                )

    def phase(
        self, case: dict[str, Any], expected: dict[str, _Array], magnitude: float
    ) -> dict[str, float] | None:
        if "phase" not in case:
            if self.declaration.phase:
                _fail("phase", f"missing: every {self.function} case carries its phase data")
            return None
        if not self.declaration.phase:
            _fail("phase", f"{self.function} cases carry no phase data")
        vocab = self.vocab
        phase = _keys(case["phase"], "phase", vocab.props("Phase"), vocab.required("Phase"))
        positions = self.array(phase["positions"], "phase.positions", ("int64",), ("int64",))
        frequencies = self.array(phase["frequencies"], "phase.frequencies", ("float64",), ("float64",))
        error, scale = phase["frequencyError"], phase["scale"]
        if not _is_number(error) or not 0 <= error <= MAX_FREQUENCY_ERROR:
            _fail(
                "phase.frequencyError", f"must be a number in [0, {MAX_FREQUENCY_ERROR:g}]; got {error!r:.60}"
            )
        if not _is_number(scale) or scale < 0:
            _fail("phase.scale", f"must be a finite number >= 0; got {scale!r:.60}")
        if scale > MAX_PHASE_SCALE * max(1.0, magnitude):
            _fail(
                "phase.scale",
                f"{scale!r} is above its maximum, {MAX_PHASE_SCALE:g} x the case's magnitude "
                f"max(1, {magnitude:.6g})",
            )
        columns = math.prod(frequencies.shape)
        grid = (*positions.shape, columns)
        for name, array in expected.items():
            try:
                np.broadcast_shapes(grid, array.shape)
            except ValueError:
                _fail("phase", f"its grid {list(grid)} does not fit expected.{name} {list(array.shape)}")
            if array.shape[-1:] != (columns,) or len(grid) > len(array.shape):
                _fail(
                    "phase.frequencies", f"{columns} frequencies do not match the columns of expected.{name}"
                )
        top = frequencies.magnitude
        angle = float(np.max(np.abs(positions.values.astype(np.float64)))) if positions.values.size else 0.0
        return {"scale": float(scale), "angle": angle * max(top, 1.0), "top": top}


def _scaling_type(scaling: Any) -> Any:
    """The scaling type a rope scaling dict names (``"default"`` for none), as the runner reads it."""
    if scaling is None:
        return "default"
    if not isinstance(scaling, dict):
        return None
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    return kind if isinstance(kind, str) else None
