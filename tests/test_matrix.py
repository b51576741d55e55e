"""The conformance matrix: columns from reports, every failure classified or reported as unexplained."""

from __future__ import annotations

import json
import pathlib
import textwrap

import pytest

from posenc_ref_conformance.cli import main
from posenc_ref_conformance.matrix import (
    build,
    differences,
    entries_for,
    load_classification,
    render_html,
    unexplained,
    validate,
)
from posenc_ref_conformance.runner import run

BROKEN = textwrap.dedent("""
    from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
    _ref = PosencRefAdapter()
    t5_bucket = _ref.t5_bucket
    def alibi_slopes(num_heads, *, max_bias, dtype):
        return _ref.alibi_slopes(num_heads, max_bias=max_bias, dtype=dtype) * 2   # <b>wrong</b>
""")


@pytest.fixture
def broken(tmp_path: pathlib.Path) -> str:
    (tmp_path / "broken.py").write_text(BROKEN)
    return str(tmp_path / "broken.py")


def _report(spec: str) -> dict:
    data = run(spec, only=["t5", "alibi_slopes"], invariants=False).to_json()
    data["spec"] = "broken"
    return data


def test_failures_are_classified_or_unexplained(broken: str, tmp_path: pathlib.Path) -> None:
    report = _report(broken)
    matrix = build([report], {})
    missing = unexplained(matrix)
    assert missing and all(m.startswith("broken: alibi_slopes/") for m in missing)
    (tmp_path / "c.json").write_text(
        json.dumps(
            {"broken": [{"match": "alibi_slopes/", "class": "bug", "note": "doubled", "repro": "r.py"}]}
        )
    )
    classified = build([report], load_classification(tmp_path / "c.json"))
    assert unexplained(classified) == []
    cell = classified["cells"]["broken"]["alibi_slopes/max-bias-8/heads-3[float64]"]
    assert cell["status"] == "fail" and cell["class"]["class"] == "bug"
    assert classified["cells"]["broken"]["t5_bucket/causal/32-128-range[int]"]["status"] == "pass"


@pytest.mark.parametrize(
    "entry",
    [
        {"match": "x/", "class": "bug", "note": "no repro"},
        {"match": "x/", "class": "guess", "note": "n"},
        {"match": "x/"},
    ],
)
def test_classification_entries_are_checked(entry: dict, tmp_path: pathlib.Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps({"col": [entry]}))
    with pytest.raises(ValueError, match=r"c\.json: col:"):
        load_classification(tmp_path / "c.json")


def test_html_escapes_what_adapters_print(broken: str) -> None:
    matrix = build([_report(broken)], {})
    matrix["cells"]["broken"]["t5_bucket/causal/32-128-range[int]"]["detail"] = "<script>alert(1)</script>"
    page = render_html(matrix)
    assert "<script>alert" not in page and "&lt;script&gt;" in page


def test_cli_writes_both_files_and_fails_on_unexplained(broken: str, tmp_path: pathlib.Path, capsys) -> None:
    report = tmp_path / "r.json"
    report.write_text(json.dumps(_report(broken)))
    assert main(["matrix", "--reports", str(report), "--out", str(tmp_path / "m")]) == 1
    assert "UNEXPLAINED: broken: alibi_slopes/" in capsys.readouterr().out
    assert {p.name for p in (tmp_path / "m").iterdir()} == {"matrix.json", "matrix.html"}
    assert main(["matrix", "--out", str(tmp_path / "m")]) == 2


# --- the committed matrix -------------------------------------------------------------------------

ROOT = pathlib.Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "docs" / "matrix" / "matrix.json"
#: Adopter xfail files published beside the matrix, and the column each one is for.
XFAIL_FILES = {
    "transformers.txt": "transformers",
    "vllm.txt": "vllm",
    "vllm_native.txt": "vllm:native",
    "ggml.txt": "ggml",
}


@pytest.fixture(scope="module")
def committed() -> dict:
    return json.loads(COMMITTED.read_text(encoding="utf-8"))


def test_committed_matrix_is_valid_and_fully_classified(committed: dict) -> None:
    assert validate(committed) == []
    assert unexplained(committed) == []
    libraries = {c["id"].partition(":")[0] for c in committed["columns"]} - {"posenc_ref"}
    assert len(libraries) >= 6, libraries  # the bar: at least six real libraries
    assert all(c["adapter"] and c["verdict"] for c in committed["columns"])


def test_committed_classification_loads_and_is_used(committed: dict) -> None:
    classification = load_classification(ROOT / "docs" / "matrix" / "classification.json")
    used = {
        (cell["class"]["match"], cell["class"]["note"])
        for cells in committed["cells"].values()
        for cell in cells.values()
        if "class" in cell
    }
    unused = [
        f"{column}: {entry['match']}"
        for column, entries in classification.items()
        for entry in entries
        if (entry["match"], entry["note"]) not in used
    ]
    assert not unused, f"stale classification entries: {unused}"


