"""Calling an adapter without trusting it: copies in, plain arrays out, every failure contained.

The suite never lets an adapter touch its own data or decide its fate:

* **Inputs are read-only copies** (arrays) and fresh copies (dicts, lists) for
  every call, so an adapter that writes into them changes nothing the suite
  reads afterwards (an in-place NumPy write raises, and fails that case).
* **Outputs become plain arrays** in the process that ran the adapter: each one
  is copied into a *base-class* ``numpy.ndarray`` (never a subclass, so a
  masked array is judged by its data and no ``__eq__``/``__array_ufunc__`` of
  the adapter's runs in the comparison), C order, native byte order, of a bool,
  integer or float dtype (complex, object, structured, datetime and string
  outputs are a bad output naming the dtype).  A call with several outputs must
  return a tuple or list of exactly that many (never an iterator, which could
  be endless).
* **Every outcome is data** (:class:`Outcome`): a value, an exception (its
  type name, the names of its base classes and its message), ``Unsupported``,
  an unconvertible output, a time-out or the death of the adapter's process.

Two executors implement this.  :class:`WorkerExecutor` (used for adapter
*specs*, as the CLI and the pytest plugin do) loads the adapter in a child
Python process (``python -m posenc_ref_conformance._worker``), started in its
own session (process group).  The protocol (its wire format: :mod:`._wire`):

* **suite -> worker**: length-prefixed pickles of the suite's own requests
  (``("load", spec)``, ``("call", function, args, kwargs, limit)``,
  ``("exit",)``); only the worker, the untrusted side, unpickles.
* **worker -> suite, never pickle**: each reply is a 4-byte little-endian
  length, an ASCII JSON header (at most :data:`MAX_HEADER_BYTES`) and then the
  raw C-order bytes of each array the header lists (``dtype`` from a fixed
  whitelist of bool/int/uint/float dtypes in native byte order, ``shape``).
  The suite checks the header (types, kinds, dtypes, sizes) and rebuilds the
  arrays with ``np.frombuffer``; nothing in a reply can run code in the suite.
  A reply the suite cannot decode (a bad header, an unknown dtype, a cut-off
  frame) fails that call at once, with the reason, and the worker is stopped.
* **Reply size**: the arrays of one reply may hold at most ``limit`` bytes,
  sent with each call: ``4 * expected_bytes + 1 MiB`` when the caller states
  the size of the expected outputs (``expected_bytes``: their bytes at
  float64, see :func:`reply_limit`), else :data:`MAX_REPLY_BYTES`.  The worker
  refuses a larger output before copying it (that call is a bad output: "reply
  of N bytes exceeds the limit of M bytes"); the suite refuses a header that
  announces more, before allocating anything, and stops the worker.
* **Printed output**: descriptors 1 and 2 of the worker are one pipe, read by a
  suite thread that keeps only the last :data:`MAX_OUTPUT` bytes, so an adapter
  printing forever costs neither disk nor memory; what it printed comes back
  without terminal control sequences (as do its exception messages) and never
  reaches the report's own lines.
* **Runs end**: a per-call time limit stops a hung call; while it waits the
  suite polls the worker, so a worker that exits (``sys.exit`` in a thread,
  ``os._exit``, a crash) is reported as crashed at once, even when a process it
  forked still holds the pipes.  On a time-out, a crash, an undecodable reply
  and at close the whole process group is killed (``os.killpg``), so helpers the
  adapter forked do not outlive the run.  The worker is restarted for the next
  call.

What this protects against: accidents and wrong code.  An adapter cannot forge
a verdict through its reply, hang the run or fill the disk.  It is *not* a
sandbox: an adversary running arbitrary code as the same user could still, for
example, edit the suite's files or leave its process group (``setsid``).

:class:`InProcessExecutor` (used when Python code passes an adapter *object*)
gives the same copies, conversions and containment (``SystemExit`` included) but
cannot stop a call that hangs or kills the process, nor bound a reply's size.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import dataclasses
import math
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import traceback
import warnings
from typing import IO, Any

import numpy as np

from ._wire import (
    WIRE_DTYPES,
    AdapterInfo,
    Outcome,
    ReplyCutShort,
    ReplyError,
    ReplyTooLarge,
    read_reply,
    reply_limit,
    write_request,
)
from .adapters import AdapterError
from .adapters.base import CANONICAL_FUNCTIONS, CANONICAL_OUTPUTS, Adapter, Capabilities
from .compare import Mismatch, as_numpy
from .report_text import strip_controls

__all__ = [
    "DEFAULT_TIMEOUT",
    "AdapterInfo",
    "CallFailed",
    "CallUnsupported",
    "InProcessExecutor",
    "Outcome",
    "ProxyAdapter",
    "WorkerExecutor",
]

#: Seconds one adapter call may take before it is stopped and counted as a failure.
DEFAULT_TIMEOUT = 60.0
#: Seconds an adapter may take to load (imports of heavy libraries, JIT warm-up).
LOAD_TIMEOUT = 300.0
#: Bytes of captured adapter output kept for the report (the last ones).
MAX_OUTPUT = 1 << 20
#: Seconds between checks that the worker is still alive while a reply is awaited.
POLL_SECONDS = 0.05
#: Seconds the suite still reads after the worker is seen to have exited (a reply already sent).
EXIT_GRACE = 0.5

TORCH_READONLY_WARNING = "The given NumPy array is not writable"

#: dtype kinds an output may have: bool, signed and unsigned integers, floats.
OUTPUT_KINDS = "biuf"


# --- both sides: copies in, plain arrays out ------------------------------------------------------------


def _read_only(value: Any) -> Any:
    """A copy the adapter cannot use to reach the suite's data (arrays read-only)."""
    if isinstance(value, np.ndarray):
        out = np.array(value, copy=True)
        out.flags.writeable = False
        return out
    return copy.deepcopy(value)


