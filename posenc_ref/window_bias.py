r"""Windowed 2-D relative positions: Swin/BEiT bias tables, Swin-V2 log coordinates, SAM/ViTDet terms.

Vision transformers that attend inside a window of ``Wh x Ww`` patches (or over
a whole patch grid) give each pair of patches a term that depends only on
their 2-D offset ``(dh, dw) = (h_a - h_b, w_a - w_b)`` (query minus key):

* :func:`window_bias`: Swin, BEiT, Donut, Swin2SR, MaskFormer's Swin backbone,
  data2vec-vision: a learned table of ``(2Wh - 1)(2Ww - 1)`` rows, one column
  per head, gathered at the 2-D relative index (BEiT: three more rows for its
  cls token);
* :func:`swinv2_log_coords`: Swin-V2's continuous position bias input, the
  log-spaced relative coordinates its MLP maps to a bias (the MLP is the
  model's, not a positional formula, and is left out);
* :func:`decomposed_rel_pos`: SAM, SAM-HQ, ViTDet, MViTv2 and their copies:
  per-axis tables gathered at per-axis relative coordinates and contracted
  with the query, ``rel_h[qh, qw, kh] + rel_w[qh, qw, kw]``.

Tables are used at their own size.  Models that resize them first (BEiT's
per-forward bilinear resize of the sub-table, SAM's linear resize of ``R`` to
``2 max(q, k) - 1`` rows) compose that resize before these calls; a table of
the wrong size is a ``ValueError`` naming it, its shape and the rows expected.
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat
from ._validate import (
    ELEMENTS_REASON,
    MAX_ELEMENTS,
    check_choice,
    check_device,
    check_float_array,
    check_namespace,
    namespace,
    output_dtype,
    text,
    type_error,
    value_error,
)

__all__ = ["DECOMPOSED_COORDS", "decomposed_rel_pos", "swinv2_log_coords", "window_bias"]

#: How :func:`decomposed_rel_pos` computes the relative coordinate of query and key grids of
#: different sizes: ``"float32"``, the float32 expression and ``.long()`` of SAM/ViTDet/MViTv2 code;
#: ``"exact"``, the floor of the same expression in exact arithmetic.
DECOMPOSED_COORDS = ("float32", "exact")

_MAX_SIDE = 2**12  # a window or grid side; (2 * side - 1) rows per axis


def _window(value: object, name: str) -> tuple[int, int]:
    """``value`` (an int or a pair of ints, each in ``[1, 2**12]``) as ``(Wh, Ww)``."""
    if isinstance(value, (list, tuple)):
        if len(value) != 2:
            raise value_error(name, "an int or a (height, width) pair", text(f"{len(value)} entries"))
        pair = value
    elif isinstance(value, bool) or not isinstance(value, int):
        raise type_error(name, "an int or a (height, width) pair of ints", value)
    else:
        pair = (value, value)
    for side in pair:
        if isinstance(side, bool) or not isinstance(side, int):
            raise type_error(name, "an int or a (height, width) pair of ints", value)
        if not 1 <= side <= _MAX_SIDE:
            raise value_error(name, f"sides in [1, {_MAX_SIDE}]", tuple(pair))
    return int(pair[0]), int(pair[1])


def _is_hf_none(value: object) -> bool:
    """HF's "no pretrained window": 0 or (0, 0)."""
    sides = value if isinstance(value, (list, tuple)) else [value]
    return len(sides) in (1, 2) and all(type(side) is int and side == 0 for side in sides)


def _window_index(wh: int, ww: int, cls_token: bool, *, xp: Any, device: Any) -> Any:
    """The 2-D relative index ``[N, N]`` (``[N + 1, N + 1]`` with BEiT's cls rows), N = Wh Ww."""
    idx_dtype = _compat.index_dtype(xp, device)
    n = wh * ww
    flat = _compat.arange(n, xp=xp, dtype=idx_dtype, device=device)
    h, w = flat // ww, flat % ww
    index = (h[:, None] - h[None, :] + (wh - 1)) * (2 * ww - 1) + (w[:, None] - w[None, :] + (ww - 1))
    if not cls_token:
        return index
    rows = (2 * wh - 1) * (2 * ww - 1)
    top = xp.concat(
        [
            _compat.full((1, 1), rows + 2, xp=xp, dtype=idx_dtype, device=device),  # cls -> cls
            _compat.full((1, n), rows, xp=xp, dtype=idx_dtype, device=device),  # cls -> token
        ],
        axis=1,
    )
    body = xp.concat([_compat.full((n, 1), rows + 1, xp=xp, dtype=idx_dtype, device=device), index], axis=1)
    return xp.concat([top, body], axis=0)  # token -> cls in column 0