def test_every_bug_has_a_standalone_reproduction(committed: dict) -> None:
    repros = {
        cell["class"]["repro"]
        for cells in committed["cells"].values()
        for cell in cells.values()
        if cell.get("class", {}).get("class") == "bug"
    }
    assert repros
    for repro in sorted(repros):
        source = (ROOT / "docs" / repro).read_text(encoding="utf-8")
        assert "posenc_ref" not in source.replace("posenc-ref", ""), f"{repro} imports posenc-ref"


@pytest.mark.parametrize(("name", "column"), sorted(XFAIL_FILES.items()))
def test_xfail_files_are_the_columns_failures(committed: dict, name: str, column: str) -> None:
    """Each published xfail file names exactly the failing cases of its column in the matrix."""
    from posenc_ref_conformance.runner import load_xfails

    rows = {row["resultId"]: row["id"] for row in committed["rows"]}
    failing = {rows[rid] for rid, cell in committed["cells"][column].items() if cell["status"] == "fail"}
    assert set(load_xfails(ROOT / "docs" / "matrix" / "xfails" / name)) == failing


# --- validate, differences, variant-wide entries ---------------------------------------------------


def test_validate_names_each_problem(broken: str) -> None:
    matrix = build([_report(broken)], {})
    problems = validate(matrix)
    assert problems and all("unexplained" in p for p in problems)
    matrix["columns"][0]["counts"]["pass"] += 1
    matrix["cells"]["broken"]["t5_bucket/causal/32-128-range[int]"]["status"] = "green"
    problems = validate(matrix)
    assert any(p.startswith("broken: counts") for p in problems)
    assert any("status 'green'" in p for p in problems)
    assert validate({"matrixVersion": 1}) == [
        f"missing key {k!r}" for k in ("suiteVersion", "generated", "command", "columns", "rows", "cells")
    ]
    assert validate([]) == ["a matrix is a JSON object; got list"]


def test_differences_name_the_result(broken: str) -> None:
    report = _report(broken)
    matrix = build([report], {})
    assert differences(matrix, report, "broken") == []
    changed = json.loads(json.dumps(report))
    first = changed["results"][0]
    first["status"] = "fail" if first["status"] != "fail" else "pass"
    extra = {**changed["results"][1], "resultId": "t5_bucket/new/case[int]"}
    changed["results"] = [*changed["results"][:-1], extra]
    found = differences(matrix, changed, "broken")
    assert found[0].startswith(f"broken: {first['resultId']}: ")
    assert any("in the matrix, not in the report" in f for f in found)
    assert any(f.startswith("broken: t5_bucket/new/case[int]: new (") for f in found)
    assert differences(matrix, report, "other") == [
        "other: no such column in the matrix (columns: ['broken'])"
    ]


def test_library_wide_entries_apply_to_its_variants(broken: str, tmp_path: pathlib.Path) -> None:
    report = _report(broken)
    report["spec"] = "lib:variant"
    entry = {"match": "alibi_slopes/", "class": "convention", "note": "shared"}
    (tmp_path / "c.json").write_text(json.dumps({"lib:*": [entry]}))
    classification = load_classification(tmp_path / "c.json")
    assert entries_for(classification, "lib") == entries_for(classification, "lib:variant") == [entry]
    assert unexplained(build([report], classification)) == []
    assert entries_for(classification, "library") == []


def test_html_rows_carry_the_case_rationale(broken: str) -> None:
    matrix = build([_report(broken)], {})
    rid = "alibi_slopes/max-bias-8/heads-3[float64]"
    case = "alibi_slopes/max-bias-8/heads-3"
    page = render_html(matrix, {}, {case: "three heads: <slopes> 2**-8/3"})
    assert 'title="three heads: &lt;slopes&gt; 2**-8/3' in page
    assert f">{rid}</td>" in page


def test_a_failing_cell_carries_its_diagnosis_and_a_column_its_reach() -> None:
    from posenc_ref_conformance.matrix import build, reach_lines, render_html

    result = {
        "resultId": "apply_rope/half/full-d8[float64]",
        "id": "apply_rope/half/full-d8",
        "function": "apply_rope",
        "scheme": "rope",
        "flags": [],
        "status": "fail",
        "max_abs_err": 5.57,
        "detail": "out: 16 of 24 judged elements outside tolerance",
        "diagnosis": ["rotation by -theta (sin negated)"],
    }
    reach = [{"function": "rope_cos_sin", "dtype": "float32", "atol": 1e-3, "atolReach": 2049}]
    report = {"adapter": {"name": "lib"}, "suite": {}, "verdict": "FAIL", "results": [result], "reach": reach}
    matrix = build(
        [report], {"lib": [{"match": "apply_rope/", "class": "bug", "note": "n", "repro": "docs/x"}]}
    )
    cell = matrix["cells"]["lib"][result["resultId"]]
    assert cell["diagnosis"] == ["rotation by -theta (sin negated)"]
    assert reach_lines(matrix["columns"][0]) == ["rope_cos_sin f32: within 0.001 up to 2^11 + 1"]
    page = render_html(matrix)
    assert "rotation by -theta (sin negated)" in page and "up to 2^11 + 1" in page
