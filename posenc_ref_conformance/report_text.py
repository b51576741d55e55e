"""The text report's pieces: positions, numbers, aligned columns, element locations, clean text.

A leaf module (standard library only): :mod:`.results` gathers the report's
plain data (per-scheme counts, accuracy, reach rows, failure groups) and the
section functions here turn it into lines; :mod:`.isolation` cleans what an
adapter printed with :func:`strip_controls`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "NOT_DIAGNOSED",
    "abort_lines",
    "accuracy_lines",
    "class_text",
    "columns",
    "example_lines",
    "format_number",
    "format_position",
    "format_reach",
    "format_tolerance",
    "format_used",
    "format_where",
    "reach_lines",
    "reach_text",
    "scheme_lines",
    "strip_controls",
    "unexplained_lines",
]

#: Powers of two from 2**MIN_POWER up (and their neighbours) are written ``2^k``, ``2^k - 1``, ``2^k + 1``.
MIN_POWER = 8
#: Spaces between two columns of a table, at the least.
GAP = 2

# CSI (colours, cursor moves), OSC (window titles, hyperlinks; ended by BEL or ST), character-set
# selections, other two-byte escapes, then every C0 control but tab and newline, DEL and the C1 controls.
_CONTROLS = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[ -/]+[0-~]"
    r"|\x1b[@-Z\\-_]"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
)
_POSITION_AXES = ("position", "positions", "seq", "token", "query", "key")


def strip_controls(text: str) -> str:
    """``text`` without terminal control sequences (ANSI CSI/OSC escapes, C0/C1 controls).

    Tab and newline stay; a carriage return (a progress bar redrawing its line)
    becomes a newline, so what it overwrote is kept rather than run together.
    """
    return _CONTROLS.sub("", text.replace("\r\n", "\n").replace("\r", "\n"))


def format_position(position: int | None, *, decimal: bool = False) -> str:
    """A position as a person reads it: ``2^24 + 1`` near a power of two, else the integer.

    Powers of two from ``2^8`` up and their neighbours are written as powers
    (``2^11``, ``2^24 - 1``, ``2^24 + 1``); ``decimal`` adds the integer
    (``2^24 + 1 = 16777217``).  ``None`` is ``-``.
    """
    if position is None:
        return "-"
    for offset, suffix in ((0, ""), (-1, " + 1"), (1, " - 1")):
        base = position + offset
        if base >= 1 << MIN_POWER and base & (base - 1) == 0:
            text = f"2^{base.bit_length() - 1}{suffix}"
            return f"{text} = {position}" if decimal else text
    return str(position)


def format_reach(position: int | None) -> str:
    """A reach as the report writes it: the position, or ``none`` when not even the smallest held."""
    return "none" if position is None else format_position(position)


def format_number(value: float | None, spec: str = ".3g") -> str:
    """``value`` in ``spec``; ``None`` is ``-``."""
    return "-" if value is None else format(value, spec)


def format_used(value: float | None) -> str:
    """A fraction of the tolerance: two decimals up to 1000 (``0.42``, ``1.73``), then ``3.36e+15``."""
    if value is None:
        return "-"
    return format(value, ".2f") if abs(value) < 1000 else format(value, ".3g")


def format_tolerance(value: float) -> str:
    """A tolerance as written by hand: ``1e-3``, ``2.5e-7``, ``0.05``, ``10``."""
    if value == 0 or 1e-2 <= abs(value) < 1e4:
        return format(value, "g")
    mantissa, exponent = format(value, ".3e").split("e")
    return f"{mantissa.rstrip('0').rstrip('.')}e{int(exponent)}"


def columns(header: Sequence[str], rows: Sequence[Sequence[str] | None], *, right: str = "") -> list[str]:
    """Aligned lines: each column as wide as its widest cell (header included), ``GAP`` spaces apart.

    ``rows`` hold text cells; ``None`` stands for a rule (a line of ``-``) there,
    and one is drawn under the header.  ``right``: one character per column,
    ``r`` for right-aligned (numbers), anything else left-aligned.
    """
    cells = [list(header), *(list(r) for r in rows if r is not None)]
    count = len(header)
    widths = [max(len(row[i]) for row in cells if i < len(row)) for i in range(count)]

    def line(row: Sequence[str]) -> str:
        parts = [
            cell.rjust(widths[i]) if right[i : i + 1] == "r" else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ]
        return (" " * GAP).join(parts).rstrip()

    rule = "-" * (sum(widths) + GAP * (count - 1))
    return [line(header), rule, *(rule if r is None else line(r) for r in rows)]


def _axis_text(name: str, index: int, position: int | None, named: list[bool]) -> str:
    if position is not None and not named[0] and name.lower() in _POSITION_AXES:
        named[0] = True
        return f"{name} {format_position(position, decimal=True)} (index {index})"
    return f"{name} {index}"


def format_where(entry: dict[str, Any]) -> str:
    """One failing element in the data's own terms.

    ``cos at batch 0, position 2^24 + 1 = 16777217 (index 5), channel 12: 0.123 vs
    0.456, error 0.333, allowed 1e-6`` (actual first, then the expected value).
    """
    position = entry.get("position")
    named = [False]
    axes = [_axis_text(str(k), int(v), position, named) for k, v in (entry.get("at") or {}).items()]
    if position is not None and not named[0]:
        axes.append(f"position {format_position(position, decimal=True)}")
    place = f"{entry.get('output', 'output')} at {', '.join(axes)}" if axes else str(entry.get("output"))
    values = f"{format_number(entry.get('actual'), '.6g')} vs {format_number(entry.get('expected'), '.6g')}"
    allowed = entry.get("allowed")
    limit = "" if allowed is None else f", allowed {format_tolerance(float(allowed))}"
    return f"{place}: {values}, error {format_number(entry.get('error'))}{limit}"


# --- sections of the text report (from the Report's plain data) ----------------------------------------


def class_text(phase: str | dict[str, str] | None) -> str:
    """``product class``, or ``classes: rope_cos_sin product, default exact`` for a per-function dict."""
    if not phase:
        return ""
    if isinstance(phase, str):
        return f"{phase} class"
    return "classes: " + ", ".join(f"{k} {v}" for k, v in phase.items())


def reach_text(row: dict[str, Any]) -> str:
    """``float32 rope_cos_sin within 1e-3 up to position 2^11, 0.885 at 2^24 + 1``."""
    what, atol = f"{row['dtype']} {row['function']}", format_tolerance(row["atol"])
    worst = f"{format_number(row['worst'])} at {format_position(row['worstPosition'])}"
    if row["atolReach"] is None:
        return f"{what} beyond {atol} from the smallest swept position, {worst}"
    return f"{what} within {atol} up to position {format_position(row['atolReach'])}, {worst}"


def scheme_lines(table: dict[str, dict[str, Any]]) -> list[str]:
    """The per-scheme table (widths from the content), a totals row and its legend."""
    counts = ("compared", "pass", "fail", "skip", "xfail", "beyond-precision")
    values = [f"{m}_{d}" for d in ("float64", "float32") for m in ("max_abs_err", "tolerance_used")]

    def cells(name: str, row: dict[str, Any]) -> list[str]:
        numbers = [row["compared"], row["pass"] + row["xpass"], *(row[k] for k in counts[2:])]
        shown = [format_used(row[k]) if "tolerance" in k else format_number(row[k]) for k in values]
        return [name, *(str(n) for n in numbers), *shown]

    total: dict[str, Any] = {k: sum(row[k] for row in table.values()) for k in (*counts, "xpass")}
    for key in values:
        present = [row[key] for row in table.values() if row[key] is not None]
        total[key] = max(present) if present else None
    header = ["scheme", "ran", "pass", "fail", "skip", "xfail", "beyond"]
    header += ["max abs err f64", "tol used f64", "max abs err f32", "tol used f32"]
    rows: list[list[str] | None] = [cells(name, row) for name, row in table.items()]
    lines = columns(header, [*rows, None, cells("total", total)], right="lrrrrrrrrrr")
    return [
        *lines,
        "ran: results compared.  beyond: results whose every element has a precision-class bound too",
        "wide to tell right from wrong (not judged: neither pass nor fail).  tol used: the largest fraction",
        "of its tolerance any judged element used (<= 1 on a pass; ulp distances are in the JSON report).",
    ]


#: How a failing result's ``structure`` starts when the diagnosis did not try the catalogue (too large).
NOT_DIAGNOSED = "not diagnosed"


def unexplained_lines(group: dict[str, Any]) -> list[str]:
    """What is said of a function's failing results no known bug shape reproduces."""
    n, m, structures = group.get("valueFailures", group["failing"]), group["unexplained"], group["structures"]
    untried = group.get("notDiagnosed", 0)
    head = [f"    {untried} of {n} too large to diagnose (see their details)"] if untried else []
    structures = [t for t in structures if not t.startswith(NOT_DIAGNOSED)]
    if not m or not (structures or group["diagnoses"]):
        return head  # nothing was diagnosed (invariants, invalid inputs, shapes): the details speak
    which = "it" if m == n else f"{m} of the {n} with wrong values"
    if not structures:
        return [*head, f"    no known bug shape reproduces {which}"]
    return [*head, f"    no known bug shape reproduces {which}: {structures[0]}"] + [
        f"      also: {text}" for text in structures[1:]
    ]