def window_bias(table: Any, /, window_size: Any, *, cls_token: bool = False) -> Any:
    r"""Swin/BEiT relative position bias of a ``Wh x Ww`` window: the per-head gather of a learned table.

    Token ``a`` of the window (row-major: ``a = h_a Ww + w_a``) attending to
    token ``b`` gets ``table[idx(a, b), head]``, where ``idx`` numbers the
    2-D offset (query minus key) height-major.

    Parameters
    ----------
    table : array of a real floating dtype, shape ``[(2Wh - 1)(2Ww - 1) (+ 3), heads]``
        The learned table (HF ``relative_position_bias_table``); with
        ``cls_token`` three more rows at the end: cls -> token, token -> cls,
        cls -> cls (BEiT, data2vec-vision).
    window_size : int or (int, int)
        The window ``(Wh, Ww)`` (an int for a square one), sides in ``[1, 2**12]``.
    cls_token : bool
        BEiT's layout: a cls token before the ``N = Wh Ww`` patch tokens.

    Returns
    -------
    array, shape ``[heads, N, N]`` (``[heads, N + 1, N + 1]`` with ``cls_token``)
        The table's dtype, namespace and device; values are the table's own.

    Raises
    ------
    TypeError
        ``table`` is not a real floating array; ``window_size`` or ``cls_token``
        of the wrong type.
    ValueError
        ``table`` is not 2-D or its row count is not the window's (the message
        names both; a BEiT table resized for another window must be resized
        first); a window side outside ``[1, 2**12]``; an output above ``2**30``
        elements.

    Notes
    -----
    .. math::
        \mathrm{idx}(a, b) = (h_a - h_b + W_h - 1)(2W_w - 1) + (w_a - w_b + W_w - 1),

        \mathrm{bias}[h, a, b] = B[\mathrm{idx}(a, b), h]

    With ``cls_token`` row and column 0 are the cls token: ``idx(cls, b) = R``,
    ``idx(a, cls) = R + 1``, ``idx(cls, cls) = R + 2``, ``R = (2W_h - 1)(2W_w - 1)``.
    Matches transformers 5.24 ``SwinRelativePositionBias``
    (``models/swin/modeling_swin.py:329-370``; Donut-Swin, Swin2SR,
    MaskFormer-Swin and the Swin-V2 index are copies) and
    ``BeitRelativePositionBias.generate_relative_position_index``
    (``models/beit/modeling_beit.py:194-218``).  BEiT's forward first resizes
    the sub-table bilinearly to the current window (``:220-241``), which is
    the identity only for square windows at the pretrained size: compose
    that resize before this call.

    References
    ----------
    Liu et al. (2021), "Swin Transformer", https://arxiv.org/abs/2103.14030;
    Bao et al. (2021), "BEiT", https://arxiv.org/abs/2106.08254.

    Examples
    --------
    A 1 x 2 window has 1 x 3 offsets; with the table ``[[0], [1], [2]]`` the
    bias is the index itself: ``idx = dw + 1``.

    >>> import numpy as np
    >>> window_bias(np.asarray([[0.0], [1.0], [2.0]]), (1, 2)).tolist()
    [[[1.0, 0.0], [2.0, 1.0]]]
    """
    xp = namespace(table=table)
    check_float_array(table, "table", xp, ndim=2)
    wh, ww = _window(window_size, "window_size")
    if not isinstance(cls_token, bool):
        raise type_error("cls_token", "True or False", cls_token)
    tokens = wh * ww + cls_token
    rows = (2 * wh - 1) * (2 * ww - 1) + 3 * cls_token
    if table.shape[0] != rows:
        what = "(2Wh - 1)(2Ww - 1) + 3" if cls_token else "(2Wh - 1)(2Ww - 1)"
        rule = f"of {rows} = {what} rows for the window {(wh, ww)} (resize it first)"
        raise value_error("table", rule, text(f"shape {tuple(table.shape)}"))
    if tokens * tokens * table.shape[1] > MAX_ELEMENTS:
        raise value_error(
            "window_size", f"at most {MAX_ELEMENTS} bias elements", (wh, ww), hint=ELEMENTS_REASON
        )
    index = _window_index(wh, ww, cls_token, xp=xp, device=_compat.device(table))
    return _compat.take_table(xp.permute_dims(table, (1, 0)), index, xp=xp)


