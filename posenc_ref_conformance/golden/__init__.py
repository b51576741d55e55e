"""Golden vectors: language-neutral JSON files of exact expected values, and their tooling.

``vectors/*.json`` are the data (one canonical function per file, described by
``golden_schema_v1.json``); :func:`load` reads them for the runner.  The
generator and lint live in :mod:`.generate` and :mod:`.lint`, the export of
vectors for one model in :mod:`.export`; they need mpmath (and jsonschema for
lint) and are imported only when used.  An exported directory has the same
layout, a copy of the schema, and, for large arrays, ``.npy`` files under
``arrays/`` that the JSON files reference with their SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import pathlib
from typing import Any

from . import _format, _pin

__all__ = [
    "ARRAYS_DIR",
    "SCHEMA_PATH",
    "VECTORS_DIR",
    "GoldenError",
    "binary_references",
    "load",
    "load_index",
    "resolve_binary",
    "verify",
]

VECTORS_DIR = pathlib.Path(__file__).with_name("vectors")
SCHEMA_PATH = pathlib.Path(__file__).with_name("golden_schema_v1.json")
FORMAT_VERSIONS = (1,)
#: Sub-folder of a golden directory that holds its binary (``.npy``) arrays.
ARRAYS_DIR = "arrays"


class GoldenError(ValueError):
    """The golden vectors are damaged, incomplete or edited: the suite refuses to run on them."""


def load_index(directory: pathlib.Path = VECTORS_DIR) -> dict[str, Any]:
    """The manifest ``index.json`` (parsed, not verified)."""
    return json.loads((directory / "index.json").read_text(encoding="ascii"))


def _read(path: pathlib.Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        msg = f"{what} cannot be read ({exc.strerror or exc})"
        raise GoldenError(msg) from exc


def _parse(path: pathlib.Path) -> tuple[bytes, Any]:
    data = _read(path, f"{path}:")
    try:
        return data, json.loads(data.decode("ascii"))
    except (UnicodeDecodeError, ValueError) as exc:
        msg = f"{path}: not a valid golden JSON file (truncated or edited?): {exc}"
        raise GoldenError(msg) from exc


def binary_references(node: Any) -> list[dict[str, Any]]:
    """Every binary array reference (``{"file": ...}``) inside a parsed golden document."""
    if _format.is_binary(node):
        return [node]
    if isinstance(node, dict):
        return [r for v in node.values() for r in binary_references(v)]
    if isinstance(node, list) and any(isinstance(v, (dict, list)) for v in node):
        return [r for v in node for r in binary_references(v)]
    return []


def resolve_binary(directory: pathlib.Path, obj: dict[str, Any], where: pathlib.Path) -> pathlib.Path:
    """Check the file a binary reference names (place, hash, header) and record its path in ``obj``."""
    name = obj.get("file")
    parts = pathlib.PurePosixPath(name).parts if isinstance(name, str) else ()
    if len(parts) != 2 or parts[0] != ARRAYS_DIR or not parts[1].endswith(".npy"):
        msg = f"{where}: binary array file {name!r} must be {ARRAYS_DIR}/NAME.npy"
        raise GoldenError(msg)
    path = directory / ARRAYS_DIR / parts[1]
    data = _read(path, f"{where}: its binary array {path}")
    try:
        _format.read_npy(data, obj)
    except ValueError as exc:
        msg = f"{where}: {exc}"
        raise GoldenError(msg) from exc
    obj[_format.RESOLVED] = str(path)
    return path


def verify(directory: pathlib.Path = VECTORS_DIR) -> list[dict[str, Any]]:
    """Every golden file of ``directory``, parsed, after proving the set is intact.

    Checks: ``index.json`` parses (and, for the shipped set, has the SHA-256
    pinned in ``_pin.py``); every file it lists exists, has the listed SHA-256,
    parses, holds the listed function and case count, and carries a correct
    self-checksum; case ids are unique across files; the directory holds no
    unlisted ``.json`` file; ``totalCases`` adds up; every binary array's file
    exists under ``arrays/`` with the recorded SHA-256, dtype and shape, and no
    unreferenced ``.npy`` file lies there.  The first problem is a
    :class:`GoldenError` naming the file.  (``posenc-ref golden lint`` checks much
    more, including the schema and byte-for-byte reproduction, and needs mpmath.)
    """
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        msg = f"{directory}: no such golden-vector directory"
        raise GoldenError(msg)
    index_path = directory / "index.json"
    index_bytes, index = _parse(index_path)
    if (
        directory.resolve() == VECTORS_DIR.resolve()
        and hashlib.sha256(index_bytes).hexdigest() != _pin.INDEX_SHA256
    ):
        msg = f"{index_path}: differs from the index this version of posenc-ref shipped (edited?)"
        raise GoldenError(msg)
    if not isinstance(index, dict) or index.get("formatVersion") not in FORMAT_VERSIONS:
        msg = f"{index_path}: formatVersion must be one of {list(FORMAT_VERSIONS)}"
        raise GoldenError(msg)
    docs, seen, binaries = [], {}, set()
    listed = {entry["file"] for entry in index.get("files", [])}
    for entry in index.get("files", []):
        path = directory / entry["file"]
        data, doc = _parse(path)
        if hashlib.sha256(data).hexdigest() != entry.get("sha256"):
            msg = f"{path}: its SHA-256 differs from index.json's (edited or truncated?)"
            raise GoldenError(msg)
        recorded = doc.get("checksum", {}).get("value", "") if isinstance(doc, dict) else ""
        if not recorded or _format.checksum_of(data, recorded) != recorded:
            msg = f"{path}: its own checksum is wrong (edited?)"
            raise GoldenError(msg)
        cases = doc.get("cases", [])
        if doc.get("function") != entry.get("function") or len(cases) != doc.get("numberOfCases"):
            msg = f"{path}: function or number of cases differs from the file's header"
            raise GoldenError(msg)
        if len(cases) != entry.get("numberOfCases"):
            msg = f"{path}: holds {len(cases)} cases; index.json lists {entry.get('numberOfCases')}"
            raise GoldenError(msg)
        for case in cases:
            if case["id"] in seen:
                msg = f"{path}: case id {case['id']!r} is duplicated (also in {seen[case['id']]})"
                raise GoldenError(msg)
            seen[case["id"]] = path.name
        binaries.update(resolve_binary(directory, ref, path).name for ref in binary_references(cases))
        docs.append(doc)
    extra = sorted(
        p.name
        for p in directory.glob("*.json")
        if p.name not in ("index.json", SCHEMA_PATH.name) and p.name not in listed
    )
    if extra:
        msg = f"{directory}: holds {extra}, which index.json does not list"
        raise GoldenError(msg)
    stray = sorted(p.name for p in (directory / ARRAYS_DIR).glob("*") if p.name not in binaries)
    if stray:
        msg = f"{directory / ARRAYS_DIR}: holds {stray}, which no golden file references"
        raise GoldenError(msg)
    if index.get("totalCases") != len(seen):
        msg = f"{index_path}: totalCases {index.get('totalCases')} but the files hold {len(seen)} cases"
        raise GoldenError(msg)
    return docs


def load(directory: pathlib.Path = VECTORS_DIR) -> list[dict[str, Any]]:
    """Every golden file listed in the manifest, verified (see :func:`verify`), in manifest order."""
    return verify(directory)
