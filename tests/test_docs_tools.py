"""The docs' build-time helpers and the dashboard's pruning, on inputs whose answer is known.

- text from JSON put into Markdown (``docs/_ext/mdtext.py``) reads back exactly, through the
  parser MyST uses (markdown-it with tables and dollar math);
- citations (``docs/_ext/citations.py``) link what the pages cite, to the right URL, and
  nothing else;
- the schema page (``docs/_ext/schema_md.py``) gives every key of the real schema a meaning;
- the conformance matrix page (``docs/_ext/matrix_md.py``) shows every failure of the committed
  matrix with its class, links each reproduction where the site serves it, and reports a
  failure nobody explained;
- ``scripts/asv_dashboard_check.py``'s ``hide_empty`` drops exactly the parameter values
  without data and keeps every measured value at its parameters.

The first three need the docs extra (skipped without it, with the reason); CI runs this
file from ``scripts/docs_ci.sh`` after installing it.
"""

from __future__ import annotations

import html
import importlib.util
import json
import pathlib
import re
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "docs" / "_ext"))


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# --- Markdown escaping -------------------------------------------------------------------------

TRICKY = [
    "Position 2**24 + 1 is not a float32: positions land on 2**24.",
    "Symmetric -m|k - q|: required without a causal mask",
    "rounding m*theta to float32 costs $2 and _more_ [see](x) <b>bold</b> `code` #1 ~x~ {role}",
    r"a backslash \ and \* stay",
]


@pytest.mark.parametrize("text", TRICKY)
def test_escaped_text_reads_back_verbatim_in_a_table_cell(text: str) -> None:
    markdown_it = pytest.importorskip(
        "markdown_it", reason="the docs extra (myst-parser) is not installed", exc_type=ImportError
    )
    dollarmath = pytest.importorskip(
        "mdit_py_plugins.dollarmath", reason="mdit-py-plugins is not installed", exc_type=ImportError
    )
    from mdtext import md_escape

    md = markdown_it.MarkdownIt("commonmark").enable("table").use(dollarmath.dollarmath_plugin)
    rendered = md.render(f"| a |\n|---|\n| {md_escape(text)} |\n")
    cell = re.search(r"<td>(.*)</td>", rendered, re.S)
    assert cell is not None, rendered
    assert "<" not in cell.group(1), f"markup made from text: {cell.group(1)}"
    assert html.unescape(cell.group(1)) == text


def test_literal_holds_backticks_and_pipes() -> None:
    markdown_it = pytest.importorskip(
        "markdown_it", reason="the docs extra (myst-parser) is not installed", exc_type=ImportError
    )
    from mdtext import md_literal

    md = markdown_it.MarkdownIt("commonmark").enable("table")
    rendered = md.render(f"| a |\n|---|\n| {md_literal('x `y` | z', in_table=True)} |\n")
    assert html.unescape(re.search(r"<code>(.*)</code>", rendered).group(1)) == "x `y` | z"


# --- citations ---------------------------------------------------------------------------------


def _links(text: str) -> list[tuple[str, str]]:
    pytest.importorskip("sphinx", reason="the docs extra (sphinx) is not installed", exc_type=ImportError)
    from citations import find_citations

    return [(text[a:b], url) for a, b, url in find_citations(text)]


def test_citations_link_qualified_short_and_continued_numbers() -> None:
    text = "(tensorflow/tensor2tensor#1423, #1925, PR #177); mlx PR #1174; (vllm#3488, #5093)"
    assert _links(text) == [
        ("tensorflow/tensor2tensor#1423", "https://github.com/tensorflow/tensor2tensor/issues/1423"),
        ("#1925", "https://github.com/tensorflow/tensor2tensor/issues/1925"),
        ("#177", "https://github.com/tensorflow/tensor2tensor/pull/177"),
        ("mlx PR #1174", "https://github.com/ml-explore/mlx/pull/1174"),
        ("vllm#3488", "https://github.com/vllm-project/vllm/issues/3488"),
        ("#5093", "https://github.com/vllm-project/vllm/issues/5093"),
    ]


def test_citations_span_a_line_break_and_link_arxiv() -> None:
    assert _links("diffusers\nPR #13922 saw; arXiv:2104.09864v2.") == [
        ("diffusers\nPR #13922", "https://github.com/huggingface/diffusers/pull/13922"),
        ("arXiv:2104.09864v2", "https://arxiv.org/abs/2104.09864"),
    ]


def test_citations_leave_unknown_repositories_and_bare_numbers_alone() -> None:
    assert _links("MLX (since PR #3071); item #3 of 5; somelib#12; x2#4") == []


