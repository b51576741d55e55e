"""Run the suite against an adapter: golden cases and invariants -> a :class:`~.results.Report`.

Each golden case runs once per dtype the adapter declares (float outputs) or
once (integer and boolean outputs).  Every adapter call goes through an
executor (:mod:`.isolation`): an adapter *spec* runs in its own process with a
per-call time limit, an adapter *object* in this one; either way it gets
copies of its inputs, and its results are judged against the suite's own copy
of the case.  Anything an adapter does (raise, return something odd, hang,
exit) is that case's failure, with the reason, and the run goes on.

Known failures come from the adopter's xfail file: one case id or id prefix
per line, ``#`` comments; entries that match nothing are reported as stale.
"""

from __future__ import annotations

import copy
import dataclasses
import math
import os
import pathlib
import platform
import time
import traceback
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from . import __version__, compare, diagnosis, golden, reach
from .adapters import check_adapter
from .adapters.base import CHOICES, Adapter, check_context
from .compare import Mismatch, PhaseBound, Verdict, as_numpy, compare_output, product_bound
from .golden import _format
from .invariants import run_invariants
from .isolation import DEFAULT_TIMEOUT, InProcessExecutor, Outcome, ProxyAdapter, WorkerExecutor
from .results import NOT_DIAGNOSED, SCHEMES, CaseResult, Report

__all__ = ["DEFAULT_TIMEOUT", "SCHEMES", "CaseResult", "Report", "load_xfails", "run", "run_case"]

# --- xfail files ---------------------------------------------------------------------------------------


def load_xfails(path: str | os.PathLike[str]) -> list[str]:
    """Ids or id prefixes, one per line; ``#`` starts a comment; blank lines ignored.

    The file is UTF-8 (a byte-order mark is allowed).  A file that cannot be read
    or decoded raises ``OSError`` / ``UnicodeDecodeError`` (the CLI makes both
    usage errors).
    """
    entries = []
    for line in pathlib.Path(path).read_text(encoding="utf-8-sig").splitlines():
        entry = line.split("#", 1)[0].strip()
        if entry:
            entries.append(entry)
    return entries


def _xfail_match(entry: str, result: CaseResult) -> bool:
    rid = result.result_id
    if rid == entry or result.id == entry or (entry.endswith("/") and rid.startswith(entry)):
        return True
    return rid.startswith(entry) and rid[len(entry)] in "/["


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


# --- golden cases --------------------------------------------------------------------------------------

#: The values each capability field knows (a value outside is not the capability's business).
_KNOWN = {field: names for field, names in CHOICES.items() if field != "functions"}


def _option_value(param: str, value: Any) -> Any:
    """The value a capability is about: the scaling dict's rope_type, else the option itself."""
    if param == "scaling":
        return value.get("rope_type", value.get("type", "default")) if isinstance(value, dict) else None
    return value


def _needs(adapter: Adapter, doc: dict[str, Any], inputs: dict[str, Any]) -> str | None:
    """Why the adapter cannot run these inputs (declared capabilities), or None.

    Each option of the file's signature names the capability field that gates it;
    a value that field does not know (an invalid-input case's nonsense) is not gated.
    """
    caps = adapter.capabilities
    for param, field in doc["signature"]["options"].items():
        value = _option_value(param, inputs.get(param))
        if isinstance(value, str) and value in _KNOWN[field] and value not in getattr(caps, field):
            what = "scaling type" if param == "scaling" else param
            return f"{what} {value!r} not supported"
    return None


def _is_run(positions: Any) -> bool:
    """Whether every last-axis row of ``positions`` is ``p0, p0 + 1, ...`` (integers)."""
    array = np.asarray(positions)
    if not np.issubdtype(array.dtype, np.integer):
        return False
    return array.ndim == 0 or bool(np.all(np.diff(array, axis=-1) == 1))


def _positions_skip(adapter: Adapter, doc: dict[str, Any], inputs: dict[str, Any]) -> str | None:
    """Why a case's positions are not for an adapter that takes a start offset, or None."""
    if adapter.capabilities.positions_of(doc["function"]) != "consecutive":
        return None
    kinds = doc["signature"]["kinds"]
    names = [name for name, kind in kinds.items() if kind == "positions" and name in inputs]
    floats = [name for name in names if not np.issubdtype(np.asarray(inputs[name]).dtype, np.integer)]
    if floats:  # an invalid-input case: an offset-only call has no float position to reject
        return f"{', '.join(floats)}: not integers (the adapter takes a start offset: positions: consecutive)"
    uneven = [name for name in names if not _is_run(inputs[name])]
    if uneven:
        return f"{', '.join(uneven)}: not a run p0, p0 + 1, ... (the adapter declares positions: consecutive)"
    return None


