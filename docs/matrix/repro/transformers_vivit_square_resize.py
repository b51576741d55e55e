"""ViViT never resizes its position table for a square frame of another size (transformers 5.24).

``VivitEmbeddings.interpolate_pos_encoding`` (``vivit/modeling_vivit.py:87-124``) returns the
stored table early when ``num_patches == num_positions and height == width``, but takes
``num_patches`` from ``self.patch_embeddings.num_patches`` -- the patch count of the configured
image size -- instead of from the ``embeddings`` it is given, as ViT does (``num_patches =
embeddings.shape[1] - 1``, ``vit/modeling_vit.py:99``).  The condition is then true for every
square input, so a square image of any size gets the pretrained table unresized; in
``forward(pixel_values, interpolate_pos_encoding=True)`` the addition ``embeddings +
position_embeddings`` fails with a shape mismatch (a 448 x 448 video on a 224 x 224 model).
Non-square frames are resized correctly (the ``height == width`` test fails).

Here: one frame, tubelets 1 x 2 x 2, a 4 x 4 table with a class row; a square 6 x 6 frame
(12 x 12 pixels).  The expected table is ``F.interpolate(grid, size=(6, 6), mode="bicubic",
align_corners=False)`` -- what ViViT itself returns for a 6 x 7 frame.

Suggested upstream issue text: "VivitEmbeddings.interpolate_pos_encoding does not interpolate
for square inputs: its early return compares the configured `self.patch_embeddings.num_patches`
(not the input's patch count) with the table size, so for any square image it returns the
pretrained position embeddings unchanged and `forward(..., interpolate_pos_encoding=True)`
raises a size mismatch for a 448 x 448 input. Using `num_patches = embeddings.shape[1] - 1`
as ViTEmbeddings does fixes it."

Run with torch and transformers installed: ``python transformers_vivit_square_resize.py``.
Exits 1 while the bug is present, 0 once fixed.  Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers import VivitConfig
from transformers.models.vivit.modeling_vivit import VivitEmbeddings

GRID, PATCH, DIM = 4, 2, 3
config = VivitConfig(
    image_size=GRID * PATCH,
    num_frames=1,
    tubelet_size=[1, PATCH, PATCH],
    num_channels=1,
    hidden_size=DIM,
    num_attention_heads=1,
)
module = VivitEmbeddings(config).double()
torch.manual_seed(0)
table = torch.randn(1, 1 + GRID * GRID, DIM, dtype=torch.float64)
with torch.no_grad():
    module.position_embeddings.copy_(table)


def resized(rows: int, cols: int) -> torch.Tensor:
    grid = table[:, 1:].reshape(1, GRID, GRID, DIM).permute(0, 3, 1, 2)
    grid = torch.nn.functional.interpolate(grid, size=(rows, cols), mode="bicubic", align_corners=False)
    return torch.cat((table[:, :1], grid.permute(0, 2, 3, 1).reshape(1, -1, DIM)), dim=1)


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
wrong = 0
with torch.no_grad():
    for rows, cols in [(6, 7), (6, 6), (3, 3)]:
        embeddings = torch.zeros(1, 1 + rows * cols, DIM, dtype=torch.float64)
        out = module.interpolate_pos_encoding(embeddings, rows * PATCH, cols * PATCH)
        if out.shape != (1, 1 + rows * cols, DIM):
            print(f"{rows} x {cols} patches: table of {out.shape[1]} rows, expected {1 + rows * cols}")
            wrong += 1
            continue
        diff = (out - resized(rows, cols)).abs().max().item()
        print(f"{rows} x {cols} patches: max |out - resized| = {diff:.3g}")
        wrong += diff > 1e-12
    video = torch.zeros(1, 1, 1, 6 * PATCH, 6 * PATCH, dtype=torch.float64)
    try:
        module(video, interpolate_pos_encoding=True)
    except RuntimeError as exc:
        print(f"forward(6 x 6 frame, interpolate_pos_encoding=True): RuntimeError: {exc}")
        wrong += 1
sys.exit(1 if wrong else 0)
