"""The isolation boundary holds against adapters that try to get round it (issue 22).

An adapter run in its own process cannot reach the suite through its reply
(nothing is unpickled: JSON plus raw arrays), cannot hand the comparison an
array subclass (every output becomes a plain ``ndarray``), cannot hang the run
or leave helpers behind (the worker's whole process group is killed; its death
is noticed while a helper still holds the pipes), and cannot make the suite
hold or store more than it allows (replies are bounded, printed output is a
pipe of which only the tail is kept).
"""

from __future__ import annotations

import io
import json
import os
import pathlib
import re
import signal
import struct
import textwrap
import time
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance import _wire, compare, golden, isolation, runner
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.cli import main
from posenc_ref_conformance.runner import run

REFERENCE = (
    "from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter\n_ref = PosencRefAdapter()\n"
)
#: Python code counting this adapter's calls in a file (so the count survives a restart of the worker).
COUNTER = """
import pathlib as _pathlib
_COUNT = _pathlib.Path(__file__).with_suffix(".count")

def _call_number():
    n = int(_COUNT.read_text()) if _COUNT.exists() else 0
    _COUNT.write_text(str(n + 1))
    return n
"""


def _adapter(tmp_path: pathlib.Path, source: str, name: str = "adapter.py") -> str:
    path = tmp_path / name
    path.write_text(REFERENCE + COUNTER + textwrap.dedent(source))
    return str(path)


def _valid(report: Any) -> list[Any]:
    """The t5_bucket results of valid inputs (the invalid-input cases raise through the reference)."""
    return [r for r in report.results if r.id.startswith("t5_bucket/") and "/invalid-" not in r.id]


def _in_process(source: str) -> Any:
    namespace: dict[str, Any] = {"__file__": "in-process.py"}
    exec(REFERENCE + textwrap.dedent(source), namespace)
    return namespace["ADAPTER"]


def _reply_header(dtype: str, shape: list[int]) -> bytes:
    """The JSON header of a successful reply holding one array of ``dtype`` and ``shape``."""
    header = {
        "reply": "done",
        "kind": "ok",
        "error_type": "",
        "error_bases": [],
        "message": "",
        "where": "",
        "value": {"tuple": False, "arrays": [{"dtype": dtype, "shape": shape}]},
    }
    return json.dumps(header).encode("ascii")


