r"""Factorised 2-D learned tables: bounding-box embeddings and row/column embeddings.

Document and vision models look up separate 1-D tables per axis and combine
them, by sum or by concatenation:

* :func:`bbox_embedding`: a token's box ``(x0, y0, x1, y1)`` looks up the x table
  at both x corners, the y table at both y corners, and height/width tables
  at ``y1 - y0`` and ``x1 - x0``.  LayoutLM sums the six rows
  (``combine="sum"``); LayoutLMv2/v3 concatenate them (``"concat"``), each
  table then holding a slice of the hidden size.
* :func:`row_col_embedding`: a patch at row ``r``, column ``c`` takes
  ``Row[r] + Col[c]`` (Pix2Struct, Kosmos-2.5: ``"sum"``) or ``[Col[c] | Row[r]]``
  (DETR's learned position embedding: ``"concat"``, the column first).

Every value is a table's own entry or a sum of them: exact gathers, sums in
float64 where the backend has it.
"""

from __future__ import annotations

from typing import Any

from . import _compat
from ._validate import (
    check_bool,
    check_choice,
    check_float_array,
    check_index,
    check_integer_array,
    namespace,
    text,
    value_error,
)

__all__ = ["COMBINE_MODES", "bbox_embedding", "row_col_embedding"]

#: How the per-axis rows are combined.
COMBINE_MODES = ("sum", "concat")


def _table(table: Any, name: str, xp: Any) -> tuple[int, int]:
    check_float_array(table, name, xp, ndim=2)
    rows, dim = (int(n) for n in table.shape)
    if rows < 1 or dim < 1:
        raise value_error(name, "a [rows, dim] table with rows, dim >= 1", text(f"shape {(rows, dim)}"))
    return rows, dim


def _gather(table: Any, index: Any, xp: Any) -> Any:
    """``table[index]``: shape ``index.shape + (dim,)``."""
    return xp.moveaxis(_compat.take_table(xp.permute_dims(table, (1, 0)), index, xp=xp), 0, -1)


def _combine(parts: list[Any], combine: str, out_dtype: Any, xp: Any, device: Any) -> Any:
    if combine == "concat":
        return xp.concat([_compat.astype(p, out_dtype, xp=xp) for p in parts], axis=-1)
    work = _compat.compute_dtype(xp, device)
    total = _compat.astype(parts[0], work, xp=xp)
    for part in parts[1:]:
        total = total + _compat.astype(part, work, xp=xp)
    return _compat.astype(total, out_dtype, xp=xp)


def _same_width(names: tuple[str, ...], dims: tuple[int, ...]) -> None:
    for name, dim in zip(names[1:], dims[1:], strict=True):
        if dim != dims[0]:
            rule = f"as wide as {names[0]} ({dims[0]} columns) with combine='sum'"
            raise value_error(name, rule, text(f"{dim} columns"))


