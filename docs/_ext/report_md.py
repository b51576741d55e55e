"""What a ``posenc-ref check`` run found, in a few sentences of MyST Markdown, from its JSON report.

The guide's pages show real reports (``docs/_ext/posenc_docs.py`` runs the checks when the
site is built) and say, beside each, what the report found: the verdict, how many results
passed and failed, and for each function with failures how many, in which dtypes, in which
cases, the flags those cases share, the largest error per dtype, the positions of the worst
elements and the diagnosis.  :func:`summary` writes that from the report itself, so the words
beside a report cannot say something else than the report.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from mdtext import md_escape, md_literal

from posenc_ref_conformance.report_text import format_number, format_position

__all__ = ["failure_groups", "summary"]

#: Case ids listed for one function before the rest are counted instead.
MAX_IDS = 6


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _series(items: Sequence[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    if len(items) <= 1:
        return "".join(items)
    return f"{', '.join(items[:-1])} and {items[-1]}"


def _unique(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def _compared(results: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return [r for r in results if r["status"] in ("pass", "fail", "xfail", "xpass")]


def failure_groups(report: Mapping[str, Any]) -> dict[str, list[Mapping[str, Any]]]:
    """The failing results of ``report``, by function, in the order the report lists them."""
    groups: dict[str, list[Mapping[str, Any]]] = {}
    for result in report["results"]:
        if result["status"] == "fail":
            groups.setdefault(result["function"], []).append(result)
    return groups


def _shared_flags(results: Sequence[Mapping[str, Any]]) -> list[str]:
    """The rationale flags every one of ``results`` has, in the first one's order."""
    common = set(results[0]["flags"]).intersection(*(r["flags"] for r in results[1:]))
    return [f for f in results[0]["flags"] if f in common]


def _ids(results: Sequence[Mapping[str, Any]]) -> str:
    ids = _unique(r["id"] for r in results)
    shown = [md_literal(i) for i in ids[:MAX_IDS]]
    if len(ids) > MAX_IDS:
        shown.append(f"{len(ids) - MAX_IDS} more")
    return _series(shown)


def _errors(results: Sequence[Mapping[str, Any]]) -> str:
    """``largest error 2.2e-09 in float64, 4.08 in float32``, over the results that have one."""
    worst: dict[str, float] = {}
    for r in results:
        if r["max_abs_err"] is not None:
            worst[r["dtype"]] = max(worst.get(r["dtype"], 0.0), r["max_abs_err"])
    parts = [f"{format_number(value)} in {dtype}" for dtype, value in worst.items()]
    return f"largest error {_series(parts)}" if parts else ""


def _positions(results: Sequence[Mapping[str, Any]]) -> str:
    """Where the worst elements are: ``worst elements at positions 2^20 + 1 to 2^40 + 1``."""
    found = sorted({r["worst_position"] for r in results if r["worst_position"] is not None})
    if not found:
        return ""
    if len(found) == 1:
        return f"worst element at position {md_escape(format_position(found[0]))}"
    low, high = (md_escape(format_position(p)) for p in (found[0], found[-1]))
    return f"worst elements at positions {low} to {high}"


def _diagnosis(function: str, group: Mapping[str, Any] | None) -> str:
    """The report's diagnosis of one function: each known bug shape and how many results it explains."""
    if function == "invariant":
        return "Invariants are not diagnosed; the report gives each one's values."
    if not group or not group["valueFailures"]:
        return "None has wrong values to diagnose: each raised, had the wrong shape or took an invalid input."
    if not group["diagnoses"]:
        return "No known bug shape reproduces them."
    valued = group["valueFailures"]
    of = f"{valued}" if valued == group["failing"] else f"the {valued} with wrong values"
    shapes = [f"{md_escape(d['hypothesis'])} ({d['results']} of {of})" for d in group["diagnoses"]]
    return f"Consistent with: {'; '.join(shapes)}."


def _flagged(results: Sequence[Mapping[str, Any]]) -> str:
    """``, all in cases flagged `A` and `B``` for the flags every one of ``results`` has."""
    flags = _series([md_literal(f) for f in _shared_flags(results)])
    if not flags:
        return ""
    return f", in a case flagged {flags}" if len(results) == 1 else f", all in cases flagged {flags}"


def _function_line(
    function: str, results: Sequence[Mapping[str, Any]], group: Mapping[str, Any] | None
) -> str:
    """One list item: a function's failing results, where they are, and their diagnosis."""
    dtypes = _unique(r["dtype"] for r in results)
    head = f"- {md_literal(function)}: {_plural(len(results), 'failing result')}, in {_series(dtypes)}"
    facts = [part for part in (_errors(results), _positions(results)) if part]
    detail = f"; {'; '.join(facts)}" if facts else ""
    return f"{head}{_flagged(results)}: {_ids(results)}{detail}. {_diagnosis(function, group)}"


def _verdict_line(report: Mapping[str, Any]) -> str:
    """The verdict, its exit status and the counts."""
    compared = _compared(report["results"])
    counts = report["counts"]
    failed = counts.get("fail", 0)
    text = (
        f"The run's verdict is {md_literal(report['verdict'])} (exit status {report['exitCode']}): "
        f"{_plural(len(compared), 'result')} compared, {counts.get('pass', 0)} passed, "
        f"{'none' if not failed else failed} failed"
    )
    if counts.get("xfail"):
        text += f", {counts['xfail']} known failures"
    return f"{text}; {counts.get('skip', 0)} skipped."


def _beyond_line(report: Mapping[str, Any]) -> str:
    """The results not judged (``beyond-precision``), named."""
    beyond = [r for r in report["results"] if r["status"] == "beyond-precision"]
    if not beyond:
        return ""
    ids = _series([md_literal(r["resultId"]) for r in beyond])
    return f"Not judged (`beyond`): {_plural(len(beyond), 'result')}{_flagged(beyond)}: {ids}."


def _clean_line(report: Mapping[str, Any], failing: Mapping[str, Any]) -> str:
    """The schemes that compared results and had no failure, with their counts."""
    clean = [
        f"{md_literal(name)} ({row.get('pass', 0)} of {row['compared']})"
        for name, row in report["schemes"].items()
        if row["compared"] and not row.get("fail")
    ]
    if not clean:
        return ""
    lead = "Passed with no failure" if failing else "Passed"
    return f"{lead}: {_series(clean)}."


def summary(report: Mapping[str, Any]) -> str:
    """What the run of ``report`` (a ``check --json`` report) found, as Markdown paragraphs and a list."""
    failing = failure_groups(report)
    diagnosed = {g["function"]: g for g in report["diagnosis"]}
    paragraphs = [_verdict_line(report)]
    if failing:
        lines = [_function_line(f, rs, diagnosed.get(f)) for f, rs in failing.items()]
        paragraphs.append("The failures, by function:\n\n" + "\n".join(lines))
    paragraphs += [p for p in (_clean_line(report, failing), _beyond_line(report)) if p]
    return "\n\n".join(paragraphs) + "\n"
