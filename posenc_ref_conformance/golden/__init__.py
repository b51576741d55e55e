"""Golden vectors: language-neutral JSON files of exact expected values, and their tooling.

``vectors/*.json`` are the data (one canonical function per file, described by
``golden_schema_v1.json``); :func:`load` reads them for the runner.  The
generator and lint live in :mod:`.generate` and :mod:`.lint`, the export of
vectors for one model in :mod:`.export`; they need mpmath (and jsonschema for
lint) and are imported only when used.  An exported directory has the same
layout, a copy of the schema, and, for large arrays, ``.npy`` files under
``arrays/`` that the JSON files reference with their SHA-256.

A directory given to ``check --golden DIR`` is untrusted input: :func:`verify`
reads only what its index names, confined to it (plain ``NAME.json`` beside
``index.json``, ``arrays/NAME.npy``; no symbolic links, nothing but regular
files, sizes checked before reading), parses without trusting the JSON
(:func:`._format.loads`), validates every field the runner uses
(:mod:`.validate`), and reads the whole set into memory once: a file changed
during a run changes nothing.
"""

from __future__ import annotations

import hashlib
import os
import pathlib
import stat
from collections import Counter
from typing import Any

import numpy as np

from . import _format, _pin, validate
from .validate import GoldenError

GoldenError.__module__ = __name__  # golden.GoldenError, where callers import it from

__all__ = [
    "ARRAYS_DIR",
    "MAX_JSON_BYTES",
    "MAX_NPY_BYTES",
    "SCHEMA_PATH",
    "VECTORS_DIR",
    "GoldenError",
    "binary_references",
    "load",
    "load_index",
    "number_of_cases",
    "resolve_binary",
    "verify",
]

VECTORS_DIR = pathlib.Path(__file__).with_name("vectors")
#: The shipped set, whatever VECTORS_DIR is set to: the source of the canonical declarations.
_SHIPPED_DIR = VECTORS_DIR
SCHEMA_PATH = pathlib.Path(__file__).with_name("golden_schema_v1.json")
FORMAT_VERSIONS = (1,)
#: Sub-folder of a golden directory that holds its binary (``.npy``) arrays.
ARRAYS_DIR = "arrays"
#: Largest golden JSON file read.  The exporter's largest, with binary arrays (``--binary auto`` or
#: ``always``), is ``rope_cos_sin.json`` at its most positions (2**22): about 0.32 MB per case of 16384
#: positions (their values inline, twice), 256 chunks x 2 layouts x 2 regimes x 2 RoPE layer types,
#: about 0.65 GB.  Larger files (``--binary never`` exports of more than some 10**5 positions) are
#: refused before they are read: export them with ``--binary auto``.
MAX_JSON_BYTES = 2**30
#: Largest ``.npy`` file read: 16 x the exporter's largest array (one cos or sin table of 16384
#: positions x 1024 channels in float64, 128 MiB).
MAX_NPY_BYTES = 2**31

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_OPEN_FLAGS |= getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)
#: Files are opened relative to the directory's own descriptor where the platform allows (no path
#: component can be swapped for a link between the check and the open).
_DIR_FD = os.open in os.supports_dir_fd and os.lstat in os.supports_dir_fd and hasattr(os, "O_DIRECTORY")


