"""What a run produces: one :class:`CaseResult` per case and dtype, and the :class:`Report`.

A leaf module (standard library only), imported by the runner, the invariants,
the CLI and the pytest plugin.

Statuses of one result: ``pass`` and ``fail`` (compared), ``xfail`` / ``xpass``
(compared, named in the adopter's xfail file), ``skip`` (not compared: outside
the adapter's declared capabilities, or the adapter raised ``Unsupported``),
``beyond-precision`` (compared, but every element's bound under the adapter's
declared precision class is too wide to tell right from wrong: reported with its
error, neither pass nor fail).

Verdicts of a run (:attr:`Report.verdict`, the start of :meth:`Report.result_line` and the
exit code):

========== ==== ===========================================================
verdict    exit meaning
========== ==== ===========================================================
PASS       0    at least one result was compared, none failed
FAIL       1    a compared result failed (an xfail entry does not count), or
                a function's reach fell short of the declared context
USAGE      2    the run could not start: bad adapter, options or xfail file
ERROR           (the CLI writes this JSON report; the text is one line on stderr)
NOTHING    3    no golden case was compared (invariants alone never count), or
TESTED          nothing of a scheme or function the run was asked for
                (``--only``): never reported as PASS
GOLDEN SET 4    the golden set failed verification (edited, resealed, unsafe),
DAMAGED         before or during the run: never blamed on the implementation
SUITE      5    the suite itself failed (a bug in posenc-ref): the report says so,
ERROR           with the traceback
========== ==== ===========================================================
"""

from __future__ import annotations

import dataclasses
import json
import os
import pathlib
import tempfile
from collections import Counter
from typing import Any

from .report_text import (
    NOT_DIAGNOSED,
    abort_lines,
    accuracy_lines,
    class_text,
    example_lines,
    format_position,
    format_tolerance,
    reach_lines,
    reach_text,
    scheme_lines,
    unexplained_lines,
)

__all__ = [
    "ABORT_VERDICTS",
    "COMPARED",
    "EXIT_CODES",
    "INVARIANT",
    "NOT_DIAGNOSED",
    "SCHEMES",
    "STATUSES",
    "CaseResult",
    "Report",
]

SCHEMES = (
    "sinusoidal",
    "learned",
    "rope",
    "t5",
    "alibi",
    "kernel_bias",
    "shaw",
    "nope",
    "attention",
)
STATUSES = ("pass", "fail", "skip", "xfail", "xpass", "beyond-precision")
#: Statuses of results that were compared with the expected value (or error).
COMPARED = ("pass", "fail", "xfail", "xpass")
EXIT_CODES = {
    "PASS": 0,
    "FAIL": 1,
    "USAGE ERROR": 2,
    "NOTHING TESTED": 3,
    "GOLDEN SET DAMAGED": 4,
    "SUITE ERROR": 5,
}
#: The verdict of a run that did not finish, by :attr:`Report.abort`'s kind (``usage``: the CLI's
#: report of a check that could not start, so an earlier report never stands in for it).
ABORT_VERDICTS = {"usage": "USAGE ERROR", "golden": "GOLDEN SET DAMAGED", "internal": "SUITE ERROR"}
#: The ``function`` of an invariant's result (golden results carry their canonical function).
INVARIANT = "invariant"

#: Lines of captured adapter output shown in the text report (the JSON report has all of it).
OUTPUT_LINES = 40
#: Example results shown per failing function in the text report (the JSON report has all of them).
EXAMPLES = 3
#: Float dtypes in the order the report names them.
FLOAT_DTYPES = ("float32", "float64")


@dataclasses.dataclass
class CaseResult:
    """The outcome of one case (or invariant) at one dtype."""

    id: str
    function: str
    scheme: str
    dtype: str
    status: str
    max_abs_err: float | None = None
    max_ulp: float | None = None
    flags: tuple[str, ...] = ()
    detail: str = ""
    worst_position: int | None = None
    exact: bool | None = None
    phase: str | None = None
    tolerance_used: float | None = None
    #: Failing cases: the known bug shapes that reproduce every judged element (``diagnosis.py``).
    diagnosis: tuple[str, ...] = ()
    #: Failing cases no known shape reproduces: where the error lives (axes, growth with position).
    structure: str = ""
    #: The worst failing elements in the data's own terms (output, axis -> index, position, values).
    where: tuple[dict[str, Any], ...] = ()
    #: Reach-sweep cases: per swept position, the worst error and whether it met the exact tolerance.
    sweep: dict[str, Any] | None = None

    @property
    def result_id(self) -> str:
        return f"{self.id}[{self.dtype}]"

    @property
    def compared(self) -> bool:
        return self.status in COMPARED