def bbox_embedding(
    x_table: Any,
    y_table: Any,
    h_table: Any,
    w_table: Any,
    bbox: Any,
    /,
    *,
    combine: str = "sum",
    clip_shape: bool = False,
) -> Any:
    r"""LayoutLM's 2-D position embedding of boxes: ``X[x0], Y[y0], X[x1], Y[y1], H[y1-y0], W[x1-x0]``.

    Parameters
    ----------
    x_table, y_table, h_table, w_table : arrays of a real floating dtype, shape ``[rows, d]``
        The coordinate tables (HF ``x/y_position_embeddings``,
        ``max_2d_position_embeddings = 1024`` rows) and the height/width tables.
        With ``"sum"`` all four have the same width; with ``"concat"`` the
        widths may differ (LayoutLMv2/v3: ``coordinate_size`` and ``shape_size``).
    bbox : integer array, shape ``[..., 4]``
        ``(x0, y0, x1, y1)`` per token (LayoutLM normalises pages to 0..1000).
    combine : {"sum", "concat"}
        ``"sum"``: the six rows added, in the order listed (LayoutLM v1).
        ``"concat"``: ``[X x0 | Y y0 | X x1 | Y y1 | H h | W w]`` (LayoutLMv2, v3).
    clip_shape : bool
        Clip ``h`` and ``w`` to ``[0, rows - 1]`` of their tables before the
        lookup, as LayoutLMv3 does (``torch.clip(..., 0, 1023)``); otherwise a
        negative or too large side is an error (LayoutLM v1, v2).

    Returns
    -------
    array, shape ``[..., d]`` (sum) or ``[..., 4 d_xy + 2 d_hw]`` (concat)
        The promoted dtype of the tables.

    Raises
    ------
    TypeError
        Non-float tables, a non-integer ``bbox``, a non-bool ``clip_shape``.
    ValueError
        Tables that are not 2-D, widths that differ under ``"sum"``, an unknown
        ``combine``, ``bbox`` not ``[..., 4]``, a coordinate outside its table
        (``x`` in ``[0, rows_x)``, ``y`` in ``[0, rows_y)``), or without
        ``clip_shape`` a height or width outside ``[0, rows)`` of its table
        (read back on eager arrays, as every range check).

    Notes
    -----
    .. math::
        e^{\mathrm{sum}} = X_{x_0} + Y_{y_0} + X_{x_1} + Y_{y_1} + H_{y_1 - y_0} + W_{x_1 - x_0}

    ``LayoutLMEmbeddings.forward`` (``transformers/models/layoutlm/modeling_layoutlm.py:95-112``,
    5.24; the bbox terms of its sum), ``LayoutLMv2Embeddings._calc_spatial_position_embeddings``
    (``layoutlmv2/modeling_layoutlmv2.py:72-95``) and
    ``LayoutLMv3TextEmbeddings.calculate_spatial_position_embeddings``
    (``layoutlmv3/modeling_layoutlmv3.py:113-137``, with ``clip_shape``).  HF
    raises ``IndexError("The bbox coordinate values should be within 0-1000
    range.")`` for a corner outside the table.

    References
    ----------
    Xu et al. (2020), "LayoutLM: Pre-training of Text and Layout for Document
    Image Understanding", https://arxiv.org/abs/1912.13318; Huang et al.
    (2022), "LayoutLMv3", https://arxiv.org/abs/2204.08387.

    Examples
    --------
    Tables whose row ``r`` is ``r`` (x), ``10 r`` (y), ``100 r`` (h), ``1000 r`` (w):
    the box (1, 2, 3, 5) gives ``1 + 20 + 3 + 50 + 300 + 2000``.

    >>> import numpy as np
    >>> r = np.arange(8.0)[:, None]
    >>> box = np.asarray([[1, 2, 3, 5]])
    >>> bbox_embedding(r, 10 * r, 100 * r, 1000 * r, box).tolist()
    [[2374.0]]
    >>> bbox_embedding(r, 10 * r, 100 * r, 1000 * r, box, combine="concat").tolist()
    [[1.0, 20.0, 3.0, 50.0, 300.0, 2000.0]]
    """
    xp = namespace(x_table=x_table, y_table=y_table, h_table=h_table, w_table=w_table, bbox=bbox)
    names = ("x_table", "y_table", "h_table", "w_table")
    tables = (x_table, y_table, h_table, w_table)
    shapes = [_table(t, n, xp) for t, n in zip(tables, names, strict=True)]
    combine = check_choice(combine, "combine", COMBINE_MODES)
    clip_shape = check_bool(clip_shape, "clip_shape")
    if combine == "sum":
        _same_width(names, tuple(s[1] for s in shapes))
    check_integer_array(bbox, "bbox", xp, min_ndim=1)
    if bbox.shape[-1] != 4:
        raise value_error("bbox", "of shape [..., 4] (x0, y0, x1, y1)", text(f"shape {tuple(bbox.shape)}"))
    rows_x, rows_y, rows_h, rows_w = (s[0] for s in shapes)
    x = check_index(bbox[..., 0::2], "bbox", xp, rows=rows_x)  # x0, x1
    y = check_index(bbox[..., 1::2], "bbox", xp, rows=rows_y)  # y0, y1
    h, w = y[..., 1] - y[..., 0], x[..., 1] - x[..., 0]
    if clip_shape:
        h, w = _compat.clip(h, 0, rows_h - 1, xp=xp), _compat.clip(w, 0, rows_w - 1, xp=xp)
    else:
        h = check_index(h, "bbox", xp, rows=rows_h)
        w = check_index(w, "bbox", xp, rows=rows_w)
    parts = [
        _gather(x_table, x[..., 0], xp),
        _gather(y_table, y[..., 0], xp),
        _gather(x_table, x[..., 1], xp),
        _gather(y_table, y[..., 1], xp),
        _gather(h_table, h, xp),
        _gather(w_table, w, xp),
    ]
    out_dtype = xp.result_type(*(t.dtype for t in tables))
    return _combine(parts, combine, out_dtype, xp, _compat.device(x_table))


