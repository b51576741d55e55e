"""The golden-file format: value encodings, canonical serialisation, checksums.

A golden file is UTF-8 JSON.  Arrays are objects with a ``dtype``, a ``shape``
(row-major) and their elements flattened:

* float64: ``hex`` (C99 ``%a`` / Python ``float.hex``, exact) and ``decimal``
  (JSON numbers, the shortest decimal that reads back as the same float64);
* int64 and bool: ``values``;
* binary (exported sets only, for large arrays): ``file``, a ``.npy`` file beside the
  JSON (under ``arrays/``) with its ``sha256``, ``format`` ``"npy"`` and ``byteOrder``
  ``"little"``: NumPy's format version 1.0, C order, ``<f8`` or ``<i8``, written by
  :func:`npy_bytes` with one fixed header so the bytes are reproducible too.  A reader
  (:func:`read_npy`) accepts exactly that header for the dtype and shape the reference
  states, and exactly ``itemsize * prod(shape)`` bytes after it: nothing is allocated
  from what a header claims.

Files are written in one canonical layout (objects indented one space per
level, arrays of scalars on one line, keys in the generator's order, ``\\n``
line ends, trailing newline), so byte-for-byte reproducibility means content
reproducibility.  ``checksum.value`` is the SHA-256 of the file's bytes with
those 64 hex digits replaced by ``0`` characters; any language can verify it
with a string replacement and a hash.

:func:`loads` parses a golden file without trusting it: nesting deeper than
:data:`MAX_DEPTH`, ``NaN`` / ``Infinity`` literals, numbers that overflow float64
and repeated keys are refused before or while parsing, never a crash.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "BINARY_DTYPES",
    "CHECKSUM_PLACEHOLDER",
    "MAX_DEPTH",
    "RESOLVED",
    "binary_array",
    "bool_array",
    "checksum_of",
    "decode",
    "dumps",
    "float_array",
    "int_array",
    "is_binary",
    "loads",
    "npy_bytes",
    "read_npy",
    "shape_of",
]

CHECKSUM_PLACEHOLDER = "0" * 64


def shape_of(nested: Any) -> tuple[list[int], list[Any]]:
    """(shape, flat row-major elements) of a rectangular nested list."""
    shape: list[int] = []
    level = nested
    while isinstance(level, (list, tuple)):
        shape.append(len(level))
        if not level:
            break
        level = level[0]
    flat: list[Any] = []

    def walk(x: Any, depth: int) -> None:
        if depth == len(shape):
            flat.append(x)
            return
        if not isinstance(x, (list, tuple)) or len(x) != shape[depth]:
            msg = f"array must be rectangular; expected {shape[depth]} elements at depth {depth}"
            raise ValueError(msg)
        for item in x:
            walk(item, depth + 1)

    walk(nested, 0)
    return shape, flat


def float_array(nested: Any) -> dict[str, Any]:
    """Encode float64 values (a float or a nested list of floats)."""
    shape, flat = shape_of(nested)
    values = [0.0 if v == 0 else float(v) for v in flat]
    if not all(math.isfinite(v) for v in values):
        msg = "golden float arrays must be finite"
        raise ValueError(msg)
    return {"dtype": "float64", "shape": shape, "hex": [v.hex() for v in values], "decimal": values}


def int_array(nested: Any) -> dict[str, Any]:
    """Encode int64 values."""
    shape, flat = shape_of(nested)
    return {"dtype": "int64", "shape": shape, "values": [int(v) for v in flat]}


def bool_array(nested: Any) -> dict[str, Any]:
    """Encode booleans."""
    shape, flat = shape_of(nested)
    return {"dtype": "bool", "shape": shape, "values": [bool(v) for v in flat]}


#: dtype of a binary array -> its ``.npy`` descr (little-endian).
BINARY_DTYPES = {"float64": "<f8", "int64": "<i8"}
_NPY_MAGIC = b"\x93NUMPY\x01\x00"
#: Key under which ``golden.verify`` records a binary array's contents (in memory, never in JSON): the
#: read-only array read once from its checked file, so decoding never opens a file again.
RESOLVED = "_resolved"
#: Deepest nesting of arrays and objects a golden file may have.  The generator writes at most 7
#: (index.json's export record: an HF config.json, whose own nesting is small); 64 leaves room and
#: keeps a hostile file far below the parser's recursion limit.
MAX_DEPTH = 64


def is_binary(obj: Any) -> bool:
    """Whether ``obj`` is an encoded array stored in a file beside the JSON."""
    return isinstance(obj, dict) and "file" in obj and "dtype" in obj and "shape" in obj


def _binary_kind(values: Any) -> str:
    if values.dtype.kind == "f":
        return "float64"
    if values.dtype.kind in "iu":
        return "int64"
    msg = f"binary golden arrays must be float64 or int64; got {values.dtype}"
    raise ValueError(msg)


def npy_bytes(array: Any) -> bytes:
    """Canonical ``.npy`` bytes of an int64 or float64 array: version 1.0, little-endian, C order.

    The header is ``{'descr': '<f8', 'fortran_order': False, 'shape': (2, 3), }`` padded with
    spaces and a newline to a multiple of 64 bytes (as NumPy writes it), so a reader needs only
    the 10-byte preamble, the header length and the shape.  float64 ``-0.0`` is stored as ``0.0``.
    """

    values = np.asarray(array)
    descr = BINARY_DTYPES[_binary_kind(values)]
    values = np.array(values, dtype=descr, order="C")  # a copy
    if values.dtype.kind == "f":
        if not np.all(np.isfinite(values)):
            msg = "golden float arrays must be finite"
            raise ValueError(msg)
        values += 0.0  # -0.0 -> 0.0, as in float_array
    return _npy_header(descr, values.shape) + values.tobytes(order="C")


def _npy_header(descr: str, shape: Sequence[int]) -> bytes:
    """The canonical ``.npy`` preamble and header of an array of ``descr`` and ``shape``."""
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(int(n) for n in shape)!r}, }}"
    pad = -(len(_NPY_MAGIC) + 2 + len(header) + 1) % 64
    text = (header + " " * pad + "\n").encode("ascii")
    return _NPY_MAGIC + len(text).to_bytes(2, "little") + text


def binary_array(array: Any, file: str) -> tuple[dict[str, Any], bytes]:
    """(the encoded reference, the file's bytes) of an array stored as ``file`` beside the JSON."""

    values = np.asarray(array)
    data = npy_bytes(values)
    obj = {
        "dtype": _binary_kind(values),
        "shape": [int(n) for n in values.shape],
        "file": file,
        "format": "npy",
        "byteOrder": "little",
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    return obj, data


def read_npy(data: bytes, obj: dict[str, Any]) -> Any:
    """The array in ``data`` (a ``.npy`` file), after checking it is the one ``obj`` describes.

    ``data`` must be exactly :func:`npy_bytes` of an array of the reference's dtype and shape: its
    SHA-256, the canonical header for that dtype and shape, then ``8 * prod(shape)`` bytes, no more and
    no fewer.  The array is a read-only view of ``data`` (nothing is allocated from a header's claim).
    Raises ``ValueError`` naming what differs (hash, header, size, non-finite values).
    """

    name = obj.get("file")
    if hashlib.sha256(data).hexdigest() != obj.get("sha256"):
        msg = f"{name}: its SHA-256 differs from the one recorded (edited or truncated?)"
        raise ValueError(msg)
    descr, shape = BINARY_DTYPES.get(obj.get("dtype", "")), obj.get("shape")
    if descr is None or not _is_shape(shape):
        msg = f"{name}: the reference's dtype and shape must be float64 or int64 and a list of sizes"
        raise ValueError(msg)
    header = _npy_header(descr, shape)
    if not data.startswith(header):
        msg = f"{name}: holds {_npy_claim(data)}; the reference says {descr} {list(shape)}"
        raise ValueError(msg)
    size = 8 * math.prod(shape)
    if len(data) - len(header) != size:
        msg = (
            f"{name}: holds {len(data) - len(header)} bytes of elements; shape {list(shape)} needs {size} "
            "(truncated or padded?)"
        )
        raise ValueError(msg)
    array = np.frombuffer(data, dtype=descr, offset=len(header)).reshape(shape)
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        msg = f"{name}: holds non-finite values"
        raise ValueError(msg)
    array.flags.writeable = False
    return array


def _npy_claim(data: bytes) -> str:
    """What a ``.npy`` header says it holds (``<f8 [2, 3]``), read from its text only, for a message."""
    if not data.startswith(b"\x93NUMPY") or len(data) < 10:
        return "no .npy header"
    text = bytes(data[10 : 10 + min(int.from_bytes(data[8:10], "little"), 4096)]).decode("latin-1")
    descr = re.search(r"'descr':\s*'([^']{1,16})'", text)
    shape = re.search(r"'shape':\s*\(([0-9, ]{0,200})\)", text)
    order = re.search(r"'fortran_order':\s*(True|False)", text)
    if descr is None or shape is None or order is None:
        return f"a header {text[:80]!r}"
    dims = [int(n) for n in shape.group(1).replace(" ", "").split(",") if n]
    return f"{descr.group(1)} {dims}{' in Fortran order' if order.group(1) == 'True' else ''}"


def _is_shape(shape: Any) -> bool:
    return (
        isinstance(shape, list)
        and len(shape) <= 32
        and all(type(n) is int and n >= 0 for n in shape)  # bool is no size
    )


def decode(obj: dict[str, Any]) -> Any:
    """A NumPy array from an encoded array (floats read from ``hex``, exactly); always a new array.

    A binary array must have been resolved by :func:`posenc_ref_conformance.golden.verify`, which
    checks its file and keeps its contents in memory (``obj[RESOLVED]``, never in JSON): decode
    copies them and never reads a file, so a file changed after verification changes nothing.
    """

    dtype, shape = obj["dtype"], tuple(obj["shape"])
    if "file" in obj:
        array = obj.get(RESOLVED)
        if not isinstance(array, np.ndarray):
            msg = f"binary array {obj['file']!r} was not resolved (read the directory with golden.load)"
            raise ValueError(msg)
        return np.array(array)
    if dtype == "float64":
        return np.asarray([float.fromhex(h) for h in obj["hex"]], dtype=np.float64).reshape(shape)
    if dtype == "int64":
        return np.asarray(obj["values"], dtype=np.int64).reshape(shape)
    if dtype == "bool":
        return np.asarray(obj["values"], dtype=np.bool_).reshape(shape)
    msg = f"dtype must be float64, int64 or bool; got {dtype!r}"
    raise ValueError(msg)


# --- parsing an untrusted file -------------------------------------------------------------------------

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_NOT_SYNTAX = bytes(sorted(set(range(256)) - set(b'"[]{}\\')))


def depth_of(data: bytes) -> int:
    """The deepest nesting of ``[`` / ``{`` in JSON text (brackets inside strings skipped), unparsed."""
    syntax = data.translate(None, delete=_NOT_SYNTAX)  # quotes, brackets and backslashes only
    if b"\\" in syntax:  # escapes: drop every string with a regular expression first (rare, slower)
        syntax = _STRING.sub(b"", data).translate(None, delete=_NOT_SYNTAX)
    codes = np.frombuffer(syntax, dtype=np.uint8)
    quote = codes == ord('"')
    inside = (np.cumsum(quote) & 1).astype(bool)  # after an odd number of quotes: within a string
    opening = (codes == ord("[")) | (codes == ord("{"))
    closing = (codes == ord("]")) | (codes == ord("}"))
    steps = np.where(inside | quote, 0, opening.astype(np.int64) - closing)
    return int(np.max(np.cumsum(steps))) if steps.size else 0


class _Refused(ValueError):
    """A token a golden file cannot hold (``NaN``, ``Infinity``, a number beyond float64)."""

    def __init__(self, token: str, why: str) -> None:
        super().__init__(f"{token[:40]} {why}")
        self.token = token


def _refuse_constant(name: str) -> Any:
    raise _Refused(name, "is not a number a golden file may hold (values are finite)")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise _Refused(text, "overflows float64")
    return value


def _line_of(data: bytes, token: str) -> int | None:
    """The line of the first ``token`` standing alone (not inside a word, number or string)."""
    found = re.search(rb'(?<![\w."+-])' + re.escape(token.encode("ascii")) + rb'(?![\w."])', data)
    return data.count(b"\n", 0, found.start()) + 1 if found else None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        keys = [k for k, _ in pairs]
        repeated = next(k for n, k in enumerate(keys) if k in keys[:n])
        msg = f"key {repeated!r} appears twice in one object"
        raise ValueError(msg)
    return obj


_DECODER = json.JSONDecoder(
    parse_float=_finite_float, parse_constant=_refuse_constant, object_pairs_hook=_unique_keys
)


def loads(data: bytes) -> Any:
    """Parse the ASCII JSON of a golden file; ``ValueError`` for anything a golden file cannot hold.

    Refused: non-ASCII bytes, nesting deeper than :data:`MAX_DEPTH` (checked before parsing),
    ``NaN`` / ``Infinity``, numbers that overflow float64, repeated keys, malformed JSON.
    """
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError as exc:
        msg = f"not ASCII: {exc}"
        raise ValueError(msg) from exc
    depth = depth_of(data)
    if depth > MAX_DEPTH:
        msg = f"nested {depth} deep; a golden file nests at most {MAX_DEPTH} arrays and objects"
        raise ValueError(msg)
    try:
        return _DECODER.decode(text)
    except _Refused as exc:
        line = _line_of(data, exc.token)
        msg = f"{exc}{f' (line {line})' if line else ''}"
        raise ValueError(msg) from exc
    except RecursionError as exc:  # unreachable after the depth check; kept as a backstop
        msg = "nested too deep"
        raise ValueError(msg) from exc


def _scalar(value: Any) -> str:
    """``json.dumps(value)`` (ASCII, no NaN), with the common int and float cases taken directly."""
    kind = type(value)
    if kind is int:
        return int.__repr__(value)
    if kind is float and math.isfinite(value):
        return float.__repr__(value)  # what json.dumps writes for a finite float
    if kind is str and value.isascii() and value.isprintable() and '"' not in value and "\\" not in value:
        return f'"{value}"'  # nothing to escape
    return json.dumps(value, ensure_ascii=True, allow_nan=False)


def _dump(value: Any, indent: int, out: list[str]) -> None:
    pad = " " * indent
    if isinstance(value, dict):
        if not value:
            out.append("{}")
            return
        out.append("{\n")
        items = list(value.items())
        for n, (key, item) in enumerate(items):
            out.append(f"{pad} {_scalar(key)}: ")
            _dump(item, indent + 1, out)
            out.append(",\n" if n + 1 < len(items) else "\n")
        out.append(pad + "}")
    elif isinstance(value, (list, tuple)):
        if all(not isinstance(v, (dict, list, tuple)) for v in value):
            out.append("[" + ", ".join(_scalar(v) for v in value) + "]")
            return
        out.append("[\n")
        for n, item in enumerate(value):
            out.append(pad + " ")
            _dump(item, indent + 1, out)
            out.append(",\n" if n + 1 < len(value) else "\n")
        out.append(pad + "]")
    else:
        out.append(_scalar(value))


def dumps(document: dict[str, Any]) -> bytes:
    """The canonical bytes of a golden document (checksum filled in if present)."""
    if isinstance(document.get("checksum"), dict):
        placeholder = _placeholder_bytes(document)
        digest = hashlib.sha256(placeholder).hexdigest()
        return placeholder.replace(CHECKSUM_PLACEHOLDER.encode(), digest.encode(), 1)
    parts: list[str] = []
    _dump(document, 0, parts)
    return ("".join(parts) + "\n").encode("ascii")


def _placeholder_bytes(document: dict[str, Any]) -> bytes:
    blank = dict(document)
    blank["checksum"] = {**document["checksum"], "value": CHECKSUM_PLACEHOLDER}
    parts: list[str] = []
    _dump(blank, 0, parts)
    data = ("".join(parts) + "\n").encode("ascii")
    if data.count(CHECKSUM_PLACEHOLDER.encode()) != 1:
        msg = "the checksum placeholder must occur exactly once in a golden file"
        raise ValueError(msg)
    return data


def checksum_of(data: bytes, recorded: str) -> str:
    """SHA-256 of ``data`` with the recorded checksum digits zeroed (see the module docstring)."""
    if data.count(recorded.encode()) != 1:
        return ""
    return hashlib.sha256(data.replace(recorded.encode(), CHECKSUM_PLACEHOLDER.encode(), 1)).hexdigest()


def tuple_shape(obj: dict[str, Any]) -> tuple[int, ...]:
    """The shape of an encoded array as a tuple."""
    return tuple(obj["shape"])


def flat(obj: dict[str, Any]) -> Sequence[Any]:
    """The flat elements of an encoded array (floats exact)."""
    if "file" in obj:
        return decode(obj).ravel().tolist()
    if obj["dtype"] == "float64":
        return [float.fromhex(h) for h in obj["hex"]]
    return obj["values"]
