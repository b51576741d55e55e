"""Calling an adapter without trusting it: copies in, host arrays out, every failure contained.

The suite never lets an adapter touch its own data or decide its fate:

* **Inputs are read-only copies** (arrays) and fresh copies (dicts, lists) for
  every call, so an adapter that writes into them changes nothing the suite
  reads afterwards (an in-place NumPy write raises, and fails that case).
* **Outputs are converted to NumPy** in the process that ran the adapter; a
  call with several outputs must return a tuple or list of exactly that many
  (never an iterator, which could be endless).
* **Every outcome is data** (:class:`Outcome`): a value, an exception (its
  type name, the names of its base classes and its message), ``Unsupported``,
  an unconvertible output, a time-out or the death of the adapter's process.

Two executors implement this.  :class:`WorkerExecutor` (used for adapter
*specs*, as the CLI and the pytest plugin do) loads the adapter in a child
Python process (``python -m posenc_ref_conformance._worker``) whose standard
output and error go to a capture file: a per-call time limit kills a hung call,
``sys.exit``/``os._exit``/a crash end only that call (the worker is restarted),
and nothing the adapter prints can reach the report's own lines (what it printed
comes back without terminal control sequences, as do its exception messages).
:class:`InProcessExecutor` (used when Python code passes an adapter *object*)
gives the same copies, conversions and containment (``SystemExit`` included) but
cannot stop a call that hangs or kills the process.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import os
import pickle
import queue
import struct
import subprocess
import sys
import tempfile
import threading
import traceback
import warnings
from typing import IO, Any

import numpy as np

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
#: Bytes of captured adapter output kept for the report.
MAX_OUTPUT = 1 << 20

TORCH_READONLY_WARNING = "The given NumPy array is not writable"


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one adapter call did.

    ``kind``: ``ok`` (``value`` holds NumPy arrays or Python numbers), ``raised``,
    ``unsupported`` (``NotImplementedError``, including ``Unsupported``),
    ``bad-output`` (the returned object is not an array of the expected count),
    ``timeout`` or ``crashed`` (the adapter's process ended during the call).
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


# --- both sides: copies in, host arrays out -----------------------------------------------------------


def _read_only(value: Any) -> Any:
    """A copy the adapter cannot use to reach the suite's data (arrays read-only)."""
    if isinstance(value, np.ndarray):
        out = np.array(value, copy=True)
        out.flags.writeable = False
        return out
    return copy.deepcopy(value)


def to_host(value: Any, outputs: int) -> Any:
    """``value`` as NumPy arrays (a tuple of ``outputs`` arrays when ``outputs > 1``); raises Mismatch."""
    if outputs == 1:
        return _one_to_host(value, "the output")
    if not isinstance(value, (tuple, list)):
        msg = f"returned {type(value).__name__}; expected a tuple of {outputs} outputs"
        raise Mismatch(msg)
    if len(value) != outputs:
        msg = f"returned {len(value)} outputs; expected {outputs}"
        raise Mismatch(msg)
    return tuple(_one_to_host(v, f"output {i + 1}") for i, v in enumerate(value))


def _one_to_host(value: Any, what: str) -> Any:
    if value is None or isinstance(value, (str, bytes, dict, set)):
        msg = f"{what} is {type(value).__name__}, not an array or number"
        raise Mismatch(msg)
    try:
        array = as_numpy(value)
    except Mismatch:
        raise
    except Exception as exc:
        msg = f"{what} of type {type(value).__name__} cannot be read as an array: {type(exc).__name__}: {exc}"
        raise Mismatch(msg) from exc
    if array.dtype == object or array.dtype.kind in "USV":
        msg = f"{what} of type {type(value).__name__} is not numeric (NumPy sees dtype {array.dtype})"
        raise Mismatch(msg)
    return array


def _exception_outcome(exc: BaseException) -> Outcome:
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{os.path.basename(frames[-1].filename)}:{frames[-1].lineno}" if frames else ""
    bases = tuple(c.__name__ for c in type(exc).__mro__)
    text = strip_controls(str(exc)).strip()
    message = text.splitlines()[0][:500] if text else ""
    if isinstance(exc, NotImplementedError):
        return Outcome("unsupported", message=message or type(exc).__name__)
    return Outcome("raised", error_type=type(exc).__name__, error_bases=bases, message=message, where=where)


