"""RT-DETR's 2-D sincos table in transformers 5.24 is not the original's on non-square feature maps.

The original RT-DETR code (lyuwenyu/RT-DETR ``hybrid_encoder.py``
``build_2d_sincos_position_embedding``; kept verbatim in HF's OmDet-Turbo,
``omdet_turbo/modeling_omdet_turbo.py:705-720``) writes
``grid_w, grid_h = meshgrid(arange(w), arange(h), indexing="ij")``: rows are w-major (row ``j H + i``
holds column j, row i) and the blocks are ``[sin w | cos w | sin h | cos h]``.  HF's
``rt_detr/modeling_rt_detr.py:829-876`` (shared with ViT-MAE, RT-DETR-v2, D-FINE, DEIMv2,
PP-DocLayout) now writes ``grid_h, grid_w = meshgrid(arange(h), arange(w), indexing="ij")`` with
``[sin h | cos h | sin w | cos w]``: rows h-major.  On a square map the two tables are identical
(both are ``[sin a, cos a, sin b, cos b]`` for row ``a n + b``), which is why checkpoints trained at
640 x 640 are unaffected; on an H != W map (any non-square input with ``eval_size=None``) every row
but the first differs from the original model's.  HF's order matches the h-major flattening of the
features (``flatten(2)``), the original's does not: HF fixed a bug of the original, silently.

Upstream issue (draft): "RT-DETR 2-D sincos embedding differs from the original implementation on
non-square feature maps: build_2d_sinusoidal_position_embedding uses h-major rows, the original (and
OmDet-Turbo's copy) w-major ones; identical for square maps.  Intended?  Worth a note in the docs."

Run with torch and transformers installed.  Exits 1 while the tables differ on a non-square grid.
Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers.models.omdet_turbo.modeling_omdet_turbo import OmDetTurboHybridEncoder
from transformers.models.rt_detr.modeling_rt_detr import build_2d_sinusoidal_position_embedding

print(f"transformers {transformers.__version__}, torch {torch.__version__}")
original = OmDetTurboHybridEncoder.build_2d_sincos_position_embedding  # (width, height, embed_dim, ...)
square = (
    build_2d_sinusoidal_position_embedding(4, 4, 16, dtype=torch.float64)
    - original(4, 4, 16, dtype=torch.float64)[0]
)
print("4 x 4: max difference", square.abs().max().item())
hf = build_2d_sinusoidal_position_embedding(3, 5, 16, dtype=torch.float64)
orig = original(5, 3, 16, dtype=torch.float64)[0]
rows = (hf - orig).abs().amax(dim=1)
print(
    f"3 x 5: {int((rows > 1e-12).sum())} of {rows.numel()} rows differ, "
    f"max difference {rows.max().item():.3g}"
)
if rows.max() > 1e-12:
    print("DIVERGENCE REPRODUCED: HF's RT-DETR table is h-major, the original's w-major")
    sys.exit(1)
sys.exit(0)
