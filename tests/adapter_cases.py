"""Run single golden cases against a built-in library adapter (for tests/test_adapter_*.py)."""

from __future__ import annotations

import functools
from typing import Any

from posenc_ref_conformance import golden, runner

__all__ = ["case_inputs", "verdict"]


@functools.cache
def _cases() -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    return {case["id"]: (doc, case) for doc in golden.load() for case in doc["cases"]}


def verdict(adapter: Any, case_id: str, dtype: str | None = "float32") -> runner.CaseResult:
    """The suite's result for golden case ``case_id`` at ``dtype`` (None for integer outputs)."""
    return runner.run_case(adapter, case_id, dtype)


def case_inputs(case_id: str, dtype: str | None = "float32") -> dict[str, Any]:
    """The decoded inputs of golden case ``case_id``, float inputs cast as the runner casts them."""
    doc, case = _cases()[case_id]
    return runner._decode_inputs(case, doc["castInputs"], dtype)
