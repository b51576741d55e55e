"""What a run produces: one :class:`CaseResult` per case and dtype, and the :class:`Report`.

A leaf module (standard library only), imported by the runner, the invariants,
the CLI and the pytest plugin.

Statuses of one result: ``pass`` and ``fail`` (compared), ``xfail`` / ``xpass``
(compared, named in the adopter's xfail file), ``skip`` (not compared: outside
the adapter's declared capabilities, or the adapter raised ``Unsupported``),
``beyond-precision`` (compared, but every element's bound under the adapter's
declared precision class is too wide to tell right from wrong: reported with its
error, neither pass nor fail).

Verdicts of a run (:attr:`Report.verdict`, the ``RESULT:`` line and the exit code):

========== ==== ===========================================================
verdict    exit meaning
========== ==== ===========================================================
PASS       0    at least one result was compared, none failed
FAIL       1    a compared result failed (an xfail entry does not count)
(usage)    2    the run could not start: bad adapter, options or golden files
NOTHING    3    nothing was compared, or nothing of a scheme or function the
TESTED          run was asked for (``--only``): never reported as PASS
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

__all__ = [
    "COMPARED",
    "EXIT_CODES",
    "SCHEMES",
    "STATUSES",
    "CaseResult",
    "Report",
]

SCHEMES = ("sinusoidal", "learned", "rope", "t5", "alibi", "kernel_bias", "shaw", "nope", "attention")
STATUSES = ("pass", "fail", "skip", "xfail", "xpass", "beyond-precision")
#: Statuses of results that were compared with the expected value (or error).
COMPARED = ("pass", "fail", "xfail", "xpass")
EXIT_CODES = {"PASS": 0, "FAIL": 1, "NOTHING TESTED": 3}

#: Lines of captured adapter output shown in the text report (the JSON report has all of it).
OUTPUT_LINES = 40


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

    @property
    def failed(self) -> bool:
        return any(r.status == "fail" for r in self.results)

    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.results)

    def uncompared(self) -> list[str]:
        """The whole run (``"everything"``) or the selected schemes/functions with nothing compared."""
        if not any(r.compared for r in self.results):
            return ["everything"]
        return [
            name
            for name in self.selected
            if not any(r.compared for r in self.results if name in (r.scheme, r.function))
        ]

    @property
    def verdict(self) -> str:
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
        os.replace(tmp.name, target)

    def format_table(self, *, failures: int = 20) -> str:
        """The per-scheme summary, the first ``failures`` failures, the adapter's output, the verdict.

        ``tol used``: the largest fraction of its tolerance any compared element used
        (at most 1.00 on a pass); ulp distances, which explode near zero, are in the JSON.
        """

        def fmt(value: float | None, spec: str) -> str:
            return "-" if value is None else format(value, spec)

        name = self.adapter.get("name", "?")
        lines = [
            f"posenc-ref conformance: adapter {name}, {len(self.results)} results in {self.seconds:.1f} s",
        ]
        if self.declared:
            phase, variants = self.declared.get("phase"), self.declared.get("variants") or {}
            phase_text = phase if isinstance(phase, str) else ", ".join(f"{k} {v}" for k, v in phase.items())
            variant_text = ", ".join(f"{k}={v}" for k, v in variants.items()) or "none"
            lines.append(f"declared: phase {phase_text}; variants {variant_text}")
        lines.append("")
        head = (
            f"{'scheme':<12}{'ran':>5}{'pass':>6}{'fail':>6}{'skip':>6}{'xfail':>7}{'beyond':>8}"
            f"{'max abs err f64':>17}{'tol used f64':>14}{'max abs err f32':>17}{'tol used f32':>14}"
        )
        lines += [head, "-" * len(head)]
        for scheme, row in self.by_scheme().items():
            lines.append(
                f"{scheme:<12}{row['compared']:>5}{row['pass'] + row['xpass']:>6}{row['fail']:>6}"
                f"{row['skip']:>6}{row['xfail']:>7}{row['beyond-precision']:>8}"
                f"{fmt(row['max_abs_err_float64'], '.3g'):>17}{fmt(row['tolerance_used_float64'], '.2f'):>14}"
                f"{fmt(row['max_abs_err_float32'], '.3g'):>17}{fmt(row['tolerance_used_float32'], '.2f'):>14}"
            )
        c = self.counts()
        compared = sum(c[s] for s in COMPARED)
        lines += [
            "-" * len(head),
            f"{'total':<12}{compared:>5}{c['pass'] + c['xpass']:>6}{c['fail']:>6}"
            f"{c['skip']:>6}{c['xfail']:>7}{c['beyond-precision']:>8}",
        ]
        bad = [r for r in self.results if r.status == "fail"]
        if bad:
            lines += ["", f"failures ({len(bad)}):"]
            lines += [f"  FAIL {r.result_id}: {r.detail}" for r in bad[:failures]]
            if len(bad) > failures:
                lines.append(f"  ... {len(bad) - failures} more (see the JSON report)")
        if c["xpass"]:
            lines.append(
                f"\n{c['xpass']} xfail entries passed (xpass): "
                + ", ".join(r.result_id for r in self.results if r.status == "xpass")[:400]
            )
        if self.stale_xfails:
            lines.append("\nstale xfail entries (match no result): " + ", ".join(self.stale_xfails))
        grades = self.accuracy()
        if grades:
            lines += [
                "",
                "accuracy against the exact value (worst element over every case, judged or not):",
                f"  {'function':<18}{'dtype':<9}{'phase class':<13}{'worst error':>12}{'at position':>13}"
                f"  {'within':<8}case",
            ]
            lines += [
                f"  {g['function']:<18}{g['dtype']:<9}{g['phase'] or '-':<13}{g['worst']:>12.3g}"
                f"{g['position'] if g['position'] is not None else '-':>13}  {g['within']:<8}{g['case']}"
                for g in grades
            ]
        lines += [f"\nwarning: {w}" for w in self.warnings]
        missing = self.uncompared()
        if missing:
            what = "nothing was compared" if missing == ["everything"] else "nothing was compared for "
            lines.append("\n" + what + ("" if missing == ["everything"] else ", ".join(missing)))
            lines += [f"  skipped {n}x: {reason}" for reason, n in self.skip_reasons()]
        if self.adapter_output.strip():
            shown = self.adapter_output.rstrip("\n").splitlines()
            lines.append(f"\nadapter output ({len(shown)} lines; each shown after '| '):")
            lines += [f"  | {line}" for line in shown[-OUTPUT_LINES:]]
        lines.append("\nRESULT: " + self.verdict)
        return "\n".join(lines)
