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

Nothing is lost.  The export is built in a temporary folder beside the target
(``.NAME.partial-XXXXXXXX``) and replaces the target only once complete: on Linux by one
atomic exchange of the two folders (``renameat2(RENAME_EXCHANGE)``), elsewhere by moving
the earlier export aside, moving the new one in and only then removing the earlier one.
Any failure removes the temporary folder and leaves an earlier export byte for byte.
The target must be new, empty or an earlier export holding nothing but its own files
(:func:`_foreign`); a folder inside the installed package is refused.  Every size is
bounded before any work: the config's values by :data:`.hf_config.BOUNDS`, the
positions by :data:`MAX_POSITIONS`, and the whole export by :func:`estimate` against
:data:`MAX_EXPORT_BYTES` and :data:`MAX_JSON_BYTES`.
"""

from __future__ import annotations

import ctypes
import dataclasses
import errno
import hashlib
import json
import math
import os
import pathlib
import random
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np

import posenc_ref

from .. import oracle
from . import ARRAYS_DIR, SCHEMA_PATH, _format, binary_references, generate
from ._export_cases import (
    CHUNK,
    FORMS,
    LAYOUTS,
    SAMPLE,
    Builder,
    _regimes,
    bias_edges,
    default_positions,
    ranges,
)
from .cases import Case
from .functions import FUNCTIONS, shape_of
from .hf_config import (
    MAX_DISTANCE,
    MAX_HEAD_DIM,
    MAX_HEADS,
    MAX_T5_BUCKETS,
    ConfigError,
    ModelPlan,
    plan_from_scaling,
    read_config,
)
from .schema import schema_bytes

__all__ = [
    "CHUNK",
    "MAX_CONFIG_BYTES",
    "MAX_EXPORT_BYTES",
    "MAX_JSON_BYTES",
    "Estimate",
    "ExportError",
    "ExportOptions",
    "build",
    "check",
    "estimate",
    "export",
    "parse_positions",
    "parse_scaling",
    "recheck",
    "reproduction_problems",
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
#: Most bytes an export may write, estimated before anything is computed (:func:`estimate`): 16 GiB.
#: Llama 3.1 at its 131072 positions in both layouts writes 0.5 GiB; 2**22 positions of a 128-wide
#: head in both layouts are 16 GiB (one layout: 8 GiB).
MAX_EXPORT_BYTES = 2**34
#: Most bytes of one JSON file (estimated): a file is built in memory, about three times its size,
#: before it is written, so 1 GiB needs about 3 GiB of memory.  Large arrays go to .npy files
#: (``binary="auto"``), so only ``binary="never"`` with many positions comes near it.
MAX_JSON_BYTES = 2**30
#: Largest config.json (or --scaling file) read: real ones are 1-100 KB.
MAX_CONFIG_BYTES = 2**24
#: Deepest nesting of a config's objects and lists: real ones have 2 to 4 levels; index.json records
#: the config 3 levels down, and golden readers refuse files nested deeper than 64.
MAX_CONFIG_DEPTH = 32


class ExportError(RuntimeError):
    """The export failed while computing or writing (the message names what); an earlier export is kept.

    ``filesystem``: a file or folder could not be written (a full disk, permissions, a name too long),
    rather than a failure of the computation itself.
    """

    def __init__(self, message: str, *, filesystem: bool = False) -> None:
        super().__init__(message)
        self.filesystem = filesystem


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
    """(bytes, parsed) of a JSON file (at most MAX_CONFIG_BYTES), or a ConfigError naming ``what`` and it."""
    try:
        with path.open("rb") as file:
            data = file.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        msg = f"{what} {str(path)!r} cannot be read ({exc.strerror or exc})"
        raise ConfigError(msg) from exc
    if len(data) > MAX_CONFIG_BYTES:
        msg = f"{what} {str(path)!r} holds more than {MAX_CONFIG_BYTES} bytes; a config.json has 1-100 KB"
        raise ConfigError(msg)
    try:
        return data, json.loads(data)
    except (ValueError, RecursionError) as exc:
        msg = f"{what} {str(path)!r} is not JSON: {type(exc).__name__}: {str(exc)[:200]}"
        raise ConfigError(msg) from exc


def _unrecordable(node: Any, where: str) -> str | None:
    """Why a parsed JSON value cannot be recorded in index.json (NaN, Infinity, too deep); None if it can."""
    stack = [(node, where, 0)]
    while stack:
        value, name, depth = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            return f"{name} is NaN or Infinity, which JSON does not have"
        if isinstance(value, (dict, list)) and depth >= MAX_CONFIG_DEPTH:
            return f"{name} is nested more than {MAX_CONFIG_DEPTH} levels deep (a config.json has 2 to 4)"
        if isinstance(value, dict):
            stack += [(v, f"{name}[{k!r}]", depth + 1) for k, v in value.items()]
        elif isinstance(value, list):
            stack += [(v, f"{name}[{i}]", depth + 1) for i, v in enumerate(value)]
    return None


def _refuse_unrecordable(value: Any, where: str) -> None:
    """The export records its source in index.json, which golden readers must be able to read back."""
    found = _unrecordable(value, where)
    if found is not None:
        msg = f"{found}: the export records its source in index.json, so it must be plain JSON"
        raise ConfigError(msg)


def parse_scaling(text: str) -> Any:
    """``--scaling``'s value: a JSON object, or the name of a file that holds one."""
    text = text.strip()
    if not text.startswith("{"):
        return _read_json(pathlib.Path(text), "scaling")[1]
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        msg = f"scaling is not valid JSON: {type(exc).__name__}: {str(exc)[:200]}"
        raise ConfigError(msg) from exc


