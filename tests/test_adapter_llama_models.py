"""The llama-models adapters' verdicts on chosen cases (skipped without llama-models).

Run from a venv made by scripts/matrix/setup_llama_models.sh.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip(
    "llama_models.llama3.model",
    reason="llama-models is not installed (scripts/matrix/setup_llama_models.sh)",
    exc_type=ImportError,
)

import torch

from posenc_ref_conformance.adapters.llama_models import Llama3Adapter, Llama4Adapter
from posenc_ref_conformance.compare import as_numpy

from .adapter_cases import case_inputs, verdict


@pytest.fixture(scope="module")
def llama3():
    return Llama3Adapter()


@pytest.fixture(scope="module")
def llama4():
    return Llama4Adapter()


@pytest.fixture(params=["llama3", "llama4"])
def adapter(request, llama3, llama4):
    return {"llama3": llama3, "llama4": llama4}[request.param]


@pytest.mark.parametrize(
    "case_id",
    [
        "rope_frequencies/default/d128-llama3-base",
        "rope_frequencies/llama3/llama3.1",  # both copies band like HF (factor 8, 1, 4, 8192)
        "rope_cos_sin/interleaved/batched-offsets",  # one offset per row, sliced from one table
        "rope_cos_sin/interleaved/run-2e20-d16",
        "apply_rope/interleaved/attention-factor-below-1",  # the factor rides in |cos + i sin|
        "rope/interleaved/offset-100",
        "rope_heads/interleaved/bshd-shared-positions",
        "rope_from_base/interleaved/llama3.1",  # use_scaled: Meta's own bands from the base
        "rope_from_base/interleaved/run-2e20-llama3.1",
    ],
)
def test_passes(adapter, case_id):
    result = verdict(adapter, case_id, "float32")
    assert result.status == "pass", result.detail


def test_llama4_takes_the_scale_factor_and_high_freq_factor(llama3, llama4):
    """Llama 4 Scout's equal factors (16, 1, 1, 8192) are llama4's arguments; llama3 hard-codes 8, 1, 4."""
    for case_id in ("rope_frequencies/llama3/equal-factors", "rope_frequencies/llama3/unit-factor"):
        assert verdict(llama4, case_id).status == "pass"
        skipped = verdict(llama3, case_id)
        assert skipped.status == "skip" and "hard-codes" in skipped.detail, skipped.detail
    low = verdict(llama4, "rope_frequencies/llama3/equal-factors-2")  # low_freq_factor 2
    assert low.status == "skip" and "['low_freq_factor']" in low.detail, low.detail


@pytest.mark.parametrize(("case_id", "parameter"), [("odd-dim", "dim"), ("base-1", "base")])
def test_invalid_parameters_are_not_rejected(adapter, case_id, parameter):
    result = verdict(adapter, f"rope_frequencies/invalid/{case_id}")
    assert result.status == "fail"
    assert f"expected ValueError about '{parameter}'" in result.detail, result.detail


def test_llama4_accepts_inverted_bands(llama3, llama4):
    result = verdict(llama4, "rope_frequencies/invalid/llama3-factor-order")
    assert result.status == "fail"
    assert "expected ValueError about 'high_freq_factor'" in result.detail, result.detail
    assert verdict(llama3, "rope_frequencies/invalid/llama3-factor-order").status == "skip"


@pytest.mark.parametrize(
    ("case_id", "why"),
    [
        ("rope_cos_sin/half/basic-d8", "layout 'half' not supported"),
        ("rope/interleaved/apply-partial-r4-d10", "rotates the whole head dim"),
        ("rope/interleaved/apply-attention-factor-below-1", "no attention factor"),
        ("rope_heads/interleaved/bhsd-shared-positions", "head_layout 'bhsd' not supported"),
        ("rope_cos_sin/interleaved/large-positions-d16", "not a run p0, p0 + 1"),
        ("rope_from_base/interleaved/run-2e24-llama2-d128", "over 2 GiB"),
        ("rope_cos_sin/interleaved/large-positions-llama3.1", "not base**(-2i/d)"),
        ("rope_frequencies/yarn/gpt-oss", "scaling type 'yarn' not supported"),
        ("apply_rope/unknown/invalid-layout", "takes no layout argument"),
    ],
)
def test_out_of_reach_is_skipped_with_the_reason(adapter, case_id, why):
    result = verdict(adapter, case_id)
    assert result.status == "skip" and why in result.detail, result.detail


def test_frequencies_are_meta_float32_ones(adapter):
    """Reading the angle back from the complex64 table is within 1 ulp of Meta's float32 frequencies."""
    got = as_numpy(
        adapter.rope_frequencies(128, base=500000.0, scaling=None, seq_len=None, dtype="float32")[0]
    )
    meta = (1.0 / (500000.0 ** (torch.arange(0, 128, 2)[:64].float() / 128))).numpy()
    assert got.dtype == np.float32
    assert np.max(np.abs(got.view(np.int32) - meta.view(np.int32))) <= 1


def test_the_two_copies_agree_on_llama31(llama3, llama4):
    """The vectorised llama3 apply_scaling and the llama4 loop give the same float32 bands."""
    freqs = 1.0 / (500000.0 ** (torch.arange(0, 128, 2)[:64].float() / 128))
    assert torch.equal(llama3.model.apply_scaling(freqs), llama4.model.apply_scaling(freqs, 8, 4))


def test_large_positions_are_the_float32_product(llama3):
    """Far from exact, within the product class: a float32 product m * theta with float32 cos/sin."""
    case = "rope/interleaved/large-positions"
    result = verdict(llama3, case)
    assert result.status == "pass" and result.phase == "product", result.detail
    inputs = case_inputs(case)
    x, positions, inv_freq = inputs["x"], inputs["positions"], inputs["inv_freq"]
    theta = (1.0 / (10000.0 ** (torch.arange(0, 16, 2)[:8].float() / 16))).numpy()  # Meta's float32 freqs
    angle = positions.astype(np.float32)[:, None] * theta[None, :]  # one float32 product
    c, s = np.cos(angle).astype(np.float64), np.sin(angle).astype(np.float64)
    even, odd = x[:, 0::2].astype(np.float64), x[:, 1::2].astype(np.float64)
    emulated = np.empty(x.shape)
    emulated[:, 0::2], emulated[:, 1::2] = even * c - odd * s, odd * c + even * s
    got = as_numpy(llama3.rope(x, positions, inv_freq, attention_factor=1.0, layout="interleaved"))
    exact_angle = positions.astype(np.float64)[:, None] * inv_freq[None, :]
    assert np.max(np.abs(angle.astype(np.float64) - exact_angle)) > 1e-3  # far from the exact angle ...
    np.testing.assert_allclose(got, emulated, atol=2e-6)  # ... and equal to the float32-product one
