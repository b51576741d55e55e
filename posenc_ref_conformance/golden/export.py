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
from ..oracle._fast import rope_cos_sin_table
from . import ARRAYS_DIR, SCHEMA_PATH, VECTORS_DIR, _format, binary_references, generate
from .cases import Case, F, I
from .functions import FUNCTIONS, shape_of
from .hf_config import ConfigError, ModelPlan, RopeLayer, plan_from_scaling, read_config
from .notes import NOTES, add_note
from .schema import schema_bytes

__all__ = [
    "CHUNK",
    "ExportOptions",
    "build",
    "check",
    "export",
    "parse_positions",
    "recheck",
    "source_from_config",
    "source_from_scaling",
    "summary",
]

#: Positions per rope_cos_sin case (one adapter call): 16384 x 128 float64 is 16 MiB per output.
CHUNK = 16384
#: Positions per fast cos/sin table (shared by the chunks it covers): 8 chunks.
_TABLE_ROWS = 8 * CHUNK
#: Arrays with more elements than this are written as .npy files (``binary="auto"``).
BINARY_THRESHOLD = 65536
#: Most positions in a rotation (rope, apply_rope) or ALiBi bias case.
SAMPLE = 64
#: Most positions an export takes.
MAX_POSITIONS = 2**22
#: Rows of a large cos/sin table that lint recomputes at check precision (plus the first and last).
CHECK_ROWS = 30
LAYOUTS = ("half", "interleaved")
FORMS = ("symmetric", "causal")
_LAYOUT_FLAG = {"half": "HalfLayout", "interleaved": "InterleavedLayout"}
_FORM_FLAG = {"symmetric": "AlibiSymmetric", "causal": "AlibiCausalForm"}
_BASE_POSITIONS = (0, 1, 2, 3, 255, 256, 1023, 1024)

if "ModelExport" not in NOTES:
    add_note(
        "ModelExport",
        "Functionality",
        "Exported for one model by 'posenc-ref golden export': its config's parameters at the positions "
        "asked for and around its original and extended context edges (the file's provenance names the "
        "config's SHA-256 and the options).",
    )


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
            "positions": _ranges(self.positions),
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


def _ranges(positions: Sequence[int]) -> str:
    """The shortest comma-separated form of sorted distinct positions (single values and ranges)."""
    out, start = [], 0
    values = list(positions)
    while start < len(values):
        end = start
        while end + 1 < len(values) and values[end + 1] == values[end] + 1:
            end += 1
        if end - start >= 2:
            out.append(f"{values[start]}:{values[end] + 1}")
        else:
            out.extend(str(v) for v in values[start : end + 1])
        start = end + 1
    return ",".join(out)


def _default_positions(edges: Iterable[int]) -> list[int]:
    found = set(_BASE_POSITIONS)
    for edge in edges:
        found.update(p for p in (edge - 1, edge, edge + 1) if 0 <= p < 2**53)
    return sorted(found)


