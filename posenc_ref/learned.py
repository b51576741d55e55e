r"""Learned absolute position tables: lookup with each model family's row offset, and resizing.

Models that learn a ``[rows, dim]`` table disagree on which row a token at
0-based position ``p`` uses (:data:`LEARNED_OFFSETS`):

* ``plain``: row ``p``; GPT-2 ``wpe``, BERT, the Whisper decoder, keras-hub
  ``PositionEmbedding``.
* ``opt``: row ``p + 2``; HF OPT and BART (``offset = 2``).
* ``roberta``: row ``p + padding_idx + 1``; fairseq
  ``LearnedPositionalEmbedding`` and the HF RoBERTa family (514 = 512 + 2 rows).

In the ``opt`` and ``roberta`` conventions position ``-1`` is the padding token:
OPT numbers pads ``cumsum(mask) * mask - 1 = -1`` (row 1), fairseq's
``make_positions`` puts them on row ``padding_idx``.  :func:`token_positions`
computes these positions from a padding mask.
"""

from __future__ import annotations

import math
from typing import Any

from . import _compat, _validate

__all__ = ["LEARNED_OFFSETS", "interpolate_table", "learned", "token_positions"]

LEARNED_OFFSETS = ("plain", "opt", "roberta")

_OFFSET_ALIASES = {
    "bart": "BART uses 'opt' (row = position + 2)",
    "fairseq": "fairseq's learned positions use 'roberta' (row = position + padding_idx + 1)",
    "gpt2": "GPT-2 uses 'plain'",
    "bert": "BERT uses 'plain'",
}


def _check_table(table: Any, xp: Any, *, floating: bool = False) -> tuple[int, int]:
    if floating:
        _validate.check_float_array(table, "table", xp)
    elif _compat.namespace_of(table) is None:
        raise _validate.type_error("table", "an array of shape (rows, dim)", table)
    shape = tuple(table.shape)
    if len(shape) != 2 or shape[0] < 1:
        rule = "a 2-D array of shape (rows, dim) with at least one row"
        raise _validate.value_error("table", rule, _validate.text(f"shape {shape}"))
    return shape[0], shape[1]


def _row_shift(offset: str, padding_idx: int | None, rows: int) -> int:
    if offset != "roberta":
        if padding_idx is not None:
            rule = f"None unless offset='roberta' (offset={offset!r})"
            raise _validate.value_error("padding_idx", rule, padding_idx)
        return 2 if offset == "opt" else 0
    padding_idx = 1 if padding_idx is None else padding_idx
    return _validate.check_int(padding_idx, "padding_idx", minimum=0, maximum=rows - 1) + 1


