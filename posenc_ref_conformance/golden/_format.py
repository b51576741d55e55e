"""The golden-file format: value encodings, canonical serialisation, checksums.

A golden file is UTF-8 JSON.  Arrays are objects with a ``dtype``, a ``shape``
(row-major) and their elements flattened:

* float64: ``hex`` (C99 ``%a`` / Python ``float.hex``, exact) and ``decimal``
  (JSON numbers, the shortest decimal that reads back as the same float64);
* int64 and bool: ``values``;
* binary (exported sets only, for large arrays): ``file``, a ``.npy`` file beside the
  JSON (under ``arrays/``) with its ``sha256``, ``format`` ``"npy"`` and ``byteOrder``
  ``"little"``: NumPy's format version 1.0, C order, ``<f8`` or ``<i8``, written by
  :func:`npy_bytes` with one fixed header so the bytes are reproducible too.

Files are written in one canonical layout (objects indented one space per
level, arrays of scalars on one line, keys in the generator's order, ``\\n``
line ends, trailing newline), so byte-for-byte reproducibility means content
reproducibility.  ``checksum.value`` is the SHA-256 of the file's bytes with
those 64 hex digits replaced by ``0`` characters; any language can verify it
with a string replacement and a hash.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = [
    "BINARY_DTYPES",
    "CHECKSUM_PLACEHOLDER",
    "RESOLVED",
    "binary_array",
    "bool_array",
    "checksum_of",
    "decode",
    "dumps",
    "float_array",
    "int_array",
    "is_binary",
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
#: Key under which ``golden.verify`` records a binary array's resolved path (in memory, never in JSON).
RESOLVED = "_resolved"


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
    header = f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(values.shape)!r}, }}"
    pad = -(len(_NPY_MAGIC) + 2 + len(header) + 1) % 64
    text = (header + " " * pad + "\n").encode("ascii")
    return _NPY_MAGIC + len(text).to_bytes(2, "little") + text + values.tobytes(order="C")


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

    Raises ``ValueError`` naming what differs (hash, dtype, shape, order, non-finite values).
    """

    if hashlib.sha256(data).hexdigest() != obj.get("sha256"):
        msg = f"{obj.get('file')}: its SHA-256 differs from the one recorded (edited or truncated?)"
        raise ValueError(msg)
    try:
        array = np.load(io.BytesIO(data), allow_pickle=False)
    except (ValueError, OSError) as exc:
        msg = f"{obj.get('file')}: not a readable .npy file: {exc}"
        raise ValueError(msg) from exc
    expected = BINARY_DTYPES.get(obj.get("dtype", ""))
    if array.dtype.str != expected or list(array.shape) != list(obj.get("shape", [])):
        msg = (
            f"{obj.get('file')}: holds {array.dtype.str} {list(array.shape)}; "
            f"the reference says {expected} {obj.get('shape')}"
        )
        raise ValueError(msg)
    if array.dtype.kind == "f" and not np.all(np.isfinite(array)):
        msg = f"{obj.get('file')}: holds non-finite values"
        raise ValueError(msg)
    array.flags.writeable = False
    return array


def decode(obj: dict[str, Any]) -> Any:
    """A NumPy array from an encoded array (floats read from ``hex``, exactly).

    A binary array must have been resolved by :func:`posenc_ref_conformance.golden.verify`,
    which checks its file and records where it is (``obj[RESOLVED]``, in memory only);
    decode reads it again and checks its SHA-256 again, so a file changed since is refused.
    """

    dtype, shape = obj["dtype"], tuple(obj["shape"])
    if "file" in obj:
        if RESOLVED not in obj:
            msg = f"binary array {obj['file']!r} was not resolved (read the directory with golden.load)"
            raise ValueError(msg)
        with open(obj[RESOLVED], "rb") as fh:
            return np.array(read_npy(fh.read(), obj))
    if dtype == "float64":
        return np.asarray([float.fromhex(h) for h in obj["hex"]], dtype=np.float64).reshape(shape)
    if dtype == "int64":
        return np.asarray(obj["values"], dtype=np.int64).reshape(shape)
    if dtype == "bool":
        return np.asarray(obj["values"], dtype=np.bool_).reshape(shape)
    msg = f"dtype must be float64, int64 or bool; got {dtype!r}"
    raise ValueError(msg)


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
