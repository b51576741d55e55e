"""YaRN's ``truncate: False`` is ignored for every model with per-layer-type RoPE (transformers 5.24).

``modeling_rope_utils._compute_yarn_parameters`` reads each parameter from
``rope_parameters_dict = config.rope_parameters[layer_type]`` (``:411``), except one:
``truncate = config.rope_parameters.get("truncate", True)`` (``:468``) reads the *top-level*
dict.  For a model whose RoPE is configured per layer type (Gemma 3, Gemma 3n, ModernBERT,
OLMo 3, T5Gemma 2, MiMo-V2-Flash, LFM3, ... : ``rope_parameters = {"sliding_attention": {...},
"full_attention": {...}}``) that dict has no ``truncate`` key, so ``truncate`` is always True:
a YaRN config with ``truncate: False`` (GPT-OSS's choice, which keeps the correction range
unrounded) gets the floored/ceiled range instead, and different frequencies in the ramp.

Here: the same YaRN parameters (GPT-OSS's: factor 32, original 4096, beta 32/1, truncate False,
base 150000, head_dim 64) through Llama's rotary embedding (a flat ``rope_parameters``) and
through Gemma 3's (the same dict under each layer type).  Llama honours ``truncate: False``;
Gemma 3's inverse frequencies differ from Llama's (max 2.2e-4) and equal Llama's with
``truncate: True``.

Suggested upstream issue text: "_compute_yarn_parameters reads `truncate` from
`config.rope_parameters` instead of `rope_parameters_dict` (modeling_rope_utils.py, the line
`truncate = config.rope_parameters.get("truncate", True)`). For per-layer-type configs
(Gemma 3, ModernBERT, OLMo 3, ...) `config.rope_parameters` is keyed by layer type, so
`truncate: False` is silently ignored and the YaRN correction range is always rounded. Reading
`rope_parameters_dict.get("truncate", True)`, as every other YaRN key is read, fixes it."

Run with torch and transformers installed: ``python transformers_yarn_truncate_layer_types.py``.
Exits 1 while the bug is present, 0 once fixed.  Plain torch, no posenc-ref.
"""

import sys
import warnings

warnings.filterwarnings("ignore")

from transformers import Gemma3TextConfig, LlamaConfig  # noqa: E402
from transformers.models.gemma3.modeling_gemma3 import Gemma3RotaryEmbedding  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding  # noqa: E402

YARN = {
    "rope_type": "yarn",
    "rope_theta": 150000.0,
    "factor": 32.0,
    "original_max_position_embeddings": 4096,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
}
SHAPE = {"head_dim": 64, "hidden_size": 64, "num_attention_heads": 1, "max_position_embeddings": 131072}


def llama(truncate: bool):
    config = LlamaConfig(**SHAPE, rope_parameters={**YARN, "truncate": truncate})
    return LlamaRotaryEmbedding(config).inv_freq


per_layer = {t: {**YARN, "truncate": False} for t in ("sliding_attention", "full_attention")}
gemma = Gemma3RotaryEmbedding(Gemma3TextConfig(**SHAPE, num_key_value_heads=1, rope_parameters=per_layer))
got = gemma.full_attention_inv_freq
untruncated, truncated = llama(False), llama(True)
print(f"Gemma 3 (truncate False) vs Llama (truncate False): max {(got - untruncated).abs().max().item():.3g}")
print(f"Gemma 3 (truncate False) vs Llama (truncate True):  max {(got - truncated).abs().max().item():.3g}")
sys.exit(1 if (got - untruncated).abs().max().item() > 0 else 0)
