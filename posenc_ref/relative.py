"""Relative positions and Shaw et al. relative position representations.

:func:`relative_positions` is the base of every bias family in posenc_ref
(T5 buckets, ALiBi, Sandwich, KERPLE, masks): it takes explicit position arrays,
so a block of a large bias matrix, one KV-cache decoding step and the full
matrix all agree.  :func:`shaw_index`, :func:`shaw_logits` and
:func:`shaw_values` implement Shaw, Uszkoreit & Vaswani (2018), "Self-Attention
with Relative Position Representations", https://arxiv.org/abs/1803.02155, with
the sign and clipping conventions of tensor2tensor, Wav2Vec2-BERT, HF BERT,
SpeechT5, VITS and Granite Speech as named options.
"""

from __future__ import annotations

import numbers
from typing import Any

from . import _compat
from ._validate import (
    POSITION_LIMIT,
    POSITION_REASON,
    broadcast_shapes,
    check_choice,
    check_float_array,
    check_index,
    check_int,
    check_integer_array,
    check_position_pair,
    check_relative,
    namespace,
    text,
    type_error,
    value_error,
    value_range,
)

__all__ = [
    "SHAW_CONVENTIONS",
    "relative_positions",
    "shaw_index",
    "shaw_logits",
    "shaw_table_rows",
    "shaw_values",
]

#: Sign and clipping conventions of :func:`shaw_index`.
SHAW_CONVENTIONS = ("tensor2tensor", "bert", "speecht5", "vits", "granite_speech")

_SHAW_ALIASES = {
    "t2t": "tensor2tensor uses 'tensor2tensor'",
    "wav2vec2_bert": "Wav2Vec2-BERT is 'tensor2tensor' with max_distance=(left, right)",
    "relative_key": "HF BERT relative_key uses 'bert'",
    "relative_key_query": "HF BERT relative_key_query uses 'bert' (pass k= to shaw_logits)",
    "granite_speech_plus": "Granite Speech Plus and 5 use 'granite_speech'",
    "granite_speech5": "Granite Speech Plus and 5 use 'granite_speech'",
    "seamless_m4t_v2": "SeamlessM4T-v2 is 'tensor2tensor' with max_distance=(left, right)",
}


# --- public API ----------------------------------------------------------------------------------


def relative_positions(q_positions: Any, k_positions: Any, /) -> Any:
    r"""Relative positions ``key - query`` for every (query, key) pair.

    Parameters
    ----------
    q_positions : array of an integer dtype, shape ``[..., Lq]``
        Absolute positions of the queries (e.g. ``arange(past, past + Lq)`` when
        decoding with a KV cache).
    k_positions : array of an integer dtype, shape ``[..., Lk]``
        Absolute positions of the keys.  Leading dimensions broadcast against
        those of ``q_positions`` (per-batch positions, left padding).

    Returns
    -------
    array, shape ``[..., Lq, Lk]``
        :math:`r_{ij} = k_j - q_i` as int64 (int32 on JAX without x64), on
        the inputs' device.  Negative entries are keys *before* the query.

    Raises
    ------
    TypeError
        If either argument is not an integer array.
    ValueError
        If either argument has no dimension, or holds a position with
        :math:`|p| \ge 2^{62}` (read back on eager arrays of 64-bit dtypes).

    Notes
    -----
    .. math:: r_{ij} = p^{k}_j - p^{q}_i

    This is the sign of tensor2tensor (``range_k - range_q``), T5 / mesh-tensorflow
    (``memory_position - context_position``) and Wav2Vec2-BERT; HF BERT's
    ``relative_key`` uses the opposite sign (see :func:`shaw_index`).  Because
    positions are explicit, ``relative_positions(q[a:b], k[c:d])`` equals
    ``relative_positions(q, k)[a:b, c:d]``: bias builders only ever materialise
    the block they are asked for.

    Dtype rule (every bias builder follows it): positions of any integer dtype
    are widened to int64 *before* subtracting, so differences of unsigned or
    narrow positions never wrap (``uint8`` positions 1 and 0 give -1, not 255;
    ``int8`` 127 and -128 give 255).  Positions must satisfy
    :math:`|p| < 2^{62}` so that every difference fits int64.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> r = relative_positions(xp.asarray([2]), xp.arange(4))  # one decoding step: [[-2, -1, 0, 1]]
    """
    xp = namespace(q_positions=q_positions, k_positions=k_positions)
    q, k = check_position_pair(q_positions, k_positions, xp)
    return _compat.pairwise_difference(q, k)