def _variant_skip(adapter: Adapter, doc: dict[str, Any], case: dict[str, Any]) -> str | None:
    """Why a case's assumed variant values are not the adapter's, or None."""
    assumes = case.get("assumes")
    if not assumes:
        return None
    declared = adapter.capabilities.variants_of(doc["function"])
    other = {axis: value for axis, value in assumes.items() if declared.get(axis) != value}
    if not other:
        return None
    theirs = ", ".join(f"{axis}: {value}" for axis, value in other.items())
    mine = ", ".join(f"{axis}: {declared.get(axis)}" for axis in other)
    return f"for variant {theirs} (the adapter declares {mine})"


def _decode_inputs(case: dict[str, Any], cast: Sequence[str], dtype: str | None) -> dict[str, Any]:
    """The case's inputs, decoded afresh (arrays and dicts are new objects on every call)."""
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
            out[name] = copy.deepcopy(value)
    return out


def _arguments(
    doc: dict[str, Any], inputs: dict[str, Any], dtype: str
) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The adapter call the golden file's signature describes."""
    signature = doc["signature"]
    args = tuple(inputs[name] for name in signature["positional"])
    kwargs = {name: inputs[name] for name in signature["keyword"]}
    if signature["takesDtype"]:
        kwargs["dtype"] = dtype
    return args, kwargs


def _invalid_verdict(adapter: Adapter, case: dict[str, Any], outcome: Outcome) -> tuple[str, str]:
    """(status, detail) of an invalid-input case: it passes only on the error it names."""
    expected = case["expected"]
    if outcome.kind == "ok":
        return "fail", f"returned a value; expected {expected['error']} about {expected['parameter']!r}"
    if outcome.kind != "raised":
        return "fail", f"{outcome.describe()}; expected {expected['error']} about {expected['parameter']!r}"
    if expected["error"] in outcome.error_bases:
        return "pass", f"raised {outcome.error_type}"
    if outcome.error_type in adapter.capabilities.error_types_of(case["id"].split("/", 1)[0]):
        return (
            "pass",
            f"raised {outcome.error_type} (a declared error type; the reference raises {expected['error']})",
        )
    return "fail", (
        f"raised {outcome.error_type}: {outcome.message}; expected {expected['error']} "
        f"about {expected['parameter']!r} (declare other error types in CAPABILITIES['error_types'])"
    )


def _run_case(
    adapter: ProxyAdapter, doc: dict[str, Any], case: dict[str, Any], dtype: str | None
) -> CaseResult:
    function = doc["function"]
    base = CaseResult(
        case["id"], function, doc["scheme"], dtype or doc["dtypes"][0], "skip", flags=tuple(case["flags"])
    )
    inputs = _decode_inputs(case, doc["castInputs"], dtype)
    reason = (
        _needs(adapter, doc, inputs)
        or _positions_skip(adapter, doc, inputs)
        or _variant_skip(adapter, doc, case)
    )
    if reason:
        return dataclasses.replace(base, detail=reason)
    invalid = case["result"] == "invalid"
    if invalid and not adapter.capabilities.invalid_inputs_of(function):
        return dataclasses.replace(base, detail="adapter does not check invalid inputs")
    if invalid and "DataDependentCheck" in case["flags"] and not adapter.capabilities.data_dependent_errors:
        return dataclasses.replace(base, detail="adapter does not check array values (lazy backend)")
    args, kwargs = _arguments(doc, inputs, dtype or "float64")
    outcome = adapter.outcome(function, *args, expected_bytes=_expected_bytes(case), **kwargs)
    if outcome.kind == "unsupported":
        return dataclasses.replace(base, detail=outcome.describe())
    if invalid:
        status, detail = _invalid_verdict(adapter, case, outcome)
        return dataclasses.replace(base, status=status, detail=detail)
    if outcome.kind != "ok":
        return dataclasses.replace(base, status="fail", detail=outcome.describe())
    fresh = _decode_inputs(case, doc["castInputs"], dtype)  # judged against the suite's own copy
    # Outputs arrive as plain numeric NumPy arrays of the declared count (isolation.to_host); what the
    # comparison cannot digest is a Mismatch (the adapter's failure).  Any other exception here is a
    # bug of the suite, or a damaged case: the run stops with its own verdict, never FAIL.
    return _judge(adapter, doc, case, fresh, outcome.value, base, dtype)


