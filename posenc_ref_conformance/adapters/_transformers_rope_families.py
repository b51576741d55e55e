"""The RoPE zoo: every transformers family whose own rotary module is a 1-D table, one row each.

Read by the ``transformers`` adapter (:mod:`.transformers`), which makes each row a variant of that
name: the column builds the family's rotary class from a tiny config, loads the case's ``inv_freq``
and attention factor, calls its ``forward`` and rotates with the family's apply function
(``transformers.models.<family>.modeling_<family>``, read at transformers 5.24).  The rows are read off
the installed transformers by ``scripts/zoo_rope_table.py`` (``--write`` rewrites them, ``--check``
fails when they are stale); :data:`ROPE_NOT_RUN` is written by hand: every other family with rotary
code, and why it has no column.  No torch is imported here.

Fields of :class:`RopeFamily` (``scripts/zoo_rope_table.py`` says how each is read from the source):

* ``rotary``, ``config``: the family's text rotary class and the config class it takes;
* ``apply``: the family's apply function; ``call``: how it is called (``qk``: ``(q, k, cos, sin,
  unsqueeze_dim)``, ``x``: ``(x, cos, sin, unsqueeze_dim)``, ``gptj``: ``(tensor, sin, cos)`` on
  ``[batch, seq, heads, dim]``, ``complex``: ``(xq, xk, freqs_cis)``, ``deinterleave``: an
  ``apply_rotary_pos_emb_interleave``, whose output holds the rotated pairs de-interleaved);
* ``layout``: the pairs the family rotates (``half`` / ``interleaved``); ``table``: what its rotary
  ``forward`` returns (``half``: ``cat(freqs, freqs)``, ``interleaved``: ``repeat_interleave``,
  ``halfwidth``: ``freqs`` only, ``complex``: ``torch.polar``, ``sincos``: a fixed ``(sin, cos)`` table);
* ``partial``: ``apply`` (the apply function rotates the first ``cos.shape[-1]`` channels), ``caller``
  (the attention forward splits them off first), ``last`` (the last ones), ``""`` (every channel);
* ``float32_apply``: the apply function computes in float32 whatever the input;
* ``layer_type``: for rotary modules with one table per layer type, the one read (every layer type
  of the config's default ``rope_parameters`` gets the case's parameters);
* ``dim_keys``: the config attributes set to the rotary width; ``kwargs``: further config arguments;
* ``reads_inv_freq``: ``forward`` reads the ``inv_freq`` buffer (false: it recomputes its table);
* ``x_layout``: the head layout a ``complex`` / ``gptj`` apply takes (``bhsd`` / ``bshd``);
* ``own_defaults``: the rotary class defines its own ``compute_default_rope_parameters``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["ROPE_FAMILIES", "ROPE_NOT_RUN", "RopeFamily"]


class RopeFamily(NamedTuple):
    """One family's 1-D RoPE code (the fields: the module docstring)."""

    rotary: str
    config: str
    apply: str = "apply_rotary_pos_emb"
    layout: str = "half"
    table: str = "half"
    call: str = "qk"
    partial: str = ""
    float32_apply: bool = False
    layer_type: str = ""
    dim_keys: tuple[str, ...] = ("head_dim", "hidden_size")
    kwargs: dict[str, Any] = {}  # noqa: RUF012  (a NamedTuple default, never mutated)
    reads_inv_freq: bool = True
    x_layout: str = "bhsd"
    own_defaults: bool = True

    def module(self, family: str) -> str:
        """The module holding the family's code."""
        return f"transformers.models.{family}.modeling_{family}"


