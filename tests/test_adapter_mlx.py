"""The built-in mlx adapter and the teaching copy in docs/examples agree on every verdict."""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

pytest.importorskip("mlx.core", reason="mlx is not installed (pip install 'posenc-ref[mlx]')")

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.runner import run

from .adapter_cases import verdict

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "examples" / "mlx_adapter.py"


def test_docs_example_agrees_with_the_builtin_adapter():
    builtin = {r.result_id: r.status for r in run(load_adapter("mlx")).results}
    example = {r.result_id: r.status for r in run(load_adapter(str(EXAMPLE))).results}
    assert builtin.keys() == example.keys()
    differ = sorted(k for k in builtin if builtin[k] != example[k])
    assert not differ, differ[:10]
    assert sum(s == "pass" for s in builtin.values()) > 0


def test_causal_cases_use_the_symmetric_matrix():
    result = verdict(load_adapter("mlx"), "alibi_bias/causal/12-heads")
    assert result.status == "pass", result.detail


def test_large_positions_are_a_float32_product():
    """MLX forms the angle as a float32 product: within that class's bound, far from exact."""
    adapter = load_adapter("mlx")
    result = verdict(adapter, "rope/half/large-positions")
    assert result.status == "pass" and result.phase == "product", result.detail
    assert "beyond the float32 product-class bound" in result.detail and result.max_abs_err > 1e-3
    adapter.capabilities = dataclasses.replace(adapter.capabilities, phase="exact")
    assert verdict(adapter, "rope/half/large-positions").status == "fail"  # not what MLX could claim
