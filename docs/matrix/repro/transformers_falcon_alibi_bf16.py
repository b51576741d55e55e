"""Falcon's ALiBi bias is a bfloat16 value: slopes rounded to bf16, ``m * j`` in bf16 (transformers 5.24).

``transformers.models.falcon.modeling_falcon.build_alibi_tensor`` (``:176``) computes
BLOOM's slopes in float32 and then ``slopes[..., None].bfloat16() * arange_tensor``: the
slope is rounded to bfloat16 (8 significant bits, relative error up to 2**-9) and the
product with the integer key index is a bfloat16 too, cast to the requested dtype only at
the end.  BLOOM's copy (``bloom/modeling_bloom.py``) multiplies in float32.  Two things
follow, both visible below:

* slopes that are not powers of two change: ``2**-0.5 = 0.70710678`` becomes
  ``0.70703125`` (12 and 16 heads; every head of 20, 24, 40, 112 heads except the
  powers of two);
* ``m * j`` keeps 8 significant bits, so from ``j ~ 256 / m`` on neighbouring keys share a
  bias: at ``j = 65536`` a slope of 1/16 gives 4096 for every key up to ``65536 + 255``;
  the bias no longer tells keys apart.

This is the original model's own arithmetic, not a porting error: the remote code of
``tiiuae/falcon-7b`` (``modelling_RW.py``, ``build_alibi_tensor``, the ``alibi=True``
path of the RW models) has the same ``slopes[..., None].bfloat16() * arange_tensor``
line, which HF ported verbatim.  It is a precision class (a bfloat16 result), not a bug: the suite's golden
values are the exact bias, and float32 tolerances judge Falcon's bf16 values as failures;
posenc-ref's ``alibi_bias`` rounded to bf16 at the end is not the same value either,
because the slope is rounded before the product.  Nothing here asks HF to change it.

Run with torch and transformers installed: ``python transformers_falcon_alibi_bf16.py``.
Exits 1 while Falcon's bias differs from BLOOM's float32 bias (the rounding is present),
0 if it ever computes in float32.  Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers.models.bloom.modeling_bloom import build_alibi_tensor as bloom_alibi
from transformers.models.falcon.modeling_falcon import build_alibi_tensor as falcon_alibi

print(f"transformers {transformers.__version__}, torch {torch.__version__}")
heads = 12
mask = torch.ones(1, 8, dtype=torch.long)
falcon_slopes = falcon_alibi(mask, heads, torch.float32)[:, 0, 1]
bloom_slopes = bloom_alibi(mask, heads, torch.float32)[:, 0, 1]
print("BLOOM slopes :", [f"{v:.8f}" for v in bloom_slopes.tolist()[8:]])
print("Falcon slopes:", [f"{v:.8f}" for v in falcon_slopes.tolist()[8:]])
rounded = bloom_slopes.bfloat16().float()
print("Falcon's slopes are BLOOM's rounded to bfloat16:", torch.equal(falcon_slopes, rounded))

long_mask = torch.ones(1, 65536 + 12, dtype=torch.long)
row = falcon_alibi(long_mask, 4, torch.float32)[1, 0, 65536:]  # slope 1/16 (4 heads: 1/4, 1/16, 1/64, 1/256)
exact = bloom_alibi(long_mask, 4, torch.float32)[1, 0, 65536:]
print(f"keys 65536..65547, slope 1/16: Falcon {row.tolist()}")
print(f"                               BLOOM  {exact.tolist()}")
differs = not torch.equal(falcon_slopes, bloom_slopes) or not torch.equal(row, exact)
if differs:
    print("REPRODUCED: Falcon's ALiBi is a bfloat16 result (faithful to the original modelling_RW.py)")
sys.exit(1 if differs else 0)
