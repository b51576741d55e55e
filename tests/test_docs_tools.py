"""The docs' build-time helpers, on inputs whose answer is known.

- text from JSON put into Markdown (``docs/_ext/mdtext.py``) reads back exactly, through the
  parser MyST uses (markdown-it with tables and dollar math);
- citations (``docs/_ext/citations.py``) link what the pages cite, to the right URL, and
  nothing else;
- the schema page (``docs/_ext/schema_md.py``) gives every key of the real schema a meaning;
- the conformance matrix page (``docs/_ext/matrix_md.py``) shows every failure of the committed
  matrix with its class, links each reproduction where the site serves it, and reports a
  failure nobody explained;
- ``scripts/docs_text_check.py`` (rendered text equals its source) catches glued words and a
  moved clause, and lets citation markers, roles and permalinks through (small Markdown and
  HTML snippets, no Sphinx build);
- what a check run found (``docs/_ext/report_md.py``) is said in the sentences expected of a
  small report, and a session of the docs' runs of the tool (``docs/_ext/doc_runs.py``) shows
  each step as asked, with durations and temporary names normalised;
- the generated blocks of the committed pages are up to date (``scripts/docs_generate.py
  --check``, on the fragments made from data; ``scripts/docs_ci.sh`` also reruns the tool's
  sample runs), a stale block planted in a copy of a page is named, and a block keeps its
  indentation and fences a transcript with enough backticks.

The first three, the text check and the generated-block check need the docs extra (skipped
without it, with the reason); CI runs this file from ``scripts/docs_ci.sh`` after installing it.
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


def test_citations_replace_each_run_where_it_stands_among_equal_text_nodes() -> None:
    """Text nodes compare by value: every line break is an equal "\\n" node (issue 23)."""
    pytest.importorskip("sphinx", reason="the docs extra (sphinx) is not installed", exc_type=ImportError)
    from citations import _link_children
    from docutils import nodes

    children = ["uses the rule", "\n", "with an ", nodes.math("", "n-1"), " denominator", "\n", "the paper"]
    children += ["\n", "interleaves (vllm#3488, #5093).", "\n", "The end."]
    paragraph = nodes.paragraph("", "", *(nodes.Text(c) if isinstance(c, str) else c for c in children))
    before = paragraph.astext()
    _link_children(paragraph)
    assert paragraph.astext() == before
    links = [(child.astext(), child["refuri"]) for child in paragraph.findall(nodes.reference)]
    assert links == [
        ("vllm#3488", "https://github.com/vllm-project/vllm/issues/3488"),
        ("#5093", "https://github.com/vllm-project/vllm/issues/5093"),
    ]
    assert all(child.parent is paragraph for child in paragraph.children)


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


# --- rendered text equals its source -----------------------------------------------------------


def _text_check():
    pytest.importorskip(
        "myst_parser", reason="the docs extra (myst-parser) is not installed", exc_type=ImportError
    )
    if "docs_text_check" not in sys.modules:  # its dataclasses look their module up there
        spec = importlib.util.spec_from_file_location(
            "docs_text_check", ROOT / "scripts" / "docs_text_check.py"
        )
        module = importlib.util.module_from_spec(spec)
        sys.modules["docs_text_check"] = module
        spec.loader.exec_module(module)
    return sys.modules["docs_text_check"]


def _compare(markdown: str, html: str, tmp_path: pathlib.Path | None = None):
    """The differences, and what was skipped, of ``markdown`` rendered as ``html``."""
    check = _text_check()
    settings = check.conf_settings(ROOT / "docs" / "conf.py")
    md = check.markdown_parser(settings["myst_enable_extensions"], dmath_double_inline=True)
    base = tmp_path or ROOT / "docs"
    source = check.source_paragraphs(markdown, md, file="page.md", base=base, docs=base)
    return check.compare_page(source.paragraphs, check.rendered_paragraphs(html), "page.html"), source


SYMMETRIC_MD = "Left: the symmetric form $-m|i - j|$.\nMiddle: the causal row form (BLOOM, MPT).\n"
SYMMETRIC_HTML = (
    '<p>Left: {the} form <span class="math notranslate nohighlight">\\(-m|i - j|\\)</span>{dot}'
    "Middle: the causal row form (BLOOM, MPT).</p>"
)


def test_text_check_passes_the_text_as_written() -> None:
    differences, source = _compare(SYMMETRIC_MD, SYMMETRIC_HTML.format(the="the symmetric", dot=".\n"))
    assert differences == [] and len(source.paragraphs) == 1


def test_text_check_catches_glued_words() -> None:
    differences, _ = _compare(SYMMETRIC_MD, SYMMETRIC_HTML.format(the="thesymmetric", dot=".\n"))
    assert [(d.paragraph.line, d.page) for d in differences] == [(1, "page.html")]
    assert "glued together: 'the' + 'symmetric'" in str(differences[0])
    assert "rendered: thesymmetric form" in str(differences[0])


def test_text_check_catches_a_word_split_from_math() -> None:
    differences, _ = _compare(SYMMETRIC_MD, SYMMETRIC_HTML.format(the="the symmetric", dot="\n. "))
    assert len(differences) == 1 and "written:  $…$. Middle:" in str(differences[0])


MOVED_MD = """Intro paragraph, unchanged.