def to_host(value: Any, outputs: int, limit: int | None = None) -> Any:
    """``value`` as plain NumPy arrays (a tuple of ``outputs`` arrays when ``outputs > 1``); raises Mismatch.

    Each array is a fresh base-class ``ndarray`` in native byte order.  ``limit``:
    the bytes all outputs together may hold, checked before anything is copied.
    """
    if outputs > 1 and not isinstance(value, (tuple, list)):
        msg = f"returned {type(value).__name__}; expected a tuple of {outputs} outputs"
        raise Mismatch(msg)
    if outputs > 1 and len(value) != outputs:
        msg = f"returned {len(value)} outputs; expected {outputs}"
        raise Mismatch(msg)
    values = [value] if outputs == 1 else list(value)
    # first from the shapes the outputs state (no torch/CuPy copy, no dask graph run), then exactly
    _check_size(sum(_stated_bytes(v) for v in values), limit)
    names = ["the output"] if outputs == 1 else [f"output {i + 1}" for i in range(outputs)]
    arrays = [_one_to_host(v, name) for v, name in zip(values, names, strict=True)]
    _check_size(sum(int(a.size) * a.dtype.itemsize for a in arrays), limit)
    copies = [np.array(a, dtype=a.dtype.newbyteorder("="), order="C", copy=True) for a in arrays]
    return copies[0] if outputs == 1 else tuple(copies)


def _stated_bytes(value: Any) -> int:
    """The bytes an array-like says it holds (its shape times its item size, 8 if unknown); 0 if unsaid."""
    try:
        size = math.prod(int(n) for n in value.shape)
        itemsize = getattr(value.dtype, "itemsize", None) or getattr(value.dtype, "size", None) or 8
        return size * int(itemsize)
    except Exception:  # no shape, or an unknown (lazy) one: the exact check after conversion decides
        return 0


def _check_size(total: int, limit: int | None) -> None:
    if limit is not None and total > limit:
        msg = f"reply of {total} bytes exceeds the limit of {limit} bytes"
        raise Mismatch(msg)


