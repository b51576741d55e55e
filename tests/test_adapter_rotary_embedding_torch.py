"""The rotary-embedding-torch adapter's verdicts on chosen cases (skipped without the library).

Run from a venv made by scripts/matrix/setup_rotary_embedding_torch.sh.  Also checks xpos_scale
and rope_from_base (interpolate_factor) directly against mpmath, beside their golden verdicts.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip(
    "rotary_embedding_torch",
    reason="rotary-embedding-torch is not installed (scripts/matrix/setup_rotary_embedding_torch.sh)",
    exc_type=ImportError,
)

from posenc_ref_conformance.adapters.rotary_embedding_torch import RotaryEmbeddingTorchAdapter
from posenc_ref_conformance.compare import as_numpy
from posenc_ref_conformance.oracle import rope as oracle_rope
from posenc_ref_conformance.oracle._numeric import mp

from .adapter_cases import verdict


@pytest.fixture(scope="module")
def adapter():
    return RotaryEmbeddingTorchAdapter()


@pytest.mark.parametrize(
    ("case_id", "dtype"),
    [
        ("rope_frequencies/ntk/factor-8", "float32"),
        ("rope/interleaved/partial-r8-d12", "float64"),
        ("rope/interleaved/yarn-attention-factor", "float32"),
        ("rope_cos_sin/interleaved/batched-offsets", "float64"),
        ("xpos_scale/interleaved/lucidrains-centre-16", "float32"),
        ("xpos_scale/interleaved/lucidrains-centre-odd-length", "float32"),
        ("rope_from_base/interleaved/linear-factor-4", "float32"),  # interpolate_factor on positions
        ("rope_from_base/interleaved/ntk-factor-8", "float32"),  # theta_rescale_factor
        ("rope_heads/interleaved/bshd-offsets-partial", "float64"),  # seq_dim=-3, one offset per row
    ],
)
def test_passes(adapter, case_id, dtype):
    result = verdict(adapter, case_id, dtype)
    assert result.status == "pass", result.detail


def test_dim_2_is_a_detected_bug(adapter):
    result = verdict(adapter, "rope_frequencies/default/d2")
    assert result.status == "fail"
    assert "ZeroDivisionError" in result.detail


def test_large_positions_are_a_float64_product(adapter):
    """A float64 product m * theta is off by ~m * theta * 2**-53: the product class, not exact."""
    result = verdict(adapter, "rope/interleaved/large-positions", "float64")
    assert result.status == "pass" and result.phase == "product", result.detail
    assert 1e-12 < result.max_abs_err < 1e-8


def test_xpos_centre_other_than_half_the_length_is_out_of_reach(adapter):
    """get_scale centres at len(positions) // 2: the paper's centre 0 and a decoding centre are not its."""
    for case in ("xpos_scale/interleaved/paper-d8", "xpos_scale/interleaved/decoding-centre"):
        result = verdict(adapter, case)
        assert result.status == "skip" and "centres xPos at len(positions) // 2" in result.detail


def test_xpos_scale_matches_the_formula(adapter):
    """get_scale: zeta_i ** ((m - L//2) / B), zeta_i = (2i/d + 0.4) / 1.4, repeated per pair.

    The library builds zeta in float32 (then .double()): a relative error 2**-24 in zeta becomes
    |m - c| / B * 2**-24 <= 3/512 * 6e-8 ~ 4e-10 in the scale, hence rtol 1e-9 in float64.
    """
    positions, dim, base = np.arange(7), 8, 512.0
    q_scale, k_scale = adapter.xpos_scale(
        positions, dim, scale_base=base, gamma=0.4, offset=3, layout="interleaved", dtype="float64"
    )  # not a golden case: a float64 run, judged at the float32 zeta's error
    expected = np.array(
        [
            [
                float(
                    mp.power(
                        (mp.mpf(2 * (c // 2)) / dim + mp.mpf("0.4")) / mp.mpf("1.4"),
                        mp.mpf(int(m) - 3) / base,
                    )
                )
                for c in range(dim)
            ]
            for m in positions
        ]
    )
    np.testing.assert_allclose(as_numpy(q_scale), expected, rtol=1e-9)
    np.testing.assert_allclose(as_numpy(k_scale), 1 / expected, rtol=1e-9)


def test_interpolate_factor_is_linear_scaling(adapter):
    """interpolate_factor s divides positions: the rotation of HF 'linear' scaling (theta / s)."""
    rng = np.random.default_rng(3)
    x = (rng.integers(-64, 65, size=(5, 16)) / 32).astype(np.float32)
    positions = np.arange(40, 45)
    scaling = {"rope_type": "linear", "factor": 4.0}
    got = as_numpy(
        adapter.rope_from_base(
            x, positions, dim=16, base=10000.0, scaling=scaling, seq_len=None, layout="interleaved"
        )
    )
    inv, _ = oracle_rope.rope_frequencies(16, base=10000.0, scaling=scaling)
    exact = [
        [
            float(v)
            for v in oracle_rope.rotate(
                list(map(float, row)), int(p), inv, attention_factor=1, layout="interleaved"
            )
        ]
        for row, p in zip(x, positions, strict=True)
    ]
    np.testing.assert_allclose(got, np.array(exact), atol=2e-6)