- **Layout confusion (interleaved vs half).**
  transformers#25199 is answered by the weight permutation; flash-attention#288
  tells users to pick `interleaved=True` for Meta weights.
"""
MOVED_HTML = """<p>Intro paragraph, unchanged.</p><ul><li><p>{first}
<a class="citation-link reference external" href="x">transformers#25199</a> is answered by the weight
permutation; <a class="citation-link reference external" href="y">flash-attention#288</a>
tells users to pick {second}<code class="literal"><span class="pre">interleaved=True</span></code>
for Meta weights.</p></li></ul>"""
STRONG = "<strong>Layout confusion (interleaved vs half).</strong>"


def test_text_check_catches_a_moved_clause() -> None:
    assert _compare(MOVED_MD, MOVED_HTML.format(first=STRONG, second=""))[0] == []
    differences, _ = _compare(MOVED_MD, MOVED_HTML.format(first="", second=STRONG))
    assert [d.paragraph.line for d in differences] == [3]
    report = str(differences[0])
    assert "at the first word" in report and "written:  Layout confusion" in report
    assert "moved: the written words come later, after 'flash-attention#288 tells users to pick'" in report


def test_text_check_allows_citation_markers_and_drops_permalinks() -> None:
    markdown = "RoPE rotates pairs (arXiv:2104.09864) as\nvllm#3488 says.\n"
    html = (
        '<p>RoPE rotates pairs (<a class="citation-link reference external" href="https://arxiv.org/abs/'
        '2104.09864">arXiv:2104.09864</a>) [Su et al., 2021] as <a class="citation-link" href="z">vllm#3488'
        '</a><a class="footnote-reference brackets" href="#f1">1</a> says. [2]'
        '<a class="headerlink" href="#p" title="Link to this paragraph">¶</a></p>'
    )
    assert _compare(markdown, html)[0] == []
    assert len(_compare(markdown, html.replace("[Su et al., 2021]", "[see above]"))[0]) == 1


def test_text_check_takes_a_role_as_a_wildcard_and_normalizes_quotes() -> None:
    markdown = 'See {doc}`/guide/check` and {func}`posenc_ref.rope_cos_sin`\'s "output"...\n'
    html = (
        '<p>See <a class="reference internal" href="guide/check.html"><span class="doc">Check your'
        ' implementation</span></a> and <a class="reference internal" href="x"><code class="xref py">'
        '<span class="pre">posenc_ref.rope_cos_sin()</span></code></a>\u2019s \u201coutput\u201d\u2026</p>'
    )
    assert _compare(markdown, html)[0] == []
    differences, _ = _compare(markdown, html.replace("</a> and <a", "</a> <a"))
    assert len(differences) == 1 and "written:  and {…}'s" in str(differences[0])


def test_text_check_skips_what_it_cannot_compare_and_reads_captions_and_includes(
    tmp_path: pathlib.Path,
) -> None:
    (tmp_path / "part.md").write_text("Included words here.\n", encoding="utf-8")
    markdown = """# Title

| a | b |
|---|---|
| x | y |

```python
x = 1
```

```{doctest}
>>> 1
1
```

$$
x
$$

```{figure} f.svg
:alt: a figure
:width: 50%

The caption, with $x$ in it.
```

