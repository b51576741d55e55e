"""The benchmarks page's tables, generated from the asv suite and its configuration.

- :func:`benchmark_list`: every benchmark of ``asv_benchmarks/benchmarks/`` (read with
  :mod:`ast`, nothing imported): its module, class, methods, parameters and the first
  line of its docstring.
- :func:`threshold_table`: the dashboard's regression thresholds
  (``asv_benchmarks/asv.conf.json``, ``regressions_thresholds``) beside the noise they were
  derived from (``asv_benchmarks/noise.json``), and the benchmarks left out of regression
  detection (``regressions_first_commits``: null).
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from mdtext import md_escape, md_literal

KINDS = ("time_", "track_", "peakmem_", "mem_")


def _first_line(doc: str | None) -> str:
    return (doc or "").strip().split("\n\n")[0].replace("\n", " ").strip()


def _cell(text: str) -> str:
    """A docstring's line in a table cell: its ````code```` spans as code, the rest escaped."""
    out = []
    for i, part in enumerate(re.split(r"``(.+?)``", text)):
        if i % 2:
            out.append(md_literal(part, in_table=True))
        elif part.strip():  # md_escape trims; the spaces around a code span stay
            lead, trail = (" " if part[0].isspace() else ""), (" " if part[-1].isspace() else "")
            out.append(lead + md_escape(part) + trail)
        else:
            out.append(part)
    return "".join(out)


def _params(node: ast.ClassDef) -> str:
    """``param_names`` of a class, as written (empty when it has none of its own)."""
    for item in node.body:
        if isinstance(item, ast.Assign) and any(getattr(t, "id", "") == "param_names" for t in item.targets):
            try:
                return ", ".join(ast.literal_eval(item.value))
            except ValueError:
                return ""
    return ""


def benchmark_list(root: Path) -> str:
    """A Markdown table of every benchmark class and its benchmarks."""
    rows = ["| module | class | benchmarks | parameters | what it measures |", "|---|---|---|---|---|"]
    for path in sorted((root / "asv_benchmarks" / "benchmarks").glob("bench_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if not isinstance(node, ast.ClassDef) or node.name.startswith("_"):
                continue
            methods = [
                f.name for f in node.body if isinstance(f, ast.FunctionDef) and f.name.startswith(KINDS)
            ]
            if not methods:
                continue
            cells = [
                md_literal(path.stem),
                md_literal(node.name),
                ", ".join(md_literal(m) for m in methods),
                md_escape(_params(node)),
                _cell(_first_line(ast.get_docstring(node))),
            ]
            rows.append("| " + " | ".join(cells) + " |")
    return "\n".join(rows) + "\n"


def load_conf(path: Path) -> dict:
    """asv.conf.json, whose comments are whole lines starting with ``//``."""
    text = path.read_text(encoding="utf-8")
    return json.loads("\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//")))


def _readable(pattern: str) -> str:
    """``^bench_ratios\\.T5BucketRatio\\.track_x\\('numpy'`` -> ``T5BucketRatio.track_x``, ``numpy``."""
    text = pattern.lstrip("^").replace("\\", "")
    match = re.match(r"bench_\w+\.(\w+)\.(\w+)\('(\w+)'", text)
    return (
        f"{md_literal(match[1] + '.' + match[2])} | {match[3]}"
        if match
        else f"{md_literal(text, in_table=True)} | all"
    )


def threshold_table(root: Path) -> str:
    """The thresholds of asv.conf.json, with the spread each one comes from and the rule."""
    conf = load_conf(root / "asv_benchmarks" / "asv.conf.json")
    noise = json.loads((root / "asv_benchmarks" / "noise.json").read_text(encoding="utf-8"))
    rule = noise["rule"]
    out = [
        f"Measured: {md_escape(noise['measured'])}",
        "",
        f"Rule: threshold = max({rule['floor']:.2f}, {rule['margin']} x spread), rounded to 0.01; "
        "spread = the largest max / min - 1 of any of the benchmark's parameter combinations on "
        "that backend, over every no-op commit of every trial.",
        "",
        "| benchmark | backend | spread | threshold | a 2x step at worst | 2x flagged |",
        "|---|---|---:|---:|---:|---|",
    ]
    for pattern, threshold in sorted(conf["regressions_thresholds"].items()):
        spread = noise["spread"].get(pattern)
        worst = 2.0 / (1.0 + spread) - 1.0 if spread is not None else float("nan")
        spread_text = f"{spread:.0%}" if spread is not None else "n/a"
        verdict = "yes" if worst > threshold else "no: only larger steps"
        out.append(f"| {_readable(pattern)} | {spread_text} | {threshold:.0%} | {worst:+.0%} | {verdict} |")
    disabled = [p for p, commit in conf.get("regressions_first_commits", {}).items() if commit is None]
    if disabled:
        out += ["", "Left out of regression detection (`regressions_first_commits`: `null`):", ""]
        reasons = noise.get("not_detected", {})
        out += [f"- {md_literal(p)}: {md_escape(reasons.get(p, ''))}" for p in disabled]
    return "\n".join(out) + "\n"
