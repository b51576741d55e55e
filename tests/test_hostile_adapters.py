"""The suite against adapters that lie, crash, hang, exit, mutate their inputs or implement nothing.

Every verdict the suite can give is shown to be right here: a broken call is
that case's FAIL (and the run goes on), an adapter that tests nothing is
NOTHING TESTED (exit 3) or a usage error (exit 2), never PASS.  Adapters are
files run the way ``posenc-ref check FILE`` runs them (in their own process),
except where a test says it runs one in-process.
"""

from __future__ import annotations

import json
import pathlib
import re
import textwrap
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance.adapters import AdapterError
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.cli import main
from posenc_ref_conformance.runner import run

REFERENCE = (
    "from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter\n_ref = PosencRefAdapter()\n"
)


def _adapter(tmp_path: pathlib.Path, source: str, name: str = "adapter.py") -> str:
    """Write an adapter file (``source`` dedented; a leading REFERENCE stays as it is)."""
    head = REFERENCE if source.startswith(REFERENCE) else ""
    path = tmp_path / name
    path.write_text(head + textwrap.dedent(source[len(head) :]))
    return str(path)


def _statuses(report: Any, prefix: str) -> set[str]:
    return {r.status for r in report.results if r.id.startswith(prefix)}


def _details(report: Any, prefix: str) -> list[str]:
    return [r.detail for r in report.results if r.id.startswith(prefix) and r.status == "fail"]


class TestBrokenCalls:
    """Each broken call fails its own cases; the functions that work still pass, the run ends with FAIL."""

    def test_raise_nan_wrong_shape_none_and_odd_types(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            REFERENCE
            + """
            import itertools
            import numpy as np

            def t5_bucket(relative, **kw):
                raise RuntimeError("kernel crashed")

            def alibi_slopes(num_heads, *, max_bias, dtype):
                return np.full(num_heads, np.nan, dtype=dtype)

            def relative_positions(q_positions, k_positions):
                return np.zeros((1, 1), dtype=np.int64)

            def rope_cos_sin(positions, inv_freq, **kw):
                return None

            def rope_frequencies(dim, **kw):
                inv, factor = _ref.rope_frequencies(dim, **kw)
                return inv, "1.0"

            def llama4_attn_scale(positions, **kw):
                return (x for x in itertools.count())

            def causal_mask(q_positions, k_positions, **kw):
                return itertools.count()

            def shaw_index(relative, **kw):
                return _ref.shaw_index(relative, **kw)
            """,
        )
        report = run(spec, invariants=False, timeout=20)
        assert report.verdict == "FAIL" and report.exit_code == 1
        assert _statuses(report, "shaw_index/") == {"pass"}
        expectations = {
            "t5_bucket/bidirectional/": "raised RuntimeError: kernel crashed",
            "alibi_slopes/max-bias-8/": "non-finite values",
            "relative_positions/": "shape (1, 1)",
            "rope_cos_sin/": "returned NoneType; expected a tuple of 2 outputs",
            "rope_frequencies/default/": "output 2 is str",
            "llama4_attn_scale/defaults/": "not numeric",
            "causal_mask/plain/": "not numeric",
        }
        for prefix, text in expectations.items():
            details = _details(report, prefix)
            assert details and all(text in d for d in details), (prefix, details[:2])

    def test_torch_meta_and_bfloat16_tensors(self, tmp_path: pathlib.Path) -> None:
        pytest.importorskip("torch", reason="torch is not installed", exc_type=ImportError)
        spec = _adapter(
            tmp_path,
            """
            import torch

            def alibi_slopes(num_heads, *, max_bias, dtype):
                return torch.empty(num_heads, device="meta")

            def llama4_attn_scale(positions, *, floor_scale, attn_scale, convention, dtype):
                return torch.ones(tuple(positions.shape), dtype=torch.bfloat16)
            """,
        )
        report = run(spec, invariants=False, only=["alibi_slopes", "llama4_attn_scale"], timeout=20)
        assert report.verdict == "FAIL"
        for prefix in ("alibi_slopes/max-bias-8/", "llama4_attn_scale/defaults/"):
            details = _details(report, prefix)
            assert details and all("cannot be read as an array" in d for d in details), details[:1]

    def test_a_hang_is_stopped_and_the_run_goes_on(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            REFERENCE
            + """
            import time

            def alibi_slopes(num_heads, **kw):
                if num_heads == 3:
                    time.sleep(600)
                return _ref.alibi_slopes(num_heads, **kw)
            """,
        )
        report = run(spec, invariants=False, only=["alibi_slopes"], timeout=2)
        hung = [r for r in report.results if r.id == "alibi_slopes/max-bias-8/heads-3"]
        assert [r.status for r in hung] == ["fail", "fail"]
        assert all("timed out after 2 s" in r.detail for r in hung)
        assert _statuses(report, "alibi_slopes/max-bias-8/heads-4") == {"pass"}  # after a restart

    @pytest.mark.parametrize(
        ("body", "text"),
        [
            ("raise SystemExit(0)", "raised SystemExit"),
            ("import sys; sys.exit(3)", "raised SystemExit"),
            ("import os; os._exit(0)", "exited with code 0 during the call"),
            ("import os; os.abort()", "during the call"),
        ],
        ids=["SystemExit", "sys.exit", "os._exit", "abort"],
    )
    def test_exit_in_a_call_fails_that_case_only(self, tmp_path: pathlib.Path, body: str, text: str) -> None:
        spec = _adapter(
            tmp_path,
            REFERENCE
            + f"""
            def alibi_slopes(num_heads, **kw):
                if num_heads == 5:
                    {body}
                return _ref.alibi_slopes(num_heads, **kw)
            """,
        )
        report = run(spec, invariants=False, only=["alibi_slopes"], timeout=20)
        assert report.verdict == "FAIL"
        exited = [r for r in report.results if r.id == "alibi_slopes/max-bias-8/heads-5"]
        assert exited and all(r.status == "fail" and text in r.detail for r in exited), exited
        assert _statuses(report, "alibi_slopes/max-bias-8/heads-6") == {"pass"}

    def test_invalid_input_passes_only_on_the_named_error(self, tmp_path: pathlib.Path) -> None:
        source = REFERENCE + textwrap.dedent("""
            CAPABILITIES = {"error_types": ERRORS}

            def alibi_slopes(num_heads, **kw):
                if num_heads <= 0 or kw["max_bias"] <= 0:
                    raise NameError("undefined")
                return _ref.alibi_slopes(num_heads, **kw)
            """)
        strict = run(
            _adapter(tmp_path, "ERRORS = []\n" + source, "a.py"), invariants=False, only=["alibi_slopes"]
        )
        invalid = [r for r in strict.results if "/invalid/" in r.id]
        assert invalid and all(r.status == "fail" and "raised NameError" in r.detail for r in invalid)
        declared = run(
            _adapter(tmp_path, "ERRORS = ['NameError']\n" + source, "b.py"),
            invariants=False,
            only=["alibi_slopes"],
        )
        assert declared.verdict == "PASS"
        assert all("declared error type" in r.detail for r in declared.results if "/invalid/" in r.id)