```{include} part.md
```
"""
    html = (
        '<table><tr><td><p>x</p></td></tr></table><figure><img src="f.svg"/><figcaption><p>'
        '<span class="caption-text">The caption, with <span class="math">\\(x\\)</span> in it.</span>'
        '<a class="headerlink" href="#id1">¶</a></p></figcaption></figure><p>Included words here.</p>'
    )
    differences, source = _compare(markdown, html, tmp_path)
    assert differences == []
    assert [(p.file, p.line, p.via) for p in source.paragraphs] == [
        ("page.md", 24, ""),
        (source.included[0], 1, "page.md:27"),
    ]
    assert source.skipped == {
        "headings": 1,
        "tables": 1,
        "code blocks": 1,
        "{doctest} blocks": 1,
        "math blocks": 1,
    }
    assert len(_compare(markdown, html.replace("Included words", "Included"), tmp_path)[0]) == 1


def test_text_check_builds_the_pages_sphinx_builds() -> None:
    check = _text_check()
    docs = ROOT / "docs"
    exclude = check.conf_settings(docs / "conf.py")["exclude_patterns"]
    names = {p.relative_to(docs).as_posix() for p in check.pages(docs, exclude)}
    assert {"index.md", "families/rope.md", "figures.md"} <= names
    assert not any(n.startswith(("matrix/", "generated/figures", "_build/")) for n in names)
    assert "README.md" not in names and "generated/figures_gallery.md" not in names


# --- what a check run found, and the docs' runs of the tool --------------------------------------


def _result(result_id: str, status: str, **fields: object) -> dict[str, object]:
    case, dtype = result_id.rstrip("]").split("[")
    base = {"id": case, "resultId": result_id, "dtype": dtype, "status": status, "flags": []}
    base |= {"function": case.split("/")[0], "max_abs_err": None, "worst_position": None}
    return base | fields


def test_report_summary_states_the_verdict_the_failures_and_where_they_are() -> None:
    """``docs/_ext/report_md.py`` on a small report whose sentences are known."""
    from report_md import summary

    flags = ["LargePosition", "HalfLayout"]
    report = {
        "verdict": "FAIL",
        "exitCode": 1,
        "counts": {"pass": 2, "fail": 2, "skip": 5, "beyond-precision": 1},
        "schemes": {"rope": {"compared": 3, "pass": 1, "fail": 2}, "t5": {"compared": 1, "pass": 1}},
        "diagnosis": [
            {
                "function": "rope",
                "failing": 2,
                "valueFailures": 2,
                "diagnoses": [{"hypothesis": "sin negated", "results": 2}],
            }
        ],
        "results": [
            _result("rope/a[float64]", "fail", flags=flags, max_abs_err=1e-10, worst_position=1048577),
            _result(
                "rope/a[float32]", "fail", flags=[*flags, "Extra"], max_abs_err=0.5, worst_position=16777217
            ),
            _result("rope/b[float32]", "pass"),
            _result("t5_bucket/c[int]", "pass"),
            _result("invariant/rope/d[float32]", "beyond-precision", flags=["LargePosition"]),
        ],
    }
    assert summary(report) == (
        "The run's verdict is `FAIL` (exit status 1): 4 results compared, 2 passed, 2 failed; 5 skipped.\n\n"
        "The failures, by function:\n\n"
        "- `rope`: 2 failing results, in float64 and float32, all in cases flagged `LargePosition` and "
        "`HalfLayout`: `rope/a`; largest error 1e-10 in float64 and 0.5 in float32; worst elements at "
        "positions 2\\^20 + 1 to 2\\^24 + 1. Consistent with: sin negated (2 of 2).\n\n"
        "Passed with no failure: `t5` (1 of 1).\n\n"
        "Not judged (`beyond`): 1 result, in a case flagged `LargePosition`: `invariant/rope/d[float32]`.\n"
    )


def test_a_session_transcript_shows_what_each_step_asks() -> None:
    """``docs/_ext/doc_runs.py``: ``$ command`` and output, the output alone or nothing; relative paths."""
    from doc_runs import Run, StepResult, relative_paths, transcript

    steps = [
        StepResult(Run("posenc-ref golden lint a"), 0, "golden lint: OK"),
        StepResult(
            Run("posenc-ref golden export --out b", show="output", expect=2), 2, "posenc-ref: error: x"
        ),
        StepResult(Run("posenc-ref golden export --out c", show="none"), 0, "exported 1 cases"),
    ]
    assert transcript(steps) == "$ posenc-ref golden lint a\ngolden lint: OK\nposenc-ref: error: x\n"
    work = pathlib.Path("/tmp/posenc-docs-x")
    assert relative_paths(f"cannot write a in {work}/.b.partial (File too large); at {work}", work) == (
        "cannot write a in .b.partial (File too large); at ."
    )


def test_run_output_is_normalised_where_it_depends_on_the_machine() -> None:
    """Durations and a temporary folder's random name become placeholders; nothing else changes."""
    from doc_runs import normalise

    text = (
        "posenc-ref conformance: adapter posenc_ref, 24 results in 11.3 s\n"
        "exported 12 cases at 131074 positions to llama31: 6 JSON files, 16 .npy files, 261.0 MiB, 5.2 s\n"
        "cannot write a.npy in .vectors.partial-b2t92sc6 (File too large)\n"
        "max abs err 1.5 s-units at 2^24 + 1\n"
    )
    assert normalise(text) == (
        "posenc-ref conformance: adapter posenc_ref, 24 results in … s\n"
        "exported 12 cases at 131074 positions to llama31: 6 JSON files, 16 .npy files, 261.0 MiB, … s\n"
        "cannot write a.npy in .vectors.partial-XXXXXXXX (File too large)\n"
        "max abs err 1.5 s-units at 2^24 + 1\n"
    )