def example_lines(result_id: str, detail: str, where: Sequence[dict[str, Any]]) -> list[str]:
    """One failing result of the FAIL section: its located elements, or its detail when it has none."""
    if not where:
        return [f"    FAIL {result_id}: {detail}"]
    return [f"    FAIL {result_id}", *(f"      {format_where(entry)}" for entry in where)]


def accuracy_lines(grades: list[dict[str, Any]]) -> list[str]:
    """The accuracy table against the exact value, and its legend."""
    if not grades:
        return []
    header = ["function", "dtype", "phase class", "worst error", "at position", "within", "case"]
    rows: list[list[str] | None] = [
        [
            g["function"],
            g["dtype"],
            g["phase"] or "-",
            format_number(g["worst"]),
            format_position(g["position"]),
            g["within"],
            g["case"],
        ]
        for g in grades
    ]
    return [
        "",
        "accuracy against the exact value (worst element over every case, judged or not):",
        *(f"  {line}" for line in columns(header, rows, right="lllrrll")),
        "within: exact (every element met the exact class's tolerance), the declared class (every judged",
        "element met its bound, some not the exact tolerance) or neither (a judged element failed)",
    ]


def reach_lines(rows: list[dict[str, Any]], atol: float) -> list[str]:
    """The reach table, and its legend."""
    if not rows:
        return []

    def context(row: dict[str, Any]) -> str:
        if row["context"] is None:
            return "-"
        return f"{format_position(row['context'])} {'met' if row['meetsContext'] else 'NOT met'}"

    tol = format_tolerance(atol)
    header = ["function", "dtype", "class", "within exact up to", f"within {tol} up to"]
    header += ["worst error", "at position", "context"]
    cells: list[list[str] | None] = [
        [
            row["function"],
            row["dtype"],
            row["phase"] or "-",
            format_reach(row["exactReach"]),
            format_reach(row["atolReach"]),
            format_number(row["worst"]),
            format_position(row["worstPosition"]),
            context(row),
        ]
        for row in rows
    ]
    ends = {(r["dtype"], r["swept"]): None for r in rows}
    swept = ", ".join(f"{format_position(end)} ({dtype})" for dtype, end in ends)
    return [
        "",
        "reach: the largest position each function stays within tolerance:",
        *(f"  {line}" for line in columns(header, cells, right="lllrrrrl")),
        f"up to: every swept position up to it met the bound (none: not even the smallest); swept to {swept}",
    ]


def abort_lines(abort: dict[str, str], done: int) -> list[str]:
    """Why a run stopped part-way, what that means for the verdict, and what to do."""
    if abort["kind"] == "golden":
        head = "the run stopped: a golden case is damaged (not the implementation's failure)"
        remedy = "export or generate the golden set again, or reinstall posenc-ref for the shipped one"
    elif abort["kind"] == "usage":
        head = "the run could not start (a usage error)"
        remedy = "see posenc-ref check --help"
    else:
        head = "the run stopped: the suite itself failed (a bug in posenc-ref, not a verdict)"
        remedy = "please report it with the traceback below"
    lines = [f"\n{head}", f"  {strip_controls(abort['message'])}", f"  results before it stopped: {done}"]
    lines.append(f"  {remedy}")
    lines += [f"  | {line}" for line in strip_controls(abort.get("traceback", "")).rstrip().splitlines()]
    return lines
