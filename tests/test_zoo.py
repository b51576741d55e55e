"""The zoo: one row per model family, each verdict earned by real runs of planted implementations."""

from __future__ import annotations

import json
import pathlib
import textwrap

import pytest

from posenc_ref_conformance import zoo
from posenc_ref_conformance.matrix import load_classification
from posenc_ref_conformance.runner import run

#: Three implementations of T5's buckets and ALiBi's slopes: right, wrong in its values (slopes
#: doubled), and right in its values but accepting what it must reject (no validation).
ADAPTERS = {
    "right": """
        from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
        _ref = PosencRefAdapter()
        t5_bucket = _ref.t5_bucket
        alibi_slopes = _ref.alibi_slopes
    """,
    "doubled": """
        from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
        _ref = PosencRefAdapter()
        t5_bucket = _ref.t5_bucket
        def alibi_slopes(num_heads, *, max_bias, dtype):
            return _ref.alibi_slopes(num_heads, max_bias=max_bias, dtype=dtype) * 2
    """,
    "lenient": """
        import numpy as np
        from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
        _ref = PosencRefAdapter()
        def t5_bucket(relative, **kw):
            try:
                return _ref.t5_bucket(relative, **kw)
            except ValueError:
                return np.zeros(np.shape(relative), dtype=np.int64)
        alibi_slopes = _ref.alibi_slopes
    """,
}
SELECTORS = ("t5_bucket", "alibi_slopes")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict]:
    folder = tmp_path_factory.mktemp("zoo-adapters")
    out = {}
    for name, source in ADAPTERS.items():
        path = folder / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        data = run(str(path), only=list(SELECTORS), invariants=False).to_json()
        data["spec"] = f"lib:{name}"
        out[name] = data
    return out


FAMILIES = {
    "alpha": {"primary": "alibi", "schemes": ["alibi", "t5-buckets"]},
    "beta": {"primary": "alibi", "schemes": ["alibi"]},
    "gamma": {"primary": "t5-buckets", "schemes": ["t5-buckets"]},
    "delta": {"primary": "rope", "schemes": ["rope"]},
    "epsilon": {"primary": "conv-positional", "schemes": ["conv-positional"]},
    "zeta": {"primary": "delegated", "schemes": []},
}


def _rows(reports: dict[str, dict], classification: dict, **columns: str) -> dict[str, dict]:
    columns_of = {family: {f"lib:{impl}": SELECTORS} for family, impl in columns.items()}
    rows = zoo.family_rows(
        FAMILIES,
        [*FAMILIES, "omega"],
        list(reports.values()),
        classification,
        columns_of=columns_of,
        not_run={"rope": {"delta": "its rotary class needs a 3-D position grid"}},
    )
    return {r["family"]: r for r in rows}


def _classification(tmp_path: pathlib.Path, entries: dict) -> dict:
    (tmp_path / "c.json").write_text(json.dumps(entries))
    return load_classification(tmp_path / "c.json")


BUG = {"match": "alibi_slopes/", "class": "bug", "note": "slopes doubled", "repro": "matrix/repro/x.py"}


def test_each_verdict_is_earned(reports: dict[str, dict], tmp_path: pathlib.Path) -> None:
    classification = _classification(
        tmp_path, {"lib:doubled": [BUG], "lib:lenient": [{**BUG, "match": "t5_bucket/", "note": "no check"}]}
    )
    rows = _rows(reports, classification, alpha="right", beta="doubled", gamma="lenient")
    assert rows["alpha"]["verdict"] == "pass" and rows["alpha"]["run"] == ["alibi", "t5-buckets"]
    assert rows["alpha"]["functions"] == {"alibi": ["alibi_slopes"], "t5-buckets": ["t5_bucket"]}
    beta = rows["beta"]
    assert beta["verdict"] == "fail"
    assert [(c["class"], c["note"], c["repro"]) for c in beta["causes"]] == [
        ("bug", "slopes doubled", "matrix/repro/x.py")
    ]
    assert beta["causes"][0]["results"] == beta["counts"]["fail"] > 0
    gamma = rows["gamma"]  # every failure is an invalid input accepted: the values are right
    assert gamma["verdict"] == "fail: validation" and gamma["counts"]["pass"] > 0
    assert rows["delta"]["verdict"] == "not run"
    assert rows["delta"]["not_run"] == {"rope": "its rotary class needs a 3-D position grid"}
    assert (
        rows["epsilon"]["verdict"] == "not run"
        and "convolution" in rows["epsilon"]["not_run"]["conv-positional"]
    )
    assert rows["zeta"]["verdict"] == "no positions" and "sub-models" in rows["zeta"]["not_run"]["delegated"]
    omega = rows["omega"]  # installed, but not in the family table: a row all the same
    assert (
        omega["verdict"] == "not run"
        and not omega["classified"]
        and "zoo_families.csv" in omega["not_run"]["?"]
    )


