"""``posenc-ref golden lint``: prove the golden files are valid, unique, counted, intact and reproducible.

Checks, in order: every file validates against ``golden_schema_v1.json``; the
function matches the file name and the manifest; case ids are unique across
files and start with their function; ``numberOfCases`` and the manifest counts
and hashes are right; hex and decimal values agree and fill their shapes; every
flag has a note and every note a flag; each file is in canonical layout with a
correct checksum; the set stays under 20 MB; regenerating reproduces every
byte; and recomputing at higher precision gives the same float64 bits.

An exported directory (``golden export``; its ``index.json`` has an ``export``
record) is linted the same way, except: its binary arrays are checked against
their files (place, SHA-256, dtype, shape, finiteness), the size limit and the
two-cases-per-flag rule (catalogue rules) do not apply, reproducing means
exporting the recorded source and options again, and large cos/sin tables are
recomputed on sampled rows (see :func:`.export.recheck`).

An exported directory may come from anyone, so its recorded source is reproduced only
when it can be bounded (:func:`.export.reproduction_problems`): the source is read with
every bound of ``golden export``, the export's size is estimated against its cap, and
that estimate's floor must not exceed the bytes the directory holds; otherwise the
problem is ``cannot reproduce: ...``, found without computing anything.  A stored case
beyond an export's bounds is not recomputed either (a problem, ``not recomputed: ...``).
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import pathlib
import stat
from collections.abc import Callable
from typing import Any

import numpy as np

from . import (
    ARRAYS_DIR,
    MAX_JSON_BYTES,
    MAX_NPY_BYTES,
    SCHEMA_PATH,
    VECTORS_DIR,
    GoldenError,
    _format,
    binary_references,
    resolve_binary,
)

__all__ = ["MAX_BYTES", "lint"]

MAX_BYTES = 20 * 1024 * 1024


def _validator() -> Any:
    import jsonschema

    schema = json.loads(SCHEMA_PATH.read_text(encoding="ascii"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _arrays(node: Any) -> list[dict[str, Any]]:
    if isinstance(node, dict):
        if "dtype" in node and "shape" in node:
            return [node]
        return [a for v in node.values() for a in _arrays(v)]
    if isinstance(node, list):
        return [a for v in node for a in _arrays(v)]
    return []


def _check_arrays(name: str, case: dict[str, Any]) -> list[str]:
    problems = []
    for array in _arrays(case):
        if _format.is_binary(array):
            continue  # checked against its file by resolve_binary
        size = math.prod(array["shape"])
        values = array.get("hex", array.get("values", []))
        if len(values) != size:
            problems.append(
                f"{name}: {case['id']}: an array has {len(values)} values for shape {array['shape']}"
            )
        if array["dtype"] == "float64" and any(
            float.fromhex(h) != d for h, d in zip(array["hex"], array["decimal"], strict=False)
        ):
            problems.append(f"{name}: {case['id']}: hex and decimal values disagree")
        if array["dtype"] == "float64" and len(array["decimal"]) != size:
            problems.append(
                f"{name}: {case['id']}: {len(array['decimal'])} decimals for shape {array['shape']}"
            )
    return problems


def _check_phase(name: str, case: dict[str, Any]) -> list[str]:
    """A case's phase data broadcasts to each output: positions x one frequency per output column."""
    phase = case.get("phase")
    if phase is None:
        return []
    angle = (math.prod(phase["frequencies"]["shape"]),)
    grid = (*phase["positions"]["shape"], *angle)
    problems = []
    for output, array in case["expected"].items():
        try:
            np.broadcast_shapes(tuple(grid), tuple(array["shape"]))
        except ValueError:
            problems.append(
                f"{name}: {case['id']}: phase grid {grid} does not fit output {output} {array['shape']}"
            )
        if tuple(array["shape"][-1:]) != angle or len(grid) > len(array["shape"]):
            problems.append(f"{name}: {case['id']}: phase frequencies do not match the columns of {output}")
    return problems


