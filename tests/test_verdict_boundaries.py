"""Verdicts nothing can fake: the comparison, the run's verdict and the exit codes under attack.

Each test is a probe of issue 22 that failed before the change: a non-finite
expected value or tolerance accepting any output, a golden set with no case
passing on invariants alone, a crash of the suite or a damaged case mid-run
ending with exit 1 (the FAIL code), malformed matrix reports ending in a traceback.
"""

from __future__ import annotations

import json
import pathlib
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance import cli, compare, runner
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.cli import main
from posenc_ref_conformance.golden import GoldenError
from posenc_ref_conformance.results import EXIT_CODES
from posenc_ref_conformance.runner import run

TOLERANCE = {"atol": 1e-12, "rtol": 1e-12, "maxUlp": 4}


class TestComparison:
    @pytest.mark.parametrize("expected", [np.inf, -np.inf, np.nan])
    def test_a_non_finite_expected_value_matches_no_output(self, expected: float) -> None:
        # before: err <= rtol * |inf| held for every finite output
        want = np.array([0.5, expected])
        verdict = compare.compare_output(
            np.array([0.5, 123.0]), want, kind="float", dtype="float64", tolerance=TOLERANCE, name="out"
        )
        assert not verdict.ok and verdict.failing is not None and verdict.failing.tolist() == [False, True]

    def test_a_non_finite_acceptable_answer_accepts_nothing(self) -> None:
        verdict = compare.compare_output(
            np.array([9.0]),
            np.array([1.0]),
            kind="float",
            dtype="float64",
            tolerance=TOLERANCE,
            name="out",
            acceptable=np.array([np.inf]),
        )
        assert not verdict.ok

    @pytest.mark.parametrize(
        "tolerance",
        [
            {"atol": np.inf, "rtol": 0.0, "maxUlp": 0},
            {"atol": 0.0, "rtol": np.nan, "maxUlp": 0},
            {"atol": -1.0, "rtol": 0.0, "maxUlp": 0},
            {"atol": "1", "rtol": 0.0, "maxUlp": 0},
            {"atol": True, "rtol": 0.0, "maxUlp": 0},
        ],
    )
    def test_a_tolerance_that_is_not_a_finite_non_negative_number_is_a_damaged_case(
        self, tolerance: dict[str, Any]
    ) -> None:
        with pytest.raises(GoldenError, match="tolerance"):
            compare.compare_output(
                np.zeros(2), np.ones(2), kind="float", dtype="float64", tolerance=tolerance, name="out"
            )


def _empty_set(tmp_path: pathlib.Path) -> pathlib.Path:
    """A golden directory that verifies and holds no case."""
    directory = tmp_path / "empty"
    directory.mkdir()
    (directory / "index.json").write_text(json.dumps({"formatVersion": 1, "files": [], "totalCases": 0}))
    return directory


class IdentityRope(PosencRefAdapter):
    """A RoPE that rotates nothing: every RoPE invariant holds for it."""

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        return np.array(x)


class TestNothingTested:
    def test_a_set_with_no_case_is_nothing_tested_whatever_the_invariants_say(
        self, tmp_path: pathlib.Path
    ) -> None:
        report = run(IdentityRope(), golden_dir=_empty_set(tmp_path), only=["rope"])
        invariants = [r for r in report.results if r.function == "invariant"]
        assert invariants and all(r.status in ("pass", "skip") for r in invariants)
        assert sum(r.status == "pass" for r in invariants) >= 10
        assert report.verdict == "NOTHING TESTED" and report.exit_code == 3
        assert "no golden case was compared" in report.format_table()

    def test_the_cli_says_so_with_exit_3(self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture) -> None:
        assert main(["check", "posenc_ref", "--golden", str(_empty_set(tmp_path)), "--only", "alibi"]) == 3
        assert "RESULT: NOTHING TESTED" in capsys.readouterr().out


