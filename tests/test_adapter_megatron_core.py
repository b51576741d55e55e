"""The megatron-core adapter's verdicts on chosen cases (skipped without megatron-core).

Run from a venv made by scripts/matrix/setup_megatron_core.sh.
"""

from __future__ import annotations

import pytest

pytest.importorskip(
    "megatron.core",
    reason="megatron-core is not installed (scripts/matrix/setup_megatron_core.sh)",
    exc_type=ImportError,
)

import torch

from posenc_ref_conformance.adapters.megatron_core import MegatronCoreAdapter

from .adapter_cases import verdict

needs_no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="on CUDA these cases run")
needs_cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="megatron-core's YaRN needs CUDA")


@pytest.fixture(scope="module")
def adapter():
    return MegatronCoreAdapter()


@pytest.mark.parametrize(
    "case_id",
    [
        "rope_frequencies/llama3/llama3.1",  # inv_freq of RotaryEmbedding(rope_scaling=True)
        "rope_frequencies/linear/factor-4",  # seq_len_interpolation_factor: the angle at position 1
        "rope_cos_sin/half/batched-offsets",  # get_cos_sin(n, offset) per row
        "rope_cos_sin/interleaved/run-2e20-d16",
        "rope/interleaved/apply-partial-r4-d10",  # rotary_percent = 4 / 10
        "rope/half/apply-attention-factor-below-1",  # apply_rotary_pos_emb(..., mscale)
        "rope_heads/interleaved/bhsd-offsets-partial",  # one batch row (its own offset) at a time
        "rope_heads/half/thd-offsets-partial",  # packed sequences: cu_seqlens, each from position 0
        "rope_from_base/half/linear-factor-3",
        "rope_from_base/interleaved/llama3.1",
    ],
)
def test_passes(adapter, case_id):
    result = verdict(adapter, case_id)
    assert result.status == "pass", result.detail


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case_id", ["apply_rope/half/full-d8", "apply_rope/interleaved/batched-heads"])
def test_cos_sin_fallback_rotates_by_cos_of_cos(adapter, case_id, dtype):
    """Without flash-attn, apply_rotary_pos_emb_with_cos_sin takes cos/sin as angles (a bug)."""
    result = verdict(adapter, case_id, dtype)
    assert result.status == "fail", result.detail
    assert "judged elements outside tolerance" in result.detail
    assert result.max_abs_err > 1.0


@pytest.mark.parametrize(
    ("case_id", "parameter"),
    [
        ("rope_frequencies/invalid/odd-dim", "dim"),
        ("rope_frequencies/invalid/base-1", "base"),
        ("rope_frequencies/invalid/factor-below-1", "factor"),
        ("rope_from_base/half/invalid-dim-above-width", "dim"),  # rotary_percent 2.0 is clamped to 1
    ],
)
def test_invalid_parameters_are_not_rejected(adapter, case_id, parameter):
    result = verdict(adapter, case_id)
    assert result.status == "fail"
    assert f"returned a value; expected ValueError about {parameter!r}" in result.detail


@pytest.mark.parametrize(
    ("case_id", "why"),
    [
        ("rope_frequencies/llama3/equal-factors", "fixes high_freq_factor=4.0"),
        ("rope_frequencies/ntk/factor-8", "scaling type 'ntk' not supported"),
        ("rope_frequencies/yarn/mscale-only", "yarn-attention-factor: hf"),  # megatron's is DeepSeek's
        ("rope_frequencies/yarn-deepseek/truncate-false-ignored", "yarn-truncate: ignored"),  # honoured
        ("rope_frequencies/yarn/explicit-attention-factor", "yarn-attention-factor: hf"),
        ("rope_from_base/interleaved/yarn-gpt-oss", "does not support interleaved"),
        ("rope_cos_sin/half/reach-sweep", "not a run p0, p0 + 1"),
        ("rope/half/yarn-attention-factor", "builds its frequencies from a base"),
        ("mrope_angles/interleaved-qwen3-vl", "chunked sections"),
        ("apply_rope/unknown/invalid-layout", "takes no layout argument"),
    ],
)
def test_out_of_reach_is_skipped_with_the_reason(adapter, case_id, why):
    result = verdict(adapter, case_id)
    assert result.status == "skip" and why in result.detail, result.detail


@needs_no_cuda
@pytest.mark.parametrize(
    ("case_id", "module"),
    [
        ("rope_frequencies/yarn/gpt-oss", "YarnRotaryEmbedding"),
        ("rope_from_base/half/yarn-deepseek/mscale-only", "YarnRotaryEmbedding"),
        ("mrope_angles/chunked-qwen2-vl", "MultimodalRotaryEmbedding"),
    ],
)
def test_cuda_only_modules_are_skipped_on_cpu(adapter, case_id, module):
    result = verdict(adapter, case_id)
    assert result.status == "skip" and f"{module} needs CUDA" in result.detail, result.detail


@needs_cuda
@pytest.mark.parametrize(
    "case_id",
    [
        "rope_frequencies/yarn-deepseek/mscale-only",  # DeepSeek's attention factor
        "rope_frequencies/yarn/llama2-no-truncate",  # correction_range_round_to_int=False
        "rope_from_base/half/yarn-gpt-oss",
        "mrope_angles/chunked-qwen2-vl",
    ],
)
def test_cuda_modules_pass(adapter, case_id):
    result = verdict(adapter, case_id)
    assert result.status == "pass", result.detail
