"""The onnxruntime adapters' verdicts on chosen cases (skipped without onnxruntime).

Run from a venv made by scripts/matrix/setup_onnxruntime.sh.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip(
    "onnxruntime",
    reason="onnxruntime is not installed (scripts/matrix/setup_onnxruntime.sh)",
    exc_type=ImportError,
)
pytest.importorskip(
    "onnx", reason="onnx is not installed (scripts/matrix/setup_onnxruntime.sh)", exc_type=ImportError
)

from posenc_ref_conformance.adapters import Unsupported, load_adapter
from posenc_ref_conformance.adapters.onnxruntime import ADAPTERS
from posenc_ref_conformance.compare import as_numpy

from .adapter_cases import case_inputs, verdict

VARIANTS = sorted(ADAPTERS)


@pytest.fixture(scope="module", params=VARIANTS)
def adapter(request):
    return ADAPTERS[request.param]()


def test_specs_load_the_two_operators():
    assert load_adapter("onnxruntime").describe()["operator"].startswith("com.microsoft.RotaryEmbedding")
    assert "opset 23" in load_adapter("onnxruntime:onnx").describe()["operator"]


@pytest.mark.parametrize(
    "case_id",
    [
        "apply_rope/half/full-d8",
        "apply_rope/half/partial-r4-d10",  # rotary_embedding_dim = 4 of 10; the rest copied by the op
        "apply_rope/interleaved/partial-r4-d10",
        "apply_rope/half/batched-heads",  # 4-D x: the op's [batch, num_heads, seq, head_size]
        "apply_rope/interleaved/batched-heads",
        "apply_rope/interleaved/attention-factor-yarn",  # the factor is in the case's table
        "apply_rope/half/attention-factor-below-1",  # 3-D x: [batch, seq, hidden], num_heads 1
    ],
)
def test_passes(adapter, case_id):
    result = verdict(adapter, case_id)
    assert result.status == "pass", result.detail


@pytest.mark.parametrize(
    ("case_id", "dtype", "why"),
    [
        ("apply_rope/unknown/invalid-layout", "float32", "takes no layout argument to check 'neox'"),
        ("apply_rope/half/full-d8", "float64", "float and float16 kernels only"),
        ("rope_heads/half/bhsd-shared-positions", "float32", "does not implement rope_heads"),
    ],
)
def test_out_of_reach_is_skipped_with_the_reason(adapter, case_id, dtype, why):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "skip" and why in result.detail, result.detail


def test_layouts_reach_the_operator(adapter):
    """The same tables rotate differently in the two layouts: the op's ``interleaved`` is set."""
    inputs = case_inputs("apply_rope/half/full-d8")
    x, cos, sin = inputs["x"], inputs["cos"], inputs["sin"]
    half = as_numpy(adapter.apply_rope(x, cos, sin, layout="half"))
    pairs = (
        np.repeat(cos[:, : cos.shape[1] // 2], 2, axis=1),
        np.repeat(sin[:, : sin.shape[1] // 2], 2, axis=1),
    )
    interleaved = as_numpy(adapter.apply_rope(x, *pairs, layout="interleaved"))
    assert half.shape == interleaved.shape == x.shape and half.dtype == np.float32
    assert np.max(np.abs(half - interleaved)) > 0.1


def test_rows_are_the_tables_rows_in_order(adapter):
    """Row s of x is rotated by row s of the table (position_ids 0..S-1 gather it)."""
    inputs = case_inputs("apply_rope/half/full-d8")
    x, cos, sin = inputs["x"], inputs["cos"], inputs["sin"]
    whole = as_numpy(adapter.apply_rope(x, cos, sin, layout="half"))
    for s in range(x.shape[0]):
        row = as_numpy(adapter.apply_rope(x[s : s + 1], cos[s : s + 1], sin[s : s + 1], layout="half"))
        np.testing.assert_array_equal(row[0], whole[s])


def test_a_table_the_op_cannot_hold_is_unsupported(adapter):
    """Paired channels with different values have no one-column-per-pair cache."""
    inputs = case_inputs("apply_rope/half/full-d8")
    cos = inputs["cos"].copy()
    cos[:, -1] += 0.5
    with pytest.raises(Unsupported, match="paired channels differ"):
        adapter.apply_rope(inputs["x"], cos, inputs["sin"], layout="half")
