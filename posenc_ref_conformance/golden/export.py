"""``posenc-ref golden export``: golden vectors for one model from its ``config.json``, in the shipped format.

An exported case is a case: the same canonical functions, declarations, oracle,
tolerances and phase records as the shipped catalogue (``golden/cases``), only
with the model's parameters and the user's positions.  Per RoPE layer type of the
config (:mod:`.hf_config`): ``rope_frequencies`` (every ``seq_len`` regime that
changes them: LongRoPE short/long, dynamic NTK), ``rope_cos_sin`` at every
position asked for plus a default set around the model's context edges (in
chunks of :data:`CHUNK` positions), and a seeded q/k rotated by ``rope``
(end to end) and ``apply_rope``, in each layout.  ALiBi models get
``alibi_slopes`` and ``alibi_bias``; T5 models ``t5_bucket`` in both directions.

cos/sin tables come from :func:`..oracle._fast.rope_cos_sin_table` (the same
correctly rounded values as the mpmath oracle, proven element by element);
arrays above a size threshold are written as ``.npy`` files under ``arrays/``,
referenced from the JSON with their SHA-256.  ``index.json`` records the source
(the config itself and its SHA-256, or the scaling dict) and the options, so
``posenc-ref golden lint DIR`` can re-export and compare every byte, and
recompute every JSON value at higher precision (rows of large cos/sin tables:
a fixed sample).  The output depends only on the source, the options and this
package: no time stamps.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import pathlib
import random
import shutil
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import oracle
from . import ARRAYS_DIR, SCHEMA_PATH, VECTORS_DIR, _format, binary_references, generate
from ._export_cases import CHUNK, FORMS, LAYOUTS, SAMPLE, Builder, bias_edges, default_positions, ranges
from .cases import Case
from .functions import FUNCTIONS, shape_of
from .hf_config import ConfigError, ModelPlan, plan_from_scaling, read_config
from .schema import schema_bytes

__all__ = [
    "CHUNK",
    "ExportOptions",
    "build",
    "check",
    "export",
    "parse_positions",
    "parse_scaling",
    "recheck",
    "source_from_config",
    "source_from_scaling",
    "summary",
]

#: Arrays with more elements than this are written as .npy files (``binary="auto"``).
BINARY_THRESHOLD = 65536
#: Most positions an export takes.
MAX_POSITIONS = 2**22
#: Rows of a large cos/sin table that lint recomputes at check precision (plus the first and last).
CHECK_ROWS = 30


@dataclasses.dataclass(frozen=True)
class ExportOptions:
    """What to export besides the model.

    ``positions``: the user's positions (``parse_positions``), with ``default_positions``
    the default set around the context edges added; ``layouts`` / ``forms``: RoPE
    layouts and ALiBi forms; ``seed``: of the q/k inputs; ``binary``: ``auto`` (arrays
    over :data:`BINARY_THRESHOLD` elements as ``.npy``), ``always`` or ``never``.
    """

    positions: tuple[int, ...] = ()
    default_positions: bool = True
    layouts: tuple[str, ...] = LAYOUTS
    forms: tuple[str, ...] = FORMS
    seed: int = 0
    binary: str = "auto"

    def __post_init__(self) -> None:
        positions = tuple(sorted({int(p) for p in self.positions}))
        if positions and (positions[0] < 0 or positions[-1] >= 2**53 or len(positions) > MAX_POSITIONS):
            msg = f"positions must be at most {MAX_POSITIONS} integers in [0, 2**53)"
            raise ValueError(msg)
        object.__setattr__(self, "positions", positions)
        for name, values, allowed in (("layouts", self.layouts, LAYOUTS), ("forms", self.forms, FORMS)):
            bad = [v for v in values if v not in allowed]
            if bad or not values:
                msg = f"{name} must be a non-empty selection of {allowed}; got {list(values)}"
                raise ValueError(msg)
        if self.binary not in ("auto", "always", "never"):
            msg = f"binary must be 'auto', 'always' or 'never'; got {self.binary!r}"
            raise ValueError(msg)
        if not self.positions and not self.default_positions:
            msg = "positions must not be empty when default_positions is false"
            raise ValueError(msg)

    def as_dict(self) -> dict[str, Any]:
        return {
            "positions": ranges(self.positions),
            "defaultPositions": self.default_positions,
            "layouts": list(self.layouts),
            "forms": list(self.forms),
            "seed": self.seed,
            "binary": self.binary,
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any]) -> ExportOptions:
        return cls(
            positions=tuple(parse_positions(record["positions"])) if record["positions"] else (),
            default_positions=record["defaultPositions"],
            layouts=tuple(record["layouts"]),
            forms=tuple(record["forms"]),
            seed=record["seed"],
            binary=record["binary"],
        )


# --- positions -----------------------------------------------------------------------------------------


def parse_positions(text: str) -> list[int]:
    """Sorted distinct positions from ``"0,1,4095,131071"`` and ranges ``"0:131072"`` / ``"0:131072:8"``.

    Ranges are Python's (the end excluded).  Positions must be in ``[0, 2**53)``; at most
    :data:`MAX_POSITIONS` of them.
    """
    found: set[int] = set()
    for token in (t.strip() for t in str(text).split(",")):
        parts = token.split(":")
        try:
            numbers = [int(p) for p in parts]
        except ValueError:
            numbers = []
        if not token or len(parts) > 3 or len(numbers) != len(parts) or (len(parts) == 3 and numbers[2] < 1):
            msg = f"positions must be integers and start:stop[:step] ranges, comma-separated; got {token!r}"
            raise ValueError(msg)
        span = range(*numbers) if len(numbers) > 1 else range(numbers[0], numbers[0] + 1)
        if len(span) and (span[0] < 0 or span[-1] >= 2**53):
            msg = f"positions must lie in [0, 2**53); got {token!r}"
            raise ValueError(msg)
        if len(found) + len(span) > MAX_POSITIONS:
            msg = f"positions must number at most {MAX_POSITIONS} (2**22); {token!r} goes past that"
            raise ValueError(msg)
        found.update(span)
    return sorted(found)


# --- the encoder: inline JSON or .npy files ------------------------------------------------------------


class _Encoder(generate.Encoder):
    """Inline JSON for small arrays, ``arrays/NAME.npy`` for large ones (collected in ``files``)."""

    def __init__(self, binary: str, sink: Callable[[str, bytes], None]) -> None:
        self.threshold = {"auto": BINARY_THRESHOLD, "always": 0, "never": math.inf}[binary]
        self.sink = sink

    def array(self, kind: str, values: Any, where: str) -> dict[str, Any]:
        shape = list(values.shape) if hasattr(values, "shape") else shape_of(values)
        if kind == "bool" or not shape or math.prod(shape) <= self.threshold:
            return super().array(kind, values, where)
        dtype = np.float64 if kind == "float" else np.int64
        name = f"{ARRAYS_DIR}/{where.replace('/', '.').replace(':', '.')}.npy"
        obj, data = _format.binary_array(np.asarray(values, dtype=dtype), name)
        self.sink(name, data)
        return obj


# --- sources -------------------------------------------------------------------------------------------


def _read_json(path: pathlib.Path, what: str) -> tuple[bytes, Any]:
    """(bytes, parsed) of a JSON file, or a ConfigError naming ``what`` and the file."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        msg = f"{what} {str(path)!r} cannot be read ({exc.strerror or exc})"
        raise ConfigError(msg) from exc
    try:
        return data, json.loads(data)
    except ValueError as exc:
        msg = f"{what} {str(path)!r} is not JSON: {exc}"
        raise ConfigError(msg) from exc


