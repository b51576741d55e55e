"""x-transformers: positional modules accept parameters that make no sense, silently or with a late crash.

Standalone (torch + x-transformers 2.31.10; no posenc-ref).  Run:  python x_transformers_validation.py

Found by the posenc-ref cases ``rope_frequencies/invalid/odd-dim``, ``rope_frequencies/invalid/base-1``,
``t5_bias/invalid/max-distance`` and ``alibi_bias_from_heads/invalid/float-positions`` (each expects a
ValueError or TypeError).  Each line compares what the module does with what the paper's formula
allows; the script exits 1 while any of them is accepted.

1. ``RotaryEmbedding(7)``: RoPE rotates pairs, so ``dim`` must be even; x-transformers builds 4
   frequencies (``arange(0, 7, 2)``) and an 8-wide angle table, which ``apply_rotary_pos_emb``
   then applies to 8 channels of a 7-channel head.
2. ``RotaryEmbedding(8, base=1)``: ``theta_i = 1**(-2i/d) = 1`` for every pair, so every pair turns
   at the same rate and no position is told apart from another beyond one turn.
3. ``RelativePositionBias(num_buckets=32, max_distance=8)`` (bidirectional: 16 buckets a direction,
   ``max_exact = 8``): T5's log buckets divide by ``log(max_distance / max_exact) = log(1) = 0``;
   the bias of short distances comes back, a distance >= 8 gets bucket -2**63 and IndexError.
   T5 needs ``max_distance > max_exact``.
4. ``AlibiPositionalBias.forward_custom_pos`` with float positions ``[0.5]``: returns slopes times
   -0.5 (token positions are integers; ``RelativePositionBias`` and ``RotaryEmbedding`` take them
   as integer tensors too).
"""

import math

import torch
from x_transformers.x_transformers import AlibiPositionalBias, RelativePositionBias, RotaryEmbedding

accepted = []


def check(label, build, expected):
    """Run ``build``; a ValueError/TypeError is the fix, anything it returns is printed as accepted."""
    try:
        shown = build()
    except (ValueError, TypeError) as exc:
        print(f"{label}: rejected ({type(exc).__name__}: {exc})  <- fixed")
        return
    print(f"{label}: accepted, {shown} (expected: {expected})")
    accepted.append(label.split(". ", 1)[1])


def odd_dim():
    rot = RotaryEmbedding(7)
    freqs, _ = rot(torch.arange(2))
    return f"{rot.inv_freq.numel()} frequencies, angle table width {freqs.shape[-1]} for a 7-channel head"


def base_one():
    rot = RotaryEmbedding(8, base=1.0)
    paper = [1.0 ** (-2 * i / 8) for i in range(4)]
    return f"inv_freq {rot.inv_freq.tolist()} = 1**(-2i/d) = {paper}: every pair turns alike"


def t5_max_distance():
    bias = RelativePositionBias(scale=1.0, causal=False, num_buckets=32, max_distance=8, heads=1)
    with torch.no_grad():
        bias.relative_attention_bias.weight.copy_(torch.arange(32.0).reshape(32, 1))
    short = bias(1, 2).flatten().tolist()
    try:
        bias(1, 12)
        late = "returned"
    except IndexError as exc:
        late = f"IndexError ({exc})"
    max_exact = 32 // 2 // 2
    return (
        f"forward(1, 2) = {short}, forward(1, 12) -> {late}; "
        f"the log buckets divide by log(max_distance / max_exact) = {math.log(8 / max_exact)}"
    )


def alibi_float():
    alibi = AlibiPositionalBias(4)
    return f"bias {alibi.forward_custom_pos(torch.tensor([0.5]), torch.tensor([0, 1])).flatten().tolist()}"


check("1. RotaryEmbedding(7)", odd_dim, "ValueError, dim must be even")
check("2. RotaryEmbedding(8, base=1)", base_one, "ValueError, base must be > 1")
check(
    "3. RelativePositionBias(num_buckets=32, max_distance=8)",
    t5_max_distance,
    "ValueError, max_distance must exceed max_exact = num_buckets // 4 = 8",
)
check(
    "4. AlibiPositionalBias(4).forward_custom_pos([0.5], [0, 1])",
    alibi_float,
    "TypeError, positions must be integers",
)
print(f"{len(accepted)} of 4 accepted{': ' + '; '.join(accepted) + '  <- the bug' if accepted else ''}")
raise SystemExit(1 if accepted else 0)
