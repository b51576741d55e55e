"""BEiT's relative position bias is wrong for non-square windows, even unresized (transformers 5.24).

``BeitRelativePositionBias.forward(window_size)`` (``models/beit/modeling_beit.py:220-265``)
resizes the sub-table of ``(2Wh - 1)(2Ww - 1)`` offsets to the current window on every call:

    old_sub_table.reshape(1, old_width, old_height, -1).permute(0, 3, 1, 2)
    interpolate(..., size=(new_height, new_width), mode="bilinear")

The table's rows are height-major (row ``(dh + Wh - 1)(2Ww - 1) + (dw + Ww - 1)``, the index
``generate_relative_position_index`` builds), so the grid is ``(old_height, old_width)``, not
``(old_width, old_height)``.  For a square window both readings coincide and the same-size
bilinear resize is the identity; for ``Wh != Ww`` the rows are regridded and resampled, and
the bias of every token pair moves, even when the window is the pretrained one.
``Data2VecVisionRelativePositionBias`` is a copy.  The reference (timm's
``beit.py`` ``_get_rel_pos_bias``, Swin's gather) is ``table[index]``.

Upstream issue text: "BeitRelativePositionBias: the per-forward resize reshapes the
height-major sub-table as (old_width, old_height) (modeling_beit.py:237); for non-square
windows the bias differs from relative_position_bias_table[relative_position_index] even
without any resize (window == pretrained window).  Suggested fix: reshape(1, old_height,
old_width, -1), and skip the interpolation when the window is unchanged."

Run with torch and transformers installed.  Exits 1 while the bug is present.  Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers import BeitConfig, Data2VecVisionConfig
from transformers.models.beit.modeling_beit import BeitRelativePositionBias
from transformers.models.data2vec.modeling_data2vec_vision import Data2VecVisionRelativePositionBias


def gather(module, window):
    """The reference: table[index] with HF's own index, as [heads, N + 1, N + 1]."""
    index = module.generate_relative_position_index(window).view(-1)
    n = window[0] * window[1] + 1
    return module.relative_position_bias_table[index].view(n, n, -1).permute(2, 0, 1)


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
wrong = 0
for window in [(3, 3), (2, 3), (3, 2), (4, 6)]:
    for name, make in [
        (
            "beit",
            lambda w: BeitRelativePositionBias(
                BeitConfig(image_size=list(w), patch_size=1, num_attention_heads=2)
            ),
        ),
        (
            "data2vec-vision",
            lambda w: Data2VecVisionRelativePositionBias(
                Data2VecVisionConfig(image_size=list(w), patch_size=1, num_attention_heads=2), window_size=w
            ),
        ),
    ]:
        module = make(window)
        with torch.no_grad():
            rows = module.relative_position_bias_table.shape[0]
            module.relative_position_bias_table.copy_(torch.arange(rows * 2.0).view(rows, 2))
            got, want = module(window)[0], gather(module, window)
        err = (got - want).abs().max().item()
        bad = err > 1e-5
        wrong += bad
        print(f"{'BUG ' if bad else 'ok  '} {name} window {window}: max |forward - table[index]| = {err:.4g}")
sys.exit(1 if wrong else 0)
