"""One pytest item per conformance result (see :mod:`posenc_ref_conformance.pytest_plugin`)."""

from __future__ import annotations

import os
import warnings
from typing import Any

import pytest

from posenc_ref_conformance.runner import CaseResult

_KEY = "_posenc_ref_conformance_report"


def _option(config: pytest.Config, name: str, env: str | None = None) -> Any:
    value = config.getoption(name, default=None)
    return value if value is not None else (os.environ.get(env) if env else None)


def _report(config: pytest.Config) -> Any:
    cached = getattr(config, _KEY, None)
    if cached is not None:
        return cached
    from posenc_ref_conformance.adapters import AdapterError, load_adapter
    from posenc_ref_conformance.runner import load_xfails, run

    spec = _option(config, "posenc_adapter", "POSENC_REF_ADAPTER")
    if not spec:
        msg = "conformance suite: pass --posenc-adapter SPEC (or set POSENC_REF_ADAPTER)"
        raise pytest.UsageError(msg)
    try:
        adapter = load_adapter(spec)
    except AdapterError as exc:
        raise pytest.UsageError(str(exc)) from exc
    xfail_file = _option(config, "posenc_xfails")
    only = _option(config, "posenc_only")
    report = run(
        adapter,
        xfails=load_xfails(xfail_file) if xfail_file else (),
        only=[s for s in only.split(",") if s] if only else None,
    )
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
    if r.status == "xfail":
        pytest.xfail(r.detail)
    if r.status == "fail":
        pytest.fail(f"{r.result_id}: {r.detail} (flags: {', '.join(r.flags) or '-'})", pytrace=False)
