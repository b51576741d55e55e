"""Relative positions and Shaw et al. (2018) clipped indices.

``relative_positions`` is ``key - query`` (tensor2tensor, T5, wav2vec2-bert).
Shaw's index clips to ``[-left, right]`` and shifts by ``left`` so that it indexes
a table of ``left + right + 1`` rows; the symmetric paper form has
``left = right = k`` (``2k + 1`` rows).  HF BERT's ``relative_key`` uses the
opposite sign (``query - key``).

The index picks rows of learned tables (Shaw et al. eq. 3-4; tensor2tensor
``_relative_attention_inner``): relative keys add ``q_i . w^K[idx_ij]`` to the
logits (:func:`shaw_logits`; HF BERT ``relative_key_query`` also adds
``k_j . w^K[idx_ij]``), relative values add ``sum_j alpha_ij w^V[idx_ij]`` to
the output (:func:`shaw_values`).  A table has ``left + right + 1`` rows
(tensor2tensor ``max_relative_position * 2 + 1``, Wav2Vec2-BERT
``left_max + right_max + 1``), or ``2 P - 1`` for HF BERT
(``nn.Embedding(2 * max_position_embeddings - 1, head_size)``).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = ["bert_index", "relative_positions", "shaw_index", "shaw_logits", "shaw_table_rows", "shaw_values"]


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


def shaw_table_rows(left: int, right: int, *, convention: str) -> int:
    """Rows of the table :func:`shaw_index` (``bert``: :func:`bert_index` with ``P = right``) indexes."""
    return 2 * right - 1 if convention == "bert" else left + right + 1


def _dot(a: Sequence[float], b: Sequence[float]) -> mp.mpf:
    return mp.fsum(exact(x) * exact(y) for x, y in zip(a, b, strict=True))


def shaw_logits(
    q: Sequence[Sequence[float]],
    index: Sequence[Sequence[int]],
    table: Sequence[Sequence[float]],
    k: Sequence[Sequence[float]] | None = None,
) -> list[list[mp.mpf]]:
    """``[Lq][Lk]``: ``q_i . table[index_ij]`` (``+ k_j . table[index_ij]`` when ``k`` is given)."""
    out = []
    for i, row in enumerate(index):
        line = []
        for j, r in enumerate(row):
            value = _dot(q[i], table[r])
            if k is not None:
                value += _dot(k[j], table[r])
            line.append(value)
        out.append(line)
    return out


def shaw_values(
    weights: Sequence[Sequence[float]], index: Sequence[Sequence[int]], table: Sequence[Sequence[float]]
) -> list[list[mp.mpf]]:
    """``[Lq][Dv]``: ``sum_j weights_ij table[index_ij]``."""
    width = len(table[0])
    return [
        [
            mp.fsum(exact(w) * exact(table[r][c]) for w, r in zip(wrow, irow, strict=True))
            for c in range(width)
        ]
        for wrow, irow in zip(weights, index, strict=True)
    ]
