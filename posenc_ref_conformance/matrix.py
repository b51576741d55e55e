"""The conformance matrix: many implementations, one run of the suite each, one table.

Rows are results (golden cases and invariants, at each dtype), columns are
implementations (a built-in adapter of a real library, with its version), a
cell is that implementation's verdict on that result: pass, fail,
beyond-precision, skip (with the reason), the worst error and the failure's
detail.  Every failure must be *classified* by an entry of a classification
file (a library bug or precision weakness with its reproduction, a convention
the suite should express, or a suite error); a failure without one is
*unexplained*, which the matrix reports and ``posenc-ref matrix`` fails on.

Columns come from JSON reports (``posenc-ref check ADAPTER --json``), so
libraries that need their own virtual environments (vLLM, ggml) are measured
there and merged here; :func:`run_columns` makes reports for adapters that load
in this environment, each in its own process.

What a person reads, rendered into ``matrix.html`` (:func:`render_html`) and the docs page
(``docs/_ext/matrix_md.py``) alike: :func:`heatmap` (function by column, each cell its worst
status and counts), :func:`causes` (the failures grouped by the classification that explains
them), a legend in the cells' :data:`COLOURS`, then the table of every result.

A committed matrix is checked by :func:`validate` (well-formed, every failure
classified) and :func:`differences` (a fresh report of one column gives every
result the committed status), which ``scripts/matrix/ci_check.sh`` runs.
"""

from __future__ import annotations

import datetime
import html
import json
import os
import pathlib
from collections.abc import Iterable, Sequence
from typing import Any

from . import __version__
from .adapters import AdapterError
from .citations import linked_html
from .report_text import format_reach
from .runner import run

__all__ = [
    "CAUSE_TITLES",
    "CLASSES",
    "COLOURS",
    "SEVERITY",
    "STATUS_WORDS",
    "breakable",
    "build",
    "causes",
    "causes_html",
    "check_report",
    "column_id",
    "contrast",
    "counts_text",
    "differences",
    "entries_for",
    "heatmap",
    "heatmap_html",
    "legend_html",
    "library_versions",
    "load_classification",
    "reach_lines",
    "render_html",
    "repro_href",
    "run_columns",
    "unexplained",
    "validate",
    "worst_status",
]

MATRIX_VERSION = 1
#: Classes of an explained failure.
CLASSES = {
    "bug": "a bug or precision weakness of the library (a standalone reproduction is linked)",
    "convention": "a convention or variant the suite does not express yet",
    "precision": "a known precision class the adapter does not declare",
    "suite": "an error of the suite",
}
#: Column order of the cells' statuses in the summary counts.
STATUS_ORDER = ("pass", "fail", "beyond-precision", "xfail", "xpass", "skip")


def run_columns(specs: Iterable[str], *, timeout: float) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """JSON reports of ``specs`` run here (each in its own process); and the specs that would not load."""
    reports, unavailable = [], {}
    for spec in specs:
        try:
            report = run(spec, timeout=timeout)
        except AdapterError as exc:
            unavailable[spec] = str(exc)
            continue
        if report.abort is not None:  # a run that did not finish is no column
            unavailable[spec] = f"{report.verdict}: {report.abort['message']}"
            continue
        data = report.to_json()
        data["spec"] = spec
        reports.append(data)
    return reports, unavailable


def _problem(where: str, what: str, value: Any) -> ValueError:
    shown = json.dumps(value) if _jsonable(value) else repr(value)
    return ValueError(f"{where}: {what}; got {shown[:80]}")


def _jsonable(value: Any) -> bool:
    try:
        json.dumps(value)
    except (TypeError, ValueError, RecursionError):
        return False
    return True


#: The fields of one result of a JSON report the matrix reads: name -> (types allowed, what it is).
_RESULT_FIELDS: dict[str, tuple[tuple[type, ...], str]] = {
    "resultId": ((str,), "a string"),
    "id": ((str,), "a string"),
    "function": ((str,), "a string"),
    "scheme": ((str,), "a string"),
    "status": ((str,), f"one of {list(STATUS_ORDER)}"),
    "detail": ((str,), "a string"),
    "flags": ((list,), "a list of strings"),
}


