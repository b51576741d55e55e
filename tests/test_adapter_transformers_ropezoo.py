"""The RoPE zoo: one transformers variant per 1-D RoPE family, each running that family's own code.

Without transformers only the table's shape is checked (the module imports no torch).  With it:
every row's rotary class, config class and apply function exist in the family's module and the
rotary module builds from a tiny config at the row's width, and chosen columns keep their verdicts.
"""

from __future__ import annotations

import importlib
import pathlib

import pytest

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.adapters import transformers as hf
from posenc_ref_conformance.adapters._transformers_rope_families import ROPE_FAMILIES, ROPE_NOT_RUN
from posenc_ref_conformance.runner import load_xfails, run

XFAILS = pathlib.Path(__file__).resolve().parents[1] / "docs" / "matrix" / "xfails" / "transformers.txt"
MISSING = hf.missing()
needs_transformers = pytest.mark.skipif(MISSING is not None, reason=MISSING or "")
ROPE = ["rope_frequencies", "rope_cos_sin", "apply_rope", "rope", "rope_from_base", "rope_heads"]


def test_every_family_is_a_variant_or_has_a_reason() -> None:
    assert not set(ROPE_FAMILIES) & set(ROPE_NOT_RUN)
    assert all(reason.strip() for reason in ROPE_NOT_RUN.values())
    assert set(ROPE_FAMILIES) - {"llama"} <= set(hf.ADAPTERS)
    assert hf.ADAPTERS["default"].rope_source == "llama"
    for family in set(ROPE_FAMILIES) - {"llama"}:
        variant = hf.ADAPTERS[family]
        assert variant.rope_source == family
        assert variant.rope_tables == variant.rope_applies == (family,)
        assert set(variant.capabilities.functions) >= {"apply_rope", "rope_from_base"}


def test_rows_use_known_values() -> None:
    for family, row in ROPE_FAMILIES.items():
        assert row.layout in ("half", "interleaved"), family
        assert row.table in ("half", "interleaved", "halfwidth", "complex", "sincos"), family
        assert row.call in ("qk", "x", "gptj", "complex", "deinterleave"), family
        assert row.partial in ("", "apply", "caller", "last"), family
        assert row.x_layout in ("bhsd", "bshd"), family


@needs_transformers
@pytest.mark.parametrize("family", sorted(ROPE_FAMILIES))
def test_row_classes_exist_and_build(family: str) -> None:
    row = ROPE_FAMILIES[family]
    module = importlib.import_module(row.module(family))
    assert callable(getattr(module, row.apply))
    adapter = hf.TransformersAdapter()
    rotary = adapter._family_rotary(family, 8, 10000.0, None, 4)
    assert type(rotary).__name__ == row.rotary
    assert type(adapter._family_config(family, 8, 10000.0, None)).__name__ == row.config
    if row.table == "sincos":
        assert rotary.embed_positions.shape[-1] == 8
    else:
        assert getattr(rotary, adapter._buffer(row, "inv_freq")).numel() == 4
    assert row.own_defaults == ("compute_default_rope_parameters" in vars(type(rotary)))


@needs_transformers
@pytest.mark.parametrize(
    ("family", "must_pass"),
    [
        ("qwen2", "rope_cos_sin/half/gpt-oss-yarn[float32]"),  # a Llama copy, its own module
        ("gpt_neox", "apply_rope/half/partial-r4-d10[float32]"),  # the apply splits the first R channels
        ("phi", "apply_rope/half/partial-r4-d10[float32]"),  # PhiAttention splits them off first
        ("glm", "apply_rope/interleaved/partial-r4-d10[float32]"),  # interleaved pairs from a half table
        ("deepseek_v3", "apply_rope/interleaved/batched-heads[float32]"),  # the de-interleaved output
        ("llama4", "rope_cos_sin/interleaved/gpt-oss-yarn[float32]"),  # the complex table
        ("gpt_oss", "rope_cos_sin/half/gpt-oss-yarn[float32]"),  # the half-width table
    ],
)
def test_family_columns_pass(family: str, must_pass: str) -> None:
    report = run(load_adapter(f"transformers:{family}"), only=ROPE, xfails=load_xfails(XFAILS))
    statuses = {r.result_id: r.status for r in report.results}
    assert statuses[must_pass] == "pass"
    assert not [r.result_id for r in report.results if r.status == "fail"]


@needs_transformers
def test_nanochat_rotates_by_minus_theta() -> None:
    """NanoChat's rotate_half returns cat(x2, -x1): its rotations fail, its tables pass."""
    report = run(
        load_adapter("transformers:nanochat"), only=["rope_cos_sin", "apply_rope"], xfails=load_xfails(XFAILS)
    )
    failed = {r.function for r in report.results if r.status == "fail"}
    passed = {r.function for r in report.results if r.status == "pass"}
    assert failed == {"apply_rope"} and "rope_cos_sin" in passed
