"""The report a person reads: columns, legends, positions, failures by function, reach, RESULT line.

Reports are built from :class:`CaseResult` objects directly (fast); a few runs go
through the command line: adapter output without terminal control sequences,
no progress when stderr is not a terminal, and the pytest form's skips.
"""

from __future__ import annotations

import io
import json
import pathlib
import re
import sys
import textwrap

import pytest

from posenc_ref_conformance.cli import main
from posenc_ref_conformance.progress import TerminalProgress
from posenc_ref_conformance.pytest_suite import test_conformance as suite
from posenc_ref_conformance.report_text import (
    columns,
    format_position,
    format_where,
    scheme_lines,
    strip_controls,
)
from posenc_ref_conformance.results import CaseResult, Report

ROOT = pathlib.Path(__file__).resolve().parents[1]
COLUMN_GAP = re.compile(r"\s{2,}")


def _cells(line: str) -> list[str]:
    return COLUMN_GAP.split(line.strip())


def _sweep(positions: list[int], errors: list[float], exact: list[bool]) -> dict[str, list]:
    return {"positions": positions, "errors": errors, "withinExact": exact}


def _swept(case: str, dtype: str, sweep: dict[str, list], function: str = "rope_cos_sin") -> CaseResult:
    return CaseResult(
        case, function, "rope", dtype, "pass", max_abs_err=max(sweep["errors"]), phase="product", sweep=sweep
    )


def _reach_report(**kw: object) -> Report:
    """float32 within 1e-3 up to 2^11 (exact up to 2^8); float64 within everywhere swept."""
    f32a = _sweep([0, 255, 256, 2047, 2048], [0.0, 1e-7, 2e-7, 1e-4, 5e-4], [True, True, True, False, False])
    f32b = _sweep([2048, 2049, 16777217], [2e-4, 2e-3, 0.885], [True, False, False])
    f64 = _sweep([0, 16777217], [0.0, 1e-9], [True, True])
    results = [
        _swept("rope_cos_sin/sweep/a", "float32", f32a),
        _swept("rope_cos_sin/sweep/b", "float32", f32b),
        _swept("rope_cos_sin/sweep/a", "float64", f64),
    ]
    return Report({"name": "plain"}, results, declared={"phase": "product", "variants": {}}, **kw)  # type: ignore[arg-type]


class TestPositions:
    @pytest.mark.parametrize(
        ("position", "text"),
        [
            (0, "0"),
            (7, "7"),
            (1000, "1000"),
            (255, "2^8 - 1"),
            (2048, "2^11"),
            (16777217, "2^24 + 1"),
            (None, "-"),
        ],
    )
    def test_powers_of_two_and_their_neighbours(self, position: int | None, text: str) -> None:
        assert format_position(position) == text

    def test_with_the_decimal(self) -> None:
        assert format_position(2**24 + 1, decimal=True) == "2^24 + 1 = 16777217"
        assert format_position(12, decimal=True) == "12"


class TestColumns:
    def test_every_magnitude_keeps_its_column(self) -> None:
        huge, tiny = 3.36172183414396e15, 1e-300
        row = {"compared": 10**12, "pass": 10**12, "fail": 123456789, "skip": 0, "xfail": 0, "xpass": 0}
        row |= {"beyond-precision": 10**9, "max_abs_err_float64": huge, "tolerance_used_float64": huge}
        row |= {"max_abs_err_float32": tiny, "tolerance_used_float32": None}
        other = {
            **row,
            "max_abs_err_float64": None,
            "tolerance_used_float64": 0.5,
            "tolerance_used_float32": tiny,
        }
        lines = scheme_lines({"rope": row, "a_very_long_scheme_name": other})
        table = [line for line in lines[:6] if not set(line) <= {"-"}]
        assert len(table) == 4  # header, two schemes, total
        assert all(len(_cells(line)) == 11 for line in table), table
        assert "3.36e+15" in lines[2] and "3.36172183414396.44" not in "\n".join(lines)

    def test_the_report_tables_split_into_their_columns(self) -> None:
        results = [
            CaseResult(
                "rope_cos_sin/x",
                "rope_cos_sin",
                "rope",
                "float32",
                "pass",
                1e-300,
                1.0,
                phase="product",
                worst_position=2**53 + 1,
                tolerance_used=9.9e14,
                exact=False,
            ),
            CaseResult("t5/y", "t5_bucket", "t5", "float64", "fail", 3.36e15, None, tolerance_used=3.36e15),
        ]
        text = Report({"name": "x"}, results).format_table()
        lines = text.splitlines()
        head = lines.index(next(line for line in lines if line.startswith("scheme")))
        for line in (lines[head], lines[head + 2], lines[head + 3], lines[head + 5]):
            assert len(_cells(line)) == 11, line
        accuracy = lines.index(next(line for line in lines if line.startswith("accuracy")))
        for line in (lines[accuracy + 1], lines[accuracy + 3]):
            assert len(_cells(line)) == 7, line
        assert "2^53 + 1" in lines[accuracy + 3]

    def test_widths_come_from_the_content(self) -> None:
        lines = columns(["a", "b"], [["x" * 30, "1"], None, ["y", "22"]], right="lr")
        assert [len(_cells(line)) for line in lines if not set(line) <= {"-"}] == [2, 2, 2]
        assert lines[2].index("1") == 33  # 30 characters, the two-space gap, "1" right-aligned under "22"

    def test_legends_explain_beyond_tol_used_and_within(self) -> None:
        text = _reach_report().format_table()
        assert "beyond: results whose every element has a precision-class bound" in text
        assert "tol used: the largest fraction" in text
        assert "within: exact (every element met the exact class's tolerance)" in text


