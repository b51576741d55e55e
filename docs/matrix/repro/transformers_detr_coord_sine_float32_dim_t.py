"""``encode_sinusoidal_position_embedding`` is float32-accurate on float64 input (transformers 5.24).

``transformers.models.conditional_detr.modeling_conditional_detr.encode_sinusoidal_position_embedding``
(``:1146-1179``; copied verbatim into DAB-DETR, Grounding DINO, MM-Grounding-DINO, LW-DETR and RF-DETR)
builds ``dim_t = temperature ** (2 * (arange(F) // 2) / F)`` with ``dtype=torch.float32`` whatever the
dtype of ``pos_tensor``, then divides the float64 coordinates by it: a float64 model's query
embeddings carry float32's rounding of every frequency (relative error up to 2**-24 of the angle,
2e-7 absolute here, F = 128, angles up to 2 pi), where the same formula in float64 is exact to 1e-16.
Deformable DETR's ``get_proposal_pos_embed`` does the same on purpose ("to avoid overflow ... in fp16")
and casts back.  In a float32 or half-precision model nothing changes.

Upstream issue (draft): "encode_sinusoidal_position_embedding: dim_t is float32 for float64 inputs.
dim_t = torch.arange(num_pos_feats, dtype=torch.float32, ...) should follow pos_tensor.dtype (or at
least float64 when pos_tensor is float64); a float64 model gets float32-accurate embeddings
(max error 2e-7 against the float64 formula)."

Run with torch and transformers installed.  Exits 1 while the error exceeds float64 accuracy.
Plain torch, no posenc-ref.
"""

import math
import sys

import torch
import transformers
from transformers.models.conditional_detr.modeling_conditional_detr import (
    encode_sinusoidal_position_embedding,
)


def reference(coords: torch.Tensor, feats: int, temperature: float = 10000.0) -> torch.Tensor:
    """The same formula in float64: y block first, interleaved sin/cos of 2 pi c / T**(2 floor(i/2)/F)."""
    dim_t = temperature ** (2 * (torch.arange(feats, dtype=torch.float64) // 2) / feats)
    blocks = []
    for c in coords.unbind(-1):
        e = c[..., None] * 2 * math.pi / dim_t
        blocks.append(torch.stack((e[..., 0::2].sin(), e[..., 1::2].cos()), dim=-1).flatten(-2))
    blocks[0], blocks[1] = blocks[1], blocks[0]
    return torch.cat(blocks, dim=-1)


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
coords = torch.tensor([[0.25, 0.75], [0.5, 0.125], [1.0, 0.9375]], dtype=torch.float64)
hf = encode_sinusoidal_position_embedding(coords, 128)
error = (hf - reference(coords, 128)).abs().max().item()
print(f"output dtype {hf.dtype}; max |HF - float64 formula| = {error:.3g}")
if error > 1e-12:
    print("DIVERGENCE REPRODUCED: float64 input, float32-accurate output (dim_t is float32)")
    sys.exit(1)
sys.exit(0)