def source_from_config(
    config: Mapping[str, Any] | str | pathlib.Path, *, name: str | None = None
) -> dict[str, Any]:
    """The source record of a ``config.json`` (a path, or a parsed mapping): the config and its SHA-256."""
    if isinstance(config, (str, pathlib.Path)):
        data, parsed = _read_json(pathlib.Path(config), "hf_config")
        name = name or pathlib.Path(config).name
    else:
        try:
            parsed = json.loads(json.dumps(config))
        except (TypeError, ValueError, RecursionError) as exc:
            msg = f"config must be a JSON object (a parsed config.json): {exc}"
            raise ConfigError(msg) from exc
        data = json.dumps(parsed, sort_keys=True).encode()
    read_config(parsed)  # refuse now, with the key named, what cannot be exported
    _refuse_unrecordable(parsed, "config")
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
    if scaling is not None and not isinstance(scaling, Mapping):
        msg = f"scaling must be an object (a JSON dict); got {type(scaling).__name__}"
        raise ConfigError(msg)
    record = {
        "kind": "scaling",
        "scaling": json.loads(json.dumps(dict(scaling or {}))),
        "headDim": head_dim,
        "base": base,
        "maxPositionEmbeddings": max_position_embeddings,
        "partialRotaryFactor": partial_rotary_factor,
    }
    _plan(record)
    _refuse_unrecordable(record["scaling"], "scaling")
    data = json.dumps({k: v for k, v in record.items() if k != "kind"}, sort_keys=True).encode()
    return {**record, "sha256": hashlib.sha256(data).hexdigest()}


def _plan(source: Mapping[str, Any]) -> ModelPlan:
    if not isinstance(source, Mapping) or source.get("kind") not in ("hf-config", "scaling"):
        msg = "source must be a record of source_from_config or source_from_scaling"
        raise ConfigError(msg)
    if source["kind"] == "hf-config":
        return read_config(source["config"])
    return plan_from_scaling(
        source["scaling"],
        head_dim=source["headDim"],
        base=source["base"],
        max_position_embeddings=source["maxPositionEmbeddings"],
        partial_rotary_factor=source["partialRotaryFactor"],
    )


# --- the size of an export, before it is computed ---------------------------------------------------------