@dataclasses.dataclass
class Report:
    """All results of one run, with the adapter's description, stale xfail entries and the selection.

    ``selected``: the schemes or functions the run was asked for (``--only``), each
    of which must have at least one compared result for the run to pass.
    ``adapter_output``: what the adapter printed (captured apart, never mixed into
    the report's own lines).  ``suite``: name and versions for the JSON header.
    """

    adapter: dict[str, Any]
    results: list[CaseResult]
    stale_xfails: list[str] = dataclasses.field(default_factory=list)
    seconds: float = 0.0
    selected: tuple[str, ...] = ()
    adapter_output: str = ""
    suite: dict[str, Any] = dataclasses.field(default_factory=dict)
    warnings: list[str] = dataclasses.field(default_factory=list)
    declared: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: The context length the implementation must serve (``--context``): a reach below it fails.
    context: int | None = None
    #: The absolute tolerance of the second reach (``--reach-atol``).
    reach_atol: float = 1e-3
    #: A run that stopped part-way: ``kind`` (``golden``: a damaged case; ``internal``: a bug of
    #: the suite), ``message`` and ``traceback``.  Its results are those done before it stopped.
    abort: dict[str, str] | None = None

    @property
    def failed(self) -> bool:
        """A compared result failed, or a function's reach falls short of the declared context."""
        return any(r.status == "fail" for r in self.results) or bool(self.reach_shortfalls())

    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.results)

    def uncompared(self) -> list[str]:
        """The whole run (``"everything"``) or the selected schemes/functions with nothing compared.

        Invariants alone never make a run tested: with no golden case compared
        (a golden set with no cases, or every case skipped) the whole run is
        uncompared, however many invariants held.
        """
        if not any(r.compared and r.function != INVARIANT for r in self.results):
            return ["everything"]
        return [
            name
            for name in self.selected
            if not any(r.compared for r in self.results if name in (r.scheme, r.function))
        ]

    @property
    def verdict(self) -> str:
        if self.abort is not None:
            return ABORT_VERDICTS[self.abort["kind"]]
        if self.failed:
            return "FAIL"
        return "NOTHING TESTED" if self.uncompared() else "PASS"

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.verdict]

    def by_scheme(self) -> dict[str, dict[str, Any]]:
        """Per scheme: counts per status, compared count, max abs error and max ulp per float dtype."""
        table: dict[str, dict[str, Any]] = {}
        for scheme in [*SCHEMES, *sorted({r.scheme for r in self.results} - set(SCHEMES))]:
            rows = [r for r in self.results if r.scheme == scheme]
            if not rows:
                continue
            counts = Counter(r.status for r in rows)
            entry: dict[str, Any] = {s: counts.get(s, 0) for s in STATUSES}
            entry["compared"] = sum(counts.get(s, 0) for s in COMPARED)
            for dtype in ("float64", "float32"):
                done = [r for r in rows if r.dtype == dtype and r.max_abs_err is not None]
                errs = [r.max_abs_err for r in done if r.max_abs_err is not None]
                ulps = [r.max_ulp for r in done if r.max_ulp is not None]
                used = [r.tolerance_used for r in done if r.tolerance_used is not None and r.compared]
                entry[f"max_abs_err_{dtype}"] = max(errs) if errs else None
                entry[f"max_ulp_{dtype}"] = max(ulps) if ulps else None
                entry[f"tolerance_used_{dtype}"] = max(used) if used else None
            table[scheme] = entry
        return table

    def accuracy(self) -> list[dict[str, Any]]:
        """Per phase-computing function and dtype: the worst error against the exact value, and where.

        ``within``: ``exact`` when every element of every case met the exact class's
        tolerance, else the adapter's declared class when every judged element met
        its bound, else ``neither``.
        """
        groups: dict[tuple[str, str], list[CaseResult]] = {}
        for r in self.results:
            if r.phase is not None and r.max_abs_err is not None:
                groups.setdefault((r.function, r.dtype), []).append(r)
        grades = []
        for (function, dtype), rows in groups.items():
            worst = max(rows, key=lambda r: r.max_abs_err or 0.0)
            if all(r.exact for r in rows):
                within = "exact"
            elif any(r.status in ("fail", "xfail") for r in rows):
                within = "neither"
            else:
                within = worst.phase or "-"
            grades.append(
                {
                    "function": function,
                    "dtype": dtype,
                    "phase": worst.phase,
                    "worst": worst.max_abs_err,
                    "position": worst.worst_position,
                    "case": worst.id,
                    "within": within,
                }
            )
        return grades

    def reach(self) -> list[dict[str, Any]]:
        """Per function and dtype with reach-sweep results: how far its accuracy holds.

        The sweeps of every case of one function and dtype merge by position (the
        worst error, and every case within the exact class's tolerance).
        ``exactReach`` / ``atolReach``: the largest swept position up to which every
        swept position is within the exact tolerance / has error <= ``reach_atol``
        (``None`` when the smallest already is not).  ``meetsContext``: ``None``
        without a declared context, else whether ``atolReach`` reaches its last
        position, ``context - 1`` (the user-settable tolerance decides, not the
        exact class's).
        """
        groups: dict[tuple[str, str], list[CaseResult]] = {}
        for r in self.results:
            if r.sweep is not None:
                groups.setdefault((r.function, r.dtype), []).append(r)
        rows = []
        for (function, dtype), cases in groups.items():
            merged = _merge_sweeps(cases)
            if not merged:
                continue
            positions = sorted(merged)
            atol_reach = _reach(positions, [merged[p][0] <= self.reach_atol for p in positions])
            worst_at = max(positions, key=lambda p: merged[p][0])
            rows.append(
                {
                    "function": function,
                    "dtype": dtype,
                    "phase": next((r.phase for r in cases if r.phase is not None), None),
                    "exactReach": _reach(positions, [merged[p][1] for p in positions]),
                    "atolReach": atol_reach,
                    "atol": self.reach_atol,
                    "worst": merged[worst_at][0],
                    "worstPosition": worst_at,
                    "swept": positions[-1],
                    "cases": list(dict.fromkeys(r.id for r in cases)),
                    "context": self.context,
                    # a context of N tokens holds positions 0 .. N - 1 (the sweep has every 2^k - 1)
                    "meetsContext": None
                    if self.context is None
                    else atol_reach is not None and atol_reach >= self.context - 1,
                }
            )
        return rows

    def reach_shortfalls(self) -> list[str]:
        """One sentence per function and dtype whose reach is below the declared context (a failure)."""
        out = []
        for row in self.reach():
            if row["meetsContext"] is not False:
                continue
            what = f"{row['dtype']} {row['function']}"
            atol, reach, context = format_tolerance(row["atol"]), row["atolReach"], row["context"]
            if reach is None:
                lead = f"{what} exceeds {atol} already at the smallest swept position"
            else:
                every = " (the largest swept)" if reach == row["swept"] else ""
                lead = (
                    f"{what} stays within {atol} up to position {format_position(reach, decimal=True)}{every}"
                )
            out.append(f"{lead}, below the declared context {context} (positions up to {context - 1})")
        return out

    def failure_groups(self) -> list[dict[str, Any]]:
        """Failing results by function: the diagnoses that explain them, the unexplained rest, examples.

        ``diagnoses``: each hypothesis with the number of failing results it
        reproduces, most first; ``valueFailures``: failing results with wrong values
        (the rest raised, returned for an invalid input or had the wrong shape);
        ``unexplained``: value failures no hypothesis reproduces; ``notDiagnosed``:
        those too large to try the catalogue on; ``structures``: up
        to three distinct descriptions of where their error lives; ``examples``: up
        to ``EXAMPLES`` result ids, located ones first.
        """
        groups: dict[str, list[CaseResult]] = {}
        for r in self.results:
            if r.status == "fail":
                groups.setdefault(r.function, []).append(r)
        out = []
        for function, failing in groups.items():
            hypotheses = Counter(h for r in failing for h in dict.fromkeys(r.diagnosis))
            structures = list(dict.fromkeys(r.structure for r in failing if r.structure and not r.diagnosis))
            located = sorted(failing, key=lambda r: not r.where)
            out.append(
                {
                    "function": function,
                    "failing": len(failing),
                    "diagnoses": [{"hypothesis": h, "results": k} for h, k in hypotheses.most_common()],
                    "unexplained": sum(1 for r in failing if not r.diagnosis and r.where and not _untried(r)),
                    "notDiagnosed": sum(1 for r in failing if _untried(r)),
                    "valueFailures": sum(1 for r in failing if r.diagnosis or r.where),
                    "structures": structures[:3],
                    "examples": [r.result_id for r in located[:EXAMPLES]],
                }
            )
        return out

    def result_line(self) -> str:
        """The last line of the report: ``RESULT:``, the verdict, the class(es) judged and the reach.

        ``RESULT: PASS (product class; float32 rope_cos_sin within 1e-3 up to position
        2^11, 0.885 at 2^24 + 1)``: per float dtype (float32 first) the function that
        reaches least far under ``reach_atol``, and the declared context if any.
        """
        if self.abort is not None:
            return f"RESULT: {self.verdict} ({' '.join(self.abort['message'].split())[:200]})"
        parts = [class_text(self.declared.get("phase"))]
        rows = self.reach()
        for dtype in FLOAT_DTYPES:
            mine = [row for row in rows if row["dtype"] == dtype]
            if mine:
                parts.append(reach_text(min(mine, key=_reach_key)))
        if self.context is not None and rows:
            met = "not met" if self.reach_shortfalls() else "met"
            parts.append(f"context {format_position(self.context)} {met}")
        detail = "; ".join(p for p in parts if p)
        return f"RESULT: {self.verdict}" + (f" ({detail})" if detail else "")

    def skip_reasons(self, limit: int = 5) -> list[tuple[str, int]]:
        """The most frequent reasons for skipped results."""
        return Counter(r.detail or "skipped" for r in self.results if r.status == "skip").most_common(limit)

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "adapter": self.adapter,
            "declared": self.declared,
            "seconds": round(self.seconds, 3),
            "verdict": self.verdict,
            "passed": self.verdict == "PASS",
            "exitCode": self.exit_code,
            "selected": list(self.selected),
            "uncompared": self.uncompared(),
            "counts": dict(self.counts()),
            "schemes": self.by_scheme(),
            "accuracy": self.accuracy(),
            "diagnosis": self.failure_groups(),
            "reach": self.reach(),
            "reachFailures": self.reach_shortfalls(),
            "context": self.context,
            "reachAtol": self.reach_atol,
            "result": self.result_line(),
            "abort": self.abort,
            "staleXfails": self.stale_xfails,
            "warnings": self.warnings,
            "adapterOutput": self.adapter_output,
            "results": [
                {**dataclasses.asdict(r), "flags": list(r.flags), "resultId": r.result_id}
                for r in self.results
            ],
        }

    def write_json(self, path: str | os.PathLike[str]) -> None:
        """Write the JSON report (atomically: a partial file never replaces a good one)."""
        target = pathlib.Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        text = json.dumps(self.to_json(), indent=1) + "\n"
        with tempfile.NamedTemporaryFile("w", encoding="utf-8", dir=target.parent, delete=False) as tmp:
            tmp.write(text)
        # a temporary file is created 0600; the report gets what any new file would (0666 less the umask)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp.name, 0o666 & ~umask)
        os.replace(tmp.name, target)

    def format_table(self, *, failures: int = 20) -> str:
        """The text report: per-scheme table, failures by function, accuracy, reach, output, RESULT line.

        ``failures``: example results listed in all (a few per failing function);
        every result, element location and sweep is in the JSON report.
        """
        name = self.adapter.get("name", "?")
        lines = [
            f"posenc-ref conformance: adapter {name}, {len(self.results)} results in {self.seconds:.1f} s",
        ]
        if self.declared:
            declared = self.declared
            parts = [f"phase {_declared_text(declared.get('phase'))}"]
            parts.append(f"variants {_declared_text(declared.get('variants') or {}) or 'none'}")
            if declared.get("positions", "any") != "any":
                parts.append(f"positions {_declared_text(declared['positions'])}")
            lines.append(f"declared: {'; '.join(parts)}")
        lines += ["", *scheme_lines(self.by_scheme())]
        lines += self._failure_lines(failures)
        c = self.counts()
        if c["xpass"]:
            lines.append(
                f"\n{c['xpass']} xfail entries passed (xpass): "
                + ", ".join(r.result_id for r in self.results if r.status == "xpass")[:400]
            )
        if self.stale_xfails:
            lines.append("\nstale xfail entries (match no result): " + ", ".join(self.stale_xfails))
        lines += accuracy_lines(self.accuracy())
        lines += reach_lines(self.reach(), self.reach_atol)
        lines += [f"\nwarning: {w}" for w in self.warnings]
        missing = self.uncompared()
        if missing:
            what = (
                "no golden case was compared (invariants alone never pass a run)"
                if missing == ["everything"]
                else "nothing was compared for "
            )
            lines.append("\n" + what + ("" if missing == ["everything"] else ", ".join(missing)))
            lines += [f"  skipped {n}x: {reason}" for reason, n in self.skip_reasons()]
        if self.adapter_output.strip():
            shown = self.adapter_output.rstrip("\n").splitlines()
            lines.append(f"\nadapter output ({len(shown)} lines; each shown after '| '):")
            lines += [f"  | {line}" for line in shown[-OUTPUT_LINES:]]
        if self.abort is not None:
            lines += abort_lines(self.abort, len(self.results))
        lines.append("\n" + self.result_line())
        return "\n".join(lines)

    def _failure_lines(self, limit: int) -> list[str]:
        """The FAIL section: per function its diagnosis, then a few example results located in data terms."""
        groups, shortfalls = self.failure_groups(), self.reach_shortfalls()
        if not groups and not shortfalls:
            return []
        failing = sum(g["failing"] for g in groups)
        lines = [
            "",
            f"failures ({_counted(failing, 'result')} in {_counted(len(groups), 'function')}; "
            "every one in the JSON report):",
        ]
        by_id = {r.result_id: r for r in self.results if r.status == "fail"}
        budget = limit
        for group in groups:
            n = group["failing"]
            lines.append(f"  {group['function']}: {n} failing result{'s' if n != 1 else ''}")
            v = group["valueFailures"]
            of = (
                f"{n} failing results"
                if v == n
                else f"{_counted(v, 'result')} with wrong values ({n} failing)"
            )
            lines += [
                f"    consistent with: {d['hypothesis']}, on {d['results']} of {of}"
                for d in group["diagnoses"]
            ]
            lines += unexplained_lines(group)
            shown = group["examples"][: max(budget, 0)]
            budget -= len(shown)
            for rid in shown:
                lines += example_lines(rid, by_id[rid].detail, by_id[rid].where)
            if n > len(shown):
                lines.append(f"    ... {n - len(shown)} more (see the JSON report)")
        if shortfalls:
            lines.append("  reach below the declared context:")
            lines += [f"    FAIL {text}" for text in shortfalls]
        return lines