def check_report(report: Any, where: str) -> dict[str, Any]:
    """``report`` if it has the shape of ``posenc-ref check --json`` output the matrix reads, else ValueError.

    ``where`` names the report (its file) in the message, with the field that is wrong.
    """
    if not isinstance(report, dict):
        raise _problem(where, "a report is a JSON object", type(report).__name__)
    if report.get("abort") is not None:
        raise _problem(
            where, "the run did not finish (no verdict), so it is no column", report.get("verdict")
        )
    for key in ("adapter", "suite"):
        if not isinstance(report.get(key), dict):
            raise _problem(where, f"{key!r} must be an object", report.get(key))
    if "spec" in report and not isinstance(report["spec"], str):
        raise _problem(where, "'spec' must be a string", report["spec"])
    if not isinstance(report.get("declared", {}), dict):
        raise _problem(where, "'declared' must be an object", report.get("declared"))
    results, reach = report.get("results"), report.get("reach", [])
    if not isinstance(results, list):
        raise _problem(where, "'results' must be a list", results)
    for n, r in enumerate(results):
        at = f"{where}: results[{n}]"
        if not isinstance(r, dict):
            raise _problem(at, "a result is an object", r)
        for key, (types, what) in _RESULT_FIELDS.items():
            if not isinstance(r.get(key), types):
                raise _problem(at, f"{key!r} must be {what}", r.get(key))
        if r["status"] not in STATUS_ORDER or not all(isinstance(f, str) for f in r["flags"]):
            raise _problem(at, f"'status' must be one of {list(STATUS_ORDER)} and 'flags' strings", r)
        error = r.get("max_abs_err")
        if error is not None and (isinstance(error, bool) or not isinstance(error, (int, float))):
            raise _problem(at, "'max_abs_err' must be a number or null", error)
        diagnosis = r.get("diagnosis", [])
        if not isinstance(diagnosis, list) or not all(isinstance(d, str) for d in diagnosis):
            raise _problem(at, "'diagnosis' must be a list of strings", diagnosis)
        if not isinstance(r.get("structure", ""), str):
            raise _problem(at, "'structure' must be a string", r.get("structure"))
    if not isinstance(reach, list):
        raise _problem(where, "'reach' must be a list", reach)
    for n, row in enumerate(reach):
        fine = isinstance(row, dict) and isinstance(row.get("function"), str)
        fine = fine and isinstance(row.get("dtype"), str) and isinstance(row.get("atol"), (int, float))
        position = row.get("atolReach") if isinstance(row, dict) else None
        if not fine or not (position is None or type(position) is int):
            at = f"{where}: reach[{n}]"
            raise _problem(at, "a reach row needs function, dtype, atol, atolReach", row)
    return report


