"""Whisper's ``sinusoids(length, channels=2)`` raises ZeroDivisionError (transformers 5.24).

``transformers.models.whisper.modeling_whisper.sinusoids`` ports tensor2tensor's
``get_timing_signal_1d``: ``log(max_timescale) / (channels // 2 - 1)``.  tensor2tensor
divides by ``max(channels // 2 - 1, 1)``, so two channels give ``[sin p, cos p]``; the HF
port divides by zero.  Odd channels are rejected on purpose with a clear ValueError; two
channels crash with a bare ZeroDivisionError from deep inside.

Run with torch and transformers installed: ``python transformers_whisper_sinusoids_dim2.py``.
Exits 1 while the bug is present, 0 once fixed.  Plain torch, no posenc-ref.
"""

import math
import sys

import torch
import transformers
from transformers.models.whisper.modeling_whisper import sinusoids


def timing_signal(length: int, channels: int, max_timescale: float = 1.0e4) -> torch.Tensor:
    """tensor2tensor get_timing_signal_1d (min_timescale=1), in float64."""
    count = channels // 2
    increment = math.log(max_timescale) / max(count - 1, 1)
    inv_timescales = torch.exp(-increment * torch.arange(count, dtype=torch.float64))
    scaled = torch.arange(length, dtype=torch.float64)[:, None] * inv_timescales[None, :]
    return torch.cat([scaled.sin(), scaled.cos()], dim=1)


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
wide = sinusoids(4, 8).double()
print("channels=8 agrees with tensor2tensor:", torch.allclose(wide, timing_signal(4, 8), atol=1e-6))
print("tensor2tensor, channels=2:", timing_signal(3, 2).tolist())
try:
    narrow = sinusoids(3, 2)
except ZeroDivisionError as exc:
    print(f"BUG REPRODUCED: sinusoids(3, 2) raised ZeroDivisionError: {exc}")
    sys.exit(1)
ok = torch.allclose(narrow.double(), timing_signal(3, 2), atol=1e-6)
print("sinusoids(3, 2):", narrow.tolist(), "matches tensor2tensor" if ok else "DIFFERS from tensor2tensor")
sys.exit(0 if ok else 1)
