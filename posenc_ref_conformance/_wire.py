"""The worker protocol's wire format: pickled requests in, JSON and raw array bytes out.

The suite sends its own data to the worker as length-prefixed pickles (only
the worker, the untrusted side, unpickles).  The worker answers with frames
nothing can run code from: a 4-byte little-endian length, an ASCII JSON header
(at most :data:`MAX_HEADER_BYTES`), then the raw C-order bytes of each array the
header lists, of a dtype from :data:`WIRE_DTYPES`.  :func:`read_reply` checks
the header (types, kinds, dtypes, sizes against the call's limit) before it
allocates anything.  How the executors use this: :mod:`.isolation`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import pickle
import struct
from collections.abc import Callable, Sequence
from typing import IO, Any

import numpy as np

from .adapters.base import Capabilities
from .report_text import strip_controls

__all__ = [
    "MAX_REPLY_BYTES",
    "WIRE_DTYPES",
    "AdapterInfo",
    "Outcome",
    "ReplyCutShort",
    "ReplyError",
    "ReplyTooLarge",
    "info_reply",
    "outcome_reply",
    "read_reply",
    "read_request",
    "reply_limit",
    "write_reply",
    "write_request",
]

#: Bytes the arrays of one reply may hold when the call states no expected size.
MAX_REPLY_BYTES = 256 << 20
#: Bytes of a reply's JSON header (a description, a message; never array data).
MAX_HEADER_BYTES = 4 << 20
#: Arrays one reply may carry.
MAX_ARRAYS = 64
#: The dtypes a reply may carry (``dtype.str``, native byte order).
WIRE_DTYPES = {np.dtype(code).newbyteorder("=").str: np.dtype(code) for code in "?bBhHiIlLqQefdg"}
#: The outcome kinds a worker may report (time-outs and crashes are the suite's own findings).
WORKER_KINDS = ("ok", "raised", "unsupported", "bad-output")


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one adapter call did.

    ``kind``: ``ok`` (``value`` holds a base-class NumPy array, or a tuple of them
    for a function with several outputs; Python numbers arrive as 0-d arrays),
    ``raised``, ``unsupported`` (``NotImplementedError``, including ``Unsupported``),
    ``bad-output`` (the returned object is not an array of the expected count, of
    a bool/int/float dtype, within the reply limit), ``timeout`` or ``crashed``
    (the adapter's process ended during the call).
    """

    kind: str
    value: Any = None
    error_type: str = ""
    error_bases: tuple[str, ...] = ()
    message: str = ""
    where: str = ""

    def describe(self) -> str:
        """One line for the report."""
        if self.kind == "raised":
            where = f" [{self.where}]" if self.where else ""
            return f"raised {self.error_type}: {self.message}{where}"
        return {"unsupported": "unsupported: ", "bad-output": "bad output: "}.get(
            self.kind, ""
        ) + self.message


@dataclasses.dataclass(frozen=True)
class AdapterInfo:
    """What the adapter declares: name, capabilities (as a dict), supported functions, description."""

    name: str
    capabilities: dict[str, Any]
    supported: tuple[str, ...]
    description: dict[str, Any]
    warnings: tuple[str, ...] = ()


def reply_limit(expected_bytes: int | None = None) -> int:
    """Bytes the arrays of one reply may hold: ``4 * expected_bytes + 1 MiB``, or :data:`MAX_REPLY_BYTES`.

    ``expected_bytes``: the size of the call's expected outputs at float64
    (8 bytes per expected element); ``None`` when the caller does not know it.
    """
    if expected_bytes is None:
        return MAX_REPLY_BYTES
    return 4 * max(0, int(expected_bytes)) + (1 << 20)


def write_request(stream: IO[bytes], obj: Any) -> None:
    """Suite -> worker: one length-prefixed pickle of the suite's own data."""
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def read_request(stream: IO[bytes]) -> Any:
    """Worker side of :func:`write_request` (``EOFError`` at the end of the stream)."""
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def _short(text: Any, limit: int = 500) -> str:
    return str(text)[:limit]


