"""The x-transformers adapter's verdicts on chosen cases (skipped without the library).

Run from a venv made by scripts/matrix/setup_x_transformers.sh.  Also checks, against the papers'
formulas, what the adapter's docstring claims of the library: the interleaved pairs of
``rotate_half``, the ALiBi slopes of non-power-of-two head counts, the xPos centre and the
initial scale of ``ScaledSinusoidalEmbedding``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip(
    "x_transformers",
    reason="x-transformers is not installed (scripts/matrix/setup_x_transformers.sh)",
    exc_type=ImportError,
)

import torch
from x_transformers import x_transformers as xt

from posenc_ref_conformance.adapters.x_transformers import XTransformersAdapter
from posenc_ref_conformance.compare import as_numpy

from .adapter_cases import verdict


@pytest.fixture(scope="module")
def adapter():
    return XTransformersAdapter()


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("rope_frequencies/ntk/factor-8", "float32"),  # base_rescale_factor
        ("rope_cos_sin/interleaved/batched-offsets", "float64"),  # inv_freq loaded, float64 kept
        ("rope/interleaved/partial-r8-d12", "float64"),  # partial rotary is native
        ("rope/interleaved/yarn-attention-factor", "float32"),  # scale = attention factor
        ("rope_heads/interleaved/bhsd-offsets-partial", "float64"),  # forward(positions[b, n])
        ("rope_from_base/interleaved/linear-factor-4", "float32"),  # interpolation_factor
        ("rope_from_base/interleaved/ntk-factor-8", "float32"),
        ("xpos_scale/interleaved/lucidrains-centre-16", "float32"),
        ("xpos_scale/interleaved/lucidrains-centre-odd-length", "float32"),
        ("alibi_slopes/max-bias-8/heads-6", "float32"),  # non-power-of-two: the paper's interleave
        ("alibi_slopes/max-bias-8/heads-112", "float32"),
        ("alibi_bias/symmetric/12-heads", "float32"),
        ("alibi_bias_from_heads/symmetric/block-of-65536", "float32"),
        ("t5_bias/umt5/decoder-layer-7", "float64"),  # causal, a block sliced from forward(i, j)
        ("t5_bias/bidirectional/batched", "float32"),  # one forward per row
        ("t5_bias/causal/36-50-tie", "float64"),  # queries after the keys
        ("t5_bias/invalid/table-3d", "float32"),  # load_state_dict rejects the shape
        ("sinusoidal/marian/basic-d8", "float32"),
        ("learned/plain/batched", "float64"),
        ("learned/plain/invalid-past-table", "float32"),  # nn.Embedding: IndexError
    ],
)
def test_passes(adapter, case_id, dtype):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "pass", result.detail


def test_dim_2_is_a_detected_bug(adapter):
    result = verdict(adapter, "rope_frequencies/default/d2")
    assert result.status == "fail"
    assert "ZeroDivisionError" in result.detail


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("rope_frequencies/invalid/odd-dim", "float32"),
        ("rope_frequencies/invalid/base-1", "float32"),
        ("t5_bias/invalid/max-distance", "float64"),
        ("alibi_bias_from_heads/invalid/float-positions", "float32"),
    ],
)
def test_missing_validation_is_detected(adapter, case_id, dtype):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "fail"
    assert "returned a value" in result.detail


@pytest.mark.parametrize(
    ("case_id", "dtype", "reason"),
    [
        ("xpos_scale/interleaved/paper-d8", "float32", "centres xPos at (max(positions) + 1) // 2 = 500"),
        ("xpos_scale/interleaved/decoding-centre", "float32", "centres xPos at (max(positions) + 1) // 2"),
        ("alibi_slopes/max-bias-16/heads-8", "float32", "fixes max_bias at 8"),
        ("alibi_bias/causal/12-heads", "float32", "form 'causal' not supported"),
        ("t5_bias/bidirectional/32-128-range", "float64", "not a run p0, p0 + 1"),
        ("sinusoidal/marian/odd-dim-5", "float32", "asserts an even dim"),
        ("rope/half/basic-d8", "float32", "layout 'half' not supported"),
        ("rope_heads/interleaved/bshd-offsets-partial", "float32", "head_layout 'bshd' not supported"),
        ("rope_frequencies/default/d8", "float64", "builds inv_freq in float32"),
    ],
)
def test_out_of_reach_is_skipped(adapter, case_id, dtype, reason):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "skip" and reason in result.detail, result.detail


def test_large_positions_are_a_float64_product(adapter):
    """A float64 product m * theta is off by ~m * theta * 2**-53: the product class, not exact."""
    result = verdict(adapter, "rope/interleaved/large-positions", "float64")
    assert result.status == "pass" and result.phase == "product", result.detail
    assert 1e-12 < result.max_abs_err < 1e-8


def test_rotate_half_pairs_neighbours():
    """Despite its name, rotate_half pairs channels (2i, 2i+1): [-x1, x0, -x3, x2]."""
    x = torch.tensor([1.0, 2.0, 3.0, 4.0])
    assert xt.rotate_half(x).tolist() == [-2.0, 1.0, -4.0, 3.0]
    freqs, _ = xt.RotaryEmbedding(4)(torch.tensor([1]))
    assert freqs[0, 0, 0] == freqs[0, 0, 1] and freqs[0, 0, 2] == freqs[0, 0, 3]


@pytest.mark.parametrize("heads", [3, 5, 6, 12, 20])
def test_alibi_slopes_follow_the_paper(heads):
    """Press et al.: 2**(-8k/n) for the nearest power of two n, then every other slope of 2n."""

    def power_of_two(n: int) -> list[float]:
        return [2.0 ** (-8.0 * k / n) for k in range(1, n + 1)]

    closest = 2 ** math.floor(math.log2(heads))
    paper = power_of_two(closest) + power_of_two(2 * closest)[0::2][: heads - closest]
    got = xt.AlibiPositionalBias(heads).slopes.reshape(-1).double().numpy()
    np.testing.assert_allclose(got, paper, rtol=2**-23)


def test_scaled_sinusoid_scale_starts_at_dim_to_the_minus_half():
    module = xt.ScaledSinusoidalEmbedding(64)
    assert module.scale.shape == (1,)
    assert float(module.scale.detach()) == pytest.approx(64**-0.5, rel=2**-23)


def test_xpos_centre_is_half_the_largest_position_plus_one(adapter):
    """forward(t): power (t - (max(t) + 1) // 2) / B; positions 3..9 centre at 5, not at len // 2 = 3."""
    positions, dim, base = np.arange(3, 10), 8, 512.0
    q_scale, k_scale = adapter.xpos_scale(
        positions, dim, scale_base=base, gamma=0.4, offset=5, layout="interleaved", dtype="float32"
    )
    zeta = np.array([(2 * (c // 2) + 0.4 * dim) / (1.4 * dim) for c in range(dim)])
    expected = zeta[None, :] ** ((positions[:, None] - 5) / base)
    np.testing.assert_allclose(as_numpy(q_scale), expected, rtol=1e-6)
    np.testing.assert_allclose(as_numpy(k_scale), 1 / expected, rtol=1e-6)