# --- the schema page ---------------------------------------------------------------------------


def test_every_key_of_the_schema_has_a_meaning_on_the_page() -> None:
    pytest.importorskip("sphinx", reason="the docs extra (sphinx) is not installed", exc_type=ImportError)
    from schema_md import render_schema

    schema_path = ROOT / "posenc_ref_conformance" / "golden" / "golden_schema_v1.json"
    page = render_schema(json.loads(schema_path.read_text()), source="s.json", download="/s.json")
    rows = [line for line in page.splitlines() if line.startswith("| `")]
    assert len(rows) > 100
    empty = [row for row in rows if row.split(" | ")[2].strip() == ""]
    assert empty == []
    assert "No other keys are allowed" not in page
    assert page.count("Every object below is closed") == 1


# --- hiding what has no data on the dashboard ---------------------------------------------------


def test_matrix_page_classifies_every_failure_and_links_every_reproduction(tmp_path: pathlib.Path) -> None:
    from matrix_md import matrix_page

    matrix = json.loads((ROOT / "docs" / "matrix" / "matrix.json").read_text(encoding="utf-8"))
    text, problems = matrix_page(ROOT)
    assert problems == []
    failures = [rid for cells in matrix["cells"].values() for rid, cell in cells.items() if "class" in cell]
    assert failures and "UNEXPLAINED" not in text
    for rid in failures:
        assert f"`{rid}`" in text, rid
    repros = sorted(p.name for p in (ROOT / "docs" / "matrix" / "repro").glob("*.py"))
    linked = re.findall(r'<a href="\.\./repro/([\w.]+)">', text)  # raw links: MyST resolves no file there
    assert sorted(set(linked)) == repros
    assert "](../repro/" not in text
    one = next(iter(matrix["cells"]))
    rid = next(r for r, c in matrix["cells"][one].items() if c["status"] == "pass")
    matrix["cells"][one][rid] = {"status": "fail", "class": {"class": "unexplained"}}
    (tmp_path / "docs" / "matrix").mkdir(parents=True)
    (tmp_path / "docs" / "matrix" / "matrix.json").write_text(json.dumps(matrix), encoding="utf-8")
    text, problems = matrix_page(tmp_path)
    assert problems == [f"{one}: {rid} is unexplained"] and "UNEXPLAINED" in text


def test_hide_empty_drops_unmeasured_values_and_keeps_the_rest(tmp_path: pathlib.Path) -> None:
    check = _load_script("asv_dashboard_check")
    html_dir = tmp_path / "html"
    graphs = html_dir / "graphs" / "machine-a"
    graphs.mkdir(parents=True)
    (html_dir / "graphs" / "summary").mkdir()
    params = [["'numpy'", "'jax'", "'torch'"], ["'small'", "'large'"]]
    # product order: (numpy, small), (numpy, large), (jax, small), ... ; jax and 'large' never ran
    values = {1: [1.0, None, None, None, 3.0, None], 2: [1.5, None, None, None, 2.5, None]}
    (graphs / "b.T.time_x.json").write_text(json.dumps([[r, v] for r, v in values.items()]))
    (graphs / "b.T.time_scalar.json").write_text(json.dumps([[1, 0.5], [2, 0.6]]))
    index = {
        "benchmarks": {
            "b.T.time_x": {"params": params, "param_names": ["backend", "size"]},
            "b.T.time_scalar": {"params": [], "param_names": []},
            "b.T.time_never": {"params": params, "param_names": ["backend", "size"]},
        }
    }
    (html_dir / "index.json").write_text(json.dumps(index))
    regressions = {"regressions": [["b.T.time_x", "graphs/x", {}, 4, 3.0, 2.5, []]]}
    (html_dir / "regressions.json").write_text(json.dumps(regressions))

    hidden = check.hide_empty(html_dir)

    new = json.loads((html_dir / "index.json").read_text())["benchmarks"]
    assert set(new) == {"b.T.time_x", "b.T.time_scalar"}
    assert new["b.T.time_x"]["params"] == [["'numpy'", "'torch'"], ["'small'"]]
    assert json.loads((graphs / "b.T.time_x.json").read_text()) == [[1, [1.0, 3.0]], [2, [1.5, 2.5]]]
    assert json.loads((graphs / "b.T.time_scalar.json").read_text()) == [[1, 0.5], [2, 0.6]]
    # the regression at (torch, small) was flat index 4 of 6; it is index 1 of 2 now
    assert json.loads((html_dir / "regressions.json").read_text())["regressions"][0][3] == 1
    assert any("time_never" in line for line in hidden)
    assert any("'jax'" in line for line in hidden) and any("'large'" in line for line in hidden)
