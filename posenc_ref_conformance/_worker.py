"""The adapter's own process: ``python -m posenc_ref_conformance._worker CAPTURE_FILE``.

Started by :class:`posenc_ref_conformance.isolation.WorkerExecutor`.  The
protocol runs over the process's original standard input and output
(length-prefixed pickles); file descriptors 1 and 2 are then pointed at
``CAPTURE_FILE``, so whatever the adapter prints (Python or native code) lands
there and never in the suite's report.  Requests: ``("load", spec)``, then
``("call", function, args, kwargs)`` any number of times, then ``("exit",)``.
"""

from __future__ import annotations

import os
import sys
import warnings


def _redirect(capture: str) -> tuple[object, object]:
    """The protocol streams (duplicates of stdin/stdout); fds 0/1/2 become /dev/null and the capture file."""
    proto_in = os.fdopen(os.dup(0), "rb")
    proto_out = os.fdopen(os.dup(1), "wb")
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    out = os.open(capture, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    os.dup2(out, 1)
    os.dup2(out, 2)
    sys.stdout = os.fdopen(1, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    sys.stderr = os.fdopen(2, "w", buffering=1, encoding="utf-8", errors="replace", closefd=False)
    return proto_in, proto_out


def main() -> None:
    proto_in, proto_out = _redirect(sys.argv[1])
    # imported after the redirect: whatever loading the suite (and then the adapter) prints is captured
    from . import isolation
    from .adapters import load_adapter

    warnings.filterwarnings("ignore", message=isolation.TORCH_READONLY_WARNING)
    request = isolation.read_frame(proto_in)
    try:
        adapter = load_adapter(request[1])
        info = isolation.describe_adapter(adapter)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # an import error, an exception or sys.exit at import, bad CAPABILITIES
        isolation.write_frame(proto_out, ("load-failed", _load_message(request[1], exc)))
        return
    isolation.write_frame(proto_out, ("ready", info))
    while True:
        try:
            request = isolation.read_frame(proto_in)
        except EOFError:
            return
        if request[0] != "call":
            return
        _, function, args, kwargs = request
        outcome = isolation.execute(adapter, function, args, kwargs, own_process=True)
        sys.stdout.flush()
        sys.stderr.flush()
        isolation.write_frame(proto_out, ("done", outcome))


def _load_message(spec: str, exc: BaseException) -> str:
    from .adapters import AdapterError

    if isinstance(exc, AdapterError):
        return str(exc)
    if isinstance(exc, SystemExit):
        return f"adapter {spec!r} called sys.exit({exc.code!r}) while loading"
    return f"adapter {spec!r} failed while loading: {type(exc).__name__}: {exc}"


if __name__ == "__main__":
    main()