def parse_scaling(text: str) -> Any:
    """``--scaling``'s value: a JSON object, or the name of a file that holds one."""
    text = text.strip()
    if not text.startswith("{"):
        return _read_json(pathlib.Path(text), "scaling")[1]
    try:
        return json.loads(text)
    except ValueError as exc:
        msg = f"scaling is not valid JSON: {exc}"
        raise ConfigError(msg) from exc


def source_from_config(
    config: Mapping[str, Any] | str | pathlib.Path, *, name: str | None = None
) -> dict[str, Any]:
    """The source record of a ``config.json`` (a path, or a parsed mapping): the config and its SHA-256."""
    if isinstance(config, (str, pathlib.Path)):
        data, parsed = _read_json(pathlib.Path(config), "hf_config")
        name = name or pathlib.Path(config).name
    else:
        parsed = json.loads(json.dumps(config))
        data = json.dumps(parsed, sort_keys=True).encode()
    read_config(parsed)  # refuse now, with the key named, what cannot be exported
    return {
        "kind": "hf-config",
        "name": name or "config.json",
        "sha256": hashlib.sha256(data).hexdigest(),
        "config": parsed,
    }


def source_from_scaling(
    scaling: Mapping[str, Any] | None,
    *,
    head_dim: int,
    base: float,
    max_position_embeddings: int | None = None,
    partial_rotary_factor: float | None = None,
) -> dict[str, Any]:
    """The source record of a plain rope-parameters dict (``--scaling``, ``--head-dim``, ``--base``)."""
    record = {
        "kind": "scaling",
        "scaling": json.loads(json.dumps(dict(scaling or {}))),
        "headDim": head_dim,
        "base": base,
        "maxPositionEmbeddings": max_position_embeddings,
        "partialRotaryFactor": partial_rotary_factor,
    }
    _plan(record)
    data = json.dumps({k: v for k, v in record.items() if k != "kind"}, sort_keys=True).encode()
    return {**record, "sha256": hashlib.sha256(data).hexdigest()}