def _distance(value: object, name: str, minimum: int) -> int:
    return check_int(value, name, minimum=minimum, maximum=POSITION_LIMIT, reason=POSITION_REASON)


def _integer(value: object, name: str, rule: str) -> None:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise type_error(name, rule, value)


def _shaw_limits(max_distance: object, convention: str) -> tuple[int, int]:
    """``(left, right)`` for tensor2tensor; ``(0, P)`` bert; ``(0, L)`` speecht5; ``(0, w)`` vits;
    ``(context_size, max_pos_emb)`` granite_speech."""
    if convention in ("bert", "speecht5", "vits"):
        what = {
            "bert": "HF BERT's max_position_embeddings",
            "speecht5": "SpeechT5's encoder_max_relative_position",
            "vits": "VITS's window_size",
        }[convention]
        _integer(max_distance, "max_distance", f"an integer ({what}) when convention={convention!r}")
        return 0, _distance(max_distance, "max_distance", 1)
    if convention == "granite_speech":
        rule = "a pair (context_size, max_pos_emb) when convention='granite_speech'"
        if not isinstance(max_distance, tuple):
            raise type_error("max_distance", rule, max_distance)
        if len(max_distance) != 2:
            raise value_error("max_distance", rule, max_distance)
        _integer(max_distance[0], "max_distance[0] (context_size)", "an integer")
        _integer(max_distance[1], "max_distance[1] (max_pos_emb)", "an integer")
        context = _distance(max_distance[0], "max_distance[0] (context_size)", 1)
        offset = _distance(max_distance[1], "max_distance[1] (max_pos_emb)", 1)
        if context > offset:
            rule = f"at most max_pos_emb = {offset} (Granite Speech raises ValueError otherwise)"
            raise value_error("max_distance[0] (context_size)", rule, context)
        return context, offset
    if isinstance(max_distance, tuple):
        if len(max_distance) != 2:
            raise value_error("max_distance", "an integer k or a pair (left, right)", max_distance)
        left = _distance(max_distance[0], "max_distance[0] (left)", 0)
        right = _distance(max_distance[1], "max_distance[1] (right)", 0)
        return left, right
    _integer(max_distance, "max_distance", "an integer k or a pair (left, right)")
    k = _distance(max_distance, "max_distance", 1)
    return k, k


def _rows(left: int, right: int, convention: str) -> int:
    return {
        "bert": 2 * right - 1,
        "speecht5": 2 * right,
        "vits": 2 * right + 2,
        "granite_speech": 2 * right + 1,
    }.get(convention, left + right + 1)


def shaw_table_rows(max_distance: int | tuple[int, int], *, convention: str = "tensor2tensor") -> int:
    """Number of rows a Shaw table needs for :func:`shaw_index` with the same arguments.

    ``2k + 1`` for ``max_distance=k``, ``left + right + 1`` for ``(left, right)``,
    ``2 * max_position_embeddings - 1`` for ``convention="bert"``, ``2L`` for
    ``"speecht5"`` (``nn.Embedding(2 * max_length, dim)``), ``2w + 2`` for
    ``"vits"`` (VITS's ``2w + 1`` rows plus the zero row its padding stands for)
    and ``2 * max_pos_emb + 1`` for ``"granite_speech"``.

    Parameters
    ----------
    max_distance : int or (int, int)
        As for :func:`shaw_index`.
    convention : {"tensor2tensor", "bert", "speecht5", "vits", "granite_speech"}, optional
        As for :func:`shaw_index`.  Default ``"tensor2tensor"``.

    Returns
    -------
    int
        Rows of the ``[rows, depth]`` relative-embedding table.

    Raises
    ------
    TypeError, ValueError
        As :func:`shaw_index` for bad ``max_distance`` or ``convention``.

    References
    ----------
    Shaw, Uszkoreit and Vaswani, "Self-Attention with Relative Position
    Representations", NAACL 2018, arXiv:1803.02155.

    Examples
    --------
    ``2 * 2 + 1 = 5``; Wav2Vec2-BERT's ``64 + 8 + 1 = 73``; BERT's ``2 * 512 - 1 = 1023``;
    SpeechT5's ``2 * 160 = 320``; VITS's ``2 * 4 + 1`` plus the zero row; Granite Speech's
    ``2 * 512 + 1``:

    >>> shaw_table_rows(2), shaw_table_rows((64, 8)), shaw_table_rows(512, convention="bert")
    (5, 73, 1023)
    >>> shaw_table_rows(160, convention="speecht5"), shaw_table_rows(4, convention="vits")
    (320, 10)
    >>> shaw_table_rows((200, 512), convention="granite_speech")
    1025
    """
    convention = check_choice(convention, "convention", SHAW_CONVENTIONS, aliases=_SHAW_ALIASES)
    left, right = _shaw_limits(max_distance, convention)
    return _rows(left, right, convention)