def learned(table: Any, positions: Any, /, *, offset: str = "plain", padding_idx: int | None = None) -> Any:
    r"""Rows of a learned position table for ``positions``, with a model family's row offset.

    Parameters
    ----------
    table : array, shape ``(rows, dim)``
        The learned table (any dtype; values are copied, not computed).
    positions : array of an integer dtype, any shape
        0-based token positions; ``-1`` is the padding token with ``"opt"``
        and ``"roberta"``.  Every resulting row must exist in ``table``.
    offset : {"plain", "opt", "roberta"}
        ``"plain"``: row ``p`` (GPT-2, BERT).  ``"opt"``: row ``p + 2`` (HF OPT,
        BART).  ``"roberta"``: row ``p + padding_idx + 1`` (fairseq, RoBERTa).
    padding_idx : int, optional
        fairseq's padding row, only with ``offset="roberta"`` (default 1).

    Returns
    -------
    array
        ``table[row(positions)]``, shape ``positions.shape + (dim,)``, the
        table's dtype, namespace and device.

    Raises
    ------
    TypeError
        ``positions`` is not an integer array.
    ValueError
        ``table`` is not 2-D with at least one row; an unknown ``offset``;
        ``padding_idx`` given without ``offset="roberta"``, negative or not a
        row of the table; a
        position whose row falls outside the table (the message names the
        largest or smallest position and the number of rows).  The range
        check needs the values, so it is skipped for Dask arrays and under
        ``jax.jit`` (where JAX's ``take`` returns NaN rows instead).

    Notes
    -----
    .. math::

        \mathrm{out}[\dots, :] = T[p_{\dots} + s, :], \qquad
        s = 0,\ 2,\ \text{or}\ \mathrm{padding\_idx} + 1,
        \qquad 0 \le p + s < \mathrm{rows}.

    References
    ----------
    transformers ``models/gpt2/modeling_gpt2.py`` (``wpe``),
    ``models/opt/modeling_opt.py`` (``OPTLearnedPositionalEmbedding``, offset 2),
    fairseq ``modules/learned_positional_embedding.py`` and ``utils.make_positions``.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import posenc_ref as pr
    >>> table = xp.reshape(xp.arange(12, dtype=xp.float32), (6, 2))
    >>> pr.learned(table, xp.asarray([0, 1]), offset="opt")
    Array([[4., 5.],
           [6., 7.]], dtype=array_api_strict.float32)
    """
    xp = _validate.namespace(table=table, positions=positions)
    rows, dim = _check_table(table, xp)
    positions = _validate.check_positions(positions, "positions", xp)
    offset = _validate.check_choice(offset, "offset", LEARNED_OFFSETS, aliases=_OFFSET_ALIASES)
    shift = _row_shift(offset, padding_idx, rows)
    rule = (
        f"in [{-shift}, {rows - 1 - shift}] for a table of {rows} rows "
        f"with offset {offset!r} (row = position + {shift})"
    )
    _validate.check_position_range(positions, "positions", xp, low=-shift, high=rows - 1 - shift, rule=rule)
    shape = tuple(positions.shape)
    flat = xp.reshape(positions, (math.prod(shape),)) + shift
    return xp.reshape(xp.take(table, flat, axis=0), (*shape, dim))