def _check_file(path: pathlib.Path, data: bytes, doc: dict[str, Any], seen: dict[str, str]) -> list[str]:
    name = path.name
    problems = []
    if doc.get("function") + ".json" != name:
        problems.append(f"{name}: holds function {doc.get('function')!r}")
    if doc["numberOfCases"] != len(doc["cases"]):
        problems.append(f"{name}: numberOfCases {doc['numberOfCases']} != {len(doc['cases'])} cases")
    used = set()
    for case in doc["cases"]:
        if case["id"] in seen:
            problems.append(f"{name}: duplicate id {case['id']} (also in {seen[case['id']]})")
        seen[case["id"]] = name
        if not case["id"].startswith(doc["function"] + "/"):
            problems.append(f"{name}: id {case['id']} does not start with {doc['function']}/")
        used.update(case["flags"])
        problems += _check_arrays(name, case)
        problems += _check_phase(name, case)
    if used != set(doc["notes"]):
        problems.append(
            f"{name}: flags without notes {sorted(used - set(doc['notes']))}, "
            f"notes without flags {sorted(set(doc['notes']) - used)}"
        )
    if _format.dumps(doc) != data:
        problems.append(f"{name}: not in canonical layout, or its checksum is wrong")
    if _format.checksum_of(data, doc["checksum"]["value"]) != doc["checksum"]["value"]:
        problems.append(f"{name}: checksum mismatch")
    return problems


#: Every flag names a bug or convention; fewer cases than this behind one and it hangs on a single case.
MIN_CASES_PER_FLAG = 2


def _thin_flags(docs: dict[str, tuple[bytes, dict[str, Any]]]) -> list[str]:
    """Flags used by fewer than MIN_CASES_PER_FLAG cases across every file."""
    counts: dict[str, int] = {}
    for _, doc in docs.values():
        for case in doc["cases"]:
            for flag in case["flags"]:
                counts[flag] = counts.get(flag, 0) + 1
    return [
        f"flag {flag} has {n} case(s); every flag needs at least {MIN_CASES_PER_FLAG} independent cases"
        for flag, n in sorted(counts.items())
        if n < MIN_CASES_PER_FLAG
    ]


def _check_index(directory: pathlib.Path, docs: dict[str, tuple[bytes, dict[str, Any]]]) -> list[str]:
    index_bytes = (directory / "index.json").read_bytes()
    index = _format.loads(index_bytes)
    problems = []
    listed = {entry["file"]: entry for entry in index["files"]}
    if set(listed) != set(docs):
        problems.append(f"index.json lists {sorted(listed)}; the directory holds {sorted(docs)}")
    for file, entry in listed.items():
        if file not in docs:
            continue
        data, doc = docs[file]
        if entry["sha256"] != hashlib.sha256(data).hexdigest():
            problems.append(f"index.json: sha256 of {file} is wrong")
        if entry["numberOfCases"] != len(doc["cases"]) or entry["function"] != doc["function"]:
            problems.append(f"index.json: entry of {file} does not match the file")
    if index["totalCases"] != sum(len(d["cases"]) for _, d in docs.values()):
        problems.append("index.json: totalCases is wrong")
    if _format.dumps(index) != index_bytes:
        problems.append("index.json: not in canonical layout")
    return problems


def _precision_problems(
    docs: dict[str, tuple[bytes, dict[str, Any]]], log: Callable[[str], None]
) -> list[str]:
    from .. import oracle
    from . import generate

    log(f"recomputing every expected value at {oracle.CHECK_DIGITS} digits ...")
    problems = []
    for name, data in generate.build(oracle.CHECK_DIGITS).items():
        if name == "index.json":
            continue
        fresh = json.loads(data)
        for old, new in zip(docs[name][1]["cases"], fresh["cases"], strict=True):
            if old.get("expected") != new.get("expected") or old.get("acceptable") != new.get("acceptable"):
                problems.append(
                    f"{name}: {old['id']}: float64 rounding differs at {oracle.CHECK_DIGITS} digits"
                )
    return problems


