"""rotary-embedding-torch: with use_xpos=True, cached-key decoding gives different logits than a full pass.

Standalone (torch + rotary-embedding-torch 0.9.1; no posenc-ref).  Run:
python rotary_embedding_torch_xpos_cached_keys.py

xPos scales q at position n by zeta**((n - c)/B) and k at m by zeta**(-(m - c)/B), so q.k carries
zeta**((n - m)/B) whatever the centre c, *provided q and k use the same c*.  rotate_queries_and_keys
centres both at len(seq)//2.  rotate_queries_with_cached_keys (the decoding path added for issue #27)
calls get_scale(seq[-q_len:]) for q and get_scale(seq) for k, and get_scale centres at len(t)//2 of
*its own* argument: q uses c = q_len//2, k uses c = k_len//2.  The last query's logits are then
multiplied per channel pair by zeta**((k_len//2 - q_len//2)/B), which grows with the cache length.
"""

import torch
from rotary_embedding_torch import RotaryEmbedding

torch.manual_seed(0)
dim, length = 16, 1024
rot = RotaryEmbedding(dim, use_xpos=True).double()
q = torch.randn(1, 1, length, dim, dtype=torch.float64)
k = torch.randn(1, 1, length, dim, dtype=torch.float64)

rq, rk = rot.rotate_queries_and_keys(q, k)  # training: whole sequence
full = (rq[..., -1:, :] * rk).sum(-1)  # logits of the last query
dq, dk = rot.rotate_queries_with_cached_keys(q[..., -1:, :], k)  # decoding: one query, cached keys
cached = (dq * dk).sum(-1)
rel = ((cached - full).abs().max() / full.abs().max()).item()
print(f"last-query logits, full pass vs cached keys: max relative difference {rel:.3g}")
assert rel > 1e-3, "fixed: the two paths agree"
print("BUG: xPos logits depend on the decoding path (q and k centred differently)")