def _one_to_host(value: Any, what: str) -> np.ndarray:
    """``value`` as a base-class ndarray of an allowed dtype (possibly a view; :func:`to_host` copies)."""
    if value is None or isinstance(value, (str, bytes, dict, set)):
        msg = f"{what} is {type(value).__name__}, not an array or number"
        raise Mismatch(msg)
    try:
        array = as_numpy(value)
        if not isinstance(array, np.ndarray):
            array = np.asarray(array)
        array = np.ndarray.view(array, np.ndarray)  # never a subclass, whatever as_numpy was given
    except Mismatch:
        raise
    except Exception as exc:
        msg = f"{what} of type {type(value).__name__} cannot be read as an array: {type(exc).__name__}: {exc}"
        raise Mismatch(msg) from exc
    dtype = array.dtype
    if dtype.kind == "O" or (dtype.kind in "USV" and dtype.fields is None):
        msg = f"{what} of type {type(value).__name__} is not numeric (NumPy sees dtype {dtype})"
        raise Mismatch(msg)
    if dtype.kind not in OUTPUT_KINDS or dtype.newbyteorder("=").str not in WIRE_DTYPES:
        msg = (
            f"{what} of type {type(value).__name__} has dtype {dtype}; "
            "outputs must be bool, integer or float arrays"
        )
        raise Mismatch(msg)
    return array


def _exception_outcome(exc: BaseException) -> Outcome:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    bases = tuple(c.__name__ for c in type(exc).__mro__)
    try:
        text = strip_controls(str(exc)).strip()
    except Exception:  # an exception whose own message raises is still the adapter's error
        text = f"<unprintable {type(exc).__name__}>"
    message = text.splitlines()[0][:500] if text else ""
    if isinstance(exc, NotImplementedError):
        return Outcome("unsupported", message=message or type(exc).__name__)
    return Outcome("raised", error_type=type(exc).__name__, error_bases=bases, message=message, where=where)


def execute(
    adapter: Adapter,
    function: str,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    own_process: bool,
    limit: int | None = None,
) -> Outcome:
    """Call ``adapter.<function>`` on copies of the arguments; every outcome becomes an Outcome.

    ``own_process``: the worker, which silences torch's warning about our
    read-only arrays once for good; in the suite's process it is silenced
    around the call only, leaving the caller's warning filters as they were.
    ``limit``: the bytes the outputs may hold (see :func:`to_host`).
    """
    args = tuple(_read_only(a) for a in args)
    kwargs = {k: _read_only(v) for k, v in kwargs.items()}
    outputs = len(CANONICAL_OUTPUTS.get(function, ("out",)))
    try:
        if own_process:
            return Outcome("ok", to_host(getattr(adapter, function)(*args, **kwargs), outputs, limit))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=TORCH_READONLY_WARNING)  # torch.from_numpy, read-only
            return Outcome("ok", to_host(getattr(adapter, function)(*args, **kwargs), outputs, limit))
    except Mismatch as exc:
        return Outcome("bad-output", message=str(exc))
    except KeyboardInterrupt:
        raise
    except BaseException as exc:  # SystemExit too: the adapter does not end the run
        return _exception_outcome(exc)


def describe_adapter(adapter: Adapter) -> AdapterInfo:
    """The adapter's declarations; a ``describe()`` that raises is reported, not fatal."""
    try:
        description = dict(adapter.describe())
    except Exception as exc:
        description = {"describeError": f"{type(exc).__name__}: {exc}"}
    description.setdefault("name", adapter.name)
    supported = tuple(f for f in CANONICAL_FUNCTIONS if adapter.supports(f))
    return AdapterInfo(
        str(adapter.name),
        dataclasses.asdict(adapter.capabilities),
        supported,
        _plain(description),
        tuple(str(w) for w in getattr(adapter, "warnings", ())),
    )


