"""The "How real libraries conform" page, made from the committed ``docs/matrix/matrix.json``.

The heatmap of function by implementation (each cell in its worst status's colour, with its
counts in words, beside a legend of those colours), then every failure grouped by its cause
(the classification entry that explains it: what it is, the columns and results it covers, the
standalone reproduction for a library bug and the upstream issue text, once), one summary row
per implementation (versions, counts, verdict, what it declares), the reach, and what each
adapter calls (its declared notes).  The table of every result is the standalone
``matrix.html``, linked.  A failure nobody explained is shown as UNEXPLAINED and reported as a
build problem, so the page can never hide one.  The views come from
:mod:`posenc_ref_conformance.matrix`, which renders the same ones into ``matrix.html``.
"""

from __future__ import annotations

import ast
import html
import importlib
import json
import re
from pathlib import Path
from typing import Any

from mdtext import md_escape, md_literal

from posenc_ref_conformance.matrix import CAUSE_TITLES, causes, heatmap_html, legend_html, library_versions
from posenc_ref_conformance.report_text import format_position, format_reach

__all__ = ["matrix_page"]

_CLASS_TITLES = CAUSE_TITLES
#: The most implementation columns in one heatmap table: more are split into tables of the same
#: rows, so that each fits the docs' content column (``scripts/docs_offline_check.py`` measures it).
HEATMAP_COLUMNS = 8


def _served_link(name: str) -> str:
    """A raw HTML link from docs/guide/ to a file of docs/matrix/, which the site serves at its root.

    Raw HTML, because MyST resolves a Markdown link as a document or a download and these
    files are neither (``html_extra_path`` copies them as they are).
    """
    label = html.escape(name.rpartition("/")[2])
    return f'<a href="../{html.escape(name)}"><code>{label}</code></a>'


def _repro_link(repro: str) -> str:
    """A link to a reproduction script (``repro`` is relative to docs/: ``matrix/repro/...``)."""
    return _served_link(repro.removeprefix("matrix/"))


def _declared(declared: dict[str, Any]) -> str:
    phase = declared.get("phase")
    phase = phase if isinstance(phase, str) else ", ".join(f"{k}: {v}" for k, v in (phase or {}).items())
    variants = ", ".join(f"{k}={v}" for k, v in (declared.get("variants") or {}).items())
    return f"phase {md_escape(phase or '-')}" + (f"; variants {md_escape(variants)}" if variants else "")


def _summary(matrix: dict[str, Any]) -> list[str]:
    """Two tables of one row per implementation (one would be wider than the page): the verdict
    and counts, then the versions and what the adapter declares."""
    lines = [
        "| implementation | verdict | pass | fail | beyond precision | skip |",
        "|---|---|---|---|---|---|",
    ]
    for column in matrix["columns"]:
        c = column["counts"]
        lines.append(
            f"| {md_literal(column['id'], in_table=True)} | {column['verdict']} "
            f"| {c['pass']} | {c['fail']} | {c['beyond-precision']} | {c['skip']} |"
        )
    for spec, reason in sorted(matrix.get("unavailable", {}).items()):
        lines.append(f"| {md_literal(spec, in_table=True)} | not measured: {md_escape(reason)} | | | | |")
    lines += ["", "| implementation | versions | declared |", "|---|---|---|"]
    for column in matrix["columns"]:
        lines.append(
            f"| {md_literal(column['id'], in_table=True)} | {md_escape(library_versions(column['adapter']))} "
            f"| {_declared(column.get('declared', {}))} |"
        )
    return lines


def _heatmap(matrix: dict[str, Any]) -> list[str]:
    """The legend and the heatmap, one raw HTML block each (inline styles: the theme's CSS is not needed)."""
    tables = heatmap_html(matrix, max_columns=HEATMAP_COLUMNS, grid="../matrix.html#")
    return [legend_html(), "", f'<div class="matrix-heatmap-views">{tables}</div>']


def _problems(matrix: dict[str, Any]) -> list[str]:
    """``column: result id is unexplained`` for every failure no classification explains."""
    return [
        f"{column['id']}: {rid} is unexplained"
        for column in matrix["columns"]
        for rid, cell in sorted(matrix["cells"][column["id"]].items())
        if cell.get("class", {}).get("class") == "unexplained"
    ]