def load_classification(path: str | os.PathLike[str]) -> dict[str, list[dict[str, str]]]:
    """``{column: [{"match", "class", "note", "repro"?, "issue"?}, ...]}``, checked.

    A key ``NAME:*`` applies to column ``NAME`` and to every ``NAME:VARIANT``
    column (a library's variants share its findings); ``match`` is a result id
    or an id prefix ending in ``/`` (or followed by ``/`` or ``[`` in the id).
    A ``bug`` needs ``repro``, a path under ``docs/`` of a standalone reproduction.
    """
    data = json.loads(pathlib.Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        msg = f"{path}: a classification is an object of column -> entries; got {type(data).__name__}"
        raise ValueError(msg)
    for column, entries in data.items():
        if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
            msg = f"{path}: {column}: entries must be a list of objects; got {type(entries).__name__}"
            raise ValueError(msg)
        for entry in entries:
            if not all(isinstance(entry.get(k, ""), str) for k in ("match", "class", "note", "repro")):
                msg = f"{path}: {column}: entry {entry}: match, class, note and repro are strings"
                raise ValueError(msg)
            missing = {"match", "class", "note"} - set(entry)
            if missing or entry["class"] not in CLASSES:
                msg = f"{path}: {column}: entry {entry} needs match, note and a class of {list(CLASSES)}"
                raise ValueError(msg)
            if entry["class"] == "bug" and "repro" not in entry:
                msg = f"{path}: {column}: {entry['match']}: a library bug needs its reproduction ('repro')"
                raise ValueError(msg)
    return data


def entries_for(classification: dict[str, list[dict[str, str]]], column: str) -> list[dict[str, str]]:
    """The entries that apply to ``column``: its own, then its library's ``NAME:*`` ones."""
    return [*classification.get(column, []), *classification.get(f"{column.partition(':')[0]}:*", [])]


def _classify(entries: Sequence[dict[str, str]], result_id: str) -> dict[str, str] | None:
    for entry in entries:
        match = entry["match"]
        if result_id == match or (
            result_id.startswith(match) and (match.endswith("/") or result_id[len(match)] in "/[")
        ):
            return entry
    return None


def column_id(report: dict[str, Any]) -> str:
    """The matrix column a report fills: its spec, else its adapter's name."""
    return str(report.get("spec") or report["adapter"].get("name", "?"))


def build(
    reports: Sequence[dict[str, Any]],
    classification: dict[str, list[dict[str, str]]],
    *,
    unavailable: dict[str, str] | None = None,
    command: str = "",
) -> dict[str, Any]:
    """The matrix as data: columns (adapter, versions, counts), rows, cells (status, error, detail, class)."""
    columns, cells, rows = [], {}, {}
    for report in reports:
        column = column_id(report)
        entries = entries_for(classification, column)
        column_cells = {}
        for r in report["results"]:
            rows.setdefault(
                r["resultId"],
                {"id": r["id"], "function": r["function"], "scheme": r["scheme"], "flags": r["flags"]},
            )
            cell: dict[str, Any] = {"status": r["status"]}
            if r.get("max_abs_err") is not None:
                cell["error"] = r["max_abs_err"]
            if r["detail"]:
                cell["detail"] = r["detail"]
            if r.get("diagnosis"):
                cell["diagnosis"] = list(r["diagnosis"])
            elif r.get("structure"):
                cell["structure"] = r["structure"]
            if r["status"] in ("fail", "xfail"):
                entry = _classify(entries, r["resultId"])
                cell["class"] = entry if entry is not None else {"class": "unexplained", "note": ""}
            column_cells[r["resultId"]] = cell
        cells[column] = column_cells
        columns.append(
            {
                "id": column,
                "adapter": report["adapter"],
                "declared": report.get("declared", {}),
                "verdict": report.get("verdict"),
                "counts": {s: sum(c["status"] == s for c in column_cells.values()) for s in STATUS_ORDER},
                "platform": {k: report["suite"].get(k) for k in ("python", "numpy")},
                "reach": report.get("reach", []),
            }
        )
    return {
        "matrixVersion": MATRIX_VERSION,
        "suiteVersion": __version__,
        "generated": datetime.date.today().isoformat(),
        "command": command,
        "classes": CLASSES,
        "columns": columns,
        "unavailable": unavailable or {},
        "rows": [{"resultId": rid, **row} for rid, row in sorted(rows.items())],
        "cells": cells,
    }


def unexplained(matrix: dict[str, Any]) -> list[str]:
    """``column: result id`` of every failure without a classification."""
    return [
        f"{column}: {rid}"
        for column, cells in matrix["cells"].items()
        for rid, cell in cells.items()
        if cell.get("class", {}).get("class") == "unexplained"
    ]


_MATRIX_KEYS = ("matrixVersion", "suiteVersion", "generated", "command", "columns", "rows", "cells")


def validate(matrix: Any) -> list[str]:
    """Problems of a matrix as data (empty when well-formed and every failure is classified)."""
    if not isinstance(matrix, dict):
        return [f"a matrix is a JSON object; got {type(matrix).__name__}"]
    problems = [f"missing key {key!r}" for key in _MATRIX_KEYS if key not in matrix]
    if problems:
        return problems
    if matrix["matrixVersion"] != MATRIX_VERSION:
        problems.append(f"matrixVersion must be {MATRIX_VERSION}; got {matrix['matrixVersion']!r}")
    rows = {row.get("resultId") for row in matrix["rows"]}
    ids = [column.get("id") for column in matrix["columns"]]
    if set(ids) != set(matrix["cells"]) or len(ids) != len(set(ids)):
        problems.append(f"columns {ids} and cells {sorted(matrix['cells'])} must name the same columns once")
    for column in matrix["columns"]:
        cells = matrix["cells"].get(column.get("id"), {})
        for key in ("adapter", "counts", "verdict"):
            if key not in column:
                problems.append(f"{column.get('id')}: missing key {key!r}")
        counts = {s: sum(c.get("status") == s for c in cells.values()) for s in STATUS_ORDER}
        if column.get("counts") != counts:
            problems.append(f"{column.get('id')}: counts {column.get('counts')} are not its cells' {counts}")
        for rid, cell in cells.items():
            where = f"{column.get('id')}: {rid}"
            if rid not in rows:
                problems.append(f"{where}: no row")
            if cell.get("status") not in STATUS_ORDER:
                problems.append(f"{where}: status {cell.get('status')!r} not in {list(STATUS_ORDER)}")
            elif cell["status"] in ("fail", "xfail"):
                kind = cell.get("class", {}).get("class")
                if kind not in CLASSES:
                    problems.append(f"{where}: failure {'unexplained' if kind else 'without a class'}")
                elif kind == "bug" and not cell["class"].get("repro"):
                    problems.append(f"{where}: a bug without its reproduction")
    return problems


def differences(matrix: dict[str, Any], report: dict[str, Any], column: str) -> list[str]:
    """Results whose status in ``report`` (a fresh ``check --json``) is not the committed ``column``'s."""
    if column not in matrix["cells"]:
        return [f"{column}: no such column in the matrix (columns: {sorted(matrix['cells'])})"]
    committed = {rid: cell["status"] for rid, cell in matrix["cells"][column].items()}
    fresh = {r["resultId"]: r["status"] for r in report["results"]}
    found = [
        f"{column}: {rid}: {committed[rid]} in the matrix, {fresh[rid]} now"
        for rid in sorted(committed.keys() & fresh.keys())
        if committed[rid] != fresh[rid]
    ]
    found += [
        f"{column}: {rid}: in the matrix, not in the report"
        for rid in sorted(committed.keys() - fresh.keys())
    ]
    found += [
        f"{column}: {rid}: new ({fresh[rid]}), not in the matrix"
        for rid in sorted(fresh.keys() - committed.keys())
    ]
    return found


# --- the views a person reads: heatmap, failures by cause, legend ---------------------------------

#: Statuses from the worst to the best: a heatmap cell takes the colour of its worst result.
SEVERITY = ("fail", "xfail", "xpass", "beyond-precision", "pass", "skip")
#: The word a page shows for a status; ``absent``: the column's report has no such result.
STATUS_WORDS = {
    "fail": "fail",
    "xfail": "xfail",
    "xpass": "xpass",
    "beyond-precision": "beyond",
    "pass": "pass",
    "skip": "skip",
    "absent": "not run",
}
#: What each status means (the legend's text).
STATUS_MEANINGS = {
    "fail": "differs from the golden value beyond its tolerance, or accepted what it must reject",
    "xfail": "a failure the adopter's xfail file expects",
    "xpass": "named in the xfail file, but passed",
    "beyond-precision": "compared, but the declared precision class is too loose to tell right from wrong",
    "pass": "matches the golden value within its tolerance",
    "skip": "not compared: outside what the adapter declares",
    "absent": "the column's report has no such result",
}
#: ``(background, text)`` colour of each status, used by every cell and by the legend; each
#: pair has a contrast of at least 4.5:1 (WCAG AA, checked by the tests).
COLOURS = {
    "fail": ("#f08c86", "#1a1a1a"),
    "xfail": ("#dcd4f8", "#1a1a1a"),
    "xpass": ("#bfaef0", "#1a1a1a"),
    "beyond-precision": ("#ffd54a", "#1a1a1a"),
    "pass": ("#cdeacd", "#1a1a1a"),
    "skip": ("#efefef", "#4d4d4d"),
    "absent": ("#ffffff", "#4d4d4d"),
}
#: Columns of the suite's own reference implementation (by library name, before any ``:``):
#: a function that only they compute is "not implemented by any library".
REFERENCE = ("posenc_ref",)
#: How a cause's class is named on a page, in the order causes are listed.
CAUSE_TITLES = {
    "unexplained": "UNEXPLAINED",
    "bug": "library bug or precision weakness",
    "precision": "a precision class the adapter does not declare",
    "convention": "a convention the suite does not express yet",
    "suite": "a suite error",
}


#: The short name of a cause's class in a table cell.
CAUSE_WORDS = {**{k: k for k in CAUSE_TITLES}, "unexplained": "UNEXPLAINED"}


def contrast(foreground: str, background: str) -> float:
    """The WCAG 2 contrast ratio of two ``#rrggbb`` colours: 1 (none) to 21 (black on white)."""

    def luminance(colour: str) -> float:
        channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
        r, g, b = (c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
        return 0.2126 * r + 0.7152 * g + 0.0722 * b

    light, dark = sorted((luminance(foreground), luminance(background)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def worst_status(counts: dict[str, int]) -> str:
    """The worst status with a non-zero count (:data:`SEVERITY`), ``"absent"`` when none."""
    return next((s for s in SEVERITY if counts.get(s)), "absent")


def counts_text(counts: dict[str, int]) -> str:
    """What a heatmap cell says: ``"3 fail / 12 pass"`` (compared statuses, worst first), else
    ``"skip"`` (every result skipped) or ``"not run"`` (none in the column's report)."""
    compared = [f"{counts[s]} {STATUS_WORDS[s]}" for s in SEVERITY[:-1] if counts.get(s)]
    return " / ".join(compared) or STATUS_WORDS[worst_status(counts)]


def _library(column: str) -> str:
    return column.partition(":")[0]


def heatmap(matrix: dict[str, Any], reference: Sequence[str] = REFERENCE) -> dict[str, Any]:
    """The matrix by canonical function and column, as data.

    ``{"columns": [id, ...], "rows": [row, ...], "unimplemented": [function, ...]}``: a row is
    ``{"function", "results", "failing", "failures", "cells": {column: {"status", "counts",
    "text"}}}`` (``failing``: the columns with a failure; ``failures``: the failing results;
    a cell's status is its worst result's, :func:`worst_status`).  Rows with failures come
    first, most failing columns first, then the rest by name.  A function that no column
    outside ``reference`` compares (every result skipped or absent) is no row: it is listed
    in ``unimplemented``.
    """
    columns = [c["id"] for c in matrix["columns"]]
    functions: dict[str, list[str]] = {}
    for row in matrix["rows"]:
        functions.setdefault(row["function"], []).append(row["resultId"])
    rows, unimplemented = [], []
    for function, rids in functions.items():
        cells = {}
        for column in columns:
            column_cells = matrix["cells"][column]
            counts = {s: 0 for s in SEVERITY}
            for rid in rids:
                if rid in column_cells:
                    counts[column_cells[rid]["status"]] += 1
            status = worst_status(counts)
            cells[column] = {"status": status, "counts": counts, "text": counts_text(counts)}
        libraries = [c for c in columns if _library(c) not in reference]
        if all(cells[c]["status"] in ("skip", "absent") for c in libraries):
            unimplemented.append(function)
            continue
        rows.append(
            {
                "function": function,
                "results": len(rids),
                "failing": sum(cell["counts"]["fail"] > 0 for cell in cells.values()),
                "failures": sum(cell["counts"]["fail"] for cell in cells.values()),
                "cells": cells,
            }
        )
    rows.sort(key=lambda r: (-r["failing"], -r["failures"], r["function"]))
    return {"columns": columns, "rows": rows, "unimplemented": sorted(unimplemented)}


def causes(matrix: dict[str, Any]) -> list[dict[str, Any]]:
    """The classified results (fail and xfail), grouped by the explanation that classifies them.

    One item per cause: ``{"entry": an entry, "class", "matches": [match, ...], "columns": [id, ...],
    "results": [{"resultId", "columns", "statuses": {column: status}, "diagnosis"}, ...], "cells": n,
    "diagnosis": the known bug shape every result is consistent with, else []}``;
    columns in the matrix's order, results by id.  A cause is a classification entry, or several
    with the same class, note, reproduction and issue text (one explanation matched by several ids);
    an entry shared by a library's variants (``NAME:*``) is one cause with all their columns; every
    unexplained failure is in the one ``unexplained`` cause.  Listed unexplained first, then by class
    (:data:`CAUSE_TITLES`), then the most failing cells first.  A cause whose upstream issue text an
    earlier one has (one issue covering several findings) has ``"sameIssueAs"``: that one's index.
    """
    order = {c["id"]: n for n, c in enumerate(matrix["columns"])}
    found: dict[str, dict[str, Any]] = {}
    for column in matrix["columns"]:
        for rid, cell in matrix["cells"][column["id"]].items():
            if "class" not in cell:
                continue
            entry = cell["class"]
            explanation = {k: v for k, v in entry.items() if k != "match"}
            cause = found.setdefault(
                json.dumps(explanation, sort_keys=True),
                {
                    "entry": entry,
                    "class": entry.get("class", "unexplained"),
                    "matches": [],
                    "columns": [],
                    "results": {},
                },
            )
            if entry.get("match") and entry["match"] not in cause["matches"]:
                cause["matches"].append(entry["match"])
            if column["id"] not in cause["columns"]:
                cause["columns"].append(column["id"])
            result = cause["results"].setdefault(
                rid, {"resultId": rid, "columns": [], "statuses": {}, "diagnosis": []}
            )
            result["columns"].append(column["id"])
            result["statuses"][column["id"]] = cell["status"]
            result["diagnosis"] = result["diagnosis"] or list(cell.get("diagnosis", []))
    listed = []
    for cause in found.values():
        results = [cause["results"][rid] for rid in sorted(cause["results"])]
        cells = sum(len(r["columns"]) for r in results)
        shapes = {tuple(r["diagnosis"]) for r in results}
        common = list(shapes.pop()) if len(shapes) == 1 else []
        listed.append({**cause, "results": results, "cells": cells, "diagnosis": common})
    titles = list(CAUSE_TITLES)
    listed.sort(
        key=lambda c: (
            titles.index(c["class"]) if c["class"] in titles else len(titles),
            -c["cells"],
            order[c["columns"][0]],
            sorted(c["matches"]),
        )
    )
    first: dict[str, int] = {}
    for n, cause in enumerate(listed):
        issue = cause["entry"].get("issue")
        if issue and first.setdefault(issue, n) != n:
            cause["sameIssueAs"] = first[issue]
    return listed


def _style(status: str) -> str:
    background, text = COLOURS[status]
    return f"background:{background};color:{text}"


def breakable(name: str, marks: str = ":_/") -> str:
    """``name`` escaped for HTML, with a line-break opportunity (``<wbr>``) after each of ``marks``
    and before each ``[``, so that a narrow cell wraps there and never inside a word."""
    text = html.escape(name)
    for mark in marks:
        text = text.replace(mark, f"{mark}<wbr>")
    return text.replace("[", "<wbr>[")


def legend_html(statuses: Sequence[str] = (*SEVERITY, "absent")) -> str:
    """Swatches in the cells' colours (:data:`COLOURS`), each with its word and meaning."""
    items = "".join(
        f'<li style="margin:2px 0" data-status="{html.escape(s)}">'
        f'<span style="{_style(s)};border:1px solid #767676;padding:0 .5em;display:inline-block;'
        f'min-width:4.5em;text-align:center">{html.escape(STATUS_WORDS[s])}</span> '
        f"{html.escape(STATUS_MEANINGS[s])}</li>"
        for s in statuses
    )
    return f'<ul class="matrix-legend" style="list-style:none;padding:0;margin:.5em 0">{items}</ul>'


def _column_groups(columns: list[str], max_columns: int | None) -> list[list[str]]:
    """``columns`` in consecutive groups of nearly equal size, none longer than ``max_columns``."""
    if not max_columns or len(columns) <= max_columns:
        return [columns]
    groups = -(-len(columns) // max_columns)
    size = -(-len(columns) // groups)
    return [columns[i : i + size] for i in range(0, len(columns), size)]


#: The most implementation columns one table of ``matrix.html`` holds (heatmap, detail grid): more
#: are split into several tables of the same rows, so that no table is wider than the page.
HEATMAP_COLUMNS = 11
GRID_COLUMNS = 7

#: A column header turned to read upwards, so that a narrow column holds its whole name.
_ROTATED = "display:inline-block;writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap"


def heatmap_html(
    matrix: dict[str, Any],
    *,
    max_columns: int | None = None,
    grid: str | None = None,
    reference: Sequence[str] = REFERENCE,
) -> str:
    """The :func:`heatmap` as HTML tables with inline styles (read without CSS or JavaScript).

    Column headers are rotated (a name is never broken); each cell says its counts in words and
    takes its worst status's colour; the title of a cell has every count.  ``max_columns``
    splits the columns into several tables of that many at most (same rows, same order);
    ``grid`` is the address of the detail table (``"#"`` on the same page), whose rows the
    function names link to.  The functions no library computes follow, on one line.
    """
    data = heatmap(matrix, reference)
    e = html.escape
    tables = []
    border = "border:1px solid #b3b3b3;padding:2px 4px"
    for group in _column_groups(data["columns"], max_columns):
        head = "".join(
            f'<th scope="col" style="{border};vertical-align:bottom;font-weight:600">'
            f'<span style="{_ROTATED}">'
            f"{e(column)}</span></th>"
            for column in group
        )
        body = []
        for row in data["rows"]:
            function = e(row["function"])
            name = f'<a href="{e(grid)}fn-{function}">{function}</a>' if grid is not None else function
            cells = []
            for column in group:
                cell = row["cells"][column]
                counts = cell["counts"]
                present = sum(counts.values())
                tip = ", ".join(f"{counts[s]} {STATUS_WORDS[s]}" for s in SEVERITY if counts[s])
                tip = f"{column}, {row['function']}: {tip or 'none'} ({present} of {row['results']} results)"
                words = " / ".join(
                    f'<span style="white-space:nowrap">{e(part)}</span>' for part in cell["text"].split(" / ")
                )
                cells.append(
                    f'<td style="{_style(cell["status"])};{border};font-size:11px;text-align:center" '
                    f'title="{e(tip)}" data-function="{function}" data-column="{e(column)}" '
                    f'data-status="{cell["status"]}">{words}</td>'
                )
            body.append(
                f'<tr><th scope="row" style="{border};text-align:left;font-weight:normal">'
                f'<code style="font-size:12px">{name}</code> '
                f'<small title="{row["results"]} results">({row["results"]})</small></th>'
                f"{''.join(cells)}</tr>"
            )
        tables.append(
            '<table class="matrix-heatmap" style="border-collapse:collapse;margin:.5em 0 1em">'
            f'<thead><tr><th scope="col" style="{border};text-align:left;vertical-align:bottom">'
            f"function <small>(results)</small></th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        )
    if data["unimplemented"]:
        others = [c for c in data["columns"] if _library(c) in reference]
        only = f" (only the reference, {', '.join(others)}, computes them)" if others else ""
        names = ", ".join(f"<code>{e(f)}</code>" for f in data["unimplemented"])
        tables.append(f'<p class="matrix-unimplemented">Not implemented by any library{e(only)}: {names}</p>')
    return "".join(tables)


def repro_href(repro: str) -> str:
    """Where a reproduction (a path under ``docs/``) is, from ``docs/matrix/matrix.html``."""
    return repro.removeprefix("matrix/") if repro.startswith("matrix/") else f"../{repro}"


def causes_html(matrix: dict[str, Any], *, grid: str = "#") -> str:
    """The failures only, one table row per :func:`causes` item: its class, the columns and
    results it explains (each result linked to its row of the detail table at ``grid``), its
    note, its reproduction and, behind ``<details>``, the upstream issue text."""
    e = html.escape
    rows = []
    border = "border:1px solid #b3b3b3;padding:3px 6px;vertical-align:top"
    for n, cause in enumerate(causes(matrix), 1):
        entry = cause["entry"]
        kind = cause["class"]
        title = f'<strong title="{e(CAUSE_TITLES.get(kind, kind))}">{e(CAUSE_WORDS.get(kind, kind))}</strong>'
        columns = "<br>".join(f"<code>{breakable(c)}</code>" for c in cause["columns"])
        results = []
        for r in cause["results"]:
            only = "" if r["columns"] == cause["columns"] else f" ({', '.join(map(e, r['columns']))})"
            status = "".join(f" [{e(s)} in {e(c)}]" for c, s in r["statuses"].items() if s != "fail")
            diagnosis = ""
            if r["diagnosis"] and not cause["diagnosis"]:
                diagnosis = f" \N{EM DASH} consistent with: {e('; '.join(r['diagnosis']))}"
            results.append(
                f'<li><a href="{e(grid)}row-{e(r["resultId"])}">'
                f"<code>{breakable(r['resultId'], '/')}</code></a>"
                f"{only}{status}{diagnosis}</li>"
            )
        what = [
            '<p style="margin:0">'
            + linked_html(entry.get("note") or "no classification explains these failures")
            + "</p>"
        ]
        if cause["diagnosis"]:
            shape = e("; ".join(cause["diagnosis"]))
            what.append(f'<p style="margin:.3em 0 0">Every result consistent with: {shape}.</p>')
        if entry.get("repro"):
            what.append(
                f'<p style="margin:.3em 0 0">Reproduction: <a href="{e(repro_href(entry["repro"]))}">'
                f"<code>{e(entry['repro'].rpartition('/')[2])}</code></a></p>"
            )
        if "sameIssueAs" in cause:
            what.append(
                f'<p style="margin:.3em 0 0">Upstream issue: the one of <a href="#cause-'
                f'{cause["sameIssueAs"] + 1}">the cause above</a>.</p>'
            )
        elif entry.get("issue"):
            what.append(
                '<details style="margin:.3em 0 0"><summary>Upstream issue text</summary>'
                f"<p>{linked_html(entry['issue'])}</p></details>"
            )
        cells = f"{cause['cells']} failing cell{'s' if cause['cells'] != 1 else ''}"
        rows.append(
            f'<tr id="cause-{n}" data-class="{e(kind)}"><td style="{border};width:13em">{title} '
            f'<small style="white-space:nowrap">({cells})</small><br>'
            f'<span class="cause-columns">{columns}</span></td>'
            f'<td style="{border};width:40%">'
            f'<ul style="margin:0;padding-left:1.2em">{"".join(results)}</ul></td>'
            f'<td style="{border}">{"".join(what)}</td></tr>'
        )
    if not rows:
        return "<p>No result fails in any column.</p>"
    classes = {**CLASSES, **matrix.get("classes", {})}
    meanings = "; ".join(f"<strong>{e(k)}</strong>: {e(v)}" for k, v in classes.items())
    head = "".join(
        f'<th scope="col" style="{border};text-align:left">{h}</th>'
        for h in ("cause, in the columns", "failing results", "what it is")
    )
    return (
        f"<p>Classes: {meanings}; <strong>UNEXPLAINED</strong>: a failure no entry explains.</p>"
        '<table class="matrix-causes" style="border-collapse:collapse;width:100%">'
        f"<thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1a1a1a}
h2{margin-top:1.6em}
nav a{margin-right:1em}
.matrix-heatmap th[scope=row]{position:sticky;left:0;background:#fff;z-index:1}
.matrix-causes td{font-size:13px}
table.grid{border-collapse:collapse;width:100%}
table.grid td,table.grid th{border:1px solid #ccc;padding:2px 6px;font-size:12px;overflow-wrap:break-word}
table.grid th{background:#f4f4f4;position:sticky;top:0;z-index:2;vertical-align:bottom;
  word-break:keep-all;overflow-wrap:normal;hyphens:manual;min-width:6em}
table.grid th:first-child,table.grid td.rid{position:sticky;left:0;z-index:1;background:#fff}
table.grid th:first-child{z-index:3;background:#f4f4f4}
table.grid td.rid{font-family:monospace;min-width:24em;overflow-wrap:anywhere}
table.grid .v{white-space:nowrap}table.grid td a{color:inherit}
table.grid th small{font-weight:normal}
"""


def render_html(
    matrix: dict[str, Any],
    notes: dict[str, dict[str, Any]] | None = None,
    comments: dict[str, str] | None = None,
) -> str:
    """A static page: the heatmap of function by column, the failures by cause, the legend, then the
    detail table (one row per result, one column per implementation; hover shows rationale and detail).

    ``notes``: the golden files' flag notes (flag -> ``{"description": ...}``);
    ``comments``: each golden case's comment by case id (why the case exists).
    """
    notes, comments = notes or {}, comments or {}
    e = html.escape
    css = _CSS + "".join(
        f"table.grid td.{s}{{{_style(s)}}}" for s in SEVERITY
    )  # the grid's cells: the same colours as the heatmap and the legend

    def header(c: dict[str, Any]) -> str:
        return (
            f'<th title="{e(json.dumps(c["adapter"], sort_keys=True))}">{breakable(c["id"])}<br>'
            f"<small>{breakable(library_versions(c['adapter']))}</small>"
            f"{''.join(f'<br><small class=reach>{e(line)}</small>' for line in reach_lines(c))}</th>"
        )

    by_id = {c["id"]: c for c in matrix["columns"]}
    groups = _column_groups(list(by_id), GRID_COLUMNS)
    bodies: list[list[str]] = [[] for _ in groups]
    anchored: set[str] = set()
    explained = {
        (column, r["resultId"]): n
        for n, cause in enumerate(causes(matrix), 1)
        for r in cause["results"]
        for column in r["columns"]
    }
    for row in matrix["rows"]:
        rid = row["resultId"]
        flags = "; ".join(f"{f}: {notes.get(f, {}).get('description', '')}" for f in row["flags"])
        why = " | ".join(t for t in (comments.get(row["id"], ""), flags) if t)
        cells = {}
        for column in matrix["columns"]:
            cell = matrix["cells"][column["id"]].get(rid)
            if cell is None:
                cells[column["id"]] = "<td></td>"
                continue
            value = STATUS_WORDS.get(cell["status"], cell["status"])
            tip = [f"consistent with: {'; '.join(cell['diagnosis'])}"] if cell.get("diagnosis") else []
            tip += [cell.get("structure", ""), cell.get("detail", "")]
            if "class" in cell:
                tip.append(f"[{cell['class']['class']}] {cell['class'].get('note', '')}")
                if cell["class"].get("repro"):
                    tip.append(f"reproduction: {cell['class']['repro']}")
            if "error" in cell:
                value += f" {cell['error']:.2g}"
            text = f'<span class="v">{e(value)}</span>'
            if cell.get("diagnosis") and cell["status"] in ("fail", "xfail"):
                text += e(" \N{BULLET} " + cell["diagnosis"][0])
            if (column["id"], rid) in explained:  # a failure leads to its cause
                text = f'<a href="#cause-{explained[column["id"], rid]}">{text}</a>'
            cells[column["id"]] = (
                f'<td class="{e(cell["status"])}" title="{e(" | ".join(t for t in tip if t))}">{text}</td>'
            )
        anchor = ""
        if row["function"] not in anchored:
            anchored.add(row["function"])
            anchor = f' id="fn-{e(row["function"])}"'
        for index, (group, body) in enumerate(zip(groups, bodies, strict=True)):
            ids = (f' id="row-{e(rid)}"', anchor) if index == 0 else ("", "")  # anchors in the first table
            body.append(
                f'<tr{ids[0]}><td class="rid"{ids[1]} title="{e(why)}">{e(rid)}</td>'
                f"{''.join(cells[c] for c in group)}</tr>"
            )
    grids = "".join(
        f'<table class="grid"><thead><tr><th>result</th>{"".join(header(by_id[c]) for c in group)}'
        f"</tr></thead><tbody>{''.join(body)}</tbody></table>"
        for group, body in zip(groups, bodies, strict=True)
    )
    parts = ""
    if len(groups) > 1:
        parts = f" in {len(groups)} tables of the same rows, {GRID_COLUMNS} columns at most"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>posenc-ref conformance matrix</title>"
        f"<style>{css}</style></head><body><h1>How real libraries conform</h1>"
        f"<p>posenc-ref conformance suite {e(matrix['suiteVersion'])}, {e(matrix['generated'])}: "
        f"<code>{e(matrix['command'])}</code>.</p>"
        '<nav><a href="#by-function">By function</a><a href="#failures">Failures by cause</a>'
        '<a href="#detail">Every result</a></nav>'
        '<h2 id="legend">Legend</h2>'
        f"{legend_html()}"
        '<h2 id="by-function">By function and library</h2>'
        "<p>One row per canonical function, one column per implementation; a cell takes the colour of "
        "its worst result and counts the compared ones (hover for every count). Rows with failures "
        "come first; a function name leads to its rows in the detail table.</p>"
        f"{heatmap_html(matrix, max_columns=HEATMAP_COLUMNS, grid='#')}"
        '<h2 id="failures">Failures by cause</h2>'
        "<p>Every failing result, one row per classification entry (its cause), with the columns it "
        "explains; a result leads to its row in the detail table.</p>"
        f"{causes_html(matrix, grid='#')}"
        '<h2 id="detail">Every result</h2>'
        f"<p>One row per result (case and dtype), one column per implementation{e(parts)}. Hover a cell "
        "for the detail and its classification, a case id for why it exists.</p>"
        f"{grids}</body></html>\n"
    )


def reach_lines(column: dict[str, Any]) -> list[str]:
    """A column's reach, one line per function and dtype: ``rope_cos_sin f32: 1e-3 to 2^24 + 1``."""
    lines = []
    for row in column.get("reach", []):
        lines.append(
            f"{row['function']} {row['dtype'].replace('float', 'f')}: within {row['atol']:g} "
            f"up to {format_reach(row.get('atolReach'))}"
        )
    return lines


def library_versions(adapter: dict[str, Any]) -> str:
    """``"library version, ..."`` from a column's adapter description (nested details left out)."""
    return ", ".join(
        f"{k} {v}"
        for k, v in sorted(adapter.items())
        if k not in ("name", "describeError") and isinstance(v, (str, int, float))
    )
