"""Built-in adapter ``transformers``: Hugging Face transformers' own functions on the canonical calls.

Every value comes out of a transformers function or module ``forward``; the
adapter only converts formats.  ``torch`` and ``transformers`` are imported
when an adapter is built, never when this module is imported, so the suite
works without them (:func:`missing` says why none can be built).

Coverage, canonical function -> transformers code path (read at 5.24):

* ``rope_frequencies``: ``modeling_rope_utils.ROPE_INIT_FUNCTIONS[rope_type]
  (config, seq_len=...)`` for every type the installed version ships
  (``linear``, ``dynamic``, ``yarn``, ``longrope``, ``llama3``,
  ``proportional``); ``default`` is ``LlamaRotaryEmbedding.
  compute_default_rope_parameters`` (v5 keeps it out of the map).  HF has no
  static ``ntk`` type: not declared.
* ``rope_cos_sin``: half layout ``LlamaRotaryEmbedding.forward``; interleaved
  ``CohereRotaryEmbedding.forward`` (``repeat_interleave`` of the phases; the
  only HF table of that layout built from any ``inv_freq`` at any position).
  Variant ``gptj``: ``GPTJRotaryEmbedding.forward`` (its fixed base-10000 table).
* The RoPE zoo (``rope_source``): one variant per family of
  ``_transformers_rope_families.ROPE_FAMILIES`` (163 at 5.24, keyed by family), each running its
  own module: the rotary class built from a tiny config with the case's ``inv_freq`` / attention
  factor loaded (per-layer-type buffers for one layer type), its ``forward``, and its own apply
  function (``rope_cos_sin``, ``apply_rope``, ``rope``, ``rope_from_base``, ``rope_heads``;
  ``rope_frequencies`` default type through its ``compute_default_rope_parameters``).  The default
  column is the ``llama`` row, falling back to GPT-NeoX (partial), Cohere (interleaved table, bhsd),
  GPT-J (interleaved rotation) and GLM (interleaved partial).  Glue: half-width, complex and GPT-J
  tables expanded to the canonical layout; an interleaved canonical table given to a family that
  re-interleaves a half table as that half table; DeepSeek-style ``apply_rotary_pos_emb_interleave``
  output (rotated pairs de-interleaved) put back into pairs; the attention's ``[..., :rotary_ndims]``
  split done by the adapter (``partial = caller``).  ``ROPE_NOT_RUN`` says why each other family
  with rotary code has no column.
* ``apply_rope``: half ``llama.apply_rotary_pos_emb``, or
  ``gpt_neox.apply_rotary_pos_emb`` when only the first ``R < D`` channels
  rotate (Llama's rotates all of them); interleaved ``gptj.apply_rotary_pos_emb``
  (``rotate_every_two``).  ``rope``: the two chained, as a model chains them.
* ``t5_bucket``: ``T5Attention._relative_position_bucket``.  Underscored, but it
  is HF's only bucket function (T5, mT5, LongT5, Pix2Struct, UMT5 copy it).
* ``t5_bias``: ``T5Attention(config, has_relative_attention_bias=True).compute_bias(
  query_length, key_length, past_seen_tokens=...)`` with the case's table loaded
  into ``relative_attention_bias`` (``is_decoder`` = not bidirectional).
  Variants (``t5_source``), each the family's own copy: ``mt5``, ``longt5``
  (``LongT5Attention``; its local and transient-global classes hold the same bucket
  function), ``switch_transformers``, ``pop2piano``, ``udop`` (verbatim), ``umt5``
  (``UMT5Attention._relative_position_bucket(rel)`` reads its config),
  ``pix2struct`` (``compute_bias`` causal only); ``mpnet``:
  ``MPNetEncoder.relative_position_bucket`` and ``compute_position_bias(x)`` as its
  ``forward`` calls it (``arange`` positions, its default 32 buckets and
  max_distance 128, read at the shifted positions); ``layoutlmv2``: the module's
  ``relative_position_bucket``; ``layoutlmv3``, ``pp_doclayout_v2``: the encoder's
  ``relative_position_bucket`` method; their 1-D bias is the encoder's ``forward``
  over the concatenated positions ``[q, k]`` (its query-key block) with
  ``head_dim`` 1; ``wavlm``: ``WavLMAttention._relative_positions_bucket``
  (underscored, its only bucket function) and ``compute_bias(Lq, Lk)`` at shifted
  positions; ``cpmant``: ``CpmAntSegmentPositionEmbedding._position_bucket``
  (underscored, likewise) and its ``forward`` with one segment type; ``prophetnet``
  (``t5_bucket_source``): ``compute_relative_buckets``.
* ``t5_layout_bias``: the relative-bias encoder of a one-layer ``LayoutLMv2`` /
  ``LayoutLMv3`` / ``PP-DocLayout-V2`` reading-order config (``hidden_size = H *
  head_dim``), the case's tables loaded into ``rel_pos_bias``, ``rel_pos_x_bias``,
  ``rel_pos_y_bias`` (transposed: ``nn.Linear`` weights), ``forward(hidden, bbox,
  position_ids)``; the bias it hands its first layer is taken by a forward pre-hook
  (LayoutLMv3 / PP ``position_bias``, LayoutLMv2 ``rel_2d_pos + rel_pos``), which stops
  the run there.  PP-DocLayout-V2's 2-D bias is not T5 buckets: only zero x/y tables.
* ``t5_udop_bias``: ``udop.RelativePositionBiasAggregated(create_relative_bias(config))``
  of the three modules (``1d``, ``horizontal``, ``vertical``, with the case's
  buckets, distances, ``scaling_factor`` and ``prefix_bucket``), eval mode (no
  augmentation), ``forward(attention_mask, bbox)``.
* ``t5_gated_bias``: ``WavLMAttention.forward(hidden_states)`` with the case's
  ``rel_attn_embed``, ``gru_rel_pos_linear`` and ``gru_rel_pos_const``; the gated bias
  it passes ``torch_multi_head_self_attention`` is taken there (an instance attribute
  replacing that method), which stops the run.
* ``t5_stream_buckets``: ``prophetnet.compute_all_stream_relative_buckets``.
* ``t5_segment_bias``: ``CpmAntSegmentPositionEmbedding.forward(key_pos, query_pos,
  key_segment, query_segment)`` (it reads only the lengths of the positions: ``arange``
  from ``min(q, k)``, the case's segments at their positions, read back at them).
* These five are declared only by their family's variant (``layout_source``,
  ``udop_source``, ``gated_source``, ``stream_source``, ``segment_source``).
* ``alibi_slopes``, ``alibi_bias``, ``alibi_bias_from_heads`` (the causal,
  row-identical form ``+m j`` only): ``bloom.build_alibi_tensor``; variant ``mpt``:
  ``mpt.build_mpt_alibi_tensor`` (``m (j - L + 1)``, with ``alibi_bias_max``).
  Variant ``falcon``: ``falcon.build_alibi_tensor`` (BLOOM's formula with the slopes
  rounded to bfloat16 before the product, so each bias is a bfloat16 value).
* ``llama4_attn_scale`` (variants only): ``ministral3`` / ``mistral4`` ->
  ``get_llama_4_attn_scale(position_ids [1, N], beta, max_position_embeddings)``
  (``convention="mistral"``); ``beam`` -> ``compute_attention_scaling(position_ids)``
  (``convention="beam"`` at its fixed ``F = 2048``, ``a = 0.1``).  Float32.
* ``mrope_angles`` (variants only): ``ernie4_5_vl_moe`` ->
  ``Ernie4_5_VLMoeTextRotaryEmbedding.recomposition_frequencies`` (``section_order="ernie"``,
  HF's ``[h, w, t]`` section from the canonical ``[t, h, w]``; pairs read back as
  ``[..., 0::2]``); ``hunyuan_vl`` -> ``HunYuanVLRotaryEmbedding.recomposition_frequencies``
  (``"chunked"``, any number of components).  Each is given ``forward``'s own product
  ``position_ids[..., None].float() * inv_freq``, with the case's ``inv_freq`` loaded in the
  slot order HF's rotary class builds (read off its buffer against the plain frequencies of
  the same base: Ernie's even | odd re-ordering).  HunYuan-VL's two halves are compared: a
  pair whose channels get different angles (HF 5.24 doubles each section) is an error.
* ``alibi_bias_from_mask``: ``bloom.build_alibi_tensor(attention_mask, ...)`` itself
  (its padding-aware key index ``(cumsum(mask) - 1) * mask``).
* ``token_positions``: ``RobertaEmbeddings.create_position_ids_from_input_ids``
  (fairseq's ``make_positions``; 31 other models copy it).
* ``mrope_position_ids``: ``Qwen2_5_VLModel.get_rope_index`` of a one-layer model
  (text runs are token type 0, a ``[1, h, w]`` block an image, ``[t, h, w]`` with
  ``t > 1`` a video with ``second_per_grid_ts = time_interval``; grids are given
  before the 2 x 2 spatial merge, as the processor gives them).
* ``rope_2d_cos_sin``: ``pixtral`` -> ``PixtralVisionRotaryEmbedding.forward(x,
  position_ids [L, 2])``; ``gemma4_vision`` -> ``Gemma4VisionRotaryEmbedding.
  forward(x, pixel_position_ids [B, L, 2])``; ``dinov3`` ->
  ``DINOv3ViTRopePositionEmbedding.forward(pixel_values)`` in eval mode, which
  builds its own patch centres: a case's coordinates must be the centres of an
  ``h x w`` grid (checked against HF's ``get_patches_center_coordinates``), which
  becomes a ``[1, 3, h, w]`` input with ``patch_size=1`` (augmented coordinates
  are skipped); ``llama4_vision`` -> ``Llama4VisionRotaryEmbedding.forward``'s
  complex table of a ``side x side`` grid plus the cls row, looked up at
  ``r * side + c`` (the cls token ``(-1, -1)``: the last row), real and imaginary
  parts repeated pairwise (interleaved); ``sam2`` ->
  ``Sam2VideoVisionRotaryEmbedding.forward(x, position_ids [N, 2])`` with the ids
  in its ``(w, h)`` order; ``kimi_k25`` -> ``Kimi_K25VisionRotaryEmbedding.forward(x,
  position_ids [N, 2])`` (``(h, w)``).  Tiny configs (one head of ``head_dim``), no
  weights.
* ``sinusoidal``: ``vaswani`` -> ``xlm.create_sinusoidal_embeddings``;
  ``marian`` -> ``MarianSinusoidalPositionalEmbedding.create_weight`` +
  ``forward``; ``fairseq`` -> ``Speech2TextSinusoidalPositionalEmbedding.
  get_embedding`` (variants ``m2m_100``: M2M100's, ``fsmt``: FSMT's
  ``SinusoidalPositionalEmbedding``); ``tensor2tensor`` -> ``whisper.sinusoids``.
  A variant declares only its own copy's convention.  Verbatim copies: ``fairseq``
  ``get_embedding`` of ``kosmos2``, ``kosmos2_5``, ``nllb_moe``, ``seamless_m4t``,
  ``seamless_m4t_v2``, ``xglm``, ``trocr``, ``speecht5``, ``tipsv2``; ``marian``
  ``create_weight`` + ``forward`` of ``pegasus``, ``autoformer``, ``informer``,
  ``time_series_transformer``, ``roformer``; ``vaswani``
  ``create_sinusoidal_embeddings`` of ``flaubert``, ``distilbert``; ``tensor2tensor``
  ``SinusoidsPositionEmbedding.forward(seqlen)`` of ``qwen2_5_omni``,
  ``qwen3_omni_moe``, ``qwen3_asr``.  Variant ``musicgen`` / ``musicgen_melody``:
  ``tensor2tensor`` with ``cos_first=True`` only, their
  ``SinusoidalPositionalEmbedding.get_embedding``.  ``patchtst``:
  ``PatchTSTPositionalEncoding(config, num_positions).forward`` of a zero
  ``[1, 1, N, d]`` input (``sincos``, no cls token); ``patchtsmixer``:
  ``PatchTSMixerPositionalEncoding(config).forward`` (``context_length=N``,
  ``patch_length=patch_stride=1``, so ``num_patches = N``).  ``florence2``: ``vaswani``
  (even ``dim``) from ``Florence2VisionPositionalEmbeddingCosine1D.forward``; variant
  ``speecht5`` also ``vaswani`` from ``SpeechT5ScaledPositionalEncoding.forward`` of
  zeros (``alpha = 1``, its initial value).  These two are float32 torch products
  (class ``product``, not XLM's ``exact``).  ``videomae``: ``vaswani`` (any ``dim``) from
  ``get_sinusoid_encoding_table(n, d)`` (float64 NumPy, like XLM's).  ``marian`` from the
  float32 torch code (class ``product``) of ``ctrl`` (``positional_encoding(n, d,
  float32)``: ``sin`` of the even, ``cos`` of the odd angle columns, so any ``dim``),
  ``canary`` (``CanaryPositionalEmbedding(n, d).compute_default_singular_positional_embedding()``,
  NeMo's timescales ``10000**((d-2)/d)`` over ``d/2 - 1`` steps: Marian's frequencies;
  ``forward`` divides the rows by ``sqrt(d)``, a scale outside this mapping; odd ``d`` is
  its ValueError) and ``zoedepth`` (``ZoeDepthPatchTransformerEncoder(config).
  positional_encoding_1d(1, n, d)``; even ``dim``: an odd one gives ``d + 1`` columns).
  ``tensor2tensor`` from ``pegasus_x`` (``PegasusXSinusoidalPositionalEmbedding(d,
  max_scale).forward(zeros [1, N, d], position_ids=[N, 1])``: the fairseq frequencies
  without fairseq's offset, i.e. t2t's; even ``dim``, an odd one raises a broadcast
  RuntimeError), ``fun_asr_nano`` (``FunAsrNanoPositionEmbedding(n, d, max_timescale).
  compute_default_singular_positional_embedding()``, Whisper's copy; ``forward`` reads
  rows from 1, FunASR's count from one) and ``timesfm`` (``TimesFmPositionalEmbedding(
  TimesFmConfig(hidden_size=d, min_timescale, max_timescale)).forward(position=[1, N])``,
  both timescales; an odd ``d`` pads the sequence axis, a reproduced bug).
  :data:`SINUSOID_NOT_RUN` says why ``timesfm2_5``'s copy has no column.
* ``shaw_index``, ``shaw_table_rows`` (variants only; no Shaw code in the default
  column): ``speecht5`` -> ``SpeechT5RelativePositionalEncoding.forward`` with
  ``pe_k`` row ``r`` holding ``r`` (the gathered rows are the index);
  ``pe_k.num_embeddings``.  ``vits`` -> ``VitsAttention._get_relative_embeddings`` +
  ``_relative_position_to_absolute_position`` (underscored: VITS's index exists
  only inside them, ``forward`` returns softmaxed weights) with ``emb_rel_k`` row
  ``m`` holding ``m + 1`` and a query of one (``q . E^T`` is then ``E`` broadcast):
  a value ``v > 0`` is row ``v - 1``, a ``0`` (padding) the canonical zero row
  ``2w + 1``; rows ``emb_rel_k.shape[1] + 1``.  ``granite_speech``,
  ``granite_speech_plus``, ``granite_speech5`` -> the encoder's ``attention_dists``
  buffer (one block), ``rel_pos_emb.num_embeddings``; distances ``|r| >=
  context_size`` never occur in a block (unsupported).  Relative positions
  ``r = j - i`` are read at ``(i, j) = (max(-r, 0), max(r, 0))`` of HF's
  ``[n, n]`` self-attention index.  The logits and value terms are inline products
  in the models' ``forward`` before a softmax: not mapped.
* ``learned`` (offset ``opt``): ``OPTLearnedPositionalEmbedding.forward``.
* The learned zoo (``_transformers_learned_families``, one row and variant per family; the default
  column's ``opt``, ``roberta`` and vision paths are rows of it): ``learned`` runs the family's own
  ``*Embeddings(config).forward`` (BERT style: every parameter zeroed, its LayerNorms replaced by an
  identity ``nn.Linear``, the case's table in its position ``nn.Embedding``), its
  ``*LearnedPositionalEmbedding(n, d).forward`` (BART, OPT) or its model's ``forward`` ->
  ``hidden_states[0]`` (GPT-2's ``wpe``, XLM); positions the family numbers itself (a range from
  ``cache_length``, fairseq's count of a padded batch, OPT's attention-mask count) go in as input ids /
  mask and cache length, any others as ``position_ids`` (skipped where ``forward`` takes none).
  ``token_positions``: the family's copy of ``create_position_ids_from_input_ids``.
  ``patch_grid_resize``: the family's ``interpolate_pos_encoding``, only for its own prefix rows,
  mode and antialias (float32 where it resizes in float32).
* ``causal_mask``: ``masking_utils.causal_mask_function``,
  ``sliding_window_causal_mask_function``, ``chunked_causal_mask_function``.
* ``attention``: ``llama.eager_attention_forward`` with the mask made by
  ``masking_utils.eager_mask`` (``0`` kept, ``finfo(dtype).min`` masked).
* ``detr_sine_2d``: ``DetrSinePositionEmbedding.forward(shape, device, dtype,
  mask)`` (``detr``), ``DeformableDetrSinePositionEmbedding`` (``deformable_detr``);
  variants ``conditional_detr`` (its copy), ``dab_detr``
  (``DabDetrSinePositionEmbedding(config)(pixel_values, pixel_mask)``, separate
  temperatures, float32), ``grounding_dino`` / ``mm_grounding_dino`` (their
  ``SinePositionEmbedding(config)``, float32) and ``table_transformer`` (the old
  ``forward(pixel_values, pixel_mask)``, float32); ``maskformer``, ``mask2former``,
  ``oneformer``, ``sam2`` (neck), ``edgetam``, ``sam3``, ``sam3_lite_text``, ``sam2_video``,
  ``edgetam_video``, ``sam3_tracker_video`` (``PositionEmbeddingSine``): their verbatim
  copies of DETR's class.  In the model dtype, so float64 too.  A copy's column
  skips the Deformable DETR convention (only Deformable DETR's class has the offset).
* ``detr_coord_sine``: ``conditional_detr.encode_sinusoidal_position_embedding``
  (variants ``dab_detr``, ``grounding_dino``, ``mm_grounding_dino``, ``lw_detr``,
  ``rf_detr``: their verbatim copies);
  ``DeformableDetrModel.get_proposal_pos_embed`` (on a stand-in ``self`` holding
  only the config it reads).  Float32 (its ``dim_t`` is float32 for any input).
* ``sincos_2d``: ``rt_detr.build_2d_sinusoidal_position_embedding`` (``rt_detr``;
  variants ``rt_detr_v2``, ``d_fine``, ``deimv2``, ``pp_doclayout_v2``/``v3``/``v4``,
  ``aimv2``, ``granite_docling``: their verbatim copies),
  ``OmDetTurboHybridEncoder.build_2d_sincos_position_embedding(width, height, ...)``
  (``omdet_turbo``), ``ViTMAEEmbeddings.initialize_weights`` (``vit_mae``: square grids
  with the cls row, float32 parameter); grids ``arange(H) x arange(W)`` only.

* ``window_bias``: ``swin.SwinRelativePositionBias.forward`` with the case's table
  loaded into ``relative_position_bias_table``; with ``cls_token``
  ``beit.BeitRelativePositionBias.forward(window)`` of a ``BeitConfig(image_size=window,
  patch_size=1)``, which resizes its sub-table bilinearly to the same window first
  (the identity only for a square one).  Variants ``donut``, ``maskformer`` (MaskFormer-Swin): the
  copies' ``relative_position_bias_table[relative_position_index]``;
  ``data2vec`` (data2vec-vision): ``Data2VecVisionRelativePositionBias.forward``.
* ``swinv2_log_coords``: ``Swinv2SelfAttention(config, dim, heads, window,
  pretrained_window_size).relative_coords_table`` (``[]`` is HF's ``[0, 0]``); variant
  ``swin2sr``: ``Swin2SRSelfAttention``'s.
* ``decomposed_rel_pos``: ``SamVisionAttention.get_decomposed_rel_pos(query [B, qh qw, C],
  rel_pos_h, rel_pos_w, q_size, k_size)``; variants ``vitdet``:
  ``add_decomposed_relative_positions`` on a zero ``attn``, ``sam_hq``, ``got_ocr2``: the
  copies' ``get_decomposed_rel_pos``, ``seggpt``: ``SegGptAttention.add_decomposed_rel_pos``
  on a zero ``attn``.  Variant ``clap``: ``ClapAudioSelfAttention``'s Swin table and index.
* ``deberta_bucket``: ``deberta_v2.make_log_bucket_position(relative, position_buckets,
  max_relative_positions)`` (float32; variant ``sew_d``: its copy).  DeBERTa v1 has no buckets.
* ``deberta_relative_index``: ``DisentangledSelfAttention.disentangled_attention_bias(query_layer,
  key_layer, None, rel_embeddings, 1)`` of a ``DebertaV2Config(hidden_size=1, num_attention_heads=1,
  pos_att_type=[term], share_att_key=False)`` (``deberta_v2``; ``sew_d``: ``SEWDConfig``'s
  ``DisentangledSelfAttention``), its ``pos_key_proj`` / ``pos_query_proj`` the identity, query
  and key content all ones and row ``s`` of ``rel_embeddings`` holding ``s``: each score is the row
  the term gathered (scale ``sqrt(1 * 1)``).  Variant ``deberta`` (v1): ``disentangled_att_bias``
  with the encoder's ``build_relative_position(query_layer, key_layer)`` (its own ``relative_pos=None``
  path passes a device to a two-argument function), the whole ``2 M``-row table, so the slice
  ``[M - span, M + span)`` shows in the rows.  Positions ``arange(Lq)``, ``arange(Lk)`` only.
* ``patch_grid_resize``: the family's ``interpolate_pos_encoding(embeddings, height,
  width)`` with the case's table loaded into its position weight, chosen by the
  options: ``scale_factor`` -> ``IdeficsVisionEmbeddings`` (only Idefics' own
  ``((h + 0.1)/n, (w + 0.1)/n)``); ``antialias`` -> ``Dinov2WithRegistersEmbeddings``
  (float32); otherwise bicubic by prefix rows: 0 ``SiglipVisionEmbeddings``, 2
  ``DeiTEmbeddings``, 1 ``CLIPVisionEmbeddings`` for a ``[1 + N, D]`` table (CLIP's
  ``nn.Embedding`` weight), ``ViTEmbeddings`` for a ``[1, 1 + N, D]`` one in float64
  and ``Dinov2Embeddings`` in float32 (the same call; DINOv2 casts to float32).
  ``nearest`` with one prefix row -> ``TimesformerEmbeddings.forward`` (``space_only``, one
  frame of zeros, its patch projection and class token zeroed, so the output is the resized
  table). HF grids are square (``sqrt(N)``); ViLT's bilinear is not covered.
* ``grid_resize``: SAM's ``SamVisionAttention.get_rel_pos(s, s, table)`` (1-D
  ``linear`` to ``2 s - 1`` rows); its ``[s, s, D]`` gather is read back row by row.

* ``fourier_features``: ``SamPositionalEmbedding.forward`` (input_shape
  ``[1, 1]`` is its ``input_shape=None``); ``offset=0.5`` is
  ``SamPromptEncoder.forward`` (labels 1, ``point_embed[1]`` zeroed, its padding point dropped) on
  its square ``image_size``.  ``fourier_grid``:
  ``SamModel.get_image_wide_positional_embeddings`` (square) or SAM 2's
  (non-square), called on a namespace holding the embedding.
* ``navit_position_ids``: ``Idefics2VisionEmbeddings.forward`` with 1 x 1
  patches, zero patch embeddings and an identity-like position table (row
  ``r`` holds ``r``), so the output is the position ids, read back exactly;
  ``arithmetic="float32_divide"`` is MiniCPM-V's
  ``vision_utils.get_vision_nearest_position_ids`` on each image's ``(h, w)``
  (its flat ids of the real patches put back into the padded layout).
* ``bbox_embedding``: ``sum`` ``LayoutLMEmbeddings.forward`` (word, position
  and token-type tables zeroed, LayerNorm replaced by the identity);
  ``concat`` without the clip: LayoutLMv2's, in a private method only (not mapped),
  with ``clip_shape`` ``LayoutLMv3TextEmbeddings.calculate_spatial_position_embeddings``.
* ``row_col_embedding``: ``sum`` ``Pix2StructVisionEmbeddings.forward`` (zero
  patch projection; rows and columns in channels 0 and 1 as floats);
  ``concat`` ``DetrLearnedPositionEmbedding.forward`` for whole grids (tables
  padded with zero rows to its 50).

* ``rel_sinusoid_table`` / ``rel_shift`` / ``rel_attention_scores`` (Transformer-XL relative
  attention), one variant per family, none in the default column: ``xlnet`` ->
  ``XLNetModel(config).relative_positional_encoding(qlen, klen)`` (``attn_type`` bi / uni,
  ``clamp_len``, ``bi_data``) and ``XLNetRelativeAttention.rel_shift_bnij``; ``wav2vec2_conformer``,
  ``wav2vec2_bert``, ``seamless_m4t`` -> their ``RelPositionalEmbedding(config)(hidden)`` and
  ``_apply_relative_position_encoding(attention, q, k, R)`` of their relative self-attention
  (``linear_pos`` the identity, the case's ``u``/``v`` in ``pos_bias_u``/``pos_bias_v``, the case's
  scale in ``scaling``; the content logit ``(q + u) k^T * scaling`` is the eager attention's matmul,
  done here on the returned ``q + u``); their shift alone is that function on ``q = x``, ``R = I``
  (a matmul by the identity, exact); ``fastspeech2_conformer`` -> ``RelPositionalEncoding(config,
  encoder_config)`` and ``FastSpeech2ConformerAttention.shift_relative_position_tensor`` (its
  ``klen = P // 2 + 1`` only); ``parakeet``, ``nemotron_asr_streaming`` -> ``RelPositionalEncoding.
  forward(hidden[, cached_frames = klen - qlen])`` and the attention's ``_rel_shift`` plus forward's
  ``[..., :klen]``; ``funnel`` -> ``FunnelAttentionStructure.get_position_embeds`` (block 0,
  ``relative_shift``) and ``_relative_shift_gather(x, klen, shift)``; ``gemma3n`` ->
  ``Gemma3nAudioRelativePositionEmbedding._relative_shift``, ``gemma4`` -> ``Gemma4AudioAttention.
  _rel_shift`` (context ``klen`` as chunk 1, left ``klen``, right 0).  The underscored methods and
  functions are the shift itself, with no public path.  Not reachable: XLNet's, FastSpeech2's,
  Parakeet's, Nemotron's, Funnel's and Gemma's logits (their attention returns softmax weights, or
  projects its own table inside ``forward``), and Gemma's tables (t2t timing signals of its own
  window, ``left - 1 .. -right`` / ``C // 2 .. 0``, not a ``(qlen, klen)`` sequence).


Not covered: HF has no standalone ``interpolate_table``, general Shaw index (v5
removed ``relative_key``; only the speech models' own, above), ``relative_positions`` or Llama 4 temperature
function (``attn_scales`` is inline in ``Llama4TextAttention.forward``); no
``[tokens, heads, dim]`` rotation (``rope_heads`` layout ``thd``).

Glue, each a convention difference and nothing computed:

1. NumPy in, torch out (``torch.from_numpy``); CPU only.
2. RoPE configs: ``rope_frequencies(dim, base, scaling)`` becomes a
   ``LlamaConfig(head_dim=dim, rope_parameters={"rope_theta": base,
   **scaling})``; a ``max_position_embeddings`` key moves from the dict to the
   config, where HF reads it (absent, it is ``original * factor``: unread by
   the types that lack it, it only keeps HF's range warnings quiet).
3. Given ``inv_freq`` and ``attention_factor`` are loaded into a rotary
   module's ``inv_freq`` buffer (``register_buffer``, as HF's dynamic update
   does) and its ``attention_scaling`` attribute; ``forward`` then casts them.
4. Head layouts: canonical ``x [..., S, D]`` with ``cos [..., S, R]`` is
   reshaped to HF's ``[batch, heads, seq, dim]`` with ``cos [batch, seq, R]``
   (``unsqueeze_dim=1``) or GPT-J's ``[batch, seq, heads, dim]`` with
   half-width ``sin, cos [batch, seq, R/2]``, and back.
5. GPT-J tables are half-width: the canonical interleaved table is their
   ``repeat_interleave(2)`` (what ``gptj.apply_rotary_pos_emb`` does first), and
   ``cos[..., 0::2]`` goes back in.  GPT-J's partial rotary splits
   ``x[..., :R]`` / ``x[..., R:]`` as ``GPTJAttention.forward`` does.
6. Tables hold rows ``0 .. n-1``: the adapter builds ``n = max + 1`` rows and
   looks the positions up (``nn.functional.embedding``, as the models'
   ``nn.Embedding`` does; ``index_select`` as Speech2Text's ``forward`` does).
   A fairseq position ``p`` is HF's row ``p + padding_idx + 1`` (what
   ``create_position_ids_from_input_ids`` numbers a token).  Tables past
   :data:`MAX_TABLE` elements are not built (skipped).
7. ALiBi: slopes are read off the tensor (BLOOM ``m * 1`` at key 1, MPT
   ``-m`` at key ``L - 2``); the ``(H, 1, L)`` key row is taken at the key
   positions and broadcast over the queries, as ``baddbmm`` broadcasts it.
8. Mask functions are evaluated on broadcast index tensors ``q[:, None]``,
   ``k[None, :]`` (HF's index-based path; ``left_padding = 0``).
9. Attention: a boolean ``mask`` becomes HF's mask function ``keep[b, i, j]``;
   a ``bias`` is added to the additive mask (as T5 adds ``position_bias``);
   ``scale=None`` is ``head_dim**-0.5``; q/k/v go in as ``[batch, 1, seq, dim]``
   and HF's ``[batch, seq, heads, dim]`` output is transposed back.
10. Grid resize: the new grid goes in as an image of ``h x w`` patches of 2 pixels; the
    same grid *without* the early return (``skip_same_grid=False``) as an image one
    pixel wider (``width // 2`` is unchanged, ``height != width`` bypasses HF's
    ``num_patches == num_positions and height == width`` return).

Precision: HF computes positional tables, frequencies and phases in float32
(``.float()``; XLM and Marian in float64 NumPy, then ``torch.FloatTensor``), so
the adapter declares float32, and float64 for ``apply_rope`` and ``learned``,
which follow their input.  Phases are float32 products ``m * theta``
(``"product"``); XLM's and Marian's tables are rounded once (``"exact"``).

Variants: a query row with every key masked gets uniform weights
(``fully-masked-rows: uniform``: ``finfo.min`` on every logit).  One rule the
suite cannot express: HF >= 5 *requires* YaRN's ``factor`` key (``validate_rope``
raises ``KeyError`` without it; an explicit ``factor: None`` derives
``max_position_embeddings / original``), a rule about one key of the ``yarn``
topic, whose variants are whole formulas; the case that leaves the key out is
classified as that convention in ``docs/matrix/classification.json``.
"""

