"""The learned-absolute zoo: every transformers family whose own learned position code can run, one row each.

Read by the ``transformers`` adapter (:mod:`.transformers`), which makes each row a variant of that
name running the family's own module (``transformers.models.<family>.modeling_<family>``, read at
transformers 5.24) from a tiny config: its position-id logic and table lookup (``learned``), its copy
of ``create_position_ids_from_input_ids`` (``token_positions``) and its ``interpolate_pos_encoding``
(``patch_grid_resize``).  The default column's code paths are rows of the same table (``opt``,
``roberta``, and the vision rows ``_patch_source`` picks by the case's options).  The rows are read
off the installed transformers by ``scripts/zoo_learned_table.py`` (``--write`` rewrites them,
``--check`` fails when they are stale or a family is in neither table); :data:`LEARNED_NOT_RUN` is
written by hand: every other learned-absolute family of the census, and why it has no column.  No
torch is imported here.

Fields of :class:`LearnedFamily` (``scripts/zoo_learned_table.py`` says how each is read):

* ``learned``: the class holding the position table, ``""`` when the family's column has no
  ``learned``; ``kind``: ``embeddings`` (a BERT-style ``*Embeddings(config)`` whose ``forward`` adds
  word, token-type and position rows: every parameter is zeroed, ``identity`` modules are replaced by
  ``nn.Identity``, so the output is the looked-up rows), ``positional`` (an ``nn.Embedding`` subclass
  ``(num_embeddings, embedding_dim)`` with its own position ids, BART's ``*LearnedPositionalEmbedding``)
  or ``model`` (a GPT-2-style model whose ``forward`` numbers the tokens: its ``hidden_states[0]``,
  every parameter zeroed); ``config``: the config class the class takes; ``table``: the attribute
  holding the table (``nn.Embedding``); ``offset``: the canonical ``learned`` offset of its rows
  (``plain``, ``opt`` = ``+ 2``, ``roberta`` = ``+ padding_idx + 1``); ``adds_offset``: ``forward``
  adds the offset to given ``position_ids`` itself (BART, OPT); ``identity``: submodules replaced by
  the identity (LayerNorms; the model's final norm); ``dim_keys`` / ``rows_key``: the config keys of
  the table's width and rows; ``kwargs``: further config arguments of the tiny config;
* ``token_positions``: ``Class.method`` or ``function``: the family's copy of
  ``create_position_ids_from_input_ids`` (``(input_ids, padding_idx, cache_length)``);
* ``patch``: the vision embeddings class whose ``interpolate_pos_encoding(embeddings, height,
  width)`` resizes its table; ``patch_config`` its config class, ``patch_kwargs`` further arguments
  (``patch_dim_key``: the width key); ``prefix``: its class / distillation rows; ``mode``: its
  ``F.interpolate`` mode; ``antialias``; ``float32``: it resizes in float32 whatever the table;
  ``patch_call``: ``interpolate`` or ``forward`` (Timesformer resizes inside ``forward``);
  ``scale_factor``: it passes ``scale_factor=((h + 0.1)/n, (w + 0.1)/n)`` (Idefics);
* ``module``: the module holding the code when it is not ``modeling_<family>``.
"""

from __future__ import annotations

from typing import Any, NamedTuple

__all__ = ["LEARNED_FAMILIES", "LEARNED_NOT_RUN", "LearnedFamily"]


class LearnedFamily(NamedTuple):
    """One family's learned-absolute code (the fields: the module docstring)."""

    learned: str = ""
    kind: str = "embeddings"
    config: str = ""
    table: str = "position_embeddings"
    offset: str = "plain"
    adds_offset: bool = False
    identity: tuple[str, ...] = ()
    dim_keys: tuple[str, ...] = ("hidden_size",)
    rows_key: str = "max_position_embeddings"
    kwargs: dict[str, Any] = {}  # noqa: RUF012  (a NamedTuple default, never mutated)
    token_positions: str = ""
    patch: str = ""
    patch_config: str = ""
    patch_kwargs: dict[str, Any] = {}  # noqa: RUF012
    patch_dim_key: str = "hidden_size"
    prefix: int = 1
    mode: str = "bicubic"
    antialias: bool = False
    float32: bool = False
    patch_call: str = "interpolate"
    scale_factor: bool = False
    module: str = ""

    def module_path(self, family: str) -> str:
        """The module holding the family's code."""
        return self.module or f"transformers.models.{family}.modeling_{family}"

    def functions(self) -> tuple[str, ...]:
        """The canonical functions this row serves."""
        return tuple(
            f
            for f, field in (
                ("learned", self.learned),
                ("token_positions", self.token_positions),
                ("patch_grid_resize", self.patch),
            )
            if field
        )


