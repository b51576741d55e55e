"""The zoo page's generated part, made from the committed ``docs/matrix/zoo.json``.

The headline counts (families installed, with positional code, run in their own code), the
families per verdict, and every family whose verdict is not a pass, with its causes and the
links to their reproductions.  The full table, one row per family with a filter, is the
standalone ``zoo.html``, linked; both come from :mod:`posenc_ref_conformance.zoo`.  A failure
nobody explained is reported as a build problem.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from matrix_md import _repro_link, _served_link
from mdtext import md_escape, md_literal

from posenc_ref_conformance.zoo import VERDICTS

__all__ = ["zoo_page"]


def _cause_text(cause: dict[str, Any]) -> str:
    link = f" ({_repro_link(cause['repro'])})" if cause.get("repro") else ""
    return f"{md_escape(cause['class'])}: {md_escape(cause['note'])}{link}"


def zoo_page(root: Path) -> tuple[str, list[str]]:
    """(Markdown, problems): problems name unexplained failures and a missing zoo."""
    path = root / "docs" / "matrix" / "zoo.json"
    if not path.exists():
        return "*(No committed zoo: run scripts/matrix/build_zoo.sh.)*\n", [f"{path} is missing"]
    zoo = json.loads(path.read_text(encoding="utf-8"))
    head = zoo["headline"]
    wall = f" in {zoo['wallSeconds'] / 60:.0f} minutes" if zoo.get("wallSeconds") else ""
    lines = [
        f"Measured **{zoo['generated']}** on transformers {md_escape(zoo['transformers'])} with the "
        f"posenc-ref conformance suite {zoo['suiteVersion']}, by {md_literal(zoo['command'])}{wall}. "
        f"Every family, with a filter: {_served_link('zoo.html')}; the data: {_served_link('zoo.json')}.",
        "",
        f"**{head['installed']}** families installed; **{head['positional']}** compute positions; "
        f"**{head['run']}** of those are run in their own code ({100 * head['runShare']:.1f}%), "
        f"{head['fullyRun']} with every scheme they compute.",
        "",
        "| verdict | families | meaning |",
        "|---|---:|---|",
        *(f"| {v} | {head['verdicts'][v]} | {md_escape(VERDICTS[v])} |" for v in VERDICTS),
        "",
        "## Families whose code differs",
        "",
        "Each family run in its own code whose verdict is not a pass: every cause once, with its class "
        "and the reproduction (a standalone script without posenc-ref, with the text of an upstream "
        "issue) where the class is a bug.",
        "",
        "| family | verdict | causes |",
        "|---|---|---|",
    ]
    problems = []
    for row in zoo["families"]:
        if row["verdict"] in ("pass", "not run", "no positions"):
            continue
        causes = "<br>".join(_cause_text(c) for c in row["causes"]) or "-"
        lines.append(f"| `{row['family']}` | {md_escape(row['verdict'])} | {causes} |")
        problems += [
            f"zoo: {row['family']}: unexplained failure: {c['note']}"
            for c in row["causes"]
            if c["class"] == "unexplained"
        ]
    return "\n".join(lines) + "\n", problems