def _expected_bytes(case: dict[str, Any]) -> int | None:
    """The bytes of a value case's expected outputs at float64 (bounds the reply); None for invalid inputs."""
    if case["result"] == "invalid":
        return None
    return sum(8 * math.prod(value["shape"]) for value in case["expected"].values())


def _phase_class(adapter: Adapter, doc: dict[str, Any], case: dict[str, Any]) -> str:
    """The declared precision class of this case's function (qualified by its option value if declared)."""
    options = [case["inputs"].get(param) for param in doc["signature"]["options"]]
    option = next((v for v in options if isinstance(v, str)), None)
    return adapter.capabilities.phase_of(doc["function"], option)


def _phase_bound(
    adapter: ProxyAdapter,
    doc: dict[str, Any],
    case: dict[str, Any],
    shape: tuple[int, ...],
    dtype: str | None,
    phase_class: str | None = None,
) -> PhaseBound | None:
    """The precision class's per-element bound (declared, or ``phase_class``; ``None`` without phase data)."""
    if "phase" not in case or dtype is None:
        return None
    bound = product_bound(case["phase"], shape, dtype)
    if (phase_class or _phase_class(adapter, doc, case)) == "product":
        return bound
    zero = np.zeros(shape)
    return PhaseBound(zero, zero.astype(bool), bound.positions, f"{dtype} exact")


def _judge(
    adapter: ProxyAdapter,
    doc: dict[str, Any],
    case: dict[str, Any],
    inputs: dict[str, Any],
    output: Any,
    base: CaseResult,
    dtype: str | None,
) -> CaseResult:
    names = list(doc["outputTypes"])
    outputs = dict(zip(names, output if len(names) > 1 else (output,), strict=True))
    kind = doc["outputTypes"][names[0]]
    expected = {name: _format.decode(case["expected"][name]) for name in names}
    judge = _case_judge(adapter, doc, case, inputs, kind, dtype)
    verdicts: dict[str, Verdict] = {}
    try:
        for name in names:
            verdicts[name] = judge(name, outputs[name], expected[name])
    except Mismatch as exc:
        return dataclasses.replace(base, status="fail", detail=str(exc))
    ok = all(v.ok for v in verdicts.values())
    judged = sum(v.judged for v in verdicts.values())
    status = "fail" if not ok else ("pass" if judged else "beyond-precision")
    worst = max(verdicts.values(), key=lambda v: v.max_abs_err)
    result = dataclasses.replace(
        base,
        status=status,
        max_abs_err=worst.max_abs_err,
        max_ulp=max(v.max_ulp for v in verdicts.values()),
        detail="; ".join(v.detail for v in verdicts.values() if v.detail),
        worst_position=worst.worst_position,
        tolerance_used=max(v.used for v in verdicts.values()),
        exact=all(v.exact for v in verdicts.values()),
        phase=_phase_class(adapter, doc, case) if "phase" in case else None,
        sweep=_sweep(doc, case, list(outputs.values()), _stored_tolerance(doc, case, dtype), dtype),
    )
    if status == "fail":
        try:
            result = _diagnosed(result, adapter, doc, case, inputs, outputs, expected, verdicts, dtype, judge)
        except Exception:  # a diagnosis that cannot be made never costs the verdict or its detail
            pass
    return result


def _stored_tolerance(
    doc: dict[str, Any], case: dict[str, Any], dtype: str | None
) -> dict[str, float] | None:
    """The exact class's tolerance the golden file stores for ``dtype`` (the case's own, else the file's)."""
    return (case.get("tolerances") or doc.get("tolerances") or {}).get(dtype or "", None)


