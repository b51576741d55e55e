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

Three speech models index their tables their own way (transformers 5.24):
SpeechT5 ``pe_k[clip(i - j, -L, L - 1) + L]`` (query minus key, ``2L`` rows);
VITS ``r + w`` inside the window ``|r| <= w`` and a zero row (here row
``2w + 1``) outside it, no clipping; Granite Speech
``clamp(i - j, -c, c) + M`` over in-block positions (``2M + 1`` rows).
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = [
    "bert_index",
    "granite_speech_index",
    "relative_positions",
    "shaw_index",
    "shaw_logits",
    "shaw_table_rows",
    "shaw_values",
    "speecht5_index",
    "vits_index",
]


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


def speecht5_index(relative: int, *, max_length: int) -> int:
    """SpeechT5: ``d = query - key = -relative``; ``d < -L -> -L``, ``d >= L -> L - 1``; plus ``L``."""
    d = -int(relative)
    if d < -max_length:
        d = -max_length
    if d >= max_length:
        d = max_length - 1
    return d + max_length


def vits_index(relative: int, *, window: int) -> int:
    """VITS: ``relative + w`` when ``|relative| <= w``; the zero row ``2w + 1`` farther away."""
    r = int(relative)
    return r + window if -window <= r <= window else 2 * window + 1


def granite_speech_index(relative: int, *, context_size: int, max_pos_emb: int) -> int:
    """Granite Speech: ``clamp(query - key, -c, c) + M`` (``c <= M``, else HF raises)."""
    if not 1 <= context_size <= max_pos_emb:
        msg = f"context_size must lie in [1, max_pos_emb = {max_pos_emb}]; got {context_size}"
        raise ValueError(msg)
    return min(max(-int(relative), -context_size), context_size) + max_pos_emb


def shaw_table_rows(left: int, right: int, *, convention: str) -> int:
    """Rows of the table each convention's index addresses.

    ``bert``: ``2P - 1`` (``P = right``); ``speecht5``: ``2L``; ``vits``: ``2w + 1`` plus
    the zero row; ``granite_speech``: ``2M + 1`` (``M = right``); else ``left + right + 1``.
    """
    if convention == "bert":
        return 2 * right - 1
    if convention == "speecht5":
        return 2 * right
    if convention == "vits":
        return 2 * right + 1 + 1
    if convention == "granite_speech":
        return 2 * right + 1
    return left + right + 1


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
