"""Speech2Text's sinusoidal table does not grow during cached decoding (transformers 5.24).

``Speech2TextSinusoidalPositionalEmbedding.forward(input_ids, cache_length)`` numbers a
new token ``cumsum(mask) + cache_length + padding_idx`` but grows its table only when
``padding_idx + 1 + seq_len`` exceeds it, leaving ``cache_length`` out.  Decoding one token
at a time past the initial table therefore raises ``IndexError: index out of range in
self`` instead of growing the table.  M2M100, NLLB-MoE, FSMT, Kosmos-2 and SeamlessM4T
include ``cache_length`` (``max_pos = padding_idx + 1 + seq_len + cache_length``);
SpeechT5 (``modeling_speecht5.py``) and TrOCR (``modeling_trocr.py``) share the
Speech2Text line.

Run with torch and transformers installed.  Exits 1 while the bug is present.
"""

import sys

import torch
import transformers
from transformers.models.m2m_100.modeling_m2m_100 import M2M100SinusoidalPositionalEmbedding
from transformers.models.speech_to_text.modeling_speech_to_text import (
    Speech2TextSinusoidalPositionalEmbedding,
)

print(f"transformers {transformers.__version__}, torch {torch.__version__}")
new_token = torch.full((1, 1), 5)  # any non-padding id; 8 tokens are already in the cache
failed = False
for cls in (M2M100SinusoidalPositionalEmbedding, Speech2TextSinusoidalPositionalEmbedding):
    table = cls(num_positions=8, embedding_dim=4, padding_idx=1)  # rows 0 .. 9
    try:
        row = table(new_token, cache_length=8)  # row 8 + 1 + 1 = 10: one past the table
    except IndexError as exc:
        print(f"BUG REPRODUCED: {cls.__name__}: IndexError: {exc}")
        failed = True
    else:
        print(f"{cls.__name__}: grew its table to {tuple(table.weights.shape)}, row {row[0, 0].tolist()}")
sys.exit(1 if failed else 0)
