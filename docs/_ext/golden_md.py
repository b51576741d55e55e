"""Pages made from the golden vectors and the invariants (Markdown fragments, at build time).

- :func:`golden_summary`: the files (cases, size, version, checksum) and one case as stored;
- :func:`flag_notes`: the rationale flags, what each catches and where it was seen;
- :func:`tolerance_table`: per file and dtype, the file's tolerance and the per-case ones (those
  that grow with the position are in the figure of ``docs/figures/fig_tolerance.py``);
- :func:`case_ids`: every golden case id and invariant id, with its dtypes, flags and what
  it checks (what an adopter writes in an xfail file).

Every text that comes from a file goes through :func:`mdtext.md_escape`, so ``2**24 + 1``
stays ``2**24 + 1``.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import pkgutil
import re
from pathlib import Path
from typing import Any

from mdtext import md_escape, md_literal

__all__ = ["canonical_calls", "case_ids", "flag_notes", "golden_files", "golden_summary", "tolerance_table"]


def golden_files(root: Path) -> list[Path]:
    return sorted((root / "posenc_ref_conformance" / "golden" / "vectors").glob("*.json"))


def _case_files(root: Path) -> list[tuple[Path, dict[str, Any]]]:
    docs = [(path, json.loads(path.read_bytes())) for path in golden_files(root)]
    return [(path, doc) for path, doc in docs if "cases" in doc]


# --------------------------------------------------------------------------------------
def canonical_calls(root: Path) -> str:
    """The canonical calls as the golden vectors' index.json declares them, and what gates each option."""
    index = json.loads((root / "posenc_ref_conformance" / "golden" / "vectors" / "index.json").read_bytes())
    lines, gates = ["```text"], []
    for entry in index["files"]:
        sig = entry["signature"]
        keyword = [*sig["keyword"], *(["dtype"] if sig["takesDtype"] else [])]
        params = [*sig["positional"], *(["*", *keyword] if keyword else [])]
        outputs = sig["outputs"][0] if len(sig["outputs"]) == 1 else f"({', '.join(sig['outputs'])})"
        lines.append(f"{entry['function']}({', '.join(params)}) -> {outputs}")
        gates += [
            f"| `{entry['function']}` | `{param}` | `{field}` |" for param, field in sig["options"].items()
        ]
        gates += [
            f"| `{entry['function']}` | variant of `{topic}` | `variants` ({', '.join(names)}) |"
            for topic, names in sig["variants"].items()
        ]
    lines += ["```", "", "| function | option | capability that gates it |", "|---|---|---|", *gates, ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
def golden_summary(root: Path) -> str:
    """Tables of the golden files and of their rationale flags, and one case as stored."""
    files = golden_files(root)
    if not files:
        return "*(No golden files were present when this site was built.)*\n"
    rows = ["| file | scheme | cases | size | format | checksum |", "|---|---|---:|---:|---|---|"]
    total, example = 0, None
    for path in files:
        data = path.read_bytes()
        doc = json.loads(data)
        cases = doc.get("numberOfCases", len(doc.get("cases", [])))
        total += cases
        checksum = doc.get("checksum", {}).get("value") if isinstance(doc.get("checksum"), dict) else None
        state = "none"
        if checksum:
            blank = data.replace(checksum.encode(), b"0" * 64, 1)
            state = "ok" if hashlib.sha256(blank).hexdigest() == checksum else "**mismatch**"
        scheme = md_escape(doc.get("scheme", "(manifest)" if "files" in doc else "?"))
        version = md_literal(doc.get("formatVersion", "?"), in_table=True)
        rows.append(
            f"| {md_literal(path.name, in_table=True)} | {scheme} | {cases} | "
            f"{len(data) / 1024:.0f} KiB | {version} | {state} |"
        )
        if example is None and doc.get("cases"):
            example = doc["cases"][0]
    size = sum(p.stat().st_size for p in files) / 2**20
    rows.append(f"| **all {len(files)} files** | | **{total}** | **{size:.1f} MiB** | | |")
    text = "\n".join(rows) + "\n"
    if example is not None:
        text += "\n### One case, as stored\n\n(Long arrays shortened here with `...`.)\n\n```json\n"
        text += compact_json(_shorten(example)) + "\n```\n"
    return text


def flag_notes(root: Path) -> str:
    """The rationale flags of all files: kind, what each catches, and where it was seen."""
    notes: dict[str, dict[str, Any]] = {}
    for _path, doc in _case_files(root):
        for flag, note in doc.get("notes", {}).items():
            notes.setdefault(flag, note)
    if not notes:
        return "*(No golden files were present at build time.)*\n"
    text = "| flag | kind | what it catches |\n|---|---|---|\n"
    for flag, note in sorted(notes.items()):
        links = ", ".join(link_md(str(u)) for u in note.get("links", []) if str(u).startswith("http"))
        desc = md_escape(note.get("description", ""))
        text += (
            f"| {md_literal(flag, in_table=True)} | {md_escape(note.get('bugType', ''))} | {desc} {links} |\n"
        )
    return text


def tolerance_table(root: Path) -> str:
    """The golden files' tolerances that the tolerance figure does not show, and which it does.

    A function whose cases carry ``phase`` data (its accuracy depends on the position) is
    left to the figure (``docs/figures/fig_tolerance.py``) and only named; integer and boolean
    outputs (compared exactly) and float outputs whose tolerance is zero (compared for
    equality) are named in one sentence each.  Every other function gets a row, with per
    dtype the non-zero parts of the file's tolerance (when a case uses it) and the range of
    the per-case ones.
    """
    rows = ["| function | float64 | float32 |", "|---|---|---|"]
    plotted, exact, equal = [], [], []
    for _path, doc in _case_files(root):
        function = md_literal(doc.get("function", _path.stem), in_table=True)
        if not doc.get("tolerances"):
            exact.append(function)
        elif any("phase" in c for c in doc["cases"]):
            plotted.append(function)
        else:
            cells = [_tolerance_cell(doc, dtype) for dtype in ("float64", "float32")]
            if any(cells):
                rows.append(f"| {function} | {' | '.join(cells)} |")
            else:
                equal.append(function)
    if not (plotted or exact or equal or len(rows) > 2):
        return "*(No golden files were present at build time.)*\n"
    text = "\n".join(rows) + "\n" if len(rows) > 2 else ""
    if equal:
        text += f"\nFloat outputs with a zero tolerance (must equal the golden value): {', '.join(equal)}.\n"
    if exact:
        text += f"\nInteger and boolean outputs, compared exactly: {', '.join(exact)}.\n"
    if plotted:
        text += (
            f"\nTolerances that grow with the position are in {{ref}}`the figure <tolerance-figure>`: "
            f"{', '.join(plotted)}.\n"
        )
    return text


def _tolerance_cell(doc: dict[str, Any], dtype: str) -> str:
    """One dtype's tolerances of a file: the file's (if a case uses it); the per-case range."""
    tol = doc["tolerances"].get(dtype)
    if tol is None:
        return ""
    valued = [c for c in doc["cases"] if c.get("result") != "invalid"]
    own = [c["tolerances"][dtype] for c in valued if dtype in c.get("tolerances", {})]
    parts = []
    if len(own) < len(valued) and any(tol.values()):
        parts.append(_tol_text(tol))
    if own:
        count = f"{len(own)}" if len(own) == len(valued) else f"{len(own)} of {len(valued)}"
        parts.append(f"per case ({count}): {_range_text(own)}")
    return "; ".join(parts)


def _tol_text(tol: dict[str, Any]) -> str:
    """The non-zero parts of one tolerance: ``atol 2.38e-07, rtol 2.38e-07, 4 ulp``."""
    parts = [f"{key} {_g(tol[key])}" for key in ("atol", "rtol") if tol.get(key)]
    if tol.get("maxUlp"):
        parts.append(f"{tol['maxUlp']} ulp")
    return ", ".join(parts) or "0"


def _range_text(tolerances: list[dict[str, Any]]) -> str:
    """The range of each non-zero part over per-case tolerances: ``atol 0 to 4.37e-11, 4 ulp``."""
    parts = []
    for key, unit in (("atol", ""), ("rtol", ""), ("maxUlp", " ulp")):
        values = sorted({t.get(key, 0) for t in tolerances})
        if not values or values == [0]:
            continue
        shown = [str(v) if key == "maxUlp" else _g(v) for v in (values[0], values[-1])]
        span = f"{shown[0]} to {shown[1]}" if len(values) > 1 else shown[0]
        parts.append(f"{span}{unit}" if key == "maxUlp" else f"{key} {span}")
    return ", ".join(parts) or ("0" if tolerances else "")


# --------------------------------------------------------------------------------------
def case_ids(root: Path) -> str:
    """Every golden case id and invariant id, per function, with dtypes, flags and comment."""
    out: list[str] = []
    files = _case_files(root)
    total = sum(len(doc["cases"]) for _, doc in files)
    out.append(f"## Golden cases ({total} in {len(files)} files)\n")
    out.append(
        "Each golden case runs once per dtype its file lists; the report names a run "
        "`id[dtype]`. Invalid-input cases (`result: invalid`) expect an error instead of values.\n"
    )
    for path, doc in files:
        function = doc.get("function", path.stem)
        dtypes = ", ".join(md_literal(f"[{d}]") for d in doc.get("dtypes", []))
        out.append(f"(case-ids-{function.replace('_', '-')})=")
        out.append(f"### {md_literal(function)}\n")
        out.append(f"{len(doc['cases'])} cases in {md_literal(path.name)}, each run as {dtypes}.\n")
        out.append("| case id | flags | what it checks |\n|---|---|---|")
        for case in doc["cases"]:
            note = md_escape(case.get("comment", ""))
            if case.get("result") == "invalid":
                error = case.get("expected", {})
                note += f" *Expects {md_escape(error.get('error', 'an error'))}"
                note += (
                    f" naming {md_literal(error['parameter'], in_table=True)}.*"
                    if "parameter" in error
                    else ".*"
                )
            flags = ", ".join(md_escape(f) for f in case.get("flags", []))
            out.append(f"| {md_literal(case['id'], in_table=True)} | {flags} | {note} |")
        out.append("")
    invariants = _invariants()
    if invariants:
        out.append(f"## Invariants ({len(invariants)})\n")
        out.append(
            "Each invariant runs once, in float64 when the adapter has it, else in float32 "
            "(integer-valued ones as `[int]`); it is skipped when the adapter lacks a function it needs.\n"
        )
        out.append("| invariant id | needs | what it checks |\n|---|---|---|")
        for inv in invariants:
            doc = inspect.getdoc(inv.check) or ""
            summary = md_escape(doc.split("\n\n", 1)[0])
            needs = ", ".join(md_literal(n) for n in inv.needs)
            out.append(f"| {md_literal(inv.id, in_table=True)} | {needs} | {summary} |")
        out.append("")
    return "\n".join(out) + "\n"


def _invariants() -> list[Any]:
    """The registered invariants, in registration order (importing every invariant module)."""
    package = importlib.import_module("posenc_ref_conformance.invariants")
    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    return list(package.INVARIANTS)


# --------------------------------------------------------------------------------------
def link_md(url: str) -> str:
    """``[owner/repo#N](url)`` for GitHub issues and pulls, else the host and path."""
    match = re.match(r"https://github\.com/([^/]+/[^/]+)/(?:issues|pull)/(\d+)", url)
    label = f"{match.group(1)}#{match.group(2)}" if match else url.split("://", 1)[-1].rstrip("/")
    return f"[{md_escape(label)}]({url})"


def compact_json(node: Any, indent: int = 0) -> str:
    """JSON with arrays of scalars on one line, as the golden files are written."""
    pad = " " * (indent + 1)
    if isinstance(node, dict) and node:
        items = [f"{pad}{json.dumps(k)}: {compact_json(v, indent + 1)}" for k, v in node.items()]
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    if isinstance(node, list) and any(isinstance(v, (dict, list)) for v in node):
        items = [pad + compact_json(v, indent + 1) for v in node]
        return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"
    return json.dumps(node)


def _shorten(node: Any, keep: int = 4) -> Any:
    if isinstance(node, dict):
        return {k: _shorten(v, keep) for k, v in node.items()}
    if isinstance(node, list):
        items = [_shorten(v, keep) for v in node[:keep]]
        return [*items, "..."] if len(node) > keep else items
    return node


def _g(value: float) -> str:
    return "0" if value == 0 else f"{value:.3g}"