def swinv2_log_coords(
    window_size: Any,
    /,
    *,
    pretrained_window_size: Any = None,
    dtype: Any = None,
    xp: Any = None,
    device: Any = None,
) -> Any:
    r"""Swin-V2's log-spaced relative coordinates of a window: the input of its continuous position bias.

    Parameters
    ----------
    window_size : int or (int, int)
        The window ``(Wh, Ww)``; without ``pretrained_window_size`` each side
        must be at least 2 (the coordinates are divided by ``side - 1``).
    pretrained_window_size : int or (int, int), optional
        The window the model was pretrained with (HF ``pretrained_window_size``,
        where 0 means none); sides at least 2.  Default: ``window_size``.
    dtype : real floating dtype, optional
        Default: float64 where the backend/device has it, else float32.
    xp, device : array namespace and device, optional
        Where to create the result (default NumPy, its default device).

    Returns
    -------
    array, shape ``[2Wh - 1, 2Ww - 1, 2]``
        ``[..., 0]`` the height coordinate of offset ``dh = i - (Wh - 1)``,
        ``[..., 1]`` the width coordinate of ``dw = j - (Ww - 1)``.

    Raises
    ------
    TypeError
        Sides that are not ints.
    ValueError
        A side outside ``[1, 2**12]``; a side of 1 in the window that divides
        (``window_size`` without a pretrained window, else
        ``pretrained_window_size``), whose ``side - 1`` is 0.

    Notes
    -----
    .. math::
        \hat d = \frac{8\,d}{P - 1}, \qquad
        c = \operatorname{sign}(\hat d)\,\frac{\log_2(1 + |\hat d|)}{\log_2 8}

    per axis, ``d`` the offset, ``P`` the pretrained window side (or the
    window's).  Computed in float64 where available and rounded once; HF
    computes in float32 and casts to the MLP's dtype.  Matches transformers
    5.24 ``Swinv2SelfAttention.create_coords_table_and_index``
    (``models/swinv2/modeling_swinv2.py:457-476``), which divides only when
    ``pretrained_window_size[0] > 0`` or ``window_size[0] > 1``: a 1 x 1 window
    gives zeros there, a ``(1, Ww)`` window leaves the width undivided, and an
    ``(Wh, 1)`` window (or a pretrained side of 1) gives ``0/0 = NaN``
    (``inf`` for non-zero offsets).  Here each of those is a ``ValueError``.

    References
    ----------
    Liu et al. (2022), "Swin Transformer V2", https://arxiv.org/abs/2111.09883, eq. 4.

    Examples
    --------
    A 2 x 2 window: offsets -1, 0, 1 map to -1, 0, 1 (``log2(9) / 3 = 1.0566``).

    >>> import numpy as np
    >>> c = swinv2_log_coords(2)
    >>> np.round(c[:, 1, 0], 4).tolist()
    [-1.0566, 0.0, 1.0566]
    """
    xp = check_namespace(xp)
    device = check_device(device, xp)
    wh, ww = _window(window_size, "window_size")
    if pretrained_window_size is None:
        name, (ph, pw) = "window_size", (wh, ww)
    elif _is_hf_none(pretrained_window_size):
        rule = "None or sides >= 2"
        hint = "HF's pretrained_window_size 0 means none: pass None"
        raise value_error("pretrained_window_size", rule, pretrained_window_size, hint=hint)
    else:
        name, (ph, pw) = "pretrained_window_size", _window(pretrained_window_size, "pretrained_window_size")
    if min(ph, pw) < 2:
        rule = "sides >= 2 (the coordinates are divided by side - 1)"
        hint = "HF divides only if the first side is > 1: zeros for 1 x 1, NaN for (Wh, 1)"
        raise value_error(name, rule, (ph, pw), hint=hint)
    dtype = output_dtype(dtype, "dtype", xp, device)
    work = _compat.compute_dtype(xp, device)

    def axis(side: int, norm: int) -> Any:
        d = _compat.arange(-(side - 1), side, xp=xp, dtype=work, device=device) * (8.0 / (norm - 1))
        return xp.sign(d) * xp.log2(xp.abs(d) + 1.0) / 3.0

    shape = (2 * wh - 1, 2 * ww - 1)
    h = xp.broadcast_to(axis(wh, ph)[:, None], shape)
    w = xp.broadcast_to(axis(ww, pw)[None, :], shape)
    return _compat.astype(xp.stack([h, w], axis=-1), dtype, xp=xp)