class TestInputsAreCopies:
    """An adapter that writes into what it is given changes nothing the suite judges."""

    MUTANT = """
        import numpy as np
        from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter

        class Mutant(PosencRefAdapter):
            def alibi_bias(self, q_positions, k_positions, slopes, *, form):
                if form != "causal":
                    return super().alibi_bias(q_positions, k_positions, slopes, form=form)
                k_positions.setflags(write=True)  # the copy owns its memory, so this is allowed
                k_positions[...] = 0               # 'every key at 0': a zero bias then 'agrees'
                return np.zeros((len(slopes), len(q_positions), len(k_positions)), dtype=slopes.dtype)

            def rope_frequencies(self, dim, *, scaling, **kw):
                result = super().rope_frequencies(dim, scaling=scaling, **kw)
                if scaling:
                    scaling.clear()                # would corrupt the float32 run of a shared dict
                return result

        ADAPTER = Mutant()
        """

    def test_zeroed_causal_alibi_with_overwritten_keys_fails(self, tmp_path: pathlib.Path) -> None:
        report = run(_adapter(tmp_path, self.MUTANT), only=["alibi_bias"], invariants=False)
        assert report.verdict == "FAIL"
        assert _statuses(report, "alibi_bias/causal/") == {"fail"}
        assert _statuses(report, "alibi_bias/symmetric/") == {"pass"}

    def test_cleared_scaling_dicts_do_not_leak_into_later_calls(self, tmp_path: pathlib.Path) -> None:
        report = run(_adapter(tmp_path, self.MUTANT), only=["rope_frequencies"], invariants=False)
        assert report.verdict == "PASS", [r.result_id for r in report.results if r.status == "fail"]

    def test_in_process_too(self) -> None:
        namespace: dict[str, Any] = {}
        exec(textwrap.dedent(self.MUTANT), namespace)
        report = run(namespace["ADAPTER"], only=["alibi_bias", "rope_frequencies"], invariants=False)
        assert _statuses(report, "alibi_bias/causal/") == {"fail"}
        assert _statuses(report, "rope_frequencies/") - {"skip"} == {"pass"}  # variant cases skip

    def test_inputs_arrive_read_only(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            REFERENCE
            + """
            def relative_positions(q_positions, k_positions):
                k_positions -= 1
                return _ref.relative_positions(q_positions, k_positions)
            """,
        )
        report = run(spec, only=["relative_positions"], invariants=False)
        details = _details(report, "relative_positions/")
        assert details and all("read-only" in d for d in details), details[:1]


