"""pytest plugin: run the conformance suite in an adopter's CI.

Installing posenc-ref registers it through the ``pytest11`` entry point
(``posenc_ref_conformance = "posenc_ref_conformance.pytest_plugin"``), so
``-p`` is never needed (and would register it twice); then::

    pytest --pyargs posenc_ref_conformance.pytest_suite --posenc-adapter my_pkg.posenc_adapter \\
        [--posenc-xfails posenc-xfails.txt] [--posenc-only rope] [--posenc-timeout 60]

Every golden case and invariant becomes one test item named by its result id
(``rope_cos_sin/half/basic-d8[float64]``); skips and the adopter's xfails map to
pytest's, beyond-precision results are skipped with the reason, and the
summary ends with the suite's ``RESULT:`` line.  The adapter may also come from
``POSENC_REF_ADAPTER``.  This module only declares options and writes that
line: the suite is imported inside the test module, so an installed plugin
costs nothing in other test runs.
"""

from __future__ import annotations

from typing import Any

__all__ = ["REPORT_KEY", "pytest_addoption", "pytest_terminal_summary"]

#: The attribute of pytest's config that holds the run's Report once the suite has run.
REPORT_KEY = "_posenc_ref_conformance_report"


def pytest_addoption(parser: Any) -> None:
    group = parser.getgroup("posenc-ref", "posenc-ref conformance suite")
    group.addoption(
        "--posenc-adapter",
        default=None,
        metavar="SPEC",
        help="adapter to check (posenc_ref[:BACKEND], mlx, module[:NAME], file.py[:NAME]); "
        "default $POSENC_REF_ADAPTER",
    )
    group.addoption(
        "--posenc-xfails",
        default=None,
        metavar="FILE",
        help="known failures: one case id or id prefix per line, # comments",
    )
    group.addoption(
        "--posenc-only",
        default=None,
        metavar="SCHEMES",
        help="comma-separated schemes or canonical functions to run",
    )
    group.addoption(
        "--posenc-timeout",
        default=None,
        metavar="SECONDS",
        help="time limit of one adapter call (default $POSENC_REF_TIMEOUT or 60)",
    )


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """End the session's summary with the suite's ``RESULT:`` line (class judged, reach), if it ran."""
    report = getattr(config, REPORT_KEY, None)
    if report is not None:
        terminalreporter.write_line(report.result_line())