class TestReach:
    def test_sweeps_merge_by_position(self) -> None:
        rows = {row["dtype"]: row for row in _reach_report().reach()}
        f32 = rows["float32"]
        assert (f32["exactReach"], f32["atolReach"], f32["swept"]) == (256, 2048, 2**24 + 1)
        assert (f32["worst"], f32["worstPosition"]) == (0.885, 2**24 + 1)
        assert f32["cases"] == ["rope_cos_sin/sweep/a", "rope_cos_sin/sweep/b"] and f32["phase"] == "product"
        assert f32["context"] is None and f32["meetsContext"] is None
        assert rows["float64"]["atolReach"] == rows["float64"]["exactReach"] == 2**24 + 1

    def test_the_smallest_position_already_failing_reaches_nothing(self) -> None:
        r = _swept("c", "float32", _sweep([1, 2], [0.5, 0.1], [False, True]))
        (row,) = Report({}, [r], context=10).reach()
        assert row["exactReach"] is None and row["atolReach"] is None and row["meetsContext"] is False
        assert Report({}, [r], context=10).reach_shortfalls() == [
            "float32 rope_cos_sin exceeds 1e-3 already at the smallest swept position, "
            "below the declared context 10 (positions up to 9)"
        ]

    def test_a_reach_below_the_context_fails_naming_both_numbers(self) -> None:
        report = _reach_report(context=131072)
        assert report.failed and report.verdict == "FAIL" and report.exit_code == 1
        sentence = "float32 rope_cos_sin stays within 1e-3 up to position 2^11 = 2048, "
        sentence += "below the declared context 131072 (positions up to 131071)"
        assert report.reach_shortfalls() == [sentence]
        text = report.format_table()
        assert f"FAIL {sentence}" in text and "2^17 NOT met" in text
        assert text.rstrip().endswith(
            "RESULT: FAIL (product class; float32 rope_cos_sin within 1e-3 up to "
            "position 2^11, 0.885 at 2^24 + 1; float64 rope_cos_sin within 1e-3 up to "
            "position 2^24 + 1, 1e-09 at 2^24 + 1; context 2^17 not met)"
        )

    def test_a_context_within_reach_passes(self) -> None:
        report = _reach_report(context=2000, reach_atol=1e-3)
        assert not report.failed and report.verdict == "PASS"
        assert {row["meetsContext"] for row in report.reach()} == {True}
        assert report.result_line().endswith("; context 2000 met)")

    def test_the_reach_table(self) -> None:
        lines = _reach_report().format_table().splitlines()
        start = lines.index("reach: the largest position each function stays within tolerance:")
        header, rows = lines[start + 1], lines[start + 3 : start + 5]
        assert _cells(header) == [
            "function",
            "dtype",
            "class",
            "within exact up to",
            "within 1e-3 up to",
            "worst error",
            "at position",
            "context",
        ]
        assert _cells(rows[0]) == [
            "rope_cos_sin",
            "float32",
            "product",
            "2^8",
            "2^11",
            "0.885",
            "2^24 + 1",
            "-",
        ]