def _case_judge(
    adapter: ProxyAdapter,
    doc: dict[str, Any],
    case: dict[str, Any],
    inputs: dict[str, Any],
    kind: str,
    dtype: str | None,
    *,
    phase_class: str | None = None,
    phase_record: dict[str, Any] | None = None,
    tolerance: dict[str, float] | None = None,
    cast: bool = False,
    acceptable: bool = True,
) -> Callable[[str, Any, np.ndarray], Verdict]:
    """The case's comparison of one output: its tolerance at ``dtype``, its mode, the class's bound.

    ``phase_class``, ``phase_record`` and ``tolerance`` replace the declared
    class, the case's phase data and its stored tolerance; ``cast`` rounds float
    outputs to ``dtype`` first (a diagnosis judging a float64 output with a
    float32 formula's tolerance); ``acceptable=False`` ignores the case's other
    acceptable answer.
    """
    if tolerance is None:
        tolerance = _stored_tolerance(doc, case, dtype)
    positions = None
    if case.get("compare") == "causal_rowshift":
        positions = (np.asarray(inputs["q_positions"]), np.asarray(inputs["k_positions"]))
    phased = case if phase_record is None else {**case, "phase": phase_record}

    def judge(name: str, value: Any, expected: np.ndarray) -> Verdict:
        other = case.get("acceptable", {}).get(name) if acceptable else None
        if cast and kind == "float" and dtype is not None:
            value = np.asarray(value).astype(dtype)
        return compare_output(
            value,
            expected,
            kind=kind,
            dtype=dtype,
            tolerance=tolerance,
            name=name,
            acceptable=None if other is None else _format.decode(other),
            mode=case.get("compare", "allclose"),
            positions=positions,
            phase=_phase_bound(adapter, doc, phased, expected.shape, dtype, phase_class),
        )

    return judge


def _diagnosed(
    result: CaseResult,
    adapter: ProxyAdapter,
    doc: dict[str, Any],
    case: dict[str, Any],
    inputs: dict[str, Any],
    outputs: dict[str, Any],
    expected: dict[str, np.ndarray],
    verdicts: dict[str, Verdict],
    dtype: str | None,
    own: Callable[[str, Any, np.ndarray], Verdict],
) -> CaseResult:
    """A failing result with its diagnosis, the worst elements' locations, or the error's structure.

    ``own`` is the case's comparison that judged it (``_case_judge`` at the declared class).
    """
    function = doc["function"]
    where = [
        place
        for name, v in verdicts.items()
        for place in diagnosis.locate(function, name, inputs, expected[name].shape, v.worst)
    ]
    where.sort(key=lambda w: -w["error"])
    kind = doc["outputTypes"][next(iter(verdicts))]

    def judge_for(precision: str | None, record: dict[str, Any] | None) -> Any:
        # a hypothesis is one answer: the case's other acceptable answer (a tie) is not its
        if precision is None:
            return _case_judge(adapter, doc, case, inputs, kind, dtype, phase_record=record, acceptable=False)
        # A formula evaluated in ``precision`` is computed with its own roundings by the hypothesis;
        # only the last bits of that format's cos/sin are left: 4 ulp, or 4 ulp of the largest value.
        scale = max(float(np.max(np.abs(e))) if e.size else 0.0 for e in expected.values())
        ulp = compare.UNIT_ROUNDOFF[precision] * 2
        tight = {"atol": 4 * ulp * scale, "rtol": 0.0, "maxUlp": 4}
        return _case_judge(
            adapter,
            doc,
            case,
            inputs,
            kind,
            precision,
            phase_class="exact",
            tolerance=tight,
            cast=True,
            acceptable=False,
        )

    named = diagnosis.diagnose(
        function, doc["signature"], inputs, expected, outputs, own, judge_for, dtype, case.get("phase")
    )
    found = list(named or ())
    if "phase" in case and dtype is not None and _phase_class(adapter, doc, case) != "product":
        as_product = _case_judge(adapter, doc, case, inputs, kind, dtype, phase_class="product")
        product = [as_product(name, outputs[name], expected[name]) for name in verdicts]
        if all(v.ok for v in product) and sum(v.judged for v in product):
            found.insert(0, diagnosis.PRODUCT_CLASS.format(dtype=dtype))
    structure = ""
    if not found:
        name, v = max(verdicts.items(), key=lambda item: item[1].max_abs_err)
        if v.failing is not None:
            actual = np.asarray(outputs[name], dtype=np.float64)
            structure = diagnosis.describe_structure(
                function, name, inputs, actual, expected[name], v.failing
            )
        if named is None:  # too large to try the catalogue on: say so, never "nothing matched"
            size = sum(int(e.size) for e in expected.values())
            structure = f"{NOT_DIAGNOSED} ({size} elements; the catalogue is tried up to "
            structure += f"{diagnosis.MAX_ELEMENTS}){': ' + structure if structure else ''}"
    return dataclasses.replace(
        result, diagnosis=tuple(found), structure=structure, where=tuple(where[: compare.WORST])
    )


