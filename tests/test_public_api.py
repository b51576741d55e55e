"""The public surface: DESIGN.md's contract names exist and every public function is documented."""

from __future__ import annotations

import inspect

import pytest

import posenc_ref as pr

#: The public API contract of DESIGN.md (checks outside the repository use these names).
CONTRACT = (
    "sinusoidal",
    "learned",
    "interpolate_table",
    "rope_frequencies",
    "RopeFrequencies",
    "rope_cos_sin",
    "apply_rope",
    "rope_config_from_hf",
    "RopeConfig",
    "relative_positions",
    "shaw_index",
    "t5_bucket",
    "alibi_slopes",
    "alibi_bias",
    "attention",
)

FUNCTIONS = sorted(n for n in pr.__all__ if inspect.isfunction(getattr(pr, n)))


def test_all_names_exist_and_are_unique():
    assert len(pr.__all__) == len(set(pr.__all__))
    missing = [n for n in pr.__all__ if not hasattr(pr, n)]
    assert not missing


@pytest.mark.parametrize("name", CONTRACT)
def test_contract_name_is_public(name):
    assert name in pr.__all__


@pytest.mark.parametrize("name", FUNCTIONS)
def test_public_function_is_typed_and_documented(name):
    fn = getattr(pr, name)
    sig = inspect.signature(fn)
    untyped = [p for p in sig.parameters.values() if p.annotation is inspect.Parameter.empty]
    assert not untyped, f"{name}: parameters without type hints: {untyped}"
    assert sig.return_annotation is not inspect.Signature.empty, f"{name}: no return annotation"
    doc = inspect.getdoc(fn) or ""
    for section in ("Parameters", "Returns"):
        assert f"{section}\n---" in doc, f"{name}: docstring has no {section} section"
    assert "References" in doc or "Notes" in doc, f"{name}: docstring names no source"