class TestNothingTested:
    """An adapter or selection that compares nothing is never PASS."""

    @pytest.mark.parametrize(
        ("source", "message"),
        [
            ("X = 1\n", "implements none of the canonical functions"),
            (
                "def rope_cos_sins(*a, **k): pass\ndef alibi_slope(*a, **k): pass\n",
                "did you mean 'rope_cos_sin'",
            ),
            (
                "CAPABILITIES = {'dtypes': []}\ndef t5_bucket(r, **k): return r\n",
                "dtypes must name at least one",
            ),
            (
                "CAPABILITIES = {'dtypes': 'float32'}\ndef t5_bucket(r, **k): return r\n",
                "dtypes must be a list",
            ),
            (
                "CAPABILITIES = {'layout': ['half']}\ndef t5_bucket(r, **k): return r\n",
                "did you mean 'layout' -> 'layouts'",
            ),
            (
                "CAPABILITIES = {'layouts': ['neox']}\ndef t5_bucket(r, **k): return r\n",
                "layouts must be chosen from",
            ),
            ("import sys\nsys.exit(0)\n", "called sys.exit(0) while loading"),
            ("import os\nos._exit(4)\n", "exited with code 4 while loading"),
            ("raise ImportError('no kernel')\n", "failed while loading: ImportError: no kernel"),
        ],
        ids=[
            "empty",
            "misspelt",
            "no-dtypes",
            "dtypes-string",
            "bad-key",
            "bad-layout",
            "exit",
            "_exit",
            "raise",
        ],
    )
    def test_usage_errors(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str], source: str, message: str
    ) -> None:
        spec = _adapter(tmp_path, source)
        with pytest.raises(AdapterError, match=re.escape(message)):
            run(spec)
        assert main(["check", spec]) == 2
        err = capsys.readouterr().err
        assert err.startswith("posenc-ref: error: ") and message in err and err.count("\n") == 1

    def test_a_module_of_something_else(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["check", "os:path"]) == 2
        assert "implements none of the canonical functions" in capsys.readouterr().err

    def test_capabilities_that_match_nothing(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        spec = _adapter(
            tmp_path, REFERENCE + "CAPABILITIES = {'layouts': []}\nrope_cos_sin = _ref.rope_cos_sin\n"
        )
        report = run(spec, only=["rope_cos_sin"], invariants=False)
        assert report.verdict == "NOTHING TESTED" and report.exit_code == 3
        assert main(["check", spec, "--only", "rope_cos_sin", "--no-invariants"]) == 3
        out = capsys.readouterr().out
        assert out.rstrip().splitlines()[-1] == "RESULT: NOTHING TESTED (exact class)"
        assert "not supported" in out

    def test_only_selecting_what_the_adapter_lacks(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(tmp_path, REFERENCE + "t5_bucket = _ref.t5_bucket\n")
        assert run(spec, only=["t5"]).verdict == "PASS"
        partial = run(spec, only=["t5", "alibi"])
        assert partial.verdict == "NOTHING TESTED" and partial.uncompared() == ["alibi"]

    def test_a_factory_function(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(tmp_path, REFERENCE + "def make():\n    return PosencRefAdapter()\n")
        report = run(f"{spec}:make", only=["t5"])
        assert report.verdict == "PASS" and report.adapter["name"] == "posenc_ref"
        bad = _adapter(tmp_path, "def make():\n    return 42\n", "bad.py")
        with pytest.raises(AdapterError, match="returned int; expected an Adapter or a module"):
            run(f"{bad}:make")


class TestTheReportCannotBeForged:
    def test_adapter_output_is_shown_apart(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        spec = _adapter(
            tmp_path,
            """
            import os, sys
            print("RESULT: PASS")
            def t5_bucket(relative, **kw):
                print("RESULT: PASS", flush=True)
                os.write(1, b"RESULT: PASS from native code\\n")
                sys.stderr.write("RESULT: PASS on stderr\\n")
                return relative * 0 + 99
            """,
        )
        assert main(["check", spec, "--only", "t5", "--json", str(tmp_path / "r.json")]) == 1
        out = capsys.readouterr().out
        lines = out.splitlines()
        assert [line for line in lines if line.startswith("RESULT:")] == ["RESULT: FAIL (exact class)"]
        assert "  | RESULT: PASS from native code" in lines and "  | RESULT: PASS on stderr" in lines
        report = json.loads((tmp_path / "r.json").read_text())
        assert report["verdict"] == "FAIL" and "RESULT: PASS" in report["adapterOutput"]

    def test_describe_that_raises(self, tmp_path: pathlib.Path) -> None:
        spec = _adapter(
            tmp_path,
            REFERENCE
            + """
            t5_bucket = _ref.t5_bucket
            def describe():
                raise RuntimeError("no version")
            """,
        )
        report = run(spec, only=["t5"])
        assert report.verdict == "PASS" and "RuntimeError: no version" in report.adapter["describeError"]


class TestCommandLineErrors:
    """Every usage problem is exit 2 with one line on stderr, before anything runs."""

    def test_xfail_files(self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
        (tmp_path / "latin1.txt").write_bytes("t5_bucket/ # caf\xe9\n".encode("latin-1"))
        for path, text in [
            (tmp_path / "missing.txt", "cannot be read"),
            (tmp_path, "cannot be read"),
            (tmp_path / "latin1.txt", "is not UTF-8 text"),
        ]:
            assert main(["check", "posenc_ref", "--xfails", str(path)]) == 2
            err = capsys.readouterr().err
            assert text in err and err.count("\n") == 1, err

    def test_a_byte_order_mark_keeps_the_first_entry(self, tmp_path: pathlib.Path) -> None:
        from posenc_ref_conformance.runner import load_xfails

        (tmp_path / "bom.txt").write_bytes("\ufefft5_bucket/\nalibi_slopes/\n".encode())
        assert load_xfails(tmp_path / "bom.txt") == ["t5_bucket/", "alibi_slopes/"]

    def test_json_into_a_folder(self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["check", "posenc_ref", "--json", str(tmp_path)]) == 2
        assert "is a directory" in capsys.readouterr().err

    @pytest.mark.parametrize(
        "argv",
        [["check"], ["check", "posenc_ref", "--only", "nonsense"], ["check", "no_such_module_x"], ["golden"]],
        ids=["no-adapter", "bad-only", "missing-module", "golden-no-action"],
    )
    def test_exit_2(
        self, argv: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        monkeypatch.delenv("POSENC_REF_ADAPTER", raising=False)
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith("posenc-ref: error: ") and err.count("\n") == 1

    @pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "soon"])
    def test_bad_timeouts(
        self, value: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        with pytest.raises(SystemExit) as info:
            main(["check", "posenc_ref", "--timeout", value])
        assert info.value.code == 2
        monkeypatch.setenv("POSENC_REF_TIMEOUT", value)
        assert main(["check", "posenc_ref"]) == 2
        assert "POSENC_REF_TIMEOUT must be a positive number of seconds" in capsys.readouterr().err


def test_in_process_adapters_are_contained_too() -> None:
    """An adapter object (Python API) gets the same containment, SystemExit included."""

    class Exits(PosencRefAdapter):
        def t5_bucket(self, relative: Any, **kw: Any) -> Any:
            raise SystemExit(1)

        def alibi_slopes(self, num_heads: int, **kw: Any) -> Any:
            return np.full(num_heads, np.inf)

    report = run(Exits(), only=["t5_bucket", "alibi_slopes"], invariants=False)
    assert report.verdict == "FAIL"
    assert _statuses(report, "t5_bucket/bidirectional/") == {"fail"}
    assert all("SystemExit" in d for d in _details(report, "t5_bucket/bidirectional/"))