def shaw_index(
    relative: Any, /, max_distance: int | tuple[int, int], *, convention: str = "tensor2tensor"
) -> Any:
    r"""Row of a Shaw relative-position table for each relative position.

    Parameters
    ----------
    relative : array of an integer dtype
        Relative positions ``key - query``, as from :func:`relative_positions`.
    max_distance : int or (int, int)
        ``convention="tensor2tensor"``: the clipping distance ``k >= 1``
        (tensor2tensor's ``max_relative_position``), or a pair ``(left, right)``
        of non-negative limits for keys before / after the query (Wav2Vec2-BERT's
        ``left_max_position_embeddings=64``, ``right_max_position_embeddings=8``).
        ``"bert"``: HF BERT's ``max_position_embeddings``.  ``"speecht5"``:
        SpeechT5's ``encoder_max_relative_position`` ``L``.  ``"vits"``: VITS's
        ``window_size`` ``w``.  ``"granite_speech"``: the pair ``(context_size,
        max_pos_emb)`` with ``1 <= context_size <= max_pos_emb`` (Granite Speech
        raises otherwise).
    convention : {"tensor2tensor", "bert", "speecht5", "vits", "granite_speech"}
        ``"tensor2tensor"``: clip ``key - query`` to ``[-left, right]`` and shift by
        ``left`` (tensor2tensor ``_generate_relative_positions_matrix``, Shaw et al.,
        Wav2Vec2-BERT ``_apply_relative_key_position_encoding``).
        ``"bert"``: HF BERT ``relative_key`` / ``relative_key_query`` (transformers
        v4; removed in v5): distance ``query - key`` indexed by
        ``distance + max_position_embeddings - 1``, *without clipping*.
        ``"speecht5"``: ``SpeechT5RelativePositionalEncoding.forward``
        (``speecht5/modeling_speecht5.py:433-442``): ``query - key`` clipped to
        ``[-L, L - 1]`` and shifted by ``L``: asymmetric, and the table is the
        mirror image of tensor2tensor's (``shaw_index(r, L, "speecht5") ==
        2L - 1 - shaw_index(r, (L - 1, L))``).
        ``"vits"``: ``VitsAttention`` (``vits/modeling_vits.py:907-993``): rows
        ``r + w`` inside the window ``|r| <= w``, and *no clipping*: every key
        farther away reads the extra row ``2w + 1``, which VITS's zero padding
        makes a zero row (build the table as ``[emb_rel_k; 0]``).
        ``"granite_speech"``: ``GraniteSpeechCTCEncoder.attention_dists``
        (``granite_speech/modeling_granite_speech.py:315-319``; Granite Speech Plus
        and Granite Speech 5 copy it): ``query - key`` clamped to
        ``[-context_size, context_size]`` plus ``max_pos_emb``.  Granite Speech
        attends block-locally: frames are cut into blocks of ``context_size`` and
        only pairs in the same block attend, so ``relative`` there is the
        difference of in-block positions, ``|r| < context_size``, and the clamp
        never binds on HF's own path.

    Returns
    -------
    array, same shape and dtype as ``relative``
        Indices in ``[0, shaw_table_rows(max_distance, convention=convention))``,
        computed in int64 (the clip and shift never wrap in a narrow dtype).

    Raises
    ------
    TypeError
        If ``relative`` is not an integer array or ``max_distance`` has the wrong type.
    ValueError
        For a bad ``max_distance`` or ``convention``, a table whose last row
        does not fit ``relative.dtype`` (int8 with ``max_distance=64`` needs
        row 128), and for ``convention="bert"``
        when a relative position falls outside the table (HF raises a bare index
        error there, transformers#17026).  That check reads the data; it is skipped
        where values are unknown (Dask, JAX under ``jit``).

    Notes
    -----
    With :math:`r_{ij} = k_j - q_i`:

    .. math::
        \begin{aligned}
        \text{tensor2tensor:}&\quad \mathrm{idx}_{ij} = \operatorname{clip}(r_{ij}, -\ell, \rho) + \ell \\
        \text{bert:}&\quad \mathrm{idx}_{ij} = -r_{ij} + P - 1 \\
        \text{speecht5:}&\quad \mathrm{idx}_{ij} = \operatorname{clip}(-r_{ij}, -L, L - 1) + L \\
        \text{vits:}&\quad \mathrm{idx}_{ij} = r_{ij} + w \ \text{if}\ |r_{ij}| \le w,
            \ \text{else}\ 2w + 1 \\
        \text{granite\_speech:}&\quad \mathrm{idx}_{ij} = \operatorname{clip}(-r_{ij}, -c, c) + M
        \end{aligned}

    with :math:`(\ell, \rho)` the left/right limits (:math:`\ell = \rho = k` for an
    integer ``max_distance``), :math:`P` BERT's ``max_position_embeddings``,
    :math:`L` SpeechT5's ``max_length``, :math:`w` VITS's window, :math:`c` and
    :math:`M` Granite Speech's ``context_size`` and ``max_pos_emb``.  Shaw et al.
    use :math:`2k + 1` rows, :math:`w_{\operatorname{clip}(j - i, k)}`.

    VITS never forms this index: for a self-attention of length :math:`n` it
    pads its ``[2w + 1, D]`` table with :math:`\max(n - w - 1, 0)` zero rows on
    each side and slices rows from :math:`\max(w + 1 - n, 0)`, so column
    :math:`c \in [0, 2n - 1)` of ``q @ E.T`` is relative position :math:`c - (n - 1)`;
    ``_relative_position_to_absolute_position`` then moves it to
    :math:`(i, j)` with :math:`c = j - i + n - 1` (the skew), and
    ``_absolute_position_to_relative_position`` is its inverse on the weights.
    Both together are exactly ``shaw_logits`` / ``shaw_values`` with this
    index and the zero row.

    Examples
    --------
    Relative positions -3..3: with ``k = 2`` they clip to -2..2 and shift by 2;
    with ``(left, right) = (2, 1)`` they clip to -2..1; ``"bert"`` with
    :math:`P = 4` gives :math:`3 - r`; SpeechT5 with :math:`L = 2` gives
    :math:`\operatorname{clip}(-r, -2, 1) + 2`; VITS with :math:`w = 2` gives
    :math:`r + 2`, and row 5 beyond the window; Granite Speech with
    ``(context_size, max_pos_emb) = (2, 4)`` gives :math:`\operatorname{clip}(-r, -2, 2) + 4`.

    >>> import numpy as np
    >>> r = np.arange(-3, 4)
    >>> shaw_index(r, 2).tolist()
    [0, 0, 1, 2, 3, 4, 4]
    >>> shaw_index(r, (2, 1)).tolist()
    [0, 0, 1, 2, 3, 3, 3]
    >>> shaw_index(r, 4, convention="bert").tolist()
    [6, 5, 4, 3, 2, 1, 0]
    >>> shaw_index(r, 2, convention="speecht5").tolist()
    [3, 3, 3, 2, 1, 0, 0]
    >>> shaw_index(r, 2, convention="vits").tolist()
    [5, 0, 1, 2, 3, 4, 5]
    >>> shaw_index(r, (2, 4), convention="granite_speech").tolist()
    [6, 6, 5, 4, 3, 2, 2]
    """
    xp = namespace(relative=relative)
    wide = check_relative(relative, "relative", xp)
    convention = check_choice(convention, "convention", SHAW_CONVENTIONS, aliases=_SHAW_ALIASES)
    left, right = _shaw_limits(max_distance, convention)
    last_row = _rows(left, right, convention) - 1
    top = int(xp.iinfo(relative.dtype).max)
    if last_row > top:
        rule = f"small enough that the last row {last_row} fits relative's dtype {relative.dtype} (<= {top})"
        raise value_error("max_distance", rule, max_distance, hint="pass relative as int64")
    if convention == "tensor2tensor":
        index = _compat.clip(wide, -left, right, xp=xp) + left
    elif convention == "speecht5":
        index = _compat.clip(-wide, -right, right - 1, xp=xp) + right
    elif convention == "granite_speech":
        index = _compat.clip(-wide, -left, left, xp=xp) + right
    elif convention == "vits":
        inside = (wide >= -right) & (wide <= right)
        window = _compat.clip(wide, -right, right, xp=xp) + right
        index = xp.where(inside, window, xp.full_like(wide, last_row))
    else:
        span = value_range(wide, xp)
        if span is not None and (span[0] < 1 - right or span[1] > right - 1):
            rule = (
                f"in [{1 - right}, {right - 1}] for convention='bert' with max_distance={right} "
                "(no clipping, as in HF BERT)"
            )
            raise value_error("relative", rule, text(f"values from {span[0]} to {span[1]}"))
        index = (right - 1) - wide
    return _compat.astype(index, relative.dtype, xp=xp)