def _float32(value: float) -> float:
    """``value`` rounded to the nearest float32 (ties to even), as a Python float."""
    import struct

    return struct.unpack("f", struct.pack("f", value))[0]


def _axis_index(q: int, k: int, coords: str, *, xp: Any, device: Any) -> Any:
    """Row of the per-axis table for query ``i`` and key ``j``: ``[q, k]``."""
    idx_dtype = _compat.index_dtype(xp, device)
    if coords == "exact" or q == k:  # equal sizes: i - j + k - 1 either way
        i = _compat.arange(q, xp=xp, dtype=idx_dtype, device=device)[:, None]
        j = _compat.arange(k, xp=xp, dtype=idx_dtype, device=device)[None, :]
        return (i * k + (k - 1 - j) * q) // min(q, k)
    f32 = xp.float32
    sq, sk = _float32(max(k / q, 1.0)), _float32(max(q / k, 1.0))
    shift = _float32((k - 1) * max(q / k, 1.0))
    qc = _compat.arange(q, xp=xp, dtype=f32, device=device)[:, None] * _compat.asarray(
        sq, xp=xp, dtype=f32, device=device
    )
    kc = _compat.arange(k, xp=xp, dtype=f32, device=device)[None, :] * _compat.asarray(
        sk, xp=xp, dtype=f32, device=device
    )
    rel = (qc - kc) + _compat.asarray(shift, xp=xp, dtype=f32, device=device)
    return _compat.astype(xp.trunc(rel), idx_dtype, xp=xp)


def _check_rel_table(t: Any, name: str, q: int, k: int, width: int, xp: Any) -> None:
    check_float_array(t, name, xp, ndim=2)
    rows = 2 * max(q, k) - 1
    if tuple(t.shape) != (rows, width):
        rule = f"of shape ({rows}, {width}): 2 max(q, k) - 1 rows for q = {q}, k = {k} (resize it first)"
        raise value_error(name, rule, text(f"shape {tuple(t.shape)}"))