class _Folder:
    """A directory whose files are read by plain name only: regular files, no links, bounded sizes."""

    def __init__(self, path: pathlib.Path, fd: int | None = None) -> None:
        self.path, self.fd = path, fd

    @classmethod
    def open(cls, path: pathlib.Path) -> _Folder:
        if not _DIR_FD:
            return cls(path)
        try:
            return cls(path, os.open(path, os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0)))
        except OSError as exc:
            msg = f"{path}: no such golden-vector directory ({exc.strerror or exc})"
            raise GoldenError(msg) from exc

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def __enter__(self) -> _Folder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _lstat(self, name: str) -> os.stat_result:
        return os.lstat(name, dir_fd=self.fd) if self.fd is not None else os.lstat(self.path / name)

    def kind(self, name: str) -> str | None:
        """``"file"``, ``"dir"``, ``"link"``, ``"other"`` (FIFO, device, socket) or None (absent)."""
        try:
            mode = self._lstat(name).st_mode
        except FileNotFoundError:
            return None
        if stat.S_ISLNK(mode):
            return "link"
        return "file" if stat.S_ISREG(mode) else "dir" if stat.S_ISDIR(mode) else "other"

    def names(self) -> list[str]:
        return sorted(os.listdir(self.fd if self.fd is not None else self.path))

    def sub(self, name: str) -> _Folder | None:
        """The sub-directory ``name`` (None when absent); a link or a file there is a GoldenError."""
        path = self.path / name
        found = self.kind(name)
        if found is None:
            return None
        if found != "dir":
            msg = f"{path}: must be a directory inside {self.path}, not a {_KIND_WORD[found]}"
            raise GoldenError(msg)
        if self.fd is None:
            return _Folder(path)
        flags = os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            return _Folder(path, os.open(name, flags, dir_fd=self.fd))
        except OSError as exc:
            msg = f"{path}: cannot be read ({exc.strerror or exc})"
            raise GoldenError(msg) from exc

    def read(self, name: str, what: str, limit: int) -> bytearray:
        """The bytes of the regular file ``name``: checked before it is opened, never blocking."""
        path = self.path / name
        try:
            found = self.kind(name)
            if found is None:
                raise FileNotFoundError(2, "No such file or directory")
        except OSError as exc:
            msg = f"{what} cannot be read ({exc.strerror or exc})"
            raise GoldenError(msg) from exc
        if found != "file":
            msg = f"{what} is a {_KIND_WORD[found]}, not a regular file inside {self.path}"
            raise GoldenError(msg)
        try:
            fd = (
                os.open(name, _OPEN_FLAGS, dir_fd=self.fd)
                if self.fd is not None
                else os.open(path, _OPEN_FLAGS)
            )
        except OSError as exc:  # a link put in its place since (O_NOFOLLOW: ELOOP), or gone
            msg = f"{what} cannot be read ({exc.strerror or exc})"
            raise GoldenError(msg) from exc
        try:
            info = os.fstat(fd)
            if not stat.S_ISREG(info.st_mode):
                msg = f"{what} is not a regular file"
                raise GoldenError(msg)
            if info.st_size > limit:
                msg = f"{what} holds {info.st_size} bytes, over the {limit} a golden file may have"
                raise GoldenError(msg)
            data = bytearray(info.st_size)
            view, done = memoryview(data), 0
            while done < info.st_size:
                got = os.readv(fd, [view[done:]]) if hasattr(os, "readv") else _read_into(fd, view[done:])
                if not got:
                    break
                done += got
            if done != info.st_size or os.read(fd, 1):
                msg = f"{what} changed while it was read"
                raise GoldenError(msg)
            return data
        except OSError as exc:
            msg = f"{what} cannot be read ({exc.strerror or exc})"
            raise GoldenError(msg) from exc
        finally:
            os.close(fd)


_KIND_WORD = {"link": "symbolic link", "dir": "directory", "other": "FIFO, device or socket"}


def _read_into(fd: int, view: memoryview) -> int:
    chunk = os.read(fd, len(view))
    view[: len(chunk)] = chunk
    return len(chunk)


def load_index(directory: pathlib.Path = VECTORS_DIR) -> dict[str, Any]:
    """The manifest ``index.json`` (parsed, not verified)."""
    with _Folder.open(pathlib.Path(directory)) as folder:
        return _parse(folder, "index.json")[1]


def _parse(folder: _Folder, name: str) -> tuple[bytes, Any]:
    path = folder.path / name
    data = bytes(folder.read(name, f"{path}:", MAX_JSON_BYTES))
    try:
        return data, _format.loads(data)
    except ValueError as exc:
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


def _binary_name(obj: dict[str, Any]) -> str:
    """The file name (under ``arrays/``) a binary reference names, or a GoldenError saying why not."""
    name = obj.get("file")
    parts = name.split("/") if isinstance(name, str) else []
    if (
        len(parts) != 2
        or parts[0] != ARRAYS_DIR
        or not parts[1].endswith(".npy")
        or parts[1] in (".npy", "..npy")
        or "\\" in name
        or "\0" in name
    ):
        msg = f"binary array file {name!r:.120} must be {ARRAYS_DIR}/NAME.npy"
        raise GoldenError(msg)
    return parts[1]


