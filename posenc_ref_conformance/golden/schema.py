"""The JSON Schema of the golden files, built from the function specs so the two cannot drift.

``posenc-ref golden generate`` writes it to ``golden_schema_v1.json`` (draft 2020-12): every object
lists ``required`` and sets ``additionalProperties: false``; each canonical function gets its own
``Inputs_*`` / ``Outputs_*`` definitions.  Lint validates every file against it.
"""

from __future__ import annotations

import json
from typing import Any

from .cases import FUNCTIONS
from .functions import KINDS

__all__ = ["build_schema", "schema_bytes"]


def ref(n: str) -> dict[str, str]:
    return {"$ref": f"#/$defs/{n}"}


def described(text: str, node: dict[str, Any]) -> dict[str, Any]:
    """``node`` with a ``description`` (shown as the key's meaning on the docs' format page)."""
    return {"description": text, **node}


SCHEMA_NOTE = "The schema file this file follows"
VERSION_NOTE = "Format version; a reader refuses versions it does not know"
INT = {"type": "integer"}
NUM = {"type": "number"}
NULL_INT = {"type": ["integer", "null"]}


def _value_defs() -> dict[str, Any]:
    """Arrays, tolerances, notes, errors and RoPE scaling dicts."""
    defs = {}
    defs["Shape"] = described(
        "Array dimensions, row-major; [] for a scalar",
        {"type": "array", "items": {"type": "integer", "minimum": 0}},
    )
    defs["FloatArray"] = {
        "description": "float64 values, row-major: exact hex (C99 %a) and the shortest round-trip "
        "decimal of each",
        "type": "object",
        "required": ["dtype", "shape", "hex", "decimal"],
        "additionalProperties": False,
        "properties": {
            "dtype": described("Always float64: runs in other dtypes cast or round", {"const": "float64"}),
            "shape": ref("Shape"),
            "hex": described(
                "Every element as an exact hexadecimal float (C99 %a, Python float.hex); authoritative",
                {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^-?0x[01]\\.[0-9a-f]+p[+-][0-9]+$"},
                },
            ),
            "decimal": described(
                "The same elements as shortest round-trip decimals, for reading",
                {"type": "array", "items": NUM},
            ),
        },
    }
    defs["IntArray"] = {
        "description": "int64 values, row-major, as JSON integers",
        "type": "object",
        "required": ["dtype", "shape", "values"],
        "additionalProperties": False,
        "properties": {
            "dtype": described("Always int64", {"const": "int64"}),
            "shape": ref("Shape"),
            "values": described("The elements, row-major", {"type": "array", "items": INT}),
        },
    }
    defs["BoolArray"] = {
        "description": "Boolean values, row-major, as JSON booleans",
        "type": "object",
        "required": ["dtype", "shape", "values"],
        "additionalProperties": False,
        "properties": {
            "dtype": described("Always bool", {"const": "bool"}),
            "shape": ref("Shape"),
            "values": described("The elements, row-major", {"type": "array", "items": {"type": "boolean"}}),
        },
    }
    for kind, descr in (("Float", "<f8"), ("Int", "<i8")):
        defs[f"Binary{kind}Array"] = {
            "description": f"{kind.lower()}64 values in a .npy file beside the JSON (exported sets only): "
            f"NumPy format 1.0, descr '{descr}', C order, bit-exact",
            "type": "object",
            "required": ["dtype", "shape", "file", "format", "byteOrder", "sha256"],
            "additionalProperties": False,
            "properties": {
                "dtype": described("The element type", {"const": f"{kind.lower()}64"}),
                "shape": ref("Shape"),
                "file": described(
                    "Path of the .npy file, relative to the golden directory",
                    {"type": "string", "pattern": "^arrays/[A-Za-z0-9_.+-]+\\.npy$"},
                ),
                "format": described("The file format", {"const": "npy"}),
                "byteOrder": described("Byte order of the elements", {"const": "little"}),
                "sha256": described(
                    "SHA-256 of the file's bytes", {"type": "string", "pattern": "^[0-9a-f]{64}$"}
                ),
            },
        }
    defs["Floats"] = {
        "description": "float64 values: inline (hex and decimal) or in a .npy file",
        "oneOf": [ref("FloatArray"), ref("BinaryFloatArray")],
    }
    defs["Ints"] = {
        "description": "int64 values: inline or in a .npy file",
        "oneOf": [ref("IntArray"), ref("BinaryIntArray")],
    }
    defs["Positions"] = {
        "description": "int64 positions (inline or in a .npy file); float only in invalid-input cases",
        "oneOf": [ref("IntArray"), ref("FloatArray"), ref("BinaryIntArray")],
    }
    defs["Tolerance"] = {
        "description": "An element passes if |actual - expected| <= atol + rtol * |expected|, "
        "or if it is within maxUlp ulp of expected rounded to the run's dtype",
        "type": "object",
        "required": ["atol", "rtol", "maxUlp"],
        "additionalProperties": False,
        "properties": {
            "atol": described("Absolute tolerance", {"type": "number", "minimum": 0}),
            "rtol": described("Relative tolerance", {"type": "number", "minimum": 0}),
            "maxUlp": described(
                "Units in the last place of the run's dtype", {"type": "integer", "minimum": 0}
            ),
        },
    }
    defs["Tolerances"] = {
        "description": "Tolerances per run dtype",
        "type": "object",
        "required": ["float64", "float32"],
        "additionalProperties": False,
        "properties": {
            "float64": described("For runs in float64", ref("Tolerance")),
            "float32": described("For runs in float32", ref("Tolerance")),
        },
    }
    defs["Phase"] = {
        "description": "What the product precision class bounds each element with: the element's angle is "
        "|positions[..]| * |frequencies[column]|",
        "type": "object",
        "required": ["positions", "frequencies", "frequencyError", "scale"],
        "additionalProperties": False,
        "properties": {
            "positions": described(
                "Each element's position (the output's shape without its last axis)", ref("Ints")
            ),
            "frequencies": described("The angular frequency of each output column", ref("Floats")),
            "frequencyError": described(
                "Relative error of the frequencies under the product class, in unit roundoffs "
                "(1: given and cast; 3L + 6: derived by the implementation)",
                {"type": "number", "minimum": 0},
            ),
            "scale": described("The largest factor on an element", {"type": "number", "minimum": 0}),
        },
    }
    defs["Note"] = {
        "description": "Why cases with this flag exist",
        "type": "object",
        "required": ["bugType", "description", "links"],
        "additionalProperties": False,
        "properties": {
            "bugType": {
                "description": "Kind of mistake the flag guards against",
                "enum": [
                    "Functionality",
                    "ConventionMismatch",
                    "NumericalPrecision",
                    "EdgeCase",
                    "InvalidInput",
                    "KnownBug",
                ],
            },
            "description": described("What goes wrong, and in which code", {"type": "string"}),
            "links": described(
                "Issues, pull requests or code where it was seen",
                {"type": "array", "items": {"type": "string", "pattern": "^https://"}},
            ),
        },
    }
    defs["Error"] = {
        "description": "The expected outcome of an invalid-input case: the call raises",
        "type": "object",
        "required": ["error", "parameter"],
        "additionalProperties": False,
        "properties": {
            "error": described(
                "Exception type the reference raises", {"enum": ["ValueError", "TypeError", "IndexError"]}
            ),
            "parameter": described("The argument at fault", {"type": "string"}),
        },
    }
    defs["RopeScaling"] = {
        "description": "HF rope_parameters / rope_scaling keys",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "rope_type": described(
                "Scaling type: default, linear, ntk, dynamic, yarn, llama3, longrope or proportional",
                {"type": "string"},
            ),
            "type": described("Legacy (HF v4) name of rope_type", {"type": "string"}),
            "factor": described(
                "Scaling factor s: the context extension ratio (YaRN, LongRoPE: null derives it from "
                "max_position_embeddings / original_max_position_embeddings, as HF v5 does)",
                {"type": ["number", "null"]},
            ),
            "original_max_position_embeddings": described("Pretraining context length L", INT),
            "max_position_embeddings": described(
                "The model's context length (dynamic NTK; YaRN and LongRoPE without factor)", INT
            ),
            "beta_fast": described("YaRN: rotations at the fast end of the ramp (HF default 32)", NUM),
            "beta_slow": described("YaRN: rotations at the slow end of the ramp (HF default 1)", NUM),
            "mscale": described("YaRN (DeepSeek): numerator of the attention-factor ratio", NUM),
            "mscale_all_dim": described("YaRN (DeepSeek): denominator of the attention-factor ratio", NUM),
            "attention_factor": described("Explicit attention factor; wins over every formula", NUM),
            "truncate": described(
                "YaRN: round the correction range to integers (HF default true; gpt-oss false)",
                {"type": "boolean"},
            ),
            "low_freq_factor": described(
                "Llama 3: wavelengths above L / low_freq_factor are divided by s", NUM
            ),
            "high_freq_factor": described("Llama 3: wavelengths below L / high_freq_factor are kept", NUM),
            "short_factor": described(
                "LongRoPE: per-pair divisors for lengths up to L", {"type": "array", "items": NUM}
            ),
            "long_factor": described("LongRoPE: per-pair divisors above L", {"type": "array", "items": NUM}),
            "partial_rotary_factor": described("Fraction of the head dimension that is rotated", NUM),
            "rope_theta": described("The base b; must equal the base argument", NUM),
        },
    }
    return defs