def interpolate_table(table: Any, /, new_length: int) -> Any:
    r"""Resize a learned ``(rows, dim)`` table to ``new_length`` rows by linear interpolation.

    Corner-aligned: the first and last rows are kept exactly and the rows in
    between are sampled at evenly spaced fractional positions, as
    ``torch.nn.functional.interpolate(table.T[None], size=new_length,
    mode="linear", align_corners=True)[0].T`` does.  Used to extend or shrink
    a learned table (e.g. ViT/DeiT position tables, longer BERT contexts).

    Parameters
    ----------
    table : array of a real floating dtype, shape ``(rows, dim)``
        The table, ``rows >= 1``.
    new_length : int
        Number of rows of the result, at least 1.

    Returns
    -------
    array
        Shape ``(new_length, dim)``, the table's dtype, namespace and device;
        computed in float64 where available and cast once.

    Raises
    ------
    TypeError
        ``table`` is not of a real floating dtype; ``new_length`` is not an int.
    ValueError
        ``table`` is not 2-D with at least one row; ``new_length < 1``, or an
        output above ``2**30`` elements (8 GiB in float64); where the index
        dtype is int32 (JAX without x64, a device without int64),
        ``(new_length - 1) * (rows - 1) >= 2**31``.

    Notes
    -----
    With ``L = rows`` and ``N = new_length``, row ``i`` samples source position
    ``x_i = i (L - 1) / (N - 1)`` (``x_0 = 0`` when ``N = 1``):

    .. math::

        \mathrm{out}_i = (1 - w_i)\, T_{\lfloor x_i \rfloor} + w_i\, T_{\lfloor x_i \rfloor + 1},
        \qquad w_i = x_i - \lfloor x_i \rfloor,

    where ``floor(x_i)`` and ``w_i`` come from exact integer arithmetic
    (``i (L - 1)`` divided by ``N - 1`` with remainder), and the second term
    is absent when ``w_i = 0``.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import posenc_ref as pr
    >>> pr.interpolate_table(xp.asarray([[0.0], [1.0]]), 3)
    Array([[0. ],
           [0.5],
           [1. ]], dtype=array_api_strict.float64)
    """
    xp = _validate.namespace(table=table)
    rows, dim = _check_table(table, xp, floating=True)
    limit = max(1, _validate.MAX_ELEMENTS // max(dim, 1))
    reason = _validate.ELEMENTS_REASON
    new_length = _validate.check_int(new_length, "new_length", maximum=limit, reason=reason)
    dev = _compat.device(table)
    cdt = _compat.compute_dtype(xp, dev)
    idx = _compat.index_dtype(xp, dev)
    top = int(xp.iinfo(idx).max)
    if (new_length - 1) * (rows - 1) > top:  # only reachable with int32 indices
        index = _validate.dtype_name(idx)
        rule = f"at most {top // max(rows - 1, 1) + 1} for {rows} rows where the index dtype is {index}"
        got = _validate.text(f"{new_length} (the row arithmetic i * (rows - 1) would overflow)")
        raise _validate.value_error("new_length", rule, got)
    numer = _compat.arange(new_length, xp=xp, dtype=idx, device=dev) * (rows - 1)
    denom = max(new_length - 1, 1)
    lower = numer // denom
    upper = xp.minimum(lower + 1, _compat.full((), rows - 1, xp=xp, dtype=idx, device=dev))
    weight = xp.expand_dims(_compat.astype(numer % denom, cdt, xp=xp) / denom, axis=-1)
    values = _compat.astype(table, cdt, xp=xp)
    out = xp.take(values, lower, axis=0) * (1 - weight) + xp.take(values, upper, axis=0) * weight
    return _compat.astype(out, table.dtype, xp=xp)


def token_positions(mask: Any, /, *, cache_length: int = 0) -> Any:
    r"""0-based positions of the real tokens in a padded batch, ``-1`` at padding.

    This is how fairseq, HF Speech2Text/M2M100/RoBERTa and OPT number tokens
    when the batch is padded: real tokens count up along the last axis (after
    ``cache_length`` tokens already in the cache), padding tokens get ``-1``.
    Feed the result to :func:`learned` with ``offset="roberta"`` or ``"opt"``,
    or to ``sinusoidal(..., convention="fairseq")``, which add each family's
    row offset.

    Parameters
    ----------
    mask : array of bool or integer dtype, shape ``(..., length)``
        True (non-zero) for real tokens, False (zero) for padding.
    cache_length : int
        Tokens already processed (incremental decoding), at least 0.

    Returns
    -------
    array
        Integer positions in the index dtype of ``mask``'s device (int64, or
        int32 where it has no int64: JAX without x64, array-api-strict's
        ``Device("no_x64")``), same shape and device as ``mask``.

    Raises
    ------
    TypeError
        ``mask`` is not a bool or integer array; ``cache_length`` not an int.
    ValueError
        ``mask`` has no dimensions; ``cache_length`` outside ``[0, 2**62]``
        (``[0, 2**30]`` where the index dtype is int32: JAX without x64, a
        device without int64).

    Notes
    -----
    .. math::

        p_{\dots, t} = \Big(c + \sum_{u \le t} m_{\dots, u}\Big)\, m_{\dots, t} - 1

    This equals fairseq ``utils.make_positions(tokens, padding_idx) -
    (padding_idx + 1)``, HF ``create_position_ids_from_input_ids(input_ids,
    padding_idx, past_key_values_length=c) - (padding_idx + 1)``, and, with
    ``c = 0``, OPT's ``cumsum(attention_mask) * attention_mask - 1``.

    Examples
    --------
    >>> import array_api_strict as xp
    >>> import posenc_ref as pr
    >>> pr.token_positions(xp.asarray([[True, True, False], [True, True, True]]))
    Array([[ 0,  1, -1],
           [ 0,  1,  2]], dtype=array_api_strict.int64)
    """
    xp = _validate.namespace(mask=mask)
    _validate.check_mask_array(mask, "mask", xp)
    idx = _compat.index_dtype(xp, _compat.device(mask))
    limit = _validate.position_limit(xp, idx)
    reason = (
        _validate.POSITION_REASON if limit == _validate.POSITION_LIMIT else "the index dtype is int32 here"
    )
    cache_length = _validate.check_int(cache_length, "cache_length", minimum=0, maximum=limit, reason=reason)
    if xp.isdtype(mask.dtype, "integral"):  # the cast keeps zero and non-zero apart (uint64 too)
        real = _compat.astype(_compat.astype(mask, idx, xp=xp) != 0, idx, xp=xp)
    else:
        real = _compat.astype(mask, idx, xp=xp)
    return (xp.cumulative_sum(real, axis=-1, dtype=idx) + cache_length) * real - 1
