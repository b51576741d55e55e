"""torchtune 0.6.1: RoPE modules and the T5 bucket table accept inconsistent parameters silently.

Standalone (torch + torchtune 0.6.1 + torchao 0.11.0; no posenc-ref).  Run:  python torchtune_validation.py

Found by the posenc-ref cases rope_frequencies/invalid/{odd-dim,base-1,llama3-factor-order} and
t5_bucket/bidirectional/invalid-max-distance (the reference raises ValueError naming the parameter).
"""

import math

import torch
from torchtune.models.llama3_1 import Llama3ScaledRoPE
from torchtune.models.t5 import t5_encoder
from torchtune.modules import RotaryPositionalEmbeddings

# 1. Odd dim: 3 frequencies for 7 channels; forward fails later with a reshape error.
print("dim=7 theta:", RotaryPositionalEmbeddings(7, max_seq_len=4).theta.numel(), "entries")
# 2. base=1: every frequency is 1 (a degenerate encoding), no error.
print("base=1 theta:", RotaryPositionalEmbeddings(8, max_seq_len=4, base=1).theta.tolist())
# 3. Llama3ScaledRoPE with high_freq_factor < low_freq_factor: the bands overlap, the smooth band is
#    empty, and wavelengths between old_context_len/low and old_context_len/high stay unscaled, while
#    longer ones are divided by scale_factor: a silent discontinuity instead of an error.
rope = Llama3ScaledRoPE(
    64,
    max_seq_len=4,
    base=500_000,
    scale_factor=8,
    low_freq_factor=1,
    high_freq_factor=0.5,
    old_context_len=8192,
)
plain = RotaryPositionalEmbeddings(64, max_seq_len=4, base=500_000).theta
wavelength = 2 * math.pi / plain
kept = (rope.theta == plain) & (wavelength > 8192)
print("llama3 high<low: unscaled frequencies with wavelength > old_context_len:", int(kept.sum()))
# 4. T5 buckets with max_distance <= max_exact (= num_buckets // 4): log(max_distance / max_exact) = 0
#    divides by zero, so every |relative| >= max_exact gets a garbage bucket outside [0, num_buckets).
enc = t5_encoder(
    embed_dim=1,
    mlp_dim=1,
    num_heads=1,
    head_dim=1,
    num_layers=1,
    rel_pos_num_buckets=32,
    rel_pos_max_dist=8,
    vocab_size=1,
    norm_eps=1e-6,
    max_seq_len=20,
)
table = enc.relative_position_bias.relative_position_to_bucket
print("T5 buckets (32, max_dist=8) for k - q = 0..19:", table[0].tolist())
bad = int(((table < 0) | (table >= 32)).sum())
# 5. The docstrings say the cache is recomputed past max_seq_len; forward raises IndexError instead.
try:
    RotaryPositionalEmbeddings(8, max_seq_len=16)(torch.ones(1, 1, 1, 8), input_pos=torch.tensor([[20]]))
    grows = True
except IndexError:
    grows = False
print("cache grows past max_seq_len:", grows)
assert kept.any() and bad and not grows, "fixed"
