"""x-transformers: RotaryEmbedding(dim=2) raises ZeroDivisionError (a valid one-pair rotary dim).

Standalone (torch + x-transformers 2.31.10; no posenc-ref).  Run:  python x_transformers_dim2.py

Cause: ``RotaryEmbedding.__init__`` always evaluates ``base *= base_rescale_factor ** (dim / (dim - 2))``,
even with the default ``base_rescale_factor=1.``, and ``dim - 2`` is 0 for ``dim=2``.  Found by the
posenc-ref case ``rope_frequencies/default/d2`` (expected inv_freq ``[1.0]``, RoPE's
``theta_i = base**(-2i/d)`` at ``i = 0``).  Exits 1 while the bug is there, 0 once fixed.
"""

import math

import torch
from x_transformers.x_transformers import RotaryEmbedding, apply_rotary_pos_emb

BASE = 10000.0
expected = [BASE ** (-2 * i / 2) for i in range(1)]  # the paper's theta_i = base**(-2i/d), d = 2
try:
    rot = RotaryEmbedding(2, base=BASE)
except ZeroDivisionError as exc:
    print(f"RotaryEmbedding(2) raised ZeroDivisionError: {exc}  <- the bug")
    print(
        f"expected inv_freq {expected}: one pair rotated by m * 1.0 (e.g. m = 3: cos 3 = {math.cos(3):.6f})"
    )
    raise SystemExit(1) from None
print("fixed: inv_freq =", rot.inv_freq.tolist(), "expected", expected)
x = torch.tensor([[[1.0, 0.0]]])
freqs, _ = rot(torch.tensor([3]))
print(
    "rotated [1, 0] at m = 3:", apply_rotary_pos_emb(x, freqs).flatten().tolist(), [math.cos(3), math.sin(3)]
)