def test_conventions_and_unexplained_failures(reports: dict[str, dict], tmp_path: pathlib.Path) -> None:
    convention = {"match": "alibi_slopes/", "class": "convention", "note": "another slope rule"}
    rows = _rows(reports, _classification(tmp_path, {"lib:doubled": [convention]}), beta="doubled")
    assert rows["beta"]["verdict"] == "known difference"
    bare = _rows(reports, {}, beta="doubled")["beta"]  # nobody explained it: a fail, named as such
    assert bare["verdict"] == "fail" and {c["class"] for c in bare["causes"]} == {"unexplained"}
    data = zoo.build(list(_rows(reports, {}, beta="doubled").values()), transformers_version="9.9")
    assert any("unexplained failure" in p for p in zoo.validate(data))


def test_a_scheme_a_column_does_not_compare_is_listed(reports: dict[str, dict]) -> None:
    columns_of = {"alpha": {"lib:right": ("alibi_slopes",)}}  # alpha's T5 buckets are not run
    (alpha,) = zoo.family_rows(
        {"alpha": FAMILIES["alpha"]}, ["alpha"], list(reports.values()), {}, columns_of=columns_of, not_run={}
    )
    assert alpha["verdict"] == "pass" and alpha["run"] == ["alibi"]
    assert "does not map this scheme" in alpha["not_run"]["t5-buckets"]


def test_headline_counts(reports: dict[str, dict], tmp_path: pathlib.Path) -> None:
    rows = _rows(reports, _classification(tmp_path, {"lib:doubled": [BUG]}), alpha="right", beta="doubled")
    head = zoo.headline(list(rows.values()))
    # installed: the six families and omega; positional: all but zeta; run: alpha and beta
    assert (head["installed"], head["positional"], head["run"]) == (7, 6, 2)
    assert head["runShare"] == round(2 / 6, 4) and head["fullyRun"] == 2
    assert head["verdicts"]["not run"] == 4 and head["causeClasses"] == {"bug": 1}
    assert head["unclassified"] == ["omega"]


def test_differences_name_each_changed_result(reports: dict[str, dict]) -> None:
    data = zoo.build(list(_rows(reports, {}, alpha="right").values()), transformers_version="9.9")
    assert zoo.differences(data, reports["right"]) == []
    changed = json.loads(json.dumps(reports["right"]))
    rid = next(r for r in changed["results"] if r["function"] == "alibi_slopes")["resultId"]
    for r in changed["results"]:
        if r["resultId"] == rid:
            r["status"] = "fail"
    assert zoo.differences(data, changed) == [f"lib:right: {rid}: pass in the zoo, fail now"]
    other = {**reports["doubled"], "spec": "lib:nobody"}
    assert zoo.differences(data, other) == ["lib:nobody: no family of the zoo is run by this column"]


def test_page_has_every_row_a_filter_and_escapes(reports: dict[str, dict], tmp_path: pathlib.Path) -> None:
    note = {**BUG, "note": "<script>alert(1)</script>"}
    rows = _rows(reports, _classification(tmp_path, {"lib:doubled": [note]}), alpha="right", beta="doubled")
    page = zoo.render_html(zoo.build(list(rows.values()), transformers_version="9.9"))
    assert all(f'id="family-{f}"' in page for f in [*FAMILIES, "omega"])
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    assert 'id="zoo-text"' in page and 'id="zoo-verdict"' in page and "filterRows" in page
    assert 'href="repro/x.py"' in page  # the reproduction, served beside the page
    assert "<strong>7</strong> families installed, <strong>6</strong> with positional code" in page


def test_family_table_is_checked(tmp_path: pathlib.Path) -> None:
    (tmp_path / "f.csv").write_text("family,primary,schemes\nx,none,rope\n")
    with pytest.raises(ValueError, match=r"f\.csv:2: x: schemes must be empty exactly when"):
        zoo.load_families(tmp_path / "f.csv")
    (tmp_path / "g.csv").write_text("name,primary\n")
    with pytest.raises(ValueError, match="the header must be family,primary,schemes"):
        zoo.load_families(tmp_path / "g.csv")


def test_the_shipped_family_table_loads() -> None:
    families = zoo.load_families(pathlib.Path(__file__).parents[1] / "docs" / "matrix" / "zoo_families.csv")
    assert families["llama"] == {"primary": "rope", "schemes": ["rope"]}
    assert families["llava"]["primary"] == "delegated" and len(families) > 500


def test_run_here_writes_one_report_per_spec(tmp_path: pathlib.Path) -> None:
    """The zoo's in-process runs: a report per spec (named after it, with its spec), and a spec that
    does not load is named with why, not a crash."""
    module = tmp_path / "right.py"
    module.write_text(textwrap.dedent(ADAPTERS["right"]))
    lines: list[str] = []
    failed = zoo.run_here(
        [str(module), str(tmp_path / "absent.py")], tmp_path / "out", echo=lambda *a, **k: lines.append(a[0])
    )
    (report,) = (tmp_path / "out").glob("*.json")
    data = json.loads(report.read_text())
    assert data["spec"] == str(module) and data["verdict"] == "PASS"
    assert len(failed) == 1 and failed[0].startswith(f"{tmp_path / 'absent.py'}: ")
    assert lines == [f"[1/2] {module}: PASS" + lines[0].rpartition(": PASS")[2]]
