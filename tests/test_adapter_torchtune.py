"""The torchtune adapter's verdicts on chosen cases (skipped without torchtune).

Run from a venv made by scripts/matrix/setup_torchtune.sh.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip(
    "torchtune", reason="torchtune is not installed (scripts/matrix/setup_torchtune.sh)", exc_type=ImportError
)

from posenc_ref_conformance.adapters.torchtune import TorchtuneAdapter
from posenc_ref_conformance.compare import as_numpy
from posenc_ref_conformance.oracle import rope as oracle_rope

from .adapter_cases import case_inputs, verdict


@pytest.fixture(scope="module")
def adapter():
    return TorchtuneAdapter()


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("rope_frequencies/llama3/llama3.1", "float32"),
        ("rope/interleaved/offset-100", "float32"),
        ("rope/half/batched-heads", "float32"),
        ("t5_bucket/bidirectional/32-128-range", None),
        ("rope_from_base/interleaved/llama3.1", "float32"),  # Llama3ScaledRoPE builds its own bands
        ("rope_from_base/half/default-d16", "float32"),  # Qwen2's half-layout module
        ("rope_heads/interleaved/bshd-shared-positions", "float32"),  # forward(x [b, s, h, d], input_pos)
        ("t5_bias/bidirectional/block-of-70000", "float64"),  # the encoder's bias table, the case's weights
    ],
)
def test_passes(adapter, case_id, dtype):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "pass", result.detail


def test_invalid_llama3_bands_are_not_rejected(adapter):
    result = verdict(adapter, "rope_frequencies/invalid/llama3-factor-order")
    assert result.status == "fail"
    assert "expected ValueError about 'high_freq_factor'" in result.detail


@pytest.mark.parametrize(
    ("case_id", "why"),
    [
        ("rope_from_base/half/linear-factor-4", "scaling type 'linear' not supported"),
        ("rope_from_base/half/partial-d8-of-12", "rotates the whole head dim"),
        ("rope_heads/half/bhsd-shared-positions", "head_layout 'bhsd' not supported"),
        ("t5_bias/causal/decode-step", "bidirectional"),
    ],
)
def test_out_of_reach_is_skipped_with_the_reason(adapter, case_id, why):
    result = verdict(adapter, case_id)
    assert result.status == "skip" and why in result.detail, result.detail


def test_large_positions_are_the_float32_product(adapter):
    """Far from exact, within the product class: emulating a float32 product m * theta reproduces it."""
    case = "rope/interleaved/large-positions"
    result = verdict(adapter, case)
    assert result.status == "pass" and result.phase == "product", result.detail
    inputs = case_inputs(case)
    x, positions = inputs["x"], inputs["positions"]
    theta = as_numpy(
        adapter.rope_frequencies(16, base=10000.0, scaling=None, seq_len=None, dtype="float32")[0]
    )
    angle = (positions.astype(np.float32)[:, None] * theta[None, :]).astype(np.float64)  # one float32 product
    emulated = _rotate_by_angles(x.astype(np.float64), angle)
    got = as_numpy(adapter.rope(x, positions, inputs["inv_freq"], attention_factor=1.0, layout="interleaved"))
    exact = np.array(
        [
            oracle_rope.rotate(
                list(map(float, row)),
                int(p),
                list(map(float, inputs["inv_freq"])),
                attention_factor=1,
                layout="interleaved",
            )
            for row, p in zip(x, positions, strict=True)
        ],
        dtype=np.float64,
    )
    assert np.max(np.abs(got - exact)) > 1e-3  # far from the exact rotation ...
    np.testing.assert_allclose(got, emulated, atol=2e-6)  # ... and equal to the float32-product one


def _rotate_by_angles(x: np.ndarray, angle: np.ndarray) -> np.ndarray:
    """Interleaved rotation of rows x[s] by per-pair angles angle[s] (float64)."""
    c, s = np.cos(angle), np.sin(angle)
    even, odd = x[:, 0::2], x[:, 1::2]
    out = np.empty_like(x)
    out[:, 0::2], out[:, 1::2] = even * c - odd * s, odd * c + even * s
    return out