def _causes(matrix: dict[str, Any]) -> list[str]:
    """One list item per cause: its class, columns and note (once), its results, its
    reproduction and, behind ``<details>``, its upstream issue text."""
    lines = []
    listed = causes(matrix)
    for cause in listed:
        entry, kind = cause["entry"], cause["class"]
        columns = ", ".join(md_literal(c) for c in cause["columns"])
        cells = f"{cause['cells']} failing cell{'s' if cause['cells'] != 1 else ''}"
        note = md_escape(entry.get("note") or "no classification explains these failures")
        repro = f" Reproduction: {_repro_link(entry['repro'])}." if entry.get("repro") else ""
        results = []
        for r in cause["results"]:
            text = md_literal(r["resultId"])
            if r["columns"] != cause["columns"]:
                text += f" (in {', '.join(md_literal(c) for c in r['columns'])})"
            text += "".join(
                f" ({md_escape(s)} in {md_literal(c)})" for c, s in r["statuses"].items() if s != "fail"
            )
            if r["diagnosis"] and not cause["diagnosis"]:
                text += f" (consistent with: {md_escape('; '.join(r['diagnosis']))})"
            results.append(text)
        lines += [
            "",
            f"- **{_CLASS_TITLES.get(kind, kind)}**, in {columns} ({cells}): {note}{repro}",
            "",
            f"  Failing: {', '.join(results)}.",
        ]
        if cause["diagnosis"]:
            lines += ["", f"  Every one consistent with: {md_escape('; '.join(cause['diagnosis']))}."]
        if "sameIssueAs" in cause:
            earlier = listed[cause["sameIssueAs"]]
            where = ", ".join(md_literal(m) for m in earlier["matches"]) or "it"
            lines += [
                "",
                f"  Upstream issue: the one shown above for {where} in {md_literal(earlier['columns'][0])}.",
            ]
        elif entry.get("issue"):
            summary = "<details><summary>Upstream issue text</summary>"
            lines += ["", f"  {summary}", "", f"  {md_escape(entry['issue'])}", "", "  </details>"]
    return lines or ["", "*(No result fails in any column.)*"]