#: Called with (results done, results in all, the function now running) as the golden cases run.
Progress = Callable[[int, int, str], None]


def _sweep(
    doc: dict[str, Any],
    case: dict[str, Any],
    outputs: Sequence[Any],
    tolerance: dict[str, float] | None,
    dtype: str | None,
) -> dict[str, Any] | None:
    """A reach-sweep case's per-position data (:func:`.reach.sweep`); ``None`` for other cases."""
    if "Reach" not in case["flags"] or "phase" not in case or dtype is None or tolerance is None:
        return None
    expected = [_format.decode(case["expected"][name]) for name in doc["outputTypes"]]
    positions = [product_bound(case["phase"], e.shape, dtype).positions for e in expected]
    return reach.sweep(expected, [as_numpy(v) for v in outputs], positions, tolerance=tolerance, dtype=dtype)


def _golden_results(
    adapter: ProxyAdapter,
    docs: Iterable[dict[str, Any]],
    only: set[str] | None,
    progress: Progress | None = None,
    results: list[CaseResult] | None = None,
) -> list[CaseResult]:
    """Every golden case's results, appended to ``results`` (so a run that stops keeps those done)."""
    results = [] if results is None else results
    docs = [doc for doc in docs if not only or doc["scheme"] in only or doc["function"] in only]
    total = sum(
        len(d["cases"]) * (len(d["dtypes"]) if d["dtypes"][0] in ("float64", "float32") else 1) for d in docs
    )
    for doc in docs:
        for case in doc["cases"]:
            dtypes = doc["dtypes"] if doc["dtypes"][0] in ("float64", "float32") else [None]
            for dtype in dtypes:
                if progress is not None:
                    progress(len(results), total, doc["function"])
                results.append(_case_result(adapter, doc, case, dtype))
    return results


def _case_result(
    adapter: Adapter, doc: dict[str, Any], case: dict[str, Any], dtype: str | None
) -> CaseResult:
    """The case's result at ``dtype``: skipped when the function or the dtype is not the adapter's."""
    only_in = case.get("dtypes", doc["dtypes"])
    why = (
        "function not implemented"
        if not adapter.supports(doc["function"])
        else None
        if dtype is None
        else f"dtype {dtype} not supported"
        if dtype not in adapter.capabilities.dtypes_of(doc["function"])
        else f"the case runs in {' and '.join(only_in)} only"
        if dtype not in only_in
        else None
    )
    if why is None:
        return _run_case(adapter, doc, case, dtype)
    return CaseResult(
        case["id"],
        doc["function"],
        doc["scheme"],
        dtype or doc["dtypes"][0],
        "skip",
        flags=tuple(case["flags"]),
        detail=why,
    )


def run_case(adapter: Adapter, case_id: str, dtype: str | None = None) -> CaseResult:
    """The result of one golden case at one dtype (``None``: the file's first), in this process.

    For tests of adapters; :func:`run` is the whole suite.
    """
    for doc in golden.load():
        for case in doc["cases"]:
            if case["id"] == case_id:
                run_dtype = (
                    dtype
                    if dtype is not None or doc["dtypes"][0] not in ("float64", "float32")
                    else "float64"
                )
                proxy = ProxyAdapter(InProcessExecutor(adapter))
                return _case_result(
                    proxy, doc, case, run_dtype if doc["dtypes"][0] in ("float64", "float32") else None
                )
    msg = f"case_id must name a golden case; got {case_id!r}"
    raise ValueError(msg)


# --- the run -------------------------------------------------------------------------------------------


def _schemes(docs: Sequence[dict[str, Any]]) -> tuple[str, ...]:
    """:data:`SCHEMES` (the report's order), then every other scheme a golden file declares, so a
    new family is selectable without being listed anywhere else."""
    return tuple(dict.fromkeys([*SCHEMES, *(doc["scheme"] for doc in docs)]))


def selectable(docs: Iterable[dict[str, Any]] | None = None) -> tuple[str, ...]:
    """Names ``only`` may use: the schemes and every canonical function with golden cases."""
    docs = list(docs if docs is not None else golden.load())
    return (*_schemes(docs), *(doc["function"] for doc in docs))


