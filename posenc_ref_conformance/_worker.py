"""The adapter's own process: ``python -m posenc_ref_conformance._worker``.

Started by :class:`posenc_ref_conformance.isolation.WorkerExecutor`, in its own
session (process group), with three pipes: requests arrive on standard input
(length-prefixed pickles of the suite's own data: ``("load", spec)``, then
``("call", function, args, kwargs, limit)`` any number of times, then
``("exit",)``), replies leave on standard output, and standard error is the
capture pipe.  The protocol uses duplicates of descriptors 0 and 1; then
descriptor 0 becomes ``/dev/null`` and descriptor 1 joins 2 on the capture
pipe, so whatever the adapter prints (Python or native code) reaches the
suite's capture thread, which keeps only its tail, and never the replies or the
report.

Replies are never pickles: each is a JSON header plus raw array bytes
(:func:`~posenc_ref_conformance._wire.write_reply`).  The load's answer is
the adapter's declarations (``ready``) or why it failed (``load-failed``); each
call's answer (``done``) is its :class:`~posenc_ref_conformance.isolation.Outcome`,
whose arrays are plain NumPy copies holding at most ``limit`` bytes together
(a larger output becomes a bad output naming both sizes, and nothing is sent).
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import IO


def _redirect() -> tuple[IO[bytes], IO[bytes]]:
    """The protocol streams (duplicates of stdin/stdout); fds 0/1/2 become /dev/null and the capture pipe."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    return proto_in, proto_out


def main() -> None:
    proto_in, proto_out = _redirect()
    # imported after the redirect: whatever loading the suite (and then the adapter) prints is captured
    from . import _wire, isolation
    from .adapters import load_adapter

    warnings.filterwarnings("ignore", message=isolation.TORCH_READONLY_WARNING)
    request = _wire.read_request(proto_in)
    try:
        adapter = load_adapter(request[1])
        info = isolation.describe_adapter(adapter)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # an import error, an exception or sys.exit at import, bad CAPABILITIES
        _wire.write_reply(proto_out, {"reply": "load-failed", "message": _load_message(request[1], exc)})
        return
    _wire.write_reply(proto_out, *_wire.info_reply(info))
    while True:
        try:
            request = _wire.read_request(proto_in)
        except EOFError:
            return
        if request[0] != "call":
            return
        _, function, args, kwargs, limit = request
        outcome = isolation.execute(adapter, function, args, kwargs, own_process=True, limit=limit)
        sys.stdout.flush()
        sys.stderr.flush()
        _wire.write_reply(proto_out, *_wire.outcome_reply(outcome))


def _load_message(spec: str, exc: BaseException) -> str:
    from .adapters import AdapterError

    if isinstance(exc, AdapterError):
        text = str(exc)
    elif isinstance(exc, SystemExit):
        text = f"adapter {spec!r} called sys.exit({exc.code!r}) while loading"
    else:
        text = f"adapter {spec!r} failed while loading: {type(exc).__name__}: {exc}"
    return text[:4000]


if __name__ == "__main__":
    main()
