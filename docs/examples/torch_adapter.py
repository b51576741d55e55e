"""An adapter for a PyTorch model's own positional-encoding code (HF-style).

Run:  posenc-ref check docs/examples/torch_adapter.py

The functions in the first half are what a model file typically contains (here:
transformers-style RoPE with ``rotate_half``, T5's bucket function and BLOOM's ALiBi
slopes, written the way those libraries write them).  The adapter class in the second
half is the only thing you write for the suite: it maps the suite's canonical calls
onto those functions and declares what they support.
"""

# ruff: noqa: EM101 - inline error messages, as most model code has them

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from posenc_ref_conformance.adapters.base import Adapter, Capabilities, Unsupported

# --- the code under test (as it would appear in a model file) -------------------


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rotary_cos_sin(
    position_ids: torch.Tensor, inv_freq: torch.Tensor, attention_scaling: float
):
    freqs = (
        position_ids[..., None].to(inv_freq.dtype) * inv_freq
    )  # the phase, in inv_freq's dtype
    emb = torch.cat((freqs, freqs), dim=-1)
    return emb.cos() * attention_scaling, emb.sin() * attention_scaling


def apply_rotary_pos_emb(
    x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> torch.Tensor:
    rotary = cos.shape[-1]
    x_rot, x_pass = x[..., :rotary], x[..., rotary:]
    return torch.cat((x_rot * cos + rotate_half(x_rot) * sin, x_pass), dim=-1)


def relative_position_bucket(
    relative_position, bidirectional=True, num_buckets=32, max_distance=128
):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(
            relative_position, torch.zeros_like(relative_position)
        )
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    if_large = torch.min(if_large, torch.full_like(if_large, num_buckets - 1))
    return relative_buckets + torch.where(is_small, relative_position, if_large)


def alibi_slopes(num_heads: int) -> torch.Tensor:
    closest = 2 ** math.floor(math.log2(num_heads))
    base = torch.tensor(2 ** (-(2 ** -(math.log2(closest) - 3))), dtype=torch.float32)
    slopes = torch.pow(base, torch.arange(1, 1 + closest, dtype=torch.int32))
    if closest != num_heads:
        extra_base = torch.tensor(
            2 ** (-(2 ** -(math.log2(2 * closest) - 3))), dtype=torch.float32
        )
        extra = torch.arange(
            1, 1 + 2 * min(closest, num_heads - closest), 2, dtype=torch.int32
        )
        slopes = torch.cat([slopes, torch.pow(extra_base, extra)], dim=0)
    return slopes


# --- the adapter: canonical calls -> the code above -----------------------------

_DTYPES = {"float64": torch.float64, "float32": torch.float32}


class TorchModelAdapter(Adapter):
    name = "my-torch-model"
    capabilities = Capabilities(
        layouts=("half",),  # rotate_half only
        scaling_types=("default",),  # the model gets inv_freq from elsewhere
        alibi_forms=(),  # we check the slopes, not a bias builder
        invalid_inputs=False,  # the model code does not validate options
    )

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "torch": torch.__version__}

    def rope_cos_sin(self, positions, inv_freq, *, attention_factor, layout, dtype):
        freq = torch.from_numpy(np.asarray(inv_freq)).to(_DTYPES[dtype])
        return rotary_cos_sin(torch.from_numpy(positions), freq, attention_factor)

    def apply_rope(self, x, cos, sin, *, layout):
        to_torch = lambda a: torch.as_tensor(np.asarray(a))  # noqa: E731
        return apply_rotary_pos_emb(to_torch(x), to_torch(cos), to_torch(sin))

    def t5_bucket(self, relative, *, bidirectional, num_buckets, max_distance):
        return relative_position_bucket(
            torch.from_numpy(relative), bidirectional, num_buckets, max_distance
        )

    def alibi_slopes(self, num_heads, *, max_bias, dtype):
        if max_bias != 8.0:
            raise Unsupported("BLOOM's slopes have no max_bias")
        return alibi_slopes(num_heads).to(_DTYPES[dtype])


ADAPTER = TorchModelAdapter()
