"""posenc-ref: reference implementations of transformer positional encodings.

Every function is written against the Python array API standard and runs
unchanged on NumPy, CuPy, MLX, and (through array-api-compat) PyTorch, JAX and
Dask.  See README.md and the documentation for the conventions each option
matches.
"""

from __future__ import annotations

__version__ = "0.1.0"

# Each family module adds its public names here, one import line per module.
# --- absolute ---
from .learned import LEARNED_OFFSETS, interpolate_table, learned, token_positions
from .sinusoidal import SINUSOIDAL_CONVENTIONS, sinusoidal
# --- RoPE ---
from .rope import LAYOUTS, apply_rope, rope_cos_sin, xpos_scale
from .rope_config import RopeConfig, rope_config_from_hf
from .rope_scaling import SCALING_TYPES, RopeFrequencies, rope_frequencies
# --- relative / bias ---
from .alibi import ALIBI_FORMS, alibi_bias, alibi_slopes
from .attention import attention
from .bias_extra import KERPLE_KINDS, kerple_bias, sandwich_bias
from .mrope import (
    MROPE_LAYOUTS,
    axial_angles,
    mrope_angles,
    mrope_position_ids,
    mrope_slot_components,
    vision_position_ids,
)
from .nope import causal_mask, llama4_attn_scale
from .relative import SHAW_CONVENTIONS, relative_positions, shaw_index, shaw_logits, shaw_table_rows, shaw_values
from .t5 import t5_bias, t5_bucket, t5_bucket_thresholds

__all__ = [
    "__version__",
    "LEARNED_OFFSETS",
    "SINUSOIDAL_CONVENTIONS",
    "interpolate_table",
    "learned",
    "sinusoidal",
    "token_positions",
    "ALIBI_FORMS",
    "KERPLE_KINDS",
    "MROPE_LAYOUTS",
    "SHAW_CONVENTIONS",
    "alibi_bias",
    "alibi_slopes",
    "attention",
    "axial_angles",
    "causal_mask",
    "kerple_bias",
    "llama4_attn_scale",
    "mrope_angles",
    "mrope_position_ids",
    "mrope_slot_components",
    "relative_positions",
    "sandwich_bias",
    "shaw_index",
    "shaw_logits",
    "shaw_table_rows",
    "shaw_values",
    "t5_bias",
    "t5_bucket",
    "t5_bucket_thresholds",
    "vision_position_ids",
    "LAYOUTS",
    "SCALING_TYPES",
    "RopeConfig",
    "RopeFrequencies",
    "apply_rope",
    "rope_cos_sin",
    "rope_config_from_hf",
    "rope_frequencies",
    "xpos_scale",
]
