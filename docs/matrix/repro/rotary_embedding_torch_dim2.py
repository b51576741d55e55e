"""rotary-embedding-torch: RotaryEmbedding(dim=2) raises ZeroDivisionError (a valid one-pair rotary dim).

Standalone (torch + rotary-embedding-torch 0.9.1; no posenc-ref).  Run:  python rotary_embedding_torch_dim2.py

Cause: __init__ always evaluates ``theta *= theta_rescale_factor ** (dim / (dim - 2))``, even with the
default ``theta_rescale_factor=1.0``, and ``dim - 2`` is 0 for ``dim=2``.  Found by the posenc-ref case
``rope_frequencies/default/d2`` (expected inv_freq ``[1.0]``).
"""

import torch
from rotary_embedding_torch import RotaryEmbedding

try:
    rot = RotaryEmbedding(2)
except ZeroDivisionError as exc:
    print(f"RotaryEmbedding(2) raised ZeroDivisionError: {exc}  <- the bug")
else:
    print("fixed: freqs =", rot.freqs.tolist())
    assert torch.equal(rot.freqs.detach(), torch.tensor([1.0]))
    raise SystemExit(1)