def _gather_rows(table: Any, index: Any, xp: Any) -> Any:
    """``table[index]`` for a 2-D table: shape ``index.shape + (table.shape[1],)``."""
    flat = xp.take(table, xp.reshape(index, (-1,)), axis=0)
    return xp.reshape(flat, (*index.shape, table.shape[1]))


def _check_table_index(index: Any, table: Any, xp: Any) -> Any:
    """``index`` in the index dtype, checked against ``table`` (``[rows, depth]``)."""
    check_integer_array(index, "index", xp, min_ndim=2)
    check_float_array(table, "table", xp, ndim=2)
    return check_index(index, "index", xp, rows=table.shape[0], min_ndim=2)


def _swap_last(x: Any, xp: Any) -> Any:
    axes = list(range(x.ndim))
    axes[-1], axes[-2] = axes[-2], axes[-1]
    return xp.permute_dims(x, tuple(axes))


def shaw_logits(q: Any, index: Any, table: Any, /, *, k: Any = None) -> Any:
    r"""Relative-key logits of Shaw et al.: ``q_i . table[index_ij]`` (plus the key term).

    Parameters
    ----------
    q : array, shape ``[..., Lq, D]``, real floating
        Queries (e.g. ``[B, H, Lq, D]``).
    index : array of an integer dtype, shape ``[..., Lq, Lk]``
        Table rows from :func:`shaw_index`; its leading dimensions broadcast
        against those of ``q`` (``[Lq, Lk]`` for a table shared by every batch
        and head, as in tensor2tensor; ``[B, 1, Lq, Lk]`` per batch).
    table : array, shape ``[R, D]``, real floating
        The relative-key embeddings :math:`w^K` (shared across heads).
    k : array, shape ``[..., Lk, D]``, optional
        Keys.  When given, the key-side term of HF BERT's ``relative_key_query``
        (Huang et al. 2020, method 4) is added.

    Returns
    -------
    array, shape ``[..., Lq, Lk]``
        Unscaled relative logits in the promoted dtype of the float inputs.
        Both tensor2tensor (q pre-scaled by ``D**-0.5``) and HF BERT (terms added
        before ``/ sqrt(D)``) scale them like ``q . k``: pass
        ``bias=scale * shaw_logits(...)`` to :func:`posenc_ref.attention`.

    Raises
    ------
    TypeError
        For non-float ``q``/``table``/``k`` or a non-integer ``index``.
    ValueError
        For mismatched shapes or (eager arrays) indices outside the table.

    Notes
    -----
    .. math::
        e^{\mathrm{rel}}_{ij} = q_i \cdot w^K_{\mathrm{idx}_{ij}}
        \;\bigl(+\; k_j \cdot w^K_{\mathrm{idx}_{ij}}\bigr)

    This is tensor2tensor's ``_relative_attention_inner(q, k, rel_keys,
    transpose=True)`` without its content term ``q . k``, computed as one batched
    matrix product per query row; the gathered table ``[Lq, Lk, D]`` is the only
    intermediate larger than the output.

    Examples
    --------
    A query at 1 and keys at 0, 1, 2 with ``k = 1`` use rows 0, 1, 2 of the
    table; :math:`q = (1, 2)` dotted with the rows :math:`(1, 0), (0, 1), (1, 1)`
    gives 1, 2, 3.

    >>> import numpy as np
    >>> index = shaw_index(relative_positions(np.asarray([1]), np.arange(3)), 1)
    >>> index.tolist()
    [[0, 1, 2]]
    >>> table = np.asarray([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> shaw_logits(np.asarray([[1.0, 2.0]]), index, table).tolist()
    [[1.0, 2.0, 3.0]]
    """
    xp = namespace(q=q, index=index, table=table, k=k)
    check_float_array(q, "q", xp, min_ndim=2)
    index = _check_table_index(index, table, xp)
    if q.shape[-1] != table.shape[1] or q.shape[-2] != index.shape[-2]:
        rule = f"of shape [..., Lq={index.shape[-2]}, D={table.shape[1]}]"
        raise value_error("q", rule, text(f"shape {tuple(q.shape)}"))
    leads = {"index": index.shape[:-2], "q": q.shape[:-2]}
    if k is not None:
        check_float_array(k, "k", xp, min_ndim=2)
        if k.shape[-1] != table.shape[1] or k.shape[-2] != index.shape[-1]:
            rule = f"of shape [..., Lk={index.shape[-1]}, D={table.shape[1]}]"
            raise value_error("k", rule, text(f"shape {tuple(k.shape)}"))
        leads["k"] = k.shape[:-2]
    broadcast_shapes(**leads)
    out_dtype = xp.result_type(*(a.dtype for a in (q, table, k) if a is not None))
    work = _compat.compute_dtype(xp, _compat.device(q))
    emb = _gather_rows(_compat.astype(table, work, xp=xp), index, xp)  # [..., Lq, Lk, D]
    logits = xp.matmul(_compat.astype(q, work, xp=xp)[..., None, :], _swap_last(emb, xp))[..., 0, :]
    if k is not None:
        emb_by_key = xp.permute_dims(emb, (*range(emb.ndim - 3), emb.ndim - 2, emb.ndim - 3, emb.ndim - 1))
        key_term = xp.matmul(emb_by_key, _compat.astype(k, work, xp=xp)[..., None])[..., 0]  # [..., Lk, Lq]
        logits = logits + _swap_last(key_term, xp)
    return _compat.astype(logits, out_dtype, xp=xp)


