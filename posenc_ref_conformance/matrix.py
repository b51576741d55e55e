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
from .report_text import format_reach
from .runner import run

__all__ = [
    "CLASSES",
    "build",
    "check_report",
    "column_id",
    "differences",
    "entries_for",
    "library_versions",
    "load_classification",
    "reach_lines",
    "render_html",
    "run_columns",
    "unexplained",
    "validate",
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


_CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}
table{border-collapse:collapse;table-layout:fixed;width:100%}
td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px;overflow-wrap:anywhere}
th:first-child{width:22%}
th{background:#f4f4f4;position:sticky;top:0}
td.pass{background:#e6f4e6}td.fail{background:#f9d6d5}td.beyond-precision{background:#fff1c9}
td.skip{color:#999}td.xfail,td.xpass{background:#e8e8f8}td.rid{font-family:monospace}
.legend span{padding:1px 6px;margin-right:6px}
"""


def render_html(
    matrix: dict[str, Any],
    notes: dict[str, dict[str, Any]] | None = None,
    comments: dict[str, str] | None = None,
) -> str:
    """A static page: one row per result, one column per implementation; hover shows rationale and detail.

    ``notes``: the golden files' flag notes (flag -> ``{"description": ...}``);
    ``comments``: each golden case's comment by case id (why the case exists).
    """
    notes, comments = notes or {}, comments or {}
    e = html.escape
    head = "".join(
        f'<th title="{e(json.dumps(c["adapter"], sort_keys=True))}">{e(c["id"])}<br>'
        f"<small>{e(library_versions(c['adapter']))}</small>"
        f"{''.join(f'<br><small class=reach>{e(line)}</small>' for line in reach_lines(c))}</th>"
        for c in matrix["columns"]
    )
    body = []
    for row in matrix["rows"]:
        rid = row["resultId"]
        flags = "; ".join(f"{f}: {notes.get(f, {}).get('description', '')}" for f in row["flags"])
        why = " | ".join(t for t in (comments.get(row["id"], ""), flags) if t)
        cells = []
        for column in matrix["columns"]:
            cell = matrix["cells"][column["id"]].get(rid)
            if cell is None:
                cells.append("<td></td>")
                continue
            text = cell["status"] if cell["status"] != "beyond-precision" else "beyond"
            tip = [f"consistent with: {'; '.join(cell['diagnosis'])}"] if cell.get("diagnosis") else []
            tip += [cell.get("structure", ""), cell.get("detail", "")]
            if "class" in cell:
                tip.append(f"[{cell['class']['class']}] {cell['class'].get('note', '')}")
                if cell["class"].get("repro"):
                    tip.append(f"reproduction: {cell['class']['repro']}")
            if "error" in cell:
                text += f" {cell['error']:.2g}"
            if cell.get("diagnosis") and cell["status"] in ("fail", "xfail"):
                text += " \N{BULLET} " + cell["diagnosis"][0]
            cells.append(
                f'<td class="{e(cell["status"])}" title="{e(" | ".join(t for t in tip if t))}">{e(text)}</td>'
            )
        body.append(f'<tr><td class="rid" title="{e(why)}">{e(rid)}</td>{"".join(cells)}</tr>')
    legend = "".join(f'<span class="{s}">{s}</span>' for s in ("pass", "fail", "beyond-precision", "skip"))
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>posenc-ref conformance matrix</title>'
        f"<style>{_CSS}</style></head><body><h1>How real libraries conform</h1>"
        f"<p>posenc-ref conformance suite {e(matrix['suiteVersion'])}, {e(matrix['generated'])}: "
        f"<code>{e(matrix['command'])}</code>. Hover a cell for the detail and its classification, "
        f'a case id for why it exists.</p><p class="legend">{legend}</p>'
        f"<table><thead><tr><th>result</th>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"
        "</body></html>\n"
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