# --- generated blocks in the pages (scripts/docs_generate.py) -----------------------------------


def _docs_generate():
    if "docs_generate" not in sys.modules:  # its dataclasses look their module up there
        spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "scripts" / "docs_generate.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules["docs_generate"] = module
        spec.loader.exec_module(module)
    return sys.modules["docs_generate"]


def test_generated_blocks_keep_their_indentation_and_fence_code() -> None:
    generate = _docs_generate()
    from mdtext import generated_begin, generated_end

    name = "check/planted_bug_adapter/result"
    page = f"1. item\n\n   {generated_begin(name, 'report')}\n   stale\n   {generated_end(name)}\n\nafter\n"
    text, changed = generate.update(page, {name: generate.Made("RESULT: ```x```\n```\n")})
    assert [block.name for block, _, _ in changed] == [name]
    assert text == (
        "1. item\n\n"
        f"   {generated_begin(name, 'report')}\n\n"
        "   ````text\n   RESULT: ```x```\n   ```\n   ````\n\n"
        f"   {generated_end(name)}\n\nafter\n"
    )
    assert generate.update(text, {name: generate.Made("RESULT: ```x```\n```\n")}) == (text, [])
    assert generate.blocks(text)[1] == []
    unknown = "no_such_fragment"
    broken = f"{generated_begin('case_ids')}\n{generated_begin(unknown)}\n{generated_end(unknown)}\n"
    assert generate.blocks(broken)[1] == [
        "line 1: case_ids has no end marker",
        "line 2: no fragment is called no_such_fragment",
    ]


def test_the_generated_blocks_of_the_pages_are_up_to_date() -> None:
    """``python scripts/docs_generate.py --check --skip-runs`` on the committed pages: every block
    made from data is what its generator makes now, no page includes a generated file it should
    hold, and every fragment is on a page.  (The blocks that are runs of ``posenc-ref`` are checked
    by ``scripts/docs_ci.sh``: they take about a minute.)"""
    pytest.importorskip("sphinx", reason="the docs extra (sphinx) is not installed", exc_type=ImportError)
    generate = _docs_generate()
    assert generate.stale(skip_runs=True) == [], "run python scripts/docs_generate.py"


def test_a_stale_generated_block_is_named_and_nothing_is_written(
    tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("sphinx", reason="the docs extra (sphinx) is not installed", exc_type=ImportError)
    generate = _docs_generate()
    page = (ROOT / "docs" / "guide" / "case-ids.md").read_text(encoding="utf-8")
    found = {block.name: block for block in generate.blocks(page)[0]}
    assert {"case_ids", "flag_notes"} <= set(found)
    lines = page.split("\n")
    row = next(i for i in range(found["case_ids"].start, found["case_ids"].end) if lines[i].startswith("| `"))
    lines[row] = lines[row].replace("|", "| planted stale text", 2)  # a row that no generator writes
    copy = tmp_path / "case-ids.md"
    copy.write_text("\n".join(lines), encoding="utf-8")
    before = copy.read_bytes()
    assert generate.main(["--check", "--skip-runs", str(copy)]) == 1
    out = capsys.readouterr().out
    assert f"{copy}:{found['case_ids'].start + 1}: case_ids is out of date" in out
    assert "planted stale text" in out  # the diff shows the line
    assert "flag_notes" not in out  # the other block of the page is current
    assert copy.read_bytes() == before
    assert generate.main(["--skip-runs", str(copy)]) == 0  # rewriting gives back the page as committed
    assert copy.read_text(encoding="utf-8") == page


def _heading_levels(text: str) -> list[tuple[int, int]]:
    """(line number, level) of each ATX heading outside fenced code."""
    out, fence = [], None
    for number, line in enumerate(text.splitlines(), 1):
        marker = re.match(r"\s*(`{3,}|~{3,})", line)
        if marker:
            if fence is None:
                fence = marker.group(1)
            elif marker.group(1).startswith(fence):
                fence = None
            continue
        heading = re.match(r"(#{1,6}) \S", line)
        if fence is None and heading:
            out.append((number, len(heading.group(1))))
    return out


def test_headings_never_skip_a_level_in_any_page() -> None:
    """MyST warns on H1 -> H3 and the docs build takes warnings as errors; the generated
    fragments (the variants page's topics and axes) are where a skipped level came from."""
    skips = []
    for page in sorted((ROOT / "docs").rglob("*.md")):
        if "_build" in page.parts:
            continue
        previous = 0
        for number, level in _heading_levels(page.read_text(encoding="utf-8")):
            if level > previous + 1:
                skips.append(f"{page.relative_to(ROOT)}:{number}: H{previous} to H{level}")
            previous = level
    assert not skips, "\n".join(skips)
