"""The built-in mlx adapter and the teaching copy in docs/examples agree on every verdict they share.

The teaching copy maps sinusoidal, rope and the ALiBi pair; the built-in adapter also maps
rope_heads, rope_from_base (nn.RoPE) and alibi_bias_from_heads, checked here on golden cases.
"""

from __future__ import annotations

import dataclasses
import pathlib

import pytest

pytest.importorskip(
    "mlx.core", reason="mlx is not installed (pip install 'posenc-ref[mlx]')", exc_type=ImportError
)

from posenc_ref_conformance.adapters import load_adapter
from posenc_ref_conformance.runner import run

from .adapter_cases import verdict

EXAMPLE = pathlib.Path(__file__).resolve().parents[1] / "docs" / "examples" / "mlx_adapter.py"


def test_docs_example_agrees_with_the_builtin_adapter():
    example_adapter = load_adapter(str(EXAMPLE))
    shared = {f for f in ("sinusoidal", "rope", "alibi_slopes", "alibi_bias") if example_adapter.supports(f)}
    assert shared == {"sinusoidal", "rope", "alibi_slopes", "alibi_bias"}
    builtin = {r.result_id: r.status for r in run(load_adapter("mlx")).results if r.function in shared}
    example = {r.result_id: r.status for r in run(example_adapter).results if r.function in shared}
    assert builtin.keys() == example.keys()
    differ = sorted(k for k in builtin if builtin[k] != example[k])
    assert not differ, differ[:10]
    assert sum(s == "pass" for s in builtin.values()) > 0


@pytest.mark.parametrize(
    "case_id",
    [
        "rope_from_base/interleaved/linear-factor-3",  # nn.RoPE(scale=1/3): positions scaled
        "rope_from_base/half/llama2-d128",  # nn.RoPE's own float32 frequencies
        "rope_heads/half/bhsd-offsets-partial",  # mx.fast.rope with one offset per batch row
        "alibi_bias_from_heads/causal/12-heads",  # nn.ALiBi's own slopes, symmetric matrix
    ],
)
def test_builtin_calls_beyond_the_example(case_id):
    result = verdict(load_adapter("mlx"), case_id)
    assert result.status == "pass", result.detail


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