#: Bytes of one inline float64 (hex, decimal, separators) and int64 (up to 16 digits and separators).
_FLOAT_JSON, _INT_JSON = 48, 20
#: Bytes of a case besides its arrays (id, comment, flags, tolerances), about.
_CASE_JSON = 4096


@dataclasses.dataclass(frozen=True)
class Estimate:
    """What an export will write, counted from its plan and positions without computing anything.

    ``bytes``: about what it writes (inline values at their JSON size, .npy at 8 bytes a value);
    ``largest_json``: about the largest JSON file (``(name, bytes)``); ``min_bytes``: what any
    export of this source and these options writes at least (the cos/sin tables, ALiBi biases
    and T5 buckets at 8 bytes a float and 2 an int), which ``golden lint`` holds against the
    directory it reproduces.
    """

    cases: int
    values: int
    bytes: int
    largest_json: tuple[str, int]
    min_bytes: int

    def check(self) -> None:
        """ValueError if the export would pass :data:`MAX_EXPORT_BYTES` or :data:`MAX_JSON_BYTES`."""
        what = f"{self.values} values in {self.cases} cases"
        if self.bytes > MAX_EXPORT_BYTES:
            msg = (
                f"the export would write about {self.bytes / 2**30:.1f} GiB ({what}); an export may write "
                f"at most {MAX_EXPORT_BYTES / 2**30:.0f} GiB: ask for fewer positions or one layout"
            )
            raise ValueError(msg)
        name, size = self.largest_json
        if size > MAX_JSON_BYTES:
            msg = (
                f"the export's {name} would take about {size / 2**30:.1f} GiB of JSON ({what}); one JSON "
                f"file may take at most {MAX_JSON_BYTES / 2**30:.0f} GiB (it is built in memory): use "
                "--binary auto or always, or fewer positions"
            )
            raise ValueError(msg)


class _Tally:
    def __init__(self, binary: str) -> None:
        self.threshold = {"auto": BINARY_THRESHOLD, "always": 0, "never": math.inf}[binary]
        self.files: dict[str, int] = {}
        self.cases = self.values = self.npy = self.floor = 0

    def case(self, function: str, *arrays: tuple[str, int], floor: int = 0, times: int = 1) -> None:
        """``times`` cases of ``function`` holding ``arrays`` ((kind, count)), writing at least ``floor``."""
        json_bytes = _CASE_JSON
        for kind, count in arrays:
            self.values += count * times
            if count > self.threshold:
                self.npy += (count * 8 + 128) * times
            else:
                json_bytes += count * (_FLOAT_JSON if kind == "float" else _INT_JSON)
        self.cases += times
        self.files[function] = self.files.get(function, 0) + json_bytes * times
        self.floor += floor * times

    def result(self) -> Estimate:
        largest = max(self.files.items(), key=lambda item: item[1], default=("index.json", 0))
        name, size = largest
        return Estimate(
            self.cases, self.values, self.npy + sum(self.files.values()), (f"{name}.json", size), self.floor
        )


def _positions(
    plan: ModelPlan, source: Mapping[str, Any], options: ExportOptions
) -> tuple[list[int], list[int]]:
    """(every exported position, the context edges) of a plan and options."""
    if plan.rope:
        edges = sorted({e for layer in plan.rope for e in layer.edges()})
    else:
        edges = bias_edges(source.get("config", {}))
    defaults = default_positions(edges) if options.default_positions else []
    return sorted(set(options.positions) | set(defaults)), edges


