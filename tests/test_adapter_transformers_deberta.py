"""The transformers adapter's DeBERTa columns (DeBERTa-v2 default, v1, SEW-D): their own modules' verdicts.

The p2c term with query length != key length fails in each (docs/matrix/repro/
transformers_deberta_p2c_unequal_lengths.py); everything else passes or is out of reach.
"""

from __future__ import annotations

import pytest

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.runner import run

MISSING = hf.missing()
pytestmark = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")

FUNCTIONS = ["deberta_bucket", "deberta_relative_index"]
UNEQUAL_BUCKETS = [
    f"deberta_relative_index/p2c/{n}[int]" for n in ("q4-k400-256-512", "q40-k6-16-32", "q1-k40-16-32")
]
UNEQUAL_V1 = [f"deberta_relative_index/p2c/{n}[int]" for n in ("v1-q5-k3-16", "v1-q1-k6-16")]


def _statuses(name: str) -> dict[str, str]:
    report = run(load_adapter(name), only=FUNCTIONS, invariants=False)
    return {r.result_id: r.status for r in report.results if r.result_id.startswith("deberta")}


@pytest.mark.parametrize(
    ("name", "failing"),
    [
        ("transformers", UNEQUAL_BUCKETS + UNEQUAL_V1),
        ("transformers:sew_d", UNEQUAL_BUCKETS + UNEQUAL_V1),
        ("transformers:deberta", UNEQUAL_V1),
    ],
)
def test_only_the_unequal_p2c_cases_fail(name: str, failing: list[str]) -> None:
    statuses = _statuses(name)
    assert sorted(r for r, s in statuses.items() if s == "fail") == sorted(failing)
    passed = {r for r, s in statuses.items() if s == "pass"}
    assert "deberta_relative_index/c2p/q4-k400-256-512[int]" in passed or name.endswith(":deberta")
    assert "deberta_relative_index/p2c/v1-self-12-8[int]" in passed  # equal lengths: exact
    if not name.endswith(":deberta"):
        # HF's float32 log term lands on the float32 bucket, and the exact cases are out of its reach
        assert "deberta_bucket/float32/512-4096-boundary[int]" in passed
        assert "deberta_relative_index/c2p/boundary-512-4096-float32[int]" in passed
        assert statuses["deberta_bucket/exact/512-4096-boundary[int]"] == "skip"
    else:  # v1 has no buckets: nothing of deberta_bucket is declared
        assert not any(r.startswith("deberta_bucket/") and s != "skip" for r, s in statuses.items())