class TestResultLine:
    def test_names_the_class_and_the_shortest_reach_float32_first(self) -> None:
        line = _reach_report().result_line()
        assert line.startswith(
            "RESULT: PASS (product class; float32 rope_cos_sin within 1e-3 up to position 2^11, "
            "0.885 at 2^24 + 1; float64"
        )

    def test_per_function_classes(self) -> None:
        declared = {"phase": {"rope_cos_sin": "product", "default": "exact"}}
        r = CaseResult("t5/a", "t5_bucket", "t5", "float64", "pass")
        line = Report({}, [r], declared=declared).result_line()
        assert line == "RESULT: PASS (classes: rope_cos_sin product, default exact)"

    def test_nothing_tested_gets_the_parenthesis_and_verdict_stays_bare(self) -> None:
        report = Report(
            {}, [CaseResult("a", "t5_bucket", "t5", "float64", "skip")], declared={"phase": "exact"}
        )
        assert (
            report.result_line() == "RESULT: NOTHING TESTED (exact class)"
            and report.verdict == "NOTHING TESTED"
        )


def _failing() -> Report:
    where = (
        {
            "output": "cos",
            "at": {"batch": 0, "position": 5, "channel": 12},
            "position": 2**24 + 1,
            "actual": 0.123,
            "expected": 0.456,
            "error": 0.333,
            "allowed": 1e-6,
        },
    )
    theta = ("rotation by -theta (sin negated)",)
    results = [
        CaseResult(
            f"rope_cos_sin/half/c{i}",
            "rope_cos_sin",
            "rope",
            "float32",
            "fail",
            0.333,
            detail="flat index 9",
            diagnosis=theta,
            where=where if i < 5 else (),
        )
        for i in range(12)
    ]
    results.append(
        CaseResult(
            "rope/half/noise",
            "rope",
            "rope",
            "float64",
            "fail",
            1e-3,
            detail="flat index 3",
            structure="error on channels 8-15 only, growing with position (relative error 3e-3)",
            where=where,
        )
    )
    results.append(
        CaseResult(
            "invariant/rope/shift", "invariant", "rope", "float64", "fail", detail="not shift-invariant"
        )
    )
    results.append(CaseResult("t5/ok", "t5_bucket", "t5", "float64", "pass", 0.0))
    return Report({"name": "planted"}, results, declared={"phase": "exact"})


class TestFailures:
    def test_groups_by_function_with_the_diagnosis(self) -> None:
        groups = {g["function"]: g for g in _failing().failure_groups()}
        rope = groups["rope_cos_sin"]
        assert rope["failing"] == 12 and rope["unexplained"] == 0
        assert rope["diagnoses"] == [{"hypothesis": "rotation by -theta (sin negated)", "results": 12}]
        assert rope["examples"] == [
            "rope_cos_sin/half/c0[float32]",
            "rope_cos_sin/half/c1[float32]",
            "rope_cos_sin/half/c2[float32]",
        ]
        assert groups["rope"]["unexplained"] == 1 and groups["rope"]["structures"][0].startswith(
            "error on channels"
        )
        assert groups["invariant"]["diagnoses"] == [] and groups["invariant"]["structures"] == []

    def test_the_fail_section_reads_diagnosis_first_then_located_elements(self) -> None:
        text = _failing().format_table()
        section = text[text.index("failures (14 results in 3 functions") :]
        lines = section.splitlines()
        assert lines[1] == "  rope_cos_sin: 12 failing results"
        assert (
            lines[2] == "    consistent with: rotation by -theta (sin negated), on 12 of 12 failing results"
        )
        assert lines[3] == "    FAIL rope_cos_sin/half/c0[float32]"
        assert lines[4] == (
            "      cos at batch 0, position 2^24 + 1 = 16777217 (index 5), channel 12: "
            "0.123 vs 0.456, error 0.333, allowed 1e-6"
        )
        assert "    ... 9 more (see the JSON report)" in lines
        assert (
            "    no known bug shape reproduces it: error on channels 8-15 only, growing with position "
            "(relative error 3e-3)"
        ) in lines
        assert "    FAIL invariant/rope/shift[float64]: not shift-invariant" in lines
        assert "flat index" not in section.split("accuracy")[0]

    def test_where_without_a_position_value(self) -> None:
        entry = {
            "output": "bias",
            "at": {"head": 3, "query": 1},
            "position": None,
            "actual": 1.0,
            "expected": 2.0,
            "error": 1.0,
            "allowed": 0.0,
        }
        assert format_where(entry) == "bias at head 3, query 1: 1 vs 2, error 1, allowed 0"

    def test_the_json_report_carries_diagnosis_reach_and_result(self) -> None:
        report = _failing()
        report.results += _reach_report(context=4096).results
        report.context = 4096
        data = json.loads(json.dumps(report.to_json()))
        assert data["result"] == report.result_line() and data["verdict"] == "FAIL"
        assert data["context"] == 4096 and data["reachAtol"] == 1e-3
        assert [g["function"] for g in data["diagnosis"]] == ["rope_cos_sin", "rope", "invariant"]
        assert {row["dtype"] for row in data["reach"]} == {"float32", "float64"}
        assert data["reachFailures"] == report.reach_shortfalls() and len(data["reachFailures"]) == 1
        first = data["results"][0]
        assert (
            first["diagnosis"] == ["rotation by -theta (sin negated)"]
            and first["where"][0]["output"] == "cos"
        )
        assert {"structure", "sweep"} <= set(first)


