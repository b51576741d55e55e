"""The conformance matrix: columns from reports, every failure classified or reported as unexplained."""

from __future__ import annotations

import json
import pathlib
import textwrap
from html.parser import HTMLParser

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
    assert len(libraries) >= 6, libraries  # the issue's bar: at least six real libraries
    assert all(c["adapter"] and c["verdict"] for c in committed["columns"])


def _zoo_causes() -> list[dict]:
    zoo = json.loads((ROOT / "docs" / "matrix" / "zoo.json").read_text(encoding="utf-8"))
    return [cause for row in zoo["families"] for cause in row["causes"]]


def test_committed_classification_loads_and_is_used(committed: dict) -> None:
    """Every entry explains a failure of the matrix or of the zoo (a family's own column)."""
    classification = load_classification(ROOT / "docs" / "matrix" / "classification.json")
    used = {
        (cell["class"]["match"], cell["class"]["note"])
        for cells in committed["cells"].values()
        for cell in cells.values()
        if "class" in cell
    }
    used |= {(cause["match"], cause["note"]) for cause in _zoo_causes() if "match" in cause}
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
    repros |= {cause["repro"] for cause in _zoo_causes() if cause["class"] == "bug"}
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


# --- the views a person reads: heatmap, failures by cause, legend --------------------------------

#: Statuses of a small matrix: column -> "function/case" -> status ("-": not in the report).
VIEW_STATUSES = {
    "posenc_ref": {
        "rope_frequencies/invalid/base-1": "pass",
        "rope_frequencies/invalid/odd-dim": "pass",
        "rope_frequencies/default/d8": "pass",
        "rope_frequencies/default/d16": "pass",
        "rope_frequencies/yarn/long": "pass",
        "alibi_slopes/invalid/zero": "pass",
        "alibi_slopes/heads-8": "pass",
        "t5_bucket/causal/32": "pass",
        "t5_bucket/causal/large": "pass",
        "learned/table": "pass",
        "shaw_index/clip-4": "pass",
        "kerple_bias/log": "skip",
    },
    "liba": {
        "rope_frequencies/invalid/base-1": "fail",
        "rope_frequencies/invalid/odd-dim": "fail",
        "rope_frequencies/default/d8": "pass",
        "rope_frequencies/default/d16": "pass",
        "rope_frequencies/yarn/long": "pass",
        "alibi_slopes/invalid/zero": "fail",
        "alibi_slopes/heads-8": "pass",
        "t5_bucket/causal/32": "pass",
        "t5_bucket/causal/large": "beyond-precision",
        "learned/table": "pass",
        "shaw_index/clip-4": "skip",
        "kerple_bias/log": "skip",
    },
    "lib_b:one": {
        "rope_frequencies/invalid/base-1": "fail",
        "rope_frequencies/invalid/odd-dim": "pass",
        "rope_frequencies/default/d8": "pass",
        "rope_frequencies/default/d16": "beyond-precision",
        "rope_frequencies/yarn/long": "pass",
        "alibi_slopes/invalid/zero": "pass",
        "alibi_slopes/heads-8": "pass",
        "t5_bucket/causal/32": "pass",
        "t5_bucket/causal/large": "pass",
        "learned/table": "skip",
        "shaw_index/clip-4": "skip",
        "kerple_bias/log": "skip",
    },
    "lib_b:two": {
        "rope_frequencies/invalid/base-1": "fail",
        "rope_frequencies/invalid/odd-dim": "fail",
        "rope_frequencies/default/d8": "pass",
        "rope_frequencies/default/d16": "pass",
        "rope_frequencies/yarn/long": "skip",
        "alibi_slopes/invalid/zero": "pass",
        "alibi_slopes/heads-8": "pass",
        "t5_bucket/causal/32": "pass",
        "t5_bucket/causal/large": "pass",
        "learned/table": "skip",
        "shaw_index/clip-4": "skip",
        "kerple_bias/log": "skip",
    },
    "libc": {
        "rope_frequencies/invalid/base-1": "pass",
        "rope_frequencies/invalid/odd-dim": "pass",
        "rope_frequencies/default/d8": "pass",
        "rope_frequencies/default/d16": "pass",
        "rope_frequencies/yarn/long": "pass",
        "alibi_slopes/invalid/zero": "skip",
        "alibi_slopes/heads-8": "skip",
        "t5_bucket/causal/32": "pass",
        "t5_bucket/causal/large": "pass",
        "learned/table": "-",
        "shaw_index/clip-4": "skip",
        "kerple_bias/log": "skip",
    },
}
VIEW_CLASSIFICATION = {
    "liba": [
        {
            "match": "rope_frequencies/invalid/",
            "class": "bug",
            "note": "liba validates nothing",
            "repro": "matrix/repro/liba_validation.py",
            "issue": "liba: please <validate> base",
        }
    ],
    "lib_b:*": [
        {
            "match": "rope_frequencies/invalid/",
            "class": "convention",
            "note": "lib_b rounds the base first",
        }
    ],
}  # alibi_slopes/invalid/zero in liba stays unexplained