from __future__ import annotations

import dataclasses
import importlib
import inspect
import math
from typing import Any

import numpy as np

from ._transformers_learned_families import LEARNED_FAMILIES, LEARNED_NOT_RUN, LearnedFamily
from ._transformers_rope_families import ROPE_FAMILIES, ROPE_NOT_RUN, RopeFamily
from .base import Adapter, Capabilities, Unsupported

__all__ = ["ADAPTERS", "DEFAULT_FAMILIES", "NOT_RUN", "TransformersAdapter", "missing"]

#: Largest table (rows x columns) the adapter asks HF to build; XLM and Marian fill theirs in Python.
MAX_TABLE = {"torch": 2**25, "python": 2**21}

_SINUSOIDAL_OPTIONS = {
    "vaswani": {"base": 10000.0},
    "marian": {"base": 10000.0},
    "fairseq": {"padding_idx": 1},
    "tensor2tensor": {"min_timescale": 1.0, "max_timescale": 1.0e4, "cos_first": False},
    "patchtst": {"num_positions": None},
}

#: ``*_source`` attributes that choose a sinusoid table -> the convention that family's copy serves.
_SINUSOID_SOURCES = {
    "xlm_source": "vaswani",
    "marian_source": "marian",
    "fairseq_source": "fairseq",
    "t2t_source": "tensor2tensor",
    "patchtst_source": "patchtst",
}

#: Families with a sinusoid table no column runs -> why (the zoo page shows it, ``NOT_RUN``).
SINUSOID_NOT_RUN = {
    "timesfm2_5": (
        "TimesFm2_5PositionalEmbedding is an unused copy of TimesFM's (TimesFM 2.5 positions with "
        "RoPE; TimesFm2_5Config has no min_timescale / max_timescale, so the class cannot be built "
        "from its config); the code is TimesFM's, run by transformers:timesfm"
    ),
}

#: ``marian_source`` -> the family's verbatim copy of ``MarianSinusoidalPositionalEmbedding``.
_MARIAN_CLASS = {
    "marian": "MarianSinusoidalPositionalEmbedding",
    "pegasus": "PegasusSinusoidalPositionalEmbedding",
    "autoformer": "AutoformerSinusoidalPositionalEmbedding",
    "informer": "InformerSinusoidalPositionalEmbedding",
    "time_series_transformer": "TimeSeriesSinusoidalPositionalEmbedding",
    "roformer": "RoFormerSinusoidalPositionalEmbedding",
}

#: ``marian_source`` values whose Marian table is float32 torch code of the family's own (not a
#: copy of Marian's float64 ``create_weight``): class ``product``.
_TORCH_MARIAN = ("ctrl", "canary", "zoedepth", "bros")

#: ``fairseq_source`` -> (module directory, class) of the family's copy of fairseq's ``get_embedding``.
_FAIRSEQ_CLASS = {
    "speech2text": ("speech_to_text", "Speech2TextSinusoidalPositionalEmbedding"),
    "m2m100": ("m2m_100", "M2M100SinusoidalPositionalEmbedding"),
    "fsmt": ("fsmt", "SinusoidalPositionalEmbedding"),
    "kosmos2": ("kosmos2", "Kosmos2TextSinusoidalPositionalEmbedding"),
    "kosmos2_5": ("kosmos2_5", "Kosmos2_5TextSinusoidalPositionalEmbedding"),
    "nllb_moe": ("nllb_moe", "NllbMoeSinusoidalPositionalEmbedding"),
    "seamless_m4t": ("seamless_m4t", "SeamlessM4TSinusoidalPositionalEmbedding"),
    "seamless_m4t_v2": ("seamless_m4t_v2", "SeamlessM4Tv2SinusoidalPositionalEmbedding"),
    "xglm": ("xglm", "XGLMSinusoidalPositionalEmbedding"),
    "trocr": ("trocr", "TrOCRSinusoidalPositionalEmbedding"),
    "speecht5": ("speecht5", "SpeechT5SinusoidalPositionalEmbedding"),
    "tipsv2": ("tipsv2", "Tipsv2SinusoidalPositionalEmbedding"),
}

#: ``shaw_source`` -> the Shaw convention of that family's relative index.
_SHAW_CONVENTION = {
    "speecht5": "speecht5",
    "vits": "vits",
    "granite_speech": "granite_speech",
    "granite_speech_plus": "granite_speech",
    "granite_speech5": "granite_speech",
}

#: Longest self-attention the Shaw probes build (an n x n index read back from HF).
MAX_SHAW_LENGTH = 4096


def _module(family: str) -> Any:
    return importlib.import_module(f"transformers.models.{family}.modeling_{family}")


def missing() -> str | None:
    """Why no transformers adapter can be built here (None when torch and transformers import)."""
    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
    except ImportError as exc:
        return (
            f"the transformers adapter needs torch and transformers (pip install transformers torch); {exc}"
        )
    return None


def _default_rope_parameters(config_class: Any) -> dict[str, Any]:
    """``config_class``'s default ``rope_parameters`` (per layer type: ``{type: dict or None}``)."""
    if config_class not in _DEFAULT_ROPE:
        _DEFAULT_ROPE[config_class] = dict(getattr(config_class(), "rope_parameters", None) or {})
    return _DEFAULT_ROPE[config_class]


_DEFAULT_ROPE: dict[Any, dict[str, Any]] = {}


def _float32_only(dtype: str, what: str) -> None:
    if dtype != "float32":
        msg = f"{what} computes in float32 only; {dtype} results would be float32 values widened"
        raise Unsupported(msg)


def _check_table(rows: int, cols: int, kind: str, what: str) -> None:
    if rows * max(cols, 1) > MAX_TABLE[kind]:
        msg = f"{what} builds every row 0 .. {rows - 1} ({rows} x {cols}); too large to build here"
        raise Unsupported(msg)


def _nonnegative(positions: np.ndarray, what: str) -> int:
    """Rows needed for a table lookup at ``positions`` (all >= 0)."""
    if positions.size and int(positions.min()) < 0:
        msg = f"{what} has rows for positions 0 .. n-1 only; got {int(positions.min())}"
        raise Unsupported(msg)
    return int(positions.max()) + 1 if positions.size else 1


def _options(convention: str, options: dict[str, Any], fixed: tuple[str, ...], what: str) -> dict[str, Any]:
    """The convention's options with defaults; Unsupported if a ``fixed`` one is not its default."""
    merged = {**_SINUSOIDAL_OPTIONS[convention], **options}
    unknown = sorted(set(options) - set(_SINUSOIDAL_OPTIONS[convention]))
    if unknown:
        msg = f"{what} has no options {unknown}"
        raise Unsupported(msg)
    for name in fixed:
        if merged[name] != _SINUSOIDAL_OPTIONS[convention][name]:
            msg = f"{what} hard-codes {name}={_SINUSOIDAL_OPTIONS[convention][name]!r}; got {merged[name]!r}"
            raise Unsupported(msg)
    return merged


#: ``t5_source`` -> (module, attention class, config class) of a family holding T5Attention's bucket
#: function and ``compute_bias`` (verbatim, or UMT5's per-layer method on its config).
_T5_COPIES = {
    "t5": ("t5", "T5Attention", "T5Config"),
    "mt5": ("mt5", "MT5Attention", "MT5Config"),
    "longt5": ("longt5", "LongT5Attention", "LongT5Config"),
    "umt5": ("umt5", "UMT5Attention", "UMT5Config"),
    "pix2struct": ("pix2struct", "Pix2StructTextAttention", "Pix2StructTextConfig"),
    "switch_transformers": ("switch_transformers", "SwitchTransformersAttention", "SwitchTransformersConfig"),
    "pop2piano": ("pop2piano", "Pop2PianoAttention", "Pop2PianoConfig"),
    "udop": ("udop", "UdopAttention", "UdopConfig"),
}
#: Functions only a family's variant serves -> the source attribute naming its family (None in the
#: default column: not served there).
_FAMILY_ONLY = {
    "t5_layout_bias": "layout_source",
    "t5_udop_bias": "udop_source",
    "t5_gated_bias": "gated_source",
    "t5_stream_buckets": "stream_source",
    "t5_segment_bias": "segment_source",
    "rel_sinusoid_table": "rel_table_source",
    "rel_shift": "rel_shift_source",
    "rel_attention_scores": "rel_scores_source",
    "llama4_attn_scale": "attn_scale_source",
    "mrope_angles": "mrope_source",
}


class _Captured(Exception):
    """Raised by a capture hook once it holds the bias a family's forward builds (the rest is not run)."""


#: ``detr_sine_source`` -> the class name of that family's copy of DETR's sine
#: (in ``transformers.models.<source>.modeling_<source>``).
_DETR_SINE_CLASS = {
    "detr": "DetrSinePositionEmbedding",
    "conditional_detr": "ConditionalDetrSinePositionEmbedding",
    "table_transformer": "TableTransformerSinePositionEmbedding",
    "maskformer": "MaskFormerSinePositionEmbedding",
    "mask2former": "Mask2FormerSinePositionEmbedding",
    "oneformer": "OneFormerSinePositionEmbedding",
    "sam2": "Sam2SinePositionEmbedding",
    "edgetam": "EdgeTamSinePositionEmbedding",
    "sam3": "Sam3SinePositionEmbedding",
    "sam3_lite_text": "Sam3LiteTextSinePositionEmbedding",
    "sam2_video": "Sam2VideoPositionEmbeddingSine",
    "edgetam_video": "EdgeTamVideoPositionEmbeddingSine",
    "sam3_tracker_video": "Sam3TrackerVideoPositionEmbeddingSine",
}


#: Vision towers holding their own copy of a 2-D rotary class ``<Prefix>VisionRotaryEmbedding(config)``
#: whose ``forward(x, position_ids [N, 2])`` (``(row, column)`` ids, as
#: ``vision_utils.get_vision_position_ids`` gives them) returns the ``(cos, sin)`` table: family ->
#: (class, its config class, the convention it computes).  Found by running each class.
_VISION_ROTARY = {
    "qwen2_vl": ("Qwen2VLVisionRotaryEmbedding", "Qwen2VLVisionConfig", "qwen2_vl"),
    "qwen2_5_vl": ("Qwen2_5_VLVisionRotaryEmbedding", "Qwen2_5_VLVisionConfig", "qwen2_vl"),
    "qwen2_5_omni": ("Qwen2_5OmniVisionRotaryEmbedding", "Qwen2_5OmniVisionEncoderConfig", "qwen2_vl"),
    "qwen3_vl": ("Qwen3VLVisionRotaryEmbedding", "Qwen3VLVisionConfig", "qwen2_vl"),
    "qwen3_vl_moe": ("Qwen3VLMoeVisionRotaryEmbedding", "Qwen3VLMoeVisionConfig", "qwen2_vl"),
    "qwen3_omni_moe": ("Qwen3OmniMoeVisionRotaryEmbedding", "Qwen3OmniMoeVisionEncoderConfig", "qwen2_vl"),
    "qwen3_5": ("Qwen3_5VisionRotaryEmbedding", "Qwen3_5VisionConfig", "qwen2_vl"),
    "qwen3_5_moe": ("Qwen3_5MoeVisionRotaryEmbedding", "Qwen3_5MoeVisionConfig", "qwen2_vl"),
    "qwen4_exp": ("Qwen4ExpVisionRotaryEmbedding", "Qwen4ExpVisionConfig", "qwen2_vl"),
    "glm4v": ("Glm4vVisionRotaryEmbedding", "Glm4vVisionConfig", "qwen2_vl"),
    "glm4v_moe": ("Glm4vMoeVisionRotaryEmbedding", "Glm4vMoeVisionConfig", "qwen2_vl"),
    "glm5_next": ("Glm5NextVisionRotaryEmbedding", "Glm5NextVisionConfig", "qwen2_vl"),
    "glm_ocr": ("GlmOcrVisionRotaryEmbedding", "GlmOcrVisionConfig", "qwen2_vl"),
    "cohere_compass": ("CohereCompassVisionRotaryEmbedding", "CohereCompassVisionConfig", "qwen2_vl"),
    "dots3_note": ("Dots3NoteVisionRotaryEmbedding", "Dots3NoteVisionConfig", "qwen2_vl"),
    "ernie4_5_vl_moe": ("Ernie4_5_VLMoeVisionRotaryEmbedding", "Ernie4_5_VLMoeVisionConfig", "qwen2_vl"),
    "exaone4_5": ("Exaone4_5_VisionRotaryEmbedding", "Exaone4_5_VisionConfig", "qwen2_vl"),
    "lfm3_vl": ("Lfm3VlVisionRotaryEmbedding", "Lfm3VlVisionConfig", "qwen2_vl"),
    "muse_glimmer": ("MuseGlimmerVisionRotaryEmbedding", "MuseGlimmerVisionConfig", "qwen2_vl"),
    "muse_spark": ("MuseSparkVisionRotaryEmbedding", "MuseSparkVisionConfig", "qwen2_vl"),
    "paddleocr_vl": ("PaddleOCRVisionRotaryEmbedding", "PaddleOCRVisionConfig", "qwen2_vl"),
    "video_llama_3": ("VideoLlama3VisionRotaryEmbedding", "VideoLlama3VisionConfig", "qwen2_vl"),
    "step3p7": ("Step3p7VisionRotaryEmbedding", "Step3p7VisionConfig", "qwen2_vl"),
    "inkling2": ("Inkling2VisionRotaryEmbedding", "Inkling2VisionConfig", "sam2"),
    "mlcd": ("MLCDRotaryEmbedding", "MLCDVisionConfig", "qwen2_vl"),
}
#: Copies of DINOv3's patch-centre RoPE (``forward(pixel_values)``, its module's own
#: ``get_patches_center_coordinates``) and of SAM 2's memory-attention RoPE: family -> (class, config).
_DINOV3_ROPE = {
    "dinov3_vit": ("DINOv3ViTRopePositionEmbedding", "DINOv3ViTConfig"),
    "eomt_dinov3": ("EomtDinov3RotaryEmbedding", "EomtDinov3Config"),
    "sapiens2": ("Sapiens2RopePositionEmbedding", "Sapiens2Config"),
}
_SAM2_ROPE = {
    "sam2_video": ("Sam2VideoVisionRotaryEmbedding", "Sam2VideoConfig"),
    "edgetam_video": ("EdgeTamVideoVisionRotaryEmbedding", "EdgeTamVideoConfig"),
    "sam3_tracker_video": ("Sam3TrackerVideoVisionRotaryEmbedding", "Sam3TrackerVideoConfig"),
}
#: Copies of Idefics2's NaViT bucketing ``<Prefix>VisionEmbeddings``: family -> (class, config class).
_NAVIT = {
    "idefics2": ("Idefics2VisionEmbeddings", "Idefics2VisionConfig"),
    "idefics3": ("Idefics3VisionEmbeddings", "Idefics3VisionConfig"),
    "smolvlm": ("SmolVLMVisionEmbeddings", "SmolVLMVisionConfig"),
}
#: M-RoPE position ids from another family's own ``get_rope_index``: family -> (model, config class).
_MROPE_IDS = {
    "glm46v": ("Glm46VModel", "Glm46VConfig"),
    "cosmos3_omni": ("Cosmos3OmniModel", "Cosmos3OmniConfig"),
}
#: Copies of SAM's random Fourier features ``<Prefix>PositionalEmbedding``: family -> class.
_FOURIER = {
    "sam": "SamPositionalEmbedding",
    "sam_hq": "SamHQPositionalEmbedding",
    "sam2": "Sam2PositionalEmbedding",
    "edgetam": "EdgeTamPositionalEmbedding",
    "sam3_tracker": "Sam3TrackerPositionalEmbedding",
    "sam2_video": "Sam2VideoPositionalEmbedding",
    "edgetam_video": "EdgeTamVideoPositionalEmbedding",
    "sam3_tracker_video": "Sam3TrackerVideoPositionalEmbedding",
}


def _family_refusal(exc: Exception, row: Any, scaling: dict[str, Any] | None) -> Exception:
    """``Unsupported`` for what a family's code refuses by design (``exc`` itself, to re-raise, else):
    a per-layer ``head_dim`` read globally (Gemma 4), or a scaling type the family's config or
    rotary class does not take (Phi-3, RecurrentGemma); a default-type error is the family's."""
    kind = (scaling or {}).get("rope_type", "default")
    name = type(exc).__name__
    if name == "AmbiguousGlobalPerLayerAttributeError":
        return Unsupported(f"{row.config} sets head_dim per layer, which this call reads globally")
    if kind == "default":
        return exc
    if isinstance(exc, ValueError) and "does not support RoPE types" in str(exc):
        return Unsupported(f"{row.rotary} supports no rope_type but default ({kind!r} given)")
    rewritten = name == "KeyError" and f"'rope_type'='{kind}'" not in str(exc)  # Phi-3: longrope's keys
    if rewritten or name in ("StrictDataclassClassValidationError", "AttributeError"):
        # Phi-3 rewrites every type to longrope; RecurrentGemma's config lacks what a scaling reads (a
        # KeyError about the type asked for, HF's missing YaRN factor, is the family's own answer)
        return Unsupported(f"{row.config} refuses rope_type {kind!r} ({name}): not this family's scaling")
    return exc


def _family_class(family: str, name: str, kind: str = "modeling") -> Any:
    """``name`` from ``transformers.models.<family>.<kind>_<family>``."""
    return getattr(importlib.import_module(f"transformers.models.{family}.{kind}_{family}"), name)


#: The Conformer families sharing Wav2Vec2-Conformer's RelPositionalEmbedding and
#: _apply_relative_position_encoding: (embedding class, attention class, config class, heads key).
_CONFORMER = {
    "wav2vec2_conformer": (
        "Wav2Vec2ConformerRelPositionalEmbedding",
        "Wav2Vec2ConformerSelfAttention",
        "Wav2Vec2ConformerConfig",
        "num_attention_heads",
    ),
    "wav2vec2_bert": (
        "Wav2Vec2BertRelPositionalEmbedding",
        "Wav2Vec2BertSelfAttention",
        "Wav2Vec2BertConfig",
        "num_attention_heads",
    ),
    "seamless_m4t": (
        "SeamlessM4TConformerRelPositionalEmbedding",
        "SeamlessM4TConformerSelfAttention",
        "SeamlessM4TConfig",
        "speech_encoder_attention_heads",
    ),
}