def decomposed_rel_pos(
    query: Any, rel_pos_h: Any, rel_pos_w: Any, /, *, k_size: Any, coords: str = "float32"
) -> Any:
    r"""Decomposed 2-D relative position terms (MViTv2, SAM, ViTDet): ``rel_h + rel_w`` per query and key.

    Parameters
    ----------
    query : array of a real floating dtype, shape ``[..., qh, qw, C]``
        The queries on their ``qh x qw`` grid (unscaled: SAM scales only the
        content logits).
    rel_pos_h, rel_pos_w : arrays of a real floating dtype
        Shapes ``[2 max(qh, kh) - 1, C]`` and ``[2 max(qw, kw) - 1, C]``.
        The per-axis tables at their gathered size (SAM/ViTDet resize them
        linearly to this size first; compose that resize before the call).
    k_size : int or (int, int)
        The key grid ``(kh, kw)``.
    coords : {"float32", "exact"}
        How the coordinate of grids of different sizes is rounded:
        ``"float32"``, the float32 expression and ``.long()`` of the SAM,
        ViTDet and MViTv2 code (and HF); ``"exact"``, the floor of the exact
        value.  Equal sizes give ``i - j + k - 1`` either way.

    Returns
    -------
    array, shape ``[..., qh, qw, kh, kw]``
        The promoted dtype of the inputs; reshape to ``[..., qh qw, kh kw]`` and
        add to the logits.

    Raises
    ------
    TypeError
        Arrays that are not real floating; ``k_size`` not ints.
    ValueError
        ``query`` below 3 dimensions; a grid side outside ``[1, 2**12]``; a
        table whose shape is not ``(2 max(q, k) - 1, C)`` (the message names
        the table, its shape and the rows expected); an unknown ``coords``.

    Notes
    -----
    Per axis (sizes ``q``, ``k``), the table row of query ``i`` and key ``j`` is

    .. math::
        r(i, j) = \Bigl\lfloor i \max(\tfrac{k}{q}, 1) - j \max(\tfrac{q}{k}, 1)
                  + (k - 1)\max(\tfrac{q}{k}, 1) \Bigr\rfloor
                = \Bigl\lfloor \frac{i k + (k - 1 - j) q}{\min(q, k)} \Bigr\rfloor

    and with :math:`R_h[i, j] = T_h[r_h(i, j)]`, :math:`R_w` likewise,

    .. math::
        \mathrm{out}[\dots, y, x, k_y, k_x] = \sum_c q_{y x c} R_h[y, k_y, c]
                                              + \sum_c q_{y x c} R_w[x, k_x, c].

    ``coords="float32"`` evaluates ``r`` as the code does: each factor rounded
    to float32, float32 products and sums, truncation; it differs from the
    exact floor by one row at some entries of some unequal sizes (8 of 48 at
    ``q = 8, k = 6``).  Matches transformers 5.24 ``SamVisionAttention.get_rel_pos``
    and ``get_decomposed_rel_pos`` (``models/sam/modeling_sam.py:729-801``) and
    ViTDet's ``get_rel_pos`` / ``add_decomposed_relative_positions``
    (``models/vitdet/modeling_vitdet.py:125-199``), both from
    facebookresearch/segment_anything ``image_encoder.py``.

    References
    ----------
    Li et al. (2022), "MViTv2", https://arxiv.org/abs/2112.01526;
    Kirillov et al. (2023), "Segment Anything", https://arxiv.org/abs/2304.02643.

    Examples
    --------
    A 1 x 1 query grid over 1 x 2 keys: ``rel_h`` is ``q . T_h[0] = 1``, ``rel_w``
    ``q . T_w[r]`` with rows ``r = 1 - j`` (3, then 2).

    >>> import numpy as np
    >>> q = np.asarray([[[1.0, 2.0]]])
    >>> th, tw = np.asarray([[1.0, 0.0]]), np.asarray([[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
    >>> decomposed_rel_pos(q, th, tw, k_size=(1, 2)).tolist()
    [[[[4.0, 3.0]]]]
    """
    xp = namespace(query=query, rel_pos_h=rel_pos_h, rel_pos_w=rel_pos_w)
    check_float_array(query, "query", xp, min_ndim=3)
    qh, qw = _window(tuple(query.shape[-3:-1]), "query")
    kh, kw = _window(k_size, "k_size")
    width = query.shape[-1]
    _check_rel_table(rel_pos_h, "rel_pos_h", qh, kh, width, xp)
    _check_rel_table(rel_pos_w, "rel_pos_w", qw, kw, width, xp)
    coords = check_choice(coords, "coords", DECOMPOSED_COORDS)
    lead = tuple(query.shape[:-3])
    if math.prod(lead) * qh * qw * kh * kw > MAX_ELEMENTS:
        raise value_error("k_size", f"at most {MAX_ELEMENTS} output elements", (kh, kw), hint=ELEMENTS_REASON)
    out_dtype = xp.result_type(query.dtype, rel_pos_h.dtype, rel_pos_w.dtype)
    device = _compat.device(query)
    work = _compat.compute_dtype(xp, device)
    q = _compat.astype(query, work, xp=xp)
    terms = []
    for table, size_q, size_k in ((rel_pos_h, qh, kh), (rel_pos_w, qw, kw)):
        index = _axis_index(size_q, size_k, coords, xp=xp, device=device)
        gathered = _compat.take_table(
            xp.permute_dims(_compat.astype(table, work, xp=xp), (1, 0)), index, xp=xp
        )
        terms.append(xp.permute_dims(gathered, (1, 0, 2)))  # [q, C, k]
    n = q.ndim
    rel_h = xp.matmul(q, terms[0])  # [..., qh, qw, C] @ [qh, C, kh] -> [..., qh, qw, kh]
    swapped = xp.permute_dims(q, (*range(n - 3), n - 2, n - 3, n - 1))  # [..., qw, qh, C]
    rel_w = xp.matmul(swapped, terms[1])  # [..., qw, qh, kw]
    rel_w = xp.permute_dims(rel_w, (*range(n - 3), n - 2, n - 3, n - 1))
    out = rel_h[..., :, :, :, None] + rel_w[..., :, :, None, :]
    return _compat.astype(out, out_dtype, xp=xp)