def run(
    adapter: Adapter | str,
    *,
    only: Iterable[str] | None = None,
    xfails: Sequence[str] = (),
    invariants: bool = True,
    progress: Progress | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    golden_dir: str | os.PathLike[str] | None = None,
    context: int | None = None,
    reach_atol: float = 1e-3,
) -> Report:
    """Run every golden case (and the invariants) against ``adapter``.

    ``adapter``: a spec string (loaded in its own process, each call limited to
    ``timeout`` seconds) or an :class:`Adapter` object (run in this process).
    ``progress``: called as ``progress(done, total, function)`` while the golden
    cases run (``done`` results of ``total``, the function now running), then
    once with ``"invariants"`` before the invariants.
    ``context``: the context length the implementation must serve (a positive
    integer; ``None``: the adapter's declared ``Capabilities.context``);
    ``reach_atol``: the absolute tolerance of the report's second reach.
    A run that stops part-way (a golden case found damaged while it runs, or a
    bug of the suite) still returns its report, with the results done so far and
    :attr:`Report.abort` saying why (verdict ``GOLDEN SET DAMAGED`` or ``SUITE
    ERROR``, never ``FAIL``).
    Raises :class:`~.adapters.AdapterError` when the adapter cannot be loaded or
    implements nothing, :class:`~.golden.GoldenError` when the golden vectors fail
    verification before the run, ``ValueError`` for an ``only`` naming no scheme or function, and
    ``TypeError``/``ValueError`` for a ``context`` or ``reach_atol`` that is not positive.
    """
    start = time.perf_counter()
    if context is not None:
        check_context(context, "context")
    if isinstance(reach_atol, bool) or not isinstance(reach_atol, (int, float)):
        msg = f"reach_atol must be a positive number; got {reach_atol!r}"
        raise TypeError(msg)
    if not 0 < reach_atol < float("inf"):
        msg = f"reach_atol must be a positive number; got {reach_atol!r}"
        raise ValueError(msg)
    directory = pathlib.Path(golden_dir) if golden_dir is not None else golden.VECTORS_DIR
    docs = golden.load(directory)
    wanted = tuple(dict.fromkeys(only)) if only else ()
    allowed = set(selectable(docs))
    unknown = [name for name in wanted if name not in allowed]
    if unknown:
        msg = f"only must name schemes {list(_schemes(docs))} or canonical functions; got {unknown}"
        raise ValueError(msg)
    if isinstance(adapter, str):
        executor: InProcessExecutor | WorkerExecutor = WorkerExecutor(adapter, timeout=timeout)
    else:
        check_adapter(adapter, str(adapter.name))
        executor = InProcessExecutor(adapter)
    results: list[CaseResult] = []
    abort = None
    try:
        proxy = ProxyAdapter(executor)
    except BaseException:
        executor.close()
        raise
    try:
        _golden_results(proxy, docs, set(wanted) or None, progress, results)
        if invariants:
            if progress is not None:
                progress(len(results), len(results), "invariants")
            results += run_invariants(proxy, only=set(wanted) or None)
    except golden.GoldenError as exc:  # a case the verification let through is damaged
        abort = {"kind": "golden", "message": str(exc), "traceback": ""}
    except Exception as exc:  # a bug of the suite: its own verdict, never the implementation's FAIL
        message = f"{type(exc).__name__}: {exc}"
        abort = {"kind": "internal", "message": message, "traceback": traceback.format_exc()}
    finally:
        output = executor.close()
    description = proxy.describe()
    stale = _apply_xfails(results, xfails)
    suite = {
        "name": "posenc-ref conformance",
        "version": __version__,
        "goldenFormatVersion": docs[0]["formatVersion"] if docs else None,
        "golden": str(directory),
        "isolated": executor.isolated,
        "timeoutSeconds": timeout if executor.isolated else None,
        "python": platform.python_version(),
        "numpy": np.__version__,
    }
    return Report(
        description,
        results,
        stale,
        time.perf_counter() - start,
        selected=wanted,
        adapter_output=output,
        suite=suite,
        warnings=list(executor.info.warnings),
        declared={
            "phase": proxy.capabilities.phase,
            "variants": dict(proxy.capabilities.variants),
            "positions": proxy.capabilities.positions,
        },
        context=context if context is not None else proxy.capabilities.context,
        reach_atol=float(reach_atol),
        abort=abort,
    )
