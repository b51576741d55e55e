"""rotary-embedding-torch: RotaryEmbedding accepts an odd dim and theta=1 silently.

Standalone (torch + rotary-embedding-torch 0.9.1; no posenc-ref).  Run:
python rotary_embedding_torch_validation.py

Found by the posenc-ref cases rope_frequencies/invalid/odd-dim and rope_frequencies/invalid/base-1
(the reference raises ValueError naming dim / base).
"""

import torch
from rotary_embedding_torch import RotaryEmbedding

odd = RotaryEmbedding(7)
print("RotaryEmbedding(7).freqs has", odd.freqs.numel(), "entries for 7 channels (3 pairs + 1 unrotated)")
flat = RotaryEmbedding(8, theta=1)
print("RotaryEmbedding(8, theta=1).freqs =", flat.freqs.tolist(), "(every pair at 1 rad/token)")
assert odd.freqs.numel() == 3 and torch.all(flat.freqs == 1), "fixed: inputs are validated"