class TestRepliesCannotRunCode:
    def test_a_reduce_payload_never_runs_in_the_suite(
        self, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """An array whose unpickling would patch the comparison to pass: all-zero buckets still FAIL."""
        for module in (compare, runner):  # restored after the test, should the payload ever run
            monkeypatch.setattr(module, "compare_output", module.compare_output)
        original = runner.compare_output
        marker = tmp_path / "payload-ran"
        payload = textwrap.dedent(f"""
            import os, posenc_ref_conformance.compare as c, posenc_ref_conformance.runner as r
            with open({str(marker)!r}, "a") as fh:
                fh.write(str(os.getpid()) + "\\n")
            def passing(*a, **k):
                return c.Verdict(True, judged=1)
            c.compare_output = r.compare_output = passing
            """)
        spec = _adapter(
            tmp_path,
            f"""
            import numpy as np
            PAYLOAD = {payload!r}

            class Forged(np.ndarray):
                def __reduce_ex__(self, protocol):
                    zeros = f"__import__('numpy').zeros({{self.shape!r}}, 'int64')"
                    return (eval, (f"[exec(PAYLOAD), {{zeros}}][1]", {{"PAYLOAD": PAYLOAD}}))

            def t5_bucket(relative, **kw):
                _ref.t5_bucket(relative, **kw)  # invalid inputs raise as they should
                return np.zeros(relative.shape, dtype=np.int64).view(Forged)
            """,
        )
        assert main(["check", spec, "--only", "t5_bucket", "--no-invariants"]) == 1
        assert not marker.exists(), marker.read_text()
        assert runner.compare_output is original and compare.compare_output is original

    def test_the_reader_allocates_nothing_for_an_oversized_header(self) -> None:
        head = _reply_header("<f8", [2**40])
        with pytest.raises(_wire.ReplyTooLarge, match=r"reply of 8796093022208 bytes exceeds the limit"):
            _wire.read_reply(io.BytesIO(struct.pack("<I", len(head)) + head), 1 << 20)

    @pytest.mark.parametrize(
        ("frame", "text"),
        [
            (b"\x04\x00\x00\x00{bad", "not ASCII JSON"),
            (b"\xff\xff\xff\xff", "over the limit"),
            (b"\x03\x00", "cut short"),
            ("object", "dtype '|O'"),
            ("cut", "cut short"),
            ("pickle", "dtype"),
        ],
        ids=["json", "header-size", "prefix", "object-dtype", "truncated", "pickle-dtype"],
    )
    def test_undecodable_replies_are_refused(self, frame: bytes | str, text: str) -> None:
        if isinstance(frame, str):
            dtype = {"object": "|O", "cut": "<f8", "pickle": "|V8"}[frame]
            head = _reply_header(dtype, [4])
            frame = struct.pack("<I", len(head)) + head + b"\x00" * 8
        with pytest.raises(_wire.ReplyError, match=text):
            _wire.read_reply(io.BytesIO(frame), 1 << 20)

    def test_a_garbled_reply_fails_the_call_at_once(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            """
            import posenc_ref_conformance._wire as wire
            _write = wire.write_reply

            def _garbled(stream, header, arrays=()):
                if header.get("reply") == "done" and _call_number() == 0:
                    stream.write(b"\\x09\\x00\\x00\\x00not json!")
                    stream.flush()
                    return
                _write(stream, header, arrays)

            wire.write_reply = _garbled
            t5_bucket = _ref.t5_bucket
            """,
        )
        start = time.perf_counter()
        report = run(spec, only=["t5_bucket"], invariants=False, timeout=20)
        assert time.perf_counter() - start < 15
        failed = [r for r in report.results if r.status == "fail"]
        assert len(failed) == 1 and "cannot read (its header is not ASCII JSON" in failed[0].detail
        assert {r.status for r in report.results} - {"fail"} == {"pass"}  # restarted, the rest passes


SUBCLASSES = """
import numpy as np

class AllTrue(np.ndarray):
    '''Equal to everything, every difference zero.'''

    def __eq__(self, other):
        return np.ones(self.shape, dtype=bool)

    def __ne__(self, other):
        return np.zeros(self.shape, dtype=bool)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        shape = np.broadcast_shapes(*(np.shape(x) for x in inputs))
        if ufunc in (np.equal, np.less_equal, np.greater_equal, np.isfinite, np.isclose):
            return np.ones(shape, dtype=bool)
        if ufunc in (np.not_equal, np.less, np.greater, np.isnan, np.isinf):
            return np.zeros(shape, dtype=bool)
        return np.zeros(shape)
"""


class TestOnlyPlainArraysAreJudged:
    MASKED = """
        import numpy as np

        class Masked(PosencRefAdapter):
            def t5_bucket(self, relative, **kw):
                right = super().t5_bucket(relative, **kw)
                wrong = right + 1
                wrong.flat[1:] = right.flat[1:]       # one element wrong ...
                return np.ma.masked_array(wrong, mask=wrong != right)   # ... and masked

        ADAPTER = Masked()
        """

    @pytest.mark.parametrize("where", ["worker", "in-process"])
    def test_a_masked_wrong_answer_fails(self, tmp_path: pathlib.Path, where: str) -> None:
        adapter = _adapter(tmp_path, self.MASKED) if where == "worker" else _in_process(self.MASKED)
        report = run(adapter, only=["t5_bucket"], invariants=False, timeout=20)
        assert report.verdict == "FAIL"
        assert {r.status for r in _valid(report)} == {"fail"}
        assert all("1 of " in r.detail and "elements differ" in r.detail for r in _valid(report))

    @pytest.mark.parametrize("where", ["worker", "in-process"])
    def test_a_subclass_equal_to_everything_fails(
        self, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, where: str
    ) -> None:
        # importable by the suite too, so the array would reach the comparison were it sent as itself
        (tmp_path / "liar_arrays.py").write_text(SUBCLASSES)
        monkeypatch.syspath_prepend(str(tmp_path))
        source = """
            import os, sys
            sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
            from liar_arrays import AllTrue

            class Liar(PosencRefAdapter):
                def t5_bucket(self, relative, **kw):
                    return (super().t5_bucket(relative, **kw) + 1).view(AllTrue)

            ADAPTER = Liar()
            """
        if where == "worker":
            adapter = _adapter(tmp_path, source)
        else:
            namespace: dict[str, Any] = {"__file__": str(tmp_path / "in-process.py")}
            exec(REFERENCE + textwrap.dedent(source), namespace)
            adapter = namespace["ADAPTER"]
        report = run(adapter, only=["t5_bucket"], invariants=False, timeout=20)
        assert report.verdict == "FAIL"
        assert {r.status for r in _valid(report)} == {"fail"}
        assert all("elements differ" in r.detail for r in _valid(report))

    def test_outputs_are_base_class_native_copies(self) -> None:
        masked = np.ma.masked_array(np.arange(4.0), mask=[True, False, True, False])
        out = isolation.to_host(masked, 1)
        assert type(out) is np.ndarray and out.tolist() == [0.0, 1.0, 2.0, 3.0]
        swapped = isolation.to_host(np.arange(3, dtype=">i8"), 1)
        assert type(swapped) is np.ndarray and swapped.dtype == np.dtype("=i8") and swapped.flags.writeable
        for bad in [np.zeros(2, np.complex128), np.zeros(2, "datetime64[s]"), np.zeros(2, [("a", "<f8")])]:
            with pytest.raises(compare.Mismatch, match=re.escape(f"has dtype {bad.dtype}; outputs must be")):
                isolation.to_host(bad, 1)
        with pytest.raises(compare.Mismatch, match="not numeric"):
            isolation.to_host(np.array(["a"]), 1)

    def test_a_complex_output_is_a_bad_output_naming_its_dtype(self) -> None:
        class Complex(PosencRefAdapter):
            def t5_bucket(self, relative: Any, **kw: Any) -> Any:
                return super().t5_bucket(relative, **kw).astype(np.complex128)

        report = run(Complex(), only=["t5_bucket"], invariants=False)
        assert all("bad output" in r.detail and "complex128" in r.detail for r in _valid(report))

    def test_dlpack_only_outputs_are_read(self, tmp_path: pathlib.Path) -> None:
        source = """
            class DLPackOnly:
                '''Nothing but the DLPack protocol, over a correct NumPy array.'''

                def __init__(self, array):
                    self._array = array

                def __dlpack__(self, **kw):
                    return self._array.__dlpack__(**kw)

                def __dlpack_device__(self):
                    return self._array.__dlpack_device__()

            class Wrapped(PosencRefAdapter):
                def t5_bucket(self, relative, **kw):
                    return DLPackOnly(super().t5_bucket(relative, **kw))

            ADAPTER = Wrapped()
            """
        for adapter in (_adapter(tmp_path, source), _in_process(source)):
            report = run(adapter, only=["t5_bucket"], invariants=False, timeout=20)
            assert report.verdict == "PASS", [r.detail for r in report.results if r.status == "fail"][:2]


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie no reaper has collected yet counts as dead)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (OSError, IndexError):
        return True