def shaw_values(weights: Any, index: Any, table: Any, /) -> Any:
    r"""Relative-value term of Shaw et al.: ``sum_j weights_ij * table[index_ij]``.

    Parameters
    ----------
    weights : array, shape ``[..., Lq, Lk]``, real floating
        Attention weights (after softmax), e.g. from
        ``posenc_ref.attention(..., return_weights=True)``.
    index : array of an integer dtype, shape ``[..., Lq, Lk]``
        Table rows from :func:`shaw_index` (leading dimensions broadcast against
        those of ``weights``).
    table : array, shape ``[R, Dv]``, real floating
        The relative-value embeddings :math:`w^V`.

    Returns
    -------
    array, shape ``[..., Lq, Dv]``
        To be added to the content output ``weights @ v``.

    Raises
    ------
    TypeError, ValueError
        As :func:`shaw_logits`.

    Notes
    -----
    .. math:: z^{\mathrm{rel}}_i = \sum_j \alpha_{ij}\, w^V_{\mathrm{idx}_{ij}}

    tensor2tensor's ``_relative_attention_inner(weights, v, rel_values,
    transpose=False)`` without the content term.  HF BERT has no value term.

    Examples
    --------
    Weights :math:`(1/2, 1/4, 1/4)` over the rows :math:`(1, 0), (0, 1), (1, 1)`:
    :math:`(1/2 + 1/4,\; 1/4 + 1/4) = (0.75, 0.5)`.

    >>> import numpy as np
    >>> index = np.asarray([[0, 1, 2]])
    >>> table = np.asarray([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    >>> shaw_values(np.asarray([[0.5, 0.25, 0.25]]), index, table).tolist()
    [[0.75, 0.5]]
    """
    xp = namespace(weights=weights, index=index, table=table)
    check_float_array(weights, "weights", xp, min_ndim=2)
    index = _check_table_index(index, table, xp)
    if weights.shape[-2:] != index.shape[-2:]:
        rule = f"of shape [..., {index.shape[-2]}, {index.shape[-1]}]"
        raise value_error("weights", rule, text(f"shape {tuple(weights.shape)}"))
    broadcast_shapes(index=index.shape[:-2], weights=weights.shape[:-2])
    out_dtype = xp.result_type(weights.dtype, table.dtype)
    work = _compat.compute_dtype(xp, _compat.device(weights))
    emb = _gather_rows(_compat.astype(table, work, xp=xp), index, xp)  # [..., Lq, Lk, Dv]
    out = xp.matmul(_compat.astype(weights, work, xp=xp)[..., None, :], emb)[..., 0, :]
    return _compat.astype(out, out_dtype, xp=xp)
