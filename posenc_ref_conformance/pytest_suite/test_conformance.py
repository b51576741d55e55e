"""One pytest item per conformance result (see :mod:`posenc_ref_conformance.pytest_plugin`).

Items are named by result id (``rope_cos_sin/half/basic-d8[float64]``); a last
item, ``test_something_was_compared``, fails when the run compared nothing (or
nothing of a scheme named by ``--posenc-only``), so an adapter that tests
nothing can never leave a green run of skips; ``test_reach_meets_the_context``
fails when a function's reach is below the declared context; ``test_the_run_finished``
fails when the run stopped part-way (a damaged golden case or a bug of the suite).  Beyond-precision
results (compared, but too imprecise a class to judge) are skipped with the
reason, never passed.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import pytest

from posenc_ref_conformance.adapters import AdapterError
from posenc_ref_conformance.golden import GoldenError
from posenc_ref_conformance.isolation import DEFAULT_TIMEOUT
from posenc_ref_conformance.pytest_plugin import REPORT_KEY as _KEY
from posenc_ref_conformance.results import CaseResult
from posenc_ref_conformance.runner import load_xfails, run


def _option(config: pytest.Config, name: str, env: str | None = None) -> Any:
    value = config.getoption(name, default=None)
    return value if value is not None else (os.environ.get(env) if env else None)


def _report(config: pytest.Config) -> Any:
    cached = getattr(config, _KEY, None)
    if cached is not None:
        return cached
    spec = _option(config, "posenc_adapter", "POSENC_REF_ADAPTER")
    if not spec:
        msg = "conformance suite: pass --posenc-adapter SPEC (or set POSENC_REF_ADAPTER)"
        raise pytest.UsageError(msg)
    xfail_file = _option(config, "posenc_xfails")
    only = _option(config, "posenc_only")
    timeout = _option(config, "posenc_timeout", "POSENC_REF_TIMEOUT")
    try:
        report = run(
            spec,
            xfails=load_xfails(xfail_file) if xfail_file else (),
            only=[s for s in only.split(",") if s] if only else None,
            timeout=float(timeout) if timeout else DEFAULT_TIMEOUT,
        )
    except (AdapterError, GoldenError, ValueError, OSError) as exc:
        msg = f"conformance suite: {exc}"
        raise pytest.UsageError(msg) from exc
    if report.stale_xfails:
        warnings.warn(
            f"stale xfail entries (match no result): {report.stale_xfails}", UserWarning, stacklevel=1
        )
    setattr(config, _KEY, report)
    return report


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "conformance_result" in metafunc.fixturenames:
        results = _report(metafunc.config).results
        metafunc.parametrize("conformance_result", results, ids=[r.result_id for r in results])


def test_conformance(conformance_result: CaseResult) -> None:
    r = conformance_result
    if r.status == "skip":
        pytest.skip(r.detail or "skipped")
    if r.status == "beyond-precision":  # compared but not judged: never a pass
        pytest.skip(f"beyond precision: {r.detail or 'no element could be judged'}")
    if r.status == "xfail":
        pytest.xfail(r.detail)
    if r.status == "fail":
        pytest.fail(f"{r.result_id}: {r.detail} (flags: {', '.join(r.flags) or '-'})", pytrace=False)


def test_reach_meets_the_context(request: pytest.FixtureRequest) -> None:
    shortfalls = _report(request.config).reach_shortfalls()
    if shortfalls:
        pytest.fail("; ".join(shortfalls), pytrace=False)


def test_the_run_finished(request: pytest.FixtureRequest) -> None:
    abort = _report(request.config).abort
    if abort is not None:
        what = "a golden case is damaged" if abort["kind"] == "golden" else "the suite itself failed"
        pytest.fail(f"the run stopped ({what}): {abort['message']}\n{abort['traceback']}", pytrace=False)


def test_something_was_compared(request: pytest.FixtureRequest) -> None:
    report = _report(request.config)
    missing = report.uncompared()
    if missing:
        reasons = "; ".join(f"{n}x {reason}" for reason, n in report.skip_reasons())
        what = "anything" if missing == ["everything"] else ", ".join(missing)
        pytest.fail(f"NOTHING TESTED: no result was compared for {what} ({reasons})", pytrace=False)