def _plan(source: Mapping[str, Any]) -> ModelPlan:
    if source["kind"] == "hf-config":
        return read_config(source["config"])
    return plan_from_scaling(
        source["scaling"],
        head_dim=source["headDim"],
        base=source["base"],
        max_position_embeddings=source["maxPositionEmbeddings"],
        partial_rotary_factor=source["partialRotaryFactor"],
    )


# --- build, write, check -------------------------------------------------------------------------------


def build(
    source: Mapping[str, Any],
    options: ExportOptions,
    sink: Callable[[str, bytes], None],
    digits: int = oracle.DEFAULT_DIGITS,
) -> list[str]:
    """Hand every file of the export to ``sink(relative path, bytes)``, ``index.json`` last; their names.

    Arrays go to the sink as they are computed, so memory holds one case's arrays at a time.
    """
    plan = _plan(source)
    builder = Builder(options.layouts, options.forms, options.seed)
    if plan.rope:
        edges = sorted({e for layer in plan.rope for e in layer.edges()})
    else:
        edges = bias_edges(source.get("config", {}))
    defaults = default_positions(edges) if options.default_positions else []
    positions = sorted(set(options.positions) | set(defaults))
    with oracle.working_precision(digits):
        for layer in plan.rope:
            builder.rope_layer(layer, positions, edges)
        if plan.alibi is not None:
            builder.alibi(plan.alibi.num_heads, plan.alibi.max_bias, positions, edges)
        if plan.t5 is not None:
            builder.t5(plan.t5.num_buckets, plan.t5.max_distance, plan.t5.bidirectional, positions, edges)
    names: list[str] = []

    def emit(name: str, data: bytes) -> None:
        names.append(name)
        sink(name, data)

    encoder = _Encoder(options.binary, emit)
    record = {
        "source": source["kind"],
        "sourceName": source.get("name"),
        "sourceSha256": source["sha256"],
        "options": options.as_dict(),
        "positions": {"count": len(positions), "values": ranges(positions), "contextEdges": edges},
        "precisionCheck": f"golden lint recomputes every value at {oracle.CHECK_DIGITS} digits, except "
        f"the rows of rope_cos_sin cases over {SAMPLE} positions: {CHECK_ROWS} seeded rows, the first "
        "and the last",
    }
    files = []
    for name, spec in FUNCTIONS.items():
        cases = [c for c in builder.cases if c.function == name]
        if not cases:
            continue

        def case_document(spec: Any, case: Case) -> dict[str, Any]:
            return generate._case_document(spec, case, encoder, builder.compute.get(case.id))

        doc = generate._file_document(spec, cases, digits, case_document=case_document, export=record)
        if binary_references(doc["cases"]):
            doc["header"] = [*doc["header"], _BINARY_HEADER]
        data = _format.dumps(doc)
        emit(f"{name}.json", data)
        files.append((spec, f"{name}.json", data, len(cases)))
    emit(SCHEMA_PATH.name, schema_bytes())
    index = generate.index_document(
        files, export={**record, "plan": plan.as_dict(), "sourceRecord": dict(source)}
    )
    emit("index.json", _format.dumps(index))
    return names