#: Family (directory under ``transformers/models``) -> its row.
LEARNED_FAMILIES: dict[str, LearnedFamily] = {
    # --- BEGIN ROWS (scripts/zoo_learned_table.py --write) ---
    "aimv2": LearnedFamily(
        learned="Aimv2TextEmbeddings",
        config="Aimv2TextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "albert": LearnedFamily(
        learned="AlbertEmbeddings",
        config="AlbertConfig",
        identity=("LayerNorm",),
        dim_keys=("hidden_size", "embedding_size"),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "align": LearnedFamily(
        learned="AlignTextEmbeddings",
        config="AlignTextConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "altclip": LearnedFamily(
        learned="AltRobertaEmbeddings",
        config="AltCLIPTextConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="AltRobertaEmbeddings.create_position_ids_from_input_ids",
        patch="AltCLIPVisionEmbeddings",
        patch_config="AltCLIPVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "bark": LearnedFamily(
        learned="BarkCausalModel",
        kind="model",
        config="BarkSubModelConfig",
        table="position_embeds_layer",
        rows_key="block_size",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "bart": LearnedFamily(
        learned="BartLearnedPositionalEmbedding", kind="positional", table="", offset="opt", adds_offset=True
    ),
    "bert": LearnedFamily(
        learned="BertEmbeddings",
        config="BertConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "bert_generation": LearnedFamily(
        learned="BertGenerationEmbeddings",
        config="BertGenerationConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "big_bird": LearnedFamily(
        learned="BigBirdEmbeddings",
        config="BigBirdConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "bigbird_pegasus": LearnedFamily(
        learned="BigBirdPegasusLearnedPositionalEmbedding", kind="positional", table=""
    ),
    "biogpt": LearnedFamily(
        learned="BioGptLearnedPositionalEmbedding",
        kind="positional",
        table="",
        offset="opt",
        adds_offset=True,
    ),
    "blenderbot": LearnedFamily(learned="BlenderbotLearnedPositionalEmbedding", kind="positional", table=""),
    "blenderbot_small": LearnedFamily(
        learned="BlenderbotSmallLearnedPositionalEmbedding", kind="positional", table=""
    ),
    "blip": LearnedFamily(
        learned="BlipTextEmbeddings",
        config="BlipTextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="BlipVisionEmbeddings",
        patch_config="BlipVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "blip_2": LearnedFamily(
        learned="Blip2TextEmbeddings",
        config="Blip2QFormerConfig",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="Blip2VisionEmbeddings",
        patch_config="Blip2VisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "bridgetower": LearnedFamily(
        learned="BridgeTowerTextEmbeddings",
        config="BridgeTowerTextConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="BridgeTowerTextEmbeddings.create_position_ids_from_input_ids",
        patch="BridgeTowerVisionEmbeddings",
        patch_config="BridgeTowerVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "camembert": LearnedFamily(
        learned="CamembertEmbeddings",
        config="CamembertConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="CamembertEmbeddings.create_position_ids_from_input_ids",
    ),
    "canine": LearnedFamily(
        learned="CanineEmbeddings",
        config="CanineConfig",
        table="char_position_embeddings",
        identity=("LayerNorm",),
        rows_key="num_hash_buckets",
        kwargs={"num_attention_heads": 1, "num_hash_functions": 1},
    ),
    "chinese_clip": LearnedFamily(
        learned="ChineseCLIPTextEmbeddings",
        config="ChineseCLIPTextConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="ChineseCLIPVisionEmbeddings",
        patch_config="ChineseCLIPVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "clap": LearnedFamily(
        learned="ClapTextEmbeddings",
        config="ClapTextConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="ClapTextEmbeddings.create_position_ids_from_input_ids",
    ),
    "clip": LearnedFamily(
        learned="CLIPTextEmbeddings",
        config="CLIPTextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="CLIPVisionEmbeddings",
        patch_config="CLIPVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "clipseg": LearnedFamily(
        learned="CLIPSegTextEmbeddings",
        config="CLIPSegTextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="CLIPSegVisionEmbeddings",
        patch_config="CLIPSegVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "convbert": LearnedFamily(
        learned="ConvBertEmbeddings",
        config="ConvBertConfig",
        identity=("LayerNorm",),
        dim_keys=("hidden_size", "embedding_size"),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "data2vec": LearnedFamily(
        learned="Data2VecTextEmbeddings",
        config="Data2VecTextConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="Data2VecTextEmbeddings.create_position_ids_from_input_ids",
        module="transformers.models.data2vec.modeling_data2vec_text",
    ),
    "decision_transformer": LearnedFamily(
        learned="DecisionTransformerGPT2Model",
        kind="model",
        config="DecisionTransformerConfig",
        table="wpe",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1, "vocab_size": 8},
    ),
    "deit": LearnedFamily(
        patch="DeiTEmbeddings", patch_config="DeiTConfig", patch_kwargs={"num_attention_heads": 1}, prefix=2
    ),
    "dinov2": LearnedFamily(
        patch="Dinov2Embeddings",
        patch_config="Dinov2Config",
        patch_kwargs={"num_attention_heads": 1},
        float32=True,
    ),
    "dinov2_with_registers": LearnedFamily(
        patch="Dinov2WithRegistersEmbeddings",
        patch_config="Dinov2WithRegistersConfig",
        patch_kwargs={"num_attention_heads": 1},
        antialias=True,
        float32=True,
    ),
    "distilbert": LearnedFamily(
        learned="Embeddings",
        config="DistilBertConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "electra": LearnedFamily(
        learned="ElectraEmbeddings",
        config="ElectraConfig",
        identity=("LayerNorm",),
        dim_keys=("hidden_size", "embedding_size"),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "ernie": LearnedFamily(
        learned="ErnieEmbeddings",
        config="ErnieConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "flaubert": LearnedFamily(
        learned="FlaubertModel",
        kind="model",
        config="FlaubertConfig",
        identity=("layer_norm_emb",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "flava": LearnedFamily(
        learned="FlavaTextEmbeddings",
        config="FlavaTextConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="FlavaImageEmbeddings",
        patch_config="FlavaImageConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "fnet": LearnedFamily(
        learned="FNetEmbeddings",
        config="FNetConfig",
        identity=("LayerNorm", "projection"),
        kwargs={"num_hidden_layers": 1},
    ),
    "git": LearnedFamily(
        learned="GitEmbeddings",
        config="GitConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="GitVisionEmbeddings",
        patch_config="GitVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "gpt2": LearnedFamily(
        learned="GPT2Model",
        kind="model",
        config="GPT2Config",
        table="wpe",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "gpt_bigcode": LearnedFamily(
        learned="GPTBigCodeModel",
        kind="model",
        config="GPTBigCodeConfig",
        table="wpe",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "gpt_neo": LearnedFamily(
        learned="GPTNeoModel",
        kind="model",
        config="GPTNeoConfig",
        table="wpe",
        kwargs={"num_layers": 1, "attention_types": [[["global"], 1]], "num_heads": 1},
    ),
    "groupvit": LearnedFamily(
        learned="GroupViTTextEmbeddings",
        config="GroupViTTextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="GroupViTVisionEmbeddings",
        patch_config="GroupViTVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
        prefix=0,
    ),
    "ibert": LearnedFamily(token_positions="create_position_ids_from_input_ids"),
    "idefics": LearnedFamily(
        patch="IdeficsVisionEmbeddings",
        patch_config="IdeficsVisionConfig",
        patch_dim_key="embed_dim",
        scale_factor=True,
        module="transformers.models.idefics.vision",
    ),
    "ijepa": LearnedFamily(
        patch="IJepaEmbeddings", patch_config="IJepaConfig", patch_kwargs={"num_attention_heads": 1}, prefix=0
    ),
    "imagegpt": LearnedFamily(
        learned="ImageGPTModel",
        kind="model",
        config="ImageGPTConfig",
        table="wpe",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "instructblip": LearnedFamily(
        learned="InstructBlipQFormerEmbeddings",
        config="InstructBlipQFormerConfig",
        identity=("layernorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="InstructBlipVisionEmbeddings",
        patch_config="InstructBlipVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "instructblipvideo": LearnedFamily(
        learned="InstructBlipVideoQFormerEmbeddings",
        config="InstructBlipVideoQFormerConfig",
        identity=("layernorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="InstructBlipVideoVisionEmbeddings",
        patch_config="InstructBlipVideoVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "internvl": LearnedFamily(
        patch="InternVLVisionEmbeddings",
        patch_config="InternVLVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "janus": LearnedFamily(
        patch="JanusVisionEmbeddings",
        patch_config="JanusVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
        prefix=0,
    ),
    "kosmos2": LearnedFamily(
        token_positions="Kosmos2TextSinusoidalPositionalEmbedding.create_position_ids_from_input_ids",
        patch="Kosmos2VisionEmbeddings",
        patch_config="Kosmos2VisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "kosmos2_5": LearnedFamily(
        token_positions="Kosmos2_5TextSinusoidalPositionalEmbedding.create_position_ids_from_input_ids"
    ),
    "layoutlmv3": LearnedFamily(
        token_positions="LayoutLMv3TextEmbeddings.create_position_ids_from_input_ids"
    ),
    "led": LearnedFamily(learned="LEDLearnedPositionalEmbedding", kind="positional", table=""),
    "lilt": LearnedFamily(
        learned="LiltTextEmbeddings",
        config="LiltConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="LiltTextEmbeddings.create_position_ids_from_input_ids",
    ),
    "longformer": LearnedFamily(
        learned="LongformerEmbeddings",
        config="LongformerConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="create_position_ids_from_input_ids",
    ),
    "luke": LearnedFamily(
        learned="LukeEmbeddings",
        config="LukeConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="create_position_ids_from_input_ids",
    ),
    "lxmert": LearnedFamily(
        learned="LxmertEmbeddings",
        config="LxmertConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "markuplm": LearnedFamily(
        learned="MarkupLMEmbeddings",
        config="MarkupLMConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="MarkupLMEmbeddings.create_position_ids_from_input_ids",
    ),
    "mbart": LearnedFamily(
        learned="MBartLearnedPositionalEmbedding", kind="positional", table="", offset="opt", adds_offset=True
    ),
    "megatron_bert": LearnedFamily(
        learned="MegatronBertEmbeddings",
        config="MegatronBertConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "metaclip_2": LearnedFamily(
        learned="MetaClip2TextEmbeddings",
        config="MetaClip2TextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="MetaClip2VisionEmbeddings",
        patch_config="MetaClip2VisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "mobilebert": LearnedFamily(
        learned="MobileBertEmbeddings",
        config="MobileBertConfig",
        identity=("LayerNorm",),
        dim_keys=("hidden_size", "embedding_size"),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "mpnet": LearnedFamily(
        learned="MPNetEmbeddings",
        config="MPNetConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="create_position_ids_from_input_ids",
    ),
    "mra": LearnedFamily(
        learned="MraEmbeddings",
        config="MraConfig",
        offset="opt",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "mvp": LearnedFamily(
        learned="MvpLearnedPositionalEmbedding", kind="positional", table="", offset="opt", adds_offset=True
    ),
    "nystromformer": LearnedFamily(
        learned="NystromformerEmbeddings",
        config="NystromformerConfig",
        offset="opt",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "openai": LearnedFamily(
        learned="OpenAIGPTModel",
        kind="model",
        config="OpenAIGPTConfig",
        table="positions_embed",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "opt": LearnedFamily(
        learned="OPTLearnedPositionalEmbedding", kind="positional", table="", offset="opt", adds_offset=True
    ),
    "owlv2": LearnedFamily(
        learned="Owlv2TextEmbeddings",
        config="Owlv2TextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="Owlv2VisionEmbeddings",
        patch_config="Owlv2VisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "owlvit": LearnedFamily(
        learned="OwlViTTextEmbeddings",
        config="OwlViTTextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="OwlViTVisionEmbeddings",
        patch_config="OwlViTVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "pixio": LearnedFamily(
        patch="PixioEmbeddings",
        patch_config="PixioConfig",
        patch_kwargs={"num_attention_heads": 1, "n_cls_tokens": 1},
        float32=True,
    ),
    "plbart": LearnedFamily(
        learned="PLBartLearnedPositionalEmbedding",
        kind="positional",
        table="",
        offset="opt",
        adds_offset=True,
    ),
    "pp_formulanet": LearnedFamily(
        learned="PPFormulaNetLearnedPositionalEmbedding",
        kind="positional",
        table="",
        offset="opt",
        adds_offset=True,
    ),
    "qianfan_ocr": LearnedFamily(
        patch="QianfanOCRVisionEmbeddings",
        patch_config="QianfanOCRVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "rembert": LearnedFamily(
        learned="RemBertEmbeddings",
        config="RemBertConfig",
        identity=("LayerNorm",),
        dim_keys=("hidden_size", "input_embedding_size"),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "rf_detr": LearnedFamily(
        patch="RfDetrDinov2Embeddings",
        patch_config="RfDetrDinov2Config",
        patch_kwargs={"num_attention_heads": 1},
        antialias=True,
        float32=True,
    ),
    "roberta": LearnedFamily(
        learned="RobertaEmbeddings",
        config="RobertaConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="RobertaEmbeddings.create_position_ids_from_input_ids",
    ),
    "roberta_prelayernorm": LearnedFamily(
        learned="RobertaPreLayerNormEmbeddings",
        config="RobertaPreLayerNormConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="RobertaPreLayerNormEmbeddings.create_position_ids_from_input_ids",
    ),
    "roc_bert": LearnedFamily(
        learned="RoCBertEmbeddings",
        config="RoCBertConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "siglip": LearnedFamily(
        learned="SiglipTextEmbeddings",
        config="SiglipTextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="SiglipVisionEmbeddings",
        patch_config="SiglipVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
        prefix=0,
    ),
    "siglip2": LearnedFamily(
        learned="Siglip2TextEmbeddings",
        config="Siglip2TextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "splinter": LearnedFamily(
        learned="SplinterEmbeddings",
        config="SplinterConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "squeezebert": LearnedFamily(
        learned="SqueezeBertEmbeddings",
        config="SqueezeBertConfig",
        identity=("LayerNorm",),
        dim_keys=("hidden_size", "embedding_size"),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "timesformer": LearnedFamily(
        patch="TimesformerEmbeddings",
        patch_config="TimesformerConfig",
        patch_kwargs={"num_frames": 1, "attention_type": "space_only", "num_attention_heads": 1},
        mode="nearest",
        patch_call="forward",
    ),
    "tipsv2": LearnedFamily(
        patch="Tipsv2VisionEmbeddings",
        patch_config="Tipsv2VisionConfig",
        patch_kwargs={"num_attention_heads": 1},
        mode="bilinear",
        antialias=True,
        float32=True,
    ),
    "trocr": LearnedFamily(
        learned="TrOCRLearnedPositionalEmbedding",
        kind="positional",
        table="",
        offset="opt",
        adds_offset=True,
        token_positions="TrOCRSinusoidalPositionalEmbedding.create_position_ids_from_input_ids",
    ),
    "tvp": LearnedFamily(
        learned="TvpTextInputEmbeddings",
        config="TvpConfig",
        identity=("layer_norm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "vilt": LearnedFamily(
        learned="TextEmbeddings",
        config="ViltConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "visual_bert": LearnedFamily(
        learned="VisualBertEmbeddings",
        config="VisualBertConfig",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "vit": LearnedFamily(
        patch="ViTEmbeddings", patch_config="ViTConfig", patch_kwargs={"num_attention_heads": 1}
    ),
    "vit_msn": LearnedFamily(
        patch="ViTMSNEmbeddings", patch_config="ViTMSNConfig", patch_kwargs={"num_attention_heads": 1}
    ),
    "vivit": LearnedFamily(
        patch="VivitEmbeddings",
        patch_config="VivitConfig",
        patch_kwargs={"num_attention_heads": 1, "num_frames": 1, "tubelet_size": [1, 2, 2]},
    ),
    "x_clip": LearnedFamily(
        learned="XCLIPTextEmbeddings",
        config="XCLIPTextConfig",
        table="position_embedding",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        patch="XCLIPVisionEmbeddings",
        patch_config="XCLIPVisionConfig",
        patch_kwargs={"num_attention_heads": 1},
    ),
    "xlm": LearnedFamily(
        learned="XLMModel",
        kind="model",
        config="XLMConfig",
        identity=("layer_norm_emb",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    "xlm_roberta": LearnedFamily(
        learned="XLMRobertaEmbeddings",
        config="XLMRobertaConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="XLMRobertaEmbeddings.create_position_ids_from_input_ids",
    ),
    "xlm_roberta_xl": LearnedFamily(
        learned="XLMRobertaXLEmbeddings",
        config="XLMRobertaXLConfig",
        offset="roberta",
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="XLMRobertaXLEmbeddings.create_position_ids_from_input_ids",
    ),
    "xmod": LearnedFamily(
        learned="XmodEmbeddings",
        config="XmodConfig",
        offset="roberta",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
        token_positions="XmodEmbeddings.create_position_ids_from_input_ids",
    ),
    "yoso": LearnedFamily(
        learned="YosoEmbeddings",
        config="YosoConfig",
        offset="opt",
        identity=("LayerNorm",),
        kwargs={"num_attention_heads": 1, "num_hidden_layers": 1},
    ),
    # --- END ROWS ---
}

#: Every other learned-absolute family of the census (section 1, transformers 5.24), and why it has
#: no column here.
LEARNED_NOT_RUN: dict[str, str] = {
    "audio_spectrogram_transformer": "a fixed patch grid added whole in forward: no position ids, no resize",
    "audioflamingo3": "a frozen Whisper-encoder table added whole in the audio encoder's forward",
    "bros": "BrosPositionalEmbedding1D is a bbox sinusoid projection, not a learned table lookup",
    "cohere_asr": "the decoder's pos_emb is read inside CohereAsrDecoder.forward only (no standalone class)",
    "dpt": "no row: its only resize, the underscored _resize_pos_embed, is the dpt column's patch_source",
    "eomt": "a fixed patch grid added whole in forward: no position ids, no resize",
    "florence2": "DaViT's 2-D learned row/column tables (no 1-D learned or patch_grid_resize call)",
    "got_ocr2": "SAM-style absolute pos_embed added whole inside the vision encoder (no position ids)",
    "hiera": "interpolate_pos_encoding(embeddings, pos_embeds, height, width) on unrolled Hiera tokens",
    "idefics2": "NaViT fractional buckets (navit_position_ids, the default column's Idefics2 path)",
    "idefics3": "NaViT fractional buckets: navit_position_ids, not learned",
    "kimi_k25": "per-image bicubic resample of a 2-D grid plus a time sinusoid (compute_pos_embed)",
    "layoutlm": "2-D bbox tables: bbox_embedding, the default column's LayoutLM path",
    "layoutlmv2": "LayoutLMv2Embeddings has no forward (its bbox concat is a private method)",
    "lw_detr": "get_absolute_positions: a bicubic resize in a module function with no cls-prefix options",
    "mgp_str": "a fixed patch grid added whole in forward: no position ids, no resize",
    "minicpm_ocr": "NaViT nearest position ids (navit_position_ids, MiniCPM-V's vision_utils)",
    "minicpmv4_6": "NaViT nearest position ids (navit_position_ids)",
    "minicpmv4_7": "NaViT nearest position ids (navit_position_ids)",
    "moss_transcribe_diarize": "frozen Whisper-encoder table added whole inside the audio encoder's forward",
    "ovis2": "a fixed patch grid added whole in forward: no position ids, no resize",
    "pix2struct": "row/column embedders (row_col_embedding, the default column's Pix2Struct path)",
    "pvt": "PvtPatchEmbeddings takes per-stage sizes, not a config alone; bilinear resize per stage",
    "qwen2_audio": "frozen Whisper-encoder table added whole inside the audio encoder's forward",
    "radio": "_interpolate_position_embedding: a private bilinear resize and crop",
    "sam": "absolute pos_embed of a fixed 64 x 64 grid added whole inside the vision encoder",
    "sam2": "Hiera pos_embed with a windowed tile, resized in the private _get_pos_embed",
    "sam3_lite_text": "a text table bilinearly resized inside its forward (no position ids)",
    "sam_hq": "absolute pos_embed of a fixed grid added whole inside the vision encoder",
    "seggpt": "interpolate_pos_encoding(height, width) resizes a prompt-tiled table (no embeddings argument)",
    "slanext": "SAM-style absolute pos_embed added whole inside the vision encoder",
    "smolvlm": "NaViT fractional buckets: navit_position_ids, not learned",
    "tapas": "token_type_ids [B, L, 7] reset the position ids per table cell: not a learned(offset) lookup",
    "videomt": "a fixed patch grid added whole in forward: no position ids, no resize",
    "videoprism": "factorised spatial / temporal tables sized by the tubelet grid (bilinear antialias)",
    "vitdet": "get_absolute_positions: a bicubic resize of a table without its cls row, in a module function",
    "vitpose_backbone": "a fixed patch grid added whole in forward: no position ids, no resize",
    "voxtral": "frozen Whisper-encoder table added whole inside the audio encoder's forward",
    "yolos": "InterpolateInitialPositionEmbeddings: a resize with detection tokens (no ViT-style call)",
}