def _reach(matrix: dict[str, Any]) -> list[str]:
    """One row per implementation, function and dtype with a reach sweep."""
    lines = [
        "| implementation | function | dtype | class | within exact up to | within the absolute tolerance "
        "up to | worst error | at position |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for column in matrix["columns"]:
        for row in column.get("reach", []):
            lines.append(
                f"| {md_literal(column['id'], in_table=True)} | {md_literal(row['function'], in_table=True)} "
                f"| {row['dtype']} | {row.get('phase') or '-'} | {format_reach(row.get('exactReach'))} "
                f"| {format_reach(row.get('atolReach'))} ({row['atol']:g}) | {row['worst']:.3g} "
                f"| {format_position(row.get('worstPosition'))} |"
            )
    return lines if len(lines) > 2 else ["*(No implementation in this matrix ran a reach sweep.)*"]


def _docstring_md(text: str) -> str:
    """A docstring line as Markdown: its ``literal`` and `literal` spans as code, the rest escaped."""
    parts = re.split(r"(``[^`]+``|`[^`]+`)", text)  # text, literal, text, ...
    return "".join(
        _escape_keeping_edges(part) if i % 2 == 0 else md_literal(part.strip("`"))
        for i, part in enumerate(parts)
    )


def _escape_keeping_edges(text: str) -> str:
    """``md_escape`` that keeps one space where ``text`` begins or ends with whitespace."""
    lead, tail = text[:1].isspace(), text[-1:].isspace()
    return (" " if lead else "") + md_escape(text) + (" " if tail and text.strip() else "")


def _other_findings(matrix: dict[str, Any], repro_dir: Path) -> list[str]:
    """Each reproduction no failing cell points to (a finding the suite's cases do not reach, or an
    answer such as "does vLLM's YaRN match HF's?"), with the first line of its docstring."""
    linked = {
        cell["class"]["repro"].rpartition("/")[2]
        for cells in matrix["cells"].values()
        for cell in cells.values()
        if cell.get("class", {}).get("repro")
    }
    lines = []
    for script in sorted(repro_dir.glob("*.py")):
        if script.name not in linked:
            summary = (ast.get_docstring(ast.parse(script.read_text(encoding="utf-8"))) or "").partition(
                "\n"
            )[0]
            lines.append(f"- {_served_link(f'repro/{script.name}')}: {_docstring_md(summary)}")
    return lines


def _calls(matrix: dict[str, Any]) -> list[str]:
    """What each built-in adapter calls, from its declared notes (the adapter modules import lazily)."""
    from posenc_ref_conformance.adapters import LIBRARIES

    lines = []
    for column in matrix["columns"]:
        name, _, variant = column["id"].partition(":")
        if name not in LIBRARIES:
            continue
        module = importlib.import_module(f"posenc_ref_conformance.adapters.{LIBRARIES[name]}")
        adapter = module.ADAPTERS[variant or "default"]
        notes = adapter.capabilities.notes
        if variant and notes == module.ADAPTERS["default"].capabilities.notes:
            continue  # a variant that swaps one source: its docstring says which
        lines += ["", f"{md_literal(column['id'])}:", ""]
        lines += [f"- {md_literal(function)}: {md_escape(note)}" for function, note in notes.items()]
    return lines


def matrix_page(root: Path) -> tuple[str, list[str]]:
    """(Markdown, problems): problems name unexplained failures and a missing matrix."""
    path = root / "docs" / "matrix" / "matrix.json"
    if not path.exists():
        return "*(No committed matrix: run scripts/matrix/build_matrix.sh.)*\n", [f"{path} is missing"]
    matrix = json.loads(path.read_text(encoding="utf-8"))
    lines = [
        f"Measured **{matrix['generated']}** with the posenc-ref conformance suite "
        f"{matrix['suiteVersion']}, by {md_literal(matrix['command'])} (each library in its own virtual "
        "environment, made by `scripts/matrix/setup_<library>.sh`). The detail view, one row per case and "
        f"dtype with each cell's detail and each case's rationale on hover: {_served_link('matrix.html')}; "
        f"the data: {_served_link('matrix.json')}.",
        "",
        "## By function and library",
        "",
        "One row per canonical function, one column per implementation (the columns split over several "
        "tables of the same rows when they are many). A cell counts the function's compared results in "
        "that column, in words, and takes the colour of the worst of them: fail, then xfail, xpass, "
        "beyond precision, pass; a cell whose results are all skipped says skip. Functions with failures "
        "come first, the most failing columns first; a function name leads to its rows in the detail "
        "view, and the functions no library computes are listed after the table.",
        "",
        *_heatmap(matrix),
        "",
        "## Every failure, by cause",
        "",
        "Each failing result, grouped by the classification that explains it: the explanation once, "
        "with every column and result it covers. A *bug* is the library's (a wrong value, a crash, or "
        "out-of-range input computed instead of rejected), with a standalone reproduction that does not "
        "use posenc-ref and the text of an issue a user could file upstream; a *convention* is a rule the "
        "library follows that the suite cannot name yet.",
        *_causes(matrix),
        "",
        "## Implementations",
        "",
        *_summary(matrix),
        "",
        "## Reach",
        "",
        "How far each implementation can be trusted: the largest swept position (0, 1, 2^k - 1, 2^k, "
        "2^k + 1, to 2^24 + 1 and, in float64, 2^40 + 1) up to which every swept position stays within "
        "the exact class's tolerance, and within an absolute 1e-3 (see the tolerance guide's *Reach*).",
        "",
        *_reach(matrix),
        "",
        "## Found beside the matrix",
        "",
        "Reproductions of findings no case of the suite reaches (decoding with a cache, a per-layer key, "
        "an index past a cache the adapter refuses to read), and of the cross-library answers; each "
        "script's docstring holds the measured numbers and, for a bug, the issue text.",
        "",
        *_other_findings(matrix, path.parent / "repro"),
        "",
        "## What each adapter calls",
        "",
        "From each built-in adapter's declared notes (`posenc_ref_conformance/adapters/<library>.py`; its "
        "docstring lists every code path and every piece of glue).",
        *_calls(matrix),
    ]
    return "\n".join(lines) + "\n", _problems(matrix)