def _plain(value: Any) -> Any:
    """JSON-friendly copy of a description (unknown objects become their repr)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


# --- executors ------------------------------------------------------------------------------------------


class InProcessExecutor:
    """Runs an adapter object in this process (no time limit; see the module docstring)."""

    isolated = False

    def __init__(self, adapter: Adapter) -> None:
        self._adapter = adapter
        self.info = describe_adapter(adapter)

    def call(
        self,
        function: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        expected_bytes: int | None = None,
    ) -> Outcome:
        """One call; ``expected_bytes`` is accepted for symmetry (nothing crosses a pipe here)."""
        return execute(self._adapter, function, args, kwargs, own_process=False)

    def close(self) -> str:
        return ""


class _Tail:
    """The last ``limit`` bytes written into a stream, kept in memory (thread-safe)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._chunks: collections.deque[bytes] = collections.deque()
        self._size = 0
        self._lock = threading.Lock()

    def drain(self, stream: IO[bytes]) -> None:
        """Read ``stream`` to its end (then close it), keeping its tail."""
        fd = stream.fileno()
        try:
            while chunk := os.read(fd, 1 << 16):
                with self._lock:
                    self._chunks.append(chunk)
                    self._size += len(chunk)
                    while self._size - len(self._chunks[0]) >= self.limit:
                        self._size -= len(self._chunks.popleft())
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                stream.close()

    def text(self) -> str:
        with self._lock:
            data = b"".join(self._chunks)[-self.limit :]
        return strip_controls(data.decode("utf-8", errors="replace"))


def _read_replies(stream: IO[bytes], replies: queue.Queue[Any], limit: list[int]) -> None:
    """The reader thread: replies into ``replies`` until the end or the first undecodable one."""
    try:
        while True:
            replies.put(read_reply(stream, lambda: limit[0]))
    except EOFError:
        replies.put(("eof", ""))
    except ReplyCutShort as exc:
        replies.put(("eof", str(exc)))
    except ReplyTooLarge as exc:
        replies.put(("over", exc.size, exc.limit))
    except Exception as exc:  # ReplyError, or anything numpy raises on a forged shape
        replies.put(("bad", f"{exc}" if isinstance(exc, ReplyError) else f"{type(exc).__name__}: {exc}"))
    finally:
        with contextlib.suppress(OSError):
            stream.close()


def _has_exited(proc: subprocess.Popen[bytes], seconds: float = 0.0) -> bool:
    """Whether ``proc`` has ended (within ``seconds``), without reaping it where the OS allows."""
    deadline = time.monotonic() + seconds
    while True:
        if proc.returncode is not None:
            return True
        if hasattr(os, "waitid"):
            try:
                if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                    return True
            except ChildProcessError:
                return True
        elif proc.poll() is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGKILL to the worker's whole process group (it leads its own session), then to the worker."""
    if hasattr(os, "killpg"):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(OSError):
            proc.kill()


