"""Rationale flags: why a golden case exists (Wycheproof-style ``notes``).

Each flag maps to a ``bugType``, a description of the real failure it guards
against, and links to where that failure was reported or the convention lives.
"""

from __future__ import annotations

__all__ = ["NOTES", "add_note"]


def _note(bug_type: str, description: str, *links: str) -> dict[str, object]:
    return {"bugType": bug_type, "description": description, "links": list(links)}


NOTES: dict[str, dict[str, object]] = {
    "Basic": _note("Functionality", "The plain, default configuration of the scheme."),
    "NamedVariant": _note(
        "ConventionMismatch",
        "A formula real implementations ship under a canonical name (a scaling type) "
        "that differs from the canonical one: its cases run for adapters declaring that variant "
        "(CAPABILITIES['variants']), and the canonical cases of the topic are skipped for them, "
        "so a variant is reported as a variant, not as a failure.",
        "https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/rotary_embedding/ntk_scaling_rope.py",
    ),
    "BatchedPositions": _note(
        "Functionality",
        "Positions with leading batch axes and offsets (per-batch rows, KV-cache decoding): "
        "an implementation that assumes arange(L) from 0 fails.",
    ),
    "KVCacheOffset": _note(
        "Functionality",
        "Positions that start past 0, as one decoding step with a KV cache sees them.",
        "https://github.com/huggingface/transformers/pull/17866",
    ),
    "NegativePosition": _note("EdgeCase", "Negative positions, where the formula is defined for them."),
    "LargePosition": _note(
        "NumericalPrecision",
        "Positions 2**20 and beyond, checked against the accuracy claim (float64: "
        "4 ulp, or 4 ulp of 1.0 absolute; float32: 2e-6 absolute) rather than one rounding of the angle: "
        "rounding m*theta to float32/bf16/TF32 (or a float64 product at 2**24) loses this much.",
        "https://github.com/huggingface/transformers/issues/48428",
        "https://github.com/huggingface/transformers/pull/29285",
        "https://github.com/EleutherAI/gpt-neox/issues/1003",
    ),
    "Float32PositionRounding": _note(
        "NumericalPrecision",
        "Position 2**24 + 1 is not a float32: "
        "positions cast to float32 (or bf16/fp16) before the product land on 2**24.",
        "https://github.com/EleutherAI/gpt-neox/pull/1016",
        "https://github.com/huggingface/diffusers/pull/13922",
    ),
    "Reach": _note(
        "NumericalPrecision",
        "A sweep of positions 0, 1 and 2**k - 1, 2**k, 2**k + 1 (to 2**24 + 1; a float64-only case "
        "continues to 2**40) with a model's frequencies: the report states, per dtype, the largest "
        "position up to which every swept position stays within the exact class's tolerance (and "
        "within --reach-atol), the implementation's reach. float32 spacing doubles at each power of two; "
        "2**24 + 1 is the first position a float32 cannot hold.",
        "https://github.com/huggingface/transformers/issues/48428",
        "https://github.com/EleutherAI/gpt-neox/pull/1016",
    ),
    "OddDim": _note(
        "ConventionMismatch",
        "Odd width: vaswani ends with a sine column, tensor2tensor/fairseq pad one zero column, "
        "marian gives sines ceil(d/2) columns; interleaved code that writes pe[:, 1::2] = cos(...) crashes.",
        "https://github.com/ml-explore/mlx/pull/3615",
    ),
    "VaswaniFrequencies": _note(
        "ConventionMismatch", "Frequencies base**(-2k/d) of the paper (XLM, DistilBERT, Marian, keras-hub)."
    ),
    "T2TFrequencies": _note(
        "ConventionMismatch",
        "Geometric frequencies with the num_timescales - 1 denominator "
        "(tensor2tensor, fairseq, Whisper, MLX): not a permutation of the paper's.",
        "https://github.com/tensorflow/tensor2tensor/issues/1423",
        "https://github.com/tensorflow/tensor2tensor/issues/1925",
    ),
    "T2TMinTimescale": _note(
        "ConventionMismatch",
        "tensor2tensor multiplies by min_timescale where dividing was meant; "
        "reproduced as the real code does.",
        "https://github.com/tensorflow/tensor2tensor/issues/1923",
    ),
    "InterleavedLayout": _note(
        "ConventionMismatch",
        "Interleaved pairs (2i, 2i+1): RoFormer, Meta Llama, GPT-J, MLX traditional=True. "
        "Confusing it with the half-split layout silently corrupts q/k.",
        "https://github.com/huggingface/transformers/issues/25199",
        "https://github.com/Dao-AILab/flash-attention/issues/288",
    ),
    "HalfLayout": _note(
        "ConventionMismatch",
        "Half-split pairs (i, i + d/2): GPT-NeoX, HF rotate_half, MLX traditional=False.",
        "https://github.com/ml-explore/mlx-examples/issues/170",
    ),
    "ConcatenatedLayout": _note(
        "ConventionMismatch", "Concatenated [sin | cos] columns rather than interleaved."
    ),
    "PaddingOffset": _note(
        "ConventionMismatch",
        "fairseq/RoBERTa number real tokens from padding_idx + 1: "
        "token 0 sits at row padding_idx + 1, not 0.",
        "https://github.com/huggingface/transformers/issues/1363",
        "https://github.com/huggingface/transformers/issues/9116",
    ),
    "PaddingRow": _note(
        "ConventionMismatch", "The padding token maps to fairseq's all-zero row padding_idx."
    ),
    "MlxScale": _note(
        "ConventionMismatch",
        "mlx.nn.SinusoidalPositionalEncoding scales by sqrt(2/dims) by default; "
        "an explicit 0.0 must be kept.",
        "https://github.com/ml-explore/mlx/pull/4098",
        "https://github.com/ml-explore/mlx/pull/1174",
    ),
    "CosFirst": _note(
        "ConventionMismatch",
        "[cos | sin] halves (MusicGen's get_embedding, MLX cos_first): the same frequencies as "
        "[sin | cos], the halves swapped; the odd width's zero column stays last.",
        "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/musicgen/modeling_musicgen.py",
    ),
    "TableStandardised": _note(
        "ConventionMismatch",
        "PatchTST/PatchTSMixer standardise the whole Vaswani table, (T - mean) / (10 std) with "
        "torch.std's sample (N d - 1) divisor over rows and columns together: a value depends on the "
        "table's row count, and a per-column or population std differs.",
        "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/patchtst/modeling_patchtst.py",
    ),
    "LearnedOffset": _note(
        "ConventionMismatch",
        "Row offsets of learned tables: OPT/BART +2, RoBERTa/fairseq padding_idx + 1.",
        "https://github.com/huggingface/transformers/issues/15292",
    ),
    "PastTable": _note(
        "InvalidInput",
        "A position past the learned table must be an error, not a silent zero row or a device assert.",
        "https://github.com/huggingface/transformers/issues/530",
    ),
    "LinearScaling": _note("Functionality", "Position interpolation: theta / factor (Chen et al. 2023)."),
    "NtkScaling": _note("Functionality", "Static NTK-aware base b * s**(d/(d-2)) (bloc97)."),
    "DynamicNtkLimit": _note(
        "ConventionMismatch",
        "Dynamic NTK below, at and above max_position_embeddings: the base changes only above the limit. "
        "vLLM's static variant applies the scaled base to every length.",
        "https://github.com/vllm-project/vllm/issues/3488",
        "https://github.com/vllm-project/vllm/issues/41236",
    ),
    "DynamicNtkMaxPositions": _note(
        "ConventionMismatch",
        "Dynamic NTK divides by max_position_embeddings, not original_max_position_embeddings.",
        "https://github.com/huggingface/transformers/issues/25104",
    ),
    "YarnTruncate": _note(
        "ConventionMismatch",
        "YaRN truncate=false keeps the exact correction range (gpt-oss); "
        "always flooring/ceiling is wrong there.",
        "https://github.com/vllm-project/vllm/issues/27722",
        "https://github.com/vllm-project/vllm/pull/28244",
    ),
    "YarnAttentionFactor": _note(
        "ConventionMismatch",
        "An explicit attention_factor wins over the mscale formula; dropping it rescales cos/sin.",
        "https://github.com/vllm-project/vllm/pull/46280",
        "https://github.com/ml-explore/mlx-lm/pull/1507",
    ),
    "YarnMscaleRatio": _note(
        "ConventionMismatch",
        "With mscale and mscale_all_dim both set the factor is their get_mscale ratio (1.0 for DeepSeek-V3).",
        "https://github.com/vllm-project/vllm/issues/48621",
    ),
    "YarnMscaleOnly": _note(
        "ConventionMismatch",
        "mscale without mscale_all_dim falls back to 0.1 ln(s) + 1 in HF; "
        "mlx-lm divides by get_mscale(s, 0) = 1.",
        "https://github.com/turboderp-org/exllamav3/issues/259",
    ),
    "YarnFactorFromLengths": _note(
        "ConventionMismatch",
        "Without factor, YaRN derives it as max_position_embeddings / original_max_position_embeddings; "
        "an explicit factor wins.",
        "https://github.com/huggingface/transformers/issues/38224",
        "https://github.com/huggingface/transformers/pull/40320",
    ),
    "YarnEqualBounds": _note(
        "EdgeCase", "Correction range collapsed to a point: HF adds 0.001 to the upper bound."
    ),
    "Llama3BandEdge": _note(
        "EdgeCase",
        "A frequency whose float64 wavelength equals original_max / low_freq_factor: "
        "HF's middle band is inclusive (scaled by 1/factor); an exclusive band (mlx-lm) leaves it unscaled.",
        "https://github.com/meta-llama/llama-models",
    ),
    "Llama3EqualFactors": _note(
        "EdgeCase", "low_freq_factor == high_freq_factor (Llama 4 style): two bands, no division by zero."
    ),
    "LongRopeSwitch": _note(
        "ConventionMismatch",
        "LongRoPE uses short factors up to and including original_max_position_embeddings, "
        "long factors above ('>' not '>='); "
        "mlx-lm always uses long factors, llama.cpp decides from the context size.",
        "https://github.com/unslothai/unsloth/pull/10681",
        "https://github.com/huggingface/transformers/pull/33129",
        "https://github.com/ggml-org/llama.cpp/issues/8995",
    ),
    "LongRopeAttentionFactor": _note(
        "ConventionMismatch", "Default LongRoPE attention factor sqrt(1 + ln(s) / ln(original_max))."
    ),
    "ProportionalTail": _note(
        "ConventionMismatch",
        "proportional: zero frequencies for the unrotated tail, full head_dim denominator.",
    ),
    "PartialRotary": _note(
        "Functionality", "Only the first R channels are rotated; the rest pass through unchanged."
    ),
    "LegacyTypeKey": _note("Functionality", "HF v4 rope_scaling with the legacy 'type' key."),
    "AttentionFactor": _note(
        "Functionality", "cos and sin multiplied by the attention factor (YaRN, LongRoPE)."
    ),
    "IdentityAtZero": _note("EdgeCase", "Position 0 leaves vectors unchanged (cos = a, sin = 0)."),
    "T5BucketBoundary": _note(
        "EdgeCase",
        "Distances at the log-bucket boundaries (e.g. 90/91 bidirectional and 112/113 causal for 32/128).",
    ),
    "T5UnusedBucket": _note("EdgeCase", "Bidirectional 32/128 never uses bucket 16."),
    "T5Saturation": _note("EdgeCase", "Distances far beyond max_distance stay in the last bucket."),
    "T5Causal": _note("ConventionMismatch", "Causal (decoder) buckets: keys after the query share bucket 0."),
    "T5FloatBoundary": _note(
        "NumericalPrecision",
        "The exact bucket and HF/mesh-tf's float32 evaluation differ here "
        "(an exact tie or a value within float32 rounding of an integer); both are accepted.",
    ),
    "T5NonStandard": _note("Functionality", "num_buckets / max_distance other than 32/128, odd num_buckets."),
    "AlibiNonPowerOfTwo": _note(
        "KnownBug",
        "Non-power-of-two head counts use the original recursion; 2**(-8i/H) is the old MLX bug.",
        "https://github.com/ml-explore/mlx/pull/3071",
        "https://github.com/baichuan-inc/Baichuan2/issues/225",
    ),
    "AlibiSlopeOffByOne": _note(
        "KnownBug",
        "Slopes start at 2**(-8/n), not 1: an exponent off by one halves every bias.",
        "https://github.com/paiml/aprender/pull/2143",
    ),
    "AlibiMaxBias": _note("ConventionMismatch", "MPT's / keras-hub's alibi_bias_max other than 8."),
    "AlibiSymmetric": _note(
        "ConventionMismatch",
        "Symmetric -m|k - q|: required without a causal mask (encoders); the causal row form is wrong there.",
        "https://github.com/ofirpress/attention_with_linear_biases/issues/5",
        "https://github.com/lucidrains/x-transformers/pull/88",
    ),
    "AlibiCausalForm": _note(
        "ConventionMismatch",
        "Causal row forms (m k, m (k - L + 1), m (k - q)) "
        "agree with the symmetric form on k <= q up to a per-row constant; compared that way.",
        "https://github.com/ofirpress/attention_with_linear_biases/issues/9",
    ),
    "BlockOfLargeBias": _note(
        "Functionality", "A block far into a long sequence equals the same slice of the full matrix."
    ),
    "ShawClipping": _note("Functionality", "Relative positions clipped to [-k, k] and shifted to [0, 2k]."),
    "ShawAsymmetric": _note("ConventionMismatch", "Asymmetric left/right limits (Wav2Vec2-BERT: 64/8)."),
    "ShawBertSign": _note(
        "ConventionMismatch",
        "HF BERT relative_key uses query - key and no clipping.",
        "https://github.com/huggingface/transformers/issues/17026",
    ),
    "ShawSpeechT5": _note(
        "ConventionMismatch",
        "SpeechT5 pe_k[clip(i - j, -L, L - 1) + L]: query - key, asymmetric limits, 2L rows; "
        "its table is tensor2tensor's mirrored, so an implementation with the other sign reads the "
        "opposite row.",
        "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/speecht5/modeling_speecht5.py",
    ),
    "ShawVitsWindow": _note(
        "ConventionMismatch",
        "VITS pads its [2w + 1] table with zeros instead of clipping: keys farther than the window read "
        "a zero row (here row 2w + 1), not the edge row; its skew trick moves relative columns to "
        "absolute ones.",
        "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/vits/modeling_vits.py",
    ),
    "ShawGraniteBlock": _note(
        "ConventionMismatch",
        "Granite Speech: clamp(i - j, -context_size, context_size) + max_pos_emb over in-block positions "
        "(query - key, 2 max_pos_emb + 1 rows; context_size <= max_pos_emb).",
        "https://github.com/huggingface/transformers/blob/v5.24.0/src/transformers/models/granite_speech/modeling_granite_speech.py",
    ),
    "CausalMask": _note("Functionality", "Masks from explicit positions: causal, sliding window, chunked."),
    "NopeTemperature": _note("Functionality", "Llama 4 attention-temperature scaling for NoPE layers."),
    "FullyMaskedRow": _note("EdgeCase", "A query with no visible key: defined as a zero row, not NaN."),
    "InvalidInput": _note("InvalidInput", "Invalid arguments must raise an error, not return a value."),
    "DataDependentCheck": _note(
        "InvalidInput",
        "The error depends on the values of an array (a position past a table), which lazy backends "
        "(Dask, JAX under jit) cannot check without computing; adapters declare whether they check values.",
    ),
}


def add_note(flag: str, bug_type: str, description: str, *links: str) -> str:
    """Declare a flag beside the cases that use it (a family module's own notes); returns the flag."""
    if flag in NOTES:
        msg = f"flag {flag!r} already has a note"
        raise ValueError(msg)
    NOTES[flag] = _note(bug_type, description, *links)
    return flag
