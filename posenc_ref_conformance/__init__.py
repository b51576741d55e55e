"""posenc-ref's conformance suite: oracle, golden vectors, invariants, adapters, runner.

Point it at an implementation with one adapter (``posenc-ref check ADAPTER``
or ``POSENC_REF_ADAPTER``); see :mod:`posenc_ref_conformance.adapters.base` for the
protocol and :mod:`posenc_ref_conformance.runner` for what a run reports.
"""

from __future__ import annotations

__version__ = "1.0.0"

__all__ = ["__version__"]
