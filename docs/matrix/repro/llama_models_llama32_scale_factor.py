"""llama-models 0.3.0: Llama 3.2 1B / 3B are built with Llama 3.1's RoPE scale factor 8, not 32.

Standalone (torch + llama-models 0.3.0 + fairscale 0.4.13 + pydantic, as
scripts/matrix/setup_llama_models.sh installs them; no posenc-ref).  Run:
python llama_models_llama32_scale_factor.py

Not a failing posenc-ref case: the adapter maps llama_models.llama3.model's apply_scaling only onto
the llama3 parameters it hard-codes (factor 8, low 1, high 4, old context 8192), so a factor-32
case is skipped there.  This script shows what that hard-coding means for the models llama-models
itself registers: sku_list gives Llama 3.2 1B and 3B use_scaled_rope=True, and
llama3/model.py's apply_scaling always uses scale_factor = 8, while the released configuration of
those models (rope_scaling factor 32.0, low 1, high 4, original 8192) uses 32.  Known upstream:
meta-llama/llama-models#166 and #241 (both closed; the constant is still 8 in 0.3.0).

The expected values follow the Llama 3.1 recipe with factor 32, computed in float64 here.
"""

import math

import torch
from llama_models.llama3.model import apply_scaling, precompute_freqs_cis
from llama_models.sku_list import resolve_model


def recipe(theta: float, factor: float, low: float = 1.0, high: float = 4.0, old: int = 8192) -> float:
    """Llama 3.1's scaled frequency of theta (float64), the bands as in HF's _compute_llama3_parameters."""
    wavelength = 2 * math.pi / theta
    if wavelength < old / high:
        return theta
    if wavelength > old / low:
        return theta / factor
    smooth = (old / wavelength - low) / (high - low)
    return (1 - smooth) * theta / factor + smooth * theta


for name in ("Llama3.2-1B", "Llama3.2-3B"):
    model = resolve_model(name)
    args = model.arch_args
    print(f"{name}: rope_theta {args['rope_theta']}, use_scaled_rope {args['use_scaled_rope']}")

head_dim, base = 64, 500000.0  # Llama 3.2 1B: dim 2048 / 32 heads
meta = precompute_freqs_cis(head_dim, 2, base, True)[1].angle().double()  # what the model runs with
plain = torch.tensor([base ** (-2 * i / head_dim) for i in range(head_dim // 2)], dtype=torch.float32)
also = apply_scaling(plain).double()
expected = torch.tensor([recipe(float(t), 32.0) for t in plain.double()], dtype=torch.float64)
worst = int(torch.argmax((meta - expected).abs() / expected))
print(
    f"lowest frequency: Meta {float(meta[-1]):.6g} (apply_scaling {float(also[-1]):.6g}), factor 32: "
    f"{float(expected[-1]):.6g}, ratio {float(meta[-1] / expected[-1]):.3f}"
)
print(f"worst pair {worst}: Meta {float(meta[worst]):.6g}, factor 32: {float(expected[worst]):.6g}")
assert float(meta[-1] / expected[-1]) > 3.9, "fixed: Llama 3.2's scale factor 32 is used"