def _estimate(plan: ModelPlan, positions: list[int], options: ExportOptions) -> Estimate:
    """The cases :class:`._export_cases.Builder` makes for ``plan``, counted (see :class:`Estimate`)."""
    tally = _Tally(options.binary)
    layouts, forms = len(options.layouts), len(options.forms)
    count = len(positions)
    sample = min(count, SAMPLE)
    sample_min = count if count <= SAMPLE else SAMPLE // 2  # _sample keeps at least an even spread of 32
    for layer in plan.rope:
        half, regimes = layer.dim // 2, _regimes(layer, positions)
        tally.case("rope_frequencies", ("float", half), times=len(regimes) + 2)
        for _, _, selected in regimes:
            full, rest = divmod(len(selected), CHUNK)
            for rows, times in ((CHUNK, full), (rest, 1 if rest else 0)):
                table = ("float", rows * layer.dim)
                arrays = (("int", rows), ("float", half), table, table, ("int", rows), ("float", half))
                tally.case("rope_cos_sin", *arrays, floor=16 * rows * layer.dim, times=times * layouts)
            rows = min(len(selected), SAMPLE)
            x = ("float", 2 * rows * layer.head_dim)
            tally.case("rope", x, ("int", rows), ("float", half), x, times=layouts)
            table = ("float", rows * layer.dim)
            tally.case("apply_rope", x, table, table, x, times=layouts)
    if plan.alibi is not None:
        heads = plan.alibi.num_heads
        tally.case("alibi_slopes", ("float", heads))
        bias = ("float", heads * sample * sample)
        arrays = (("int", sample), ("int", sample), ("float", heads), bias)
        tally.case("alibi_bias", *arrays, floor=8 * heads * sample_min * sample_min, times=forms)
    if plan.t5 is not None:
        least = 4 * plan.t5.max_distance + 1
        relative = ("int", least + sample * sample)
        tally.case("t5_bucket", relative, relative, floor=4 * least, times=len(plan.t5.bidirectional))
    return tally.result()


def estimate(source: Mapping[str, Any], options: ExportOptions) -> Estimate:
    """What exporting ``source`` with ``options`` would write (:class:`Estimate`), computing nothing.

    The source is read (and refused, naming the key, past any bound) first.
    """
    plan = _plan(source)
    positions, _ = _positions(plan, source, options)
    return _estimate(plan, positions, options)


# --- build, write, check -------------------------------------------------------------------------------


def build(
    source: Mapping[str, Any],
    options: ExportOptions,
    sink: Callable[[str, bytes], None],
    digits: int = oracle.DEFAULT_DIGITS,
) -> list[str]:
    """Hand every file of the export to ``sink(relative path, bytes)``, ``index.json`` last; their names.

    Arrays go to the sink as they are computed, so memory holds one case's arrays at a time.
    The source is bounded and the size estimated (:meth:`Estimate.check`) before anything is computed.
    """
    plan = _plan(source)
    positions, edges = _positions(plan, source, options)
    _estimate(plan, positions, options).check()
    builder = Builder(options.layouts, options.forms, options.seed)
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


_JSON_NAME = re.compile(r"[A-Za-z0-9_]+\.json")
#: A binary reference in a golden file's bytes, as the canonical layout writes it.
_NPY_REFERENCE = re.compile(rb'"file": "(' + ARRAYS_DIR.encode() + rb'/[A-Za-z0-9_.\-]+\.npy)"')


def _owned(directory: pathlib.Path) -> set[str]:
    """Relative paths of an earlier export's own files in ``directory`` (empty if it holds none).

    An export's own files: its ``index.json`` (one with an ``export`` record), the JSON files it
    lists, the schema copy, and the ``arrays/*.npy`` files those JSON files reference.  Any
    other file (a ``.npy`` of the user's own among them) is not the export's to replace.
    """
    index = directory / "index.json"
    if index.is_symlink() or not index.is_file():
        return set()
    try:
        record = json.loads(index.read_bytes())
    except (OSError, ValueError, RecursionError):
        return set()
    if not isinstance(record, dict) or not isinstance(record.get("export"), dict):
        return set()
    files = record.get("files")
    listed = [e.get("file") for e in files if isinstance(e, dict)] if isinstance(files, list) else []
    listed = [f for f in listed if isinstance(f, str) and _JSON_NAME.fullmatch(f) and f != "index.json"]
    owned = {"index.json", SCHEMA_PATH.name, *listed}
    arrays = directory / ARRAYS_DIR
    if arrays.is_symlink() or not arrays.is_dir() or not any(arrays.iterdir()):
        return owned
    for name in listed:  # the references, found in the bytes: a large JSON file is not parsed
        path = directory / name
        if path.is_symlink() or not path.is_file():
            continue
        try:
            data = path.read_bytes()
        except OSError:
            continue
        owned |= {m.decode("ascii") for m in _NPY_REFERENCE.findall(data)}
    return owned