def _sample(positions: Sequence[int], edges: Sequence[int]) -> list[int]:
    """At most SAMPLE positions: all if few, else the defaults among them and an even spread."""
    if len(positions) <= SAMPLE:
        return list(positions)
    present = set(positions)
    keep = [p for p in _default_positions(edges) if p in present][: SAMPLE // 2]
    rest = SAMPLE - len(keep)
    spread = [positions[round(k * (len(positions) - 1) / max(rest - 1, 1))] for k in range(rest)]
    return sorted(set(keep) | set(spread))


def _seeded(seed: str, shape: tuple[int, ...]) -> list[Any]:
    """Dyadic q/k values k/64, |k| <= 256: exact in float32 and float64 (as the shipped cases)."""
    rng = random.Random(seed)

    def build(dims: tuple[int, ...]) -> Any:
        return rng.randint(-256, 256) / 64 if not dims else [build(dims[1:]) for _ in range(dims[0])]

    return build(shape)


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


# --- the cases of one RoPE layer type ------------------------------------------------------------------


def _rounded_frequencies(layer: RopeLayer, seq_len: int | None) -> tuple[list[float], float]:
    inv, factor = oracle.rope.rope_frequencies(
        layer.dim, base=layer.base, scaling=layer.scaling, seq_len=seq_len
    )
    return [oracle.round_float64(t) for t in inv], oracle.round_float64(factor)


def _regimes(layer: RopeLayer, positions: Sequence[int]) -> list[tuple[str, int | None, list[int]]]:
    """(name, seq_len, positions) for each set of frequencies the positions need.

    LongRoPE (``original_max``) and dynamic NTK (``max_position_embeddings``) change
    their frequencies with the sequence length: positions below the threshold are also
    exported with the short (unscaled) frequencies, and every position with those of a
    sequence that holds them all (``seq_len = max + 1``) when that crosses it.
    """
    key = {"longrope": "original_max_position_embeddings", "dynamic": "max_position_embeddings"}
    if layer.rope_type not in key:
        return [("seq-len-none", None, list(positions))]
    threshold = int(layer.scaling[key[layer.rope_type]])
    out = []
    short = [p for p in positions if p < threshold]
    if short:
        out.append(("seq-len-none", None, short))
    if positions[-1] + 1 > threshold:
        out.append((f"seq-len-{positions[-1] + 1}", positions[-1] + 1, list(positions)))
    return out


class _Builder:
    """Collects the cases of an export and the fast evaluations of its cos/sin cases."""

    def __init__(self, options: ExportOptions) -> None:
        self.options = options
        self.cases: list[Case] = []
        self.compute: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {}

    def add(
        self, id: str, comment: str, flags: Sequence[str], compare: str | None = None, **inputs: Any
    ) -> None:
        self.cases.append(Case(id, comment, ("ModelExport", *flags), inputs, compare=compare))

    def rope_layer(self, layer: RopeLayer, positions: list[int], edges: list[int]) -> None:
        n = layer.name
        what = (
            f"{layer.rope_type} RoPE, base {layer.base:g}, {layer.dim} of {layer.head_dim} channels rotated"
        )
        seq_lens = {s for _, s, _ in _regimes(layer, positions)}
        if layer.rope_type == "longrope":
            original = int(layer.scaling["original_max_position_embeddings"])
            seq_lens |= {original, original + 1}
        elif layer.rope_type == "dynamic":
            limit = int(layer.scaling["max_position_embeddings"])
            seq_lens |= {limit, limit + 1}
        for seq_len in sorted(seq_lens, key=lambda s: -1 if s is None else s):
            self.add(
                f"rope_frequencies/{n}/seq-len-{'none' if seq_len is None else seq_len}",
                f"{what}; seq_len {seq_len}.",
                (),
                dim=layer.dim,
                base=layer.base,
                scaling=layer.scaling,
                seq_len=seq_len,
            )
        for regime, seq_len, selected in _regimes(layer, positions):
            inv, factor = _rounded_frequencies(layer, seq_len)
            large = ("LargePosition",) if selected[-1] >= 2**20 else ()
            for start in range(0, len(selected), CHUNK):
                chunk = selected[start : start + CHUNK]
                if start % _TABLE_ROWS == 0:
                    block = selected[start : start + _TABLE_ROWS]
                    uses = len(self.options.layouts) * -(-len(block) // CHUNK)
                    table = _LazyTable(block, inv, factor, uses)
                for layout in self.options.layouts:
                    id = f"rope_cos_sin/{n}/{layout}/{regime}/positions-{chunk[0]}-{chunk[-1]}"
                    self.add(
                        id,
                        f"{what}; {len(chunk)} positions {_ranges(chunk)[:60]}; "
                        f"frequencies of seq_len {seq_len}.",
                        (_LAYOUT_FLAG[layout], *large),
                        positions=I(chunk),
                        inv_freq=F(inv),
                        attention_factor=F(factor),
                        layout=layout,
                    )
                    self.compute[id] = table.expanded(layout, start % _TABLE_ROWS, len(chunk))
            self._rotations(layer, regime, seq_len, _sample(selected, edges), inv, factor, what)

    def _rotations(
        self,
        layer: RopeLayer,
        regime: str,
        seq_len: int | None,
        sample: list[int],
        inv: list[float],
        factor: float,
        what: str,
    ) -> None:
        """A seeded q/k [2 heads, S, head_dim] rotated end to end (rope) and by given cos/sin (apply_rope)."""
        shape = (2, len(sample), layer.head_dim)
        large = ("LargePosition",) if sample[-1] >= 2**20 else ()
        cos, sin = rope_cos_sin_table(sample, inv, factor)  # only the inputs of apply_rope
        for layout in self.options.layouts:
            tail = f"{layer.name}/{layout}/{regime}/seed-{self.options.seed}"
            where = f"{what}; x {list(shape)} seeded {self.options.seed} at {len(sample)} positions"
            flags = (
                (_LAYOUT_FLAG[layout], "PartialRotary")
                if layer.dim < layer.head_dim
                else (_LAYOUT_FLAG[layout],)
            )
            self.add(
                f"rope/{tail}",
                f"{where}; exact cos/sin of seq_len {seq_len}'s frequencies.",
                (*flags, *large),
                x=F(_seeded(f"{self.options.seed}/rope/{tail}", shape)),
                positions=I(sample),
                inv_freq=F(inv),
                attention_factor=F(factor),
                layout=layout,
            )
            c32, s32 = (_expand(t, layout).astype(np.float32).astype(np.float64).tolist() for t in (cos, sin))
            self.add(
                f"apply_rope/{tail}",
                f"{where}; cos/sin of seq_len {seq_len} rounded to float32 (exact inputs in both dtypes).",
                flags,
                x=F(_seeded(f"{self.options.seed}/apply_rope/{tail}", shape)),
                cos=F(c32),
                sin=F(s32),
                layout=layout,
            )

    def alibi(self, num_heads: int, max_bias: float, sample: list[int]) -> None:
        self.add(
            f"alibi_slopes/model/heads-{num_heads}",
            f"{num_heads} heads, max_bias {max_bias:g}.",
            (),
            num_heads=num_heads,
            max_bias=max_bias,
        )
        slopes = [oracle.round_float32(s) for s in oracle.alibi.alibi_slopes(num_heads, max_bias=max_bias)]
        for form in self.options.forms:
            self.add(
                f"alibi_bias/model/{form}/positions-{sample[0]}-{sample[-1]}",
                f"{num_heads} heads (float32 slopes), queries and keys at {len(sample)} positions.",
                (_FORM_FLAG[form],),
                compare="causal_rowshift" if form == "causal" else None,
                q_positions=I(sample),
                k_positions=I(sample),
                slopes=F(slopes),
                form=form,
            )

    def t5(self, num_buckets: int, max_distance: int, directions: Sequence[bool], sample: list[int]) -> None:
        relative = set(range(-2 * max_distance, 2 * max_distance + 1))
        relative |= {k - q for q in sample for k in sample}
        values = sorted(relative)
        for bidirectional in directions:
            kind = "bidirectional" if bidirectional else "causal"
            self.add(
                f"t5_bucket/model/{kind}/buckets-{num_buckets}-distance-{max_distance}",
                f"{num_buckets} buckets, max_distance {max_distance}, {len(values)} relative positions "
                f"(every key - query of the positions and -2D..2D).",
                ("T5Causal",) if not bidirectional else (),
                relative=I(values),
                bidirectional=bidirectional,
                num_buckets=num_buckets,
                max_distance=max_distance,
            )


def _expand(table: np.ndarray, layout: str) -> np.ndarray:
    """[S, n] -> [S, 2n] in the layout's channel order (as ``oracle.rope.rope_cos_sin``)."""
    return np.concatenate([table, table], axis=-1) if layout == "half" else np.repeat(table, 2, axis=-1)


class _LazyTable:
    """The fast cos/sin table of up to _TABLE_ROWS positions: computed at its first use, kept until its last.

    One table serves several chunks (its digit tables cost mpmath evaluations); rows are sliced per case.
    """

    def __init__(self, positions: list[int], inv: list[float], factor: float, uses: int) -> None:
        self.args = (positions, inv, factor)
        self.table: tuple[np.ndarray, np.ndarray] | None = None
        self.uses = uses

    def expanded(self, layout: str, start: int, count: int) -> Callable[[dict[str, Any]], dict[str, Any]]:
        rows = slice(start, start + count)

        def compute(inputs: dict[str, Any]) -> dict[str, Any]:
            table = self.table if self.table is not None else rope_cos_sin_table(*self.args)
            self.uses -= 1
            self.table = table if self.uses > 0 else None
            return {"cos": _expand(table[0][rows], layout), "sin": _expand(table[1][rows], layout)}

        return compute


# --- sources -------------------------------------------------------------------------------------------


def source_from_config(
    config: Mapping[str, Any] | str | pathlib.Path, *, name: str | None = None
) -> dict[str, Any]:
    """The source record of a ``config.json`` (a path, or a parsed mapping): the config and its SHA-256."""
    if isinstance(config, (str, pathlib.Path)):
        path = pathlib.Path(config)
        try:
            data = path.read_bytes()
        except OSError as exc:
            msg = f"hf_config {str(path)!r} cannot be read ({exc.strerror or exc})"
            raise ConfigError(msg) from exc
        try:
            parsed = json.loads(data)
        except ValueError as exc:
            msg = f"hf_config {str(path)!r} is not JSON: {exc}"
            raise ConfigError(msg) from exc
        name = name or path.name
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


def _bias_edges(config: Mapping[str, Any]) -> list[int]:
    keys = ("max_position_embeddings", "max_seq_len", "seq_length", "n_positions")
    return sorted({int(config[k]) for k in keys if isinstance(config.get(k), int) and config[k] > 0})


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
    builder = _Builder(options)
    if plan.rope:
        edges = sorted({e for layer in plan.rope for e in layer.edges()})
    else:
        edges = _bias_edges(source.get("config", {}))
    defaults = _default_positions(edges) if options.default_positions else []
    positions = sorted(set(options.positions) | set(defaults))
    with oracle.working_precision(digits):
        for layer in plan.rope:
            builder.rope_layer(layer, positions, edges)
        if plan.alibi is not None:
            builder.alibi(plan.alibi.num_heads, plan.alibi.max_bias, _sample(positions, edges))
        if plan.t5 is not None:
            builder.t5(
                plan.t5.num_buckets, plan.t5.max_distance, plan.t5.bidirectional, _sample(positions, edges)
            )
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
        "positions": {"count": len(positions), "values": _ranges(positions), "contextEdges": edges},
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
