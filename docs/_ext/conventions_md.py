"""The "who uses which convention" overview, made at build time from two sources of data.

1. **The family pages' implementation tables.**  A table on a family page that follows a
   ``% conventions: LABEL`` comment line has one row per real implementation; its first
   column names the implementation and its last column says how to select that behaviour
   here.  LABEL names the topic in the overview, linked to the section of the table.
   Those rows are collected, in page order, into one table (cells copied as written, so
   the overview cannot drift from the pages).
2. **The library's convention tuples and the golden vectors.**  For every tuple of
   accepted values (``SINUSOIDAL_CONVENTIONS``, ``LAYOUTS``, ``SCALING_TYPES``, ...), each
   value with the number of golden cases that use it, counted in the golden files.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

from mdtext import md_literal

__all__ = ["OPTIONS", "convention_rows", "overview", "split_row"]

MARKER = re.compile(r"^% conventions: (?P<label>.+)$")

#: (library tuple, the function and argument it is for, golden function(s), key in their inputs).
OPTIONS: list[tuple[str, str, tuple[str, ...], str]] = [
    ("SINUSOIDAL_CONVENTIONS", "sinusoidal(convention=)", ("sinusoidal",), "convention"),
    ("LEARNED_OFFSETS", "learned(offset=)", ("learned",), "offset"),
    ("LAYOUTS", "rope_cos_sin / apply_rope (layout=)", ("rope_cos_sin", "apply_rope", "rope"), "layout"),
    ("SCALING_TYPES", "rope_frequencies(scaling={rope_type})", ("rope_frequencies",), "scaling.rope_type"),
    (
        "MROPE_SECTION_ORDERS",
        "mrope_angles / mrope_slot_components (section_order=)",
        ("mrope_angles",),
        "section_order",
    ),
    ("ATTN_SCALE_CONVENTIONS", "llama4_attn_scale(convention=)", ("llama4_attn_scale",), "convention"),
    ("ROPE_2D_CONVENTIONS", "rope_2d_cos_sin(convention=)", ("rope_2d_cos_sin",), "convention"),
    ("SHAW_CONVENTIONS", "shaw_index(convention=)", ("shaw_index",), "convention"),
    ("ALIBI_FORMS", "alibi_bias(form=)", ("alibi_bias",), "form"),
    ("KERPLE_KINDS", "kerple_bias(kind=)", (), ""),
    ("DECOMPOSED_COORDS", "decomposed_rel_pos(coords=)", ("decomposed_rel_pos",), "coords"),
    (
        "REL_SINUSOID_CONVENTIONS",
        "rel_sinusoid_positions / rel_sinusoid_table (convention=)",
        ("rel_sinusoid_positions", "rel_sinusoid_table"),
        "convention",
    ),
    (
        "REL_SHIFT_CONVENTIONS",
        "rel_shift / rel_attention_scores (convention=)",
        ("rel_shift", "rel_attention_scores"),
        "convention",
    ),
    (
        "DEBERTA_ARITHMETIC",
        "deberta_bucket / deberta_relative_index (arithmetic=)",
        ("deberta_bucket", "deberta_relative_index"),
        "arithmetic",
    ),
    ("DEBERTA_TERMS", "deberta_relative_index(term=)", ("deberta_relative_index",), "term"),
    ("RESIZE_MODES", "grid_resize / patch_grid_resize (mode=)", ("grid_resize", "patch_grid_resize"), "mode"),
]
_FAMILY_PAGES = (
    "absolute",
    "rope",
    "relative",
    "window-bias",
    "transformer-xl",
    "deberta",
    "grid-resize",
    "nope",
)


def split_row(line: str) -> list[str]:
    """The cells of a Markdown table row (``\\|`` is part of a cell, not a separator)."""
    cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
    return [cell.strip() for cell in cells]


def convention_rows(page: Path) -> list[tuple[str, str, list[str], list[list[str]]]]:
    """``(label, section heading, header cells, body rows)`` of each marked table of ``page``."""
    tables = []
    heading = ""
    lines = page.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
        marker = MARKER.match(line.strip())
        if marker:
            i += 1
            while i < len(lines) and not lines[i].startswith("|"):
                i += 1
            block = []
            while i < len(lines) and lines[i].startswith("|"):
                block.append(lines[i])
                i += 1
            if len(block) >= 3:
                rows = [split_row(row) for row in block[2:]]
                tables.append((marker.group("label"), heading, split_row(block[0]), rows))
            continue
        i += 1
    return tables


def overview(root: Path, docs: Path) -> tuple[str, list[str]]:
    """The overview's Markdown, and problems to report (a marked table with a wrong header)."""
    problems = []
    out = ["| topic | implementation | select it here |", "|---|---|---|"]
    for name in _FAMILY_PAGES:
        page = docs / "families" / f"{name}.md"
        if not page.is_file():
            continue
        for label, heading, header, rows in convention_rows(page):
            if "select" not in header[-1].lower():
                problems.append(f"{page.name}: table {label!r} has no 'Select here' last column")
                continue
            link = f"[{label}](families/{name}.md#{_slug(heading)})"
            for k, row in enumerate(rows):
                out.append(f"| {link if k == 0 else ''} | {row[0]} | {row[-1]} |")
    text = "\n".join(out) + "\n"
    text += "\n## Every accepted value, and its golden cases\n\n" + _values_table(root)
    return text, problems


def _values_table(root: Path) -> str:
    import posenc_ref

    counts = _golden_counts(root)
    out = ["| option | accepted values (golden cases) |", "|---|---|"]
    for tuple_name, where, functions, key in OPTIONS:
        values = getattr(posenc_ref, tuple_name, None)
        if values is None:
            continue
        cells = []
        for value in values:
            cell = md_literal(json.dumps(value), in_table=True)
            if functions:
                cell += f" ({sum(counts.get((f, key, value), 0) for f in functions)})"
            cells.append(cell)
        suffix = "" if functions else " (no golden file: checked by the library's tests)"
        option = f"{md_literal(where, in_table=True)}: {{data}}`posenc_ref.{tuple_name}`"
        out.append(f"| {option} | {', '.join(cells)}{suffix} |")
    return "\n".join(out) + "\n"


def _golden_counts(root: Path) -> Counter[tuple[str, str, str]]:
    counts: Counter[tuple[str, str, str]] = Counter()
    for path in sorted((root / "posenc_ref_conformance" / "golden" / "vectors").glob("*.json")):
        doc = json.loads(path.read_bytes())
        for case in doc.get("cases", []):
            for key in {k for _, _, _, k in OPTIONS if k}:
                value = _lookup(case.get("inputs", {}), key)
                if key == "scaling.rope_type" and doc.get("function") == "rope_frequencies":
                    scaling = case.get("inputs", {}).get("scaling")
                    value = "default" if scaling is None else scaling.get("rope_type", scaling.get("type"))
                if isinstance(value, str):
                    counts[(doc.get("function", ""), key, value)] += 1
    return counts


def _lookup(node: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(node, dict):
            return None
        node = node.get(part)
    return node


def _slug(heading: str) -> str:
    """The anchor MyST gives a heading (``myst_heading_anchors``): GitHub's slug rule."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower().replace("`", ""))
    return text.replace(" ", "-")