class TransformersAdapter(Adapter):
    """HF transformers' own RoPE, ALiBi, T5, sinusoidal, learned-offset and mask code (float32)."""

    name = "transformers"
    #: Which HF implementation serves a family that has several (variants override these).
    #: The source attributes a variant (:func:`_variant`) overrides; none for the default.
    overrides: tuple[str, ...] = ()
    alibi_source = "bloom"
    fairseq_source = "speech2text"
    xlm_source = "xlm"
    marian_source = "marian"
    t2t_source = "whisper"
    patchtst_source: str | None = None  # PatchTST's standardised table: variants patchtst, patchtsmixer
    shaw_source: str | None = None  # no Shaw code in the default column (v5 removed BERT's relative_key)
    rope_source = "llama"
    detr_sine_source = "detr"
    coord_sine_source = "conditional_detr"
    sincos_source = "rt_detr"
    rope2d_source = "qwen2_vl"
    dinov3_source = "dinov3_vit"
    sam2_rope_source = "sam2_video"
    fourier_source = "sam"
    navit_source = "idefics2"
    mrope_ids_source = "qwen2_5_vl"
    #: The family whose copy of T5's bucket function and bias serves t5_bucket / t5_bias (:data:`_T5_COPIES`,
    #: or a family with a variant of its own); ``t5_bucket_source`` where only the bucket function is mapped.
    t5_source = "t5"
    t5_bucket_source: str | None = None
    #: The families of the T5-bucket variants: only their variants declare these functions (None here).
    layout_source: str | None = None
    udop_source: str | None = None
    gated_source: str | None = None
    stream_source: str | None = None
    segment_source: str | None = None
    #: Rows of the learned zoo (``_transformers_learned_families``); ``patch_source`` "" is the row
    #: ``_patch_source`` picks by the case's options (the default column), a family name fixes it.
    learned_source = "opt"
    token_positions_source = "roberta"
    patch_source = ""
    capabilities = Capabilities(
        functions=None,  # the methods below; the rest of the protocol is not in HF
        # HF builds its tables in float32 even in a float64 model; apply_rope and learned follow x's dtype
        dtypes={
            "default": ["float32"],
            "apply_rope": ["float64", "float32"],
            "learned": ["float64", "float32"],
            # the gathers and einsums follow their tables' and queries' dtype
            "window_bias": ["float64", "float32"],
            "decomposed_rel_pos": ["float64", "float32"],
            # F.interpolate follows the table's dtype (DINOv2's float32 round trip: float32 only)
            "grid_resize": ["float64", "float32"],
            "patch_grid_resize": ["float64", "float32"],
            # DETR's sine follows the model dtype; the 2-D sincos tables compute in float64 (OmDet-Turbo in
            # the dtype asked for); the coordinate sinusoids divide by a float32 dim_t: float32 only
            "detr_sine_2d": ["float64", "float32"],
            "sincos_2d": ["float64", "float32"],
            # SAM's embedding and the 2-D tables follow their parameters' dtype (the case's G / tables)
            "fourier_features": ["float64", "float32"],
            "fourier_grid": ["float64", "float32"],
            "bbox_embedding": ["float64", "float32"],
            "row_col_embedding": ["float64", "float32"],
            # the shifts move their input's values; the Conformer logits follow q, k and R
            "rel_shift": ["float64", "float32"],
            "rel_attention_scores": ["float64", "float32"],
            # the T5-bucket variants gather from their tables (and WavLM's gate) in the tables' dtype
            "t5_layout_bias": ["float64", "float32"],
            "t5_udop_bias": ["float64", "float32"],
            "t5_gated_bias": ["float64", "float32"],
            "t5_segment_bias": ["float64", "float32"],
        },
        # position_ids.float() * inv_freq.float(): a float32 product; XLM and Marian build their
        # tables in float64 NumPy and round once, which meets the exact class
        phase={"default": "product", "sinusoidal:vaswani": "exact", "sinusoidal:marian": "exact"},
        error_types={
            # KeyError: missing key / unknown rope_type; StrictDataclassClassValidationError (huggingface_hub,
            # not a ValueError): odd head_dim; RuntimeError: a factor list of the wrong length
            "rope_frequencies": ["KeyError", "StrictDataclassClassValidationError", "RuntimeError"],
            # the same config errors; RuntimeError: dim above the width (apply_rotary_pos_emb's broadcast)
            "rope_from_base": ["KeyError", "StrictDataclassClassValidationError", "RuntimeError"],
            # ZeroDivisionError: dim 2 or 3 (fairseq); IndexError: a row before 0; RuntimeError: float ids
            "sinusoidal": ["ZeroDivisionError", "IndexError", "RuntimeError"],
            # IndexError: nn.Embedding past the table; RuntimeError: BERT's token-type gather at those ids
            "learned": ["IndexError", "RuntimeError"],
            # IndexError: LayoutLM's "coordinate values should be within 0-1000 range" (and bbox[:, :, 3] of a
            # [..., 3] box); RuntimeError: float boxes (nn.Embedding's index dtype)
            "bbox_embedding": ["IndexError", "RuntimeError"],
            # RuntimeError: a matmul or reshape of the wrong shape
            "fourier_features": ["RuntimeError"],
            "fourier_grid": ["RuntimeError"],
            "navit_position_ids": ["ZeroDivisionError"],  # arange(1/N, ...) with N = 0
            "row_col_embedding": ["IndexError"],  # nn.Embedding past the table
            # ZeroDivisionError: max_exact = 0; RuntimeError: float relative positions
            "t5_bucket": ["ZeroDivisionError", "RuntimeError"],
            # RuntimeError: a table of the wrong size refused by copy_ (as a checkpoint's), a window side 0
            "window_bias": ["RuntimeError"],
            # ZeroDivisionError: dim 0 (the Conformers' log(10000) / d_model)
            "rel_sinusoid_table": ["ZeroDivisionError"],
            "rel_attention_scores": ["RuntimeError"],  # a view of the wrong size
            # IndexError: a box of 3 coordinates (bbox[..., 3]); a segment id past the table (F.embedding);
            # ZeroDivisionError: num_buckets // 4 == 0 (max_exact 0)
            "t5_layout_bias": ["IndexError"],
            "t5_udop_bias": ["IndexError"],
            "t5_stream_buckets": ["ZeroDivisionError"],
            "t5_segment_bias": ["IndexError", "ZeroDivisionError"],
        },
        scaling_types=("default", "linear", "dynamic", "yarn", "llama3", "longrope", "proportional"),
        head_layouts=("bhsd", "bshd"),  # apply_rotary_pos_emb's unsqueeze_dim 1 / 2; no [tokens, heads, dim]
        alibi_forms=("causal",),
        sinusoidal_conventions=("vaswani", "tensor2tensor", "fairseq", "marian"),
        learned_offsets=("opt",),
        # eager_mask puts finfo.min on every masked logit: a row with no visible key averages v
        variants={"fully-masked-rows": "uniform"},
        invalid_inputs={
            # segments are the adapter's own input format: an empty vision block has no tokens to hand HF
            "mrope_position_ids": False,
            # get_rel_pos resizes a per-axis table of any length to 2 max(q, k) - 1 rows (F.interpolate,
            # linear): the canonical call takes it resized, so a table of another length is no error there
            "decomposed_rel_pos": False,
            # sizes reach HF as image sizes in pixels and tables as module weights: nothing to refuse
            "grid_resize": False,
            "patch_grid_resize": False,
            # HF's vision sines check nothing (a float mask is cast, an odd F fails inside torch.stack)
            "detr_sine_2d": False,
            "detr_coord_sine": False,
            "sincos_2d": False,
            # HF's vision rotary modules check none of head_dim, base or the axes
            "rope_2d_cos_sin": False,
            # the shifts are views and slices: a klen past the rows is cut short by the slice, not refused
            "rel_shift": False,
            # the tables check no sizes: a width 0 is an empty table (the Conformers divide by it), a
            # negative cached_frames (klen < qlen) a shorter one
            "rel_sinusoid_table": False,
            # make_log_bucket_position and the attention modules check nothing (mid 0 divides by zero)
            "deberta_bucket": False,
            "deberta_relative_index": False,
            # get_llama_4_attn_scale / compute_attention_scaling check nothing (log(0) at p = -1); the
            # M-RoPE classes check a section only when torch's split or stack fails on it
            "llama4_attn_scale": False,
            "mrope_angles": False,
        },
        notes={
            "rope_frequencies": "ROPE_INIT_FUNCTIONS / LlamaRotaryEmbedding.compute_default_rope_parameters "
            "on a LlamaConfig; float32",
            "rope_cos_sin": "LlamaRotaryEmbedding.forward (half), CohereRotaryEmbedding.forward "
            "(interleaved): float32 phase m * theta",
            "apply_rope": "llama / gpt_neox (partial) / gptj apply_rotary_pos_emb",
            "alibi_bias": "bloom.build_alibi_tensor: causal row-identical form only, BLOOM's own slopes",
            "sinusoidal": "XLM (vaswani), Marian, Speech2Text (fairseq), Whisper (tensor2tensor, even dim); "
            "variants: the families' copies, MusicGen (cos_first), PatchTST(-Mixer), Florence-2",
            "shaw_index": "variants speecht5, vits (its skew), granite_speech(_plus, 5) (attention_dists)",
            "learned": "OPTLearnedPositionalEmbedding (offset 2)",
            "rope_from_base": "Llama/CohereRotaryEmbedding(config) with its own ROPE_INIT_FUNCTIONS and "
            "dynamic_rope_update, then apply_rotary_pos_emb; seq_len = max(positions)+1 (dynamic, longrope)",
            "rope_heads": "rotary forward(x, position_ids [B, S]); gpt_neox / cohere apply_rotary_pos_emb "
            "(unsqueeze_dim), gptj apply_rotary_pos_emb (bshd)",
            "t5_bias": "T5Attention.compute_bias(query_length, key_length, past_seen_tokens), case table",
            "alibi_bias_from_mask": "bloom.build_alibi_tensor(attention_mask, num_heads, float32)",
            "token_positions": "RobertaEmbeddings.create_position_ids_from_input_ids, minus padding_idx + 1",
            "mrope_position_ids": "Qwen2_5_VLModel.get_rope_index on token types and grids",
            "window_bias": "SwinRelativePositionBias.forward; with cls_token "
            "BeitRelativePositionBias.forward at its own window (its bilinear sub-table resize included)",
            "swinv2_log_coords": "Swinv2SelfAttention.relative_coords_table (float32)",
            "decomposed_rel_pos": "SamVisionAttention.get_decomposed_rel_pos (float32 coordinates, .long())",
            "patch_grid_resize": "interpolate_pos_encoding of ViTEmbeddings / Dinov2Embeddings (float32), "
            "CLIP, SigLIP (no prefix), DeiT (2 prefix rows), Dinov2WithRegisters (antialias), Idefics "
            "(scale_factor), Timesformer (nearest), chosen by the case's options",
            "grid_resize": "SamVisionAttention.get_rel_pos (1-D linear to 2 s - 1 rows)",
            "detr_sine_2d": "DetrSinePositionEmbedding / DeformableDetrSinePositionEmbedding (variants: "
            "the copies in Conditional DETR, DAB-DETR, Grounding DINO, MM-Grounding-DINO, Table Transformer, "
            "MaskFormer, Mask2Former, OneFormer, SAM2, EdgeTAM, SAM3, SAM3-LiteText, and video SAM2, "
            "EdgeTAM, SAM3-Tracker)",
            "detr_coord_sine": "conditional_detr.encode_sinusoidal_position_embedding, "
            "DeformableDetrModel.get_proposal_pos_embed (variants: the copies in DAB-DETR, Grounding DINO, "
            "MM-Grounding-DINO, LW-DETR, RF-DETR)",
            "sincos_2d": "rt_detr.build_2d_sinusoidal_position_embedding, OmDet-Turbo's "
            "build_2d_sincos_position_embedding, ViTMAEEmbeddings.initialize_weights (variants: the copies "
            "in RT-DETR-v2, D-FINE, DEIMv2, PP-DocLayout-V2/V3/V4, AIMv2, Granite-Docling)",
            "fourier_features": "SamPositionalEmbedding.forward; offset 0.5: SamPromptEncoder.forward",
            "fourier_grid": "SamModel (square) / Sam2Model (non-square) get_image_wide_positional_embeddings",
            "navit_position_ids": "Idefics2VisionEmbeddings (identity table); MiniCPM-V vision_utils",
            "bbox_embedding": "LayoutLMEmbeddings (sum), LayoutLMv2 / LayoutLMv3 (clip) spatial embeddings",
            "row_col_embedding": "Pix2StructVisionEmbeddings (sum), DetrLearnedPositionEmbedding (concat)",
            "deberta_bucket": "deberta_v2.make_log_bucket_position (float32)",
            "deberta_relative_index": "DisentangledSelfAttention.disentangled_attention_bias (v2), "
            "disentangled_att_bias (v1) with identity projections and row-numbered rel_embeddings",
            "t5_layout_bias": "LayoutLMv2/v3, PP-DocLayout-V2 encoders' relative bias (captured at layer 0)",
            "t5_udop_bias": "UDOP's RelativePositionBiasAggregated (1d, horizontal, vertical modules)",
            "t5_gated_bias": "WavLMAttention.forward's gated position bias (captured at its attention call)",
            "t5_stream_buckets": "prophetnet.compute_all_stream_relative_buckets",
            "t5_segment_bias": "CpmAntSegmentPositionEmbedding.forward",
            "llama4_attn_scale": "ministral3 / mistral4 get_llama_4_attn_scale (mistral), beam "
            "compute_attention_scaling (beam only at F = 2048, a = 0.1): float32",
            "mrope_angles": "Ernie4_5_VLMoeTextRotaryEmbedding / HunYuanVLRotaryEmbedding."
            "recomposition_frequencies of forward's float32 product, the case's inv_freq in HF's slot order",
            "rope_2d_cos_sin": "PixtralVisionRotaryEmbedding, Gemma4VisionRotaryEmbedding, "
            "DINOv3ViTRopePositionEmbedding (eval; patch-centre grids only), Llama4VisionRotaryEmbedding "
            "(table lookup), Sam2VideoVisionRotaryEmbedding, Kimi_K25VisionRotaryEmbedding forward: float32",
        },
    )

    def __init__(self) -> None:
        reason = missing()
        if reason:
            from . import AdapterError

            raise AdapterError(reason)
        import torch
        import transformers

        self.torch, self.transformers = torch, transformers

    def describe(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "transformers": self.transformers.__version__,
            "torch": self.torch.__version__,
            "sources": {
                "alibi": self.alibi_source,
                "fairseq": self.fairseq_source,
                "vaswani": self.xlm_source,
                "marian": self.marian_source,
                "tensor2tensor": self.t2t_source,
                "patchtst": self.patchtst_source,
                "shaw": self.shaw_source,
                "rope": self.rope_source,
                "window": self.window_source,
                "window_cls": self.cls_source,
                "swinv2": self.swinv2_source,
                "decomposed": self.decomposed_source,
                "detr_sine": self.detr_sine_source,
                "coord_sine": self.coord_sine_source,
                "sincos": self.sincos_source,
                "rope2d": self.rope2d_source,
                "dinov3": self.dinov3_source,
                "sam2_rope": self.sam2_rope_source,
                "fourier": self.fourier_source,
                "navit": self.navit_source,
                "mrope_ids": self.mrope_ids_source,
                "relative_attention": self.rel_source,
                "deberta": self.deberta_source,
                "deberta_index": self.deberta_index_source,
                "t5": self.t5_bucket_source or self.t5_source,
                "t5_variant": self.layout_source
                or self.udop_source
                or self.gated_source
                or self.stream_source
                or self.segment_source,
                "attn_scale": self.attn_scale_source,
                "mrope": self.mrope_source,
                "learned": self.learned_source,
                "token_positions": self.token_positions_source,
                "patch": self.patch_source,
            },
        }

    def supports(self, function: str) -> bool:
        """As declared; the T5-bucket variants and Transformer-XL's relative attention only where a
        variant names their family (:data:`_FAMILY_ONLY`)."""
        source = _FAMILY_ONLY.get(function)
        if source is not None and getattr(self, source) is None:
            return False
        return super().supports(function)

    def _t(self, array: Any) -> Any:
        """``array`` as a torch tensor: a copy of NumPy input (writable, contiguous), torch as is."""
        if isinstance(array, self.torch.Tensor):  # rope() hands rope_cos_sin's tables to apply_rope
            return array
        return self.torch.from_numpy(np.array(array))

    # --- RoPE ------------------------------------------------------------------------------------------
    # One code path for every family (the rows of ``_transformers_rope_families``): the default column
    # is the ``llama`` row, which passes what Llama's code cannot serve to the first row in
    # ``rope_tables`` / ``rope_applies`` that can: partial rotary to GPT-NeoX, the interleaved table to
    # Cohere, the interleaved rotation to GPT-J (float64, bshd), Cohere (bhsd) and GLM (bhsd, partial).
    # A family's variant holds only its own row.

    #: Rows tried in order for a table (``rope_cos_sin``, ``rope_from_base``) and for a rotation.
    rope_tables: tuple[str, ...] = ("llama", "cohere")
    rope_applies: tuple[str, ...] = ("llama", "gpt_neox", "gptj", "cohere", "glm")

    def _rope_row(self, family: str) -> RopeFamily:
        return ROPE_FAMILIES[family]

    def _family_module(self, family: str) -> Any:
        return importlib.import_module(self._rope_row(family).module(family))

    def _family_config(
        self,
        family: str,
        dim: int,
        base: float,
        scaling: dict[str, Any] | None,
        max_positions: int | None = None,
    ) -> Any:
        """A one-head ``family`` config of rotary width ``dim`` and these RoPE parameters."""
        row = self._rope_row(family)
        config_class = getattr(importlib.import_module(f"transformers.models.{family}"), row.config, None)
        if config_class is None:
            config_module = importlib.import_module(f"transformers.models.{family}.configuration_{family}")
            config_class = getattr(config_module, row.config)
        params = dict(scaling or {"rope_type": "default"})
        positions = params.pop("max_position_embeddings", None)
        original, factor = params.get("original_max_position_embeddings"), params.get("factor")
        if positions is None and original is not None:  # unread by these types; keeps HF's checks quiet
            scaled = isinstance(factor, (int, float)) and factor > 1
            positions = int(original * factor) if scaled else original
        params.setdefault("rope_theta", base)
        defaults = _default_rope_parameters(config_class)
        per_layer = (
            {t: v for t, v in defaults.items() if isinstance(v, dict) or v is None} if row.layer_type else {}
        )
        keys = set().union(*(v for v in per_layer.values() if v)) if per_layer else set(defaults)
        if "partial_rotary_factor" in keys:
            params.setdefault("partial_rotary_factor", 1.0)  # the case's dim is the rotary width
        try:
            config = config_class(
                **dict.fromkeys(row.dim_keys, dim),
                num_attention_heads=1,
                num_key_value_heads=1,
                max_position_embeddings=max_positions or positions or 2048,
                rope_parameters={t: v and dict(params) for t, v in per_layer.items()}
                if per_layer
                else params,
                **row.kwargs,
            )
        except Exception as exc:  # a config that refuses or rewrites a whole scaling type (Phi-3: longrope)
            refusal = _family_refusal(exc, row, scaling)  # the type asked for (Phi-3 rewrites params)
            if refusal is exc:
                raise
            raise refusal from exc
        if "rope_theta" in vars(config):  # a legacy top-level base its own code reads (ESM)
            config.rope_theta = base
        return config

    def _family_rotary(
        self, family: str, dim: int, base: float, scaling: dict[str, Any] | None, rows: int | None = None
    ) -> Any:
        """The family's rotary module built from :meth:`_family_config`."""
        row = self._rope_row(family)
        config = self._family_config(family, dim, base, scaling, rows)
        try:
            return getattr(self._family_module(family), row.rotary)(config)
        except Exception as exc:
            refusal = _family_refusal(exc, row, scaling)
            if refusal is exc:
                raise
            raise refusal from exc

    @staticmethod
    def _buffer(row: RopeFamily, name: str) -> str:
        return f"{row.layer_type}_{name}" if row.layer_type else name

    def _family_forward(self, family: str, module: Any, positions: Any, layout: str) -> tuple[Any, Any]:
        """``module.forward`` at ``positions`` as the canonical ``(cos, sin)`` of ``layout``."""
        row = self._rope_row(family)
        torch = self.torch
        probe = torch.empty(0, dtype=torch.float32)
        with torch.no_grad():
            try:
                out = module(probe, positions, *((row.layer_type,) if row.layer_type else ()))
            except Exception as exc:  # a dynamic update (longrope) reading a per-layer head_dim
                refusal = _family_refusal(exc, row, None)
                if refusal is exc:
                    raise
                raise refusal from exc
        if row.table == "complex":
            cos, sin = out.real, out.imag
        elif row.table == "sincos":
            sin, cos = out
        else:
            cos, sin = out
        if row.table in ("half", "interleaved"):
            return cos, sin
        if layout == "half":  # a half-width table (freqs only): the family's rotation pairs i, i + R/2
            return torch.cat([cos, cos], dim=-1), torch.cat([sin, sin], dim=-1)
        return cos.repeat_interleave(2, dim=-1), sin.repeat_interleave(2, dim=-1)

    def _serves_table(self, family: str, layout: str) -> None:
        row = self._rope_row(family)
        own = row.table if row.table in ("half", "interleaved") else row.layout
        if layout != own:
            msg = f"{family}'s rotary table is the {own} layout; got {layout!r}"
            raise Unsupported(msg)

    def _first(self, families: tuple[str, ...], call: Any) -> Any:
        """``call(family)`` of the first family that does not raise Unsupported."""
        reasons = []
        for family in families:
            try:
                return call(family)
            except Unsupported as exc:
                reasons.append(str(exc))
        raise Unsupported("; ".join(dict.fromkeys(reasons)))

    def _check_layout(self, layout: str) -> None:
        if layout not in ("half", "interleaved"):
            msg = f"HF rotary embeddings have no layout {layout!r}"
            raise Unsupported(msg)

    def rope_frequencies(
        self, dim: int, *, base: float, scaling: dict[str, Any] | None, seq_len: int | None, dtype: str
    ) -> tuple[Any, Any]:
        from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

        _float32_only(dtype, "ROPE_INIT_FUNCTIONS")
        family = self.rope_source
        kind = (scaling or {}).get("rope_type", (scaling or {}).get("type", "default"))
        if kind in self.capabilities.scaling_types and kind != "default" and kind not in ROPE_INIT_FUNCTIONS:
            msg = f"transformers {self.transformers.__version__} has no rope_type {kind!r}"
            raise Unsupported(msg)
        if kind != "default" and "rope_source" in self.overrides:
            msg = f"{family} takes {kind!r} from the shared ROPE_INIT_FUNCTIONS (the default column's)"
            raise Unsupported(msg)
        row = self._rope_row(family)
        config = self._family_config(family, dim, base, scaling)
        if kind == "default":
            rotary = getattr(self._family_module(family), row.rotary)
            extra = {"layer_type": row.layer_type} if row.layer_type else {}
            try:
                return rotary.compute_default_rope_parameters(config, **extra)
            except Exception as exc:  # Gemma 4's head_dim varies per layer: no global frequencies
                if type(exc).__name__ != "AmbiguousGlobalPerLayerAttributeError":
                    raise
                msg = f"{row.config} sets head_dim per layer: its default frequencies need a layer's config"
                raise Unsupported(msg) from exc
        return ROPE_INIT_FUNCTIONS[kind](config, None, seq_len=seq_len)  # KeyError for unknown types, as HF

    def _family_cos_sin(
        self, family: str, positions: np.ndarray, inv_freq: np.ndarray, attention_factor: float, layout: str
    ) -> tuple[Any, Any]:
        row = self._rope_row(family)
        self._serves_table(family, layout)
        dim = 2 * inv_freq.size
        if row.table == "sincos":
            if attention_factor != 1.0 or not np.allclose(
                inv_freq, 10000.0 ** (-np.arange(0, dim, 2) / dim), rtol=1e-12, atol=0
            ):
                msg = f"{family}'s table is fixed: base 10000, no attention factor"
                raise Unsupported(msg)
            rows = _nonnegative(positions, f"{family}'s rotary table")
            _check_table(rows, dim, "torch", f"{family}'s rotary table")
            module = self._family_rotary(family, dim, 10000.0, None, rows)
        elif not row.reads_inv_freq:
            msg = f"{family}'s forward recomputes its frequencies from the config: no given inv_freq"
            raise Unsupported(msg)
        else:
            module = self._family_rotary(family, dim, 10000.0, None)
            module.register_buffer(self._buffer(row, "inv_freq"), self._t(inv_freq), persistent=False)
            setattr(module, self._buffer(row, "attention_scaling"), attention_factor)
        return self._family_forward(family, module, self._t(positions), layout)

    def rope_cos_sin(
        self, positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str
    ) -> tuple[Any, Any]:
        _float32_only(dtype, "the HF rotary embeddings")
        self._check_layout(layout)
        positions, inv_freq = np.asarray(positions), np.asarray(inv_freq, dtype=np.float64)
        return self._first(
            self.rope_tables, lambda f: self._family_cos_sin(f, positions, inv_freq, attention_factor, layout)
        )

    def _apply_tables(self, family: str, cos: Any, sin: Any) -> tuple[Any, Any]:
        """The canonical ``cos, sin`` (the family's layout) in the form its apply function takes."""
        row = self._rope_row(family)
        torch = self.torch
        pairs = row.layout == "interleaved"
        first = (lambda t: t[..., 0::2]) if pairs else (lambda t: t[..., : t.shape[-1] // 2])
        if row.call == "complex":
            return torch.complex(first(cos), first(sin)), None
        if row.call == "gptj":
            return first(sin), first(cos)
        if row.call == "deinterleave" or (row.table == "half" and pairs):  # it re-interleaves a half table
            return torch.cat([first(cos)] * 2, dim=-1), torch.cat([first(sin)] * 2, dim=-1)
        if row.table == "halfwidth":
            return first(cos), first(sin)
        return cos, sin

    def _family_apply(self, family: str, q: Any, cos: Any, sin: Any, unsqueeze: int) -> Any:
        """The family's rotation of ``q`` (heads at axis ``unsqueeze``) by ``cos, sin [B, S, R]``."""
        row = self._rope_row(family)
        torch = self.torch
        width, channels = cos.shape[-1], q.shape[-1]
        if width < channels and row.partial in ("", "last"):
            which = "the last R" if row.partial else "all"
            msg = f"{family} rotates {which} channels; got R={width} < D={channels}"
            raise Unsupported(msg)
        if row.float32_apply and q.dtype != torch.float32:
            msg = f"{family}'s {row.apply} computes in float32"
            raise Unsupported(msg)
        layout = "bhsd" if unsqueeze == 1 else "bshd"
        if row.call in ("complex", "gptj") and layout != row.x_layout:
            msg = f"{family}'s {row.apply} takes x as {row.x_layout}; got {layout}"
            raise Unsupported(msg)
        split = width < channels and row.partial == "caller"
        x = q[..., :width] if split else q
        apply = getattr(self._family_module(family), row.apply)
        first, second = self._apply_tables(family, cos, sin)
        with torch.no_grad():
            if row.call == "x":
                out = apply(x, first, second, unsqueeze_dim=unsqueeze)
            elif row.call == "gptj":
                out = apply(x, first, second)
            elif row.call == "complex":
                out = apply(x, x, first)[0]
            else:
                out = apply(x, x, first, second, unsqueeze_dim=unsqueeze)[0]
        if row.call == "deinterleave":  # [rotated evens | rotated odds] back to pairs (2i, 2i + 1)
            rot = out[..., :width]
            out = torch.cat(
                [
                    torch.stack([rot[..., : width // 2], rot[..., width // 2 :]], -1).flatten(-2),
                    out[..., width:],
                ],
                dim=-1,
            )
        return torch.cat([out, q[..., width:]], dim=-1) if split else out

    def apply_rope(self, x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
        if layout not in ("half", "interleaved"):
            msg = f"HF has no apply_rotary_pos_emb for layout {layout!r}"
            raise Unsupported(msg)
        x, cos, sin = (self._t(a) for a in (x, cos, sin))
        width, seq, channels = cos.shape[-1], x.shape[-2], x.shape[-1]
        lead = x.shape[:-2]
        cos, sin = (t.broadcast_to((*lead, seq, width)).reshape(-1, seq, width) for t in (cos, sin))

        def rotate(family: str) -> Any:
            self._serves_layout(family, layout)
            if self._rope_row(family).x_layout == "bshd" and self._rope_row(family).call in (
                "gptj",
                "complex",
            ):
                return self._family_apply(family, x.reshape(-1, seq, 1, channels), cos, sin, 2)
            return self._family_apply(family, x.reshape(-1, 1, seq, channels), cos, sin, 1)

        return self._first(self.rope_applies, rotate).reshape(x.shape)

    def _serves_layout(self, family: str, layout: str) -> None:
        if self._rope_row(family).layout != layout:
            msg = f"{family} rotates {self._rope_row(family).layout} pairs; got {layout!r}"
            raise Unsupported(msg)

    def rope_from_base(
        self,
        x: Any,
        positions: Any,
        *,
        dim: int,
        base: float,
        scaling: dict[str, Any] | None,
        seq_len: int | None,
        layout: str,
    ) -> Any:
        self._check_layout(layout)
        positions = np.asarray(positions)
        kind = (scaling or {}).get("rope_type", (scaling or {}).get("type", "default"))
        served = int(positions.max()) + 1 if positions.size else 0
        if kind in ("dynamic", "longrope") and seq_len != served:
            msg = (
                f"HF's dynamic_rope_update takes the length from the positions ({served}); seq_len={seq_len}"
            )
            raise Unsupported(msg)

        def table(family: str) -> tuple[Any, Any]:
            self._serves_table(family, layout)
            rows = None
            if self._rope_row(family).table == "sincos":
                if scaling is not None or base != 10000.0:
                    msg = f"{family}'s table is fixed: base 10000, no scaling"
                    raise Unsupported(msg)
                rows = _nonnegative(positions, f"{family}'s rotary table")
                _check_table(rows, dim, "torch", f"{family}'s rotary table")
            module = self._family_rotary(family, dim, base, scaling, rows)
            runs = getattr(module, "rope_type", "default")
            if isinstance(runs, dict):  # one table per layer type: the one this column reads
                runs = runs.get(self._rope_row(family).layer_type, "default")
            if kind != "default" and runs != kind:  # ESM's rotary class never reads a scaling
                msg = f"{family}'s rotary class runs rope_type {runs!r}, not {kind!r}"
                raise Unsupported(msg)
            cos, sin = self._family_forward(family, module, self._t(positions)[None, :], layout)  # [1, S]
            return cos[0], sin[0]

        cos, sin = self._first(self.rope_tables, table)
        return self.apply_rope(x, cos, sin, layout=layout)

    def rope_heads(
        self,
        x: Any,
        positions: Any,
        inv_freq: Any,
        *,
        attention_factor: float,
        layout: str,
        head_layout: str,
    ) -> Any:
        if head_layout not in ("bhsd", "bshd"):
            msg = (
                f"HF's apply_rotary_pos_emb takes x as bhsd or bshd (unsqueeze_dim 1, 2); got {head_layout!r}"
            )
            raise Unsupported(msg)
        cos, sin = self.rope_cos_sin(  # [batch, seq, R], from position_ids [batch, seq]
            positions, inv_freq, attention_factor=attention_factor, layout=layout, dtype="float32"
        )
        q = self._t(x)

        def rotate(family: str) -> Any:
            self._serves_layout(family, layout)
            return self._family_apply(family, q, cos, sin, 1 if head_layout == "bhsd" else 2)

        return self._first(self.rope_applies, rotate)

    # --- T5 ----------------------------------------------------------------------------------------------

    def t5_bucket(self, relative: Any, *, bidirectional: bool, num_buckets: int, max_distance: int) -> Any:
        torch, source = self.torch, self.t5_bucket_source or self.t5_source
        rel = self._t(relative)
        kw = {"num_buckets": num_buckets, "max_distance": max_distance}
        if source in _T5_COPIES and source != "umt5":
            return self._t5_attention()[0]._relative_position_bucket(rel, bidirectional=bidirectional, **kw)
        if source == "prophetnet":
            from transformers.models.prophetnet.modeling_prophetnet import compute_relative_buckets

            return compute_relative_buckets(num_buckets, max_distance, rel, is_bidirectional=bidirectional)
        if source == "layoutlmv2":
            from transformers.models.layoutlmv2.modeling_layoutlmv2 import relative_position_bucket

            return relative_position_bucket(rel, bidirectional=bidirectional, **kw)
        if source == "umt5":
            attention_class, config_class = self._t5_attention()
            config = config_class(
                d_model=1,
                d_kv=1,
                num_heads=1,
                relative_attention_num_buckets=num_buckets,
                relative_attention_max_distance=max_distance,
                is_decoder=not bidirectional,
            )
            return attention_class(config)._relative_position_bucket(rel)
        if not bidirectional:
            msg = f"{source}'s bucket function is bidirectional only"
            raise Unsupported(msg)
        if source == "mpnet":
            from transformers.models.mpnet.modeling_mpnet import MPNetEncoder

            return MPNetEncoder.relative_position_bucket(rel, **kw)
        if source in ("layoutlmv3", "pp_doclayout_v2"):
            encoder = self._layout_encoder(
                source, 1, 1, (num_buckets, max_distance, num_buckets, max_distance), False
            )
            return encoder.relative_position_bucket(rel, **kw)
        if source == "wavlm":
            from transformers.models.wavlm.modeling_wavlm import WavLMAttention

            return WavLMAttention(1, 1, **kw)._relative_positions_bucket(rel)
        from transformers import CpmAntConfig
        from transformers.models.cpmant.modeling_cpmant import CpmAntSegmentPositionEmbedding

        config = CpmAntConfig(
            num_attention_heads=1,
            position_bias_num_buckets=num_buckets,
            segment_types=1,
            position_bias_max_distance=max_distance,
        )
        return CpmAntSegmentPositionEmbedding(config)._position_bucket(rel, **kw).to(torch.int64)

    def t5_bias(
        self, q_positions: Any, k_positions: Any, table: Any, *, bidirectional: bool, max_distance: int
    ) -> Any:
        source = self.t5_source
        table, q, k = np.asarray(table), np.asarray(q_positions), np.asarray(k_positions)
        if table.ndim != 2:
            msg = f"{source} holds the table as an [num_buckets, num_heads] weight; got shape {table.shape}"
            raise Unsupported(msg)
        if not (np.issubdtype(q.dtype, np.integer) and np.issubdtype(k.dtype, np.integer)):
            msg = f"{source} builds its positions itself; the positions are the adapter's format"
            raise Unsupported(msg)
        if source in _T5_COPIES:
            return self._t5_compute_bias(q, k, table, bidirectional, max_distance)
        if not bidirectional:
            msg = f"{source}'s relative bias is bidirectional only"
            raise Unsupported(msg)
        if source in ("layoutlmv2", "layoutlmv3", "pp_doclayout_v2"):
            bins = (table.shape[0], max_distance, table.shape[0], max_distance)
            head_dim = None if source == "layoutlmv2" else 1  # sqrt(1): the 1-D bias itself
            dummy = np.zeros((*np.broadcast_shapes(q.shape[:-1], k.shape[:-1]), 1, 4), dtype=np.int64)

            def bias_of(both: np.ndarray) -> Any:
                box = np.broadcast_to(dummy, (*both.shape, 4))
                return self._layout_bias_of(both, box, {"rel_pos_bias": table}, bins, head_dim)

            return self._pairs_by_concatenation(q, k, bias_of)
        if source == "mpnet":
            return self._mpnet_bias(q, k, table, max_distance)
        if source == "wavlm":
            module = self._wavlm(table, 1, max_distance)
            with self.torch.no_grad():
                return self._shifted_block(q, k, module.compute_bias)
        if source == "cpmant":
            pairs = np.concatenate(
                [table, np.zeros((1, table.shape[1]), dtype=table.dtype)]
            )  # one segment type
            zeros = (np.zeros(q.shape, dtype=np.int64), np.zeros(k.shape, dtype=np.int64))
            return self.t5_segment_bias(q, k, *zeros, pairs, num_segments=1, max_distance=max_distance)
        msg = f"{source} has no fixed T5 bias table"
        raise Unsupported(msg)

    def _t5_compute_bias(
        self, q: np.ndarray, k: np.ndarray, table: np.ndarray, bidirectional: bool, max_distance: int
    ) -> Any:
        """``compute_bias`` of ``t5_source``'s attention class with the case's table."""
        attention_class, config_class = self._t5_attention()
        if self.t5_source == "pix2struct" and bidirectional:
            msg = "Pix2Struct's text decoder's compute_bias is causal only (bidirectional=False)"
            raise Unsupported(msg)
        heads = table.shape[1]
        sizes = {"hidden_size": heads} if self.t5_source == "pix2struct" else {"d_model": heads}
        config = config_class(
            **sizes,
            d_kv=1,
            num_heads=heads,
            relative_attention_num_buckets=table.shape[0],
            relative_attention_max_distance=max_distance,
            is_decoder=not bidirectional,
        )
        module = attention_class(config, has_relative_attention_bias=True, layer_idx=0).to(
            self._t(table).dtype
        )
        module.relative_attention_bias.load_state_dict({"weight": self._t(table)})
        lead = np.broadcast_shapes(q.shape[:-1], k.shape[:-1])
        q, k = np.broadcast_to(q, (*lead, q.shape[-1])), np.broadcast_to(k, (*lead, k.shape[-1]))
        blocks = [self._t5_block(module, q[i], k[i]) for i in np.ndindex(lead)]
        return self.torch.stack(blocks).reshape(*lead, table.shape[1], q.shape[-1], k.shape[-1])

    def _t5_block(self, module: Any, q: np.ndarray, k: np.ndarray) -> Any:
        """``compute_bias`` over the smallest block of queries ``past + arange(Lq)`` and keys ``arange(Lk)``
        holding ``q`` and ``k`` (both shifted by ``min(k)``: the bias depends on ``k - q`` only), indexed."""
        q, k = q - k.min(), k - k.min()
        past = int(q.min())
        _check_table(
            (int(q.max()) - past + 1) * (int(k.max()) + 1), module.n_heads, "torch", "T5 compute_bias"
        )
        with self.torch.no_grad():
            bias = module.compute_bias(int(q.max()) - past + 1, int(k.max()) + 1, past_seen_tokens=past)[0]
        return bias[:, self._t(q - past)][:, :, self._t(k)]

    # --- T5-bucket copies and variants (t5_source and the family sources) ---------------------------------

    def _t5_attention(self) -> tuple[Any, Any]:
        """(attention class, config class) of ``t5_source``'s copy of ``T5Attention``."""
        module, attention, config = _T5_COPIES[self.t5_source]
        mod = importlib.import_module(f"transformers.models.{module}.modeling_{module}")
        return getattr(mod, attention), getattr(self.transformers, config)

    def _layout_encoder(
        self, source: str, heads: int, head_dim: int, bins: tuple[int, int, int, int], spatial: bool
    ) -> Any:
        """The 1-layer relative-bias encoder of LayoutLMv2 / LayoutLMv3 / PP-DocLayout-V2 (tiny config)."""
        nb, md, nb2, md2 = bins
        common = {
            "hidden_size": heads * head_dim,
            "num_attention_heads": heads,
            "num_hidden_layers": 1,
            "intermediate_size": 4,
            "rel_pos_bins": nb,
            "max_rel_pos": md,
            "rel_2d_pos_bins": nb2,
            "max_rel_2d_pos": md2,
            "has_relative_attention_bias": True,
            "has_spatial_attention_bias": spatial,
        }
        if source == "layoutlmv2":
            from transformers import LayoutLMv2Config
            from transformers.models.layoutlmv2.modeling_layoutlmv2 import LayoutLMv2Encoder

            return LayoutLMv2Encoder(LayoutLMv2Config(**common))
        if source == "layoutlmv3":
            from transformers import LayoutLMv3Config
            from transformers.models.layoutlmv3.modeling_layoutlmv3 import LayoutLMv3Encoder

            return LayoutLMv3Encoder(LayoutLMv3Config(**common))
        from transformers.models.pp_doclayout_v2.configuration_pp_doclayout_v2 import (
            PPDocLayoutV2ReadingOrderConfig,
        )
        from transformers.models.pp_doclayout_v2.modeling_pp_doclayout_v2 import (
            PPDocLayoutV2ReadingOrderEncoder,
        )

        return PPDocLayoutV2ReadingOrderEncoder(PPDocLayoutV2ReadingOrderConfig(**common))

    def _layout_forward(self, encoder: Any, source: str, positions: Any, bbox: Any) -> Any:
        """The bias the encoder's ``forward`` hands its first layer (captured by a forward pre-hook, which
        stops the run there): LayoutLMv3 / PP ``position_bias``, LayoutLMv2 ``rel_pos + rel_2d_pos``."""
        captured = {}

        def hook(module: Any, args: Any, kwargs: Any) -> None:
            captured.update(kwargs)
            raise _Captured

        handle = encoder.layer[0].register_forward_pre_hook(hook, with_kwargs=True)
        hidden = self.torch.zeros(
            *positions.shape, encoder.config.hidden_size, dtype=encoder.rel_pos_bias.weight.dtype
        )
        try:
            with self.torch.no_grad():
                if source == "layoutlmv2":
                    encoder(hidden, None, bbox=bbox, position_ids=positions)
                else:
                    encoder(hidden, bbox=bbox, position_ids=positions)
        except _Captured:
            pass
        finally:
            handle.remove()
        if source == "layoutlmv2":
            rel, rel_2d = captured.get("rel_pos"), captured.get("rel_2d_pos")
            return rel_2d + rel if rel_2d is not None else rel  # the canonical order: (x + y) + 1-D
        return captured["position_bias"]

    def _load_layout(self, encoder: Any, tables: dict[str, Any]) -> None:
        with self.torch.no_grad():
            for name, table in tables.items():  # nn.Linear(bins, H): weight [H, bins], the tables' transpose
                getattr(encoder, name).weight.copy_(table.T)

    def _layout_bias_of(
        self,
        positions: np.ndarray,
        bbox: np.ndarray,
        tables: dict[str, np.ndarray],
        bins: tuple[int, ...],
        head_dim: int | None,
    ) -> Any:
        """The captured bias of ``layout_source``'s encoder for self-attention over ``positions``."""
        source = self.layout_source or self.t5_source
        spatial = "rel_pos_x_bias" in tables
        if source == "layoutlmv2":
            if head_dim is not None:
                msg = "LayoutLMv2 adds its relative bias unscaled (head_dim null only)"
                raise Unsupported(msg)
            head_dim = 1
        elif head_dim is None:
            msg = f"{source} divides its relative bias by sqrt(head_dim): head_dim must be given"
            raise Unsupported(msg)
        heads = next(iter(tables.values())).shape[1]
        t = {name: self._t(table) for name, table in tables.items()}
        encoder = self._layout_encoder(source, heads, head_dim, bins, spatial).to(
            next(iter(t.values())).dtype
        )
        self._load_layout(encoder, t)
        pos, box = self._t(positions), self._t(bbox)
        lead = np.broadcast_shapes(positions.shape[:-1], bbox.shape[:-2])
        pos = pos.expand(*lead, pos.shape[-1]).reshape(-1, pos.shape[-1])
        box = box.expand(*lead, *box.shape[-2:]).reshape(-1, *box.shape[-2:])
        out = self._layout_forward(encoder, source, pos, box)
        return out.reshape(*lead, *out.shape[1:])

    def t5_layout_bias(
        self,
        positions: Any,
        bbox: Any,
        table: Any,
        x_table: Any,
        y_table: Any,
        *,
        max_rel_pos: int,
        max_rel_2d_pos: int,
        head_dim: int | None,
    ) -> Any:
        source = self.layout_source
        tables = {"rel_pos_bias": np.asarray(table)}
        x, y = np.asarray(x_table), np.asarray(y_table)
        if source == "pp_doclayout_v2":
            if x.any() or y.any():
                msg = (
                    "PP-DocLayout-V2's 2-D bias is a box-relation embedding, not T5 buckets: only its 1-D "
                    "bias (zero x/y tables) is mapped"
                )
                raise Unsupported(msg)
        else:
            tables.update(rel_pos_x_bias=x, rel_pos_y_bias=y)
        if x.shape != y.shape:
            msg = f"{source} has one rel_2d_pos_bins for x and y; got {x.shape} and {y.shape}"
            raise Unsupported(msg)
        bins = (tables["rel_pos_bias"].shape[0], max_rel_pos, x.shape[0], max_rel_2d_pos)
        return self._layout_bias_of(np.asarray(positions), np.asarray(bbox), tables, bins, head_dim)

    def _pairs_by_concatenation(self, q: np.ndarray, k: np.ndarray, bias_of: Any) -> Any:
        """``bias[..., :Lq, Lq:]`` of a self-attention bias over the concatenated positions ``[q, k]``: the
        query-key block of a family that builds its bias from one position array."""
        lead = np.broadcast_shapes(q.shape[:-1], k.shape[:-1])
        q, k = np.broadcast_to(q, (*lead, q.shape[-1])), np.broadcast_to(k, (*lead, k.shape[-1]))
        both = np.concatenate([q, k], axis=-1)
        out = bias_of(both)
        return out[..., : q.shape[-1], q.shape[-1] :]

    def _shifted_block(self, q: np.ndarray, k: np.ndarray, build: Any) -> Any:
        """``build(Lq', Lk')[:, q', k']`` with ``q' = q - s``, ``k' = k - s``, ``s = min(q, k)``: a bias that
        depends on ``k - q`` only, from a builder over ``arange(Lq')`` and ``arange(Lk')`` (per batch row)."""
        lead = np.broadcast_shapes(q.shape[:-1], k.shape[:-1])
        q, k = np.broadcast_to(q, (*lead, q.shape[-1])), np.broadcast_to(k, (*lead, k.shape[-1]))
        blocks = []
        for i in np.ndindex(lead):
            s = min(int(q[i].min()), int(k[i].min()))
            qi, ki = q[i] - s, k[i] - s
            _check_table((int(qi.max()) + 1) * (int(ki.max()) + 1), 1, "torch", f"{self.t5_source}'s bias")
            bias = build(int(qi.max()) + 1, int(ki.max()) + 1)  # [H, Lq', Lk']
            blocks.append(bias[:, self._t(qi)][:, :, self._t(ki)])
        stacked = self.torch.stack(blocks)
        return stacked.reshape(*lead, *stacked.shape[1:])

    def _mpnet_bias(self, q: np.ndarray, k: np.ndarray, table: np.ndarray, max_distance: int) -> Any:
        """``MPNetEncoder.compute_position_bias(x)`` as ``MPNetEncoder.forward`` calls it: queries and keys
        ``arange(L)``, 32 buckets and ``max_distance`` 128 (the defaults; forward passes neither, whatever
        the config's ``relative_attention_num_buckets``), read at the shifted positions."""
        from transformers import MPNetConfig
        from transformers.models.mpnet.modeling_mpnet import MPNetEncoder

        if max_distance != 128 or table.shape[0] != 32:
            msg = "MPNetEncoder.forward buckets with the defaults: 32 buckets, max_distance 128"
            raise Unsupported(msg)
        heads = table.shape[1]
        config = MPNetConfig(
            hidden_size=heads, num_attention_heads=heads, num_hidden_layers=1, intermediate_size=1
        )
        encoder = MPNetEncoder(config).to(self._t(table).dtype)
        encoder.relative_attention_bias.load_state_dict({"weight": self._t(table)})

        def build(lq: int, lk: int) -> Any:
            length = max(lq, lk)  # compute_position_bias is square: qlen = klen = x.size(1)
            x = self.torch.zeros(1, length, heads, dtype=encoder.relative_attention_bias.weight.dtype)
            with self.torch.no_grad():
                return encoder.compute_position_bias(x)[0, :, :lq, :lk]

        return self._shifted_block(q, k, build)

    def _wavlm(self, table: np.ndarray, head_dim: int, max_distance: int) -> Any:
        """A ``WavLMAttention`` holding the case's ``rel_attn_embed`` table (``H`` heads of ``head_dim``)."""
        from transformers.models.wavlm.modeling_wavlm import WavLMAttention

        heads = table.shape[1]
        module = WavLMAttention(
            heads * head_dim,
            heads,
            num_buckets=table.shape[0],
            max_distance=max_distance,
            has_relative_position_bias=True,
        ).to(self._t(table).dtype)
        module.rel_attn_embed.load_state_dict({"weight": self._t(table)})
        return module.eval()

    def t5_gated_bias(
        self, hidden: Any, table: Any, gate_weight: Any, gate_bias: Any, gate_const: Any, *, max_distance: int
    ) -> Any:
        x, table = self._t(hidden), np.asarray(table)
        heads, dim = x.shape[-3], x.shape[-1]
        if table.ndim != 2 or table.shape[1] != heads or tuple(np.shape(gate_weight)) != (8, dim):
            msg = "WavLM's shapes: rel_attn_embed [num_buckets, H], gru_rel_pos_linear [8, Dh]"
            raise Unsupported(msg)
        module = self._wavlm(table, dim, max_distance)
        with self.torch.no_grad():
            module.gru_rel_pos_linear.weight.copy_(self._t(gate_weight))
            module.gru_rel_pos_linear.bias.copy_(self._t(gate_bias))
            module.gru_rel_pos_const.copy_(self._t(gate_const).reshape(1, heads, 1, 1))
        captured = {}

        def capture(hidden_states: Any, attention_mask: Any, gated_position_bias: Any) -> Any:
            captured["bias"] = gated_position_bias
            raise _Captured

        module.torch_multi_head_self_attention = capture  # the gated bias forward hands the attention
        lead, length = x.shape[:-3], x.shape[-2]
        states = x.reshape(-1, heads, length, dim).permute(0, 2, 1, 3).reshape(-1, length, heads * dim)
        try:
            with self.torch.no_grad():
                module(states)
        except _Captured:
            pass
        return captured["bias"].reshape(*lead, heads, length, length)

    def t5_udop_bias(
        self,
        bbox: Any,
        table: Any,
        x_table: Any,
        y_table: Any,
        *,
        max_distance: int,
        max_distance_2d: int,
        scaling_factor: float,
        prefix_buckets: bool,
    ) -> Any:
        from transformers import UdopConfig
        from transformers.models.udop.modeling_udop import (
            RelativePositionBiasAggregated,
            create_relative_bias,
        )

        tables = [self._t(t) for t in (table, x_table, y_table)]
        box = self._t(bbox)
        extra = 2 if prefix_buckets else 0
        args = [
            {"type": "1d", "max_distance": max_distance},
            {"type": "horizontal", "max_distance": max_distance_2d, "scaling_factor": scaling_factor},
            {"type": "vertical", "max_distance": max_distance_2d, "scaling_factor": scaling_factor},
        ]
        for arg, t in zip(args, tables, strict=True):
            arg.update(relative_attention_num_buckets=t.shape[0] - extra, prefix_bucket=prefix_buckets)
        config = UdopConfig(num_heads=tables[0].shape[1], relative_bias_args=args)
        bias = RelativePositionBiasAggregated(create_relative_bias(config)).to(tables[0].dtype)
        with self.torch.no_grad():
            for module, t in zip(bias.biases, tables, strict=True):
                module.relative_attention_bias.weight.copy_(t)  # a wrong shape is refused by copy_
        flat = box.reshape(-1, *box.shape[-2:])
        mask = self.torch.ones(flat.shape[:2], dtype=self.torch.long)
        with self.torch.no_grad():
            out = bias.eval()(attention_mask=mask, bbox=flat)
        return out.reshape(*box.shape[:-2], *out.shape[1:])

    def t5_stream_buckets(self, positions: Any, *, num_buckets: int, max_distance: int) -> tuple[Any, Any]:
        from transformers.models.prophetnet.modeling_prophetnet import compute_all_stream_relative_buckets

        pos = self._t(positions)
        flat = pos.reshape(-1, pos.shape[-1])
        main, predict = compute_all_stream_relative_buckets(num_buckets, max_distance, flat)
        return main.reshape(*pos.shape, -1), predict.reshape(*pos.shape, -1)

    def t5_segment_bias(
        self,
        q_positions: Any,
        k_positions: Any,
        q_segments: Any,
        k_segments: Any,
        table: Any,
        *,
        num_segments: int,
        max_distance: int,
    ) -> Any:
        from transformers import CpmAntConfig
        from transformers.models.cpmant.modeling_cpmant import CpmAntSegmentPositionEmbedding

        torch = self.torch
        q, k = np.asarray(q_positions), np.asarray(k_positions)
        qs, ks = np.asarray(q_segments), np.asarray(k_segments)
        t = self._t(table)
        config = CpmAntConfig(
            num_attention_heads=t.shape[1],
            position_bias_num_buckets=t.shape[0] - num_segments * num_segments,
            position_bias_max_distance=max_distance,
            segment_types=num_segments,
        )
        module = CpmAntSegmentPositionEmbedding(config).to(t.dtype)
        with torch.no_grad():
            module.relative_attention_bias.copy_(t)
        lead = np.broadcast_shapes(q.shape[:-1], k.shape[:-1], qs.shape[:-1], ks.shape[:-1])
        q, k = np.broadcast_to(q, (*lead, q.shape[-1])), np.broadcast_to(k, (*lead, k.shape[-1]))
        qs, ks = np.broadcast_to(qs, q.shape), np.broadcast_to(ks, k.shape)
        blocks = []
        for i in np.ndindex(lead):
            # forward reads only the lengths of key_pos / query_pos: positions 0 .. n-1 from min(q, k)
            s = min(int(q[i].min()), int(k[i].min()))
            qi, ki = q[i] - s, k[i] - s
            lq, lk = int(qi.max()) + 1, int(ki.max()) + 1
            _check_table(lq * lk, t.shape[1], "torch", "CPM-Ant's position bias")
            seg_q, seg_k = np.zeros(lq, dtype=np.int64), np.zeros(lk, dtype=np.int64)
            seg_q[qi], seg_k[ki] = qs[i], ks[i]
            if not (np.array_equal(seg_q[qi], qs[i]) and np.array_equal(seg_k[ki], ks[i])):
                msg = "CPM-Ant takes one segment per position: a repeated position has two segments"
                raise Unsupported(msg)
            with torch.no_grad():
                out = module(
                    torch.arange(lk)[None], torch.arange(lq)[None], self._t(seg_k)[None], self._t(seg_q)[None]
                )[0]
            blocks.append(out[:, self._t(qi)][:, :, self._t(ki)])
        stacked = torch.stack(blocks)
        return stacked.reshape(*lead, *stacked.shape[1:])

    # --- ALiBi -------------------------------------------------------------------------------------------

    def _alibi_row(self, num_heads: int, length: int, max_bias: float) -> Any:
        """The ``(H, 1, length)`` key row of the chosen ALiBi builder, keys ``0 .. length-1``."""
        torch = self.torch
        if self.alibi_source == "mpt":
            from transformers.models.mpt.modeling_mpt import build_mpt_alibi_tensor

            return build_mpt_alibi_tensor(num_heads, length, alibi_bias_max=max_bias)
        if self.alibi_source == "falcon":
            from transformers.models.falcon.modeling_falcon import build_alibi_tensor
        else:
            from transformers.models.bloom.modeling_bloom import build_alibi_tensor

        if max_bias != 8.0:
            msg = f"{self.alibi_source}'s build_alibi_tensor has no max_bias (always 8)"
            raise Unsupported(msg)
        return build_alibi_tensor(torch.ones(1, length, dtype=torch.long), num_heads, torch.float32)

    def alibi_slopes(self, num_heads: int, *, max_bias: float, dtype: str) -> Any:
        _float32_only(dtype, f"{self.alibi_source} ALiBi")
        row = self._alibi_row(num_heads, 2, max_bias)
        return -row[:, 0, 0] if self.alibi_source == "mpt" else row[:, 0, 1]

    def alibi_bias(self, q_positions: Any, k_positions: Any, slopes: Any, *, form: str) -> Any:
        if form != "causal":
            msg = f"HF's ALiBi tensors are the causal row-identical form only; got form {form!r}"
            raise Unsupported(msg)
        slopes = np.asarray(slopes)
        _float32_only(str(slopes.dtype), f"{self.alibi_source} ALiBi")
        k = np.asarray(k_positions)
        rows = _nonnegative(k, f"{self.alibi_source} ALiBi")
        _check_table(rows, slopes.size, "torch", f"{self.alibi_source} ALiBi")
        own = np.asarray(self.alibi_slopes(slopes.size, max_bias=8.0, dtype="float32"))
        if not np.allclose(own, slopes, rtol=4 * 2.0**-24, atol=0):
            msg = f"{self.alibi_source} computes its own slopes; the given ones differ (max_bias 8 assumed)"
            raise Unsupported(msg)
        row = self._alibi_row(slopes.size, rows, 8.0)[:, :, self._t(k.reshape(-1))]
        return row.broadcast_to((slopes.size, np.asarray(q_positions).size, k.size))

    def alibi_bias_from_heads(
        self, q_positions: Any, k_positions: Any, *, num_heads: int, max_bias: float, form: str, dtype: str
    ) -> Any:
        if form != "causal":
            msg = f"HF's ALiBi tensors are the causal row-identical form only; got form {form!r}"
            raise Unsupported(msg)
        _float32_only(dtype, f"{self.alibi_source} ALiBi")
        q, k = np.asarray(q_positions), np.asarray(k_positions)
        if not (np.issubdtype(q.dtype, np.integer) and np.issubdtype(k.dtype, np.integer)):
            msg = (
                f"{self.alibi_source} builds its tensor from a length; the positions are the adapter's format"
            )
            raise Unsupported(msg)
        rows = _nonnegative(k, f"{self.alibi_source} ALiBi")
        _check_table(rows, num_heads, "torch", f"{self.alibi_source} ALiBi")
        row = self._alibi_row(num_heads, rows, max_bias)[:, :, self._t(k.reshape(-1))]
        return row.broadcast_to((num_heads, q.size, k.size))

    def alibi_bias_from_mask(self, mask: Any, *, num_heads: int, max_bias: float, dtype: str) -> Any:
        from transformers.models.bloom.modeling_bloom import build_alibi_tensor

        _float32_only(dtype, "BLOOM's build_alibi_tensor")
        if max_bias != 8.0:
            msg = "BLOOM's build_alibi_tensor has no max_bias (always 8)"
            raise Unsupported(msg)
        mask = np.asarray(mask)
        rows = self._t(mask.reshape(-1, mask.shape[-1]))  # HF's attention_mask [batch, seq]
        alibi = build_alibi_tensor(rows, num_heads, self.torch.float32)  # [batch * heads, 1, seq]
        return alibi.reshape(*mask.shape[:-1], num_heads, 1, mask.shape[-1])

    # --- absolute ----------------------------------------------------------------------------------------

    def sinusoidal(
        self, positions: Any, dim: int, *, convention: str, options: dict[str, Any], dtype: str
    ) -> Any:
        builder = {
            "vaswani": self._xlm,
            "marian": self._marian,
            "fairseq": self._fairseq,
            "tensor2tensor": self._t2t,
            "patchtst": self._patchtst,
        }.get(convention)
        if builder is None or (convention == "patchtst" and self.patchtst_source is None):
            msg = f"HF has no {convention!r} sinusoidal table in this column"
            raise Unsupported(msg)
        _float32_only(dtype, "HF's sinusoidal tables")
        with self.torch.no_grad():
            return builder(np.asarray(positions), dim, options)

    def _lookup(self, table: Any, positions: np.ndarray) -> Any:
        return self.torch.nn.functional.embedding(self._t(positions), table)

    def _even(self, dim: int, what: str) -> None:
        if dim % 2:
            msg = f"{what} fills pe[:, 0::2] and pe[:, 1::2] from dim // 2 frequencies: odd dim {dim} fails"
            raise Unsupported(msg)

    def _xlm(self, positions: np.ndarray, dim: int, options: dict[str, Any]) -> Any:
        source = self.xlm_source
        _options("vaswani", options, ("base",), f"{source}'s vaswani table")
        rows = _nonnegative(positions, f"{source}'s table")
        if source == "speecht5":  # SpeechT5ScaledPositionalEncoding.forward: emb + alpha * pe, alpha = 1
            self._even(dim, "SpeechT5ScaledPositionalEncoding")
            _check_table(rows, dim, "torch", "SpeechT5ScaledPositionalEncoding")
            module = _module("speecht5").SpeechT5ScaledPositionalEncoding(0.0, dim, max_len=rows).eval()
            table = module(self.torch.zeros(1, rows, dim))[0]
        elif source == "florence2":  # Florence2VisionPositionalEmbeddingCosine1D.forward
            from transformers import Florence2Config

            self._even(dim, "Florence2VisionPositionalEmbeddingCosine1D")
            _check_table(rows, dim, "torch", "Florence2VisionPositionalEmbeddingCosine1D")
            vision = {"embed_dim": [dim], "max_temporal_embeddings": rows}
            module = _module("florence2").Florence2VisionPositionalEmbeddingCosine1D(
                Florence2Config(vision_config=vision)
            )
            table = module(self.torch.zeros(1, rows, dim))
        elif source == "videomae":  # get_sinusoid_encoding_table: float64 NumPy, [1, n, d] float32
            _check_table(rows, dim, "python", "VideoMAE's get_sinusoid_encoding_table")
            table = _module("videomae").get_sinusoid_encoding_table(rows, dim)[0]
        else:  # XLM, FlauBERT, DistilBERT: create_sinusoidal_embeddings, float64 NumPy
            _check_table(rows, dim, "python", f"{source}'s create_sinusoidal_embeddings")
            table = _module(source).create_sinusoidal_embeddings(rows, dim, self.torch.empty(rows, dim))
        return self._lookup(table, positions)

    def _marian(self, positions: np.ndarray, dim: int, options: dict[str, Any]) -> Any:
        if self.marian_source in _TORCH_MARIAN:
            return self._torch_marian(positions, dim, options)
        name = _MARIAN_CLASS[self.marian_source]
        _options("marian", options, ("base",), name)
        rows = _nonnegative(positions, f"{name}'s table")
        _check_table(rows, dim, "python", name)
        module = getattr(_module(self.marian_source), name)(rows, dim)
        module.weight.copy_(module.create_weight())
        return module(self.torch.Size(positions.shape), position_ids=self._t(positions))

    def _torch_marian(self, positions: np.ndarray, dim: int, options: dict[str, Any]) -> Any:
        """CTRL's, Canary's and ZoeDepth's own float32 ``[sin | cos]`` of ``10000**(-2k/d)``."""
        source = self.marian_source
        _options("marian", options, ("base",), f"{source}'s table")
        rows = _nonnegative(positions, f"{source}'s table")
        _check_table(rows, dim, "torch", f"{source}'s table")
        if source == "ctrl":  # sin of angle columns 0::2 (ceil(d/2)), cos of 1::2 (floor(d/2))
            table = _module("ctrl").positional_encoding(rows, dim, self.torch.float32)
        elif source == "canary":
            if dim % 2:
                msg = f"CanaryPositionalEmbedding rejects odd channels by design (ValueError); got dim={dim}"
                raise Unsupported(msg)
            # the table forward reads (forward divides it by sqrt(channels), NeMo's scale)
            module = _module("canary").CanaryPositionalEmbedding(rows, dim)
            table = module.compute_default_singular_positional_embedding()
        elif source == "bros":  # BROS's 1-D bbox sinusoid: [sin | cos] of the positions it is given
            import types

            if dim % 2:
                msg = f"BrosPositionalEmbedding1D gives 2 (dim // 2) columns; got dim={dim}"
                raise Unsupported(msg)
            module = _module("bros").BrosPositionalEmbedding1D(
                types.SimpleNamespace(dim_bbox_sinusoid_emb_1d=dim)
            )
            flat = self._t(positions).reshape(1, 1, -1).to(self.torch.float32)
            return module(flat).reshape(*positions.shape, dim)
        else:  # zoedepth
            from transformers import ZoeDepthConfig

            if dim % 2:
                msg = f"ZoeDepth's positional_encoding_1d gives 2 * ceil(d / 2) = {dim + 1} columns"
                raise Unsupported(msg)
            config = ZoeDepthConfig(
                bottleneck_features=1, patch_transformer_hidden_size=dim, num_patch_transformer_layers=0
            )
            encoder = _module("zoedepth").ZoeDepthPatchTransformerEncoder(config)
            table = encoder.positional_encoding_1d(1, rows, dim)[0]
        return self._lookup(table, positions)

    def _fairseq(self, positions: np.ndarray, dim: int, options: dict[str, Any]) -> Any:
        padding_idx = _options("fairseq", options, (), "fairseq")["padding_idx"]
        family, name = _FAIRSEQ_CLASS[self.fairseq_source]
        embedding = getattr(_module(family), name)
        ids = positions + padding_idx + 1  # the row create_position_ids_from_input_ids gives token p
        rows = max(int(ids.max()) + 1 if ids.size else 1, padding_idx + 1)
        _check_table(rows, dim, "torch", f"{self.fairseq_source} get_embedding")
        table = embedding.get_embedding(rows, dim, padding_idx)
        return table.index_select(0, self._t(ids.reshape(-1))).reshape(*positions.shape, -1)

    def _t2t(self, positions: np.ndarray, dim: int, options: dict[str, Any]) -> Any:
        source = self.t2t_source
        if source in ("musicgen", "musicgen_melody"):
            return self._musicgen(positions, dim, options)
        if source in ("pegasus_x", "timesfm"):
            return self._t2t_at(positions, dim, options)
        merged = _options("tensor2tensor", options, ("min_timescale", "cos_first"), f"{source}'s sinusoids")
        if dim % 2:
            msg = f"{source}'s sinusoids reject odd channels by design (ValueError); got dim={dim}"
            raise Unsupported(msg)
        rows = _nonnegative(positions, f"{source}'s table")
        _check_table(rows, dim, "torch", f"{source}'s sinusoids")
        if source == "whisper":
            table = _module("whisper").sinusoids(rows, dim, max_timescale=merged["max_timescale"])
        elif source == "fun_asr_nano":  # the table forward reads from row 1 (FunASR counts from one)
            module = _module(source).FunAsrNanoPositionEmbedding(
                rows, dim, max_timescale=merged["max_timescale"]
            )
            table = module.compute_default_singular_positional_embedding()
        else:  # Qwen2.5-Omni, Qwen3-Omni-MoE, Qwen3-ASR: SinusoidsPositionEmbedding.forward(seqlen)
            module = _module(source).SinusoidsPositionEmbedding(
                rows, dim, max_timescale=merged["max_timescale"]
            )
            table = module(rows)
        return self._lookup(table, positions)

    def _t2t_at(self, positions: np.ndarray, dim: int, options: dict[str, Any]) -> Any:
        """PegasusX's and TimesFM's tables, computed at the positions themselves (no table rows)."""
        source = self.t2t_source
        flat = self._t(positions.reshape(-1))
        if source == "pegasus_x":
            merged = _options("tensor2tensor", options, ("min_timescale", "cos_first"), "PegasusX's table")
            if dim % 2:
                msg = f"PegasusX fills pe[:, d // 2:] with d // 2 cosines: odd dim {dim} raises RuntimeError"
                raise Unsupported(msg)
            module = _module(source).PegasusXSinusoidalPositionalEmbedding(
                dim, max_scale=merged["max_timescale"]
            )
            zeros = self.torch.zeros(1, flat.numel(), dim)
            out = module(zeros, position_ids=flat[:, None])[0]
        else:  # TimesFM: both timescales from its config; position [1, N] (2-D, as forward requires)
            from transformers import TimesFmConfig

            merged = _options("tensor2tensor", options, ("cos_first",), "TimesFM's table")
            timescales = {name: merged[name] for name in ("min_timescale", "max_timescale")}
            if any(float(v) != int(v) for v in timescales.values()):
                msg = f"TimesFmConfig takes integer timescales (strict int fields); got {timescales}"
                raise Unsupported(msg)
            config = TimesFmConfig(hidden_size=dim, **{name: int(v) for name, v in timescales.items()})
            out = _module(source).TimesFmPositionalEmbedding(config)(position=flat[None, :])[0]
            if out.shape[0] != flat.numel():  # odd dim: F.pad appends a row (a reproduced bug): as given
                return out
        return out.reshape(*positions.shape, out.shape[-1])

    def _musicgen(self, positions: np.ndarray, dim: int, options: dict[str, Any]) -> Any:
        merged = _options(
            "tensor2tensor", options, ("min_timescale", "max_timescale"), "MusicGen's get_embedding"
        )
        if not merged["cos_first"]:
            msg = "MusicGen's get_embedding is [cos | sin] (cos_first=True) only"
            raise Unsupported(msg)
        name = "MusicgenSinusoidalPositionalEmbedding"
        if self.t2t_source == "musicgen_melody":
            name = "MusicgenMelodySinusoidalPositionalEmbedding"
        rows = _nonnegative(positions, f"{self.t2t_source}'s table")
        _check_table(rows, dim, "torch", f"{name}.get_embedding")
        table = getattr(_module(self.t2t_source), name).get_embedding(rows, dim)
        return self._lookup(table, positions)

    def _patchtst(self, positions: np.ndarray, dim: int, options: dict[str, Any]) -> Any:
        rows = _options("patchtst", options, (), "PatchTST's positional encoding")["num_positions"]
        if not isinstance(rows, int) or isinstance(rows, bool) or rows < 1:
            msg = f"PatchTST's table size comes from its config (num_patches); got num_positions={rows!r}"
            raise Unsupported(msg)
        if positions.size and (int(positions.min()) < 0 or int(positions.max()) >= rows):
            msg = f"PatchTST's table has rows 0 .. {rows - 1}; positions outside are the adapter's format"
            raise Unsupported(msg)
        self._even(dim, f"{self.patchtst_source}'s _init_pe")
        _check_table(rows, dim, "torch", f"{self.patchtst_source}'s positional encoding")
        zeros = self.torch.zeros(1, 1, rows, dim)  # [batch, channels, patches, d_model]
        if self.patchtst_source == "patchtsmixer":
            from transformers import PatchTSMixerConfig

            config = PatchTSMixerConfig(
                context_length=rows,
                patch_length=1,
                patch_stride=1,
                d_model=dim,
                num_input_channels=1,
                use_positional_encoding=True,
                positional_encoding_type="sincos",
            )
            module = _module("patchtsmixer").PatchTSMixerPositionalEncoding(config)
        else:
            from transformers import PatchTSTConfig

            config = PatchTSTConfig(
                d_model=dim,
                num_input_channels=1,
                positional_encoding_type="sincos",
                use_cls_token=False,
                positional_dropout=0.0,
            )
            module = _module("patchtst").PatchTSTPositionalEncoding(config, rows)
        table = module.eval()(zeros)[0, 0]  # patch_input + position_enc
        return self._lookup(table, positions)

    # --- the learned zoo: one code path for every row of ``_transformers_learned_families`` ----------------

    def _learned_row(self, source: str, function: str) -> LearnedFamily:
        row = LEARNED_FAMILIES[source]
        if function not in row.functions():
            msg = f"{source}'s code has no {function}"
            raise Unsupported(msg)
        return row

    def _config_class(self, family: str, row: LearnedFamily, name: str) -> Any:
        """``name`` from the family's module, the package, or its ``configuration_<family>``."""
        for where in (
            row.module_path(family),
            "transformers",
            f"transformers.models.{family}.configuration_{family}",
        ):
            found = getattr(importlib.import_module(where), name, None)
            if found is not None:
                return found
        msg = f"no config class {name} for {family}"
        raise LookupError(msg)

    def _learned_module(self, family: str, row: LearnedFamily, values: Any, padding_idx: int | None) -> Any:
        """The family's ``row.learned`` module whose ``row.table`` holds ``values``; every other parameter
        zeroed, the ``row.identity`` modules replaced by an identity ``nn.Linear`` (public attribute
        assignment)."""
        torch = self.torch
        cls = getattr(importlib.import_module(row.module_path(family)), row.learned)
        rows, dim = values.shape

        def build(n: int) -> Any:
            if row.kind == "positional":
                return cls(n, dim)
            pad = {} if padding_idx is None else {"pad_token_id": padding_idx}
            config_class = self._config_class(family, row, row.config)
            config = config_class(
                **dict.fromkeys(row.dim_keys, dim), **{row.rows_key: n}, **row.kwargs, **pad
            )
            return cls(config)

        module = build(rows)
        extra = self._attr(module, row.table).weight.shape[0] - rows  # BART's + 2, MRA's max + 2
        if extra:
            if rows - extra < 1:
                msg = f"{family}'s table has {extra} rows beyond its positions; got {rows} rows"
                raise Unsupported(msg)
            module = build(rows - extra)
        module = module.to(values.dtype).eval()
        with torch.no_grad():
            for parameter in module.parameters():
                parameter.zero_()
            for (
                name
            ) in row.identity:  # an identity Linear: it has the .weight some forwards read the dtype of
                identity = torch.nn.Linear(dim, dim, dtype=values.dtype)
                identity.weight.copy_(torch.eye(dim, dtype=values.dtype))
                identity.bias.zero_()
                parent, _, leaf = name.rpartition(".")
                setattr(self._attr(module, parent), leaf, identity)
            self._attr(module, row.table).weight.copy_(values)
        return module

    @staticmethod
    def _attr(module: Any, path: str) -> Any:
        for name in filter(None, path.split(".")):
            module = getattr(module, name)
        return module

    def _learned_call(self, row: LearnedFamily, module: Any, ids: np.ndarray, shift: int, pad: int) -> dict:
        """The forward arguments that make the family number ``ids`` ([B, L] positions) itself when it
        can (a range from the cache offset, or fairseq's numbering of real tokens), else hand them over
        as ``position_ids``."""
        torch = self.torch
        params = inspect.signature(module.forward).parameters
        first = next(iter(params))
        cache = next((k for k in ("cache_length", "past_key_values_length") if k in params), None)
        batch, length = ids.shape
        real = ids >= 0
        counted = np.cumsum(real, axis=1) - 1
        starts = set((ids - counted)[real].tolist()) or {0}
        arange = np.arange(length)
        own = None
        if row.offset == "roberta" or first == "attention_mask":  # numbers real tokens: pads are -1
            if len(starts) == 1 and (ids == np.where(real, counted + min(starts), -1)).all():
                own = min(starts)
        elif length and (ids == ids[:, :1] + arange).all() and len(set(ids[:, 0].tolist())) == 1:
            own = int(ids[0, 0])
        kwargs: dict[str, Any] = {}
        if "token_type_ids" in params:  # zeros, as the models' default (LXMERT's and LUKE's default crashes)
            kwargs["token_type_ids"] = self._t(np.zeros((batch, length), np.int64))
        if (
            own is not None
            and own >= 0
            and (own == 0 or cache)
            and (own + length + shift) <= self._rows(module, row)
        ):
            kwargs.update({cache: own} if own else {})
            if first == "attention_mask":
                mask = np.concatenate([np.ones((batch, own), dtype=np.int64), real.astype(np.int64)], axis=1)
                return {first: self._t(mask), **kwargs}
            if first == "input_ids_shape":
                return {first: torch.Size((batch, length)), **kwargs}
            token = pad + 1 if row.offset == "roberta" else 3  # a token no family pads or masks (XLM pads 2)
            return {first: self._t(np.where(real, token, pad).astype(np.int64)), **kwargs}
        if "position_ids" not in params:
            msg = (
                f"{row.learned}.forward takes no position_ids and numbers tokens itself from the cache offset"
            )
            raise Unsupported(msg)
        given = ids if row.adds_offset else ids + shift
        lead = (
            torch.Size((batch, length))
            if first == "input_ids_shape"
            else self._t(np.zeros((batch, length), np.int64))
        )
        if first == "attention_mask":
            lead = self._t(np.ones((batch, length), np.int64))
        return {first: lead, "position_ids": self._t(given), **kwargs}

    @staticmethod
    def _rows(module: Any, row: LearnedFamily) -> int:
        return TransformersAdapter._attr(module, row.table).weight.shape[0]

    def learned(self, table: Any, positions: Any, *, offset: str, padding_idx: int | None) -> Any:
        family = self.learned_source
        row = self._learned_row(family, "learned")
        if offset != row.offset or (padding_idx is not None) != (offset == "roberta"):
            msg = f"{family}'s rows are offset {row.offset!r}; got {offset=}, {padding_idx=}"
            raise Unsupported(msg)
        positions = np.asarray(positions)
        values = self._t(table)
        shift = {"plain": 0, "opt": 2, "roberta": (padding_idx or 0) + 1}[offset]
        module = self._learned_module(family, row, values, padding_idx)
        ids = positions.reshape(-1, positions.shape[-1] if positions.ndim else 1)
        kwargs = self._learned_call(row, module, ids, shift, 1 if padding_idx is None else padding_idx)
        with self.torch.no_grad():
            if row.kind == "model":
                out = module(**kwargs, output_hidden_states=True).hidden_states[0]
            else:
                out = module(**kwargs)
        out = out[0] if isinstance(out, tuple) else out  # I-BERT's QuantEmbedding: (rows, scaling factor)
        out = out.reshape(-1, *ids.shape[1:], values.shape[1])  # LED's [L, D]: the model broadcasts it
        return out.expand(*ids.shape, values.shape[1]).reshape(*positions.shape, values.shape[1])

    def token_positions(self, mask: Any, *, cache_length: int) -> Any:
        family = self.token_positions_source
        row = self._learned_row(family, "token_positions")
        owner, _, name = row.token_positions.rpartition(".")
        function = getattr(importlib.import_module(row.module_path(family)), owner or name)
        mask = np.asarray(mask)
        if mask.dtype != np.bool_ and not np.issubdtype(mask.dtype, np.integer):
            msg = "create_position_ids_from_input_ids takes input_ids; the mask is the adapter's format"
            raise Unsupported(msg)
        padding_idx = 1  # RoBERTa's; real tokens count from padding_idx + 1
        ids = np.where(mask.reshape(-1, mask.shape[-1]) != 0, padding_idx + 1, padding_idx)
        args: list[Any] = [self._t(ids), padding_idx]
        if owner:
            function = getattr(function, name)
            if "self" in inspect.signature(function).parameters:  # LiLT's, LayoutLMv3's: a method that
                args.insert(0, None)  # reads nothing of self (a stand-in, as for Deformable DETR's)
        if cache_length:
            if len(inspect.signature(function).parameters) < len(args) + 1:
                msg = f"{family}'s create_position_ids_from_input_ids takes no cache length"
                raise Unsupported(msg)
            args.append(cache_length)
        numbered = function(*args)
        return (numbered - (padding_idx + 1)).reshape(
            mask.shape
        )  # fairseq's offset: padding -1, tokens from 0

    def _qwen_vl(self) -> Any:
        """A one-layer Qwen2.5-VL model (2 x 2 spatial merge, one token per second), made once."""
        if getattr(self, "_qwen", None) is None:
            from transformers import Qwen2_5_VLConfig
            from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel

            tiny = {"hidden_size": 8, "intermediate_size": 8, "num_attention_heads": 1}
            text = {**tiny, "vocab_size": 8, "num_hidden_layers": 1, "num_key_value_heads": 1}
            text.update(bos_token_id=None, eos_token_id=None)
            text["rope_parameters"] = {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [1, 1, 2],
            }
            vision = {**tiny, "depth": 1, "num_heads": 1, "out_hidden_size": 8, "fullatt_block_indexes": [0]}
            vision.update(spatial_merge_size=2, tokens_per_second=1)
            self._qwen = Qwen2_5_VLModel(Qwen2_5_VLConfig(text_config=text, vision_config=vision))
        return self._qwen

    def _mrope_model(self) -> Any:
        """``mrope_ids_source``'s own one-layer model (the Qwen2.5-VL one for the default column)."""
        if self.mrope_ids_source == "qwen2_5_vl":
            return self._qwen_vl()
        if getattr(self, "_mrope_ids_model", None) is None:
            family = self.mrope_ids_source
            model_name, config_name = _MROPE_IDS[family]
            tiny = {"hidden_size": 8, "intermediate_size": 8, "num_attention_heads": 1}
            text = {**tiny, "vocab_size": 8, "num_hidden_layers": 1, "num_key_value_heads": 1}
            text["rope_parameters"] = {
                "rope_type": "default",
                "rope_theta": 10000.0,
                "mrope_section": [1, 1, 2],
            }
            vision = {**tiny, "depth": 1, "num_heads": 1, "out_hidden_size": 8, "spatial_merge_size": 2}
            config = _family_class(family, config_name, "configuration")(
                text_config=text, vision_config=vision
            )
            self._mrope_ids_model = _family_class(family, model_name)(config)
        return self._mrope_ids_model

    def mrope_position_ids(self, segments: Any, *, time_interval: float) -> Any:
        torch = self.torch
        merge = 2
        if self.mrope_ids_source != "qwen2_5_vl" and any(
            isinstance(segment, (list, tuple)) and int(segment[0]) > 1 for segment in segments
        ):
            msg = f"{self.mrope_ids_source} separates video frames by timestamps (its grids split per frame)"
            raise Unsupported(msg)
        types, images, videos = [], [], []
        for segment in segments:
            if isinstance(segment, (list, tuple)):
                t, h, w = (int(n) for n in segment)
                types += [1 if t == 1 else 2] * (t * h * w)  # token types: text 0, image 1, video 2
                (images if t == 1 else videos).append([t, h * merge, w * merge])  # grids before the merge
            else:
                types += [0] * int(segment)
        token_types = torch.tensor([types], dtype=torch.int32)
        grids = {
            "image_grid_thw": torch.tensor(images) if images else None,
            "video_grid_thw": torch.tensor(videos) if videos else None,
            "second_per_grid_ts": torch.tensor([float(time_interval)] * len(videos)) if videos else None,
        }
        ids = torch.zeros(token_types.shape, dtype=torch.long)  # get_rope_index reads the token types
        with torch.no_grad():
            if self.mrope_ids_source != "qwen2_5_vl":
                grids.pop("second_per_grid_ts")
            position_ids, _ = self._mrope_model().get_rope_index(ids, token_types, **grids)
        return position_ids[:, 0]

    # --- NoPE query temperatures and multimodal RoPE of single families ------------------------------------

    #: ``ministral3`` / ``mistral4`` (``get_llama_4_attn_scale``) or ``beam`` (``compute_attention_scaling``);
    #: None: the default column has no such function (Llama 4's is inline in ``Llama4TextAttention.forward``).
    attn_scale_source: str | None = None
    #: ``ernie4_5_vl_moe`` or ``hunyuan_vl`` (their text rotary classes); None: not in the default column.
    mrope_source: str | None = None

    def llama4_attn_scale(
        self, positions: Any, *, floor_scale: float, attn_scale: float, convention: str, dtype: str
    ) -> Any:
        torch, family = self.torch, self.attn_scale_source
        _float32_only(dtype, f"{family}'s attention scale")
        p = np.asarray(positions)
        flat = self._t(p.reshape(1, -1).astype(np.int64))  # HF's position_ids [batch, seq]
        if family == "beam":
            from transformers.models.beam.modeling_beam import compute_attention_scaling

            if convention != "beam" or (floor_scale, attn_scale) != (2048.0, 0.1):
                msg = (
                    f"Beam's compute_attention_scaling is (1 + (p + 1)/2048) ** 0.1 only; got {convention!r}"
                )
                raise Unsupported(msg)
            with torch.no_grad():
                scale = compute_attention_scaling(flat)  # [batch, 1, seq, 1], float32
        else:
            if convention != "mistral":
                msg = (
                    f"{family}'s get_llama_4_attn_scale is the 'mistral' convention only; got {convention!r}"
                )
                raise Unsupported(msg)
            module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
            with torch.no_grad():
                scale = module.get_llama_4_attn_scale(flat, attn_scale, floor_scale)  # [batch, 1, seq, 1]
        return scale.reshape(p.shape)

    def _mrope_module(self, freqs: int, base: float, section: list[int]) -> Any:
        """The family's text rotary module for ``freqs`` inverse frequencies and HF's own section list."""
        family = self.mrope_source
        params = {"rope_type": "default", "rope_theta": base, "mrope_section": section}
        sizes = {"hidden_size": 2 * freqs, "num_attention_heads": 1, "num_key_value_heads": 1}
        if family == "ernie4_5_vl_moe":
            from transformers.models.ernie4_5_vl_moe.configuration_ernie4_5_vl_moe import (
                Ernie4_5_VLMoeTextConfig,
            )
            from transformers.models.ernie4_5_vl_moe.modeling_ernie4_5_vl_moe import (
                Ernie4_5_VLMoeTextRotaryEmbedding,
            )

            return Ernie4_5_VLMoeTextRotaryEmbedding(
                Ernie4_5_VLMoeTextConfig(**sizes, rope_parameters=params)
            )
        from transformers.models.hunyuan_vl.configuration_hunyuan_vl import HunYuanVLTextConfig
        from transformers.models.hunyuan_vl.modeling_hunyuan_vl import HunYuanVLRotaryEmbedding

        config = HunYuanVLTextConfig(**sizes, head_dim=2 * freqs, rope_parameters=params)
        return HunYuanVLRotaryEmbedding(config)

    def mrope_angles(
        self, position_ids: Any, inv_freq: Any, *, mrope_section: Any, section_order: str, dtype: str
    ) -> Any:
        torch, family = self.torch, self.mrope_source
        _float32_only(dtype, f"{family}'s M-RoPE")
        section = [int(n) for n in mrope_section]
        omega = np.asarray(inv_freq, dtype=np.float64)
        ids = np.asarray(position_ids)
        if family == "ernie4_5_vl_moe":
            if section_order != "ernie" or len(section) != 3:
                msg = f"Ernie 4.5 VL's rotary class is the 'ernie' order of (t, h, w); got {section_order!r}"
                raise Unsupported(msg)
            hf_section = [section[1], section[2], section[0]]  # HF's config lists (h, w, t)
        else:
            if section_order != "chunked":
                msg = f"HunYuan-VL's rotary class splits sections in order (chunked); got {section_order!r}"
                raise Unsupported(msg)
            hf_section = section
        module = self._mrope_module(omega.size, 10000.0, hf_section)
        # HF derives inv_freq from a base (Ernie re-orders it: even | odd hw slots, then t): read that slot
        # order off HF's own buffer against the plain frequencies of the same base, then load the case's
        plain = 1.0 / 10000.0 ** (np.arange(omega.size) * 2.0 / (2 * omega.size))
        built = module.inv_freq.double().numpy()
        order = [int(np.argmin(np.abs(plain - value))) for value in built]
        module.inv_freq = self._t(omega[order].astype(np.float32))
        rows = ids if ids.ndim == 3 else ids[:, None, :]  # [C, batch, seq]
        with torch.no_grad():
            # forward's own product (position_ids[..., None].float() * inv_freq), then HF's slot selection
            angles = module.recomposition_frequencies(self._t(rows)[..., None].float() * module.inv_freq)
        if family == "ernie4_5_vl_moe":
            out = angles[..., 0::2]  # repeat_interleave(2): the pairs of the interleaved layout
        else:
            first, second = angles[..., : omega.size], angles[..., omega.size :]
            if not torch.equal(first, second):
                where = int((first != second).flatten().nonzero()[0])
                msg = (
                    "HunYuanVLRotaryEmbedding gives the two channels of a rotated pair different angles "
                    f"(first at flat index {where}): cat(freq, freq) split into [2 s for s in section], so "
                    "no per-slot angle exists"
                )
                raise RuntimeError(msg)
            out = first
        return out if ids.ndim == 3 else out[0]

    # --- masks -------------------------------------------------------------------------------------------

    def causal_mask(
        self, q_positions: Any, k_positions: Any, *, sliding_window: int | None, chunk_size: int | None
    ) -> Any:
        from transformers import masking_utils as mu

        torch = self.torch
        functions = [mu.causal_mask_function]
        if sliding_window is not None:
            functions.append(mu.sliding_window_causal_mask_function(sliding_window))
        if chunk_size is not None:
            functions.append(mu.chunked_causal_mask_function(chunk_size, torch.zeros(1, dtype=torch.long)))
        mask = mu.and_masks(*functions)
        batch = head = torch.zeros((), dtype=torch.long)
        q = self._t(q_positions)[:, None]
        k = self._t(k_positions)[None, :]
        return mask(batch, head, q, k).broadcast_to((q.shape[0], k.shape[1]))

    # --- attention ---------------------------------------------------------------------------------------

    def attention(self, q: Any, k: Any, v: Any, *, bias: Any, mask: Any, scale: float | None) -> Any:
        import types

        from transformers.masking_utils import eager_mask
        from transformers.models.llama.modeling_llama import eager_attention_forward

        torch = self.torch
        q, k, v = (self._t(a) for a in (q, k, v))
        lead, (lq, depth), lk = q.shape[:-2], q.shape[-2:], k.shape[-2]
        if k.shape[:-2] != lead or v.shape[:-2] != lead:
            msg = "eager_attention_forward takes q, k and v with the same leading axes"
            raise Unsupported(msg)
        query, key, value = (t.reshape(-1, 1, *t.shape[-2:]) for t in (q, k, v))  # [batch, heads, seq, dim]
        batches = query.shape[0]
        additive = None  # HF's attention_mask: one additive float tensor
        if mask is not None:  # HF's eager mask from a mask function: 0 where kept, finfo.min elsewhere
            keep = self._t(np.broadcast_to(mask, (*lead, lq, lk)).reshape(batches, lq, lk))
            additive = eager_mask(
                batches, lq, lk, mask_function=lambda b, h, i, j: keep[b, i, j], dtype=q.dtype
            )
        if bias is not None:  # a position bias joins the mask, as T5 adds position_bias to it
            joined = self._t(bias).broadcast_to((*lead, lq, lk)).reshape(batches, 1, lq, lk)
            additive = joined if additive is None else additive + joined
        module = types.SimpleNamespace(num_key_value_groups=1, training=False)
        with torch.no_grad():
            out, _ = eager_attention_forward(
                module, query, key, value, additive, scaling=depth**-0.5 if scale is None else scale
            )
        return out.transpose(1, 2).reshape(*lead, lq, v.shape[-1])  # HF returns [batch, seq, heads, dim]

    # --- windowed 2-D relative positions (Swin/BEiT tables, Swin-V2 coordinates, SAM/ViTDet) ------------

    #: Which HF module serves window_bias without / with a cls token, swinv2_log_coords and
    #: decomposed_rel_pos (the variants name the copies).
    window_source = "swin"
    cls_source = "beit"
    swinv2_source = "swinv2"
    decomposed_source = "sam"

    def _load(self, module: Any, values: np.ndarray) -> Any:
        """``module`` in the table's dtype with the case's values in its ``relative_position_bias_table``,
        as a checkpoint loads it (a size mismatch raises)."""
        module = module.to(self._t(values).dtype)
        with self.torch.no_grad():
            module.relative_position_bias_table.copy_(self._t(values))
        return module

    def window_bias(self, table: Any, window_size: list[int], *, cls_token: bool) -> Any:
        table, window = np.asarray(table), tuple(window_size)
        heads = table.shape[-1] if table.ndim == 2 else 1
        # a variant serves its own family's layout only: Swin's copies have no cls token, BEiT's
        # copies always have one (the other layout would be the default column's code again)
        if cls_token and "window_source" in self.overrides:
            msg = f"{self.window_source}'s window bias has no cls token"
            raise Unsupported(msg)
        if not cls_token and "cls_source" in self.overrides:
            msg = f"{self.cls_source}'s window bias always has a cls token"
            raise Unsupported(msg)
        if cls_token:
            return self._cls_window_bias(table, window, heads)
        if self.window_source == "swin":
            from transformers.models.swin.modeling_swin import SwinRelativePositionBias

            module = self._load(SwinRelativePositionBias(heads, window), table)
            with self.torch.no_grad():
                return module()[0]  # [1, heads, N, N]
        # Donut-Swin, MaskFormer-Swin: the index buffer and table of the attention module; its forward
        # gathers them inline (table[index.view(-1)].view(N, N, -1).permute(2, 0, 1)), done here as it does
        module = self._load(self._window_attention(heads, window), table)
        n = window[0] * window[1]
        with self.torch.no_grad():
            gathered = module.relative_position_bias_table[module.relative_position_index.view(-1)]
            return gathered.view(n, n, -1).permute(2, 0, 1)

    def _window_attention(self, heads: int, window: tuple[int, int]) -> Any:
        if self.window_source == "clap":
            from transformers import ClapAudioConfig
            from transformers.models.clap.modeling_clap import ClapAudioSelfAttention

            return ClapAudioSelfAttention(ClapAudioConfig(), heads, heads, window)
        if self.window_source == "donut":
            from transformers import DonutSwinConfig
            from transformers.models.donut.modeling_donut_swin import DonutSwinSelfAttention

            return DonutSwinSelfAttention(DonutSwinConfig(), heads, heads, window)
        from transformers import MaskFormerSwinConfig
        from transformers.models.maskformer.modeling_maskformer_swin import MaskFormerSwinSelfAttention

        return MaskFormerSwinSelfAttention(MaskFormerSwinConfig(), heads, heads, window)

    def _cls_window_bias(self, table: np.ndarray, window: tuple[int, int], heads: int) -> Any:
        # BEiT's window is image_size // patch_size: patch_size 1 makes it the case's window; forward at
        # that window resizes the sub-table to its own size (the identity for a square window)
        if self.cls_source == "beit":
            from transformers import BeitConfig
            from transformers.models.beit.modeling_beit import BeitRelativePositionBias

            module = BeitRelativePositionBias(
                BeitConfig(image_size=list(window), patch_size=1, num_attention_heads=heads)
            )
        else:
            from transformers import Data2VecVisionConfig
            from transformers.models.data2vec.modeling_data2vec_vision import (
                Data2VecVisionRelativePositionBias,
            )

            config = Data2VecVisionConfig(image_size=list(window), patch_size=1, num_attention_heads=heads)
            module = Data2VecVisionRelativePositionBias(config, window_size=window)
        module = self._load(module, table)
        with self.torch.no_grad():
            return module(window)[0]  # [1, heads, N + 1, N + 1]

    def swinv2_log_coords(
        self, window_size: list[int], *, pretrained_window_size: list[int], dtype: str
    ) -> Any:
        _float32_only(dtype, "Swin-V2's create_coords_table_and_index")
        pretrained = list(pretrained_window_size) if pretrained_window_size else [0, 0]  # HF: 0 = none
        if self.swinv2_source == "swinv2":
            from transformers import Swinv2Config
            from transformers.models.swinv2.modeling_swinv2 import Swinv2SelfAttention as attention

            config = Swinv2Config()
        else:
            from transformers import Swin2SRConfig
            from transformers.models.swin2sr.modeling_swin2sr import Swin2SRSelfAttention as attention

            config = Swin2SRConfig()
        module = attention(config, 8, 2, list(window_size), pretrained_window_size=pretrained)
        return module.relative_coords_table[0]  # [1, 2Wh - 1, 2Ww - 1, 2]

    def decomposed_rel_pos(
        self, query: Any, rel_pos_h: Any, rel_pos_w: Any, *, k_size: list[int], coords: str
    ) -> Any:
        if coords != "float32":
            msg = "SAM/ViTDet's get_rel_pos computes the coordinate in float32 and truncates (.long())"
            raise Unsupported(msg)
        q, th, tw = self._t(query), self._t(rel_pos_h), self._t(rel_pos_w)
        *lead, qh, qw, width = q.shape
        kh, kw = k_size
        flat = q.reshape(-1, qh * qw, width)  # HF's query: [batch, qh * qw, C]
        with self.torch.no_grad():
            zero = self.torch.zeros(flat.shape[0], qh * qw, kh * kw, dtype=q.dtype)  # attn, for the adders
            if self.decomposed_source == "vitdet":
                from transformers.models.vitdet.modeling_vitdet import add_decomposed_relative_positions

                out = add_decomposed_relative_positions(zero, flat, th, tw, (qh, qw), (kh, kw))
            elif self.decomposed_source == "seggpt":
                from transformers import SegGptConfig
                from transformers.models.seggpt.modeling_seggpt import SegGptAttention

                config = SegGptConfig(
                    hidden_size=width, num_attention_heads=1, image_size=[16, 16], patch_size=4
                )
                out = SegGptAttention(config).add_decomposed_rel_pos(zero, flat, th, tw, (qh, qw), (kh, kw))
            else:
                out = self._sam_attention(width).get_decomposed_rel_pos(flat, th, tw, (qh, qw), (kh, kw))
        return out.reshape(*lead, qh, qw, kh, kw)

    def _sam_attention(self, width: int) -> Any:
        if self.decomposed_source == "got_ocr2":
            from transformers import GotOcr2VisionConfig
            from transformers.models.got_ocr2.modeling_got_ocr2 import GotOcr2VisionAttention as attention

            config = GotOcr2VisionConfig(
                hidden_size=width, num_attention_heads=1, image_size=16, patch_size=4
            )
            return attention(config, window_size=0)
        if self.decomposed_source == "sam_hq":
            from transformers import SamHQVisionConfig
            from transformers.models.sam_hq.modeling_sam_hq import SamHQVisionAttention as attention

            config = SamHQVisionConfig(hidden_size=width, num_attention_heads=1, image_size=16, patch_size=4)
        else:
            from transformers import SamVisionConfig
            from transformers.models.sam.modeling_sam import SamVisionAttention as attention

            config = SamVisionConfig(hidden_size=width, num_attention_heads=1, image_size=16, patch_size=4)
        return attention(config, window_size=0)  # get_rel_pos reads only its arguments

    # --- grid resize ---------------------------------------------------------------------------------
    # Each HF family's own interpolate_pos_encoding / get_rel_pos, chosen by the case's options: the
    # adapter loads the case's table into the module, asks for the new grid through the image size in
    # pixels (patch 2), and reshapes HF's [1, P + N', D] back.

    _PATCH = 2  # pixels per patch side of the tiny configs

    def _vision_module(self, source: str, side: int, dim: int, dtype: Any) -> tuple[Any, Any]:
        """The family's embeddings module for a ``side x side`` grid of width ``dim``, and its table."""
        row = self._learned_row(source, "patch_grid_resize")
        kw = {"image_size": side * self._PATCH, "patch_size": self._PATCH, "num_channels": 1}
        config = self._config_class(source, row, row.patch_config)(
            **{row.patch_dim_key: dim}, **kw, **row.patch_kwargs
        )
        module = getattr(importlib.import_module(row.module_path(source)), row.patch)(config).to(dtype)
        if row.patch_call == "forward":  # Timesformer: a zero patch embedding and class token, so its
            with self.torch.no_grad():  # output is the (resized) table
                for parameter in module.parameters():
                    parameter.zero_()
        table = getattr(module, "position_embeddings", None)
        table = table if table is not None else module.position_embedding
        return module, getattr(table, "weight", table)  # an nn.Embedding's weight, or a Parameter

    @staticmethod
    def _patch_source(table: np.ndarray, prefix: int, mode: str, align: bool, factors: Any, aa: bool) -> str:
        """The HF family whose interpolate_pos_encoding is this call (see the module docstring)."""
        if mode == "nearest" and prefix == 1 and factors is None:
            return "timesformer"  # TimesformerEmbeddings.forward: F.interpolate(mode="nearest")
        if mode != "bicubic" or align:
            msg = "HF's patch tables resize with bicubic, align_corners=False, or nearest (Timesformer); "
            msg += "ViLT's bilinear is not covered"
            raise Unsupported(msg)
        if factors is not None:
            if prefix != 1 or aa:
                msg = "Idefics (scale_factor) has one class row and no antialias"
                raise Unsupported(msg)
            return "idefics"
        if aa:
            if prefix != 1:
                msg = "DINOv2 with registers (antialias) has one class row"
                raise Unsupported(msg)
            return "dinov2_with_registers"
        if prefix == 1:
            if table.ndim == 2:
                return "clip"  # CLIP's nn.Embedding weight [1 + N, D]
            return "dinov2" if table.dtype == np.float32 else "vit"  # the same call; DINOv2 is float32
        if prefix in (0, 2):
            return {0: "siglip", 2: "deit"}[prefix]
        msg = f"no HF family keeps {prefix} prefix rows in its position table (SigLIP 0, ViT 1, DeiT 2)"
        raise Unsupported(msg)

    def _dpt_resize(self, table: np.ndarray, grid: Any, new_grid: Any, prefix: int, options: tuple) -> Any:
        """DPT's ``DPTViTEmbeddings._resize_pos_embed(posemb, h, w, start_index=prefix)``: bilinear,
        half-pixel (its underscored method is DPT's only resize; it reads nothing from ``self``)."""
        from transformers.models.dpt.modeling_dpt import DPTViTEmbeddings

        if options != ("bilinear", False, None, False):
            msg = f"DPT resizes bilinear, align_corners=False, by size, no antialias; got {options}"
            raise Unsupported(msg)
        (n, m), (h, w) = grid, new_grid
        if n != m or table.ndim != 2:
            msg = "DPT stores one square grid (sqrt of the patch count) as [P + N, D]"
            raise Unsupported(msg)
        with self.torch.no_grad():
            out = DPTViTEmbeddings._resize_pos_embed(
                None, self._t(table)[None], int(h), int(w), start_index=prefix
            )
        return out[0]

    def patch_grid_resize(
        self,
        table: Any,
        grid: Any,
        new_grid: Any,
        *,
        prefix_tokens: int,
        mode: str,
        align_corners: bool,
        scale_factor: Any,
        antialias: bool,
        skip_same_grid: bool,
    ) -> Any:
        torch = self.torch
        table = np.asarray(table)
        factors = None if scale_factor is None else [float(f) for f in np.asarray(scale_factor).reshape(-1)]
        if self.patch_source == "dpt":
            return self._dpt_resize(
                table, grid, new_grid, prefix_tokens, (mode, align_corners, factors, antialias)
            )
        source = self.patch_source or self._patch_source(
            table, prefix_tokens, mode, align_corners, factors, antialias
        )
        row = self._learned_row(source, "patch_grid_resize")
        own = (row.prefix, row.mode, False, row.scale_factor, row.antialias)
        if (prefix_tokens, mode, align_corners, factors is not None, antialias) != own:
            msg = f"{source}'s interpolate_pos_encoding: prefix, mode, align_corners, scale_factor, "
            msg += f"antialias = {own}"
            raise Unsupported(msg)
        (n, m), (h, w) = grid, new_grid
        if n != m or table.ndim not in (2, 3) or (table.ndim == 3 and table.shape[0] != 1):
            msg = "HF stores one square grid (sqrt of the patch count) as [1, P + N, D] or [P + N, D]"
            raise Unsupported(msg)
        if row.float32:
            _float32_only(str(table.dtype), f"{source} (it resizes in float32)")
        if factors is not None and factors != [(h + 0.1) / math.sqrt(n * n), (w + 0.1) / math.sqrt(n * n)]:
            msg = "Idefics derives its scale_factor as ((h + 0.1) / n, (w + 0.1) / n)"
            raise Unsupported(msg)
        dim = table.shape[-1]
        module, weight = self._vision_module(source, n, dim, getattr(torch, str(table.dtype)))
        height, width = h * self._PATCH, w * self._PATCH
        if (h, w) == (n, m) and not skip_same_grid:
            width += 1  # the same grid from a non-square image: HF's early return does not apply
        embeddings = torch.zeros(1, prefix_tokens + h * w, dim, dtype=weight.dtype)
        with torch.no_grad():
            weight.copy_(self._t(table).reshape(weight.shape))
            if row.patch_call == "forward":  # its forward resizes inline: one frame of zeros
                out = module(torch.zeros(1, 1, 1, height, width, dtype=weight.dtype))
            else:
                out = module.interpolate_pos_encoding(embeddings, height, width)
        return out.reshape(*table.shape[:-2], prefix_tokens + h * w, dim)

    def grid_resize(
        self,
        table: Any,
        size: Any,
        *,
        mode: str,
        align_corners: bool,
        scale_factor: Any,
        antialias: bool,
    ) -> Any:
        torch = self.torch
        table = np.asarray(table)
        if len(size) != 1 or mode != "linear" or align_corners or antialias:
            msg = "HF's only standalone grid resize is SAM's get_rel_pos: 1-D linear, align_corners=False"
            raise Unsupported(msg)
        if scale_factor is not None or table.ndim != 2 or size[0] % 2 == 0:
            msg = "SAM's get_rel_pos resizes an [L, D] table to 2 s - 1 rows (size=, odd)"
            raise Unsupported(msg)
        from transformers import SamVisionConfig
        from transformers.models.sam.modeling_sam import SamVisionAttention

        s, dim = (size[0] + 1) // 2, table.shape[1]
        config = SamVisionConfig(hidden_size=dim, num_attention_heads=1, use_rel_pos=False)
        with torch.no_grad():
            rel = SamVisionAttention(config, window_size=s).get_rel_pos(s, s, self._t(table))  # [s, s, D]
        # entry (i, j) is row i - j + s - 1 of the resized table: column s - 1 holds rows 0 .. s - 1,
        # row s - 1 (read right to left) rows s - 1 .. 2 s - 2
        return torch.cat((rel[:, s - 1], rel[s - 1, : s - 1].flip(0)), dim=0)

    # --- vision sine (DETR's 2-D sine, its coordinate sinusoid, 2-D sincos) ---------------------------

    def detr_sine_2d(
        self,
        mask: Any,
        num_position_features: int,
        *,
        temperature: float,
        temperature_height: float | None,
        temperature_width: float | None,
        normalize: bool,
        scale: float,
        convention: str,
        dtype: str,
    ) -> Any:
        torch = self.torch
        source = self.detr_sine_source
        pixel_mask = self._t(np.asarray(mask))
        t_h = temperature if temperature_height is None else temperature_height
        t_w = temperature if temperature_width is None else temperature_width
        integral = float(t_h).is_integer() and float(t_w).is_integer()
        if source in ("dab_detr", "grounding_dino", "mm_grounding_dino") and not integral:
            msg = f"{source}'s config takes integer temperatures; got {t_h} and {t_w}"
            raise Unsupported(msg)
        if source == "dab_detr":
            from transformers import DabDetrConfig
            from transformers.models.dab_detr.modeling_dab_detr import DabDetrSinePositionEmbedding

            _float32_only(dtype, "DAB-DETR's sine (float32 cumsum and dim_t)")
            if convention != "detr" or not normalize:
                msg = "DAB-DETR's sine always normalises, without Deformable DETR's offset"
                raise Unsupported(msg)
            config = DabDetrConfig(
                hidden_size=2 * num_position_features,
                temperature_height=int(t_h),
                temperature_width=int(t_w),
                sine_position_embedding_scale=scale,
                use_pretrained_backbone=False,
            )
            module = DabDetrSinePositionEmbedding(config)
            with torch.no_grad():
                return module(torch.zeros(1), pixel_mask)
        if t_h != t_w:
            msg = f"{source}'s sine has one temperature for both axes; got {t_h} and {t_w}"
            raise Unsupported(msg)
        if convention == "deformable_detr" and source != "detr":
            msg = f"{source}'s sine has no Deformable DETR offset (c - 0.5)"
            raise Unsupported(msg)
        if source in ("grounding_dino", "mm_grounding_dino"):
            modeling = importlib.import_module(f"transformers.models.{source}.modeling_{source}")
            name = "GroundingDino" if source == "grounding_dino" else "MMGroundingDino"
            _float32_only(dtype, f"{source}'s sine (float32 cumsum and dim_t)")
            if convention != "detr" or not normalize or scale != 2 * np.pi:
                msg = f"{source}'s sine always normalises to 2 pi, without Deformable DETR's offset"
                raise Unsupported(msg)
            config = getattr(self.transformers, f"{name}Config")(
                d_model=2 * num_position_features, positional_embedding_temperature=int(t_h)
            )
            module = getattr(modeling, f"{name}SinePositionEmbedding")(config)
            with torch.no_grad():
                return module(torch.zeros(1), pixel_mask)
        if convention == "deformable_detr":
            from transformers.models.deformable_detr.modeling_deformable_detr import (
                DeformableDetrSinePositionEmbedding as Sine,
            )
        else:
            modeling = importlib.import_module(f"transformers.models.{source}.modeling_{source}")
            Sine = getattr(modeling, _DETR_SINE_CLASS[source])
        module = Sine(
            num_position_features, temperature=t_h, normalize=normalize, scale=scale if normalize else None
        )
        if source == "table_transformer":
            # the pre-refactor copy: forward(pixel_values, pixel_mask), cumsum and dim_t in float32
            _float32_only(dtype, "Table Transformer's sine (float32 cumsum and dim_t)")
            with torch.no_grad():
                return module(torch.zeros(1), pixel_mask)
        batch, height, width = pixel_mask.shape
        with torch.no_grad():
            return module(
                shape=(batch, 1, height, width), device="cpu", dtype=getattr(torch, dtype), mask=pixel_mask
            )

    def detr_coord_sine(
        self, coords: Any, num_pos_feats: int, *, temperature: float, scale: float, convention: str
    ) -> Any:
        if scale != 2 * np.pi:
            msg = f"HF's coordinate sinusoids hard-code scale = 2 pi; got {scale}"
            raise Unsupported(msg)
        c = self._t(coords)
        source = self.coord_sine_source
        if convention == "conditional_detr":
            modeling = importlib.import_module(f"transformers.models.{source}.modeling_{source}")
            return modeling.encode_sinusoidal_position_embedding(c, num_pos_feats, temperature)
        if source != "conditional_detr":
            msg = f"{source} has no get_proposal_pos_embed; Deformable DETR's is the default's"
            raise Unsupported(msg)
        import types

        from transformers import DeformableDetrConfig
        from transformers.models.deformable_detr.modeling_deformable_detr import DeformableDetrModel

        if temperature != 10000.0:
            msg = f"Deformable DETR's get_proposal_pos_embed hard-codes temperature 10000; got {temperature}"
            raise Unsupported(msg)
        # get_proposal_pos_embed reads self.config.d_model only: a stand-in self, no model built
        owner = types.SimpleNamespace(config=DeformableDetrConfig(d_model=2 * num_pos_feats))
        proposals = c.reshape(1, -1, c.shape[-1])  # HF's [batch, queries, coordinates]
        out = DeformableDetrModel.get_proposal_pos_embed(owner, proposals)
        return out.reshape(*c.shape[:-1], c.shape[-1] * num_pos_feats)

    def sincos_2d(
        self,
        h_positions: Any,
        w_positions: Any,
        dim: int,
        *,
        temperature: float,
        convention: str,
        cls_token: bool,
        dtype: str,
    ) -> Any:
        h, w = np.asarray(h_positions), np.asarray(w_positions)
        if h.ndim != 1 or w.ndim != 1 or (h != np.arange(h.size)).any() or (w != np.arange(w.size)).any():
            msg = "HF's 2-D sincos tables are built for the grid arange(height) x arange(width) only"
            raise Unsupported(msg)
        torch = self.torch
        source = self.sincos_source
        if convention == "rt_detr":
            modeling = importlib.import_module(f"transformers.models.{source}.modeling_{source}")
            return modeling.build_2d_sinusoidal_position_embedding(
                h.size, w.size, dim, temperature, cls_token, dtype=getattr(torch, dtype)
            )
        if source != "rt_detr":
            msg = f"{source}'s build_2d_sinusoidal_position_embedding is RT-DETR's layout only"
            raise Unsupported(msg)
        if convention == "omdet_turbo":
            from transformers.models.omdet_turbo.modeling_omdet_turbo import OmDetTurboHybridEncoder

            if cls_token:
                msg = "OmDet-Turbo's table has no cls row"
                raise Unsupported(msg)
            table = OmDetTurboHybridEncoder.build_2d_sincos_position_embedding(
                w.size, h.size, dim, temperature, dtype=getattr(torch, dtype)
            )
            return table[0]
        from transformers import ViTMAEConfig
        from transformers.models.vit_mae.modeling_vit_mae import ViTMAEEmbeddings

        _float32_only(dtype, "ViT-MAE's position_embeddings (a float32 parameter)")
        if h.size != w.size or not cls_token or temperature != 10000.0:
            msg = "ViT-MAE builds a square grid with its cls row at temperature 10000 only"
            raise Unsupported(msg)
        config = ViTMAEConfig(hidden_size=dim, image_size=h.size, patch_size=1, num_channels=1)
        embeddings = ViTMAEEmbeddings(config)
        with torch.no_grad():
            embeddings.initialize_weights()  # the sincos table with ViT-MAE's half swap
        return embeddings.position_embeddings.detach()[0]

    # --- vision features: SAM Fourier features, NaViT buckets, factorised 2-D tables ---------------------

    def _sam_embedding(self, gaussian: Any) -> Any:
        """``SamPositionalEmbedding`` holding the case's ``G`` (in its dtype)."""
        import types

        width = gaussian.shape[-1]  # SAM's num_pos_feats; its copies read hidden_size // 2
        config = types.SimpleNamespace(scale=1.0, num_pos_feats=width, hidden_size=2 * width)
        module = _family_class(self.fourier_source, _FOURIER[self.fourier_source])(config)
        # the case's matrix as given, whatever its shape (copy_ would broadcast a wrong one)
        module.positional_embedding = self.torch.nn.Parameter(gaussian.clone(), requires_grad=False)
        return module

    def fourier_features(self, coords: Any, gaussian: Any, *, input_shape: Any, offset: float) -> Any:
        from transformers import SamConfig
        from transformers.models.sam.modeling_sam import SamPromptEncoder

        torch = self.torch
        c, g = self._t(coords), self._t(gaussian)
        points = c.reshape(1, 1, -1, c.shape[-1]).to(g.dtype)  # SAM indexes coordinates[:, :, :, k]
        shape = tuple(int(n) for n in input_shape)
        h, w = shape[0], shape[-1]
        if "fourier_source" in self.overrides and offset != 0.0:
            msg = f"{self.fourier_source}'s copy is mapped without the prompt encoder's 0.5 shift"
            raise Unsupported(msg)
        with torch.no_grad():
            if offset == 0.0:  # input_shape [1, 1] is SAM's input_shape=None (points already normalised)
                out = self._sam_embedding(g)(points, None if shape == (1, 1) else shape)
            elif offset == 0.5 and len(shape) == 2 and h == w:  # the prompt encoder's shift, square only
                hidden = 2 * g.shape[1]
                config = SamConfig(
                    vision_config={"num_pos_feats": g.shape[1]},
                    prompt_encoder_config={"hidden_size": hidden, "image_size": h},
                )
                encoder = SamPromptEncoder(config).to(g.dtype)
                encoder.shared_embedding = self._sam_embedding(g)
                encoder.point_embed[1].weight.zero_()  # label 1 adds point_embed[1]: zero, an exact no-op
                labels = torch.ones(points.shape[:3], dtype=torch.long)
                # the public forward; without boxes it appends one padding point, dropped here
                sparse, _ = encoder(points, labels, None, None)
                out = sparse[:, :, :-1]
            else:
                msg = f"SAM shifts by 0.5 only in its square prompt encoder; got {offset=}, shape {shape}"
                raise Unsupported(msg)
        return out.reshape(*c.shape[:-1], out.shape[-1])

    def fourier_grid(self, gaussian: Any, *, height: int, width: int) -> Any:
        import types

        from transformers.models.sam.modeling_sam import SamModel
        from transformers.models.sam2.modeling_sam2 import Sam2Model

        g = self._t(gaussian)
        embedding = self._sam_embedding(g)
        if height == width:  # SamModel's grid is square: image_embedding_size x image_embedding_size
            config = types.SimpleNamespace(
                prompt_encoder_config=types.SimpleNamespace(image_embedding_size=height)
            )
            model = types.SimpleNamespace(config=config, shared_image_embedding=embedding)
            grid = SamModel.get_image_wide_positional_embeddings
        else:  # SAM 2's takes a (rows, columns) size
            encoder = types.SimpleNamespace(image_embedding_size=(height, width))
            model = types.SimpleNamespace(prompt_encoder=encoder, shared_image_embedding=embedding)
            grid = Sam2Model.get_image_wide_positional_embeddings
        with self.torch.no_grad():
            return grid(model)[0]

    def navit_position_ids(
        self, patch_attention_mask: Any, *, num_patches_per_side: int, arithmetic: str
    ) -> Any:
        torch = self.torch
        if arithmetic == "float32_divide" and "navit_source" not in self.overrides:
            return self._minicpm_position_ids(patch_attention_mask, num_patches_per_side)
        if arithmetic != "float32":
            msg = f"{self.navit_source} computes its buckets in float32; got arithmetic={arithmetic!r}"
            raise Unsupported(msg)
        mask = self._t(patch_attention_mask)
        if mask.dtype != torch.bool or mask.ndim != 3:
            msg = "the adapter builds Idefics2's pixel_values [B, 1, H, W] from a boolean [B, H, W] mask"
            raise Unsupported(msg)
        side = num_patches_per_side
        embeddings, config_name = _NAVIT[self.navit_source]
        config_class = _family_class(self.navit_source, config_name, "configuration")
        config = config_class(hidden_size=1, image_size=side, patch_size=1, num_channels=1)
        module = _family_class(self.navit_source, embeddings)(config)
        with torch.no_grad():
            module.patch_embedding.weight.zero_()  # patch embeddings 0: the output is the position rows alone
            module.patch_embedding.bias.zero_()
            module.position_embedding.weight.copy_(torch.arange(side * side, dtype=torch.float32)[:, None])
            pixels = torch.zeros((mask.shape[0], 1, mask.shape[1], mask.shape[2]))
            # row r of the identity-like table holds r (exact in float32 below 2**24): the ids themselves
            rows = module(pixels, mask)[..., 0]
        return rows.to(torch.int64)

    def _minicpm_position_ids(self, patch_attention_mask: Any, side: int) -> Any:
        """``vision_utils.get_vision_nearest_position_ids`` (MiniCPM-V) on each image's ``(h, w)``, its flat
        ids of the real patches put back into the padded ``[B, Hmax * Wmax]`` layout (0 at padding)."""
        from transformers.vision_utils import get_vision_nearest_position_ids

        mask = np.asarray(patch_attention_mask)
        if mask.dtype != np.bool_ or mask.ndim != 3:
            msg = "MiniCPM-V takes (h, w) per image: the adapter reads them from a boolean [B, H, W] mask"
            raise Unsupported(msg)
        sizes = [(int(m[:, 0].sum()), int(m[0, :].sum())) for m in mask]  # HF's counts: column 0, row 0
        for m, (h, w) in zip(mask, sizes, strict=True):
            if m.sum() != h * w or not m[:h, :w].all():
                msg = "MiniCPM-V's images are h x w rectangles: the mask must be one, top left"
                raise Unsupported(msg)
        with self.torch.no_grad():
            flat = get_vision_nearest_position_ids(
                self.torch.tensor(sizes, dtype=self.torch.long), side
            ).numpy()
        out = np.zeros(mask.reshape(len(mask), -1).shape, dtype=np.int64)
        start = 0
        for b, (h, w) in enumerate(sizes):
            out[b][mask[b].reshape(-1)] = flat[start : start + h * w]  # row-major, as MiniCPM flattens
            start += h * w
        return self.torch.from_numpy(out)

    def bbox_embedding(
        self,
        x_table: Any,
        y_table: Any,
        h_table: Any,
        w_table: Any,
        bbox: Any,
        *,
        combine: str,
        clip_shape: bool,
    ) -> Any:
        torch = self.torch
        if combine not in ("sum", "concat"):
            msg = f"LayoutLM sums (v1) or concatenates (v2, v3); combine={combine!r} has no HF form"
            raise Unsupported(msg)
        tables = [self._t(t) for t in (x_table, y_table, h_table, w_table)]
        rows = {t.shape[0] for t in tables}
        if len(rows) != 1:
            msg = "LayoutLM's four tables have max_2d_position_embeddings rows each"
            raise Unsupported(msg)
        (rows,) = rows
        boxes = self._t(bbox)
        flat = boxes.reshape(1, -1, boxes.shape[-1])
        names = (
            "x_position_embeddings",
            "y_position_embeddings",
            "h_position_embeddings",
            "w_position_embeddings",
        )
        if combine == "sum":
            from transformers import LayoutLMConfig
            from transformers.models.layoutlm.modeling_layoutlm import LayoutLMEmbeddings

            if clip_shape:
                msg = "LayoutLM (v1) does not clip heights and widths"
                raise Unsupported(msg)
            dim = tables[0].shape[1]
            config = LayoutLMConfig(
                vocab_size=1,
                hidden_size=dim,
                max_position_embeddings=flat.shape[1],
                type_vocab_size=1,
                max_2d_position_embeddings=rows,
                pad_token_id=0,
            )
            module = LayoutLMEmbeddings(config).to(tables[0].dtype).eval()
            module.LayerNorm = torch.nn.Identity()  # the bbox terms alone: LayerNorm off, other tables zero
            with torch.no_grad():
                for other in (
                    module.word_embeddings,
                    module.position_embeddings,
                    module.token_type_embeddings,
                ):
                    other.weight.zero_()
                for name, table in zip(names, tables, strict=True):
                    getattr(module, name).weight.copy_(table)
                zeros = torch.zeros(flat.shape[:2], dtype=torch.long)
                out = module(input_ids=zeros, bbox=flat, token_type_ids=zeros, position_ids=zeros)
        else:
            if clip_shape and rows != 1024:
                msg = f"LayoutLMv3 clips heights and widths to 0 .. 1023 whatever its tables; got {rows} rows"
                raise Unsupported(msg)
            if tables[0].shape[1] != tables[1].shape[1] or tables[2].shape[1] != tables[3].shape[1]:
                msg = "LayoutLMv2/v3 have one coordinate_size (x, y) and one shape_size (h, w)"
                raise Unsupported(msg)
            if clip_shape:
                from transformers import LayoutLMv3Config as Config
                from transformers.models.layoutlmv3.modeling_layoutlmv3 import (
                    LayoutLMv3TextEmbeddings as Embeddings,
                )

                method = "calculate_spatial_position_embeddings"
            else:  # LayoutLMv2 concatenates in _calc_spatial_position_embeddings, a private method only
                msg = "LayoutLMv2's unclipped concatenation is reachable only through a private method"
                raise Unsupported(msg)
            coordinate, shape = tables[0].shape[1], tables[2].shape[1]
            config = Config(
                vocab_size=1,
                hidden_size=4 * coordinate + 2 * shape,
                coordinate_size=coordinate,
                shape_size=shape,
                max_2d_position_embeddings=rows,
                num_attention_heads=1,
                pad_token_id=0,
            )
            module = Embeddings(config).to(tables[0].dtype)
            with torch.no_grad():
                for name, table in zip(names, tables, strict=True):
                    getattr(module, name).weight.copy_(table)
                out = getattr(module, method)(flat)
        return out.reshape(*boxes.shape[:-1], out.shape[-1])

    def row_col_embedding(self, row_table: Any, col_table: Any, rows: Any, cols: Any, *, combine: str) -> Any:
        torch = self.torch
        row_t, col_t = self._t(row_table), self._t(col_table)
        r, c = np.asarray(rows), np.asarray(cols)
        if not (np.issubdtype(r.dtype, np.integer) and np.issubdtype(c.dtype, np.integer)):
            msg = "Pix2Struct and DETR take float channels or sizes: the integer check has no HF form"
            raise Unsupported(msg)
        if r.shape != c.shape:
            msg = "rows and cols of different shapes have no HF form (one index pair per patch)"
            raise Unsupported(msg)
        if combine == "sum":
            from transformers import Pix2StructVisionConfig
            from transformers.models.pix2struct.modeling_pix2struct import Pix2StructVisionEmbeddings

            if row_t.shape != col_t.shape:
                msg = "Pix2Struct's row and column tables both have seq_len rows of hidden_size"
                raise Unsupported(msg)
            config = Pix2StructVisionConfig(
                hidden_size=row_t.shape[1], seq_len=row_t.shape[0], patch_embed_hidden_size=1
            )
            module = Pix2StructVisionEmbeddings(config).to(row_t.dtype).eval()
            with torch.no_grad():
                module.patch_projection.weight.zero_()  # patch projection 0: the output is Row[r] + Col[c]
                module.patch_projection.bias.zero_()
                module.row_embedder.weight.copy_(row_t)
                module.column_embedder.weight.copy_(col_t)
                # rows and columns ride in channels 0 and 1 as floats, as the processor puts them
                index = np.stack([r.reshape(-1, r.shape[-1]), c.reshape(-1, c.shape[-1])], -1)
                channels = self._t(index.astype(np.float64)).to(row_t.dtype)
                pixels = torch.zeros(
                    (*index.shape[:2], 1), dtype=row_t.dtype
                )  # the patch_embed_hidden_size 1
                out = module(torch.cat([channels, pixels], -1))
            return out.reshape(*r.shape, out.shape[-1])
        from transformers.models.detr.modeling_detr import DetrLearnedPositionEmbedding

        height, width = r.shape if r.ndim == 2 else (0, 0)
        grid = np.indices((height, width))
        if r.ndim != 2 or not (np.array_equal(r, grid[0]) and np.array_equal(c, grid[1])):
            msg = "DETR builds the whole grid: rows[i, j] = i and cols[i, j] = j only"
            raise Unsupported(msg)
        if row_t.shape != col_t.shape or row_t.shape[0] > 50:
            msg = "DETR's learned embedding has two tables of 50 rows of one width"
            raise Unsupported(msg)
        module = DetrLearnedPositionEmbedding(embedding_dim=row_t.shape[1]).to(row_t.dtype)
        with torch.no_grad():  # rows past the case's are never read (indices < H, W): zeros fill the 50
            module.row_embeddings.weight.zero_()
            module.column_embeddings.weight.zero_()
            module.row_embeddings.weight[: row_t.shape[0]] = row_t
            module.column_embeddings.weight[: col_t.shape[0]] = col_t
            pos = module((1, 1, height, width), "cpu", row_t.dtype)
        return pos[0].permute(1, 2, 0)

    # --- 2-D RoPE of vision encoders (rope_2d_cos_sin) -----------------------------------------------

    def _grid_ids(self, positions: np.ndarray, what: str) -> Any:
        """Row/column patch indices ``[2, ..., L]`` (floats holding integers) as a long tensor."""
        if not np.array_equal(positions, np.round(positions)):
            msg = f"{what} takes integer patch indices; got fractional positions"
            raise Unsupported(msg)
        return self.torch.from_numpy(positions.astype(np.int64))

    def _pixtral_cos_sin(self, positions: np.ndarray, head_dim: int, base: float) -> Any:
        from transformers import PixtralVisionConfig
        from transformers.models.pixtral.modeling_pixtral import PixtralVisionRotaryEmbedding

        config = PixtralVisionConfig(
            hidden_size=head_dim,
            num_attention_heads=1,
            head_dim=head_dim,
            rope_parameters={"rope_type": "axial", "rope_theta": base},
        )
        ids = self._grid_ids(positions, "PixtralVisionRotaryEmbedding")
        lead = ids.shape[1:]
        flat = ids.reshape(2, -1).T  # PixtralVisionModel's [L, 2] (h, w) ids
        cos, sin = PixtralVisionRotaryEmbedding(config)(self.torch.empty(0), flat)
        return cos.reshape(*lead, head_dim), sin.reshape(*lead, head_dim)

    def _gemma4_cos_sin(self, positions: np.ndarray, head_dim: int, base: float) -> Any:
        from transformers.models.gemma4.configuration_gemma4 import Gemma4VisionConfig
        from transformers.models.gemma4.modeling_gemma4 import Gemma4VisionRotaryEmbedding

        config = Gemma4VisionConfig(
            hidden_size=head_dim,
            num_attention_heads=1,
            head_dim=head_dim,
            rope_parameters={"rope_type": "axial", "rope_theta": base},
        )
        ids = self._grid_ids(positions, "Gemma4VisionRotaryEmbedding")
        lead = ids.shape[1:]
        batched = ids.reshape(2, -1, ids.shape[-1]).permute(1, 2, 0)  # pixel_position_ids [B, L, 2]
        cos, sin = Gemma4VisionRotaryEmbedding(config)(self.torch.empty(0), batched)
        return cos.reshape(*lead, head_dim), sin.reshape(*lead, head_dim)

    def _dinov3_cos_sin(self, positions: np.ndarray, head_dim: int, base: float) -> Any:
        name, config_name = _DINOV3_ROPE[self.dinov3_source]
        centres_of = _family_class(self.dinov3_source, "get_patches_center_coordinates")
        torch = self.torch
        rows = positions.reshape(2, -1, positions.shape[-1])
        module, tables = None, []
        for y, x in zip(rows[0], rows[1], strict=True):
            h, w = len(np.unique(y)), len(np.unique(x))
            centres = centres_of(h, w, dtype=torch.float64, device="cpu").numpy()
            if h * w != y.size or not np.array_equal(centres.T, np.stack([y, x])):
                msg = (
                    f"{name} computes the patch centres of an h x w grid itself "
                    "(its train-time shift/jitter/rescale is random); other coordinates cannot be given"
                )
                raise Unsupported(msg)
            if module is None:
                config = _family_class(self.dinov3_source, config_name, "configuration")(
                    hidden_size=head_dim, num_attention_heads=1, rope_theta=base, patch_size=1, image_size=1
                )
                module = _family_class(self.dinov3_source, name)(config).eval()  # eval: no augmentation
            tables.append(module(torch.zeros(1, 3, h, w)))  # pixel_values: only its size is read
        lead = positions.shape[1:]
        cos = torch.stack([t[0] for t in tables]).reshape(*lead, head_dim)
        return cos, torch.stack([t[1] for t in tables]).reshape(*lead, head_dim)

    def _llama4_cos_sin(self, positions: np.ndarray, head_dim: int, base: float) -> Any:
        from transformers.models.llama4.configuration_llama4 import Llama4VisionConfig
        from transformers.models.llama4.modeling_llama4 import Llama4VisionRotaryEmbedding

        ids = self._grid_ids(positions, "Llama4VisionRotaryEmbedding").numpy()
        cls = (ids[0] == -1) & (ids[1] == -1)
        if ids.size and (ids[:, ~cls].min(initial=0) < 0):
            msg = "Llama4VisionRotaryEmbedding has rows for patches (r, c) >= 0 and the cls token (-1, -1)"
            raise Unsupported(msg)
        side = int(ids.max(initial=0)) + 1  # the module's table covers a square side x side grid, then cls
        _check_table(side * side + 1, head_dim, "torch", "Llama4VisionRotaryEmbedding")
        config = Llama4VisionConfig(
            hidden_size=head_dim,
            num_attention_heads=1,
            image_size=side,
            patch_size=1,
            rope_parameters={"rope_type": "default", "rope_theta": base},
        )
        module = Llama4VisionRotaryEmbedding(config)
        table = module(self.torch.empty(0))[:, 0, :]  # [side**2 + 1, D/2] complex
        rows = np.where(cls, side * side, ids[0] * side + ids[1])  # row-major patches, the cls row last
        picked = table[self.torch.from_numpy(rows.reshape(-1))]
        lead = ids.shape[1:]
        # complex pair j rotates channels (2j, 2j + 1): the interleaved table repeats each value twice
        cos = picked.real.repeat_interleave(2, dim=-1).reshape(*lead, head_dim)
        return cos, picked.imag.repeat_interleave(2, dim=-1).reshape(*lead, head_dim)

    def _sam2_cos_sin(self, positions: np.ndarray, head_dim: int, base: float) -> Any:
        name, config_name = _SAM2_ROPE[self.sam2_rope_source]
        config = _family_class(self.sam2_rope_source, config_name, "configuration")(
            memory_attention_hidden_size=head_dim,
            memory_attention_num_attention_heads=1,
            memory_attention_downsample_rate=1,
        )
        config.rope_parameters = {"rope_type": "axial", "rope_theta": base}
        ids = self._grid_ids(positions, name)
        lead = ids.shape[1:]
        flat = ids.reshape(2, -1).flip(0).T  # precompute_positions' [N, 2] ids are (w, h)
        cos, sin = _family_class(self.sam2_rope_source, name)(config)(self.torch.empty(0), flat)
        return cos.reshape(*lead, head_dim), sin.reshape(*lead, head_dim)

    def _kimi_cos_sin(self, positions: np.ndarray, head_dim: int, base: float) -> Any:
        from transformers.models.kimi_k25.configuration_kimi_k25 import Kimi_K25VisionConfig
        from transformers.models.kimi_k25.modeling_kimi_k25 import Kimi_K25VisionRotaryEmbedding

        config = Kimi_K25VisionConfig(
            hidden_size=head_dim,
            num_attention_heads=1,
            rope_parameters={"rope_type": "axial", "rope_theta": base},
        )
        ids = self._grid_ids(positions, "Kimi_K25VisionRotaryEmbedding")
        lead = ids.shape[1:]
        flat = ids.reshape(2, -1).T  # get_vision_position_ids' [N, 2] (h, w) ids
        cos, sin = Kimi_K25VisionRotaryEmbedding(config)(self.torch.empty(0), flat)
        return cos.reshape(*lead, head_dim), sin.reshape(*lead, head_dim)

    def _vision_rotary_cos_sin(self, positions: np.ndarray, head_dim: int, base: float) -> Any:
        """``rope2d_source``'s own ``<Prefix>VisionRotaryEmbedding(config).forward(x, ids [N, 2])``,
        from a one-head config of ``head_dim`` channels with ``rope_theta = base``."""
        family = self.rope2d_source
        name, config_name, _ = _VISION_ROTARY[family]
        module = importlib.import_module(f"transformers.models.{family}.modeling_{family}")
        configs = importlib.import_module(f"transformers.models.{family}.configuration_{family}")
        config = getattr(configs, config_name)()
        for key, value in (("hidden_size", head_dim), ("embed_dim", head_dim), ("num_attention_heads", 1),
                           ("num_heads", 1), ("head_dim", head_dim)):  # fmt: skip
            if hasattr(config, key):
                setattr(config, key, value)
        config.rope_parameters = {**(getattr(config, "rope_parameters", None) or {}), "rope_theta": base}
        ids = self._grid_ids(positions, name)
        lead = ids.shape[1:]
        flat = ids.reshape(2, -1).T
        cos, sin = getattr(module, name)(config)(self.torch.empty(0), flat)
        return cos.reshape(*lead, head_dim), sin.reshape(*lead, head_dim)

    def rope_2d_cos_sin(
        self, positions: Any, head_dim: int, *, base: float, convention: str, dtype: str
    ) -> tuple[Any, Any]:
        _float32_only(dtype, "the HF vision rotary embeddings")
        copies = {  # a family's own copy: its builder, and the one convention it computes
            "rope2d_source": (self._vision_rotary_cos_sin, _VISION_ROTARY[self.rope2d_source][2]),
            "dinov3_source": (self._dinov3_cos_sin, "dinov3"),
            "sam2_rope_source": (self._sam2_cos_sin, "sam2"),
        }
        own = [copies[source] for source in copies if source in self.overrides]
        if own:
            method, computes = own[0]
            build = method if convention == computes else None
        else:
            build = {
                "pixtral": self._pixtral_cos_sin,
                "qwen2_vl": self._vision_rotary_cos_sin,
                "gemma4_vision": self._gemma4_cos_sin,
                "dinov3": self._dinov3_cos_sin,
                "llama4_vision": self._llama4_cos_sin,
                "sam2": self._sam2_cos_sin,
                "kimi_k25": self._kimi_cos_sin,
            }.get(convention)
        if build is None:
            msg = f"no HF vision rotary embedding is mapped for convention {convention!r}"
            raise Unsupported(msg)
        with self.torch.no_grad():
            return build(np.asarray(positions, dtype=np.float64), head_dim, float(base))

    # --- Transformer-XL relative attention (XLNet, the Conformers, Parakeet, Funnel, Gemma audio) ---------

    #: Which family's relative-attention code serves rel_sinusoid_table, rel_shift and
    #: rel_attention_scores: a variant per family sets those its code serves (the default column none).
    rel_table_source: str | None = None
    rel_shift_source: str | None = None
    rel_scores_source: str | None = None

    @property
    def rel_source(self) -> str | None:
        """The family of this column's relative-attention code (its sources all name it)."""
        return self.rel_table_source or self.rel_shift_source or self.rel_scores_source

    def _rel_module(self) -> Any:
        return importlib.import_module(f"transformers.models.{self.rel_source}.modeling_{self.rel_source}")

    def rel_sinusoid_table(
        self,
        qlen: int,
        dim: int,
        *,
        klen: int | None,
        convention: str,
        clamp_len: int | None,
        bi_data: bool,
        dtype: str,
    ) -> Any:
        _float32_only(dtype, f"{self.rel_source}'s relative sinusoid (float32 products)")
        source, klen = self.rel_source, qlen if klen is None else klen
        torch = self.torch
        if source == "xlnet":
            if convention not in ("xlnet", "xlnet_uni"):
                msg = f"XLNet's relative_positional_encoding has no {convention!r} distances"
                raise Unsupported(msg)
            from transformers import XLNetConfig
            from transformers.models.xlnet.modeling_xlnet import XLNetModel

            config = XLNetConfig(
                vocab_size=8,
                d_model=dim,
                n_layer=1,
                n_head=1,
                d_inner=4,
                bi_data=bi_data,
                clamp_len=-1 if clamp_len is None else clamp_len,
                attn_type="bi" if convention == "xlnet" else "uni",
            )
            with torch.no_grad():
                table = XLNetModel(config).relative_positional_encoding(qlen, klen)  # [P, 1 or 2, d]
            return table.permute(1, 0, 2) if bi_data else table[:, 0]
        if clamp_len is not None or bi_data:
            msg = f"{source}'s relative sinusoid has no clamp_len or bi_data (XLNet's options)"
            raise Unsupported(msg)
        if source == "funnel":
            if convention != "xlnet" or klen != qlen:
                msg = "Funnel's first block serves the xlnet distances L .. -(L - 1) only"
                raise Unsupported(msg)
            from transformers import FunnelConfig
            from transformers.models.funnel.modeling_funnel import FunnelAttentionStructure

            config = FunnelConfig(d_model=dim, n_head=1, d_head=dim, block_sizes=[1], block_repeats=[1])
            structure = FunnelAttentionStructure(config).eval()
            with torch.no_grad():
                return structure.get_position_embeds(qlen, torch.float32, "cpu")[0][0]  # block 0, no pooling
        if convention != "conformer":
            msg = f"{source}'s relative sinusoid has the conformer distances L - 1 .. -(L - 1) only"
            raise Unsupported(msg)
        if klen != qlen and source != "nemotron_asr_streaming":
            msg = f"{source}'s relative sinusoid spans its own sequence (klen = qlen) only"
            raise Unsupported(msg)
        hidden = torch.zeros(1, qlen, dim)
        module = self._rel_module()
        with torch.no_grad():
            if source == "nemotron_asr_streaming":
                config = module.NemotronAsrStreamingEncoderConfig(
                    hidden_size=dim, num_attention_heads=1, max_position_embeddings=max(2 * klen, 16)
                )
                embed = module.NemotronAsrStreamingEncoderRelPositionalEncoding(config)
                return embed(hidden, cached_frames=klen - qlen)[0]
            if source == "parakeet":
                config = module.ParakeetEncoderConfig(hidden_size=dim, num_attention_heads=1)
                return module.ParakeetEncoderRelPositionalEncoding(config)(hidden)[0]
            if source == "fastspeech2_conformer":
                config = module.FastSpeech2ConformerConfig(hidden_size=dim)
                embed = module.FastSpeech2ConformerRelPositionalEncoding(config, config.encoder_config).eval()
                return embed(hidden)[1][0]
            return self._conformer_embedding(module, dim, qlen)(hidden)[0]

    def _conformer_config(self, module: Any, width: int, heads: int, rows: int) -> Any:
        _, _, config_class, heads_key = _CONFORMER[self.rel_source]
        return getattr(module, config_class)(
            hidden_size=width,
            position_embeddings_type="relative",
            max_source_positions=max(rows, 8),
            **{heads_key: heads},
        )

    def _conformer_embedding(self, module: Any, dim: int, qlen: int) -> Any:
        embedding_class = _CONFORMER[self.rel_source][0]
        return getattr(module, embedding_class)(self._conformer_config(module, dim, 1, qlen))

    def _conformer_terms(
        self, q: Any, k: Any, r: Any, u: Any, v: Any, scale: float | None
    ) -> tuple[Any, Any]:
        """``_apply_relative_position_encoding(module, q, k, R)`` of a relative-attention module whose
        ``linear_pos`` is the identity (R reaches it as its [B, P, H D] table) and biases the case's."""
        torch = self.torch
        batch, heads, _, width = q.shape
        module = self._rel_module()
        config = self._conformer_config(module, heads * width, heads, r.shape[-2])
        attention = getattr(module, _CONFORMER[self.rel_source][1])(config).to(q.dtype)
        with torch.no_grad():
            attention.linear_pos.weight.copy_(torch.eye(heads * width, dtype=q.dtype))
            attention.pos_bias_u.copy_(u)
            attention.pos_bias_v.copy_(v)
        if scale is not None:
            attention.scaling = scale  # the module's own logit scale (head_size**-0.5), the case's here
        table = r.permute(0, 2, 1, 3).reshape(batch, r.shape[-2], heads * width)  # [B, P, H D]
        with torch.no_grad():
            query, bd = module._apply_relative_position_encoding(attention, q, k, table)
        return query, bd

    @staticmethod
    def _head_bias(bias: Any, heads: int, width: int, dtype: Any, torch: Any) -> Any:
        """A ``[..., D]`` bias as the families hold it, one row per head ``[H, D]``."""
        if bias is None:
            return torch.zeros(heads, width, dtype=dtype)
        bias = torch.from_numpy(np.array(bias))
        if bias.ndim > 2:
            msg = "the families hold u and v per head ([H, D]); this case's vary by batch"
            raise Unsupported(msg)
        return bias.to(dtype).broadcast_to(heads, width)

    def rel_attention_scores(
        self,
        q: Any,
        k: Any,
        r: Any,
        *,
        u: Any,
        v: Any,
        convention: str,
        shift: int,
        scale: float | None,
    ) -> Any:
        if self.rel_source not in _CONFORMER:
            msg = f"{self.rel_source}'s attention returns softmax weights only; its logits are not reachable"
            raise Unsupported(msg)
        if convention != "transformer_xl":
            msg = f"{self.rel_source}'s shift is the transformer_xl (left-pad) trick"
            raise Unsupported(msg)
        torch = self.torch
        qt, kt, rt = self._t(q), self._t(k), self._t(r)
        given = torch.broadcast_shapes(qt.shape[:-2], kt.shape[:-2], rt.shape[:-2])
        lead = (1, 1) if not given else ((1, *given) if len(given) == 1 else given)  # [B, H]
        heads, width = lead[-1], qt.shape[-1]
        batch = math.prod(lead[:-1])

        def four(t: Any) -> Any:
            return t.broadcast_to((*lead, *t.shape[-2:])).reshape(batch, heads, *t.shape[-2:])

        bu = self._head_bias(u, heads, width, qt.dtype, torch)
        bv = self._head_bias(v, heads, width, qt.dtype, torch)
        query, bd = self._conformer_terms(four(qt), four(kt), four(rt), bu, bv, scale)
        s = width**-0.5 if scale is None else scale
        scores = torch.matmul(query, four(kt).transpose(2, 3)) * s + bd  # eager_attention_forward's q k^T
        return scores.reshape(*given, *scores.shape[-2:])

    def rel_shift(self, x: Any, *, klen: int | None, convention: str, shift: int) -> Any:
        source, torch = self.rel_source, self.torch
        xt = self._t(x)
        *lead, qn, pn = xt.shape
        own = {"xlnet": "xlnet", "funnel": "xlnet", "gemma3n": "gemma3n", "gemma4": "gemma3n"}
        if own.get(source, "transformer_xl") != convention:
            msg = f"{source}'s shift is the {own.get(source, 'transformer_xl')} trick"
            raise Unsupported(msg)
        if shift != 1 and source != "funnel":
            msg = f"{source}'s shift drops one row (Funnel's shift 2 is Funnel's own)"
            raise Unsupported(msg)
        flat = xt.reshape(-1, 1, qn, pn)
        with torch.no_grad():
            if source == "xlnet":
                from transformers.models.xlnet.modeling_xlnet import XLNetRelativeAttention

                out = XLNetRelativeAttention.rel_shift_bnij(flat, klen=pn - 1 if klen is None else klen)
            elif source == "funnel":
                from transformers.models.funnel.modeling_funnel import _relative_shift_gather

                out = _relative_shift_gather(flat, pn - shift if klen is None else klen, shift)
            elif source in ("gemma3n", "gemma4"):
                out = self._gemma_shift(flat, pn - 1 if klen is None else klen)
            elif source == "fastspeech2_conformer":
                if klen != pn // 2 + 1:
                    msg = "FastSpeech2-Conformer's shift keeps P // 2 + 1 keys (its Conformer table)"
                    raise Unsupported(msg)
                module = self._rel_module()
                config = module.FastSpeech2ConformerConfig(hidden_size=4)
                attention = module.FastSpeech2ConformerAttention(config, config.encoder_config)
                out = attention.shift_relative_position_tensor(flat)
            elif source in ("parakeet", "nemotron_asr_streaming"):
                module = self._rel_module()
                prefix = "Parakeet" if source == "parakeet" else "NemotronAsrStreaming"
                config = getattr(module, f"{prefix}EncoderConfig")(hidden_size=4, num_attention_heads=1)
                attention = getattr(module, f"{prefix}EncoderAttention")(config, layer_idx=0)
                out = attention._rel_shift(flat)[..., : pn if klen is None else klen]  # forward's trim
            else:  # the Conformers: the shift inside _apply_relative_position_encoding, on q = x, R = I
                keys = pn if klen is None else klen
                eye = torch.eye(pn, dtype=flat.dtype).reshape(1, 1, pn, pn)
                zero = torch.zeros(flat.shape[0], 1, pn, dtype=flat.dtype)
                _, out = self._conformer_terms(
                    flat,
                    torch.zeros(flat.shape[0], 1, keys, pn, dtype=flat.dtype),
                    eye.expand(flat.shape[0], 1, pn, pn),
                    zero[0],
                    zero[0],
                    1.0,
                )
        return out.reshape(*lead, qn, out.shape[-1])

    def _gemma_shift(self, flat: Any, klen: int) -> Any:
        """Gemma's block shift on ``[B, 1, 1, Q, P]`` (one block of Q queries), key context ``klen``."""
        module = self._rel_module()
        blocks = flat.reshape(flat.shape[0], 1, 1, *flat.shape[-2:])
        if self.rel_source == "gemma3n":
            config = module.Gemma3nAudioConfig(hidden_size=8, conf_num_attention_heads=1)
            embed = module.Gemma3nAudioRelativePositionEmbedding(config)
            qn, pn = flat.shape[-2:]
            return embed._relative_shift(blocks, blocks.shape[0], 1, 1, qn, klen, pn)[:, 0, 0]
        # Gemma 4 reads its context size chunk + left - 1 + right: chunk 1, left klen, right 0
        config = module.Gemma4AudioConfig(
            hidden_size=8,
            num_attention_heads=1,
            attention_chunk_size=1,
            attention_context_left=klen,
            attention_context_right=0,
        )
        return module.Gemma4AudioAttention(config, 0)._rel_shift(blocks)[:, 0, 0]

    # --- DeBERTa disentangled attention (log buckets; the rows c2p and p2c gather) ----------------------

    #: Which family serves deberta_bucket and deberta_relative_index (v1 has no buckets: its variant
    #: overrides only the index source).
    deberta_source = "deberta_v2"
    deberta_index_source = "deberta_v2"

    def _deberta_module(self, family: str) -> Any:
        return importlib.import_module(f"transformers.models.{family}.modeling_{family}")

    def deberta_bucket(
        self, relative: Any, *, position_buckets: int, max_relative_positions: int, arithmetic: str
    ) -> Any:
        if arithmetic != "float32":
            msg = "make_log_bucket_position evaluates the log term in float32"
            raise Unsupported(msg)
        module = self._deberta_module(self.deberta_source)
        with self.torch.no_grad():
            out = module.make_log_bucket_position(self._t(relative), position_buckets, max_relative_positions)
        return out.to(self.torch.int64)

    def _arange_length(self, positions: np.ndarray, name: str) -> int:
        if positions.ndim != 1 or not np.array_equal(positions, np.arange(positions.shape[0])):
            msg = f"DeBERTa's attention numbers {name} 0 .. L - 1 (one sequence); got other positions"
            raise Unsupported(msg)
        return int(positions.shape[0])

    def deberta_relative_index(
        self,
        q_positions: Any,
        k_positions: Any,
        *,
        position_buckets: int,
        max_relative_positions: int,
        term: str,
        arithmetic: str,
    ) -> Any:
        if arithmetic != "float32" and position_buckets > 0:
            msg = "DeBERTa-v2's buckets evaluate the log term in float32"
            raise Unsupported(msg)
        family = self.deberta_index_source
        if family == "deberta" and position_buckets > 0:
            msg = "DeBERTa v1 has no position buckets"
            raise Unsupported(msg)
        lq = self._arange_length(np.asarray(q_positions), "queries")
        lk = self._arange_length(np.asarray(k_positions), "keys")
        torch = self.torch
        module = self._deberta_module(family)
        common = {
            "hidden_size": 1,
            "num_attention_heads": 1,
            "intermediate_size": 4,
            "relative_attention": True,
            "max_relative_positions": max_relative_positions,
            "pos_att_type": [term],
        }
        if family == "deberta":
            from transformers import DebertaConfig

            config = DebertaConfig(**common)
        elif family == "sew_d":
            from transformers import SEWDConfig

            config = SEWDConfig(**common, position_buckets=position_buckets, share_att_key=False)
        else:
            from transformers import DebertaV2Config

            config = DebertaV2Config(**common, position_buckets=position_buckets, share_att_key=False)
        attention = module.DisentangledSelfAttention(config).eval()
        span = attention.pos_ebd_size if family != "deberta" else max_relative_positions
        rows = torch.arange(2 * span, dtype=torch.float32)[:, None]  # row s holds s
        with torch.no_grad():
            for name in ("pos_key_proj", "pos_query_proj", "pos_proj", "pos_q_proj"):
                proj = getattr(attention, name, None)
                if proj is not None:  # the identity: position rows reach the gather unchanged
                    proj.weight.fill_(1.0)
                    if proj.bias is not None:
                        proj.bias.zero_()
            if family == "deberta":  # [batch, heads, L, d]; the encoder's relative_pos (get_rel_pos)
                q, k = torch.ones(1, 1, lq, 1), torch.ones(1, 1, lk, 1)
                relative = module.build_relative_position(q, k)
                score = attention.disentangled_att_bias(q, k, relative, rows, 1)
            else:  # [batch * heads, L, d]; relative_pos None: the module builds its own
                q, k = torch.ones(1, lq, 1), torch.ones(1, lk, 1)
                score = attention.disentangled_attention_bias(q, k, None, rows, 1)
        # rows < 2**21: int32 halves the reply (v2's p2c of 400 keys is a [400, 400] table)
        return torch.round(score.reshape(score.shape[-2:])).to(torch.int32)


class _ShawMethods:
    """``shaw_index`` and ``shaw_table_rows`` read back from a speech family's own relative index.

    Only the Shaw variants (``shaw_source`` set) have these methods: the default column has no
    Shaw code (v5 removed BERT's ``relative_key``), so it declares none.
    """

    torch: Any
    shaw_source: str

    def _shaw_convention(self, convention: str) -> None:
        if convention != _SHAW_CONVENTION[self.shaw_source]:
            msg = f"{self.shaw_source} indexes its table the {_SHAW_CONVENTION[self.shaw_source]!r} way"
            raise Unsupported(msg)

    def _granite(self, context: int, offset: int) -> Any:
        """The family's encoder config and encoder class for one block of ``context`` frames."""
        if self.shaw_source == "granite_speech5":
            from transformers.models.granite_speech5.configuration_granite_speech5 import (
                GraniteSpeech5EncoderConfig,
            )

            config = GraniteSpeech5EncoderConfig(
                context_size=context,
                max_position_embeddings=offset,
                hidden_size=8,
                intermediate_size=8,
                num_hidden_layers=1,
                num_attention_heads=1,
                num_key_value_heads=1,
                head_dim=8,
            )
            return _module("granite_speech5").GraniteSpeech5Encoder(config)
        if self.shaw_source == "granite_speech_plus":
            from transformers.models.granite_speech_plus.configuration_granite_speech_plus import (
                GraniteSpeechPlusEncoderConfig as Config,
            )

            encoder = _module("granite_speech_plus").GraniteSpeechPlusCTCEncoder
        else:
            from transformers.models.granite_speech.configuration_granite_speech import (
                GraniteSpeechEncoderConfig as Config,
            )

            encoder = _module("granite_speech").GraniteSpeechCTCEncoder
        config = Config(
            context_size=context,
            max_pos_emb=offset,
            input_dim=4,
            num_layers=1,
            hidden_dim=8,
            num_heads=1,
            dim_head=8,
            output_dim=4,
        )
        return encoder(config)

    def _shaw_map(self, max_distance: Any, length: int) -> np.ndarray:
        """HF's index of the self-attention of ``length`` frames, ``[length, length]`` (query i, key j)."""
        torch = self.torch
        if self.shaw_source == "speecht5":  # SpeechT5RelativePositionalEncoding.forward: pe_k[index]
            module = _module("speecht5").SpeechT5RelativePositionalEncoding(1, max_length=max_distance)
            rows = module.pe_k.num_embeddings
            module.pe_k.weight.copy_(torch.arange(rows, dtype=torch.float32)[:, None])  # row r holds r
            return module(torch.zeros(1, length, 1))[..., 0].numpy().astype(np.int64)
        if self.shaw_source == "vits":  # _get_relative_embeddings, then the skew to absolute positions
            from transformers import VitsConfig

            config = VitsConfig(hidden_size=1, num_attention_heads=1, window_size=max_distance)
            attention = _module("vits").VitsAttention(config)
            rows = attention.emb_rel_k.shape[1]
            attention.emb_rel_k.copy_(torch.arange(1, rows + 1, dtype=torch.float32)[None, :, None])
            embeddings = attention._get_relative_embeddings(attention.emb_rel_k, length)  # [1, 2n - 1, 1]
            # q . E^T with a query of 1 in its one channel is E itself, in every query row
            logits = embeddings[:, :, 0][:, None, :].expand(1, length, 2 * length - 1)
            value = attention._relative_position_to_absolute_position(logits)[0].numpy().astype(np.int64)
            return np.where(value > 0, value - 1, rows)  # 0: a padded zero row, canonical row 2w + 1
        context, offset = max_distance
        if length > context:
            msg = (
                f"{self.shaw_source} attends within blocks of context_size={context} frames: relative"
                f" positions beyond +-{context - 1} never meet its index (its clamp never binds)"
            )
            raise Unsupported(msg)
        encoder = self._granite(context, offset)
        return encoder.attention_dists[:length, :length].numpy().astype(np.int64)

    def shaw_index(self, relative: Any, *, max_distance: Any, convention: str) -> Any:
        self._shaw_convention(convention)
        relative = np.asarray(relative)
        if not np.issubdtype(relative.dtype, np.integer):
            msg = "the relative positions are the adapter's format; HF builds them from arange"
            raise Unsupported(msg)
        limit = tuple(max_distance) if isinstance(max_distance, list) else max_distance
        length = int(np.abs(relative).max()) + 1 if relative.size else 1
        if length > MAX_SHAW_LENGTH:
            msg = f"{self.shaw_source} builds the whole [n, n] index; n = {length} is too large here"
            raise Unsupported(msg)
        with self.torch.no_grad():
            index = self._shaw_map(limit, length)
        r = relative.astype(np.int64)
        # key j - query i = r: (i, j) = (0, r) for r >= 0, (-r, 0) for r < 0
        return self.torch.from_numpy(index[np.maximum(-r, 0), np.maximum(r, 0)])

    def shaw_table_rows(self, max_distance: Any, *, convention: str) -> Any:
        self._shaw_convention(convention)
        limit = tuple(max_distance) if isinstance(max_distance, list) else max_distance
        with self.torch.no_grad():
            if self.shaw_source == "speecht5":
                return (
                    _module("speecht5")
                    .SpeechT5RelativePositionalEncoding(1, max_length=limit)
                    .pe_k.num_embeddings
                )
            if self.shaw_source == "vits":
                from transformers import VitsConfig

                attention = _module("vits").VitsAttention(
                    VitsConfig(hidden_size=1, num_attention_heads=1, window_size=limit)
                )
                return attention.emb_rel_k.shape[1] + 1  # and the zero row its padding stands for
            encoder = self._granite(*limit)
            layer = encoder.layers[0]
            attention = layer.self_attn if self.shaw_source == "granite_speech5" else layer.attn
            return attention.rel_pos_emb.num_embeddings


#: Each source attribute a variant overrides -> the canonical functions that read it.  A variant
#: declares only those: its column is that family's own code, and everything else (Llama's RoPE,
#: BLOOM's ALiBi, ...) stays in the default column instead of being counted again under the family.
_SOURCE_FUNCTIONS = {
    "alibi_source": ("alibi_slopes", "alibi_bias", "alibi_bias_from_heads"),
    "fairseq_source": ("sinusoidal",),
    "xlm_source": ("sinusoidal",),
    "marian_source": ("sinusoidal",),
    "t2t_source": ("sinusoidal",),
    "patchtst_source": ("sinusoidal",),
    "shaw_source": ("shaw_index", "shaw_table_rows"),
    "rope_source": ("rope_frequencies", "rope_cos_sin", "apply_rope", "rope", "rope_from_base", "rope_heads"),
    "window_source": ("window_bias",),
    "cls_source": ("window_bias",),
    "swinv2_source": ("swinv2_log_coords",),
    "decomposed_source": ("decomposed_rel_pos",),
    "detr_sine_source": ("detr_sine_2d",),
    "coord_sine_source": ("detr_coord_sine",),
    "sincos_source": ("sincos_2d",),
    "rope2d_source": ("rope_2d_cos_sin",),
    "dinov3_source": ("rope_2d_cos_sin",),
    "sam2_rope_source": ("rope_2d_cos_sin",),
    "fourier_source": ("fourier_features",),
    "navit_source": ("navit_position_ids",),
    "mrope_ids_source": ("mrope_position_ids",),
    "rel_table_source": ("rel_sinusoid_table",),
    "rel_shift_source": ("rel_shift",),
    "rel_scores_source": ("rel_attention_scores",),
    "deberta_source": ("deberta_bucket",),
    "deberta_index_source": ("deberta_relative_index",),
    "t5_source": ("t5_bucket", "t5_bias"),
    "t5_bucket_source": ("t5_bucket",),
    "layout_source": ("t5_layout_bias",),
    "udop_source": ("t5_udop_bias",),
    "gated_source": ("t5_gated_bias",),
    "stream_source": ("t5_stream_buckets",),
    "segment_source": ("t5_segment_bias",),
    "attn_scale_source": ("llama4_attn_scale",),
    "mrope_source": ("mrope_angles",),
    "learned_source": ("learned",),
    "token_positions_source": ("token_positions",),
    "patch_source": ("patch_grid_resize",),
}


#: Variant -> functions whose invalid-input cases its family's code does not refuse (float positions
#: are truncated by ``.int()`` / ``.long()``, not rejected): those cases are skipped for that column.
_UNCHECKED_INPUTS = {
    "layoutlmv3": ("t5_layout_bias",),
    "prophetnet": ("t5_bucket", "t5_stream_buckets"),
    "cpmant": ("t5_bucket",),
}

#: Sinusoid sources whose tables are float32 torch products (XLM's and Marian's are float64 NumPy).
_TORCH_VASWANI = ("speecht5", "florence2")


#: Canonical functions only a family's variant serves -> the source attribute that must be set.
def _variant(name: str, doc: str, **sources: str) -> type[TransformersAdapter]:
    """A subclass that takes one family from another HF implementation, declaring only the
    functions that family's code serves (:data:`_SOURCE_FUNCTIONS`; a RoPE row: :func:`_rope_functions`),
    and for a sinusoid or Shaw source only the conventions that family's copy implements."""
    functions = tuple(dict.fromkeys(f for source in sources for f in _SOURCE_FUNCTIONS[source]))
    dtypes = dict(TransformersAdapter.capabilities.dtypes)
    rope: dict[str, Any] = {}
    if "rope_source" in sources:
        row = ROPE_FAMILIES[sources["rope_source"]]
        served = _rope_functions(row)
        functions = tuple(f for f in functions if f not in _SOURCE_FUNCTIONS["rope_source"] or f in served)
        rope = {"rope_tables": (sources["rope_source"],), "rope_applies": (sources["rope_source"],)}
        if row.float32_apply:
            dtypes["apply_rope"] = ["float32"]
    changes: dict[str, Any] = {"functions": functions, "dtypes": dtypes}
    conventions = tuple(_SINUSOID_SOURCES[s] for s in sources if s in _SINUSOID_SOURCES)
    if conventions:
        changes["sinusoidal_conventions"] = conventions
        if sources.get("xlm_source") in _TORCH_VASWANI:
            changes["phase"] = {"default": "product", "sinusoidal:marian": "exact"}
        if sources.get("marian_source") in _TORCH_MARIAN:
            changes["phase"] = {"default": "product", "sinusoidal:vaswani": "exact"}
    if "shaw_source" in sources:
        changes["shaw_conventions"] = (_SHAW_CONVENTION[sources["shaw_source"]],)
        # the speech models take max_distance as config values: a bad one is no error of theirs to raise
        changes["invalid_inputs"] = {
            **TransformersAdapter.capabilities.invalid_inputs,
            "shaw_index": False,
            "shaw_table_rows": False,
        }
    if name in LEARNED_FAMILIES:  # the family's own offset (OPT's 2, RoBERTa's padding_idx + 1, plain)
        changes["learned_offsets"] = (LEARNED_FAMILIES[name].offset,)
    unchecked = dict.fromkeys(_UNCHECKED_INPUTS.get(name, ()), False)
    if unchecked:  # float positions truncated by .int() / .long(), not rejected
        changes["invalid_inputs"] = {
            **changes.get("invalid_inputs", TransformersAdapter.capabilities.invalid_inputs),
            **unchecked,
        }
    capabilities = dataclasses.replace(TransformersAdapter.capabilities, **changes)
    attributes = {
        "__doc__": doc,
        "__module__": __name__,
        "name": f"transformers:{name}",
        "capabilities": capabilities,
        "overrides": tuple(sources),
        **sources,
        **rope,
    }
    bases = (_ShawMethods, TransformersAdapter) if "shaw_source" in sources else (TransformersAdapter,)
    return type(f"Transformers_{name}", bases, attributes)


def _rope_functions(row: RopeFamily) -> tuple[str, ...]:
    """The canonical RoPE functions a family's own code serves: its rotation and table always, the
    given-frequency calls only when ``forward`` reads ``inv_freq``, ``rope_frequencies`` only when
    the rotary class defines its own ``compute_default_rope_parameters``."""
    given = ("rope_cos_sin", "rope", "rope_heads") if row.reads_inv_freq else ()
    return ("apply_rope", "rope_from_base", *given, *(("rope_frequencies",) if row.own_defaults else ()))


#: The model families with positional code of their own (or a copy of another's), one row each:
#: ``(family, what its column runs, {source attribute: value})``.  A family may have several rows
#: (a text and a vision scheme, say): :func:`_variants` unites them into one variant.
_FAMILY_SOURCES: list[tuple[str, str, dict[str, str]]] = [
    ("mpt", "ALiBi from MPT's build_mpt_alibi_tensor (has alibi_bias_max).", {"alibi_source": "mpt"}),
    ("m2m_100", "The fairseq table from M2M100 (NLLB).", {"fairseq_source": "m2m100"}),
    ("fsmt", "The fairseq table from FSMT.", {"fairseq_source": "fsmt"}),
    ("donut", "Swin window bias from DonutSwinSelfAttention's table and index.", {"window_source": "donut"}),
    ("maskformer", "Swin window bias from MaskFormerSwinSelfAttention.", {"window_source": "maskformer"}),
    ("data2vec", "BEiT window bias from Data2VecVisionRelativePositionBias.", {"cls_source": "data2vec"}),
    ("swin2sr", "Swin-V2 coordinates from Swin2SRSelfAttention.", {"swinv2_source": "swin2sr"}),
    (
        "vitdet",
        "Decomposed terms from ViTDet's add_decomposed_relative_positions.",
        {"decomposed_source": "vitdet"},
    ),
    ("sam_hq", "Decomposed terms from SamHQVisionAttention.", {"decomposed_source": "sam_hq"}),
    ("clap", "Swin window bias from CLAP's audio ClapAudioSelfAttention.", {"window_source": "clap"}),
    ("got_ocr2", "Decomposed terms from GotOcr2VisionAttention.", {"decomposed_source": "got_ocr2"}),
    (
        "seggpt",
        "Decomposed terms from SegGptAttention.add_decomposed_rel_pos.",
        {"decomposed_source": "seggpt"},
    ),
    (
        "conditional_detr",
        "DETR's sine from Conditional DETR's copy.",
        {"detr_sine_source": "conditional_detr"},
    ),
    (
        "dab_detr",
        "DETR's sine (separate temperatures; float32) and coordinate sinusoid from DAB-DETR.",
        {"detr_sine_source": "dab_detr", "coord_sine_source": "dab_detr"},
    ),
    *(
        (
            name,
            f"DETR's sine (float32 cumsum) and coordinate sinusoid from {family}.",
            {"detr_sine_source": name, "coord_sine_source": name},
        )
        for name, family in (("grounding_dino", "Grounding DINO"), ("mm_grounding_dino", "MM-Grounding-DINO"))
    ),
    *(
        (name, f"DETR's sine from {family}'s {_DETR_SINE_CLASS[name]}.", {"detr_sine_source": name})
        for name, family in (
            ("table_transformer", "Table Transformer"),
            ("maskformer", "MaskFormer"),
            ("mask2former", "Mask2Former"),
            ("oneformer", "OneFormer"),
            ("sam2", "SAM2 (neck)"),
            ("edgetam", "EdgeTAM"),
            ("sam3", "SAM3"),
            ("sam3_lite_text", "SAM3-LiteText"),
            ("sam2_video", "SAM2-Video"),
            ("edgetam_video", "EdgeTAM-Video"),
            ("sam3_tracker_video", "SAM3-Tracker-Video"),
        )
    ),
    *(
        (name, f"The coordinate sinusoid from {family}'s copy.", {"coord_sine_source": name})
        for name, family in (("lw_detr", "LW-DETR"), ("rf_detr", "RF-DETR"))
    ),
    *(
        (
            name,
            f"The 2-D sincos from {family}'s build_2d_sinusoidal_position_embedding.",
            {"sincos_source": name},
        )
        for name, family in (
            ("rt_detr_v2", "RT-DETR-v2"),
            ("d_fine", "D-FINE"),
            ("deimv2", "DEIMv2"),
            ("pp_doclayout_v3", "PP-DocLayout-V3"),
            ("pp_doclayout_v4", "PP-DocLayout-V4"),
            ("aimv2", "AIMv2"),
            ("granite_docling", "Granite-Docling"),
        )
    ),
    *(
        (family, f"The 2-D vision RoPE table of {row[0]}.", {"rope2d_source": family})
        for family, row in _VISION_ROTARY.items()
        if family != TransformersAdapter.rope2d_source
    ),
    *(
        (family, f"DINOv3's patch-centre RoPE from {row[0]}.", {"dinov3_source": family})
        for family, row in _DINOV3_ROPE.items()
        if family != TransformersAdapter.dinov3_source
    ),
    *(
        (family, f"SAM 2's memory-attention RoPE from {row[0]}.", {"sam2_rope_source": family})
        for family, row in _SAM2_ROPE.items()
        if family != TransformersAdapter.sam2_rope_source
    ),
    *(
        (family, f"SAM's random Fourier features from {name}.", {"fourier_source": family})
        for family, name in _FOURIER.items()
        if family != TransformersAdapter.fourier_source
    ),
    # --- DeBERTa disentangled attention (the default column is DeBERTa-v2's) ---
    (
        "deberta",
        "DeBERTa v1's disentangled_att_bias (no buckets; span min(max(Lq, Lk), M)).",
        {"deberta_index_source": "deberta"},
    ),
    (
        "sew_d",
        "SEW-D's copies of make_log_bucket_position and disentangled_attention_bias.",
        {"deberta_source": "sew_d", "deberta_index_source": "sew_d"},
    ),
    *(
        (family, f"NaViT fractional buckets from {row[0]}.", {"navit_source": family})
        for family, row in _NAVIT.items()
        if family != TransformersAdapter.navit_source
    ),
    # --- T5-bucket copies and variants ---
    *(
        (name, f"T5's bucket function and compute_bias from {family}'s {cls}.", {"t5_source": name})
        for name, family, cls in (
            ("mt5", "mT5", "MT5Attention"),
            ("longt5", "LongT5", "LongT5Attention"),
            ("umt5", "UMT5", "UMT5Attention (per-layer, config-bound)"),
            ("pix2struct", "Pix2Struct", "Pix2StructTextAttention (causal)"),
            ("switch_transformers", "Switch Transformers", "SwitchTransformersAttention"),
            ("pop2piano", "Pop2Piano", "Pop2PianoAttention"),
        )
    ),
    (
        "mpnet",
        "T5's bidirectional buckets and bias from MPNetEncoder (max_distance 128).",
        {"t5_source": "mpnet"},
    ),
    (
        "udop",
        "UDOP: UdopAttention's T5 copy and the aggregated 1-D, horizontal and vertical biases.",
        {"t5_source": "udop", "udop_source": "udop"},
    ),
    *(
        (
            name,
            f"{family}: its relative_position_bucket, the 1-D bias and the 1-D + 2-D encoder bias.",
            {"t5_source": name, "layout_source": name},
        )
        for name, family in (("layoutlmv2", "LayoutLMv2"), ("layoutlmv3", "LayoutLMv3"))
    ),
    (
        "pp_doclayout_v2",
        "PP-DocLayout-V2: the 2-D sincos copy, and its reading-order encoder's T5 buckets and 1-D bias.",
        {
            "sincos_source": "pp_doclayout_v2",
            "t5_source": "pp_doclayout_v2",
            "layout_source": "pp_doclayout_v2",
        },
    ),
    (
        "wavlm",
        "WavLM: its bidirectional bucket function, compute_bias and the gated bias of WavLMAttention.",
        {"t5_source": "wavlm", "gated_source": "wavlm"},
    ),
    (
        "prophetnet",
        "ProphetNet: compute_relative_buckets and the main / predict stream buckets.",
        {"t5_bucket_source": "prophetnet", "stream_source": "prophetnet"},
    ),
    (
        "cpmant",
        "CPM-Ant: its int32 bucket copy and CpmAntSegmentPositionEmbedding (one segment: the T5 bias).",
        {"t5_source": "cpmant", "segment_source": "cpmant"},
    ),
    # --- ALiBi, attention scale and M-RoPE variants ---
    (
        "falcon",
        "ALiBi from Falcon's build_alibi_tensor (BLOOM's slopes rounded to bfloat16 before the product).",
        {"alibi_source": "falcon"},
    ),
    (
        "ministral3",
        "The 'mistral' query temperature from Ministral 3's get_llama_4_attn_scale (float32).",
        {"attn_scale_source": "ministral3"},
    ),
    (
        "mistral4",
        "The 'mistral' query temperature from Mistral 4's get_llama_4_attn_scale (float32).",
        {"attn_scale_source": "mistral4"},
    ),
    (
        "beam",
        "The 'beam' NoPE query temperature from Beam's compute_attention_scaling (float32).",
        {"attn_scale_source": "beam"},
    ),
    (
        "ernie4_5_vl_moe",
        "M-RoPE angles ('ernie' order) from Ernie4_5_VLMoeTextRotaryEmbedding.recomposition_frequencies.",
        {"mrope_source": "ernie4_5_vl_moe"},
    ),
    (
        "hunyuan_vl",
        "XD-RoPE angles (chunked, four components) from HunYuanVLRotaryEmbedding.recomposition_frequencies.",
        {"mrope_source": "hunyuan_vl"},
    ),
    # --- learned absolute tables, token positions and patch-grid resizes (the learned zoo) ---
    *(
        (
            family,
            f"{family}'s own "
            + ", ".join(
                f"{name} ({kind})"
                for kind, name in zip(
                    ("learned", "token_positions", "patch"),
                    (row.learned, row.token_positions, row.patch),
                    strict=True,
                )
                if name
            )
            + ".",
            {
                source: family
                for source, name in (
                    ("learned_source", row.learned),
                    ("token_positions_source", row.token_positions),
                    ("patch_source", row.patch),
                )
                if name
            },
        )
        for family, row in LEARNED_FAMILIES.items()
    ),
    (
        "glm46v",
        "M-RoPE position ids from Glm46VModel.get_rope_index (text and images).",
        {"mrope_ids_source": "glm46v"},
    ),
    ("dpt", "DPT's _resize_pos_embed (bilinear, half-pixel) of its ViT grid.", {"patch_source": "dpt"}),
    (
        "cosmos3_omni",
        "M-RoPE position ids from Cosmos3OmniModel.get_rope_index (text and images).",
        {"mrope_ids_source": "cosmos3_omni"},
    ),
    # --- Shaw variants and sinusoid variants (issue 26) ---
    (
        "speecht5",
        "SpeechT5's mirrored Shaw index (SpeechT5RelativePositionalEncoding) and its fairseq table.",
        {"shaw_source": "speecht5", "fairseq_source": "speecht5"},
    ),
    ("vits", "VITS's windowed Shaw index, read through its skew (VitsAttention).", {"shaw_source": "vits"}),
    *(
        (name, f"The block-local Shaw index of {family}'s attention_dists.", {"shaw_source": name})
        for name, family in (
            ("granite_speech", "Granite Speech"),
            ("granite_speech_plus", "Granite Speech Plus"),
            ("granite_speech5", "Granite Speech 5"),
        )
    ),
    ("musicgen", "MusicGen's [cos | sin] tensor2tensor table.", {"t2t_source": "musicgen"}),
    (
        "musicgen_melody",
        "MusicGen-Melody's [cos | sin] tensor2tensor table.",
        {"t2t_source": "musicgen_melody"},
    ),
    ("patchtst", "PatchTST's standardised sincos table.", {"patchtst_source": "patchtst"}),
    ("patchtsmixer", "PatchTSMixer's standardised sincos table.", {"patchtst_source": "patchtsmixer"}),
    ("florence2", "Florence-2's 1-D temporal cosine embedding (vaswani).", {"xlm_source": "florence2"}),
    (
        "bros",
        "BROS's 1-D bbox sinusoid (BrosPositionalEmbedding1D, marian, float32).",
        {"marian_source": "bros"},
    ),
    *(
        (name, f"The fairseq table from {family}'s get_embedding.", {"fairseq_source": name})
        for name, family in (
            ("kosmos2", "Kosmos-2"),
            ("kosmos2_5", "Kosmos-2.5"),
            ("nllb_moe", "NLLB-MoE"),
            ("seamless_m4t", "SeamlessM4T"),
            ("seamless_m4t_v2", "SeamlessM4T-v2"),
            ("xglm", "XGLM"),
            ("trocr", "TrOCR"),
            ("tipsv2", "TIPSv2"),
        )
    ),
    *(
        (name, f"The marian table from {family}'s create_weight.", {"marian_source": name})
        for name, family in (
            ("pegasus", "Pegasus"),
            ("autoformer", "Autoformer"),
            ("informer", "Informer"),
            ("time_series_transformer", "Time Series Transformer"),
            ("roformer", "RoFormer"),
        )
    ),
    ("videomae", "VideoMAE's vaswani table (get_sinusoid_encoding_table).", {"xlm_source": "videomae"}),
    ("ctrl", "CTRL's positional_encoding: the marian table in float32 torch.", {"marian_source": "ctrl"}),
    (
        "canary",
        "Canary's NeMo table (CanaryPositionalEmbedding): marian frequencies, before its 1/sqrt(d) scale.",
        {"marian_source": "canary"},
    ),
    (
        "zoedepth",
        "ZoeDepth's patch-transformer positional_encoding_1d: the marian table (even dim).",
        {"marian_source": "zoedepth"},
    ),
    (
        "pegasus_x",
        "PegasusX's [sin | cos] of 10000**(-k/(n-1)): the tensor2tensor table at any position.",
        {"t2t_source": "pegasus_x"},
    ),
    (
        "fun_asr_nano",
        "Fun-ASR-Nano's copy of Whisper's tensor2tensor table (FunAsrNanoPositionEmbedding).",
        {"t2t_source": "fun_asr_nano"},
    ),
    (
        "timesfm",
        "TimesFM's tensor2tensor timing signal (TimesFmPositionalEmbedding; both timescales).",
        {"t2t_source": "timesfm"},
    ),
    *(
        (name, f"The vaswani table from {family}'s create_sinusoidal_embeddings.", {"xlm_source": name})
        for name, family in (("flaubert", "FlauBERT"), ("distilbert", "DistilBERT"))
    ),
    *(
        (name, f"The tensor2tensor table from {family}'s SinusoidsPositionEmbedding.", {"t2t_source": name})
        for name, family in (
            ("qwen2_5_omni", "Qwen2.5-Omni"),
            ("qwen3_omni_moe", "Qwen3-Omni-MoE"),
            ("qwen3_asr", "Qwen3-ASR"),
        )
    ),
    *(
        (name, f"Transformer-XL relative attention from {family}.", {f"rel_{s}_source": name for s in serves})
        for name, family, serves in (
            ("xlnet", "XLNet (relative_positional_encoding, rel_shift_bnij)", ("table", "shift")),
            (
                "wav2vec2_conformer",
                "Wav2Vec2-Conformer (RelPositionalEmbedding, _apply_relative_position_encoding)",
                ("table", "shift", "scores"),
            ),
            (
                "wav2vec2_bert",
                "Wav2Vec2-BERT (its copy of Wav2Vec2-Conformer's)",
                ("table", "shift", "scores"),
            ),
            (
                "seamless_m4t",
                "SeamlessM4T's speech encoder (its copy of Wav2Vec2-Conformer's)",
                ("table", "shift", "scores"),
            ),
            (
                "fastspeech2_conformer",
                "FastSpeech2-Conformer (RelPositionalEncoding, shift_relative_position_tensor)",
                ("table", "shift"),
            ),
            ("parakeet", "Parakeet (RelPositionalEncoding, _rel_shift)", ("table", "shift")),
            (
                "nemotron_asr_streaming",
                "Nemotron-ASR streaming (cached_frames, _rel_shift)",
                ("table", "shift"),
            ),
            ("funnel", "Funnel (get_position_embeds, _relative_shift_gather)", ("table", "shift")),
            ("gemma3n", "Gemma 3n audio (Gemma3nAudioRelativePositionEmbedding._relative_shift)", ("shift",)),
            ("gemma4", "Gemma 4 audio (Gemma4AudioAttention._rel_shift)", ("shift",)),
        )
    ),
    *(
        (
            family,
            f"RoPE from {row.module(family)}: {row.rotary}.forward, {row.apply} ({row.layout}).",
            {"rope_source": family},
        )
        for family, row in ROPE_FAMILIES.items()
        if family != TransformersAdapter.rope_source
    ),
]


def _variants(rows: list[tuple[str, str, dict[str, str]]]) -> dict[str, type[TransformersAdapter]]:
    """One variant per family of ``rows``, its rows' sources united (a source given twice must
    agree) and their descriptions joined."""
    docs: dict[str, list[str]] = {}
    sources: dict[str, dict[str, str]] = {}
    for family, doc, given in rows:
        docs.setdefault(family, []).append(doc)
        united = sources.setdefault(family, {})
        for key, value in given.items():
            if united.setdefault(key, value) != value:
                msg = f"family {family!r}: {key} is {united[key]!r} in one row and {value!r} in another"
                raise ValueError(msg)
    return {family: _variant(family, " ".join(docs[family]), **sources[family]) for family in docs}


#: Variant name (a model family's directory under ``transformers/models``) -> adapter class;
#: ``posenc-ref check transformers:NAME`` runs one, ``default`` is the adapter itself.
ADAPTERS: dict[str, type[TransformersAdapter]] = {
    "default": TransformersAdapter,
    **_variants(_FAMILY_SOURCES),
}
ADAPTER = TransformersAdapter

#: The model families whose code the default column runs, each with the results that are that
#: family's code: a canonical function, or (with a ``/``) a result-id prefix such as
#: ``function/convention/`` where one function serves several families by convention.  The zoo
#: (:mod:`posenc_ref_conformance.zoo`) gives each family its verdict from these results; a
#: variant's column is its family's alone.
DEFAULT_FAMILIES: dict[str, tuple[str, ...]] = {
    "llama": ("rope_frequencies", "rope_cos_sin", "apply_rope", "rope", "rope_from_base", "attention"),
    "cohere": ("rope_cos_sin/interleaved/",),
    "gpt_neox": ("apply_rope/half/partial-",),
    "t5": ("t5_bucket", "t5_bias"),
    "bloom": ("alibi_slopes", "alibi_bias", "alibi_bias_from_heads", "alibi_bias_from_mask"),
    "deberta_v2": ("deberta_bucket", "deberta_relative_index"),
    "roberta": ("token_positions",),
    "opt": ("learned",),
    "xlm": ("sinusoidal/vaswani/",),
    "marian": ("sinusoidal/marian/",),
    "speech_to_text": ("sinusoidal/fairseq/",),
    "whisper": ("sinusoidal/tensor2tensor/",),
    "qwen2_5_vl": ("mrope_position_ids",),
    "qwen2_vl": ("rope_2d_cos_sin/qwen2_vl/",),
    "pixtral": ("rope_2d_cos_sin/pixtral/",),
    "gemma4": ("rope_2d_cos_sin/gemma4_vision/",),
    "dinov3_vit": ("rope_2d_cos_sin/dinov3/",),
    "llama4": ("rope_2d_cos_sin/llama4_vision/",),
    "sam2_video": ("rope_2d_cos_sin/sam2/",),
    "kimi_k25": ("rope_2d_cos_sin/kimi_k25/",),
    "detr": ("detr_sine_2d/detr/", "row_col_embedding/concat/"),
    "deformable_detr": ("detr_sine_2d/deformable/", "detr_coord_sine/deformable/"),
    "conditional_detr": ("detr_coord_sine/conditional/",),
    "rt_detr": ("sincos_2d/rt_detr/",),
    "omdet_turbo": ("sincos_2d/omdet_turbo/",),
    "vit_mae": ("sincos_2d/vit_mae/",),
    "swin": ("window_bias/swin/",),
    "beit": ("window_bias/beit/",),
    "swinv2": ("swinv2_log_coords",),
    "sam": ("decomposed_rel_pos", "grid_resize", "fourier_features", "fourier_grid/square/"),
    "idefics": ("patch_grid_resize/idefics/",),
    "dinov2_with_registers": ("patch_grid_resize/dinov2-registers/", "patch_grid_resize/registers/"),
    "siglip": ("patch_grid_resize/siglip/",),
    "deit": ("patch_grid_resize/deit/",),
    "clip": ("patch_grid_resize/clip/",),
    "vit": ("patch_grid_resize/vit/",),
    "dinov2": ("patch_grid_resize/dinov2/",),
    "timesformer": ("patch_grid_resize/timesformer/",),
    "idefics2": ("navit_position_ids",),
    # MiniCPM's towers call the shared vision_utils.get_vision_nearest_position_ids, which the
    # default column runs (the float32_divide cases)
    **dict.fromkeys(
        ("minicpm_ocr", "minicpmv4_6", "minicpmv4_7"),
        (
            "navit_position_ids/boundary/25-on-5-divide",
            "navit_position_ids/boundary/idefics2-25-and-49-divide",
            "navit_position_ids/boundary/19-on-19-divide",
        ),
    ),
    "layoutlm": ("bbox_embedding/sum/",),
    "layoutlmv3": ("bbox_embedding/concat/",),
    "pix2struct": ("row_col_embedding/sum/",),
}


#: Scheme class (the zoo's, ``docs/matrix/zoo_families.csv``) -> {family: why no column of this
#: adapter runs that scheme of that family}; the zoo page shows each reason.
NOT_RUN: dict[str, dict[str, str]] = {
    "rope": ROPE_NOT_RUN,
    "learned-absolute": LEARNED_NOT_RUN,
    "sinusoidal": SINUSOID_NOT_RUN,
}
mpt, m2m_100, fsmt, gptj = (ADAPTERS[name] for name in ("mpt", "m2m_100", "fsmt", "gptj"))
conditional_detr, dab_detr, grounding_dino = (
    ADAPTERS[name] for name in ("conditional_detr", "dab_detr", "grounding_dino")
)
falcon, ministral3, mistral4, beam, ernie4_5_vl_moe, hunyuan_vl = (
    ADAPTERS[name] for name in ("falcon", "ministral3", "mistral4", "beam", "ernie4_5_vl_moe", "hunyuan_vl")
)
