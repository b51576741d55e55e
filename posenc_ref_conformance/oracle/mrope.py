"""Multi-axis RoPE positions: M-RoPE ``(t, h, w)`` ids, vision-patch ids, and per-slot angles.

Written from Qwen2-VL (Wang et al. 2024, arXiv:2409.12191) and the reference
code that assigns the ids (vLLM ``qwen2_vl.py`` / ``qwen2_5_vl.py``
``get_input_positions``, HF transformers 4.x ``Qwen2VLModel.get_rope_index``):

* a text run of ``n`` tokens starting at ``s`` gets ``s, s+1, ...`` on all three rows;
* a vision block of ``t x h x w`` tokens (the language model's grid, after spatial
  merging) starting at ``s`` gets ``(s + floor(f dt), s + r, s + c)`` for frame
  ``f``, row ``r``, column ``c``, frame by frame, row by row;
* every segment starts at ``max(all previous ids) + 1`` (0 for the first).

Vision-encoder patches (Qwen2-VL ``rot_pos_emb``) are numbered window by window:
each ``m x m`` window contiguous, windows row-major.  M-RoPE frequency slot ``s``
reads component ``c(s)``: contiguous chunks of ``mrope_section`` (Qwen2/2.5-VL,
HF ``apply_multimodal_rotary_pos_emb``) or interleaved (Qwen3-VL
``apply_interleaved_mrope``: ``c = s mod C`` when ``c >= 1`` and ``s < C section[c]``,
else 0) or Ernie 4.5 VL's layout (the census: inv_freq's hw slots re-ordered even | odd,
then h and w interleaved, plus a t tail; so slot ``s < (C - 1) n`` keeps its own frequency
and reads component ``1 + s mod (C - 1)``, the rest component 0).  Integers are exact; angles
are exact products ``p * omega``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._numeric import exact, mp

__all__ = ["mrope_angles", "mrope_position_ids", "slot_components", "vision_position_ids"]


def _block(grid: Sequence[int], start: int, time_interval: Any) -> list[list[int]]:
    t, h, w = (int(n) for n in grid)
    rows: list[list[int]] = [[], [], []]
    for f in range(t):
        frame = int(mp.floor(exact(f) * exact(time_interval)))  # the interval taken exactly
        for r in range(h):
            for c in range(w):
                rows[0].append(start + frame)
                rows[1].append(start + r)
                rows[2].append(start + c)
    return rows


def mrope_position_ids(segments: Sequence[Any], *, time_interval: Any = 1) -> list[list[int]]:
    """``[3][L]`` ids of text runs (ints) and vision blocks (``[t, h, w]``), in sequence order."""
    rows: list[list[int]] = [[], [], []]
    start = 0
    for segment in segments:
        if isinstance(segment, (list, tuple)):
            part = _block(segment, start, time_interval)
        else:
            ids = list(range(start, start + int(segment)))
            part = [ids, list(ids), list(ids)]
        for row, extra in zip(rows, part, strict=True):
            row.extend(extra)
        if part[0]:
            start = max(max(p) for p in part) + 1
    return rows


def vision_position_ids(grid_t: int, grid_h: int, grid_w: int, *, merge_size: int) -> list[list[int]]:
    """``[2][t h w]`` (row, col) of each patch, windows of ``merge_size`` contiguous; frames repeat."""
    rows, cols = [], []
    m = merge_size
    for window_row in range(grid_h // m):
        for window_col in range(grid_w // m):
            for r in range(m):
                for c in range(m):
                    rows.append(window_row * m + r)
                    cols.append(window_col * m + c)
    return [rows * grid_t, cols * grid_t]


def slot_components(mrope_section: Sequence[int], section_order: str) -> list[int]:
    """The position component feeding each frequency slot (``chunked`` or ``interleaved``)."""
    total, count = sum(mrope_section), len(mrope_section)
    if section_order == "chunked":
        return [c for c, n in enumerate(mrope_section) for _ in range(n)]
    if section_order == "interleaved":
        return [s % count if s % count and s < count * mrope_section[s % count] else 0 for s in range(total)]
    if section_order == "ernie":  # components 1..C-1 take turns over their slots, component 0 the tail
        turns = total - mrope_section[0]
        return [1 + s % (count - 1) if s < turns else 0 for s in range(total)]
    msg = f"section_order must be 'chunked', 'interleaved' or 'ernie'; got {section_order!r}"
    raise ValueError(msg)


def mrope_angles(
    position_ids: Sequence[Sequence[int]],
    inv_freq: Sequence[float],
    mrope_section: Sequence[int],
    section_order: str,
) -> list[list[mp.mpf]]:
    """``[L][F]`` exact angles ``p[c(s), l] * omega_s`` of ``[C][L]`` ids (one leading axis only)."""
    components = slot_components(mrope_section, section_order)
    omegas = [exact(w) for w in inv_freq]
    length = len(position_ids[0])
    return [
        [exact(position_ids[c][j]) * w for c, w in zip(components, omegas, strict=True)]
        for j in range(length)
    ]
