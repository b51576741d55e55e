"""Idefics ``interpolate_pos_encoding`` moves the stored table at a non-square image of the same grid (5.24).

Every HF vision family returns the stored position table when
``num_patches == num_positions and height == width``; otherwise it resizes the patch grid
to ``(height // patch, width // patch)``.  ViT, CLIP, SigLIP, DeiT and DINOv2 resize with
``size=``, so an image whose patch grid equals the stored one gives the stored table back
whether it is square or not (a bicubic resize to the same size has weights 0 and 1).
Idefics (``idefics/vision.py:93-140``, after DINO's ``vision_transformer.py``) resizes with
``scale_factor=((h + 0.1) / n, (w + 0.1) / n)``; with ``scale_factor`` F.interpolate steps
the source coordinate by ``1 / scale_factor = n / (n + 0.1)``, not ``n / h = 1``, so at a
non-square image of the same grid (16 x 17 pixels, patch 4: 4 x 4 patches) the table is
resampled (source rows ``(d + 1/2) 4/4.1 - 1/2``, up to 0.09 rows off, read bicubically),
while at 16 x 16 it is the stored one: the same patches get other position embeddings
because of one column of pixels that the patch embedding drops.

Suggested upstream issue text: "IdeficsVisionEmbeddings.interpolate_pos_encoding: at an
image whose patch grid equals the pretrained one but is not square in pixels (e.g. 224 x
230 with patch 14), the early return is skipped and `F.interpolate(scale_factor=(h + 0.1)
/ n)` resamples the table with step n / (n + 0.1), so the embeddings differ from the
square-image ones (max abs difference below). Passing `size=(h, w)` (as ViT does) or
comparing patch grids instead of pixel sizes in the early return gives the stored table."

Run with torch and transformers installed: ``python transformers_idefics_same_grid.py``.
Exits 1 while the table moves, 0 once fixed.  Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers import ViTConfig
from transformers.models.idefics.configuration_idefics import IdeficsVisionConfig
from transformers.models.idefics.vision import IdeficsVisionEmbeddings
from transformers.models.vit.modeling_vit import ViTEmbeddings

GRID, PATCH, DIM = 4, 4, 3
torch.manual_seed(0)
table = torch.randn(1 + GRID * GRID, DIM, dtype=torch.float64)
common = {"image_size": GRID * PATCH, "patch_size": PATCH, "num_channels": 1}

idefics = IdeficsVisionEmbeddings(IdeficsVisionConfig(embed_dim=DIM, **common)).double()
vit = ViTEmbeddings(ViTConfig(hidden_size=DIM, num_attention_heads=1, **common)).double()
with torch.no_grad():
    idefics.position_embedding.weight.copy_(table)
    vit.position_embeddings.copy_(table[None])
    embeddings = torch.zeros(1, 1 + GRID * GRID, DIM, dtype=torch.float64)
    height = GRID * PATCH
    results = {}
    for width in (height, height + 1):  # both give width // PATCH = GRID patches per row
        results[("idefics", width)] = idefics.interpolate_pos_encoding(embeddings, height, width)[0]
        results[("vit", width)] = vit.interpolate_pos_encoding(embeddings, height, width)[0]

print(f"transformers {transformers.__version__}, torch {torch.__version__}")
moved = 0
for (family, width), out in results.items():
    diff = (out - table).abs().max().item()
    grid = f"{GRID} x {GRID} patches"
    print(f"{family:8s} image {height} x {width} ({grid}): max |table - stored| = {diff:.3g}")
    moved += family == "idefics" and diff > 1e-12
sys.exit(1 if moved else 0)
