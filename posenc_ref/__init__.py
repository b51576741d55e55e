"""posenc-ref: reference implementations of transformer positional encodings.

Every function is written against the Python array API standard and runs
unchanged on NumPy, CuPy, MLX, and (through array-api-compat) PyTorch, JAX and
Dask.  See README.md and the documentation for the conventions each option
matches.

Rules every function shares:

* Positions of any integer dtype (unsigned and narrow ones included) are
  widened to int64 before any arithmetic, so differences never wrap; they must
  satisfy ``|p| < 2**62`` (checked where values are readable: not on Dask or
  under ``jax.jit``).
* ``xp=`` takes a namespace or the plain library module (``numpy``, ``torch``,
  ``mlx.core``, ``array_api_strict``, ``dask.array``, ``jax.numpy``); dtypes are
  dtype objects (``xp.float32``), never strings.
* Sizes that only steer host work or allocations are bounded (``dim`` and
  heads 2**15, T5 buckets 2**12, arrays built from sizes alone 2**30
  elements), so a mistaken size fails at once.
* Bad input raises ``ValueError`` or ``TypeError`` whose message starts
  ``"<parameter> must be <rule>; got <value>"``.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Each family module adds its public names here, one import line per module.
# --- absolute ---
# --- relative / bias ---
from .alibi import ALIBI_FORMS, alibi_bias, alibi_slopes
from .attention import attention
from .deberta import DEBERTA_ARITHMETIC, DEBERTA_TERMS, deberta_bucket, deberta_relative_index
from .fourier_features import fourier_features, fourier_grid
from .grid_resize import RESIZE_MODES, grid_resize, patch_grid_resize
from .kernel_bias import KERPLE_KINDS, kerple_bias, sandwich_bias
from .learned import LEARNED_OFFSETS, interpolate_table, learned, token_positions
from .learned_2d import COMBINE_MODES, bbox_embedding, row_col_embedding
from .masks import causal_mask
from .mrope import (
    MROPE_SECTION_ORDERS,
    axial_angles,
    mrope_angles,
    mrope_position_ids,
    mrope_slot_components,
    vision_position_ids,
)
from .navit import NAVIT_ARITHMETIC, navit_position_ids
from .nope import ATTN_SCALE_CONVENTIONS, llama4_attn_scale
from .relative import (
    SHAW_CONVENTIONS,
    relative_positions,
    shaw_index,
    shaw_logits,
    shaw_table_rows,
    shaw_values,
)

# --- RoPE ---
from .rope import LAYOUTS, apply_rope, rope_cos_sin, xpos_scale
from .rope_2d import ROPE_2D_CONVENTIONS, rope_2d_cos_sin
from .rope_config import RopeConfig, rope_config_from_hf
from .rope_scaling import SCALING_TYPES, RopeFrequencies, rope_frequencies
from .sinusoidal import SINUSOIDAL_CONVENTIONS, sinusoidal
from .t5 import (
    t5_bias,
    t5_bucket,
    t5_bucket_thresholds,
    t5_gated_bias,
    t5_layout_bias,
    t5_segment_bias,
    t5_stream_buckets,
    t5_udop_bias,
)
from .transformer_xl import (
    REL_SHIFT_CONVENTIONS,
    REL_SINUSOID_CONVENTIONS,
    rel_attention_scores,
    rel_shift,
    rel_sinusoid_positions,
    rel_sinusoid_table,
)

# --- vision sine ---
from .vision_sine import (
    DETR_COORD_CONVENTIONS,
    DETR_SINE_CONVENTIONS,
    SINCOS_2D_CONVENTIONS,
    detr_coord_sine,
    detr_sine_2d,
    sincos_2d,
)
from .window_bias import DECOMPOSED_COORDS, decomposed_rel_pos, swinv2_log_coords, window_bias

__all__ = [
    "ALIBI_FORMS",
    "ATTN_SCALE_CONVENTIONS",
    "COMBINE_MODES",
    "DEBERTA_ARITHMETIC",
    "DEBERTA_TERMS",
    "DECOMPOSED_COORDS",
    "DETR_COORD_CONVENTIONS",
    "DETR_SINE_CONVENTIONS",
    "KERPLE_KINDS",
    "LAYOUTS",
    "LEARNED_OFFSETS",
    "MROPE_SECTION_ORDERS",
    "NAVIT_ARITHMETIC",
    "REL_SHIFT_CONVENTIONS",
    "REL_SINUSOID_CONVENTIONS",
    "RESIZE_MODES",
    "ROPE_2D_CONVENTIONS",
    "SCALING_TYPES",
    "SHAW_CONVENTIONS",
    "SINCOS_2D_CONVENTIONS",
    "SINUSOIDAL_CONVENTIONS",
    "RopeConfig",
    "RopeFrequencies",
    "__version__",
    "alibi_bias",
    "alibi_slopes",
    "apply_rope",
    "attention",
    "axial_angles",
    "bbox_embedding",
    "causal_mask",
    "deberta_bucket",
    "deberta_relative_index",
    "decomposed_rel_pos",
    "detr_coord_sine",
    "detr_sine_2d",
    "fourier_features",
    "fourier_grid",
    "grid_resize",
    "interpolate_table",
    "kerple_bias",
    "learned",
    "llama4_attn_scale",
    "mrope_angles",
    "mrope_position_ids",
    "mrope_slot_components",
    "navit_position_ids",
    "patch_grid_resize",
    "rel_attention_scores",
    "rel_shift",
    "rel_sinusoid_positions",
    "rel_sinusoid_table",
    "relative_positions",
    "rope_2d_cos_sin",
    "rope_config_from_hf",
    "rope_cos_sin",
    "rope_frequencies",
    "row_col_embedding",
    "sandwich_bias",
    "shaw_index",
    "shaw_logits",
    "shaw_table_rows",
    "shaw_values",
    "sincos_2d",
    "sinusoidal",
    "swinv2_log_coords",
    "t5_bias",
    "t5_bucket",
    "t5_bucket_thresholds",
    "t5_gated_bias",
    "t5_layout_bias",
    "t5_segment_bias",
    "t5_stream_buckets",
    "t5_udop_bias",
    "token_positions",
    "vision_position_ids",
    "window_bias",
    "xpos_scale",
]
