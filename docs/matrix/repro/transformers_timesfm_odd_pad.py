"""TimesFM's positional embedding pads the sequence axis, not the channel axis, for an odd
``hidden_size`` (transformers 5.24).

``TimesFmPositionalEmbedding.forward`` ports tensor2tensor's ``get_timing_signal_1d``:
``[sin | cos]`` of ``hidden_size // 2`` timescales, then a zero column when the width is
odd.  tensor2tensor pads its 2-D ``[length, channels]`` signal with
``tf.pad(signal, [[0, 0], [0, channels % 2]])`` (the channel axis).  The port keeps those
numbers as ``F.pad(signal, (0, 0, 0, hidden_size % 2))`` on a 3-D ``[1, length, 2 n]``
tensor, but ``F.pad`` reads its pairs from the LAST axis backwards: ``(0, 0)`` pads the
channels by nothing and ``(0, 1)`` appends a zero ROW.  For ``hidden_size=5`` and 3
positions the table is ``[1, 4, 4]`` instead of ``[1, 3, 5]``; ``TimesFmModel`` with
``use_positional_embedding=True`` then fails with a broadcast RuntimeError at
``model_input += pos_emb``.  Even widths (every released checkpoint) are unaffected.
``TimesFm2_5PositionalEmbedding`` (timesfm2_5, unused there) is the same copy.

Run with torch and transformers installed: ``python transformers_timesfm_odd_pad.py``.
Exits 1 while the bug is present, 0 once fixed.  Plain torch, no posenc-ref.

Suggested upstream issue text: "TimesFmPositionalEmbedding: an odd hidden_size pads the wrong
axis. forward() ends with F.pad(signal, (0, 0, 0, self.embedding_dims % 2)) on a
[B, seq, 2 * (D // 2)] tensor; F.pad pairs start from the last dimension, so this appends a
zero time step instead of a zero channel: hidden_size=5 gives [1, seq + 1, 4] and
TimesFmModel(use_positional_embedding=True) raises 'The size of tensor a (5) must match the
size of tensor b (4)'. tensor2tensor's get_timing_signal_1d pads the channel axis. Suggested
fix: F.pad(signal, (0, self.embedding_dims % 2)). The copy in timesfm2_5 has the same line."
"""

import math
import sys

import torch
import transformers
from transformers import TimesFmConfig
from transformers.models.timesfm.modeling_timesfm import TimesFmPositionalEmbedding


def timing_signal(length: int, channels: int, max_timescale: float = 1.0e4) -> torch.Tensor:
    """tensor2tensor get_timing_signal_1d (min_timescale=1), float64, [length, channels]."""
    count = channels // 2
    increment = math.log(max_timescale) / max(count - 1, 1)
    inv_timescales = torch.exp(-increment * torch.arange(count, dtype=torch.float64))
    scaled = torch.arange(length, dtype=torch.float64)[:, None] * inv_timescales[None, :]
    signal = torch.cat([scaled.sin(), scaled.cos()], dim=1)
    return torch.nn.functional.pad(signal, (0, channels % 2))  # the channel axis


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
even = TimesFmPositionalEmbedding(TimesFmConfig(hidden_size=8))(seq_length=4)[0].double()
print("hidden_size=8 agrees with tensor2tensor:", torch.allclose(even, timing_signal(4, 8), atol=1e-6))
odd = TimesFmPositionalEmbedding(TimesFmConfig(hidden_size=5))(seq_length=3)
print("hidden_size=5, 3 positions: shape", tuple(odd.shape), "(tensor2tensor: (1, 3, 5))")
if tuple(odd.shape) != (1, 3, 5):
    print("BUG REPRODUCED: F.pad(signal, (0, 0, 0, 1)) appended a zero row, not a zero column")
    sys.exit(1)
ok = torch.allclose(odd[0].double(), timing_signal(3, 5), atol=1e-6)
print("hidden_size=5 matches tensor2tensor" if ok else "hidden_size=5 DIFFERS from tensor2tensor")
sys.exit(0 if ok else 1)