#: family (directory under ``transformers/models``) -> its row.
ROPE_FAMILIES: dict[str, RopeFamily] = {
    # --- BEGIN ROWS (scripts/zoo_rope_table.py --write) ---
    "afmoe": RopeFamily("AfmoeRotaryEmbedding", "AfmoeConfig"),
    "apertus": RopeFamily("ApertusRotaryEmbedding", "ApertusConfig"),
    "apertus1p5": RopeFamily("Apertus1p5TextRotaryEmbedding", "Apertus1p5TextConfig"),
    "arcee": RopeFamily("ArceeRotaryEmbedding", "ArceeConfig"),
    "aria": RopeFamily("AriaTextRotaryEmbedding", "AriaTextConfig"),
    "axk1": RopeFamily(
        "AXK1RotaryEmbedding",
        "AXK1Config",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "axk2": RopeFamily(
        "AXK2RotaryEmbedding", "AXK2Config", dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim")
    ),
    "bailing_hybrid": RopeFamily(
        "BailingHybridRotaryEmbedding",
        "BailingHybridConfig",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "bamba": RopeFamily("BambaRotaryEmbedding", "BambaConfig", partial="apply", kwargs={"mamba_n_heads": 1}),
    "beam": RopeFamily("BeamRotaryEmbedding", "BeamConfig", layer_type="sliding_attention"),
    "bitnet": RopeFamily("BitNetRotaryEmbedding", "BitNetConfig"),
    "blt": RopeFamily("BltRotaryEmbedding", "BltConfig", layout="interleaved", table="interleaved"),
    "chameleon": RopeFamily("ChameleonRotaryEmbedding", "ChameleonConfig"),
    "codegen": RopeFamily(
        "CodeGenRotaryEmbedding",
        "CodeGenConfig",
        layout="interleaved",
        table="sincos",
        call="gptj",
        partial="caller",
        dim_keys=("head_dim", "hidden_size", "rotary_dim"),
        x_layout="bshd",
        own_defaults=False,
    ),
    "cohere": RopeFamily(
        "CohereRotaryEmbedding", "CohereConfig", layout="interleaved", table="interleaved", float32_apply=True
    ),
    "cohere2": RopeFamily(
        "Cohere2RotaryEmbedding",
        "Cohere2Config",
        layout="interleaved",
        table="interleaved",
        float32_apply=True,
    ),
    "cohere2_moe": RopeFamily(
        "Cohere2MoeRotaryEmbedding",
        "Cohere2MoeConfig",
        layout="interleaved",
        table="interleaved",
        float32_apply=True,
    ),
    "csm": RopeFamily("CsmRotaryEmbedding", "CsmConfig"),
    "cwm": RopeFamily("CwmRotaryEmbedding", "CwmConfig"),
    "dbrx": RopeFamily("DbrxRotaryEmbedding", "DbrxConfig"),
    "deepseek_ocr2": RopeFamily("DeepseekOcr2TextRotaryEmbedding", "DeepseekOcr2TextConfig"),
    "deepseek_v2": RopeFamily(
        "DeepseekV2RotaryEmbedding",
        "DeepseekV2Config",
        apply="apply_rotary_emb",
        layout="interleaved",
        table="complex",
        call="complex",
        float32_apply=True,
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "deepseek_v3": RopeFamily(
        "DeepseekV3RotaryEmbedding",
        "DeepseekV3Config",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "deepseek_v32": RopeFamily(
        "DeepseekV32RotaryEmbedding",
        "DeepseekV32Config",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "deepseek_v4": RopeFamily(
        "DeepseekV4RotaryEmbedding",
        "DeepseekV4Config",
        layout="interleaved",
        table="halfwidth",
        call="x",
        partial="last",
        float32_apply=True,
        layer_type="compress",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "dia": RopeFamily("DiaRotaryEmbedding", "DiaDecoderConfig"),
    "diffllama": RopeFamily("DiffLlamaRotaryEmbedding", "DiffLlamaConfig"),
    "diffusion_gemma": RopeFamily(
        "DiffusionGemmaTextRotaryEmbedding",
        "DiffusionGemmaTextConfig",
        call="x",
        layer_type="sliding_attention",
    ),
    "doge": RopeFamily("DogeRotaryEmbedding", "DogeConfig"),
    "dory": RopeFamily("DoryRotaryEmbedding", "DoryConfig", layer_type="full_attention"),
    "dots1": RopeFamily("Dots1RotaryEmbedding", "Dots1Config"),
    "dots3_note": RopeFamily(
        "Dots3NoteTextRotaryEmbedding",
        "Dots3NoteTextConfig",
        partial="apply",
        layer_type="indexed_attention",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "embedding_gemma2": RopeFamily(
        "EmbeddingGemma2RotaryEmbedding", "EmbeddingGemma2TextConfig", layer_type="sliding_attention"
    ),
    "emu3": RopeFamily("Emu3RotaryEmbedding", "Emu3TextConfig"),
    "ernie4_5": RopeFamily(
        "Ernie4_5RotaryEmbedding", "Ernie4_5Config", layout="interleaved", float32_apply=True
    ),
    "ernie4_5_moe": RopeFamily(
        "Ernie4_5_MoeRotaryEmbedding", "Ernie4_5_MoeConfig", layout="interleaved", float32_apply=True
    ),
    "esm": RopeFamily(
        "EsmRotaryEmbedding", "EsmConfig", float32_apply=True, kwargs={"position_embedding_type": "rotary"}
    ),
    "esmc": RopeFamily("EsmcRotaryEmbedding", "EsmcConfig"),
    "eurobert": RopeFamily("EuroBertRotaryEmbedding", "EuroBertConfig"),
    "evolla": RopeFamily("EvollaRotaryEmbedding", "EvollaConfig", float32_apply=True),
    "exaone4": RopeFamily("Exaone4RotaryEmbedding", "Exaone4Config"),
    "exaone_moe": RopeFamily("ExaoneMoeRotaryEmbedding", "ExaoneMoeConfig"),
    "falcon": RopeFamily("FalconRotaryEmbedding", "FalconConfig", dim_keys=("hidden_size",)),
    "falcon_h1": RopeFamily("FalconH1RotaryEmbedding", "FalconH1Config"),
    "flex_olmo": RopeFamily("FlexOlmoRotaryEmbedding", "FlexOlmoConfig"),
    "flint": RopeFamily("FlintRotaryEmbedding", "FlintConfig"),
    "gemma": RopeFamily("GemmaRotaryEmbedding", "GemmaConfig"),
    "gemma2": RopeFamily("Gemma2RotaryEmbedding", "Gemma2Config"),
    "gemma3": RopeFamily("Gemma3RotaryEmbedding", "Gemma3TextConfig", layer_type="full_attention"),
    "gemma3n": RopeFamily(
        "Gemma3nRotaryEmbedding", "Gemma3nTextConfig", call="x", layer_type="full_attention"
    ),
    "gemma4": RopeFamily(
        "Gemma4TextRotaryEmbedding", "Gemma4TextConfig", call="x", layer_type="sliding_attention"
    ),
    "gemma4_unified": RopeFamily(
        "Gemma4UnifiedTextRotaryEmbedding",
        "Gemma4UnifiedTextConfig",
        call="x",
        layer_type="sliding_attention",
    ),
    "glm": RopeFamily("GlmRotaryEmbedding", "GlmConfig", layout="interleaved", partial="apply"),
    "glm4": RopeFamily("Glm4RotaryEmbedding", "Glm4Config", layout="interleaved", partial="apply"),
    "glm4_moe": RopeFamily("Glm4MoeRotaryEmbedding", "Glm4MoeConfig", partial="apply"),
    "glm4_moe_lite": RopeFamily(
        "Glm4MoeLiteRotaryEmbedding",
        "Glm4MoeLiteConfig",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "glm_moe_dsa": RopeFamily(
        "GlmMoeDsaRotaryEmbedding",
        "GlmMoeDsaConfig",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "glmasr": RopeFamily("GlmAsrRotaryEmbedding", "GlmAsrConfig", partial="apply"),
    "gpt_neox": RopeFamily("GPTNeoXRotaryEmbedding", "GPTNeoXConfig", partial="apply"),
    "gpt_neox_japanese": RopeFamily(
        "GPTNeoXJapaneseRotaryEmbedding", "GPTNeoXJapaneseConfig", partial="caller"
    ),
    "gpt_oss": RopeFamily("GptOssRotaryEmbedding", "GptOssConfig", table="halfwidth"),
    "gptj": RopeFamily(
        "GPTJRotaryEmbedding",
        "GPTJConfig",
        layout="interleaved",
        table="sincos",
        call="gptj",
        partial="caller",
        dim_keys=("head_dim", "hidden_size", "rotary_dim"),
        x_layout="bshd",
        own_defaults=False,
    ),
    "gradium_phonon_tts": RopeFamily(
        "GradiumPhononTTSRotaryEmbedding", "GradiumPhononTTSConfig", dim_keys=("head_dim",)
    ),
    "granite": RopeFamily("GraniteRotaryEmbedding", "GraniteConfig"),
    "granite4_vision": RopeFamily("Granite4VisionTextRotaryEmbedding", "Granite4VisionTextConfig"),
    "granite_docling": RopeFamily("GraniteDoclingTextRotaryEmbedding", "GraniteDoclingTextConfig"),
    "granite_swa": RopeFamily("GraniteSWARotaryEmbedding", "GraniteSWAConfig"),
    "granitemoe": RopeFamily("GraniteMoeRotaryEmbedding", "GraniteMoeConfig"),
    "granitemoe_swa": RopeFamily("GraniteMoeSWARotaryEmbedding", "GraniteMoeSWAConfig"),
    "granitemoehybrid": RopeFamily(
        "GraniteMoeHybridRotaryEmbedding", "GraniteMoeHybridConfig", kwargs={"mamba_n_heads": 1}
    ),
    "granitemoeshared": RopeFamily("GraniteMoeSharedRotaryEmbedding", "GraniteMoeSharedConfig"),
    "gte": RopeFamily("GteRotaryEmbedding", "GteConfig"),
    "helium": RopeFamily("HeliumRotaryEmbedding", "HeliumConfig", layout="interleaved"),
    "higgs_audio_v2": RopeFamily("HiggsAudioV2RotaryEmbedding", "HiggsAudioV2Config"),
    "hrm_text": RopeFamily("HrmTextRotaryEmbedding", "HrmTextConfig"),
    "hunyuan_v1_dense": RopeFamily("HunYuanDenseV1RotaryEmbedding", "HunYuanDenseV1Config"),
    "hunyuan_v1_moe": RopeFamily("HunYuanMoEV1RotaryEmbedding", "HunYuanMoEV1Config"),
    "hy_v3": RopeFamily("HYV3RotaryEmbedding", "HYV3Config"),
    "hy_v4": RopeFamily(
        "HYV4RotaryEmbedding", "HYV4Config", dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim")
    ),
    "hyperclovax": RopeFamily("HyperCLOVAXRotaryEmbedding", "HyperCLOVAXConfig"),
    "idefics": RopeFamily("IdeficsRotaryEmbedding", "IdeficsConfig"),
    "jais2": RopeFamily("Jais2RotaryEmbedding", "Jais2Config"),
    "jetmoe": RopeFamily("JetMoeRotaryEmbedding", "JetMoeConfig"),
    "jina_embeddings_v3": RopeFamily("JinaEmbeddingsV3RotaryEmbedding", "JinaEmbeddingsV3Config"),
    "kolibri1": RopeFamily("Kolibri1RotaryEmbedding", "Kolibri1Config"),
    "kyutai_speech_to_text": RopeFamily("KyutaiSpeechToTextRotaryEmbedding", "KyutaiSpeechToTextConfig"),
    "laguna": RopeFamily(
        "LagunaRotaryEmbedding", "LagunaConfig", partial="apply", layer_type="full_attention"
    ),
    "lara_mini": RopeFamily("LaraMiniRotaryEmbedding", "LaraMiniConfig"),
    "lasr": RopeFamily("LasrEncoderRotaryEmbedding", "LasrEncoderConfig"),
    "lfm2": RopeFamily("Lfm2RotaryEmbedding", "Lfm2Config"),
    "lfm2_moe": RopeFamily("Lfm2MoeRotaryEmbedding", "Lfm2MoeConfig"),
    "lfm3": RopeFamily("Lfm3RotaryEmbedding", "Lfm3Config", layer_type="full_attention"),
    "llama": RopeFamily("LlamaRotaryEmbedding", "LlamaConfig"),
    "llama4": RopeFamily(
        "Llama4TextRotaryEmbedding",
        "Llama4TextConfig",
        apply="apply_rotary_emb",
        layout="interleaved",
        table="complex",
        call="complex",
        float32_apply=True,
        x_layout="bshd",
    ),
    "longcat_flash": RopeFamily(
        "LongcatFlashRotaryEmbedding",
        "LongcatFlashConfig",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "mellum": RopeFamily("MellumRotaryEmbedding", "MellumConfig", layer_type="full_attention"),
    "mimi": RopeFamily("MimiRotaryEmbedding", "MimiConfig"),
    "mimo_v2_flash": RopeFamily(
        "MiMoV2FlashRotaryEmbedding", "MiMoV2FlashConfig", partial="apply", layer_type="full_attention"
    ),
    "minicpm3": RopeFamily(
        "MiniCPM3RotaryEmbedding", "MiniCPM3Config", dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim")
    ),
    "minimax": RopeFamily("MiniMaxRotaryEmbedding", "MiniMaxConfig"),
    "minimax_m2": RopeFamily("MiniMaxM2RotaryEmbedding", "MiniMaxM2Config", partial="apply"),
    "minimax_m3_vl": RopeFamily(
        "MiniMaxM3VLRotaryEmbedding",
        "MiniMaxM3VLTextConfig",
        partial="apply",
        dim_keys=("head_dim", "hidden_size", "rotary_dim"),
    ),
    "ministral": RopeFamily("MinistralRotaryEmbedding", "MinistralConfig"),
    "ministral3": RopeFamily("Ministral3RotaryEmbedding", "Ministral3Config"),
    "mistral": RopeFamily("MistralRotaryEmbedding", "MistralConfig"),
    "mistral4": RopeFamily(
        "Mistral4RotaryEmbedding",
        "Mistral4Config",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "mistral_large4": RopeFamily(
        "MistralLarge4TextRotaryEmbedding",
        "MistralLarge4TextConfig",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "mixtral": RopeFamily("MixtralRotaryEmbedding", "MixtralConfig"),
    "mllama": RopeFamily("MllamaRotaryEmbedding", "MllamaTextConfig"),
    "modernbert": RopeFamily(
        "ModernBertRotaryEmbedding", "ModernBertConfig", float32_apply=True, layer_type="full_attention"
    ),
    "modernbert_decoder": RopeFamily(
        "ModernBertDecoderRotaryEmbedding",
        "ModernBertDecoderConfig",
        float32_apply=True,
        layer_type="full_attention",
    ),
    "molmo2": RopeFamily("Molmo2RotaryEmbedding", "Molmo2TextConfig"),
    "moonshine": RopeFamily(
        "MoonshineRotaryEmbedding", "MoonshineConfig", layout="interleaved", partial="apply"
    ),
    "moonshine_streaming": RopeFamily(
        "MoonshineStreamingRotaryEmbedding", "MoonshineStreamingConfig", layout="interleaved", partial="apply"
    ),
    "moshi": RopeFamily("MoshiRotaryEmbedding", "MoshiConfig"),
    "muse_glimmer": RopeFamily("MuseGlimmerTextRotaryEmbedding", "MuseGlimmerTextConfig"),
    "muse_glimmer_assistant": RopeFamily("MuseGlimmerAssistantRotaryEmbedding", "MuseGlimmerAssistantConfig"),
    "muse_spark": RopeFamily("MuseSparkTextRotaryEmbedding", "MuseSparkTextConfig"),
    "nanochat": RopeFamily("NanoChatRotaryEmbedding", "NanoChatConfig"),
    "nemotron": RopeFamily("NemotronRotaryEmbedding", "NemotronConfig", partial="apply"),
    "nemotron3_5_transcribe": RopeFamily(
        "Nemotron3_5TranscribeRotaryEmbedding", "Nemotron3_5TranscribeAsrAudioConfig", partial="apply"
    ),
    "nemotron3_diarization": RopeFamily(
        "Nemotron3DiarizationRotaryEmbedding", "Nemotron3DiarizationAudioConfig", partial="apply"
    ),
    "neucodec": RopeFamily("NeuCodecRotaryEmbedding", "NeuCodecConfig"),
    "nomic_bert": RopeFamily("NomicBertRotaryEmbedding", "NomicBertConfig"),
    "olmo": RopeFamily("OlmoRotaryEmbedding", "OlmoConfig"),
    "olmo2": RopeFamily("Olmo2RotaryEmbedding", "Olmo2Config"),
    "olmo3": RopeFamily("Olmo3RotaryEmbedding", "Olmo3Config", layer_type="full_attention"),
    "olmo_hybrid": RopeFamily("OlmoHybridRotaryEmbedding", "OlmoHybridConfig"),
    "olmoe": RopeFamily("OlmoeRotaryEmbedding", "OlmoeConfig"),
    "openai_privacy_filter": RopeFamily(
        "OpenAIPrivacyFilterRotaryEmbedding",
        "OpenAIPrivacyFilterConfig",
        layout="interleaved",
        table="halfwidth",
    ),
    "pe_audio": RopeFamily("PeAudioEncoderRotaryEmbedding", "PeAudioEncoderConfig", layout="interleaved"),
    "pe_audio_video": RopeFamily(
        "PeAudioVideoEncoderRotaryEmbedding", "PeAudioVideoEncoderConfig", layout="interleaved"
    ),
    "pe_video": RopeFamily("PeVideoEncoderRotaryEmbedding", "PeVideoEncoderConfig", layout="interleaved"),
    "persimmon": RopeFamily("PersimmonRotaryEmbedding", "PersimmonConfig", partial="caller"),
    "phi": RopeFamily("PhiRotaryEmbedding", "PhiConfig", partial="caller"),
    "phi3": RopeFamily("Phi3RotaryEmbedding", "Phi3Config", partial="apply"),
    "phi4_multimodal": RopeFamily("Phi4MultimodalRotaryEmbedding", "Phi4MultimodalConfig", partial="apply"),
    "phimoe": RopeFamily("PhimoeRotaryEmbedding", "PhimoeConfig", reads_inv_freq=False),
    "pocket_tts": RopeFamily("PocketTTSRotaryEmbedding", "PocketTTSConfig", dim_keys=("head_dim",)),
    "pocket_tts_audio_tokenizer": RopeFamily(
        "PocketTTSAudioTokenizerRotaryEmbedding", "PocketTTSAudioTokenizerConfig"
    ),
    "qwen2": RopeFamily("Qwen2RotaryEmbedding", "Qwen2Config"),
    "qwen2_moe": RopeFamily("Qwen2MoeRotaryEmbedding", "Qwen2MoeConfig"),
    "qwen3": RopeFamily("Qwen3RotaryEmbedding", "Qwen3Config"),
    "qwen3_moe": RopeFamily("Qwen3MoeRotaryEmbedding", "Qwen3MoeConfig"),
    "qwen3_next": RopeFamily("Qwen3NextRotaryEmbedding", "Qwen3NextConfig", partial="apply"),
    "recurrent_gemma": RopeFamily("RecurrentGemmaRotaryEmbedding", "RecurrentGemmaConfig", partial="apply"),
    "seed_oss": RopeFamily("SeedOssRotaryEmbedding", "SeedOssConfig"),
    "smollm3": RopeFamily("SmolLM3RotaryEmbedding", "SmolLM3Config"),
    "solar_open": RopeFamily("SolarOpenRotaryEmbedding", "SolarOpenConfig"),
    "stablelm": RopeFamily("StableLmRotaryEmbedding", "StableLmConfig", partial="caller"),
    "starcoder2": RopeFamily("Starcoder2RotaryEmbedding", "Starcoder2Config"),
    "step3p7": RopeFamily(
        "Step3p7RotaryEmbedding", "Step3p7TextConfig", partial="apply", layer_type="full_attention"
    ),
    "t5gemma": RopeFamily("T5GemmaRotaryEmbedding", "T5GemmaModuleConfig"),
    "t5gemma2": RopeFamily("T5Gemma2RotaryEmbedding", "T5Gemma2TextConfig", layer_type="full_attention"),
    "timesfm2_5": RopeFamily("TimesFm2_5RotaryEmbedding", "TimesFm2_5Config"),
    "ultrabert": RopeFamily("UltrabertRotaryEmbedding", "UltrabertConfig", layer_type="full_attention"),
    "unlimited_ocr": RopeFamily("UnlimitedOcrTextRotaryEmbedding", "UnlimitedOcrTextConfig"),
    "vaultgemma": RopeFamily("VaultGemmaRotaryEmbedding", "VaultGemmaConfig"),
    "voxtral_realtime": RopeFamily("VoxtralRealtimeRotaryEmbedding", "VoxtralRealtimeConfig"),
    "xcodec2": RopeFamily("Xcodec2RotaryEmbedding", "Xcodec2Config"),
    "youtu": RopeFamily(
        "YoutuRotaryEmbedding",
        "YoutuConfig",
        apply="apply_rotary_pos_emb_interleave",
        layout="interleaved",
        call="deinterleave",
        dim_keys=("head_dim", "hidden_size", "qk_rope_head_dim"),
    ),
    "zamba2": RopeFamily("Zamba2RotaryEmbedding", "Zamba2Config"),
    "zaya": RopeFamily("ZayaRotaryEmbedding", "ZayaConfig", partial="apply", layer_type="hybrid"),
    # --- END ROWS ---
}

#: Every other family with rotary code -> why it has no RoPE-zoo column (shown on the zoo page).
ROPE_NOT_RUN: dict[str, str] = {
    "clvp": (
        "ClvpRotaryPositionalEmbedding.forward(hidden_states) builds its own fixed table of the sequence "
        "length; its apply rotates q, k and v"
    ),
    "cohere_compass": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections (per "
        "layer type); vision 2-D RoPE"
    ),
    "cosmos3_edge": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(Qwen3-VL interleaved sections)"
    ),
    "cosmos3_omni": "M-RoPE position ids only (get_rope_index); the rotary module is its text backbone's",
    "dinov3_vit": "continuous-coordinate 2-D vision RoPE (mapped as rope_2d_cos_sin:dinov3)",
    "edgetam_video": "2-D vision RoPE of the memory attention (axial, interleaved pairs)",
    "efficientloftr": "2-D RoPE over the feature grid: forward(x) takes no positions",
    "eomt_dinov3": "DINOv3's continuous-coordinate 2-D RoPE: forward(pixel_values) takes no positions",
    "ernie4_5_vl_moe": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections (h/w "
        "slots re-ordered, t tail)"
    ),
    "esmfold2": (
        "3-axis spatial RoPE from atom coordinates plus a uid RoPE: forward(ref_pos, ref_space_uid, dtype)"
    ),
    "exaone4_5": "vision 2-D axial RoPE only; the language model is Exaone4's (its own column)",
    "glm46v": "M-RoPE position ids only (get_rope_index); the rotary module is Glm4v's text one",
    "glm4v": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(chunked sections); vision 2-D RoPE"
    ),
    "glm4v_moe": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(chunked sections); vision 2-D RoPE"
    ),
    "glm5_next": "vision 2-D axial RoPE only; the text layers are NoPE",
    "glm_image": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(chunked sections)"
    ),
    "glm_ocr": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(chunked sections); vision 2-D RoPE"
    ),
    "hunyuan_vl": (
        "text M-RoPE: forward expands position_ids to len(mrope_section) axes and recomposes the "
        "frequency sections (sections split after cat(freqs, freqs))"
    ),
    "hy_v4_vl": "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections",
    "inkling2": "vision 2-D RoPE only (rotate_pairwise); the text positions are content-conditioned logits",
    "jamba": "defines apply_rotary_pos_emb and never calls it (attention without positions)",
    "kimi_k25": "vision 2-D RoPE only (mapped as rope_2d_cos_sin:kimi_k25)",
    "lfm3_vl": "vision 2-D axial RoPE only; the language model is Lfm3's (its own column)",
    "lightglue": "learned-frequency RoPE of keypoint coordinates (an nn.Linear projection, no 1-D table)",
    "mlcd": "vision 2-D RoPE: forward recomposes h / w frequency sections",
    "musicflamingo": "timestamp RoPE: forward(timestamps, seq_len) takes real-valued times",
    "nemotron_asr_streaming": "defines apply_rotary_pos_emb and never calls it (relative sinusoid encoder)",
    "nemotron_h": "defines apply_rotary_pos_emb and never calls it (attention without positions)",
    "neomme": "2-axis RoPE: forward expands position_ids to 2 axes (row even, column odd slots)",
    "paddleocr_vl": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(Qwen2-VL chunked sections); vision 2-D RoPE"
    ),
    "parakeet": "defines apply_rotary_pos_emb and never calls it (relative sinusoid encoder)",
    "pixtral": "vision 2-D RoPE only (mapped as rope_2d_cos_sin:pixtral)",
    "qwen2_5_omni": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(Qwen2.5-VL chunked sections); vision 2-D RoPE"
    ),
    "qwen2_5_vl": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(chunked sections [16, 24, 24]); vision 2-D RoPE"
    ),
    "qwen2_vl": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(chunked sections); vision 2-D RoPE"
    ),
    "qwen3_5": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(interleaved sections, partial); vision 2-D RoPE"
    ),
    "qwen3_5_moe": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(interleaved sections, partial); vision 2-D RoPE"
    ),
    "qwen3_omni_moe": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(Qwen3-VL interleaved sections); vision 2-D RoPE"
    ),
    "qwen3_vl": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(interleaved sections [24, 20, 20]); vision 2-D RoPE"
    ),
    "qwen3_vl_moe": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(interleaved sections); vision 2-D RoPE"
    ),
    "qwen4_exp": (
        "text M-RoPE: forward expands position_ids to 3 axes and recomposes the frequency sections "
        "(interleaved sections, partial); vision 2-D RoPE"
    ),
    "roformer": (
        "RoPE from a marian-convention sinusoidal table (RoFormerSinusoidalPositionalEmbedding), applied "
        "by a method of its self-attention: no rotary module"
    ),
    "sam2_video": "2-D vision RoPE of the memory attention (mapped as rope_2d_cos_sin:sam2)",
    "sam3": "ViT 2-D axial RoPE: forward recomposes h / w frequency sections",
    "sam3_tracker_video": "2-D vision RoPE of the memory attention (axial, interleaved pairs)",
    "sapiens2": "DINOv3-style continuous-coordinate 2-D RoPE (Sapiens2RopePositionEmbedding)",
    "seamless_m4t": (
        "Conformer rotary option: SeamlessM4TConformerRotaryPositionalEmbedding.forward(hidden_states) "
        "caches its own table"
    ),
    "video_llama_3": "vision 2-D axial RoPE only; the language model is delegated (AutoModel)",
    "vjepa2": (
        "3-D RoPE of frame / height / width chunks with half-duplicated cos / sin (rotate_queries_or_keys)"
    ),
    "wav2vec2_bert": (
        "Conformer rotary option: Wav2Vec2BertRotaryPositionalEmbedding.forward(hidden_states) caches its"
        " own table"
    ),
    "wav2vec2_conformer": (
        "Conformer rotary option: Wav2Vec2ConformerRotaryPositionalEmbedding.forward(hidden_states) "
        "caches its own table"
    ),
}
