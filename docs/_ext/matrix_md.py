"""The "How real libraries conform" page, made from the committed ``docs/matrix/matrix.json``.

One summary row per implementation (version, counts, verdict), then every failure with
its classification (what it is, the standalone reproduction for a library bug), so the
page can never show a failure nobody explained without saying so.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mdtext import md_escape

__all__ = ["matrix_page"]

_CLASS_TITLES = {
    "bug": "library bug or precision weakness",
    "convention": "a convention or variant the suite does not express yet",
    "precision": "a precision class the adapter does not declare",
    "suite": "a suite error",
    "unexplained": "UNEXPLAINED",
}


def _versions(adapter: dict[str, Any]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(adapter.items()) if k not in ("name", "describeError"))


def matrix_page(root: Path) -> tuple[str, list[str]]:
    """(Markdown, problems): problems name unexplained failures and a missing matrix."""
    path = root / "docs" / "matrix" / "matrix.json"
    if not path.exists():
        return "*(No committed matrix: run scripts/matrix/build_matrix.sh.)*\n", [f"{path} is missing"]
    matrix = json.loads(path.read_text(encoding="utf-8"))
    lines = [
        f"Measured {matrix['generated']} with the posenc-ref conformance suite {matrix['suiteVersion']}: "
        f"`{md_escape(matrix['command'])}` (each library in its own virtual environment, "
        "made by `scripts/matrix/setup_<library>.sh`). The full table, one row per case and dtype "
        "with each cell's detail on hover: [matrix.html](../matrix.html).",
        "",
        "| implementation | versions | verdict | pass | fail | beyond precision | skip | declared |",
        "|---|---|---|---|---|---|---|---|",
    ]
    problems = []
    for column in matrix["columns"]:
        c = column["counts"]
        declared = column.get("declared", {})
        phase = declared.get("phase")
        phase = phase if isinstance(phase, str) else ", ".join(f"{k}: {v}" for k, v in (phase or {}).items())
        variants = ", ".join(f"{k}={v}" for k, v in (declared.get("variants") or {}).items())
        name, versions = md_escape(column["id"]), md_escape(_versions(column["adapter"]))
        lines.append(
            f"| `{name}` | {versions} | {column['verdict']} "
            f"| {c['pass']} | {c['fail']} | {c['beyond-precision']} | {c['skip']} "
            f"| phase {md_escape(phase or '-')}{'; variants ' + md_escape(variants) if variants else ''} |"
        )
    for spec, reason in sorted(matrix.get("unavailable", {}).items()):
        lines.append(f"| `{md_escape(spec)}` | not measured: {md_escape(reason)} | | | | | | |")
    for column in matrix["columns"]:
        failed = [
            (rid, cell) for rid, cell in sorted(matrix["cells"][column["id"]].items()) if "class" in cell
        ]
        if not failed:
            continue
        lines += ["", f"### `{md_escape(column['id'])}`: {len(failed)} failures", ""]
        lines += ["| result | class | what it is |", "|---|---|---|"]
        for rid, cell in failed:
            entry = cell["class"]
            kind = entry["class"]
            if kind == "unexplained":
                problems.append(f"{column['id']}: {rid} is unexplained")
            repro = f" Reproduction: [`{entry['repro']}`](../{entry['repro']})." if entry.get("repro") else ""
            issue = f" Upstream: {md_escape(entry['issue'])}." if entry.get("issue") else ""
            note = md_escape(entry.get("note", ""))
            lines.append(f"| `{md_escape(rid)}` | {_CLASS_TITLES[kind]} | {note}{repro}{issue} |")
    return "\n".join(lines) + "\n", problems
