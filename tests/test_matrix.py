"""The conformance matrix: columns from reports, every failure classified or reported as unexplained."""

from __future__ import annotations

import json
import pathlib
import textwrap

import pytest

from posenc_ref_conformance.cli import main
from posenc_ref_conformance.matrix import build, load_classification, render_html, unexplained
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