_BINARY_HEADER = (
    "Binary arrays {dtype, shape, file, format, byteOrder, sha256}: the elements are in the .npy file named "
    "(NumPy format 1.0, little-endian, C order; float64 bit-exact), whose SHA-256 is given."
)


def _owned(directory: pathlib.Path) -> set[pathlib.Path]:
    """Files of a previous export in ``directory`` (which a new export may replace)."""
    index = directory / "index.json"
    if not index.exists():
        return set()
    try:
        record = json.loads(index.read_text(encoding="ascii"))
    except (OSError, ValueError):
        return set()
    if not isinstance(record, dict) or "export" not in record:
        return set()
    owned = {index, directory / SCHEMA_PATH.name}
    owned |= {directory / e["file"] for e in record.get("files", []) if isinstance(e, dict) and "file" in e}
    owned |= set((directory / ARRAYS_DIR).glob("*.npy"))
    return owned


def _prepare(directory: pathlib.Path) -> None:
    """Make ``directory`` empty: new, empty, or holding a previous export (removed)."""
    if directory.resolve() == VECTORS_DIR.resolve():
        msg = f"out must not be the shipped vectors' directory {directory}"
        raise ValueError(msg)
    if directory.exists() and not directory.is_dir():
        msg = f"out {str(directory)!r} is a file, not a directory"
        raise ValueError(msg)
    if directory.exists():
        present = {p for p in directory.rglob("*") if p.is_file()}
        foreign = sorted(str(p.relative_to(directory)) for p in present - _owned(directory))
        if foreign:
            msg = f"out {str(directory)!r} holds files that are not a previous export: {foreign[:5]}"
            raise ValueError(msg)
        for path in present:
            path.unlink()
    (directory / ARRAYS_DIR).mkdir(parents=True, exist_ok=True)


def export(directory: str | pathlib.Path, source: Mapping[str, Any], options: ExportOptions) -> list[str]:
    """Export into ``directory`` (new, empty, or a previous export, which is replaced); the files written.

    ``index.json`` is written last, so an interrupted export is refused by ``verify``.
    """
    directory = pathlib.Path(directory)
    _prepare(directory)

    def sink(name: str, data: bytes) -> None:
        (directory / name).write_bytes(data)

    names = build(source, options, sink)
    if not any(name.startswith(f"{ARRAYS_DIR}/") for name in names):
        shutil.rmtree(directory / ARRAYS_DIR)
    return names


def summary(directory: str | pathlib.Path, names: Sequence[str], seconds: float) -> list[str]:
    """What ``golden export`` prints: cases per file, then counts, size and time."""
    directory = pathlib.Path(directory)
    index = json.loads((directory / "index.json").read_text(encoding="ascii"))
    size = sum((directory / n).stat().st_size for n in names)
    arrays = sum(n.startswith(f"{ARRAYS_DIR}/") for n in names)
    lines = [f"{e['file']:<24} {e['numberOfCases']:>4} cases" for e in index["files"]]
    lines.append(
        f"exported {index['totalCases']} cases at {index['export']['positions']['count']} positions "
        f"to {directory}: {len(names) - arrays} JSON files, {arrays} .npy files, "
        f"{size / 2**20:.1f} MiB, {seconds:.1f} s"
    )
    return lines


