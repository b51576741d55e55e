"""Run the suite against an adapter: golden cases and invariants -> a :class:`Report`.

Each golden case runs once per dtype the adapter declares (float outputs) or
once (integer and boolean outputs).  A failing adapter call (an exception, a
wrong shape or dtype, NaN) is that case's failure and the run goes on.  Known
failures come from the adopter's xfail file: one case id or id prefix per line,
``#`` comments; entries that match nothing are reported as stale.
"""

from __future__ import annotations

import dataclasses
import json
import pathlib
import platform
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from . import golden
from .adapters.base import Adapter
from .compare import Mismatch, Verdict, compare_output
from .golden import _format

__all__ = [
    "SCHEMES",
    "CaseResult",
    "Report",
    "load_xfails",
    "run",
]

SCHEMES = ("sinusoidal", "learned", "rope", "t5", "alibi", "shaw", "nope", "attention")
STATUSES = ("pass", "fail", "skip", "xfail", "xpass")

_OPTION_CAPABILITY = {
    "layout": "layouts",
    "form": "alibi_forms",
    "convention": None,  # function-dependent, see _needs
    "offset": "learned_offsets",
}


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

    @property
    def result_id(self) -> str:
        return f"{self.id}[{self.dtype}]"


@dataclasses.dataclass
class Report:
    """All results of one run, with the adapter's description and stale xfail entries."""

    adapter: dict[str, Any]
    results: list[CaseResult]
    stale_xfails: list[str] = dataclasses.field(default_factory=list)
    seconds: float = 0.0

    @property
    def failed(self) -> bool:
        return any(r.status == "fail" for r in self.results)

    def counts(self) -> Counter[str]:
        return Counter(r.status for r in self.results)

    def by_scheme(self) -> dict[str, dict[str, Any]]:
        """Per scheme: counts per status; max abs error and max ulp per float dtype (compared results)."""
        table: dict[str, dict[str, Any]] = {}
        for scheme in [*SCHEMES, *sorted({r.scheme for r in self.results} - set(SCHEMES))]:
            rows = [r for r in self.results if r.scheme == scheme]
            if not rows:
                continue
            counts = Counter(r.status for r in rows)
            entry: dict[str, Any] = {s: counts.get(s, 0) for s in STATUSES}
            for dtype in ("float64", "float32"):
                done = [r for r in rows if r.dtype == dtype and r.status != "skip"]
                errs = [r.max_abs_err for r in done if r.max_abs_err is not None]
                ulps = [r.max_ulp for r in done if r.max_ulp is not None]
                entry[f"max_abs_err_{dtype}"] = max(errs) if errs else None
                entry[f"max_ulp_{dtype}"] = max(ulps) if ulps else None
            table[scheme] = entry
        return table

    def to_json(self) -> dict[str, Any]:
        from . import __version__

        return {
            "suite": {
                "name": "posenc-ref conformance",
                "version": __version__,
                "goldenFormatVersion": golden.load_index()["formatVersion"],
            },
            "adapter": self.adapter,
            "platform": {"python": platform.python_version(), "numpy": np.__version__},
            "seconds": round(self.seconds, 3),
            "passed": not self.failed,
            "counts": dict(self.counts()),
            "schemes": self.by_scheme(),
            "staleXfails": self.stale_xfails,
            "results": [
                {**dataclasses.asdict(r), "flags": list(r.flags), "resultId": r.result_id}
                for r in self.results
            ],
        }

    def write_json(self, path: str | pathlib.Path) -> None:
        target = pathlib.Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(self.to_json(), indent=1) + "\n", encoding="utf-8")

    def format_table(self, *, failures: int = 20) -> str:
        """The per-scheme summary table, followed by the first ``failures`` failures."""

        def fmt(value: float | None, spec: str) -> str:
            return "-" if value is None else format(value, spec)

        name = self.adapter.get("name", "?")
        lines = [
            f"posenc-ref conformance: adapter {name}, {len(self.results)} results in {self.seconds:.1f} s",
            "",
        ]
        head = (
            f"{'scheme':<12}{'pass':>6}{'fail':>6}{'skip':>6}{'xfail':>7}"
            f"{'max abs err f64':>17}{'max ulp f64':>13}{'max abs err f32':>17}{'max ulp f32':>13}"
        )
        lines += [head, "-" * len(head)]
        for scheme, row in self.by_scheme().items():
            lines.append(
                f"{scheme:<12}{row['pass'] + row['xpass']:>6}{row['fail']:>6}{row['skip']:>6}"
                f"{row['xfail']:>7}"
                f"{fmt(row['max_abs_err_float64'], '.3g'):>17}{fmt(row['max_ulp_float64'], '.4g'):>13}"
                f"{fmt(row['max_abs_err_float32'], '.3g'):>17}{fmt(row['max_ulp_float32'], '.4g'):>13}"
            )
        c = self.counts()
        lines += [
            "-" * len(head),
            f"{'total':<12}{c['pass'] + c['xpass']:>6}{c['fail']:>6}{c['skip']:>6}{c['xfail']:>7}",
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
        lines.append("\nRESULT: " + ("FAIL" if self.failed else "PASS"))
        return "\n".join(lines)


# --- xfail files ---------------------------------------------------------------------------------------


def load_xfails(path: str | pathlib.Path) -> list[str]:
    """Ids or id prefixes, one per line; ``#`` starts a comment; blank lines ignored."""
    entries = []
    for line in pathlib.Path(path).read_text(encoding="utf-8").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            entries.append(entry)
    return entries


def _xfail_match(entry: str, result: CaseResult) -> bool:
    rid = result.result_id
    if rid == entry or result.id == entry or (entry.endswith("/") and rid.startswith(entry)):
        return True
    return rid.startswith(entry) and rid[len(entry)] in "/["


# --- golden cases --------------------------------------------------------------------------------------


def _needs(adapter: Adapter, function: str, inputs: dict[str, Any]) -> str | None:
    """Why the adapter cannot run these inputs (declared capabilities), or None."""
    caps = adapter.capabilities
    checks = [
        ("layout", caps.layouts),
        ("form", caps.alibi_forms),
        ("offset", caps.learned_offsets),
    ]
    if function == "sinusoidal":
        checks.append(("convention", caps.sinusoidal_conventions))
    if function == "shaw_index":
        checks.append(("convention", caps.shaw_conventions))
    for key, allowed in checks:
        value = inputs.get(key)
        if isinstance(value, str) and value not in allowed and value in _known_values(key, function):
            return f"{key} {value!r} not supported"
    scaling = inputs.get("scaling")
    if isinstance(scaling, dict):
        kind = scaling.get("rope_type", scaling.get("type", "default"))
        if kind not in caps.scaling_types and kind in _known_values("rope_type", function):
            return f"scaling type {kind!r} not supported"
    return None


def _known_values(key: str, function: str) -> tuple[str, ...]:
    from .adapters import base

    return {
        "layout": base.LAYOUTS,
        "form": base.ALIBI_FORMS,
        "offset": base.LEARNED_OFFSETS,
        "convention": base.SINUSOIDAL_CONVENTIONS if function == "sinusoidal" else base.SHAW_CONVENTIONS,
        "rope_type": base.SCALING_TYPES,
    }[key]


def _decode_inputs(case: dict[str, Any], cast: Sequence[str], dtype: str | None) -> dict[str, Any]:
    out = {}
    for name, value in case["inputs"].items():
        if isinstance(value, dict) and "dtype" in value and "shape" in value:
            array = _format.decode(value)
            if name in cast and dtype is not None and array.dtype == np.float64:
                array = array.astype(dtype)
            if array.shape == () and array.dtype == np.float64 and name not in cast:
                out[name] = float(array)  # scalar parameters (attention_factor) as Python floats
            else:
                out[name] = array
        else:
            out[name] = value
    return out


def _call(
    adapter: Adapter, function: str, inputs: dict[str, Any], dtype: str | None, takes_dtype: bool
) -> Any:
    method = getattr(adapter, function)
    args = dict(inputs)
    if takes_dtype:
        args["dtype"] = dtype
    positional = {
        "sinusoidal": ("positions", "dim"),
        "learned": ("table", "positions"),
        "interpolate_table": ("table", "new_length"),
        "rope_frequencies": ("dim",),
        "rope_cos_sin": ("positions", "inv_freq"),
        "apply_rope": ("x", "cos", "sin"),
        "rope": ("x", "positions", "inv_freq"),
        "t5_bucket": ("relative",),
        "alibi_slopes": ("num_heads",),
        "alibi_bias": ("q_positions", "k_positions", "slopes"),
        "relative_positions": ("q_positions", "k_positions"),
        "shaw_index": ("relative",),
        "causal_mask": ("q_positions", "k_positions"),
        "llama4_attn_scale": ("positions",),
        "attention": ("q", "k", "v"),
    }[function]
    leading = [args.pop(p) for p in positional]
    return method(*leading, **args)


_TAKES_DTYPE = {"sinusoidal", "rope_frequencies", "rope_cos_sin", "alibi_slopes", "llama4_attn_scale"}


def _run_case(adapter: Adapter, doc: dict[str, Any], case: dict[str, Any], dtype: str | None) -> CaseResult:
    function = doc["function"]
    base = CaseResult(
        case["id"], function, doc["scheme"], dtype or doc["dtypes"][0], "skip", flags=tuple(case["flags"])
    )
    inputs = _decode_inputs(case, doc["castInputs"], dtype)
    reason = _needs(adapter, function, inputs)
    if reason:
        return dataclasses.replace(base, detail=reason)
    invalid = case["result"] == "invalid"
    if invalid and not adapter.capabilities.invalid_inputs:
        return dataclasses.replace(base, detail="adapter does not check invalid inputs")
    if invalid and "DataDependentCheck" in case["flags"] and not adapter.capabilities.data_dependent_errors:
        return dataclasses.replace(base, detail="adapter does not check array values (lazy backend)")
    try:
        output = _call(adapter, function, inputs, dtype or "float64", function in _TAKES_DTYPE)
    except NotImplementedError as exc:  # Unsupported, or a third party's own NotImplementedError
        return dataclasses.replace(base, detail=f"unsupported: {exc or type(exc).__name__}")
    except Exception as exc:
        if invalid:
            expected = case["expected"]["error"]
            note = "" if type(exc).__name__ == expected else f" (reference raises {expected})"
            return dataclasses.replace(base, status="pass", detail=f"raised {type(exc).__name__}{note}")
        where = traceback.extract_tb(exc.__traceback__)[-1]
        return dataclasses.replace(
            base,
            status="fail",
            detail=f"raised {type(exc).__name__}: {exc} [{pathlib.Path(where.filename).name}:{where.lineno}]",
        )
    if invalid:
        expected = case["expected"]
        return dataclasses.replace(
            base,
            status="fail",
            detail=f"returned a value; expected {expected['error']} about {expected['parameter']!r}",
        )
    return _judge(doc, case, inputs, output, base, dtype)


def _judge(
    doc: dict[str, Any],
    case: dict[str, Any],
    inputs: dict[str, Any],
    output: Any,
    base: CaseResult,
    dtype: str | None,
) -> CaseResult:
    names = list(doc["outputTypes"])
    outputs = tuple(output) if len(names) > 1 else (output,)
    if len(outputs) != len(names):
        return dataclasses.replace(
            base, status="fail", detail=f"returned {len(outputs)} outputs, expected {names}"
        )
    kind = {"float": "float", "int": "int", "bool": "bool"}[doc["outputTypes"][names[0]]]
    tolerance = (case.get("tolerances") or doc.get("tolerances") or {}).get(dtype or "", None)
    positions = None
    if case.get("compare") == "causal_rowshift":
        positions = (np.asarray(inputs["q_positions"]), np.asarray(inputs["k_positions"]))
    verdicts: list[Verdict] = []
    try:
        for name, value in zip(names, outputs, strict=True):
            expected = _format.decode(case["expected"][name])
            acceptable = case.get("acceptable", {}).get(name)
            verdicts.append(
                compare_output(
                    value,
                    expected,
                    kind=kind,
                    dtype=dtype,
                    tolerance=tolerance,
                    name=name,
                    acceptable=None if acceptable is None else _format.decode(acceptable),
                    mode=case.get("compare", "allclose"),
                    positions=positions,
                )
            )
    except Mismatch as exc:
        return dataclasses.replace(base, status="fail", detail=str(exc))
    ok = all(v.ok for v in verdicts)
    return dataclasses.replace(
        base,
        status="pass" if ok else "fail",
        max_abs_err=max(v.max_abs_err for v in verdicts),
        max_ulp=max(v.max_ulp for v in verdicts),
        detail="; ".join(v.detail for v in verdicts if v.detail),
    )


def _golden_results(
    adapter: Adapter, docs: Iterable[dict[str, Any]], only: set[str] | None
) -> list[CaseResult]:
    results = []
    for doc in docs:
        if only and doc["scheme"] not in only and doc["function"] not in only:
            continue
        supported = adapter.supports(doc["function"])
        for case in doc["cases"]:
            dtypes = doc["dtypes"] if doc["dtypes"][0] in ("float64", "float32") else [None]
            for dtype in dtypes:
                if not supported or (dtype is not None and dtype not in adapter.capabilities.dtypes):
                    why = "function not implemented" if not supported else f"dtype {dtype} not supported"
                    results.append(
                        CaseResult(
                            case["id"],
                            doc["function"],
                            doc["scheme"],
                            dtype or doc["dtypes"][0],
                            "skip",
                            flags=tuple(case["flags"]),
                            detail=why,
                        )
                    )
                    continue
                results.append(_run_case(adapter, doc, case, dtype))
    return results


# --- the run -------------------------------------------------------------------------------------------


def run(
    adapter: Adapter,
    *,
    only: Iterable[str] | None = None,
    xfails: Sequence[str] = (),
    invariants: bool = True,
    progress: Callable[[str], None] | None = None,
) -> Report:
    """Run every golden case (and the invariants) against ``adapter``."""
    start = time.perf_counter()
    wanted = set(only) if only else None
    if progress:
        progress(f"golden cases against {adapter.name} ...")
    results = _golden_results(adapter, golden.load(), wanted)
    if invariants:
        from .invariants import run_invariants

        if progress:
            progress("invariants ...")
        results += run_invariants(adapter, only=wanted)
    stale = _apply_xfails(results, xfails)
    return Report(adapter.describe(), results, stale, time.perf_counter() - start)


def _apply_xfails(results: list[CaseResult], xfails: Sequence[str]) -> list[str]:
    """Mark failures named by ``xfails`` as xfail (passes as xpass); return the entries matching nothing."""
    used: defaultdict[str, int] = defaultdict(int)
    for r in results:
        matching = [entry for entry in xfails if _xfail_match(entry, r)]
        for entry in matching:  # every matching entry is in use, not only the first
            used[entry] += 1
        if matching and r.status == "fail":
            r.status, r.detail = "xfail", f"(xfail) {r.detail}"
        elif matching and r.status == "pass":
            r.status = "xpass"
    return [e for e in xfails if not used[e]]