class TestControlSequences:
    def test_stripped(self) -> None:
        text = "\x1b[31mred\x1b[0m \x1b]0;title\x07ok\x1b(B\r\nbar\r50%\x00\tend\x1b]8;;http://x\x1b\\link"
        assert strip_controls(text) == "red ok\nbar\n50%\tendlink"

    def test_neither_report_carries_them(
        self, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        adapter = tmp_path / "colourful.py"
        adapter.write_text(
            textwrap.dedent("""
            import sys
            from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter as _A
            _ref = _A()
            print("\\x1b[1;32mloading\\x1b[0m \\x1b]0;title\\x07done")
            def t5_bucket(relative, **kw):
                sys.stderr.write("\\x1b[33mwarn\\x1b[0m\\n")
                return _ref.t5_bucket(relative, **kw)
        """)
        )
        report_path = tmp_path / "r.json"
        assert main(["check", str(adapter), "--only", "t5", "--json", str(report_path)]) == 0
        out = capsys.readouterr().out
        assert "  | warn" in out  # the last lines; the JSON report has all of it
        raw = report_path.read_text()
        assert json.loads(raw)["adapterOutput"].startswith("loading done\nwarn\n")
        for text in (out, raw):
            assert "\x1b" not in text and "\x07" not in text and "\\u001b" not in text


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


class TestProgress:
    def test_quiet_when_not_a_terminal(self) -> None:
        stream = io.StringIO()
        progress = TerminalProgress(stream, delay=0.0, interval=0.0)
        progress(1, 10, "rope_cos_sin")
        progress.close()
        assert stream.getvalue() == ""

    def test_on_a_terminal_after_the_delay(self) -> None:
        now = [0.0]
        stream = _Terminal()
        progress = TerminalProgress(stream, clock=lambda: now[0])
        progress(1, 862, "t5_bucket")  # at 0 s: too early
        now[0] = 4.1
        progress(312, 862, "rope_cos_sin")
        now[0] = 4.15
        progress(313, 862, "rope_cos_sin")  # within the redraw interval
        assert stream.getvalue() == "\r  rope_cos_sin  312/862 golden results  4.1 s"
        progress.close()
        width = len("  rope_cos_sin  312/862 golden results  4.1 s")
        assert stream.getvalue().endswith("\r" + " " * width + "\r")

    def test_the_check_command_writes_nothing_to_a_pipe(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["check", "posenc_ref", "--only", "t5", "--no-invariants"]) == 0
        assert capsys.readouterr().err == ""

    def test_the_check_command_on_a_terminal(
        self, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        stream = _Terminal()
        monkeypatch.setattr(sys, "stderr", stream)
        monkeypatch.setattr("posenc_ref_conformance.progress.DELAY", 0.0)
        assert main(["check", "posenc_ref", "--only", "t5", "--no-invariants"]) == 0
        assert re.search(r"\r  t5_bucket  \d+/\d+ golden results  \d+\.\d s", stream.getvalue())
        assert capsys.readouterr().out.splitlines()[0].startswith("posenc-ref conformance")


class TestPytestForm:
    def test_beyond_precision_is_skipped_with_its_reason(self) -> None:
        r = CaseResult(
            "invariant/rope/relative-shift-large/half",
            "invariant",
            "rope",
            "float32",
            "beyond-precision",
            2.0,
            detail="every element beyond the product bound",
        )
        with pytest.raises(pytest.skip.Exception, match=r"^beyond precision: every element beyond"):
            suite.test_conformance(r)

    def test_a_pass_passes(self) -> None:
        suite.test_conformance(CaseResult("t5/a", "t5_bucket", "t5", "float64", "pass"))


def test_a_context_of_n_tokens_needs_positions_up_to_n_minus_1() -> None:
    """Positions 0 .. 2047 serve a context of 2048: a reach of 2^11 - 1 meets it, 2^11 - 2 would not."""
    r = _swept("c", "float32", _sweep([1, 2047, 2048, 2049], [1e-6, 1e-4, 0.5, 0.5], [True] * 4))
    assert Report({}, [r], context=2048).reach()[0]["meetsContext"] is True
    assert Report({}, [r], context=2049).reach()[0]["meetsContext"] is False
