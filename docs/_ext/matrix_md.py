"""The "How real libraries conform" page, made from the committed ``docs/matrix/matrix.json``.

One summary row per implementation (versions, counts, verdict, what it declares), then
every failure with its classification, one line each (what it is, the standalone
reproduction for a library bug), the upstream issue texts, and what each adapter calls
(its declared notes).  A failure nobody explained is shown as UNEXPLAINED and reported
as a build problem, so the page can never hide one.
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

from posenc_ref_conformance.matrix import library_versions
from posenc_ref_conformance.report_text import format_position, format_reach

__all__ = ["matrix_page"]

_CLASS_TITLES = {
    "bug": "library bug or precision weakness",
    "convention": "a convention the suite does not express yet",
    "precision": "a precision class the adapter does not declare",
    "suite": "a suite error",
    "unexplained": "UNEXPLAINED",
}


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
    lines = [
        "| implementation | versions | verdict | pass | fail | beyond precision | skip | declared |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for column in matrix["columns"]:
        c = column["counts"]
        lines.append(
            f"| {md_literal(column['id'], in_table=True)} | {md_escape(library_versions(column['adapter']))} "
            f"| {column['verdict']} "
            f"| {c['pass']} | {c['fail']} | {c['beyond-precision']} | {c['skip']} "
            f"| {_declared(column.get('declared', {}))} |"
        )
    for spec, reason in sorted(matrix.get("unavailable", {}).items()):
        lines.append(f"| {md_literal(spec, in_table=True)} | not measured: {md_escape(reason)} | | | | | | |")
    return lines


def _failures(matrix: dict[str, Any]) -> tuple[list[str], list[str]]:
    """(lines, problems): one table per column with failures, one line per failure."""
    lines, problems = [], []
    for column in matrix["columns"]:
        failed = [(rid, c) for rid, c in sorted(matrix["cells"][column["id"]].items()) if "class" in c]
        if not failed:
            continue
        lines += ["", f"### {md_literal(column['id'])}: {len(failed)} failures", ""]
        lines += ["| result | class | diagnosis | what it is |", "|---|---|---|---|"]
        for rid, cell in failed:
            entry = cell["class"]
            if entry["class"] == "unexplained":
                problems.append(f"{column['id']}: {rid} is unexplained")
            repro = f" Reproduction: {_repro_link(entry['repro'])}." if entry.get("repro") else ""
            lines.append(
                f"| {md_literal(rid, in_table=True)} | {_CLASS_TITLES[entry['class']]} "
                f"| {md_escape(_diagnosis(cell))} | {md_escape(entry.get('note', ''))}{repro} |"
            )
    return lines, problems


def _diagnosis(cell: dict[str, Any]) -> str:
    """A failing cell's diagnosis (the known bug shapes that reproduce it), else where its error lives."""
    if cell.get("diagnosis"):
        return "consistent with: " + "; ".join(cell["diagnosis"])
    if cell.get("structure"):
        return "no known shape: " + cell["structure"]
    return "-"


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


def _issues(matrix: dict[str, Any]) -> list[str]:
    """Each distinct upstream issue text once, with the columns and reproduction it belongs to."""
    seen: dict[str, dict[str, Any]] = {}
    for column in matrix["columns"]:
        for cell in matrix["cells"][column["id"]].values():
            entry = cell.get("class", {})
            if entry.get("issue"):
                found = seen.setdefault(entry["issue"], {"columns": [], "repro": entry.get("repro")})
                if column["id"] not in found["columns"]:
                    found["columns"].append(column["id"])
    lines = []
    for text, found in seen.items():
        columns = ", ".join(md_literal(c) for c in found["columns"])
        repro = f" Reproduction: {_repro_link(found['repro'])}." if found["repro"] else ""
        lines.append(f"- **{columns}**: {md_escape(text)}{repro}")
    return lines


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
    failures, problems = _failures(matrix)
    lines = [
        f"Measured **{matrix['generated']}** with the posenc-ref conformance suite "
        f"{matrix['suiteVersion']}, by {md_literal(matrix['command'])} (each library in its own virtual "
        "environment, made by `scripts/matrix/setup_<library>.sh`). The full table, one row per case and "
        f"dtype with each cell's detail and each case's rationale on hover: {_served_link('matrix.html')}; "
        f"the data: {_served_link('matrix.json')}.",
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
        "## Every failure, classified",
        "",
        "One line per failing result. A *bug* is the library's (a wrong value, a crash, or out-of-range "
        "input computed instead of rejected), with a standalone reproduction that does not use posenc-ref; "
        "a *convention* is a rule the library follows that the suite cannot name yet.",
        *failures,
        "",
        "## Upstream issue texts",
        "",
        *_issues(matrix),
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
    return "\n".join(lines) + "\n", problems
