"""The golden-file format: value encodings, canonical serialisation, checksums.

A golden file is UTF-8 JSON.  Arrays are objects with a ``dtype``, a ``shape``
(row-major) and their elements flattened:

* float64: ``hex`` (C99 ``%a`` / Python ``float.hex``, exact) and ``decimal``
  (JSON numbers, the shortest decimal that reads back as the same float64);
* int64 and bool: ``values``.

Files are written in one canonical layout (objects indented one space per
level, arrays of scalars on one line, keys in the generator's order, ``\\n``
line ends, trailing newline), so byte-for-byte reproducibility means content
reproducibility.  ``checksum.value`` is the SHA-256 of the file's bytes with
those 64 hex digits replaced by ``0`` characters; any language can verify it
with a string replacement and a hash.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Sequence
from typing import Any

__all__ = [
    "CHECKSUM_PLACEHOLDER",
    "bool_array",
    "checksum_of",
    "decode",
    "dumps",
    "float_array",
    "int_array",
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


def decode(obj: dict[str, Any]) -> Any:
    """A NumPy array from an encoded array (floats read from ``hex``, exactly)."""
    import numpy as np

    dtype, shape = obj["dtype"], tuple(obj["shape"])
    if dtype == "float64":
        return np.asarray([float.fromhex(h) for h in obj["hex"]], dtype=np.float64).reshape(shape)
    if dtype == "int64":
        return np.asarray(obj["values"], dtype=np.int64).reshape(shape)
    if dtype == "bool":
        return np.asarray(obj["values"], dtype=np.bool_).reshape(shape)
    msg = f"dtype must be float64, int64 or bool; got {dtype!r}"
    raise ValueError(msg)


def _scalar(value: Any) -> str:
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
    parts: list[str] = []
    _dump(document, 0, parts)
    text = "".join(parts) + "\n"
    data = text.encode("ascii")
    if isinstance(document.get("checksum"), dict):
        placeholder = _placeholder_bytes(document)
        digest = hashlib.sha256(placeholder).hexdigest()
        data = placeholder.replace(CHECKSUM_PLACEHOLDER.encode(), digest.encode(), 1)
    return data


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
    if obj["dtype"] == "float64":
        return [float.fromhex(h) for h in obj["hex"]]
    return obj["values"]
