"""Timesformer keeps its stored position table for any frame with the pretrained patch count (5.24).

``TimesformerEmbeddings.forward`` (``timesformer/modeling_timesformer.py:100-116``) resizes
the space position table only when ``embeddings.size(1) != position_embeddings.size(1)``,
i.e. when the number of patches changed.  A frame with the pretrained patch count in
another shape (pretrained 224 x 224 with patch 16: 14 x 14 = 196 patches; a 112 x 448
frame: 7 x 28 = 196) is added the stored table as it is: patch (i, j) of the 7 x 28 grid
gets the embedding of patch (⌊(28 i + j) / 14⌋, (28 i + j) mod 14) of the 14 x 14 grid,
not of the nearest source patch that ``F.interpolate(mode="nearest")`` would pick.  ViT,
CLIP, SigLIP, DeiT, DINOv2 and Idefics return early only when ``height == width`` as well,
and so resize such a frame.

Here: a 4 x 4 table (patch 2, one class row), a frame of 2 x 8 patches (4 x 16 pixels).
The expected table is ``F.interpolate(grid, size=(2, 8), mode="nearest")`` (rows 0 and 2,
every column twice), what Timesformer itself computes for a 2 x 7 frame.

Suggested upstream issue text: "TimesformerEmbeddings: the space position embeddings are
not resized when a frame has the pretrained number of patches in another shape (e.g. 112 x
448 for a 224 x 224 model): the resize is skipped on `embeddings.size(1) ==
position_embeddings.size(1)`, so the stored 14 x 14 table is read as 7 x 28 and every patch
gets another patch's position. Comparing the patch grid (patch_height, patch_width) with
the stored (sqrt(N), sqrt(N)) instead of the token count fixes it."

Run with torch and transformers installed: ``python transformers_timesformer_same_count.py``.
Exits 1 while the bug is present, 0 once fixed.  Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers import TimesformerConfig
from transformers.models.timesformer.modeling_timesformer import TimesformerEmbeddings

GRID, PATCH, DIM = 4, 2, 3
config = TimesformerConfig(
    image_size=GRID * PATCH,
    patch_size=PATCH,
    num_channels=1,
    num_frames=1,
    hidden_size=DIM,
    num_attention_heads=1,
    attention_type="space_only",
)
module = TimesformerEmbeddings(config).double()
torch.manual_seed(0)
table = torch.randn(1, 1 + GRID * GRID, DIM, dtype=torch.float64)
with torch.no_grad():  # zero patch projection and class token: the output is the position table
    module.patch_embeddings.projection.weight.zero_()
    module.patch_embeddings.projection.bias.zero_()
    module.cls_token.zero_()
    module.position_embeddings.copy_(table)


def resized(rows: int, cols: int) -> torch.Tensor:
    grid = table[:, 1:].transpose(1, 2).reshape(1, DIM, GRID, GRID)
    grid = torch.nn.functional.interpolate(grid, size=(rows, cols), mode="nearest")
    return torch.cat((table[:, :1], grid.flatten(2).transpose(1, 2)), dim=1)


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
wrong = 0
with torch.no_grad():
    for rows, cols in [(2, 7), (2, 8), (8, 2), (3, 5)]:
        out = module(torch.zeros(1, 1, 1, rows * PATCH, cols * PATCH, dtype=torch.float64))
        diff = (out - resized(rows, cols)).abs().max().item()
        label = f"{rows} x {cols} patches" + (" (pretrained count)" if rows * cols == GRID * GRID else "")
        print(f"{label}: max |out - resized| = {diff:.3g}")
        wrong += diff > 1e-12
sys.exit(1 if wrong else 0)