class TestRunsEnd:
    def test_forked_helpers_neither_hang_the_run_nor_outlive_it(self, tmp_path: pathlib.Path) -> None:
        pids = tmp_path / "helpers.txt"
        spec = _adapter(
            tmp_path,
            f"""
            import os, subprocess, sys, time

            def _record(*pids):
                with open({str(pids)!r}, "a") as fh:
                    fh.write("".join(f"{{p}}\\n" for p in pids))

            def _sleeper():
                pid = os.fork()        # inherits the protocol pipes and the capture pipe
                if pid == 0:
                    time.sleep(600)
                    os._exit(0)
                return pid

            def t5_bucket(relative, **kw):
                n = _call_number()
                if n == 0:             # helpers left running by a call that returns normally
                    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"])
                    _record(_sleeper(), child.pid)
                elif n == 1:           # the worker dies while a helper holds its pipes
                    _record(_sleeper())
                    os._exit(1)
                return _ref.t5_bucket(relative, **kw)
            """,
        )
        start = time.perf_counter()
        try:
            report = run(spec, only=["t5_bucket"], invariants=False, timeout=20)
            elapsed = time.perf_counter() - start
            recorded = [int(p) for p in pids.read_text().split()]
            deadline = time.monotonic() + 5
            while any(map(_alive, recorded)) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert len(recorded) == 3 and not any(map(_alive, recorded)), recorded
            assert elapsed < 15, elapsed  # well under one time-out
            failed = [r for r in report.results if r.status == "fail"]
            assert len(failed) == 1 and "exited with code 1 during the call" in failed[0].detail, failed
            assert {r.status for r in report.results} - {"fail"} == {"pass"}
        finally:  # never leave sleepers behind, whatever the code under test did
            for pid in [int(p) for p in pids.read_text().split()] if pids.exists() else []:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass

    def test_a_class_defined_only_in_the_worker_fails_at_once(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            """
            import numpy as np

            class WorkerOnly(np.ndarray):        # its module cannot be imported by the suite
                pass

            class Opaque:                         # not an array at all
                pass

            def t5_bucket(relative, **kw):
                right = _ref.t5_bucket(relative, **kw)
                n = _call_number()
                if n == 0:
                    return (right + 1).view(WorkerOnly)
                if n == 1:
                    return Opaque()
                return right.view(WorkerOnly)
            """,
        )
        start = time.perf_counter()
        report = run(spec, only=["t5_bucket"], invariants=False, timeout=10)
        assert time.perf_counter() - start < 10  # less than one time-out in all
        assert not [r for r in report.results if "timed out" in r.detail]
        first, second, *rest = _valid(report)
        assert first.status == "fail" and "elements differ" in first.detail
        assert second.status == "fail" and "not numeric" in second.detail
        assert {r.status for r in rest} == {"pass"}


