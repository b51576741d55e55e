"""HunYuan-VL's XD-RoPE gives the two channels of a rotated pair different positions (transformers 5.24).

``HunYuanVLRotaryEmbedding.recomposition_frequencies``
(``transformers/models/hunyuan_vl/modeling_hunyuan_vl.py:181-190``) concatenates the
per-axis angles ``cat(freq, freq)`` (the half layout: channel ``j`` and ``j + F`` form a
pair, ``F = head_dim / 2``) and splits the ``2F`` channels into
``[section * 2 for section in mrope_section]``, i.e. each section *doubled in place*.
With ``xdrope_section = [16, 16, 16, 16]`` channels 0-31 read axis 0 (the sequence
position), 32-63 axis 1 (w), 64-95 axis 2 (h) and 96-127 axis 3 (the image index): the
pair ``(j, j + 64)`` rotates its first channel by the sequence position and its second
by the row.  For an image token the map is not a rotation (norms change) and ``q . k``
no longer depends on the offset alone.

Tencent's own code repeats the *list*: ``section_doubled = xdrope_section * 2``
(``[16, 16, 16, 16, 16, 16, 16, 16]``) in ``HunYuanVLRotaryEmbedding.forward`` and
``apply_rotary_pos_emb_xdrope`` of Tencent-Hunyuan/HunyuanOCR ``train/modeling_hunyuan_vl.py``
(ARC-Hunyuan-Video's copy writes ``[...] * 2`` on the list too), so both halves of a pair
read the same axis: frequencies 0-15 the sequence, 16-31 w, 32-47 h, 48-63 the image index.
vLLM's ``XDRotaryEmbedding`` (``rotary_embedding/xdrope.py``) splits the half-size cos/sin
cache by ``xdrope_section`` and lets the neox kernel duplicate it, which is the same map.
Text tokens (all four ids equal) are unaffected, so text-only generation matches; image
tokens get different angles than the checkpoint was trained with.

Run with torch and transformers installed:
``python transformers_hunyuan_vl_xdrope_pairs.py``.  Exits 1 while the pairs disagree
(the bug is present), 0 once HF's angles match Tencent's.  Plain torch, no posenc-ref.

Suggested upstream issue text: "HunYuan-VL: recomposition_frequencies doubles each
mrope_section entry instead of repeating the list, so the two halves of a rotary pair
read different axes.  modeling_hunyuan_vl.py:186 builds split_sizes = [section * 2 for
section in self.mrope_section] over cat(freq, freq); Tencent's implementation (and vLLM's
XDRotaryEmbedding) uses xdrope_section * 2 on the Python list, i.e. split_sizes =
self.mrope_section * 2, so channel j and j + head_dim/2 share one position id.  With the
checkpoint's [16, 16, 16, 16] an image token's channel j < 32 is rotated by its sequence
position and channel j + 64 by its row: not a rotation, and different from the angles the
model was trained with.  Text tokens are unaffected.  Fix: split_sizes =
list(self.mrope_section) * 2 (and the enumerate index i % len(self.mrope_section) stays)."
"""

import sys

import torch
import transformers
from transformers.models.hunyuan_vl.configuration_hunyuan_vl import HunYuanVLTextConfig
from transformers.models.hunyuan_vl.modeling_hunyuan_vl import HunYuanVLRotaryEmbedding, rotate_half

print(f"transformers {transformers.__version__}, torch {torch.__version__}")
section = [16, 16, 16, 16]  # the checkpoints' xdrope_section
head_dim = 2 * sum(section)
config = HunYuanVLTextConfig(
    hidden_size=head_dim,
    num_attention_heads=1,
    num_key_value_heads=1,
    head_dim=head_dim,
    rope_parameters={"rope_type": "default", "rope_theta": 10000.0, "mrope_section": section},
)
rotary = HunYuanVLRotaryEmbedding(config)
# one text token and two image tokens: ids (sequence, w, h, image index) per token
ids = torch.tensor([[[5, 6, 7]], [[5, 0, 1]], [[5, 0, 0]], [[5, 0, 0]]])
x = torch.zeros(1, 1, 3, head_dim)
cos, sin = rotary(x, ids)  # [1, 3, head_dim]
half = head_dim // 2
print("pairs (j, j + F) with equal cos, per token:", (cos[0, :, :half] == cos[0, :, half:]).all(-1).tolist())


def tencent_cos_sin(ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Tencent's forward: cat(freqs, freqs) per axis, split by xdrope_section * 2 (list repetition)."""
    freqs = [ids[d, ..., None].float() * rotary.inv_freq for d in range(len(section))]
    per_axis = [torch.cat((f, f), dim=-1).split(section * 2, dim=-1) for f in freqs]
    emb = torch.cat([per_axis[i % len(section)][i] for i in range(2 * len(section))], dim=-1)
    return emb.cos(), emb.sin()


ref_cos, ref_sin = tencent_cos_sin(ids)
text_ok = torch.allclose(cos[0, 0], ref_cos[0, 0]) and torch.allclose(sin[0, 0], ref_sin[0, 0])
image_ok = torch.allclose(cos, ref_cos) and torch.allclose(sin, ref_sin)
print(f"text token equals Tencent's: {text_ok}; image tokens equal Tencent's: {image_ok}")

torch.manual_seed(0)
q = torch.randn(1, 1, 3, head_dim, dtype=torch.float32)
rotated = q * cos[:, None] + rotate_half(q) * sin[:, None]  # HF's apply_rotary_pos_emb
norms = q.norm(dim=-1)[0, 0], rotated.norm(dim=-1)[0, 0]
print(f"|q| = {norms[0].tolist()}; |rotated q| = {norms[1].tolist()} (a rotation keeps them)")
broken = not image_ok or not torch.allclose(norms[0], norms[1], rtol=1e-5)
if broken:
    print("REPRODUCED: HF's XD-RoPE pairs read two axes; Tencent's share one (xdrope_section * 2)")
sys.exit(1 if broken else 0)
