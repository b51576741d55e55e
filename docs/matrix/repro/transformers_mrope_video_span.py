"""Qwen2-VL / Qwen2.5-VL ``get_rope_index``: text after a video reuses the video's temporal ids (5.24).

M-RoPE numbers every segment from ``max(all previous ids) + 1`` (Qwen2-VL paper; HF 4.x's
``get_rope_index``, vLLM's ``get_input_positions``, Qwen's own code): text resumes after the
largest temporal, height or width id of the vision block before it.  transformers 5.x's
rewrite advances the start by ``max(grid_h, grid_w) // spatial_merge_size`` only, so when a
video has more frames (times ``time_interval``) than rows and columns, the next text tokens
get ids the video's last frames already use, on all three rows.

Here: 1 text token, a video of 3 frames of 2 x 2 merged patches, 2 text tokens.  The video's
temporal ids run 1, 2, 3; the text after it must start at 4 and gets 3.  With
``time_interval = 2`` (Qwen2.5-VL, ``second_per_grid_ts * tokens_per_second``) the video runs
to 1 + 4 = 5 and the text still starts at 3.

Run with torch and transformers installed: ``python transformers_mrope_video_span.py``.
Exits 1 while the bug is present, 0 once fixed.  Plain torch, no posenc-ref.
"""

import sys

import torch
import transformers
from transformers import Qwen2_5_VLConfig
from transformers.models.qwen2_5_vl.modeling_qwen2_5_vl import Qwen2_5_VLModel

MERGE = 2
tiny = {"hidden_size": 8, "intermediate_size": 8, "num_attention_heads": 1}
text = {**tiny, "vocab_size": 8, "num_hidden_layers": 1, "num_key_value_heads": 1}
text.update(bos_token_id=None, eos_token_id=None)
text["rope_parameters"] = {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [1, 1, 2]}
vision = {**tiny, "depth": 1, "num_heads": 1, "out_hidden_size": 8, "fullatt_block_indexes": [0]}
vision.update(spatial_merge_size=MERGE, tokens_per_second=1)
model = Qwen2_5_VLModel(Qwen2_5_VLConfig(text_config=text, vision_config=vision))


def expected(frames: int, rows: int, cols: int, interval: float) -> list[list[int]]:
    """Text at 0, the video from 1, then text from max(all ids) + 1 (the M-RoPE rule)."""
    ids = [[0], [0], [0]]
    for f in range(frames):
        for r in range(rows):
            for c in range(cols):
                ids[0].append(1 + int(f * interval))
                ids[1].append(1 + r)
                ids[2].append(1 + c)
    start = max(max(row) for row in ids) + 1
    for row in ids:
        row += [start, start + 1]
    return ids


print(f"transformers {transformers.__version__}, torch {torch.__version__}")
wrong = 0
for interval in (1.0, 2.0):
    frames, rows, cols = 3, 2, 2
    token_types = torch.tensor([[0] + [2] * (frames * rows * cols) + [0, 0]])  # text 0, video 2
    got, _ = model.get_rope_index(
        torch.zeros_like(token_types),
        token_types,
        video_grid_thw=torch.tensor([[frames, rows * MERGE, cols * MERGE]]),
        second_per_grid_ts=torch.tensor([interval]),
    )
    got = got[:, 0].tolist()
    want = expected(frames, rows, cols, interval)
    same = got == want
    wrong += not same
    print(f"time_interval {interval}: text after the video starts at {got[0][-2]}, expected {want[0][-2]}")
    if not same:
        print(f"  BUG: get_rope_index t row {got[0]}\n  expected       t row {want[0]}")
sys.exit(1 if wrong else 0)
