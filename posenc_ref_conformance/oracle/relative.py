"""Relative positions and Shaw et al. (2018) clipped indices.

``relative_positions`` is ``key - query`` (tensor2tensor, T5, wav2vec2-bert).
Shaw's index clips to ``[-left, right]`` and shifts by ``left`` so that it indexes
a table of ``left + right + 1`` rows; the symmetric paper form has
``left = right = k`` (``2k + 1`` rows).  HF BERT's ``relative_key`` uses the
opposite sign (``query - key``).
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["bert_index", "relative_positions", "shaw_index"]


def relative_positions(q_positions: Sequence[int], k_positions: Sequence[int]) -> list[list[int]]:
    """``[Lq][Lk]`` of ``k - q``."""
    return [[int(k) - int(q) for k in k_positions] for q in q_positions]


def shaw_index(relative: int, *, left: int, right: int) -> int:
    """``clip(relative, -left, right) + left`` (tensor2tensor, Wav2Vec2-BERT, Shaw et al.)."""
    return min(max(int(relative), -left), right) + left


def bert_index(relative: int, *, max_position_embeddings: int) -> int:
    """HF BERT ``relative_key``: ``(query - key) + P - 1``, no clipping (error outside the table)."""
    index = -int(relative) + max_position_embeddings - 1
    if not 0 <= index <= 2 * max_position_embeddings - 2:
        top = max_position_embeddings - 1
        msg = f"relative must lie in [{-top}, {top}]; got {relative}"
        raise ValueError(msg)
    return index