def _foreign(directory: pathlib.Path) -> list[str]:
    """Entries of ``directory`` that are not an earlier export's own files: files, links, empty folders."""
    owned = _owned(directory)
    found = []
    for top, folders, files in os.walk(directory, followlinks=False):
        here = pathlib.Path(top)
        relative = here.relative_to(directory).as_posix()
        if here != directory and not folders and not files and (relative != ARRAYS_DIR or not owned):
            found.append(f"{relative}/")
        for name in folders + files:
            path = here / name
            entry = path.relative_to(directory).as_posix()
            if path.is_symlink() or (name in files and (entry not in owned or not path.is_file())):
                found.append(entry)
        folders[:] = [f for f in folders if not (here / f).is_symlink()]
    return sorted(found)


def _installed() -> list[pathlib.Path]:
    """The folders of the installed packages (the shipped vectors live in one)."""
    return [pathlib.Path(__file__).resolve().parents[1], pathlib.Path(posenc_ref.__file__).resolve().parent]


def _target(directory: str | pathlib.Path) -> pathlib.Path:
    """``directory`` as an absolute path, after the refusals (a file, a link, the package, foreign files)."""
    target = pathlib.Path(os.path.abspath(directory))
    if target.is_symlink():
        msg = f"out {str(directory)!r} is a symbolic link; give the folder it points to"
        raise ValueError(msg)
    resolved = target.resolve()
    for package in _installed():
        if resolved == package or package in resolved.parents:
            msg = (
                f"out {str(directory)!r} is inside the installed package {str(package)!r} (where the shipped "
                "vectors live); export to a folder of your own"
            )
            raise ValueError(msg)
    if target.exists() and not target.is_dir():
        msg = f"out {str(directory)!r} is a file, not a directory"
        raise ValueError(msg)
    here = pathlib.Path.cwd().resolve()
    if resolved == here or resolved in here.parents:
        msg = f"out {str(directory)!r} is (or holds) the current folder, which the export would replace"
        raise ValueError(msg)
    if target.exists():
        foreign = _foreign(target)
        if foreign:
            shown = foreign[:5] + ([f"... {len(foreign) - 5} more"] if len(foreign) > 5 else [])
            msg = (
                f"out {str(directory)!r} holds files that are not a previous export: {shown}; the export "
                "replaces only an earlier export's own files (index.json, the files it lists, the schema "
                "and the .npy files they reference): move them, or choose another folder"
            )
            raise ValueError(msg)
    return target


class _WriteError(OSError):
    """A file of the export could not be written (raised by the sink, whatever wraps it)."""


def _chain(exc: BaseException | None) -> list[BaseException]:
    """``exc`` and its causes (or contexts), outermost first."""
    chain: list[BaseException] = []
    while exc is not None and all(exc is not c for c in chain):
        chain.append(exc)
        exc = exc.__cause__ or exc.__context__
    return chain


def _reason(exc: BaseException) -> str:
    """What failed, from an exception raised inside the build (following its causes)."""
    chain = _chain(exc)
    for link in chain:
        if isinstance(link, _WriteError):
            return str(link)
    root = chain[-1]
    case = next((m.group(1) for c in chain if (m := re.match(r"golden case (\S+): ", str(c)))), None)
    where = f"computing case {case}" if case else "building the export"
    return f"{where} raised {type(root).__name__}" + (f": {root}" if str(root) else "")


