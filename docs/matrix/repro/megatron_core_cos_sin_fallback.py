"""megatron-core 0.16.1: apply_rotary_pos_emb_with_cos_sin without flash-attn rotates by cos(cos), sin(sin).

Standalone (torch 2.13.0 CPU + megatron-core 0.16.1, no flash-attn; no posenc-ref).  Run:
    python megatron_core_cos_sin_fallback.py

Found by the posenc-ref cases apply_rope/{half,interleaved}/{full-d8,partial-r4-d10,batched-heads,
attention-factor-yarn,attention-factor-below-1} (both dtypes).

``rope_utils.apply_rotary_pos_emb_with_cos_sin(t, cos, sin, rotary_interleaved)`` takes precomputed
cos/sin of shape [seq_len, rot_dim / 2] (what ``RotaryEmbedding.get_cos_sin`` returns; the flash-decode
path of ``Attention`` calls it).  With flash-attn installed they go to flash-attn's kernel as values.
Without it, the fallback stacks them into ``[c0, s0, c1, s1, ...]`` and hands that to
``_apply_rotary_pos_emb_bshd``, which treats its argument as *angles* (``torch.cos(freqs)``): the result
is neither RoPE nor the identity at position 0.  The expected values below are the paper's formula
(Su et al. 2021), computed in float64 here from the same angles.
"""

import warnings

import torch

warnings.filterwarnings("ignore")  # "Transformer Engine and Apex are not installed"

from megatron.core.models.common.embeddings.rope_utils import (  # noqa: E402
    apply_rotary_emb_flash,
    apply_rotary_pos_emb_with_cos_sin,
)
from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding  # noqa: E402

assert apply_rotary_emb_flash is None, "flash-attn is installed: this shows the fallback without it"

seq, dim = 3, 8
rope = RotaryEmbedding(kv_channels=dim, rotary_percent=1.0, use_cpu_initialization=True)
cos, sin = rope.get_cos_sin(seq)  # [seq, dim / 2], positions 0, 1, 2
torch.manual_seed(0)
x = torch.randn(seq, 1, 1, dim, dtype=torch.float64)  # megatron's [s, b, h, d]

for interleaved in (False, True):
    got = apply_rotary_pos_emb_with_cos_sin(x, cos, sin, rotary_interleaved=interleaved)
    # RoPE by the formula: pair (a, b) at angle m * theta_i -> (a cos - b sin, a sin + b cos)
    angles = torch.outer(torch.arange(seq, dtype=torch.float64), rope.inv_freq.double())
    c, s = angles.cos()[:, None, None, :], angles.sin()[:, None, None, :]
    if interleaved:
        a, b = x[..., 0::2], x[..., 1::2]
        want = torch.stack((a * c - b * s, a * s + b * c), dim=-1).flatten(-2)
    else:
        a, b = x[..., : dim // 2], x[..., dim // 2 :]
        want = torch.cat((a * c - b * s, a * s + b * c), dim=-1)
    print(f"rotary_interleaved={interleaved}:")
    print("  position 0 input   :", [round(v, 4) for v in x[0, 0, 0].tolist()])
    print("  position 0 expected:", [round(v, 4) for v in want[0, 0, 0].tolist()], "(the identity)")
    print("  position 0 got     :", [round(v, 4) for v in got[0, 0, 0].tolist()])
    print("  max |got - expected| over 3 positions:", float((got - want).abs().max()))
    assert (got - want).abs().max() > 0.1, "fixed"