def execute(
    adapter: Adapter, function: str, args: tuple[Any, ...], kwargs: dict[str, Any], *, own_process: bool
) -> Outcome:
    """Call ``adapter.<function>`` on copies of the arguments; every outcome becomes an Outcome.

    ``own_process``: the worker, which silences torch's warning about our
    read-only arrays once for good; in the suite's process it is silenced
    around the call only, leaving the caller's warning filters as they were.
    """
    args = tuple(_read_only(a) for a in args)
    kwargs = {k: _read_only(v) for k, v in kwargs.items()}
    outputs = len(CANONICAL_OUTPUTS.get(function, ("out",)))
    try:
        if own_process:
            return Outcome("ok", to_host(getattr(adapter, function)(*args, **kwargs), outputs))
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=TORCH_READONLY_WARNING)  # torch.from_numpy, read-only
            return Outcome("ok", to_host(getattr(adapter, function)(*args, **kwargs), outputs))
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

    def call(self, function: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        return execute(self._adapter, function, args, kwargs, own_process=False)

    def close(self) -> str:
        return ""


def write_frame(stream: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(struct.pack("<Q", len(data)) + data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    head = stream.read(8)
    if len(head) < 8:
        raise EOFError
    (size,) = struct.unpack("<Q", head)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class WorkerExecutor:
    """Runs the adapter named by ``spec`` in a child process, with a per-call time limit.

    Raises :class:`AdapterError` when the adapter cannot be loaded (an import
    error, an exception or exit at import, invalid capabilities).
    """

    isolated = True

    def __init__(self, spec: str, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        if not timeout > 0:
            msg = f"timeout must be a positive number of seconds; got {timeout!r}"
            raise ValueError(msg)
        self.spec, self.timeout = spec, float(timeout)
        self._capture = tempfile.NamedTemporaryFile(prefix="posenc-ref-adapter-", suffix=".log", delete=False)
        self._capture.close()
        self._proc: subprocess.Popen[bytes] | None = None
        self._replies: queue.Queue[Any] = queue.Queue()
        self.restarts = 0
        try:
            self.info = self._start()
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(self._capture.name)
            raise

    def _start(self) -> AdapterInfo:
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), *filter(None, [env.get("PYTHONPATH")])])
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "posenc_ref_conformance._worker", self._capture.name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self._replies = queue.Queue()
        self._reader = threading.Thread(
            target=self._read_replies, args=(self._proc, self._replies), daemon=True
        )
        self._reader.start()
        assert self._proc.stdin is not None
        write_frame(self._proc.stdin, ("load", self.spec))
        reply = self._wait(LOAD_TIMEOUT)
        if reply is None:
            self._kill()
            msg = f"adapter {self.spec!r} did not load within {LOAD_TIMEOUT:.0f} s"
            raise AdapterError(msg)
        if reply[0] == "died":
            self._reap()
            msg = (
                f"adapter {self.spec!r}: its process exited with code {reply[1]} while loading{self._tail()}"
            )
            raise AdapterError(msg)
        if reply[0] == "load-failed":
            self._kill()
            raise AdapterError(reply[1])
        return reply[1]

    @staticmethod
    def _read_replies(proc: subprocess.Popen[bytes], replies: queue.Queue[Any]) -> None:
        assert proc.stdout is not None
        try:
            while True:
                replies.put(read_frame(proc.stdout))
        except Exception:  # EOF, or a frame cut short by the process dying
            replies.put(("died", proc.wait()))

    def _wait(self, seconds: float) -> Any:
        try:
            return self._replies.get(timeout=seconds)
        except queue.Empty:
            return None

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
        self._reap()

    def _reap(self) -> None:
        """Wait for the process, let the reader see EOF, close both pipes."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.wait()
        self._reader.join(timeout=10)
        for stream in (proc.stdin, proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def _tail(self) -> str:
        text = self.output().strip().splitlines()
        return f"; its last output: {text[-1][:300]!r}" if text else ""

    def call(self, function: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Outcome:
        if self._proc is None:
            try:
                self._start()
                self.restarts += 1
            except AdapterError as exc:
                return Outcome("crashed", message=f"the adapter could not be restarted: {exc}")
        assert self._proc is not None and self._proc.stdin is not None
        try:
            write_frame(self._proc.stdin, ("call", function, args, kwargs))
        except (BrokenPipeError, OSError):
            self._kill()
            return Outcome("crashed", message="the adapter's process had exited before the call")
        reply = self._wait(self.timeout)
        if reply is None:
            self._kill()
            return Outcome("timeout", message=f"timed out after {self.timeout:g} s (the call was stopped)")
        if reply[0] == "died":
            self._reap()
            return Outcome(
                "crashed",
                message=f"the adapter's process exited with code {reply[1]} during the call"
                " (sys.exit/os._exit or a crash in native code)",
            )
        return reply[1]

    def output(self) -> str:
        """Everything the adapter printed so far (last MAX_OUTPUT bytes), without terminal controls."""
        try:
            with open(self._capture.name, "rb") as fh:
                fh.seek(max(0, os.path.getsize(self._capture.name) - MAX_OUTPUT))
                return strip_controls(fh.read().decode("utf-8", errors="replace"))
        except OSError:
            return ""

    def close(self) -> str:
        """Stop the worker; return what the adapter printed."""
        if self._proc is not None and self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                write_frame(self._proc.stdin, ("exit",))
                self._proc.stdin.close()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
        self._reap()
        text = self.output()
        with contextlib.suppress(OSError):
            os.unlink(self._capture.name)
        return text


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

    def outcome(self, function: str, *args: Any, **kwargs: Any) -> Outcome:
        """The raw outcome of one call (for callers that judge errors themselves)."""
        return self.executor.call(function, args, kwargs)

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