def _read_binary(arrays: _Folder | None, obj: dict[str, Any]) -> np.ndarray:
    """The checked contents of the file a binary reference names (read-only), kept in ``obj``."""
    name = _binary_name(obj)
    if arrays is None:
        msg = f"its binary array {obj['file']} cannot be read (no {ARRAYS_DIR}/ directory)"
        raise GoldenError(msg)
    data = arrays.read(name, f"its binary array {arrays.path / name}", MAX_NPY_BYTES)
    try:
        array = _format.read_npy(data, obj)
    except ValueError as exc:
        raise GoldenError(str(exc)) from exc
    array.flags.writeable = False
    obj[_format.RESOLVED] = array
    return array


def resolve_binary(directory: pathlib.Path, obj: dict[str, Any], where: pathlib.Path) -> pathlib.Path:
    """Check the file a binary reference names (place, hash, header) and keep its contents in ``obj``.

    ``obj[_format.RESOLVED]`` becomes the array (read-only, in memory; never written to JSON), which
    :func:`._format.decode` copies.  Returns the file's path.
    """
    try:
        with _Folder.open(pathlib.Path(directory)) as folder:
            arrays = folder.sub(ARRAYS_DIR)
            try:
                _read_binary(arrays, obj)
            finally:
                if arrays is not None:
                    arrays.close()
    except GoldenError as exc:
        msg = f"{where}: {exc}"
        raise GoldenError(msg) from exc
    return pathlib.Path(directory) / ARRAYS_DIR / _binary_name(obj)


#: The canonical declarations (:func:`.validate.declarations`), from the shipped set once read.
_DECLARATIONS: dict[str, validate.Declaration] = {}


def _declarations() -> dict[str, validate.Declaration]:
    if not _DECLARATIONS:
        verify(_SHIPPED_DIR)  # fills _DECLARATIONS from the pinned set
    return _DECLARATIONS


def number_of_cases(docs: list[dict[str, Any]]) -> int:
    """How many golden cases ``docs`` (from :func:`verify`) hold: 0 for a valid set that tests nothing."""
    return sum(len(doc["cases"]) for doc in docs)


def verify(directory: pathlib.Path = VECTORS_DIR) -> list[dict[str, Any]]:
    """Every golden file of ``directory``, parsed, in memory, once the set is proven intact and well-formed.

    Checks: ``index.json`` parses (and, for the shipped set, has the SHA-256
    pinned in ``_pin.py``); every file it lists is a plain ``NAME.json`` beside it,
    a regular file (no link), exists, has the listed SHA-256, parses, holds the
    listed function and case count, and carries a correct self-checksum; every
    field of every file and case is what the runner needs, with tolerances within
    their function's bounds (:mod:`.validate`); case ids are unique across files;
    the directory holds no unlisted ``.json`` file; ``totalCases`` and
    ``casesPerScheme`` add up; every binary array's file is a regular file under
    ``arrays/`` with the recorded SHA-256, dtype and shape, and no unreferenced
    file lies there.  Binary arrays are read here, once, into the documents
    (:func:`resolve_binary`): nothing is read during the run.  The first problem
    is a :class:`GoldenError` naming the file (and the case and field).  A set of
    zero cases is valid (:func:`number_of_cases` says so).  (``posenc-ref golden
    lint`` checks much more, including byte-for-byte reproduction, and needs mpmath.)
    """
    directory = pathlib.Path(directory)
    if not directory.is_dir():
        msg = f"{directory}: no such golden-vector directory"
        raise GoldenError(msg)
    with _Folder.open(directory) as folder:
        return _verify(folder)


