"""llama-models 0.3.0: precompute_freqs_cis / apply_scaling accept inconsistent parameters silently.

Standalone (torch + llama-models 0.3.0 + fairscale 0.4.13, as scripts/matrix/setup_llama_models.sh
installs them; no posenc-ref).  Run:  python llama_models_validation.py

Found by the posenc-ref cases rope_frequencies/invalid/odd-dim and rope_frequencies/invalid/base-1
(both copies: llama_models.llama3.model and llama_models.llama4.model) and
rope_frequencies/invalid/llama3-factor-order (llama_models.llama4.model, whose apply_scaling takes
high_freq_factor as an argument); the reference raises ValueError naming the parameter.

The expected values are the RoPE paper's theta_i = base**(-2i/d), i = 0 .. d/2 - 1 (defined for even
d and base > 1 only), and Llama 3.1's recipe: a wavelength 2 pi / theta above
old_context_len / low_freq_factor is divided by the factor, one below old_context_len /
high_freq_factor is kept, and the band between is interpolated, which needs
high_freq_factor > low_freq_factor.
"""

import math

import torch
from llama_models.llama3 import model as llama3
from llama_models.llama4 import model as llama4

failures = []

# 1. Odd dim: 7 channels cannot be split into pairs.  Meta returns 3 frequencies with exponents 2i/7
#    (no paper value exists for d = 7); apply_rotary_emb then fails on a 7-wide head with a
#    RuntimeError from reshape, not a ValueError about dim.
for name, module in (("llama3", llama3), ("llama4", llama4)):
    args = (False,) if module is llama3 else (False, None, None)
    table = module.precompute_freqs_cis(7, 2, 10000.0, *args)
    print(
        f"{name}: precompute_freqs_cis(dim=7) -> {tuple(table.shape)} table, angles",
        table[1].angle().tolist(),
    )
    failures.append(f"{name} dim=7 accepted")
    x = torch.ones(1, 2, 1, 7)
    try:
        module.apply_rotary_emb(x, x, freqs_cis=table)
    except (RuntimeError, AssertionError) as exc:
        print(f"{name}: apply_rotary_emb on a 7-wide head: {type(exc).__name__}: {str(exc)[:80]}")

# 2. base = 1: every frequency is 1**(-2i/d) = 1, a degenerate encoding (every pair rotates alike).
for name, module in (("llama3", llama3), ("llama4", llama4)):
    args = (False,) if module is llama3 else (False, None, None)
    freqs = module.precompute_freqs_cis(8, 2, 1.0, *args)[1].angle()
    print(f"{name}: precompute_freqs_cis(theta=1) frequencies:", freqs.tolist())
    if bool((freqs == 1).all()):
        failures.append(f"{name} theta=1 accepted")

# 3. llama4's apply_scaling(freqs, scale_factor=8, high_freq_factor=0.5) with its hard-coded
#    low_freq_factor = 1: high < low inverts the bands.  The loop keeps every wavelength below
#    old_context_len / 0.5 = 16384, so the wavelengths in (8192, 16384), which the recipe divides by
#    8 (they exceed old_context_len / low_freq_factor = 8192), stay unscaled, with no error.
d, base, factor = 64, 500000.0, 8.0
plain = torch.tensor([base ** (-2 * i / d) for i in range(d // 2)], dtype=torch.float32)  # the paper's
scaled = llama4.apply_scaling(plain, factor, 0.5)
wavelength = [2 * math.pi / float(f) for f in plain]
band = [i for i, w in enumerate(wavelength) if 8192 < w < 16384]
for i in band:
    expected = float(plain[i]) / factor  # the recipe: wavelength > old_context_len / low_freq_factor
    print(
        f"llama4 high<low: pair {i}: wavelength {wavelength[i]:.0f}: got {float(scaled[i]):.6g}, "
        f"recipe {expected:.6g}"
    )
if band and all(float(scaled[i]) == float(plain[i]) for i in band):
    failures.append("llama4 high_freq_factor < low_freq_factor accepted (band left unscaled)")

print("not rejected:", failures)
assert failures, "fixed: every inconsistent parameter was rejected"
