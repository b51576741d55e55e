"""Named variants: a formula shipped under a canonical name is reported as that variant, not as a failure."""

from __future__ import annotations

import math
import types
from typing import Any

import numpy as np
import pytest

from posenc_ref_conformance.adapters.base import Capabilities, ModuleAdapter
from posenc_ref_conformance.adapters.posenc_ref import PosencRefAdapter
from posenc_ref_conformance.runner import run


def _vllm_ntk(dim: int, *, base: float, scaling: Any, seq_len: Any, dtype: str) -> Any:
    """vLLM's NTKScalingRotaryEmbedding, in float64 NumPy: (b s)^(-2i/d) / s^(2/d)."""
    reference = PosencRefAdapter()
    if not scaling or scaling.get("rope_type", scaling.get("type")) != "ntk":
        return reference.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len, dtype=dtype)
    s = float(scaling["factor"])
    inv = (base * s) ** (-np.arange(0, dim, 2) / dim) / s ** (2 / dim)
    return inv.astype(dtype), 1.0


def _adapter(variants: dict[str, str]) -> ModuleAdapter:
    module = types.SimpleNamespace(
        rope_frequencies=_vllm_ntk, CAPABILITIES={"variants": variants, "invalid_inputs": False}
    )
    return ModuleAdapter(module, name="vllm-like")


def test_a_declared_variant_runs_its_own_cases_instead() -> None:
    report = run(_adapter({"ntk": "vllm"}), only=["rope_frequencies"], invariants=False)
    by_id = {r.result_id: r for r in report.results}
    assert report.verdict == "PASS"
    assert by_id["rope_frequencies/ntk-vllm/factor-8-d64[float64]"].status == "pass"
    skipped = by_id["rope_frequencies/ntk/factor-8[float64]"]
    assert skipped.status == "skip" and "computes variant ntk:vllm" in skipped.detail


def test_the_same_formula_undeclared_fails_the_canonical_cases() -> None:
    report = run(_adapter({}), only=["rope_frequencies"], invariants=False)
    failed = {r.id for r in report.results if r.status == "fail"}
    assert failed == {"rope_frequencies/ntk/factor-8", "rope_frequencies/ntk/factor-4-d128"}


def test_canonical_adapters_skip_variant_cases_with_the_reason() -> None:
    report = run(PosencRefAdapter(), only=["rope_frequencies"], invariants=False)
    variant = [r for r in report.results if "/ntk-vllm/" in r.id]
    assert variant and all(r.status == "skip" and "variant ntk:vllm" in r.detail for r in variant)


def test_the_variant_oracle_is_vllms_formula() -> None:
    """theta_0 = 8**(-2/64) = 0.937..., the value vLLM 0.32's layer gives (docs/matrix/vllm.md)."""
    inv, _ = _vllm_ntk(
        64, base=10000.0, scaling={"rope_type": "ntk", "factor": 8.0}, seq_len=None, dtype="float64"
    )
    assert math.isclose(float(inv[0]), 8.0 ** (-2 / 64), rel_tol=1e-15)


@pytest.mark.parametrize(
    ("variants", "message"),
    [
        ({"ntk": "sglang"}, r"^variants\['ntk'\] must be one of"),
        ({"nkt": "vllm"}, "^variants keys must be topics"),
    ],
)
def test_unknown_variants_are_rejected(variants: dict[str, str], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Capabilities(variants=variants)