class WorkerExecutor:
    """Runs the adapter named by ``spec`` in a child process, with a per-call time limit.

    Raises :class:`AdapterError` when the adapter cannot be loaded (an import
    error, an exception or exit at import, invalid capabilities, a load reply
    the suite cannot read).
    """

    isolated = True

    def __init__(self, spec: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        if not timeout > 0:
            msg = f"timeout must be a positive number of seconds; got {timeout!r}"
            raise ValueError(msg)
        self.spec, self.timeout = spec, float(timeout)
        self._output = _Tail(MAX_OUTPUT)
        self._drains: list[threading.Thread] = []
        self._proc: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[Any] = queue.Queue()
        self._limit = [0]
        self._busy = False
        self.restarts = 0
        self.info = self._start()

    def _start(self) -> AdapterInfo:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *filter(None, [env.get("PYTHONPATH")])])
        proc = subprocess.Popen(
            [sys.executable, "-m", "posenc_ref_conformance._worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        self._proc = proc
        self._replies, self._limit = queue.Queue(), [0]  # a load reply carries no arrays
        self._reader = threading.Thread(
            target=_read_replies, args=(proc.stdout, self._replies, self._limit), daemon=True
        )
        self._reader.start()
        drain = threading.Thread(target=self._output.drain, args=(proc.stderr,), daemon=True)
        drain.start()
        self._drains.append(drain)
        assert proc.stdin is not None
        try:
            write_request(proc.stdin, ("load", self.spec))
        except OSError:
            pass  # it died at once: the reader reports the end of its stream
        try:
            reply = self._wait(LOAD_TIMEOUT)
        except BaseException:  # KeyboardInterrupt: the worker (in its own session) would not see it
            self._stop()
            raise
        if reply is None:
            self._stop()
            msg = f"adapter {self.spec!r} did not load within {LOAD_TIMEOUT:.0f} s"
            raise AdapterError(msg)
        if reply[0] == "eof":
            code = self._stop(grace=1.0)
            msg = f"adapter {self.spec!r}: its process exited with code {code} while loading{self._tail()}"
            raise AdapterError(msg)
        if reply[0] == "load-failed":
            self._stop(grace=1.0)
            raise AdapterError(reply[1])
        if reply[0] != "ready":
            self._stop()
            why = self._why(reply)
            msg = f"adapter {self.spec!r}: its process sent a load reply the suite cannot read: {why}"
            raise AdapterError(msg)
        return reply[1]

    @staticmethod
    def _why(reply: tuple[Any, ...]) -> str:
        if reply[0] == "over":
            return f"reply of {reply[1]} bytes exceeds the limit of {reply[2]} bytes"
        if reply[0] == "bad":
            return str(reply[1])
        return f"an unexpected {reply[0]!r} reply"

    def _wait(self, seconds: float) -> Any:
        """The next reply, ``None`` after ``seconds``, ``("eof", ...)`` as soon as the worker has exited."""
        deadline = time.monotonic() + seconds
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                return self._replies.get(timeout=min(POLL_SECONDS, remaining))
            except queue.Empty:
                pass
            if self._proc is not None and _has_exited(self._proc):
                try:  # a reply sent just before the end is read; a pipe a helper holds is not waited for
                    return self._replies.get(timeout=EXIT_GRACE)
                except queue.Empty:
                    return ("eof", "")

    def _stop(self, grace: float = 0.0) -> int | None:
        """Kill the worker's process group (after ``grace`` s to end by itself); return its exit code."""
        proc, self._proc = self._proc, None
        if proc is None:
            return None
        if grace:
            _has_exited(proc, grace)
        _kill_group(proc)  # before reaping: the group id cannot have been reused
        code = proc.wait()
        if proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        self._reader.join(timeout=2)  # the group is dead, so the reader sees the end at once
        self._busy = False
        return code

    def _tail(self) -> str:
        if self._drains:
            self._drains[-1].join(timeout=1)
        text = self.output().strip().splitlines()
        return f"; its last output: {text[-1][:300]!r}" if text else ""

    def call(
        self,
        function: str,
        args: tuple[Any, ...],
        kwargs: dict[str, Any],
        *,
        expected_bytes: int | None = None,
    ) -> Outcome:
        """One call in the worker; ``expected_bytes`` sets the reply limit (see :func:`reply_limit`)."""
        if self._proc is None:
            try:
                self._start()
                self.restarts += 1
            except AdapterError as exc:
                return Outcome("crashed", message=f"the adapter could not be restarted: {exc}")
        assert self._proc is not None and self._proc.stdin is not None
        limit = reply_limit(expected_bytes)
        self._limit[0] = limit
        self._busy = True
        try:
            write_request(self._proc.stdin, ("call", function, args, kwargs, limit))
        except OSError:
            self._stop()
            return Outcome("crashed", message="the adapter's process had exited before the call")
        reply = self._wait(self.timeout)
        self._busy = False
        if reply is None:
            self._stop()
            return Outcome("timeout", message=f"timed out after {self.timeout:g} s (the call was stopped)")
        if reply[0] == "eof":
            code = self._stop(grace=1.0)
            cut = f"; {reply[1]}" if reply[1] else ""
            return Outcome(
                "crashed",
                message=f"the adapter's process exited with code {code} during the call"
                f" (sys.exit/os._exit or a crash in native code){cut}",
            )
        if reply[0] == "over":
            self._stop()
            return Outcome(
                "bad-output",
                message=f"{self._why(reply)} (announced by the adapter's process, which was stopped)",
            )
        if reply[0] != "done":
            self._stop()
            return Outcome(
                "bad-output",
                message=f"the adapter's process sent a reply the suite cannot read ({self._why(reply)});"
                " the process was stopped",
            )
        outcome, outputs = reply[1], len(CANONICAL_OUTPUTS.get(function, ("out",)))
        if outcome.kind == "ok" and (outputs > 1) != isinstance(outcome.value, tuple):
            return Outcome(
                "bad-output", message="the reply holds another number of outputs than the call has"
            )
        if outcome.kind == "ok" and outputs > 1 and len(outcome.value) != outputs:
            return Outcome(
                "bad-output", message=f"the reply holds {len(outcome.value)} outputs; expected {outputs}"
            )
        return outcome

    def output(self) -> str:
        """What the adapter printed so far (the last MAX_OUTPUT bytes), without terminal controls."""
        return self._output.text()

    def close(self) -> str:
        """Stop the worker and every process of its group; return what the adapter printed."""
        proc = self._proc
        if proc is not None and proc.stdin is not None and not self._busy:
            with contextlib.suppress(OSError):
                write_request(proc.stdin, ("exit",))
                proc.stdin.close()
            _has_exited(proc, 10)
        self._stop()
        deadline = time.monotonic() + 2  # the group is dead: the capture pipes end at once
        for drain in self._drains:
            drain.join(timeout=max(0.0, deadline - time.monotonic()))
        return self.output()


# --- the suite's view of an adapter --------------------------------------------------------------------


class CallFailed(Exception):
    """An adapter call did not return a usable value (``outcome`` says why)."""

    def __init__(self, outcome: Outcome) -> None:
        super().__init__(outcome.describe())
        self.outcome = outcome


class CallUnsupported(CallFailed, NotImplementedError):
    """The adapter raised ``Unsupported`` (or any ``NotImplementedError``)."""


class ProxyAdapter(Adapter):
    """The adapter as the suite's code sees it: canonical methods that go through an executor.

    Methods return host NumPy values or raise :class:`CallFailed`; every call,
    its arguments and its outcome are the executor's business.
    """

    def __init__(self, executor: InProcessExecutor | WorkerExecutor) -> None:
        self.executor = executor
        info = executor.info
        self.name = info.name
        self.capabilities = Capabilities.from_any(info.capabilities)
        self._supported = set(info.supported)

    def describe(self) -> dict[str, Any]:
        return dict(self.executor.info.description)

    def supports(self, function: str) -> bool:
        return function in self._supported

    def outcome(self, function: str, *args: Any, expected_bytes: int | None = None, **kwargs: Any) -> Outcome:
        """The raw outcome of one call (for callers that judge errors themselves).

        ``expected_bytes`` (not passed to the adapter): the bytes of the call's
        expected outputs at float64, which bounds the reply (see :func:`reply_limit`).
        """
        return self.executor.call(function, args, kwargs, expected_bytes=expected_bytes)

    def _value(self, function: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        outcome = self.executor.call(function, args, kwargs)
        if outcome.kind == "ok":
            return outcome.value
        if outcome.kind == "unsupported":
            raise CallUnsupported(outcome)
        raise CallFailed(outcome)


def _forwarding(function: str) -> Any:
    def method(self: ProxyAdapter, *args: Any, **kwargs: Any) -> Any:
        return self._value(function, args, kwargs)

    method.__name__ = function
    method.__doc__ = f"``{function}`` through the executor."
    return method


for _function in CANONICAL_FUNCTIONS:
    setattr(ProxyAdapter, _function, _forwarding(_function))