def _verify(folder: _Folder) -> list[dict[str, Any]]:
    directory = folder.path
    index_path = directory / "index.json"
    index_bytes, index = _parse(folder, "index.json")
    resolved = directory.resolve()
    pinned = resolved in (VECTORS_DIR.resolve(), _SHIPPED_DIR.resolve())
    if pinned and hashlib.sha256(index_bytes).hexdigest() != _pin.INDEX_SHA256:
        msg = f"{index_path}: differs from the index this version of posenc-ref shipped (edited?)"
        raise GoldenError(msg)
    if not isinstance(index, dict) or index.get("formatVersion") not in FORMAT_VERSIONS:
        msg = f"{index_path}: formatVersion must be one of {list(FORMAT_VERSIONS)}"
        raise GoldenError(msg)
    validate.check_index(index, str(index_path))
    parsed = []
    for entry in index["files"]:
        path = directory / entry["file"]
        data, doc = _parse(folder, entry["file"])
        if hashlib.sha256(data).hexdigest() != entry["sha256"]:
            msg = f"{path}: its SHA-256 differs from index.json's (edited or truncated?)"
            raise GoldenError(msg)
        checksum = doc.get("checksum") if isinstance(doc, dict) else None
        recorded = checksum.get("value", "") if isinstance(checksum, dict) else ""
        if not isinstance(recorded, str) or not recorded or _format.checksum_of(data, recorded) != recorded:
            msg = f"{path}: its own checksum is wrong (edited?)"
            raise GoldenError(msg)
        cases = doc.get("cases")
        if (
            doc.get("function") != entry["function"]
            or not isinstance(cases, list)
            or not isinstance(doc.get("numberOfCases"), int)
            or len(cases) != doc["numberOfCases"]
        ):
            msg = f"{path}: function or number of cases differs from the file's header"
            raise GoldenError(msg)
        if len(cases) != entry["numberOfCases"]:
            msg = f"{path}: holds {len(cases)} cases; index.json lists {entry['numberOfCases']}"
            raise GoldenError(msg)
        parsed.append((path, doc))
    if pinned and not _DECLARATIONS and resolved == _SHIPPED_DIR.resolve():
        _DECLARATIONS.update(validate.declarations(index, [doc for _, doc in parsed]))
    known = _DECLARATIONS if pinned and _DECLARATIONS else _declarations()
    validate.check_entries(index, str(index_path), known)
    arrays = folder.sub(ARRAYS_DIR)
    try:
        return _check_files(folder, arrays, index, parsed, known)
    finally:
        if arrays is not None:
            arrays.close()


def _check_files(
    folder: _Folder,
    arrays: _Folder | None,
    index: dict[str, Any],
    parsed: list[tuple[pathlib.Path, dict[str, Any]]],
    known: dict[str, validate.Declaration],
) -> list[dict[str, Any]]:
    directory = folder.path
    binaries: set[str] = set()

    def read_binary(obj: dict[str, Any], where: str) -> np.ndarray:
        binaries.add(_binary_name(obj))
        return _read_binary(arrays, obj)

    seen: dict[str, str] = {}
    per_scheme: Counter[str] = Counter()
    for path, doc in parsed:
        validate.check_file(doc, str(path), known, read_binary)
        for case in doc["cases"]:
            if case["id"] in seen:
                msg = f"{path}: case id {case['id']!r} is duplicated (also in {seen[case['id']]})"
                raise GoldenError(msg)
            seen[case["id"]] = path.name
        per_scheme[doc["scheme"]] += len(doc["cases"])
    listed = {entry["file"] for entry in index["files"]}
    names = folder.names()
    extra = [
        n
        for n in names
        if n.endswith(".json") and n not in ("index.json", SCHEMA_PATH.name) and n not in listed
    ]
    if extra:
        msg = f"{directory}: holds {extra}, which index.json does not list"
        raise GoldenError(msg)
    stray = [n for n in arrays.names() if n not in binaries] if arrays is not None else []
    if stray:
        msg = f"{directory / ARRAYS_DIR}: holds {stray}, which no golden file references"
        raise GoldenError(msg)
    index_path = directory / "index.json"
    if index["totalCases"] != len(seen):
        msg = f"{index_path}: totalCases {index['totalCases']} but the files hold {len(seen)} cases"
        raise GoldenError(msg)
    if "casesPerScheme" in index and index["casesPerScheme"] != dict(per_scheme):
        msg = f"{index_path}: casesPerScheme {index['casesPerScheme']} but the files hold {dict(per_scheme)}"
        raise GoldenError(msg)
    return [doc for _, doc in parsed]


def load(directory: pathlib.Path = VECTORS_DIR) -> list[dict[str, Any]]:
    """Every golden file listed in the manifest, verified (see :func:`verify`), in manifest order."""
    return verify(directory)