def _recorded(directory: pathlib.Path) -> tuple[dict[str, Any], ExportOptions]:
    index = json.loads((directory / "index.json").read_text(encoding="ascii"))
    record = index["export"]
    return record["sourceRecord"], ExportOptions.from_dict(record["options"])


def check(directory: str | pathlib.Path) -> list[str]:
    """Files of an export that differ from exporting its recorded source and options again."""
    directory = pathlib.Path(directory)
    source, options = _recorded(directory)
    problems: list[str] = []

    def sink(name: str, data: bytes) -> None:
        path = directory / name
        if not path.is_file() or path.read_bytes() != data:
            problems.append(name)

    names = set(build(source, options, sink))
    present = {p.relative_to(directory).as_posix() for p in directory.rglob("*") if p.is_file()}
    return problems + [f"{n} (not exported)" for n in sorted(present - names)]


# --- recomputation at check precision ------------------------------------------------------------------


def _plain_inputs(case: Mapping[str, Any]) -> dict[str, Any]:
    """A stored case's inputs as the oracle takes them (nested lists, 0-d floats as floats)."""
    out = {}
    for name, value in case["inputs"].items():
        if isinstance(value, dict) and "dtype" in value and "shape" in value:
            array = _format.decode(value)
            out[name] = float(array) if array.shape == () and array.dtype == np.float64 else array.tolist()
        else:
            out[name] = value
    return out


def _same(stored: Mapping[str, Any], fresh: np.ndarray) -> bool:
    expected = _format.decode(stored)
    return expected.shape == fresh.shape and np.array_equal(expected, fresh)  # exact (no NaN; +-0 alike)


def _fresh(spec: Any, kind: str, raw: Any) -> np.ndarray:
    if kind == "float" and not hasattr(raw, "dtype"):
        return _format.decode(generate._encode_output(kind, raw))
    return np.asarray(raw, dtype={"float": np.float64, "int": np.int64, "bool": np.bool_}[kind])


def recheck(
    docs: Iterable[Mapping[str, Any]], log: Callable[[str], None] = lambda message: None
) -> list[str]:
    """Cases whose float64 values differ when recomputed with the mpmath oracle at check precision."""
    problems = []
    log(
        f"recomputing the exported values at {oracle.CHECK_DIGITS} digits "
        "(large cos/sin tables: sampled rows) ..."
    )
    with oracle.working_precision(oracle.CHECK_DIGITS):
        for doc in docs:
            spec = FUNCTIONS[doc["function"]]
            for case in doc["cases"]:
                if case["result"] != "valid":
                    continue
                inputs = _plain_inputs(case)
                rows = None
                if spec.name == "rope_cos_sin" and len(inputs["positions"]) > SAMPLE:
                    count = len(inputs["positions"])
                    rng = random.Random(case["id"])
                    rows = sorted({0, count - 1, *rng.sample(range(count), CHECK_ROWS)})
                    inputs["positions"] = [inputs["positions"][r] for r in rows]
                raw = spec.compute(inputs)
                for name in spec.outputs:
                    for key in (name, f"acceptable:{name}"):
                        stored = (
                            case["expected"][name] if key == name else case.get("acceptable", {}).get(name)
                        )
                        if stored is None:
                            continue
                        if key not in raw:
                            problems.append(
                                f"{doc['function']}.json: {case['id']}: {key} is not computed again"
                            )
                            continue
                        fresh = _fresh(spec, spec.output_kind, raw[key])
                        if rows is not None:
                            expected = _format.decode(stored)[rows]
                            same = np.array_equal(expected, fresh)
                        else:
                            same = _same(stored, fresh)
                        if not same:
                            problems.append(
                                f"{doc['function']}.json: {case['id']}: {key} differs at "
                                f"{oracle.CHECK_DIGITS} digits"
                            )
    return problems