def _exchange(new: pathlib.Path, old: pathlib.Path) -> bool:
    """Swap two folders in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where it is unavailable."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(new), at_fdcwd, os.fsencode(old), rename_exchange) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(code, os.strerror(code), str(old))


def _replace(work: pathlib.Path, target: pathlib.Path) -> None:
    """Put the finished export ``work`` at ``target``, replacing an earlier export there.

    With ``renameat2`` the two folders are exchanged in one step and the earlier export, now in
    ``work``, is removed after; elsewhere the earlier export is moved aside, the new one moved in
    (between the two renames ``target`` does not exist) and the earlier one removed only then.
    A crash before that removal leaves the earlier export in a hidden ``.NAME.*`` folder beside.
    """
    if not target.exists():
        os.rename(work, target)
        return
    foreign = _foreign(target)  # files added while the export was computed stay where they are
    if foreign:
        msg = (
            f"out {str(target)!r} gained files that are not a previous export while exporting: {foreign[:5]}"
        )
        raise _WriteError(msg)
    if _exchange(work, target):
        _remove_earlier(work)
        return
    aside = pathlib.Path(tempfile.mkdtemp(prefix=f".{target.name}.previous-", dir=target.parent))
    os.rename(target, aside)  # onto the empty folder just made
    try:
        os.rename(work, target)
    except BaseException:
        os.rename(aside, target)
        raise
    _remove_earlier(aside)


def _remove_earlier(folder: pathlib.Path) -> None:
    """Remove the earlier export moved out of the target, unless a file of someone else's is in it.

    (A file added to the target in the instant between the last check and the swap is kept, with
    the earlier export, in the hidden folder beside the target.)
    """
    if not _foreign(folder):
        shutil.rmtree(folder, ignore_errors=True)


def export(directory: str | pathlib.Path, source: Mapping[str, Any], options: ExportOptions) -> list[str]:
    """Export into ``directory`` (new, empty, or a previous export, which is replaced); the files written.

    Refusals (``ValueError``, nothing written): a target that is a file, a link, inside the
    installed package, or holds anything but an earlier export's own files; a source past a
    bound; an export over the size cap.  A failure while computing or writing is an
    :class:`ExportError` naming what failed.  Either way an earlier export is left byte for byte
    and the temporary folder is removed; the export replaces the target only once complete.
    """
    target = _target(directory)
    plan = _plan(source)
    positions, _ = _positions(plan, source, options)
    _estimate(plan, positions, options).check()
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        work = pathlib.Path(tempfile.mkdtemp(prefix=f".{target.name}.partial-", dir=target.parent))
    except OSError as exc:
        msg = f"out {str(directory)!r}: cannot create a folder beside it ({exc.strerror or exc})"
        raise ValueError(msg) from exc
    current = ""

    def sink(name: str, data: bytes) -> None:
        nonlocal current
        current = name
        try:
            with open(work / name, "xb") as file:
                file.write(data)
        except OSError as exc:
            msg = f"cannot write {name} in {work} ({exc.strerror or exc})"
            raise _WriteError(msg) from exc

    try:
        (work / ARRAYS_DIR).mkdir()
        names = build(source, options, sink)
        if not any(name.startswith(f"{ARRAYS_DIR}/") for name in names):
            (work / ARRAYS_DIR).rmdir()
        mask = os.umask(0o022)
        os.umask(mask)
        work.chmod(0o777 & ~mask)  # mkdtemp made it 0700; an export is an ordinary folder
        try:
            _replace(work, target)
        except OSError as exc:
            msg = f"cannot put the export in place at {target} ({exc.strerror or exc})"
            raise _WriteError(msg) from exc
    except Exception as exc:
        shutil.rmtree(work, ignore_errors=True)
        msg = f"the export to {str(directory)!r} failed: {_reason(exc)}"
        if current and not isinstance(exc, _WriteError):
            msg += f" (while making {current})"
        filesystem = any(isinstance(e, OSError) for e in _chain(exc))
        raise ExportError(msg + "; an earlier export there is unchanged", filesystem=filesystem) from exc
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
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


def _position_count(text: Any) -> int:
    """How many positions recorded ``ranges`` text holds, counted without making them (0: not canonical).

    An export records its positions as sorted, disjoint ``a`` and ``a:b`` tokens (:func:`.ranges`);
    for anything else this gives 0 and the caller parses the text instead.
    """
    count, end = 0, -1
    for token in str(text).split(","):
        try:
            numbers = [int(p) for p in token.split(":")]
        except ValueError:
            return 0
        if len(numbers) == 1:
            numbers.append(numbers[0] + 1)
        if len(numbers) != 2 or numbers[0] < end or numbers[1] <= numbers[0]:
            return 0
        count, end = count + numbers[1] - numbers[0], numbers[1]
    return count


def reproduction_problems(directory: str | pathlib.Path) -> list[str]:
    """Why exporting the recorded source and options of ``directory`` again is refused; [] if it is not.

    ``golden lint`` reproduces an export it may not trust, so before computing anything the
    recorded source is read with every bound of the export, its size is estimated against the
    cap, and the estimate's floor (what any such export writes at least) is held against the
    bytes the directory holds: an index that asks for more than its files can be is refused.
    The positions are counted before they are made, so a short index asking for millions of
    positions costs nothing either.
    """
    directory = pathlib.Path(directory)
    present = sum(p.stat().st_size for p in directory.rglob("*") if p.is_file() and not p.is_symlink())

    def too_large(floor: int, what: str) -> list[str]:
        if floor > MAX_EXPORT_BYTES:
            return [
                f"cannot reproduce: the recorded source and options would write at least {floor / 2**30:.1f} "
                f"GiB ({what}); an export may write at most {MAX_EXPORT_BYTES / 2**30:.0f} GiB"
            ]
        if floor > present:
            return [
                f"cannot reproduce: the recorded source and options export at least {floor} bytes ({what}), "
                f"but {directory} holds {present}: its index.json does not describe these files"
            ]
        return []

    try:
        index = json.loads((directory / "index.json").read_bytes())
        record = index["export"]
        plan = _plan(record["sourceRecord"])
        options = record["options"]
        count = _position_count(options["positions"]) if options["positions"] else 0
        layouts = len(set(options["layouts"]) & set(LAYOUTS))
        per_position = 16 * sum(layer.dim for layer in plan.rope) * layouts
        quick = too_large(per_position * count, f"cos/sin tables at {count} positions")
        if quick:
            return quick
        source, options = _recorded(directory)
        found = estimate(source, options)
        found.check()
    except ValueError as exc:
        return [f"cannot reproduce: {exc}"]
    except (KeyError, TypeError, AttributeError) as exc:
        return [f"cannot reproduce: index.json's export record is malformed ({type(exc).__name__}: {exc})"]
    return too_large(found.min_bytes, f"{found.values} values in {found.cases} cases")


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


def _unbounded(function: str, inputs: Mapping[str, Any]) -> str | None:
    """Why a stored case is beyond what an export writes (so recomputing it could run without bound)."""

    def size(value: Any) -> int:
        return len(value) if isinstance(value, list) else 1

    limits = {
        "rope_frequencies": [("dim", inputs.get("dim"), MAX_HEAD_DIM)],
        "alibi_slopes": [("num_heads", inputs.get("num_heads"), MAX_HEADS)],
        "t5_bucket": [
            ("num_buckets", inputs.get("num_buckets"), MAX_T5_BUCKETS),
            ("max_distance", inputs.get("max_distance"), MAX_DISTANCE),
        ],
        "alibi_bias": [
            (
                "slopes x q_positions x k_positions",
                size(inputs.get("slopes"))
                * size(inputs.get("q_positions"))
                * size(inputs.get("k_positions")),
                MAX_HEADS * SAMPLE * SAMPLE,
            )
        ],
    }
    for name, value, limit in limits.get(function, []):
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value <= limit:
            return f"{name} = {value!r} is beyond an export's bound {limit}"
    return None


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
                unbounded = _unbounded(spec.name, inputs)
                if unbounded:
                    problems.append(f"{doc['function']}.json: {case['id']}: not recomputed: {unbounded}")
                    continue
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
