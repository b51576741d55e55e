"""The mlx_lm adapter's verdicts on chosen cases (skipped without mlx-lm).

Run from a venv made by scripts/matrix/setup_mlx_lm.sh.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

pytest.importorskip(
    "mlx_lm", reason="mlx-lm is not installed (scripts/matrix/setup_mlx_lm.sh)", exc_type=ImportError
)

from posenc_ref_conformance.adapters import Unsupported, load_adapter
from posenc_ref_conformance.adapters.mlx_lm import MlxLmAdapter
from posenc_ref_conformance.compare import as_numpy
from posenc_ref_conformance.runner import run

from .adapter_cases import case_inputs, verdict


@pytest.fixture
def adapter():
    return MlxLmAdapter()


def _call(adapter, case_id, **changes):
    """The adapter's output on ``case_id``'s inputs (float32), with ``changes`` to its keywords."""
    inputs = case_inputs(case_id)
    kwargs = {k: inputs[k] for k in ("dim", "base", "scaling", "seq_len", "layout")} | changes
    return as_numpy(adapter.rope_from_base(inputs["x"], inputs["positions"], **kwargs))


def test_loads_by_name():
    assert isinstance(load_adapter("mlx_lm"), MlxLmAdapter)


@pytest.mark.parametrize(
    "case_id",
    [
        "rope_from_base/half/default-d16",  # nn.RoPE, [2, 4, 16] x
        "rope_from_base/interleaved/partial-d8-of-12",  # traditional=True, 4 channels pass through
        "rope_from_base/half/linear-factor-3",  # nn.RoPE(scale=1/3)
        "rope_from_base/interleaved/dynamic-seq-len-10000",  # DynamicNTKScalingRoPE: offset + S = 10000
        "rope_from_base/half/dynamic-seq-len-1000",  # below max_position_embeddings: unscaled
        "rope_from_base/interleaved/llama3.1",  # Llama3RoPE's bands
        "rope_from_base/half/longrope-seq-len-4097",  # SuScaledRoPE: long factors, mscale on x
        "rope_from_base/interleaved/proportional-half-factor-8",  # ProportionalRoPE: inf periods in the tail
        "rope_from_base/half/yarn-deepseek/mscale-only",  # YarnRoPE: mscale / get_mscale(s, 0)
        "rope_from_base/half/invalid-odd-dim",  # mx.fast.rope's ValueError
        "rope_from_base/half/invalid-unknown-type",  # initialize_rope's ValueError
    ],
)
def test_passes(adapter, case_id):
    result = verdict(adapter, case_id)
    assert result.status == "pass", result.detail


def test_large_offsets_are_a_float32_product(adapter):
    """mx.fast.rope forms the angle in float32: within the product class, far from exact at 2**24."""
    result = verdict(adapter, "rope_from_base/half/run-2e24-llama2-d128")
    assert result.status == "pass" and result.phase == "product", result.detail
    assert "beyond the float32 product-class bound" in result.detail


def test_longrope_uses_the_long_factors_at_every_length(adapter):
    """A 4096-token sequence (within original_max) needs the short factors; SuScaledRoPE never reads them."""
    for case_id in (
        "rope_from_base/half/longrope-seq-len-4096",
        "rope_from_base/half/longrope-phi3-ratio/explicit-factor",  # seq_len 100
    ):
        result = verdict(adapter, case_id)
        assert result.status == "fail" and "judged elements outside tolerance" in result.detail, result.detail
    case_id = "rope_from_base/half/longrope-seq-len-4096"
    scaling = case_inputs(case_id)["scaling"]
    other_short = _call(adapter, case_id, scaling={**scaling, "short_factor": [9.0] * 8})
    np.testing.assert_array_equal(_call(adapter, case_id), other_short)


def test_longrope_ignores_traditional(adapter):
    """initialize_rope(traditional=True) builds SuScaledRoPE, which rotates half-split pairs."""
    case_id = "rope_from_base/interleaved/longrope-seq-len-4097"
    result = verdict(adapter, case_id)
    assert result.status == "fail", result.detail
    np.testing.assert_array_equal(_call(adapter, case_id), _call(adapter, case_id, layout="half"))
    assert verdict(adapter, "rope_from_base/half/longrope-seq-len-4097").status == "pass"


def test_yarn_is_deepseeks_and_declared_so(adapter):
    """Declared canonical, YarnRoPE fails gpt-oss (truncate=false): the declared variant is what it does."""
    result = verdict(adapter, "rope_from_base/half/yarn-gpt-oss")
    assert result.status == "skip" and "yarn-truncate: honoured" in result.detail, result.detail
    adapter.capabilities = dataclasses.replace(adapter.capabilities, variants={})
    assert verdict(adapter, "rope_from_base/half/yarn-gpt-oss").status == "fail"
    assert verdict(adapter, "rope_from_base/half/yarn-deepseek/mscale-only").status == "skip"


@pytest.mark.parametrize(
    ("case_id", "why"),
    [
        ("rope_from_base/half/ntk-factor-8", "scaling type 'ntk' not supported"),
        ("rope_from_base/half/proportional-gemma4/half-factor-8", "proportional: gemma4"),
        ("rope_from_base/half/longrope-phi3-ratio/explicit-factor", None),  # runs: the declared variant
    ],
)
def test_out_of_reach_is_skipped_with_the_reason(adapter, case_id, why):
    result = verdict(adapter, case_id)
    if why is None:
        assert result.status != "skip", result.detail
    else:
        assert result.status == "skip" and why in result.detail, result.detail


def test_the_whole_function_fails_only_on_longrope(adapter):
    """Every rope_from_base case: float64 skipped, the only failures the two LongRoPE findings."""
    report = run(adapter, only=["rope_from_base"], invariants=False)
    results = report.results
    assert all(r.status == "skip" for r in results if r.dtype == "float64")
    assert sorted(r.result_id for r in results if r.status == "fail") == [
        "rope_from_base/half/longrope-phi3-ratio/explicit-factor[float32]",
        "rope_from_base/half/longrope-seq-len-4096[float32]",
        "rope_from_base/interleaved/longrope-seq-len-4096[float32]",
        "rope_from_base/interleaved/longrope-seq-len-4097[float32]",
    ]
    assert sum(r.status == "pass" for r in results) >= 25


@pytest.mark.parametrize(
    ("changes", "why"),
    [
        ({"seq_len": 5000}, "takes no seq_len"),  # dynamic: the layer sees offset + S = 10000
        ({"seq_len": None}, "takes no seq_len"),
        ({"layout": "rotated"}, "takes no layout argument"),
    ],
)
def test_what_mlx_lm_cannot_be_told_is_unsupported(adapter, changes, why):
    with pytest.raises(Unsupported, match=why):
        _call(adapter, "rope_from_base/half/dynamic-seq-len-10000", **changes)


def test_positions_must_be_a_run(adapter):
    inputs = case_inputs("rope_from_base/half/default-d16")
    kwargs = {k: inputs[k] for k in ("dim", "base", "scaling", "seq_len", "layout")}
    with pytest.raises(Unsupported, match="scalar offset"):
        adapter.rope_from_base(inputs["x"], np.array([5, 7, 8, 9]), **kwargs)
    with pytest.raises(Unsupported, match="integer offset"):
        adapter.rope_from_base(inputs["x"], np.array([5.0, 6.0, 7.0, 8.0]), **kwargs)
    assert adapter.capabilities.positions_of("rope_from_base") == "consecutive"


def test_max_position_embeddings_is_required_where_used(adapter):
    scaling = {k: v for k, v in case_inputs("rope_from_base/half/dynamic-seq-len-10000")["scaling"].items()}
    del scaling["max_position_embeddings"]
    with pytest.raises(Unsupported, match="max_position_embeddings"):
        _call(adapter, "rope_from_base/half/dynamic-seq-len-10000", scaling=scaling)
