"""NanoChat rotates by -theta: a sign convention, not a bug (transformers 5.24).

``nanochat/modeling_nanochat.py:167-171`` defines ``rotate_half(x) = cat(x2, -x1)``, the
negative of Llama's ``cat(-x2, x1)``, and its ``apply_rotary_pos_emb`` uses it with Llama's
formula ``x * cos + rotate_half(x) * sin``.  So every pair (x_k, x_{k+D/2}) turns by -theta
where Llama turns it by +theta: NanoChat's rotation equals Llama's with ``sin`` negated.  The
docstring says so ("with flipped signs for NanoChat"), and Karpathy's nanochat computes the same
(``y1 = x1 cos + x2 sin``, ``y2 = -x1 sin + x2 cos``), so the weights were trained with it.

What a porter needs to know, checked here:

1. NanoChat's rotation of q equals Llama's ``apply_rotary_pos_emb`` with ``-sin`` (exactly).
2. It differs from Llama's with ``+sin`` (by about the size of q): a kernel that assumes the
   usual sign gives wrong outputs for NanoChat's weights.
3. The score ``q_m . k_n`` still depends only on ``n - m`` (a rotation by -theta is still a
   rotation): shifting both positions by the same amount leaves it unchanged.

This refutes the census's "likely bug": the scheme is relative and self-consistent; it is a
convention (RoPE by -theta) that the suite names in its diagnosis ("rotation by -theta (sin
negated)").  Suggested note for upstream docs (not an issue): "NanoChat applies RoPE with the
opposite rotation direction to Llama (rotate_half returns cat(x2, -x1)); kernels and ports must
negate sin."

Run with torch and transformers installed: ``python transformers_nanochat_rotation_sign.py``.
Exits 0 when all three hold (the convention as documented), 1 otherwise.  Plain torch, no posenc-ref.
"""

import sys

import torch
from transformers.models.llama.modeling_llama import apply_rotary_pos_emb as llama_apply
from transformers.models.nanochat.modeling_nanochat import apply_rotary_pos_emb as nanochat_apply

torch.manual_seed(0)
D, L = 8, 6
inv_freq = 1.0 / (10000.0 ** (torch.arange(0, D, 2, dtype=torch.float64) / D))


def table(positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    angles = positions[:, None].double() * inv_freq
    angles = torch.cat([angles, angles], dim=-1)[None]  # [1, L, D]
    return angles.cos(), angles.sin()


q = torch.randn(1, 1, L, D, dtype=torch.float64)
k = torch.randn(1, 1, L, D, dtype=torch.float64)
cos, sin = table(torch.arange(L))
nano_q, nano_k = nanochat_apply(q, k, cos, sin)
neg_q, _ = llama_apply(q, k, cos, -sin)
pos_q, _ = llama_apply(q, k, cos, sin)
same_as_negated = torch.allclose(nano_q, neg_q, rtol=0, atol=1e-15)
differs_from_llama = (nano_q - pos_q).abs().max().item()
print(f"NanoChat == Llama with -sin: {same_as_negated}; NanoChat - Llama(+sin): max {differs_from_llama:.3f}")

cos5, sin5 = table(torch.arange(L) + 5)  # every position shifted by 5
shifted_q, shifted_k = nanochat_apply(q, k, cos5, sin5)
scores = nano_q @ nano_k.transpose(-1, -2)
shifted = shifted_q @ shifted_k.transpose(-1, -2)
relative = torch.allclose(scores, shifted, rtol=0, atol=1e-12)
print(f"q.k unchanged when every position shifts by 5 (relative only): {relative}")
sys.exit(0 if same_as_negated and differs_from_llama > 0.1 and relative else 1)