class TestOutcomes:
    """A damaged case or a bug of the suite is its own verdict and exit code, and the report is written."""

    def test_a_bug_of_the_suite_mid_run_is_exit_5_with_the_report(
        self, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
    ) -> None:
        calls = {"n": 0}
        judge = runner._judge

        def flaky(*args: Any, **kwargs: Any) -> Any:
            calls["n"] += 1
            if calls["n"] == 5:
                msg = "planted bug in the judge"
                raise AssertionError(msg)
            return judge(*args, **kwargs)

        monkeypatch.setattr(runner, "_judge", flaky)
        out = tmp_path / "report.json"
        code = main(["check", "posenc_ref", "--only", "alibi", "--json", str(out)])
        captured = capsys.readouterr()
        text = captured.out
        assert code == EXIT_CODES["SUITE ERROR"] == cli.EXIT_INTERNAL == 5
        assert "Traceback (most recent call last)" in captured.err and "planted bug" in captured.err
        assert "RESULT: SUITE ERROR (AssertionError: planted bug in the judge)" in text
        assert "the suite itself failed" in text and "planted bug" in text
        data = json.loads(out.read_text())
        assert data["verdict"] == "SUITE ERROR" and data["exitCode"] == 5
        assert data["abort"]["kind"] == "internal" and len(data["results"]) == 4

    def test_a_damaged_case_found_mid_run_is_exit_4_never_the_implementations_failure(
        self, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
    ) -> None:
        stored = runner._stored_tolerance
        monkeypatch.setattr(
            runner, "_stored_tolerance", lambda *a: {**(stored(*a) or {}), "atol": float("inf")}
        )
        out = tmp_path / "report.json"
        assert main(["check", "posenc_ref", "--only", "rope", "--json", str(out)]) == 4
        assert "RESULT: GOLDEN SET DAMAGED" in capsys.readouterr().out
        data = json.loads(out.read_text())
        assert data["verdict"] == "GOLDEN SET DAMAGED" and not any(
            r["status"] == "fail" for r in data["results"]
        )

    def test_a_set_that_fails_verification_is_exit_4_and_the_report_says_why(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture
    ) -> None:
        bad = tmp_path / "bad"
        bad.mkdir()
        (bad / "index.json").write_text("{not json")
        out = tmp_path / "report.json"
        assert main(["check", "posenc_ref", "--golden", str(bad), "--json", str(out)]) == 4
        err = capsys.readouterr().err
        assert err.startswith("posenc-ref: damaged golden set: golden vectors failed verification")
        assert json.loads(out.read_text())["verdict"] == "GOLDEN SET DAMAGED"

    def test_a_golden_folder_that_does_not_exist_is_a_usage_error(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture
    ) -> None:
        assert main(["check", "posenc_ref", "--golden", str(tmp_path / "none")]) == 2
        assert "is not a directory" in capsys.readouterr().err

    def test_a_crash_of_any_command_is_exit_5(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
    ) -> None:
        def broken(args: Any) -> int:
            msg = "planted"
            raise KeyError(msg)

        monkeypatch.setattr(cli, "_run_info", broken)
        assert main(["info"]) == 5
        assert "internal error (a bug in posenc-ref, not a verdict)" in capsys.readouterr().err


def _report() -> dict[str, Any]:
    return run(PosencRefAdapter(), only=["alibi_slopes"], invariants=False).to_json()


MALFORMED = {
    "a list": lambda r: [r],
    "no results": lambda r: {k: v for k, v in r.items() if k != "results"},
    "results an object": lambda r: {**r, "results": {}},
    "a result a string": lambda r: {**r, "results": ["x"]},
    "no resultId": lambda r: {
        **r,
        "results": [{k: v for k, v in r["results"][0].items() if k != "resultId"}],
    },
    "status unknown": lambda r: {**r, "results": [{**r["results"][0], "status": "great"}]},
    "status a number": lambda r: {**r, "results": [{**r["results"][0], "status": 1}]},
    "flags a string": lambda r: {**r, "results": [{**r["results"][0], "flags": "Basic"}]},
    "detail null": lambda r: {**r, "results": [{**r["results"][0], "detail": None}]},
    "adapter a string": lambda r: {**r, "adapter": "x"},
    "suite missing": lambda r: {k: v for k, v in r.items() if k != "suite"},
    "reach rows broken": lambda r: {**r, "reach": [{"function": 1}]},
    "error a string": lambda r: {**r, "results": [{**r["results"][0], "max_abs_err": "0"}]},
    "diagnosis a string": lambda r: {**r, "results": [{**r["results"][0], "diagnosis": "x"}]},
    "a run that did not finish": lambda r: {**r, "abort": {"kind": "internal", "message": "x"}},
}


