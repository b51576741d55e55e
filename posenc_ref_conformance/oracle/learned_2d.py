"""Factorised 2-D learned tables: LayoutLM bbox embeddings and row/column embeddings.

LayoutLM (Xu et al. 2020; HF ``LayoutLMEmbeddings``): a box ``(x0, y0, x1, y1)``
adds ``X[x0] + Y[y0] + X[x1] + Y[y1] + H[y1 - y0] + W[x1 - x0]``; LayoutLMv2/v3
(HF ``_calc_spatial_position_embeddings``) concatenate the same six rows in
that order; LayoutLMv3 clips the height and width to ``[0, 1023]`` first.
Pix2Struct (Lee et al. 2023) adds ``Row[r] + Col[c]``; DETR's learned
position embedding (Carion et al. 2020) concatenates ``[Col[c] | Row[r]]``.
Sums are exact here (mpf); concatenations are copies.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = ["bbox_embedding", "row_col_embedding"]


def _row(table: Sequence[Sequence[float]], index: int, what: str) -> list[float]:
    if not 0 <= index < len(table):
        msg = f"{what} {index} is outside a table of {len(table)} rows"
        raise IndexError(msg)
    return list(table[index])


def _combine(parts: list[list[float]], combine: str) -> list:
    if combine == "concat":
        return [v for part in parts for v in part]
    return [mp.fsum(exact(v) for v in column) for column in zip(*parts, strict=True)]


def bbox_embedding(
    x_table: Sequence[Sequence[float]],
    y_table: Sequence[Sequence[float]],
    h_table: Sequence[Sequence[float]],
    w_table: Sequence[Sequence[float]],
    boxes: Sequence[Sequence[int]],
    *,
    combine: str,
    clip_shape: bool,
) -> list[list]:
    """``[N][d]`` (sum) or ``[N][4 d_xy + 2 d_hw]`` (concat) for boxes ``[N][4]``."""
    out = []
    for x0, y0, x1, y1 in boxes:
        h, w = y1 - y0, x1 - x0
        if clip_shape:
            h, w = min(max(h, 0), len(h_table) - 1), min(max(w, 0), len(w_table) - 1)
        parts = [
            _row(x_table, x0, "x0"),
            _row(y_table, y0, "y0"),
            _row(x_table, x1, "x1"),
            _row(y_table, y1, "y1"),
            _row(h_table, h, "height"),
            _row(w_table, w, "width"),
        ]
        out.append(_combine(parts, combine))
    return out


def row_col_embedding(
    row_table: Sequence[Sequence[float]],
    col_table: Sequence[Sequence[float]],
    rows: Sequence[int],
    cols: Sequence[int],
    *,
    combine: str,
) -> list[list]:
    """``[N][d]``: ``Row[r] + Col[c]`` (sum) or ``[Col[c] | Row[r]]`` (concat)."""
    out = []
    for r, c in zip(rows, cols, strict=True):
        row, col = _row(row_table, r, "row"), _row(col_table, c, "column")
        out.append(_combine([row, col] if combine == "sum" else [col, row], combine))
    return out