def _view_report(column: str, statuses: dict[str, str]) -> dict:
    results = [
        {
            "resultId": f"{case}[float32]",
            "id": case,
            "function": case.partition("/")[0],
            "scheme": "rope",
            "status": status,
            "detail": "",
            "flags": [],
        }
        for case, status in statuses.items()
        if status != "-"
    ]
    return {"adapter": {"name": column}, "spec": column, "suite": {}, "verdict": "FAIL", "results": results}


@pytest.fixture
def small() -> dict:
    reports = [_view_report(column, statuses) for column, statuses in VIEW_STATUSES.items()]
    return build(reports, VIEW_CLASSIFICATION)


class _Cells(HTMLParser):
    """The heatmap cells of an HTML text: (function, column) -> (attributes, text), in order."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.cells: dict[tuple[str, str], tuple[dict, str]] = {}
        self.tables, self._in = 0, None
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list) -> None:
        attrs = dict(attrs)
        self.tables += tag == "table" and "matrix-heatmap" in (attrs.get("class") or "")
        if tag == "td" and "data-function" in attrs:
            self._in = (attrs["data-function"], attrs["data-column"])
            self.cells[self._in] = (attrs, "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "td":
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            attrs, text = self.cells[self._in]
            self.cells[self._in] = (attrs, text + data)


def test_heatmap_cell_is_the_worst_status_with_its_counts(small: dict) -> None:
    from posenc_ref_conformance.matrix import COLOURS, heatmap, heatmap_html

    rows = {row["function"]: row for row in heatmap(small)["rows"]}
    expected = {
        ("rope_frequencies", "liba"): ("fail", "2 fail / 3 pass"),
        ("rope_frequencies", "lib_b:one"): ("fail", "1 fail / 1 beyond / 3 pass"),
        ("rope_frequencies", "lib_b:two"): ("fail", "2 fail / 2 pass"),  # and 1 skip, not shown
        ("rope_frequencies", "libc"): ("pass", "5 pass"),
        ("t5_bucket", "liba"): ("beyond-precision", "1 beyond / 1 pass"),
        ("alibi_slopes", "libc"): ("skip", "skip"),
        ("learned", "libc"): ("absent", "not run"),
        ("learned", "liba"): ("pass", "1 pass"),
    }
    cells = _Cells(heatmap_html(small)).cells
    for (function, column), (status, text) in expected.items():
        cell = rows[function]["cells"][column]
        assert (cell["status"], cell["text"]) == (status, text), (function, column)
        attrs, shown = cells[function, column]
        assert attrs["data-status"] == status and " ".join(shown.split()) == text
        background, colour = COLOURS[status]
        assert f"background:{background};color:{colour}" in attrs["style"]
    counts = rows["rope_frequencies"]["cells"]["lib_b:two"]["counts"]
    assert counts == {"fail": 2, "xfail": 0, "xpass": 0, "beyond-precision": 0, "pass": 2, "skip": 1}
    assert "1 skip" in cells["rope_frequencies", "lib_b:two"][0]["title"]


def test_heatmap_puts_failing_functions_first_and_collapses_unimplemented(small: dict) -> None:
    from posenc_ref_conformance.matrix import heatmap, heatmap_html

    data = heatmap(small)
    # rope_frequencies fails in 3 columns, alibi_slopes in 1; then the rest by name
    assert [row["function"] for row in data["rows"]] == [
        "rope_frequencies",
        "alibi_slopes",
        "learned",
        "t5_bucket",
    ]
    assert [row["failing"] for row in data["rows"]] == [3, 1, 0, 0]
    # kerple_bias: skipped everywhere; shaw_index: computed by the reference alone
    assert data["unimplemented"] == ["kerple_bias", "shaw_index"]
    page = heatmap_html(small)
    shown = list(dict.fromkeys(function for function, _ in _Cells(page).cells))
    assert shown == ["rope_frequencies", "alibi_slopes", "learned", "t5_bucket"]
    line = page[page.index("Not implemented by any library") :]
    assert line.count("</p>") == 1 and "<code>kerple_bias</code>, <code>shaw_index</code>" in line
    assert heatmap(small, reference=())["unimplemented"] == ["kerple_bias"]  # without a reference column


def test_heatmap_split_into_tables_keeps_rows_and_columns(small: dict) -> None:
    from posenc_ref_conformance.matrix import heatmap_html

    whole, split = _Cells(heatmap_html(small)), _Cells(heatmap_html(small, max_columns=2))
    assert (whole.tables, split.tables) == (1, 3)  # 5 columns: tables of 2, 2 and 1
    assert set(split.cells) == set(whole.cells) and len(whole.cells) == 4 * 5
    for key, (attrs, text) in whole.cells.items():
        assert split.cells[key][1] == text and split.cells[key][0]["data-status"] == attrs["data-status"]


def test_failures_view_has_one_row_per_cause_naming_every_column(small: dict) -> None:
    from posenc_ref_conformance.matrix import causes, causes_html

    found = causes(small)
    assert [(c["class"], c["columns"]) for c in found] == [
        ("unexplained", ["liba"]),
        ("bug", ["liba"]),
        ("convention", ["lib_b:one", "lib_b:two"]),  # a library-wide entry: one cause, both variants
    ]
    convention = found[2]
    assert [(r["resultId"], r["columns"]) for r in convention["results"]] == [
        ("rope_frequencies/invalid/base-1[float32]", ["lib_b:one", "lib_b:two"]),
        ("rope_frequencies/invalid/odd-dim[float32]", ["lib_b:two"]),
    ]
    assert convention["cells"] == 3 and found[1]["cells"] == 2 and found[0]["cells"] == 1
    page = causes_html(small)
    rows = page.split("<tr ")[1:]  # the header row is a plain <tr>
    assert len(rows) == 3 and all(row.startswith('id="cause-') for row in rows)
    assert "lib_<wbr>b:<wbr>one" in rows[2] and "lib_<wbr>b:<wbr>two" in rows[2]
    assert "UNEXPLAINED" in rows[0] and "alibi_slopes/<wbr>invalid/<wbr>zero" in rows[0]
    # each explanation once, though it covers several columns; the issue text behind <details>
    assert page.count("lib_b rounds the base first") == 1 and page.count("liba validates nothing") == 1
    assert "<details" in rows[1] and "liba: please &lt;validate&gt; base" in rows[1]
    assert 'href="repro/liba_validation.py"' in rows[1]
    assert "<details" not in rows[2]  # no issue text, no empty <details>


def test_legend_shows_every_colour_the_cells_use_with_aa_contrast(small: dict) -> None:
    import re

    from posenc_ref_conformance.matrix import COLOURS, STATUS_WORDS, contrast, heatmap_html, legend_html

    legend = legend_html()
    used = set(re.findall(r"background:(#[0-9a-f]{6})", heatmap_html(small)))
    page = render_html(small)
    used |= set(re.findall(r"td\.[\w-]+\{background:(#[0-9a-f]{6})", page))  # the detail grid
    assert used and used <= set(re.findall(r"background:(#[0-9a-f]{6})", legend))
    for status, (background, text) in COLOURS.items():
        swatch = f'<span style="background:{background};color:{text};'
        assert swatch in legend and f">{STATUS_WORDS[status]}</span>" in legend.split(swatch, 1)[1][:200]
        assert contrast(text, background) >= 4.5, status
    assert round(contrast("#000000", "#ffffff"), 1) == 21.0 and contrast("#777777", "#777777") == 1
    assert legend in page


def test_page_has_the_views_above_the_grid_and_headers_break_only_between_words(small: dict) -> None:
    from posenc_ref_conformance.matrix import breakable

    page = render_html(small)
    positions = [page.index(f'id="{anchor}"') for anchor in ("legend", "by-function", "failures", "detail")]
    assert positions == sorted(positions) and page.index('<table class="grid"') > positions[-1]
    assert breakable("rotary_embedding_torch:native") == "rotary_<wbr>embedding_<wbr>torch:<wbr>native"
    grid_head = page[page.index('<table class="grid"') :].split("</thead>")[0]
    assert ">lib_<wbr>b:<wbr>one<br>" in grid_head
    assert "word-break:keep-all;overflow-wrap:normal" in page  # the grid's headers never break a word
    heat_head = page[page.index('<table class="matrix-heatmap"') :].split("</thead>")[0]
    assert "writing-mode:vertical-rl" in heat_head and "white-space:nowrap" in heat_head
    assert "<wbr>" not in heat_head  # rotated: the whole name on one line
    # a failing grid cell leads to its cause, a heatmap function to its first grid row
    assert '<a href="#cause-1">' in page and 'href="#fn-rope_frequencies"' in page
    assert 'id="fn-rope_frequencies"' in page and 'id="row-rope_frequencies/invalid/base-1[float32]"' in page


def test_docs_fragment_has_the_heatmap_and_failures_by_cause(small: dict, tmp_path: pathlib.Path) -> None:
    import sys

    sys.path.insert(0, str(ROOT / "docs" / "_ext"))
    from matrix_md import matrix_page

    (tmp_path / "docs" / "matrix").mkdir(parents=True)
    (tmp_path / "docs" / "matrix" / "matrix.json").write_text(json.dumps(small), encoding="utf-8")
    text, problems = matrix_page(tmp_path)
    assert problems == ["liba: alibi_slopes/invalid/zero[float32] is unexplained"]
    cells = _Cells(text).cells
    assert cells["rope_frequencies", "lib_b:one"][1] == "1 fail / 1 beyond / 3 pass"
    assert text.index("## By function and library") < text.index("## Every failure, by cause")
    causes = [line for line in text.splitlines() if line.startswith("- **")]
    assert len(causes) == 3 and causes[0].startswith("- **UNEXPLAINED**, in `liba`")
    assert causes[2].startswith(
        "- **a convention the suite does not express yet**, in `lib_b:one`, `lib_b:two`"
    )
    assert text.count("lib\\_b rounds the base first") == 1
    assert "`rope_frequencies/invalid/odd-dim[float32]` (in `lib_b:two`)" in text
    assert "<details><summary>Upstream issue text</summary>" in text
    assert '<a href="../matrix.html"><code>matrix.html</code></a>' in text  # the detail view, linked
    assert "row-rope_frequencies" not in text  # ... not inlined


def test_page_splits_wide_matrices_and_links_cited_issues(broken: str, tmp_path: pathlib.Path) -> None:
    """Nine columns become two detail tables of the same rows (anchors only in the first), and a
    cause's note and issue text link the issues they cite (the page is served outside Sphinx)."""
    from posenc_ref_conformance import matrix as matrix_module

    report = _report(broken)
    reports = []
    for n in range(matrix_module.GRID_COLUMNS + 2):
        copy = json.loads(json.dumps(report))
        copy["spec"] = f"broken{n}"
        reports.append(copy)
    entry = {"match": "alibi_slopes/", "class": "bug", "note": "as in vllm#52665", "repro": "r.py"}
    entry["issue"] = "see NVIDIA/Megatron-LM#7465"
    page = render_html(build(reports, {f"broken{n}": [entry] for n in range(len(reports))}))
    grids = page.split('<table class="grid">')[1:]
    assert len(grids) == 2
    assert [g.split("</thead>")[0].count("<th title=") for g in grids] == [5, 4]
    rows = [g.count("<tr") - 1 for g in grids]
    assert rows[0] == rows[1] > 0
    assert grids[0].count('id="row-') == rows[0] and 'id="row-' not in grids[1]
    assert '<a class="citation-link" href="https://github.com/vllm-project/vllm/issues/52665">' in page
    assert '<a class="citation-link" href="https://github.com/NVIDIA/Megatron-LM/issues/7465">' in page