@pytest.mark.parametrize("damage", MALFORMED, ids=list(MALFORMED))
def test_a_malformed_matrix_report_is_a_usage_error_naming_it(
    damage: str, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(MALFORMED[damage](_report())))
    assert main(["matrix", "--reports", str(path), "--out", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(path) in err and "Traceback" not in err


def test_deep_json_in_a_matrix_report_is_a_usage_error(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture
) -> None:
    path = tmp_path / "report.json"
    path.write_text("[" * 100000 + "]" * 100000)
    assert main(["matrix", "--reports", str(path), "--out", str(tmp_path / "m")]) == 2
    assert "Traceback" not in capsys.readouterr().err


def test_a_well_formed_report_still_builds(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(_report()))
    assert main(["matrix", "--reports", str(path), "--out", str(tmp_path / "m")]) == 0


def test_lint_reads_an_untrusted_directory_as_check_does(tmp_path: pathlib.Path) -> None:
    """A FIFO and a link out of the folder: one problem, found without following or blocking."""
    import os

    from posenc_ref_conformance.golden.lint import lint

    directory = _empty_set(tmp_path)
    os.mkfifo(directory / "sinusoidal.json")
    os.symlink("/etc/passwd", directory / "learned.json")
    assert lint(directory) == [
        "learned.json: not a regular file (a link, FIFO or device); not read",
        "sinusoidal.json: not a regular file (a link, FIFO or device); not read",
    ]


class TestMoreOutcomes:
    def test_an_exception_whose_message_raises_is_the_adapters_error(self) -> None:
        class Unprintable(ValueError):
            def __str__(self) -> str:
                raise ZeroDivisionError

        class Adapter(PosencRefAdapter):
            def alibi_slopes(self, *args: Any, **kwargs: Any) -> Any:
                raise Unprintable

        report = run(Adapter(), only=["alibi_slopes"], invariants=False)
        assert report.verdict == "FAIL" and report.abort is None
        assert any("<unprintable Unprintable>" in r.detail for r in report.results)

    def test_a_check_that_cannot_start_replaces_an_earlier_report(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture
    ) -> None:
        out = tmp_path / "report.json"
        assert (
            main(["check", "posenc_ref", "--only", "alibi_slopes", "--no-invariants", "--json", str(out)])
            == 0
        )
        assert json.loads(out.read_text())["verdict"] == "PASS"
        assert main(["check", str(tmp_path / "missing.py"), "--json", str(out)]) == 2
        data = json.loads(out.read_text())
        assert data["verdict"] == "USAGE ERROR" and data["exitCode"] == 2 and data["abort"]["kind"] == "usage"
        assert capsys.readouterr().err.count("\n") == 1

    def test_the_report_is_written_before_the_table_and_a_gone_reader_keeps_the_verdict(
        self, tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        from posenc_ref_conformance.results import Report

        def gone(self: Any, **kwargs: Any) -> str:
            raise BrokenPipeError

        monkeypatch.setattr(Report, "format_table", gone)
        out = tmp_path / "report.json"
        assert main(["check", "posenc_ref", "--only", "alibi_slopes", "--json", str(out)]) == 0
        assert json.loads(out.read_text())["verdict"] == "PASS"

    def test_deep_inline_scaling_json_is_a_usage_error(self, tmp_path: pathlib.Path) -> None:
        deep = '{"a": ' + "[" * 200000 + "]" * 200000 + "}"
        args = ["golden", "export", "--scaling", deep, "--head-dim", "64", "--base", "10000"]
        assert main([*args, "--out", str(tmp_path / "x")]) == 2

    def test_a_reply_with_another_number_of_outputs_is_a_bad_output(self, tmp_path: pathlib.Path) -> None:
        adapter = tmp_path / "adapter.py"
        adapter.write_text(
            "import posenc_ref_conformance._wire as wire\n"
            "from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter\n"
            "_ref = PosencRefAdapter()\n"
            "_reply = wire.outcome_reply\n"
            "def _one_fewer(outcome):\n"
            "    header, arrays = _reply(outcome)\n"
            "    if header['value'] and header['value']['tuple']:\n"
            "        header['value']['arrays'] = header['value']['arrays'][:1]\n"
            "        arrays = arrays[:1]\n"
            "    return header, arrays\n"
            "wire.outcome_reply = _one_fewer\n"
            "def rope_cos_sin(*args, **kwargs):\n"
            "    return _ref.rope_cos_sin(*args, **kwargs)\n"
        )
        report = run(str(adapter), only=["rope_cos_sin"], invariants=False, timeout=30)
        assert report.abort is None and report.verdict == "FAIL"
        failed = [r for r in report.results if r.status == "fail"]
        assert failed and all("holds 1 outputs; expected 2" in r.detail for r in failed)