def lint(
    directory: pathlib.Path = VECTORS_DIR,
    *,
    reproduce: bool = True,
    precision: bool = True,
    log: Callable[[str], None] = lambda message: None,
) -> list[str]:
    """Every problem found (an empty list means the golden set is clean).

    An untrusted directory is never followed out of itself nor read without
    bounds: every entry of it (and of ``arrays/``) must be a regular file within
    the size ``check --golden`` accepts (no links, FIFOs or devices), or that is
    the one problem reported and nothing is read; files are parsed with the
    golden reader's bounded parser (depth, no NaN); an exported set is
    reproduced only when its recorded source is within the export's bounds.
    """
    directory = pathlib.Path(directory)
    unsafe = _unsafe_entries(directory)
    if unsafe:
        return unsafe
    validator = _validator()
    docs: dict[str, tuple[bytes, dict[str, Any]]] = {}
    problems: list[str] = []
    seen: dict[str, str] = {}
    total = 0
    for path in sorted(p for p in directory.glob("*.json") if p.name != SCHEMA_PATH.name):
        data = path.read_bytes()
        total += len(data)
        try:
            doc = _format.loads(data)
        except ValueError as exc:
            problems.append(f"{path.name}: {exc}")
            continue
        problems += [
            f"{path.name}: schema: {e.message[:200]} at {'/'.join(map(str, e.absolute_path))}"
            for e in validator.iter_errors(doc)
        ]
        if path.name != "index.json" and not problems:
            docs[path.name] = (data, doc)
            problems += _check_file(path, data, doc, seen)
    if problems:
        return problems
    problems += _check_index(directory, docs)
    exported = "export" in _format.loads((directory / "index.json").read_bytes())
    if exported:
        problems += _binary_problems(directory, docs)
    else:
        problems += _thin_flags(docs)
        if total > MAX_BYTES:
            problems.append(f"golden files take {total} bytes, over the {MAX_BYTES} limit")
    log(f"{len(docs)} files, {len(seen)} cases, {total} bytes of JSON: structure OK")
    if problems:
        return problems
    if reproduce:
        if exported:
            from . import export

            refused = export.reproduction_problems(directory)  # bounds and size first: never unbounded work
            if refused:
                problems += refused
            else:
                log("exporting again to compare bytes ...")
                problems += [f"{name}: differs from a fresh export" for name in export.check(directory)]
        else:
            from . import generate

            log("regenerating to compare bytes ...")
            problems += [f"{name}: differs from a fresh generation" for name in generate.check(directory)]
    if precision:
        if exported:
            from . import export

            problems += export.recheck([doc for _, doc in docs.values()], log)
        else:
            problems += _precision_problems(docs, log)
    return problems


def _unsafe_entries(directory: pathlib.Path) -> list[str]:
    """The entries of ``directory`` and its ``arrays/`` that lint must not read (empty: all safe)."""
    problems = []
    for folder in (directory, directory / ARRAYS_DIR):
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(mode):
            problems.append(f"{folder.name}: not a directory (a link or a file); not read")
            continue
        for entry in sorted(os.scandir(folder), key=lambda e: e.name):
            info = entry.stat(follow_symlinks=False)
            if folder == directory and entry.name == ARRAYS_DIR:
                continue
            limit = MAX_NPY_BYTES if folder != directory else MAX_JSON_BYTES
            if not stat.S_ISREG(info.st_mode):
                problems.append(f"{entry.name}: not a regular file (a link, FIFO or device); not read")
            elif info.st_size > limit:
                problems.append(
                    f"{entry.name}: {info.st_size} bytes, over the {limit} a golden file may hold"
                )
    return problems


def _binary_problems(directory: pathlib.Path, docs: dict[str, tuple[bytes, dict[str, Any]]]) -> list[str]:
    """Each binary array's file checked (and resolved for decoding); unreferenced .npy files."""
    problems, used = [], set()
    for name, (_, doc) in docs.items():
        for ref in binary_references(doc["cases"]):
            try:
                used.add(resolve_binary(directory, ref, directory / name).name)
            except GoldenError as exc:
                problems.append(str(exc))
    stray = sorted(p.name for p in (directory / ARRAYS_DIR).glob("*") if p.name not in used)
    if stray:
        problems.append(f"{ARRAYS_DIR}/ holds files no golden file references: {stray}")
    return problems