def row_col_embedding(
    row_table: Any, col_table: Any, rows: Any, cols: Any, /, *, combine: str = "sum"
) -> Any:
    r"""Row/column factorised position embedding: ``Row[r] + Col[c]`` or ``[Col[c] | Row[r]]``.

    Parameters
    ----------
    row_table, col_table : arrays of a real floating dtype, shape ``[rows, d]``
        The row and column tables (Pix2Struct ``row_embedder``/``column_embedder``,
        ``seq_len`` rows; DETR ``row_embeddings``/``column_embeddings``, 50 rows).
    rows, cols : integer arrays of the same shape
        Row and column index of each patch.
    combine : {"sum", "concat"}
        ``"sum"``: ``Row[r] + Col[c]`` (Pix2Struct, Kosmos-2.5; same widths).
        ``"concat"``: ``[Col[c] | Row[r]]``, the column (x) first (DETR's
        ``DetrLearnedPositionEmbedding``).

    Returns
    -------
    array, shape ``rows.shape + (d,)`` (sum) or ``+ (d_col + d_row,)`` (concat)
        The promoted dtype of the tables.

    Raises
    ------
    TypeError
        Non-float tables or non-integer indices.
    ValueError
        ``rows`` and ``cols`` of different shapes, an index outside its table,
        widths that differ under ``"sum"``, an unknown ``combine``.

    Notes
    -----
    Pix2Struct (``Pix2StructVisionEmbeddings.forward``,
    ``transformers/models/pix2struct/modeling_pix2struct.py:95-112``, 5.24)
    reads ``r`` and ``c`` from channels 0 and 1 of each flattened patch as
    floats and truncates them (``.long()``); its processor writes 1-based
    integers there, 0 for padding patches.  DETR
    (``detr/modeling_detr.py:371-398``) builds the full grid,
    ``cat(col_emb[j], row_emb[i])`` at ``(i, j)``, and returns it channels
    first, ``[B, 2d, H, W]``.

    Examples
    --------
    >>> import numpy as np
    >>> row_t, col_t = np.asarray([[0.0], [10.0]]), np.asarray([[0.0], [1.0], [2.0]])
    >>> rows, cols = np.asarray([0, 1, 1]), np.asarray([2, 0, 1])
    >>> row_col_embedding(row_t, col_t, rows, cols).tolist()
    [[2.0], [10.0], [11.0]]
    >>> row_col_embedding(row_t, col_t, rows, cols, combine="concat").tolist()
    [[2.0, 0.0], [0.0, 10.0], [1.0, 10.0]]
    """
    xp = namespace(row_table=row_table, col_table=col_table, rows=rows, cols=cols)
    (n_rows, d_row), (n_cols, d_col) = _table(row_table, "row_table", xp), _table(col_table, "col_table", xp)
    combine = check_choice(combine, "combine", COMBINE_MODES)
    if combine == "sum":
        _same_width(("row_table", "col_table"), (d_row, d_col))
    r = check_index(rows, "rows", xp, rows=n_rows)
    c = check_index(cols, "cols", xp, rows=n_cols)
    if tuple(r.shape) != tuple(c.shape):
        raise value_error("cols", f"of the shape of rows {tuple(r.shape)}", text(f"shape {tuple(c.shape)}"))
    row_part, col_part = _gather(row_table, r, xp), _gather(col_table, c, xp)
    parts = [row_part, col_part] if combine == "sum" else [col_part, row_part]
    out_dtype = xp.result_type(row_table.dtype, col_table.dtype)
    return _combine(parts, combine, out_dtype, xp, _compat.device(row_table))
