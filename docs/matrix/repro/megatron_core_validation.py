"""megatron-core 0.16.1: RotaryEmbedding and YarnRotaryEmbedding accept inconsistent parameters silently.

Standalone (torch 2.13.0 + megatron-core 0.16.1; no posenc-ref).  Run:  python megatron_core_validation.py
(part 5 needs CUDA: YarnRotaryEmbedding cannot be built without it; on CPU it says so and is skipped).

Found by the posenc-ref cases rope_frequencies/invalid/{odd-dim,base-1,factor-below-1,beta-order} and
rope_from_base/half/invalid-{odd-dim,dim-above-width} (the reference raises ValueError naming the
parameter; megatron-core returns values).
"""

import warnings

import torch

warnings.filterwarnings("ignore")  # "Transformer Engine and Apex are not installed"

from megatron.core.models.common.embeddings.rotary_pos_embedding import RotaryEmbedding  # noqa: E402


def rope(**kwargs):
    return RotaryEmbedding(use_cpu_initialization=True, **kwargs)


found = []
# 1. An odd rotary dim: kv_channels=7 gives 4 frequencies, exponents 2i/7 (a RoPE needs pairs).
odd = rope(kv_channels=7, rotary_percent=1.0)
print("kv_channels=7: inv_freq", odd.inv_freq.tolist(), "-> emb width", 2 * odd.inv_freq.numel())
found.append(odd.inv_freq.numel() == 4)
# 2. rotary_base=1: every frequency is 1 (base**(-2i/d) = 1), a degenerate encoding.
flat = rope(kv_channels=8, rotary_percent=1.0, rotary_base=1)
print("rotary_base=1: inv_freq", flat.inv_freq.tolist())
found.append(bool((flat.inv_freq == 1).all()))
# 3. seq_len_interpolation_factor=0.5: the docstring says "must be a float larger than 1.0"; positions
#    are doubled (extrapolation) instead.
half = rope(kv_channels=8, rotary_percent=1.0, seq_len_interpolation_factor=0.5)
print(
    "seq_len_interpolation_factor=0.5: angle at position 1 =",
    half.get_freqs_non_repeated(2)[1, 0].item(),
    "(2)",
)
found.append(half.get_freqs_non_repeated(2)[1, 0].item() == 2.0)
# 4. rotary_percent > 1 (16 rotary channels of an 8-channel head) is clamped to the whole head, and
#    rotary_percent 7/8 gives an odd rotary dim 7 whose table is 8 wide.
wide = rope(kv_channels=8, rotary_percent=2.0)
part = rope(kv_channels=8, rotary_percent=7 / 8)
print("rotary_percent=2.0: rotary dim", 2 * wide.inv_freq.numel(), "(16 asked of 8)")
print("rotary_percent=7/8: inv_freq", [round(v, 6) for v in part.inv_freq.tolist()], "(exponents 2i/7)")
found += [2 * wide.inv_freq.numel() == 8, abs(part.inv_freq[1].item() - 10000 ** (-2 / 7)) < 1e-6]
# 5. YaRN with beta_fast < beta_slow: the correction range is reversed (low > high) and the ramp
#    runs backwards: high frequencies interpolated, low ones kept, the opposite of YaRN.
if torch.cuda.is_available():
    from megatron.core.models.common.embeddings.yarn_rotary_pos_embedding import YarnRotaryEmbedding

    yarn = YarnRotaryEmbedding(
        64,
        rotary_base=10000.0,
        scaling_factor=4.0,
        original_max_position_embeddings=4096,
        beta_fast=1.0,
        beta_slow=32.0,
    )
    emb, mscale = yarn(2)
    theta = emb[1, 0, 0, :32].double().cpu()
    plain = 10000.0 ** (-torch.arange(0, 64, 2, dtype=torch.float64) / 64)
    print(
        "YaRN beta_fast=1 < beta_slow=32: theta_0 / plain_0 =",
        round(float(theta[0] / plain[0]), 4),
        " theta_31 / plain_31 =",
        round(float(theta[-1] / plain[-1]), 4),
        "(YaRN: 1 and 1/4)",
    )
    found.append(float(theta[0] / plain[0]) < 0.5)
else:
    print("YaRN beta_fast < beta_slow: skipped (YarnRotaryEmbedding needs CUDA in megatron-core)")
# 6. The llama3 rope_scaling path has no parameter at all to validate: low_freq_factor 1,
#    high_freq_factor 4 and original_max_position_embeddings 8192 are fixed in _apply_scaling.
print("every one accepted silently:", all(found), f"({sum(found)} of {len(found)} checks)")
assert all(found), "fixed"
