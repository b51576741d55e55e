"""The keras-hub adapter's verdicts on chosen cases (skipped without keras-hub).

Run from a venv made by scripts/matrix/setup_keras_hub.sh (Keras on the torch backend).  Also checks
rope_from_base directly against mpmath: linear and YaRN agree, "dynamic" is linear scaling by
factor**(d/(d-2)) (docs/matrix/repro/keras_hub_dynamic_rope.py).
"""

from __future__ import annotations

import os

import numpy as np
import pytest

os.environ.setdefault("KERAS_BACKEND", "torch")
pytest.importorskip(
    "keras_hub", reason="keras-hub is not installed (scripts/matrix/setup_keras_hub.sh)", exc_type=ImportError
)

from posenc_ref_conformance.adapters.keras_hub import KerasHubAdapter
from posenc_ref_conformance.compare import as_numpy
from posenc_ref_conformance.oracle import rope as oracle_rope

from .adapter_cases import verdict

DIM = 16


@pytest.fixture(scope="module")
def adapter():
    return KerasHubAdapter()


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("sinusoidal/vaswani/odd-dim-5", "float64"),
        ("sinusoidal/vaswani/batched-offsets", "float32"),
        ("learned/plain/batched", "float64"),
        ("rope/half/offset-100", "float32"),
        ("alibi_slopes/max-bias-8/heads-12", "float64"),
        ("alibi_bias/causal/12-heads", "float32"),
        ("alibi_bias_from_heads/causal/mpt-max-bias-16", "float64"),  # alibi_bias_max
        ("rope_from_base/half/yarn-gpt-oss", "float32"),  # rope_type="yarn", truncate=False
        ("rope_from_base/half/linear-factor-3", "float32"),
        ("rope_heads/half/bhsd-shared-positions", "float32"),  # sequence_axis=2
        ("rope_heads/half/bshd-shared-positions", "float32"),  # sequence_axis=1
    ],
)
def test_passes(adapter, case_id, dtype):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "pass", result.detail


def test_large_positions_are_a_float32_product(adapter):
    result = verdict(adapter, "rope/half/large-positions")
    assert result.status == "pass" and result.phase == "product", result.detail
    assert result.max_abs_err > 1e-3


def test_dynamic_rope_type_is_detected(adapter):
    result = verdict(adapter, "rope_from_base/half/dynamic-seq-len-1000")
    assert result.status == "fail" and result.max_abs_err > 1


def _exact(x, positions, scaling):
    inv, factor = oracle_rope.rope_frequencies(DIM, base=10000.0, scaling=scaling, seq_len=64)
    return np.array(
        [
            [
                float(v)
                for v in oracle_rope.rotate(
                    list(map(float, row)), int(p), inv, attention_factor=factor, layout="half"
                )
            ]
            for row, p in zip(x, positions, strict=True)
        ]
    )


def _x():
    return (np.random.default_rng(4).integers(-64, 65, size=(5, DIM)) / 32).astype(np.float32)


@pytest.mark.parametrize(
    "scaling",
    [
        {"rope_type": "linear", "factor": 4.0},
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64},
        {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64, "truncate": False},
    ],
)
def test_rope_from_base_scalings_agree(adapter, scaling):
    x, positions = _x(), np.arange(3, 8)
    got = as_numpy(
        adapter.rope_from_base(
            x, positions, dim=DIM, base=10000.0, scaling=scaling, seq_len=64, layout="half"
        )
    )
    np.testing.assert_allclose(got, _exact(x, positions, scaling), atol=2e-6)


def test_dynamic_is_linear_scaling_by_factor_power(adapter):
    """keras-hub 'dynamic' = frequencies / s**(d/(d-2)) at every length: not HF's dynamic NTK."""
    x, positions = _x(), np.arange(3, 8)
    dynamic = {
        "rope_type": "dynamic",
        "factor": 2.0,
        "max_position_embeddings": 64,
        "original_max_position_embeddings": 64,
    }
    got = as_numpy(
        adapter.rope_from_base(
            x, positions, dim=DIM, base=10000.0, scaling=dynamic, seq_len=64, layout="half"
        )
    )
    assert np.max(np.abs(got - _exact(x, positions, dynamic))) > 0.1
    linear = {"rope_type": "linear", "factor": 2.0 ** (DIM / (DIM - 2))}
    np.testing.assert_allclose(got, _exact(x, positions, linear), atol=2e-6)