def outcome_reply(outcome: Outcome) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The JSON header and the arrays of a ``done`` reply."""
    header: dict[str, Any] = {
        "reply": "done",
        "kind": outcome.kind,
        "error_type": _short(outcome.error_type, 200),
        "error_bases": [_short(b, 200) for b in outcome.error_bases[:64]],
        "message": _short(outcome.message, 2000),
        "where": _short(outcome.where, 300),
        "value": None,
    }
    arrays: list[np.ndarray] = []
    if outcome.kind == "ok":
        value = outcome.value
        arrays = list(value) if isinstance(value, tuple) else [value]
        header["value"] = {
            "tuple": isinstance(value, tuple),
            "arrays": [{"dtype": a.dtype.str, "shape": list(a.shape)} for a in arrays],
        }
    return header, arrays


def info_reply(info: AdapterInfo) -> tuple[dict[str, Any], list[np.ndarray]]:
    """The JSON header of a ``ready`` reply (the load's answer; no arrays)."""
    return {
        "reply": "ready",
        "name": info.name,
        "capabilities": info.capabilities,
        "supported": list(info.supported),
        "description": info.description,
        "warnings": list(info.warnings),
    }, []


def write_reply(stream: IO[bytes], header: dict[str, Any], arrays: Sequence[np.ndarray] = ()) -> None:
    """Worker -> suite: ``<I`` header length, the ASCII JSON header, each array's raw bytes.

    A header over :data:`MAX_HEADER_BYTES` (or one that is not JSON-plain) is
    replaced by a short refusal: a load failure, or a bad output.
    """
    what = "description" if header.get("reply") == "ready" else "reply"
    try:
        head = json.dumps(header, ensure_ascii=True, separators=(",", ":")).encode("ascii")
        message = f"the adapter's {what} is {len(head)} bytes of JSON, over the limit of {MAX_HEADER_BYTES}"
    except (TypeError, ValueError, RecursionError) as exc:
        head, message = b"", f"the adapter's {what} cannot be written as JSON: {type(exc).__name__}: {exc}"
    if not head or len(head) > MAX_HEADER_BYTES:
        header = (
            {"reply": "load-failed", "message": message[:2000]}
            if header.get("reply") == "ready"
            else outcome_reply(Outcome("bad-output", message=message))[0]
        )
        head, arrays = json.dumps(header, ensure_ascii=True).encode("ascii"), []
    stream.write(struct.pack("<I", len(head)) + head)
    for array in arrays:
        stream.write(memoryview(np.ascontiguousarray(array).reshape(-1).view(np.uint8)))
    stream.flush()


class ReplyError(Exception):
    """A reply the suite cannot decode (the message says why)."""


class ReplyTooLarge(ReplyError):
    """A reply whose header announces more array bytes than the call's limit."""

    def __init__(self, size: int, limit: int) -> None:
        super().__init__(f"reply of {size} bytes exceeds the limit of {limit} bytes")
        self.size, self.limit = size, limit


class ReplyCutShort(ReplyError):
    """The stream ended inside a reply."""


def _read_exact(stream: IO[bytes], size: int, what: str) -> bytearray:
    buffer = bytearray(size)
    view, done = memoryview(buffer), 0
    while done < size:
        got = stream.readinto(view[done:])  # type: ignore[attr-defined]
        if not got:
            msg = f"the reply was cut short: {done} of the {size} bytes of its {what}"
            raise ReplyCutShort(msg)
        done += got
    return buffer


def _field(header: dict[str, Any], key: str, kind: type) -> Any:
    value = header.get(key)
    if not isinstance(value, kind):
        msg = f"its {key!r} is {type(value).__name__}, expected {kind.__name__}"
        raise ReplyError(msg)
    return value


def _strings(value: Any, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        msg = f"its {key!r} is not a list of strings"
        raise ReplyError(msg)
    return tuple(value)


def _array_specs(value: Any, limit: int) -> list[tuple[np.dtype[Any], tuple[int, ...], int]]:
    """Each announced array's dtype, shape and bytes; ReplyTooLarge before anything is allocated."""
    if not isinstance(value, dict) or not isinstance(value.get("tuple"), bool):
        msg = "its value is not {'tuple': bool, 'arrays': [...]}"
        raise ReplyError(msg)
    specs, total = [], 0
    entries = value.get("arrays")
    if not isinstance(entries, list) or not 1 <= len(entries) <= MAX_ARRAYS:
        msg = f"its value must list 1 to {MAX_ARRAYS} arrays"
        raise ReplyError(msg)
    if not value["tuple"] and len(entries) != 1:
        msg = "a single output must be one array"
        raise ReplyError(msg)
    for entry in entries:
        dtype = WIRE_DTYPES.get(entry.get("dtype")) if isinstance(entry, dict) else None
        if dtype is None:
            got = entry.get("dtype") if isinstance(entry, dict) else entry
            msg = f"an array of dtype {str(got)[:40]!r} (allowed: {sorted(WIRE_DTYPES)})"
            raise ReplyError(msg)
        shape = entry.get("shape")
        if (
            not isinstance(shape, list)
            or len(shape) > 32
            or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape)
        ):
            msg = f"an array of shape {str(shape)[:80]} (expected a list of at most 32 sizes >= 0)"
            raise ReplyError(msg)
        size = math.prod(shape) * dtype.itemsize
        total += size
        specs.append((dtype, tuple(shape), size))
    if total > limit:
        raise ReplyTooLarge(total, limit)
    return specs


def read_reply(stream: IO[bytes], limit: int | Callable[[], int]) -> tuple[Any, ...]:
    """One reply: ``("ready", AdapterInfo)``, ``("load-failed", message)`` or ``("done", Outcome)``.

    ``limit``: the array bytes the reply may hold (or a function giving it, asked
    once the header has arrived).  Raises ``EOFError`` at a clean end of the
    stream, :class:`ReplyTooLarge` for a header announcing more than ``limit``
    (before anything is allocated) and :class:`ReplyError` for anything else it
    cannot decode.
    """
    first = stream.read(4)
    if not first:
        raise EOFError
    if len(first) < 4:
        msg = "the reply was cut short inside its length prefix"
        raise ReplyCutShort(msg)
    (size,) = struct.unpack("<I", first)
    if size > MAX_HEADER_BYTES:
        msg = f"its header of {size} bytes is over the limit of {MAX_HEADER_BYTES}"
        raise ReplyError(msg)
    raw = _read_exact(stream, size, "header")
    try:
        header = json.loads(raw.decode("ascii"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        msg = f"its header is not ASCII JSON ({type(exc).__name__})"
        raise ReplyError(msg) from exc
    if not isinstance(header, dict):
        msg = "its header is not a JSON object"
        raise ReplyError(msg)
    reply = header.get("reply")
    if reply == "load-failed":
        return ("load-failed", strip_controls(_short(_field(header, "message", str), 4000)))
    if reply == "ready":
        return ("ready", _decode_info(header))
    if reply != "done":
        msg = f"its header names the reply {str(reply)[:40]!r}"
        raise ReplyError(msg)
    kind = header.get("kind")
    if kind not in WORKER_KINDS:
        msg = f"its outcome kind {str(kind)[:40]!r} is none of {list(WORKER_KINDS)}"
        raise ReplyError(msg)
    fields = {key: _field(header, key, str) for key in ("error_type", "message", "where")}
    bases = _strings(header.get("error_bases"), "error_bases")
    value: Any = None
    if kind == "ok":
        specs = _array_specs(header.get("value"), limit() if callable(limit) else limit)
        arrays = [
            np.frombuffer(_read_exact(stream, size, "arrays"), dtype=dtype).reshape(shape)
            for dtype, shape, size in specs
        ]
        value = tuple(arrays) if header["value"]["tuple"] else arrays[0]
    elif header.get("value") is not None:
        msg = f"a {kind!r} outcome carries a value"
        raise ReplyError(msg)
    return ("done", Outcome(kind, value, error_bases=bases, **fields))


def _decode_info(header: dict[str, Any]) -> AdapterInfo:
    capabilities = _field(header, "capabilities", dict)
    try:
        checked = dataclasses.asdict(Capabilities.from_any(capabilities))
    except (TypeError, ValueError) as exc:
        msg = f"its capabilities are not valid: {exc}"
        raise ReplyError(msg) from exc
    return AdapterInfo(
        _field(header, "name", str),
        checked,
        _strings(header.get("supported"), "supported"),
        _field(header, "description", dict),
        _strings(header.get("warnings"), "warnings"),
    )
