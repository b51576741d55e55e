"""YaRN ignores a per-layer ``truncate`` (transformers 5.24).

``_compute_yarn_parameters`` reads every key from the layer's dict
(``rope_parameters_dict = config.rope_parameters[layer_type]``) except one:
``truncate = config.rope_parameters.get("truncate", True)``.  With per-layer RoPE
parameters (``{"full_attention": {...}, "sliding_attention": {...}}``) the top-level dict
has no ``truncate``, so ``truncate: false`` (gpt-oss's setting) is silently replaced by
the default ``True``: the correction range is floored/ceiled (8.09/17.40 -> 8/18 for
gpt-oss) and the frequencies differ from the same parameters given flat.

Run with torch and transformers installed.  Exits 1 while the bug is present.
"""

import sys

import torch
import transformers
from transformers import Gemma3TextConfig, LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS

yarn = {  # gpt-oss's rope parameters
    "rope_type": "yarn",
    "factor": 32.0,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "original_max_position_embeddings": 4096,
    "rope_theta": 150000.0,
    "truncate": False,
}
shape = {"head_dim": 64, "hidden_size": 64, "num_attention_heads": 1, "num_key_value_heads": 1}
flat = LlamaConfig(**shape, max_position_embeddings=131072, rope_parameters=dict(yarn))
nested = Gemma3TextConfig(
    **shape,
    max_position_embeddings=131072,
    num_hidden_layers=2,
    layer_types=["full_attention", "sliding_attention"],
    rope_parameters={"full_attention": dict(yarn), "sliding_attention": {"rope_type": "default"}},
)
flat_freq, _ = ROPE_INIT_FUNCTIONS["yarn"](flat)
nested_freq, _ = ROPE_INIT_FUNCTIONS["yarn"](nested, layer_type="full_attention")
truncated, _ = ROPE_INIT_FUNCTIONS["yarn"](LlamaConfig(**shape, rope_parameters={**yarn, "truncate": True}))
print(f"transformers {transformers.__version__}, torch {torch.__version__}")
print("per-layer truncate=False equals flat truncate=False:", torch.equal(nested_freq, flat_freq))
print("per-layer truncate=False equals truncate=True:      ", torch.equal(nested_freq, truncated))
if not torch.equal(nested_freq, flat_freq):
    worst = ((nested_freq - flat_freq).abs() / flat_freq).max().item()
    print(f"BUG REPRODUCED: per-layer YaRN used truncate=True (max relative difference {worst:.3g})")
    sys.exit(1)