def _kind_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of one input kind (``functions.KINDS``)."""
    return {
        "positions": ref("Positions"),
        "float": ref("Floats"),
        "scalar": ref("FloatArray"),
        "float|null": {"oneOf": [ref("Floats"), {"type": "null"}]},
        "bool|null": {"oneOf": [ref("BoolArray"), {"type": "null"}]},
        "mask": {"oneOf": [ref("BoolArray"), ref("IntArray"), ref("FloatArray")]},
        "int": INT,
        "int|null": NULL_INT,
        "int|pair": {"oneOf": [INT, {"type": "array", "items": INT, "minItems": 2, "maxItems": 2}]},
        "number": NUM,
        "number|null": {"type": ["number", "null"]},
        "bool": {"type": "boolean"},
        "string": {"type": "string"},
        "options": {
            "type": "object",
            "additionalProperties": {"type": ["number", "boolean", "null", "integer"]},
        },
        "scaling|null": {"oneOf": [ref("RopeScaling"), {"type": "null"}]},
        "ints": {"type": "array", "items": INT},
        "segments": {
            "type": "array",
            "items": {"oneOf": [INT, {"type": "array", "items": INT, "minItems": 3, "maxItems": 3}]},
        },
    }[kind]


def _signature_def() -> dict[str, Any]:
    """The call of a canonical function, as each golden file and index.json state it."""
    names = {"type": "array", "items": {"type": "string"}}
    return {
        "description": "how to call the canonical function: positional then keyword parameters "
        "(then dtype, the run's float dtype, when takesDtype), its outputs, the capability "
        "that gates each option, the kind of every input",
        "type": "object",
        "additionalProperties": False,
        "required": ["positional", "keyword", "takesDtype", "outputs", "options", "kinds", "variants"],
        "properties": {
            "positional": described("Parameters passed by position, in order", names),
            "keyword": described("Parameters passed by keyword", names),
            "takesDtype": described(
                "Whether the call also takes dtype (the run's float dtype)", {"type": "boolean"}
            ),
            "outputs": described("The outputs, in the order returned", names),
            "options": described(
                "Option parameter -> the capability field whose values gate it (a case needing a value "
                "the adapter does not declare is skipped)",
                {"type": "object", "additionalProperties": {"type": "string"}},
            ),
            "kinds": described(
                "Parameter -> its kind: how it is typed here and how an adapter receives it",
                {"type": "object", "additionalProperties": {"enum": list(KINDS)}},
            ),
            "variants": described(
                "Variant axis (a point where real implementations give different formulas under one "
                "name) -> its values, the canonical one first",
                {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
            ),
        },
    }


_KINDS = {"float": "Floats", "int": "Ints", "bool": "BoolArray"}

#: Meaning of each input and output key, by name; ``"function.key"`` where a name means
#: something else in one function.  Shown on the docs' golden-format page.
MEANINGS: dict[str, str] = {
    "positions": "Token positions",
    "dim": "Width d of the table",
    "rope_frequencies.dim": "Rotated width d (d/2 inverse frequencies)",
    "convention": "Which real implementation's table: one of SINUSOIDAL_CONVENTIONS",
    "shaw_index.convention": "tensor2tensor (key - query, clipped), bert (query - key, unclipped), speecht5 "
    "(query - key clipped to [-L, L - 1] + L), vits (key - query + w in the window, zero row 2w + 1 outside) "
    "or granite_speech (query - key clamped to +-context_size, + max_pos_emb)",
    "options": "The convention's keyword options (base, padding_idx, min_timescale, cos_first, scale, "
    "num_positions, ...)",
    "table": "The learned position table",
    "offset": "Row of position p: plain p, opt p + 2, roberta p + padding_idx + 1",
    "padding_idx": "fairseq/RoBERTa padding row; null when the offset does not use one",
    "new_length": "Rows of the interpolated table",
    "base": "RoPE base b (rope_theta)",
    "scaling": "HF rope_parameters / rope_scaling dict; null for plain RoPE",
    "seq_len": "Current sequence length (dynamic NTK, LongRoPE's switch); null when unused",
    "inv_freq": "Inverse frequencies, one per rotated pair",
    "attention_factor": "Multiplies cos and sin (YaRN, LongRoPE)",
    "layout": "Channel pairs: half (i, i + d/2) or interleaved (2i, 2i + 1)",
    "x": "Queries or keys; the first R channels are rotated, the rest pass through",
    "cos": "cos table",
    "sin": "sin table",
    "relative": "Relative positions, key - query",
    "bidirectional": "Encoder buckets (true) or decoder buckets (false)",
    "num_buckets": "Number of buckets",
    "max_distance": "Distance from which buckets saturate",
    "shaw_index.max_distance": "Clipping distance k, [left, right] limits, bert's P, SpeechT5's L, VITS's "
    "window w, or granite_speech's [context_size, max_pos_emb]",
    "num_heads": "Number of attention heads",
    "max_bias": "ALiBi's max_bias (8 in the paper): slopes are 2**(-max_bias * k / n)",
    "q_positions": "Query positions",
    "k_positions": "Key positions",
    "slopes": "One ALiBi slope per head",
    "form": "symmetric -m|j - i|, or causal +m j (valid only under a causal mask)",
    "sliding_window": "Keys at most this far behind the query are visible; null for no window",
    "chunk_size": "Attention within position chunks of this size (Llama 4); null for none",
    "floor_scale": "Llama 4: positions per temperature step",
    "attn_scale": "Llama 4: temperature slope",
    "q": "Queries",
    "k": "Keys",
    "v": "Values",
    "bias": "Additive bias on the logits, or null",
    "mask": "True where a query may attend to a key, or null",
    "scale": "Logit scale; null means 1/sqrt(D)",
    "t5_bias.table": "T5's [num_buckets, H] bias table (HF relative_attention_bias.weight)",
    "alibi_bias_from_mask.mask": "Padding mask: true (non-zero) for real tokens",
    "token_positions.mask": "Padding mask: true (non-zero) for real tokens",
    "cache_length": "Tokens already in the KV cache",
    "shaw_table_rows.max_distance": "Clipping distance k, [left, right] limits, bert's P, SpeechT5's L, "
    "VITS's w, or granite_speech's [context_size, max_pos_emb]",
    "shaw_table_rows.convention": "tensor2tensor (left + right + 1 rows), bert (2P - 1), speecht5 (2L), "
    "vits (2w + 1 and the zero row) or granite_speech (2 max_pos_emb + 1)",
    "shaw_logits.index": "Table row of each (query, key) pair, from shaw_index",
    "shaw_values.index": "Table row of each (query, key) pair, from shaw_index",
    "shaw_logits.table": "Relative-key embeddings w^K, one row per clipped distance",
    "shaw_values.table": "Relative-value embeddings w^V, one row per clipped distance",
    "shaw_logits.k": "Keys for the key-side term (HF BERT relative_key_query), or null",
    "weights": "Attention weights (after softmax)",
    "sandwich_bias.dim": "Even width d of the sinusoidal kernel",
    "sandwich_bias.base": "Frequency base of the kernel",
    "r1": "KERPLE: the per-head factor in front of the kernel",
    "r2": "KERPLE: the per-head parameter inside the kernel",
    "kind": "KERPLE kernel: log -r1 ln(1 + r2 |d|) or power -r1 |d|**r2",
    "rope_from_base.dim": "Rotated width d: the implementation derives d/2 frequencies from base and scaling",
    "head_layout": "Axis order of x: bhsd [batch, heads, seq, dim], bshd [batch, seq, heads, dim], thd "
    "[tokens, heads, dim]",
    "rope_heads.positions": "Positions per sequence ([batch, seq]: bhsd, bshd) or per token ([tokens]: thd)",
    "xpos_scale.dim": "Rotated width d (d/2 xPos decay rates)",
    "scale_base": "xPos scale base B: the exponent is (m - offset) / B",
    "gamma": "xPos gamma: zeta_i = (2i/d + gamma) / (1 + gamma)",
    "xpos_scale.offset": "Centre of the xPos exponent (0: paper; lucidrains: len(positions) // 2)",
    "segments": "Text runs (lengths) and vision blocks ([t, h, w] in the language model's grid), in order",
    "time_interval": "Temporal id step per frame (floored): Qwen2-VL 1, Qwen2.5-VL tokens_per_second x s",
    "grid_t": "Frames of the vision input",
    "grid_h": "Patch rows before merging",
    "grid_w": "Patch columns before merging",
    "merge_size": "Side of the patch windows merged into one token (Qwen2-VL spatial_merge_size)",
    "mrope_angles.position_ids": "M-RoPE ids, one row per component (t, h, w)",
    "mrope_section": "Frequency slots per component, summing to len(inv_freq)",
    "mrope_angles.section_order": "One of MROPE_SECTION_ORDERS: chunked (Qwen2/2.5-VL sections, HunYuan-VL "
    "XD-RoPE), interleaved (Qwen3-VL) or ernie (Ernie 4.5 VL: h/w alternating, then t)",
    "window_bias.table": "Learned bias table [(2Wh-1)(2Ww-1) (+3 BEiT cls rows), heads]",
    "window_size": "Window [Wh, Ww] in patches",
    "window_bias.cls_token": "BEiT layout: a cls token first, the table's last three rows for it",
    "pretrained_window_size": "Swin-V2 pretrained window [Ph, Pw] dividing the offsets; [] for none",
    "query": "Queries on their [qh, qw] grid",
    "rel_pos_h": "Per-axis relative table of the height axis, 2 max(qh, kh) - 1 rows",
    "rel_pos_w": "Per-axis relative table of the width axis, 2 max(qw, kw) - 1 rows",
    "k_size": "Key grid [kh, kw]",
    "deberta_bucket.relative": "Relative positions, query - key (DeBERTa's sign)",
    "position_buckets": "HF config.position_buckets (<= 0: no buckets, DeBERTa v1)",
    "max_relative_positions": "HF max_relative_positions: the buckets' range (no buckets: half the table)",
    "deberta_bucket.arithmetic": "exact ceiling, or HF's float32 evaluation of the log term",
    "deberta_relative_index.arithmetic": "exact ceiling, or HF's float32 evaluation of the log term",
    "deberta_relative_index.term": "c2p (query content reads K_r) or p2c (key content reads Q_r)",
    "decomposed_rel_pos.coords": "float32 (the reference code's float32 coordinate and .long()) or exact",
    "qlen": "Queries of the current segment",
    "klen": "Keys: memory (cached frames) plus queries; null means qlen",
    "rel_shift.klen": "Keys kept after the shift; null means the untrimmed width",
    "rel_sinusoid_positions.convention": "Distances of the rows: one of REL_SINUSOID_CONVENTIONS",
    "rel_sinusoid_table.convention": "Which distances and layout: one of REL_SINUSOID_CONVENTIONS",
    "rel_shift.convention": "Which pad-and-reshape trick: one of REL_SHIFT_CONVENTIONS",
    "rel_attention_scores.convention": "Which pad-and-reshape trick: one of REL_SHIFT_CONVENTIONS",
    "clamp_len": "XLNet clamp_len: distances clipped to [-clamp_len, clamp_len]; null means none",
    "bi_data": "XLNet bi_data: the forward and the negated (backward) sequence",
    "rel_shift.x": "Position terms BD[..., Q, P]: query i against table row p",
    "shift": "Rows of the reshaped view dropped (XLNet 1, Funnel's pooled queries 2)",
    "r": "Projected relative table per head [..., P, D], rows largest distance first",
    "u": "Content bias (pos_bias_u, r_w_bias) added to the query against the keys; null means none",
    "rel_attention_scores.v": "Position bias (pos_bias_v, r_r_bias) added to the query against R; null: none",
    "grid_resize.table": "Table whose grid axes (1 or 2) come just before the channel axis",
    "patch_grid_resize.table": "Position table: prefix rows, then one row per patch of the grid, row-major",
    "size": "The new grid: 1 or 2 sides",
    "mode": "F.interpolate's mode: nearest (legacy floor), linear / bilinear, bicubic (A = -0.75)",
    "align_corners": "F.interpolate's align_corners (false for nearest)",
    "scale_factor": "F.interpolate's scale_factor per grid axis (the map steps by 1/scale_factor), or null",
    "antialias": "F.interpolate's antialias (linear and bicubic)",
    "grid": "Rows and columns of the stored patch grid",
    "new_grid": "Rows and columns of the new patch grid",
    "prefix_tokens": "Rows before the patch grid (class, distillation, register tokens)",
    "skip_same_grid": "Return the stored table when new_grid equals grid (HF's early return)",
    "fourier_features.coords": "Points (x, y), in pixels or normalised",
    "gaussian": "SAM's random Gaussian matrix G [2, F] (positional_embedding)",
    "input_shape": "[H, W] of the image: x is divided by W, y by H",
    "fourier_features.offset": "Added to both coordinates before the division (SAM's prompts: 0.5)",
    "height": "Grid rows",
    "width": "Grid columns",
    "patch_attention_mask": "True for the real patches of each padded image",
    "num_patches_per_side": "Side N of the table's patch grid (N**2 rows)",
    "arithmetic": "float32 (Idefics2), float32_divide (MiniCPM-V) or exact bucket arithmetic",
    "x_table": "Table of x coordinates (both x corners)",
    "y_table": "Table of y coordinates (both y corners)",
    "h_table": "Table of box heights y1 - y0",
    "w_table": "Table of box widths x1 - x0",
    "bbox": "Boxes (x0, y0, x1, y1)",
    "combine": "sum the per-axis rows, or concatenate them",
    "clip_shape": "Clip heights and widths to their tables (LayoutLMv3)",
    "row_table": "Table of patch rows",
    "col_table": "Table of patch columns",
    "row_col_embedding.rows": "Row index of each patch",
    "cols": "Column index of each patch",
    "rope_2d_cos_sin.positions": "Row (y) then column (x) of each token: patch indices, or DINOv3's "
    "patch-centre coordinates in [-1, 1]",
    "rope_2d_cos_sin.head_dim": "Channels per head D, a multiple of 4 (D/4 pairs per axis)",
    "rope_2d_cos_sin.base": "rope_theta of the vision tower",
    "rope_2d_cos_sin.convention": "Which vision encoder's frequencies and channel layout: one of "
    "ROPE_2D_CONVENTIONS (pixtral, gemma4_vision, dinov3)",
    # outputs
    "grid_resize.resized": "The resized table",
    "patch_grid_resize.resized": "The prefix rows, then the resized patch grid, row-major",
    "sinusoidal.table": "The sinusoidal table",
    "interpolate_table.table": "The interpolated table",
    "rows": "The table rows of the positions",
    "rope_frequencies.attention_factor": "The attention factor the scaling implies",
    "out": "The result",
    "buckets": "Bucket of each relative position",
    "alibi_slopes.slopes": "The slopes, head 0 first",
    "alibi_bias.bias": "Bias per head, query and key",
    "alibi_bias_from_heads.bias": "Bias per head, query and key, with the implementation's own slopes",
    "alibi_bias_from_mask.bias": "Bias per head and key (one row, the same for every query)",
    "t5_bias.bias": "table[bucket(k - q), h] per head, query and key",
    "sandwich_bias.bias": "Sandwich bias per head, query and key",
    "rope_2d_cos_sin.cos": "cos table [..., L, head_dim] in the family's channel layout",
    "rope_2d_cos_sin.sin": "sin table [..., L, head_dim] in the family's channel layout",
    "kerple_bias.bias": "KERPLE bias per head, query and key",
    "shaw_table_rows.rows": "Rows of the relative-position table",
    "logits": "Relative logits q_i . w[idx_ij] (+ k_j . w[idx_ij])",
    "shaw_values.out": "Relative-value term sum_j w_ij table[idx_ij]",
    "token_positions.positions": "Position of each real token; -1 at padding",
    "relative_positions.relative": "key - query for every pair",
    "index": "Row of the relative-position table",
    "causal_mask.mask": "True where a query may attend to a key",
    "llama4_attn_scale.scale": "Temperature multiplying the query of each position",
    "llama4_attn_scale.convention": "Which formula: one of ATTN_SCALE_CONVENTIONS (llama4: floor((p + 1)/F); "
    "mistral: floor(p/F); beam: (1 + (p + 1)/F)**a)",
    "q_scale": "xPos scale multiplying the rotated queries",
    "k_scale": "xPos scale multiplying the rotated keys (the inverse of q_scale)",
    "position_ids": "M-RoPE (t, h, w) ids: [3, L]",
    "vision_position_ids.position_ids": "(row, col) of each patch: [2, t h w]",
    "angles": "Rotation angle of each token and frequency slot",
    "window_bias.bias": "table[idx(a, b), h] per head, query token and key token of the window",
    "swinv2_log_coords.coords": "Swin-V2 log-spaced (dh, dw) coordinates per offset",
    "decomposed_rel_pos.bias": "rel_h + rel_w per query (y, x) and key (ky, kx)",
    "rel_sinusoid_positions.positions": "Distance (query minus key) of each table row, largest first",
    "rel_sinusoid_table.table": "Sinusoid of each row's distance, [P, dim] or [2, P, dim] with bi_data",
    "rel_shift.out": "What the shift puts under key j of query i (the pad's zeros and other rows included)",
    "scores": "Attention logits before the mask: scale ((q + u) k + shift((q + v) R))",
    # vision sine
    "detr_sine_2d.mask": "Pixel mask [B, H, W]: true (non-zero) for real pixels, false for padding",
    "num_position_features": "DETR's F: channels per axis (even; HF d_model // 2)",
    "temperature": "Temperature T of the frequencies",
    "temperature_height": "DAB-DETR's temperature of the y axis; null: temperature",
    "temperature_width": "DAB-DETR's temperature of the x axis; null: temperature",
    "normalize": "Divide by the last count plus 1e-6 and multiply by scale (true in every HF model)",
    "detr_sine_2d.scale": "Range of the normalised positions (2 pi)",
    "detr_sine_2d.convention": "detr: c / (c_last + 1e-6); deformable_detr: (c - 0.5) / (c_last + 1e-6)",
    "detr_sine_2d.embedding": "The embedding [B, 2F, H, W]: y channels first, then x",
    "detr_coord_sine.coords": "Real-valued coordinates (conditional_detr) or proposal logits "
    "(deformable_detr), [..., n]",
    "num_pos_feats": "Channels per coordinate F (even)",
    "detr_coord_sine.scale": "Factor of the coordinates (2 pi)",
    "detr_coord_sine.convention": "conditional_detr: the first two coordinates swapped (y first); "
    "deformable_detr: sigmoid of the logits, in order",
    "detr_coord_sine.embedding": "The embedding [..., n F], one block of F channels per coordinate",
    "h_positions": "Row positions of the grid (HF arange(height))",
    "w_positions": "Column positions of the grid (HF arange(width))",
    "sincos_2d.dim": "Width D, a multiple of 4",
    "sincos_2d.convention": "rt_detr: h-major rows, [h | w]; vit_mae: h-major, [w | h]; "
    "omdet_turbo: w-major, [w | h]",
    "sincos_2d.cls_token": "Prepend a zero row (MAE's cls token)",
    "sincos_2d.table": "The table, one row per grid cell (after the cls row)",
    "features": "[sin z | cos z] per point (fourier_grid: channels first)",
    "deberta_bucket.buckets": "DeBERTa log bucket of each relative position (not clamped)",
    "deberta_relative_index.index": "Row of the 2S-row relative embedding table each (query, key) reads",
    "navit_position_ids.position_ids": "Table row of each patch; 0 at padding",
    "embedding": "The combined table rows",
    # T5-bucket variants
    "t5_layout_bias.table": "The 1-D bias table [rel_pos_bins, H] (HF rel_pos_bias.weight transposed)",
    "t5_layout_bias.x_table": "The x (left edge) bias table [rel_2d_pos_bins, H]",
    "t5_layout_bias.y_table": "The y (bottom edge) bias table [rel_2d_pos_bins, H]",
    "t5_layout_bias.bbox": "Integer boxes (x0, y0, x1, y1): x = x0, y = y1 are bucketed",
    "max_rel_pos": "max_distance of the 1-D buckets (HF max_rel_pos)",
    "max_rel_2d_pos": "max_distance of the 2-D buckets (HF max_rel_2d_pos)",
    "t5_layout_bias.head_dim": "Divide the sum by sqrt(head_dim); null: no division (LayoutLMv2)",
    "t5_layout_bias.bias": "(Tx[b(dx)] + Ty[b(dy)] + T[b(dp)]) / sqrt(head_dim) per head, query and key",
    "t5_udop_bias.bbox": "Normalised boxes (x0, y0, x1, y1); y0 < 0 marks a prefix token",
    "t5_udop_bias.table": "The 1-D module's table [num_buckets (+2), H]",
    "t5_udop_bias.x_table": "The horizontal module's table [num_buckets_2d (+2), H]",
    "t5_udop_bias.y_table": "The vertical module's table [num_buckets_2d (+2), H]",
    "max_distance_2d": "max_distance of the horizontal and vertical buckets",
    "scaling_factor": "Factor of the centre distances before truncation toward zero (UDOP 100)",
    "prefix_buckets": "UDOP's prefix_bucket: rows N and N + 1 for prefix-to-text and text-to-prefix pairs",
    "t5_udop_bias.bias": "T[b(j - i)] + Tx[b(trunc(s dcx))] + Ty[b(trunc(s dcy))] per head, query and key",
    "hidden": "The attention layer's input split into heads [..., H, L, Dh]",
    "t5_gated_bias.table": "The T5 bias table [num_buckets, H] (WavLM rel_attn_embed.weight)",
    "gate_weight": "WavLM gru_rel_pos_linear.weight [8, Dh]",
    "gate_bias": "WavLM gru_rel_pos_linear.bias [8]",
    "gate_const": "WavLM gru_rel_pos_const, one per head",
    "t5_gated_bias.bias": "Gate g[h, i] times T[b(j - i), h] per head, query and key",
    "main": "Causal buckets of p_j - p_i (ProphetNet's main stream)",
    "predict": "Causal buckets of [p - 1, p]_j - p_i (ProphetNet's predict streams)",
    "q_segments": "Segment id of each query",
    "k_segments": "Segment id of each key",
    "num_segments": "Number of segment types S (CPM-Ant segment_types)",
    "t5_segment_bias.table": "Position rows [num_buckets], then S*S segment-pair rows, one column per head",
    "t5_segment_bias.bias": "T[b(k - q)] within a segment, T[N + s_q S + s_k] across, per head and pair",
}
_BARE_TYPES = {"int", "number", "string", "bool", "object", "float", "float64"}


def _meaning(function: str, key: str, detail: str = "") -> str:
    text = MEANINGS.get(f"{function}.{key}") or MEANINGS.get(key)
    if text is None:
        msg = f"no meaning for {function}.{key}: add it to MEANINGS in {__name__}"
        raise RuntimeError(msg)
    return f"{text}: {detail}" if detail and detail not in _BARE_TYPES else text


def _function_defs(defs: dict[str, Any]) -> list[dict[str, Any]]:
    """Inputs_/Outputs_/Acceptable_ definitions per function; returns the if/then rules of GoldenFile."""
    per_function = []
    for name, spec in FUNCTIONS.items():
        iname, oname = f"Inputs_{name}", f"Outputs_{name}"
        defs[iname] = {
            "description": f"Arguments of {spec.summary}",
            "type": "object",
            "required": list(spec.inputs),
            "additionalProperties": False,
            "properties": {
                k: described(_meaning(name, k, desc), _kind_schema(kind))
                for k, (kind, desc) in spec.inputs.items()
            },
        }
        outputs = {o: described(_meaning(name, o), ref(_KINDS[spec.output_kind])) for o in spec.outputs}
        defs[oname] = {
            "description": f"Expected results of {name}",
            "type": "object",
            "required": list(spec.outputs),
            "additionalProperties": False,
            "properties": outputs,
        }
        defs[f"Acceptable_{name}"] = {
            "description": f"Other values accepted element by element; any of the keys of Outputs_{name}",
            "type": "object",
            "additionalProperties": False,
            "properties": outputs,
        }
        per_function.append(
            {
                "if": {"properties": {"function": {"const": name}}},
                "then": {
                    "properties": {
                        "cases": {
                            "items": {
                                "properties": {"inputs": ref(iname), "acceptable": ref(f"Acceptable_{name}")},
                                "if": {"properties": {"result": {"const": "valid"}}},
                                "then": {"properties": {"expected": ref(oname)}},
                            }
                        }
                    }
                },
            }
        )
    return per_function


def _case_def() -> dict[str, Any]:
    """One case: id, comment, flags, result, inputs, expected (and optional extras)."""
    return {
        "description": "One case: the inputs of one call and its expected result",
        "type": "object",
        "additionalProperties": False,
        "required": ["id", "comment", "flags", "result", "inputs", "expected"],
        "properties": {
            "id": described(
                "Stable id function/group/name, kept across releases (what an xfail file names)",
                {"type": "string", "pattern": "^[a-z0-9_]+(/[A-Za-z0-9_.+-]+)+$"},
            ),
            "comment": described("What the case checks, in words", {"type": "string"}),
            "flags": described(
                "Why the case exists: keys of the file's notes",
                {
                    "type": "array",
                    "items": {"type": "string", "pattern": "^[A-Z][A-Za-z0-9]*$"},
                    "uniqueItems": True,
                },
            ),
            "result": described(
                "valid: expected holds the outputs; invalid: the call must raise",
                {"enum": ["valid", "invalid"]},
            ),
            "dtypes": described(
                "The run dtypes this case is for, where it is not for every dtype of the file (the float64 "
                "reach sweep past 2**24 + 1); other dtypes skip it",
                {
                    "type": "array",
                    "items": {"enum": ["float64", "float32"]},
                    "minItems": 1,
                    "uniqueItems": True,
                },
            ),
            "inputs": described("The call's arguments (Inputs_ of the function)", {"type": "object"}),
            "expected": described(
                "The outputs (Outputs_ of the function), or an Error for an invalid case", {"type": "object"}
            ),
            "acceptable": described(
                "Alternative values also accepted, element by element (Acceptable_ of the function)",
                {"type": "object"},
            ),
            "compare": described(
                "allclose: within tolerance; exact: equal; causal_rowshift: equal up to a constant per row, "
                "on keys at or before the query",
                {"enum": ["allclose", "exact", "causal_rowshift"]},
            ),
            "tolerances": described("This case's tolerances, replacing the file's", ref("Tolerances")),
            "phase": described(
                "What the product precision class needs to bound each element (cos/sin outputs)", ref("Phase")
            ),
            "assumes": described(
                "Variant axis -> the value this case's expected values follow, for each axis they depend "
                "on (found by evaluating every combination): the case is for implementations that "
                "compute that value; absent axes do not matter",
                {"type": "object", "additionalProperties": {"type": "string"}},
            ),
        },
        "allOf": [
            {"if": {"properties": {"result": {"const": "valid"}}}, "then": {"required": ["compare"]}},
            {
                "if": {"properties": {"result": {"const": "invalid"}}},
                "then": {
                    "properties": {"expected": ref("Error")},
                    "not": {
                        "anyOf": [
                            {"required": ["compare"]},
                            {"required": ["tolerances"]},
                            {"required": ["acceptable"]},
                            {"required": ["phase"]},
                        ]
                    },
                },
            },
        ],
    }


def _file_def(per_function: list[dict[str, Any]]) -> dict[str, Any]:
    """A golden file: header, provenance, notes, cases, checksum."""
    return {
        "type": "object",
        "additionalProperties": False,
        "required": [
            "schema",
            "formatVersion",
            "function",
            "scheme",
            "call",
            "signature",
            "inputTypes",
            "outputTypes",
            "castInputs",
            "dtypes",
            "header",
            "provenance",
            "notes",
            "numberOfCases",
            "cases",
            "checksum",
        ],
        "properties": {
            "schema": described(SCHEMA_NOTE, {"const": "golden_schema_v1.json"}),
            "formatVersion": described(VERSION_NOTE, {"const": 1}),
            "function": described(
                "The canonical function whose cases the file holds", {"enum": list(FUNCTIONS)}
            ),
            "scheme": described(
                "The encoding family (what --only selects)",
                {"enum": sorted({s.scheme for s in FUNCTIONS.values()})},
            ),
            "call": described("The call and its output shapes, in words", {"type": "string"}),
            "signature": described("How to call the function, as data", ref("Signature")),
            "inputTypes": described(
                "Type and shape of each input", {"type": "object", "additionalProperties": {"type": "string"}}
            ),
            "outputTypes": described(
                "Kind of each output",
                {"type": "object", "additionalProperties": {"enum": ["float", "int", "bool"]}},
            ),
            "castInputs": described(
                "Float inputs cast to the run's dtype; the others stay float64",
                {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            ),
            "dtypes": described(
                "The dtypes every case runs in",
                {"type": "array", "items": {"enum": ["float64", "float32", "int", "bool"]}, "minItems": 1},
            ),
            "header": described(
                "How to read and compare the values, in prose", {"type": "array", "items": {"type": "string"}}
            ),
            "provenance": {
                "description": "How the expected values were computed",
                "type": "object",
                "additionalProperties": False,
                "required": [
                    "generator",
                    "generatorVersion",
                    "oracle",
                    "oraclePrecisionDigits",
                    "checkPrecisionDigits",
                    "rounding",
                ],
                "properties": {
                    "generator": described("Module that wrote the file", {"type": "string"}),
                    "generatorVersion": described("Its version", {"type": "string"}),
                    "oracle": described("What computed the exact values", {"type": "string"}),
                    "oraclePrecisionDigits": described(
                        "mpmath working precision, decimal digits", {"type": "integer", "minimum": 60}
                    ),
                    "checkPrecisionDigits": described(
                        "Precision of the second evaluation that every value must agree with",
                        {"type": "integer", "minimum": 60},
                    ),
                    "rounding": described("How exact results became float64", {"type": "string"}),
                    "export": described(
                        "Exported sets only: the model and options the vectors were exported for",
                        ref("Export"),
                    ),
                },
            },
            "tolerances": described("Default tolerances of the file's cases", ref("Tolerances")),
            "notes": described(
                "Each flag used by a case, explained", {"type": "object", "additionalProperties": ref("Note")}
            ),
            "numberOfCases": described("Length of cases", {"type": "integer", "minimum": 0}),
            "cases": described("The cases", {"type": "array", "items": ref("Case")}),
            "checksum": {
                "description": "Integrity of the file's bytes",
                "type": "object",
                "additionalProperties": False,
                "required": ["algorithm", "scope", "value"],
                "properties": {
                    "algorithm": described("Hash function", {"const": "sha256"}),
                    "scope": described("What was hashed", {"type": "string"}),
                    "value": described(
                        "SHA-256 of the file with these 64 digits zeroed",
                        {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    ),
                },
            },
        },
        "allOf": per_function,
    }


def _index_def() -> dict[str, Any]:
    """The manifest index.json."""
    return {
        "description": "The manifest index.json: every golden file with its case count and hash",
        "type": "object",
        "additionalProperties": False,
        "required": ["schema", "formatVersion", "generatorVersion", "totalCases", "casesPerScheme", "files"],
        "properties": {
            "schema": described(SCHEMA_NOTE, {"const": "golden_schema_v1.json"}),
            "formatVersion": described(VERSION_NOTE, {"const": 1}),
            "generatorVersion": described(
                "Version of the generator that wrote the files", {"type": "string"}
            ),
            "totalCases": described("Cases in all files", {"type": "integer", "minimum": 0}),
            "casesPerScheme": described(
                "Cases per encoding family",
                {"type": "object", "additionalProperties": {"type": "integer", "minimum": 0}},
            ),
            "export": described(
                "Exported sets only: the source, options and resolved plan, enough to export the set again",
                {"allOf": [ref("Export")], "required": ["plan", "sourceRecord"]},
            ),
            "files": described(
                "One entry per golden file",
                {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "additionalProperties": False,
                        "required": [
                            "file",
                            "function",
                            "scheme",
                            "numberOfCases",
                            "sha256",
                            "call",
                            "signature",
                            "outputType",
                        ],
                        "properties": {
                            "file": described(
                                "File name, beside index.json",
                                {"type": "string", "pattern": "^[a-z0-9_]+\\.json$"},
                            ),
                            "function": described("Its canonical function", {"enum": list(FUNCTIONS)}),
                            "scheme": described("Its encoding family", {"type": "string"}),
                            "numberOfCases": described(
                                "Its number of cases", {"type": "integer", "minimum": 0}
                            ),
                            "sha256": described(
                                "SHA-256 of its bytes", {"type": "string", "pattern": "^[0-9a-f]{64}$"}
                            ),
                            "call": described("Its call and output shapes, in words", {"type": "string"}),
                            "signature": described("Its call, as data", ref("Signature")),
                            "outputType": described(
                                "The kind of its outputs", {"enum": ["float", "int", "bool"]}
                            ),
                        },
                    },
                },
            ),
        },
    }


def _export_def() -> dict[str, Any]:
    """What an exported set records of its source and options (``golden export``)."""
    text = {"type": "string"}
    return {
        "description": "The model and options an exported set was made for",
        "type": "object",
        "additionalProperties": False,
        "required": ["source", "sourceName", "sourceSha256", "options", "positions", "precisionCheck"],
        "properties": {
            "source": described(
                "hf-config (a config.json) or scaling (a rope-parameters dict with sizes)",
                {"enum": ["hf-config", "scaling"]},
            ),
            "sourceName": described("The config file's name", {"type": ["string", "null"]}),
            "sourceSha256": described(
                "SHA-256 of the config file's bytes (of the canonical JSON of a scaling source)",
                {"type": "string", "pattern": "^[0-9a-f]{64}$"},
            ),
            "options": described(
                "The export options",
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["positions", "defaultPositions", "layouts", "forms", "seed", "binary"],
                    "properties": {
                        "positions": described("Positions asked for (start:stop ranges)", text),
                        "defaultPositions": described(
                            "Whether the default set around the context edges was added", {"type": "boolean"}
                        ),
                        "layouts": described("RoPE layouts exported", {"type": "array", "items": text}),
                        "forms": described("ALiBi forms exported", {"type": "array", "items": text}),
                        "seed": described("Seed of the q/k inputs", INT),
                        "binary": described("auto, always or never (.npy for large arrays)", text),
                    },
                },
            ),
            "positions": described(
                "Every position exported (count, start:stop ranges) and the context edges found",
                {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["count", "values", "contextEdges"],
                    "properties": {
                        "count": described("How many positions", INT),
                        "values": described("The positions, as start:stop ranges and single values", text),
                        "contextEdges": described(
                            "Context lengths of the config the default positions surround",
                            {"type": "array", "items": INT},
                        ),
                    },
                },
            ),
            "precisionCheck": described("What golden lint recomputes at check precision", text),
            "plan": described(
                "index.json only: what the config declares, as the export read it", {"type": "object"}
            ),
            "sourceRecord": described(
                "index.json only: the source itself (the parsed config.json, or the scaling dict and sizes)",
                {"type": "object"},
            ),
        },
    }


def build_schema() -> dict[str, Any]:
    """The schema as a dict."""
    defs = _value_defs()
    per_function = _function_defs(defs)
    defs["Signature"] = _signature_def()
    defs["Export"] = _export_def()
    defs["Case"] = _case_def()
    defs["GoldenFile"] = _file_def(per_function)
    defs["Index"] = _index_def()
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "golden_schema_v1.json",
        "title": "posenc-ref golden vectors, format version 1",
        "description": "One canonical function per file (GoldenFile) plus the manifest index.json (Index). "
        "See each file's header for the comparison rules.",
        "oneOf": [ref("GoldenFile"), ref("Index")],
        "$defs": defs,
    }
    return schema


def schema_bytes() -> bytes:
    """Canonical bytes of the schema file."""
    return (json.dumps(build_schema(), indent=1) + "\n").encode("ascii")