class TestBoundedReplies:
    def test_an_over_limit_reply_fails_its_case_naming_the_limit(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            """
            import numpy as np

            def t5_bucket(relative, **kw):
                if _call_number() == 0:
                    return np.zeros(2**26)       # 512 MiB, never touched: refused before any copy
                return _ref.t5_bucket(relative, **kw)
            """,
        )
        report = run(spec, only=["t5_bucket"], invariants=False, timeout=20)
        first, *rest = _valid(report)
        assert first.status == "fail"
        case = next(c for doc in golden.load() for c in doc["cases"] if c["id"] == first.id)
        limit = _wire.reply_limit(8 * sum(int(np.prod(e["shape"])) for e in case["expected"].values()))
        assert f"reply of {2**29} bytes exceeds the limit of {limit} bytes" in first.detail
        assert {r.status for r in rest} == {"pass"}

    def test_the_limit_follows_the_expected_size(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            """
            import numpy as np

            def t5_bucket(relative, **kw):
                return np.zeros(2**23)           # 64 MiB for a 4-element case
            """,
        )
        relative = np.arange(4)
        limit = _wire.reply_limit(relative.size * 8)
        assert limit == 4 * 32 + 2**20
        executor = isolation.WorkerExecutor(spec, timeout=20)
        try:
            outcome = executor.call("t5_bucket", (relative,), {}, expected_bytes=relative.size * 8)
            assert outcome.kind == "bad-output"
            assert outcome.message == f"reply of {2**26} bytes exceeds the limit of {limit} bytes"
            proxy = isolation.ProxyAdapter(executor)
            assert proxy.outcome("t5_bucket", relative).kind == "ok"  # no expected size: MAX_REPLY_BYTES
        finally:
            executor.close()

    def test_the_suite_refuses_a_worker_that_ignores_the_limit(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            """
            import numpy as np
            import posenc_ref_conformance.isolation as iso

            _to_host = iso.to_host
            iso.to_host = lambda value, outputs, limit=None: _to_host(value, outputs)   # no check here

            def t5_bucket(relative, **kw):
                return np.zeros(2**23)
            """,
        )
        executor = isolation.WorkerExecutor(spec, timeout=20)
        try:
            start = time.perf_counter()
            for _ in range(2):  # and again after the restart
                outcome = executor.call("t5_bucket", (np.arange(4),), {}, expected_bytes=32)
                assert outcome.kind == "bad-output", outcome
                limit = 4 * 32 + 2**20
                assert f"reply of {2**26} bytes exceeds the limit of {limit} bytes" in outcome.message
                assert "which was stopped" in outcome.message
            assert executor.restarts == 1 and time.perf_counter() - start < 15
        finally:
            executor.close()

    def test_printed_output_is_a_pipe_and_only_its_tail_is_kept(self, tmp_path: pathlib.Path) -> None:
        seen = tmp_path / "streams.json"
        spec = _adapter(
            tmp_path,
            f"""
            import json, os, stat, sys

            def t5_bucket(relative, **kw):
                if _call_number() == 0:
                    line = "x" * 1023 + "\\n"
                    for _ in range(100):                      # 100 MiB from Python ...
                        sys.stdout.write(line * 1024)
                    for _ in range(100):                      # ... and 100 MiB from native code
                        os.write(2, line.encode() * 1024)
                    print("END OF OUTPUT", flush=True)
                    modes = [os.fstat(fd).st_mode for fd in (1, 2)]
                    with open({str(seen)!r}, "w") as fh:
                        json.dump([[stat.S_ISFIFO(m), stat.S_ISREG(m)] for m in modes], fh)
                return _ref.t5_bucket(relative, **kw)
            """,
        )
        report = run(spec, only=["t5_bucket"], invariants=False, timeout=60)
        assert report.verdict == "PASS"
        assert json.loads(seen.read_text()) == [[True, False], [True, False]]  # pipes, never files
        assert len(report.adapter_output.encode()) <= isolation.MAX_OUTPUT
        assert report.adapter_output.rstrip().endswith("END OF OUTPUT")


def test_expected_bytes_never_reaches_the_adapter() -> None:
    seen: list[dict[str, Any]] = []

    class Records(PosencRefAdapter):
        def t5_bucket(self, relative: Any, **kw: Any) -> Any:
            seen.append(kw)
            return super().t5_bucket(relative, **kw)

    proxy = isolation.ProxyAdapter(isolation.InProcessExecutor(Records()))
    options = {"bidirectional": True, "num_buckets": 8, "max_distance": 16}
    outcome = proxy.outcome("t5_bucket", np.arange(-3, 4), expected_bytes=56, **options)
    assert outcome.kind == "ok" and type(outcome.value) is np.ndarray, outcome
    assert seen == [options]