def _merge_sweeps(cases: list[CaseResult]) -> dict[int, tuple[float, bool]]:
    """Position -> (worst error, every case within the exact tolerance) over the cases' sweeps."""
    merged: dict[int, tuple[float, bool]] = {}
    for r in cases:
        sweep = r.sweep or {}
        for p, err, ok in zip(
            sweep.get("positions", ()), sweep.get("errors", ()), sweep.get("withinExact", ()), strict=True
        ):
            old_err, old_ok = merged.get(int(p), (float("-inf"), True))
            merged[int(p)] = (max(old_err, float(err)), old_ok and bool(ok))
    return merged


def _reach(positions: list[int], within: list[bool]) -> int | None:
    """The largest position with every position up to it within (``None`` if the first is not)."""
    reach = None
    for p, ok in zip(positions, within, strict=True):
        if not ok:
            break
        reach = p
    return reach


def _reach_key(row: dict[str, Any]) -> tuple[int, int]:
    """Sorts reach rows shortest first (``None``, failing at once, shortest of all)."""
    return (
        -1 if row["atolReach"] is None else row["atolReach"],
        -1 if row["exactReach"] is None else row["exactReach"],
    )


def _counted(n: int, noun: str) -> str:
    """``1 result``, ``3 results``."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _untried(result: CaseResult) -> bool:
    """Whether the diagnosis did not try the catalogue on ``result`` (its outputs were too large)."""
    return result.structure.startswith(NOT_DIAGNOSED)


def _declared_text(value: Any) -> str:
    """A declaration for the report's header: ``x``, or ``key=x, ...`` (nested per function in braces)."""
    if not isinstance(value, dict):
        return str(value)
    return ", ".join(
        f"{k}={{{_declared_text(v)}}}" if isinstance(v, dict) else f"{k}={v}" for k, v in value.items()
    )
