"""The conformance suite as commands: golden generation, ``posenc-ref check``, golden accuracy.

Each command runs in a fresh interpreter (``python -m posenc_ref_conformance ...``), so the
times include start-up and imports, as a user typing the command sees them.

* ``GoldenGenerate``: ``posenc-ref golden generate --check`` builds every golden
  vector from the mpmath oracle and compares the bytes with the files, writing
  nothing (the work of ``generate`` without touching the repository).  Target:
  under 60 s.
* ``ConformanceCheck``: ``posenc-ref check posenc_ref:<backend>``.  Target for the
  built-in adapter (NumPy): under 30 s.
* ``GoldenAccuracy``: from the JSON report of those checks, the largest error in
  ulp per scheme and dtype, and the number of failed cases, so accuracy against
  the golden vectors is tracked over commits.
"""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

from .common import BACKENDS, DTYPES, quick, require_module, run_python, skip

#: Benchmark backend id -> the built-in adapter's backend id.
ADAPTER_BACKENDS = {
    "numpy": "numpy",
    "array_api_strict": "array_api_strict",
    "mlx": "mlx",
    "torch": "torch",
    "jax": "jax.numpy",
    "cupy": "cupy",
}
SCHEMES = ["sinusoidal", "learned", "rope", "t5", "alibi", "shaw", "nope", "attention"]


def _cli(*args: str, timeout: float = 600) -> int:
    proc = run_python(["-m", "posenc_ref_conformance", *args], timeout=timeout)
    if proc.returncode not in (0, 1):  # 1: failures found / files would change; 2+: broken
        msg = f"posenc-ref {' '.join(args)} exited {proc.returncode}:\n{proc.stderr[-3000:]}"
        raise RuntimeError(msg)
    return proc.returncode


def _skip_slow(name: str) -> None:
    if quick() and name == "jax":
        skip(
            "JAX compiles every primitive for every new shape: a full check takes minutes (not in quick runs)"
        )


def _check_report(adapter: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "report.json")
        _cli("check", adapter, "--json", path)
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)


class GoldenGenerate:
    """``posenc-ref golden generate --check`` (the whole golden set from the oracle)."""

    number = 1
    repeat = 1
    rounds = 1
    warmup_time = 0.0
    timeout = 600

    def setup(self) -> None:
        require_module("posenc_ref_conformance.golden.generate")

    def time_golden_generate(self) -> None:
        _cli("golden", "generate", "--check")


class ConformanceCheck:
    """``posenc-ref check posenc_ref:<backend>`` (golden cases and invariants)."""

    params = [BACKENDS]
    param_names = ["backend"]
    number = 1
    repeat = 1
    rounds = 1
    warmup_time = 0.0
    timeout = 600

    def setup(self, name: str) -> None:
        require_module("posenc_ref_conformance.runner")
        from .common import backend

        backend(name)  # skips when the library is not installed
        _skip_slow(name)
        self.adapter = f"posenc_ref:{ADAPTER_BACKENDS[name]}"

    def time_check(self, name: str) -> None:
        _cli("check", self.adapter)


class GoldenAccuracy:
    """Largest error (ulp of the run's dtype) and failed cases per scheme, from the check report."""

    params = [BACKENDS, SCHEMES, DTYPES]
    param_names = ["backend", "scheme", "dtype"]
    timeout = 1200

    def setup_cache(self) -> dict[str, Any]:
        reports: dict[str, Any] = {}
        try:
            import posenc_ref_conformance.runner  # noqa: F401
        except ImportError as exc:
            return {"error": f"conformance is not importable: {exc}"}
        from .common import backend

        for name in BACKENDS:
            try:
                backend(name)
                _skip_slow(name)
            except NotImplementedError:
                continue
            reports[name] = _check_report(f"posenc_ref:{ADAPTER_BACKENDS[name]}")
        return reports

    def setup(self, reports: dict[str, Any], name: str, scheme: str, dtype: str) -> None:
        if "error" in reports:
            skip(reports["error"])
        report = reports.get(name)
        if report is None:
            skip(f"backend {name} is not available")
        self.scheme = report["schemes"].get(scheme)
        if self.scheme is None or self.scheme.get(f"max_ulp_{dtype}") is None:
            skip(f"no {scheme} cases in {dtype} for {name}")
        self.failed = sum(
            1
            for r in report.get("results", [])
            if r.get("scheme") == scheme and r.get("dtype") == dtype and r.get("status") in ("fail", "error")
        )

    def track_golden_max_ulp(self, reports: dict[str, Any], name: str, scheme: str, dtype: str) -> float:
        return float(self.scheme[f"max_ulp_{dtype}"])

    track_golden_max_ulp.unit = "ulp"  # type: ignore[attr-defined]

    def track_golden_failures(self, reports: dict[str, Any], name: str, scheme: str, dtype: str) -> int:
        return self.failed

    track_golden_failures.unit = "cases"  # type: ignore[attr-defined]
