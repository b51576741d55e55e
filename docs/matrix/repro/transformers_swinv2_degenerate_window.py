"""Swin-V2's log-spaced coordinates for windows with a side of 1 (transformers 5.24).

``Swinv2SelfAttention.create_coords_table_and_index`` (``models/swinv2/modeling_swinv2.py:457-476``)
divides the relative coordinates by ``pretrained_window_size - 1`` when
``pretrained_window_size[0] > 0``, else by ``window_size - 1`` when ``window_size[0] > 1``,
then maps ``x -> sign(8x) log2(1 + |8x|) / 3``.  Only the first side is tested:

* a 1 x 1 window skips the division: zeros (the only offset is 0; harmless);
* a ``(1, Ww)`` window skips it too: the width coordinates are not normalised to [-8, 8]
  (``log2(1 + 8 |dw|) / 3`` instead of ``log2(1 + 8 |dw| / (Ww - 1)) / 3``);
* an ``(Wh, 1)`` window divides the width by 0: NaN in every width coordinate;
* a pretrained side of 1 divides by 0: -inf, NaN, +inf.

The NaN and inf coordinates go through the CPB MLP into the attention logits.
``Swin2SRSelfAttention`` is a copy.  The original (microsoft/Swin-Transformer
``swin_transformer_v2.py``) has no guard at all (1 x 1 gives NaN); posenc-ref rejects each
of these windows with a ValueError.

Upstream issue text: "Swinv2: create_coords_table_and_index checks only window_size[0] > 1
before dividing by window_size - 1 (modeling_swinv2.py:468-472); an (Wh, 1) window or a
pretrained_window_size with a side of 1 gives NaN / inf relative coordinates, and a (1, Ww)
window leaves the width unnormalised.  Suggested: normalise each axis whose side is > 1
(leave a side of 1 at 0) or raise a ValueError."

Run with torch and transformers installed.  Exits 1 while any case gives NaN/inf or an
unnormalised axis.  Plain torch, no posenc-ref.
"""

import math
import sys

import torch
import transformers
from transformers import Swin2SRConfig, Swinv2Config
from transformers.models.swin2sr.modeling_swin2sr import Swin2SRSelfAttention
from transformers.models.swinv2.modeling_swinv2 import Swinv2SelfAttention


def expected_axis(side: int, norm: int) -> list[float] | None:
    """Swin-V2 eq. 4 on one axis (a side of 1 has only offset 0 -> 0); None: no value (norm side 1)."""
    if side == 1:
        return [0.0]
    if norm == 1:
        return None
    out = []
    for d in range(-(side - 1), side):
        x = 8 * d / (norm - 1)
        out.append(math.copysign(math.log2(1 + abs(x)) / 3, x) if x else 0.0)
    return out


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
bad = 0
for window, pretrained in [
    ((4, 4), (0, 0)),
    ((1, 1), (0, 0)),
    ((1, 3), (0, 0)),
    ((4, 1), (0, 0)),
    ((4, 4), (1, 4)),
]:
    for name, attention, config in [
        ("swinv2", Swinv2SelfAttention, Swinv2Config()),
        ("swin2sr", Swin2SRSelfAttention, Swin2SRConfig()),
    ]:
        table = attention(
            config, 8, 2, list(window), pretrained_window_size=list(pretrained)
        ).relative_coords_table[0]
        norm = pretrained if pretrained[0] > 0 else window
        want_h, want_w = expected_axis(window[0], norm[0]), expected_axis(window[1], norm[1])
        got_h, got_w = table[:, 0, 0].tolist(), table[0, :, 1].tolist()
        finite = bool(torch.isfinite(table).all())
        ok = (
            finite
            and want_h is not None
            and want_w is not None
            and all(abs(a - b) < 1e-6 for a, b in zip(got_h + got_w, want_h + want_w, strict=True))
        )
        bad += not ok
        print(
            f"{'ok  ' if ok else 'BUG '} {name} window {window} pretrained {pretrained}: h {got_h} w {got_w}"
        )
print(f"{bad} results with NaN/inf or an unnormalised axis")
sys.exit(1 if bad else 0)
