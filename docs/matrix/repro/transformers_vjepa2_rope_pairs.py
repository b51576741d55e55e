"""V-JEPA 2's 3-D RoPE rotates each channel pair by two different angles (transformers 5.24).

``transformers.models.vjepa2.modeling_vjepa2.rotate_queries_or_keys`` (used per axis
by ``VJEPA2RopeAttention.apply_rotary_embeddings`` on the depth, height and width
thirds of the head) pairs channels ``(2k, 2k+1)`` (``unflatten(-1, (-1, 2))``, the
interleaved layout) but duplicates cos/sin as ``repeat(1, 1, 1, 2)`` (the half layout,
``[c_0 .. c_{D/2-1}, c_0 .. c_{D/2-1}]``).  Channel ``2k`` then uses the angle of
frequency ``2k mod D/2`` and channel ``2k+1`` that of ``2k+1 mod D/2``: the map is not a
rotation (norms change), and ``q . k`` of two rotated vectors depends on the absolute
positions, not only on their offset.

This is faithful to the original: facebookresearch/vjepa2 ``src/models/utils/modules.py``
keeps the same two ``repeat`` lines with the note "This expansion has a subtle bug where
frequencies are duplicated across the vector pair.  Fixing the bug would break
compatibility with the pretrained model" (its PR #15 gives the ``repeat_interleave(2)``
fix, commented out).  So it is the pretrained model's convention, not a porting error:
the census' suspicion is confirmed, and nothing here asks HF to change it.  posenc-ref's
``apply_rope`` (a true rotation of each pair) cannot express it.

Run with torch and transformers installed: ``python transformers_vjepa2_rope_pairs.py``.
Exits 1 while the mismatch is present, 0 if the pairs ever become rotations.  Plain
torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers.models.vjepa2.modeling_vjepa2 import rotate_queries_or_keys

torch.manual_seed(0)
print(f"transformers {transformers.__version__}, torch {torch.__version__}")
D = 8  # one axis' share of the head (a multiple of 2)
x = torch.randn(1, 1, 1, D, dtype=torch.float64)
q, k = torch.randn(1, 1, 1, D, dtype=torch.float64), torch.randn(1, 1, 1, D, dtype=torch.float64)


def rotate(v: torch.Tensor, p: float) -> torch.Tensor:
    return rotate_queries_or_keys(v, pos=torch.tensor([p], dtype=torch.float64))


def true_rotation(v: torch.Tensor, p: float) -> torch.Tensor:
    """Pairs (2k, 2k+1) rotated by p * omega_k, omega_k = 10000**(-k/(D/2)) (the repeat_interleave fix)."""
    omega = 1.0 / 10000 ** (torch.arange(D // 2, dtype=torch.float64) / (D / 2))
    a = (p * omega).repeat_interleave(2)
    pairs = torch.stack((-v[..., 1::2], v[..., 0::2]), dim=-1).flatten(-2)
    return v * a.cos() + pairs * a.sin()


norm_in, norm_out = x.norm().item(), rotate(x, 3.0).norm().item()
print(f"|x| = {norm_in:.12f}, |rotate(x, 3)| = {norm_out:.12f} (a rotation keeps it)")
near = (rotate(q, 2.0) * rotate(k, 0.0)).sum().item()
far = (rotate(q, 7.0) * rotate(k, 5.0)).sum().item()
print(f"q.k at positions (2, 0): {near:.12f}; at (7, 5), the same offset: {far:.12f}")
fixed_near = (true_rotation(q, 2.0) * true_rotation(k, 0.0)).sum().item()
fixed_far = (true_rotation(q, 7.0) * true_rotation(k, 5.0)).sum().item()
print(f"with rotated pairs (repeat_interleave): {fixed_near:.12f} and {fixed_far:.12f}")
first_pair_ok = torch.allclose(rotate(x, 3.0)[..., :2], true_rotation(x, 3.0)[..., :2])
print("channels 0, 1 (angles p omega_0 and p omega_1) equal a rotation by p omega_0:", first_pair_ok)
mismatch = abs(norm_out - norm_in) > 1e-9 or abs(near - far) > 1e-9
if mismatch:
    print("REPRODUCED: channel pairs are rotated with two different frequencies (not a rotation)")
sys.exit(1 if mismatch else 0)
