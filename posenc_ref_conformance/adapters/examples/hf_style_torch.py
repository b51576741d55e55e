"""Example adapter: HF transformers' arithmetic, transcribed in PyTorch (float32, as HF computes it).

Not the transformers package itself (the suite does not depend on it): the
expressions of ``LlamaRotaryEmbedding`` (float32 ``inv_freq``, float32 phase
``inv_freq @ positions``, ``cat(freqs, freqs)``, ``rotate_half``), BLOOM's
``_get_alibi_slopes`` and ``T5Attention._relative_position_bucket``, written the
way HF writes them.  Run it to see what a typical float32 implementation
passes::

    posenc-ref check posenc_ref_conformance.adapters.examples.hf_style_torch

Expect passes everywhere except the ``LargePosition`` cases and the
large-shift invariant: a float32 product ``m * theta`` is off by up to
``m * theta * 2**-24`` radians.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

CAPABILITIES = {
    "dtypes": ["float32"],
    "phase": "product",  # float32 positions times float32 inv_freq, as HF's forward does
    "layouts": ["half"],  # HF's apply_rotary_pos_emb only knows rotate_half
    "notes": {"rope_cos_sin": "float32 phase as in LlamaRotaryEmbedding.forward"},
}


def _torch() -> Any:
    import torch

    return torch


def rope_cos_sin(positions: Any, inv_freq: Any, *, attention_factor: float, layout: str, dtype: str) -> Any:
    torch = _torch()
    if layout != "half":
        msg = "HF builds half-split tables only"
        raise NotImplementedError(msg)
    pos = torch.from_numpy(np.asarray(positions)).reshape(1, 1, -1).float()
    inv = torch.from_numpy(np.asarray(inv_freq)).float()[None, :, None]
    freqs = (inv @ pos).transpose(1, 2)  # float32 GEMM, as HF
    emb = torch.cat((freqs, freqs), dim=-1)
    shape = (*np.shape(positions), emb.shape[-1])
    return (emb.cos() * attention_factor).reshape(shape), (emb.sin() * attention_factor).reshape(shape)


def apply_rope(x: Any, cos: Any, sin: Any, *, layout: str) -> Any:
    torch = _torch()
    if layout != "half":
        msg = "HF's rotate_half is the half-split layout"
        raise NotImplementedError(msg)
    q = torch.from_numpy(np.asarray(x))
    cos, sin = (
        torch.as_tensor(np.asarray(cos), dtype=q.dtype),
        torch.as_tensor(np.asarray(sin), dtype=q.dtype),
    )
    width = cos.shape[-1]
    rot, rest = q[..., :width], q[..., width:]
    half = width // 2
    rotated = rot * cos + torch.cat((-rot[..., half:], rot[..., :half]), dim=-1) * sin
    return torch.cat((rotated, rest), dim=-1)


def alibi_slopes(num_heads: int, *, max_bias: float, dtype: str) -> Any:
    torch = _torch()
    if max_bias != 8.0:
        msg = "BLOOM has no alibi_bias_max"
        raise NotImplementedError(msg)
    closest = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != num_heads:
        extra_base = torch.tensor(2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32)
        extra = min(closest, num_heads - closest)
        powers = torch.arange(1, 1 + 2 * extra, 2, dtype=torch.int32)
        slopes = torch.cat([slopes, torch.pow(extra_base, powers)], dim=0)
    return slopes


def t5_bucket(relative: Any, *, bidirectional: bool, num_buckets: int, max_distance: int) -> Any:
    torch = _torch()
    relative_position = torch.from_numpy(np.asarray(relative))
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    large = torch.min(large, torch.full_like(large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, large)
