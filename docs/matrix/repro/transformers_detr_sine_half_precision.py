"""DETR's sine table in a half-precision model is ~20x less accurate than the table rounded once.

``DetrSinePositionEmbedding.build_sine_position_embedding`` (``detr/modeling_detr.py:317-357``) runs
in the dtype it is given, and ``DetrModel.forward`` gives it the model's (``dtype=pixel_values.dtype``,
``:1211``; Conditional DETR, Deformable DETR, Table Transformer, MaskFormer, Mask2Former and OneFormer
copy both).  In float16/bfloat16 the normalisation ``y / (y_last + 1e-6) * 2 pi`` (where 1e-6 is below
the format's resolution), ``dim_t = 10000 ** (2 floor(i/2) / F)`` and the angle ``y / dim_t`` are each
rounded to 11 (8) significant bits before the sine: on DETR's 25 x 38 feature map (800 x 1216 input,
F = 128) the largest error is 4.7e-3 in float16 and 3.8e-2 in bfloat16, where the float64 table
rounded once to the format is within 2.4e-4 (float16) and 2.0e-3 (bfloat16).  DAB-DETR and Grounding
DINO compute in float32 and are not affected.

Upstream issue (draft): "DETR-family sine position embeddings are computed in the model dtype: in
fp16/bf16 the cumsum, normalisation and dim_t lose ~20x the accuracy of the rounded result (max error
0.038 in bf16 on a 25 x 38 map).  Computing in float32 and casting at the end (as DAB-DETR and
Grounding DINO do) costs nothing measurable."

Run with torch and transformers installed.  Exits 1 while the half-precision error is more than
twice that of the rounded float64 table.  Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers.models.detr.modeling_detr import DetrSinePositionEmbedding

print(f"transformers {transformers.__version__}, torch {torch.__version__}")
shape, mask = (1, 1, 25, 38), torch.ones(1, 25, 38, dtype=torch.bool)
module = DetrSinePositionEmbedding(128, normalize=True)
exact = module(shape=shape, device="cpu", dtype=torch.float64, mask=mask)
worse = False
for dtype in (torch.float16, torch.bfloat16):
    hf = (module(shape=shape, device="cpu", dtype=dtype, mask=mask).double() - exact).abs().max().item()
    once = (exact.to(dtype).double() - exact).abs().max().item()
    print(f"{dtype}: HF in {dtype} errs by {hf:.3g}; the float64 table rounded once by {once:.3g}")
    worse |= hf > 2 * once
if worse:
    print("DIVERGENCE REPRODUCED: the half-precision table is computed in half precision")
    sys.exit(1)
sys.exit(0)
