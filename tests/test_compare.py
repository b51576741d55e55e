"""compare_output: a float output may match a case's other right answer (a rounding tie), and only that."""

from __future__ import annotations

import numpy as np

from posenc_ref_conformance.compare import compare_output

EXACT = {"atol": 0.0, "rtol": 0.0, "maxUlp": 0}


def _verdict(actual: list[float], acceptable: list[float] | None) -> object:
    return compare_output(
        np.array(actual, dtype=np.float32),
        np.array([3.5, 3.375, 3.375, 3.25]),
        kind="float",
        dtype="float32",
        tolerance=EXACT,
        name="bias",
        acceptable=None if acceptable is None else np.array(acceptable),
    )


def test_a_float_element_equal_to_the_acceptable_answer_passes() -> None:
    """t5_bias/causal/36-50-tie: HF's float32 log lands in the other bucket on some CPUs; both are right."""
    verdict = _verdict([3.5, 3.5, 3.375, 3.25], [3.5, 3.5, 3.375, 3.25])
    assert verdict.ok and verdict.max_abs_err == 0.0 and verdict.used == 0.0  # type: ignore[attr-defined]


def test_a_float_element_equal_to_neither_fails() -> None:
    assert not _verdict([3.5, 3.25, 3.375, 3.25], [3.5, 3.5, 3.375, 3.25]).ok  # type: ignore[attr-defined]
    assert not _verdict([3.5, 3.5, 3.375, 3.25], None).ok  # type: ignore[attr-defined]
