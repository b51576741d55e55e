"""T5 relative attention bias: log-spaced buckets of relative positions.

Raffel et al. (2020), "Exploring the Limits of Transfer Learning with a Unified
Text-to-Text Transformer", https://arxiv.org/abs/1910.10683, section 2.1; the
bucket function of mesh-tensorflow ``_relative_position_bucket`` and HF
``T5Attention._relative_position_bucket``.

Exactness.  The references compute the log-spaced buckets with a floating-point
``log`` (float32 in HF and mesh-tensorflow), so a distance lying exactly on (or
within rounding of) a bucket boundary can land on either side depending on the
``log`` implementation.  Here the boundaries are integers computed once on the
host with exact integer arithmetic, and buckets are counted by integer
comparisons: the result is the mathematical value of the formula, identical on
every backend, device and integer dtype.  It equals HF (PyTorch float32, CPU)
and a float64 evaluation for every distance in all common configurations
(num_buckets/max_distance 32/128, 64/128, 32/256, 128/1024, 16/64, both
directions).  Among 3648 configurations checked (num_buckets 2..69 and up to
1024, max_distance 3..32768, both directions, ``|rp| <= 2 * max_distance``) the
float evaluations differ from the exact value only here:

* PyTorch float32 one bucket lower at an exact tie: 36/50 causal, rp = -30;
* float32 (PyTorch and NumPy) one bucket higher just below a boundary:
  55/32768 causal at rp = -3343, 1000/32768 bidirectional at ``|rp| = 21756``;
* float64 one bucket lower at exact ties, e.g. 9/128 causal at rp = -8, -16,
  -64; 19/16 causal at -12; 36/32 causal at -24; 54/64 causal at -36.

The variants below use the same bidirectional or causal bucket function
(:func:`t5_bucket`, exact integer boundaries) and add what one model family
composes around it (transformers 5.24 line numbers):

* :func:`t5_layout_bias`: LayoutLMv2 / LayoutLMv3 / PP-DocLayout-V2: the 1-D bias
  plus x and y biases of bounding-box coordinates (the left edge ``bbox[..., 0]``
  and the *bottom* edge ``bbox[..., 3]``), divided by ``sqrt(head_dim)``
  (LayoutLMv3, PP-DocLayout-V2) or not (LayoutLMv2);
* :func:`t5_udop_bias`: UDOP: the 1-D bias plus horizontal and vertical biases of
  box centres scaled by ``scaling_factor`` (100) and truncated, with optional
  prefix-token buckets;
* :func:`t5_gated_bias`: WavLM: the bias times a per-query gate computed from the
  hidden states;
* :func:`t5_stream_buckets`: ProphetNet: causal buckets of the main stream and of
  the predict streams (keys ``p - 1`` and ``p``);
* :func:`t5_segment_bias`: CPM-Ant: cross-segment pairs take a segment-pair row
  ``num_buckets + s_q * num_segments + s_k`` of the same table.

The float parts (sums of table rows, the ``1/sqrt(head_dim)``, WavLM's gate) are
evaluated in the tables' dtype; the buckets are exact integers on every backend.
"""

from __future__ import annotations

import functools
import math
from typing import Any

from . import _compat
from ._mlx_float64 import exp as _exp
from ._validate import (
    BUCKETS_REASON,
    HEADS_REASON,
    MAX_BUCKETS,
    MAX_CHANNELS,
    MAX_HEADS,
    POSITION_LIMIT,
    POSITION_REASON,
    check_bool,
    check_finite_values,
    check_float_array,
    check_index,
    check_int,
    check_position_pair,
    check_positions,
    check_real,
    check_relative,
    namespace,
    position_limit,
    text,
    type_error,
    value_error,
)
from ._validate import broadcast_shapes as _broadcast_shapes

__all__ = [
    "t5_bias",
    "t5_bucket",
    "t5_bucket_thresholds",
    "t5_gated_bias",
    "t5_layout_bias",
    "t5_segment_bias",
    "t5_stream_buckets",
    "t5_udop_bias",
]


def _split(num_buckets: int, bidirectional: bool) -> tuple[int, int]:
    """(buckets per direction, max_exact)."""
    half = num_buckets // 2 if bidirectional else num_buckets
    return half, half // 2


def _check_config(
    num_buckets: object,
    max_distance: object,
    bidirectional: object,
    *,
    buckets_name: str = "num_buckets",
    distance_name: str = "max_distance",
) -> tuple[int, int, bool]:
    bidirectional = check_bool(bidirectional, "bidirectional")
    num_buckets = check_int(num_buckets, buckets_name, minimum=2, maximum=MAX_BUCKETS, reason=BUCKETS_REASON)
    if bidirectional and num_buckets < 4:
        rule = ">= 4 when bidirectional=True (each direction needs at least one exact bucket)"
        raise value_error(buckets_name, rule, num_buckets)
    max_distance = check_int(
        max_distance, distance_name, minimum=1, maximum=POSITION_LIMIT, reason=POSITION_REASON
    )
    max_exact = _split(num_buckets, bidirectional)[1]
    if max_distance <= max_exact:
        rule = (
            f"> the exact range max_exact={max_exact} (num_buckets={num_buckets}, "
            f"bidirectional={bidirectional})"
        )
        raise value_error(distance_name, rule, max_distance)
    return num_buckets, max_distance, bidirectional


def _root_ceil(target: int, power: int) -> int:
    """The smallest integer ``n >= 0`` with ``n**power >= target`` (Newton's method on integers)."""
    if target <= 1:
        return max(target, 0)
    n = 1 << -(-target.bit_length() // power)  # n**power >= target
    while True:  # decreasing from above to floor(target ** (1 / power))
        smaller = ((power - 1) * n + target // n ** (power - 1)) // power
        if smaller >= n:
            break
        n = smaller
    return n if n**power >= target else n + 1


@functools.lru_cache(maxsize=64)
def _thresholds(half: int, max_exact: int, max_distance: int) -> tuple[int, ...]:
    """Smallest ``n`` reaching each log bucket ``max_exact + s``, s = 1 .. half - max_exact - 1.

    ``floor(log(n / e) / log(D / e) * N) >= s``  <=>  ``(n / e)**N >= (D / e)**s``
    <=>  ``n**N >= D**s * e**(N - s)`` (integers, exact), with ``e = max_exact``,
    ``D = max_distance`` and ``N = half - max_exact``: an integer ``N``-th root.
    """
    e, d, big_n = max_exact, max_distance, half - max_exact
    return tuple(max(e + 1, _root_ceil(d**s * e ** (big_n - s), big_n)) for s in range(1, big_n))


def t5_bucket_thresholds(
    *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> tuple[int, tuple[int, ...]]:
    """``(max_exact, thresholds)``: where each log-spaced T5 bucket starts.

    ``thresholds[s - 1]`` is the smallest distance ``n = |rp|`` (bidirectional)
    or ``n = max(-rp, 0)`` (causal) that falls in bucket ``max_exact + s`` of
    its direction; distances below ``max_exact`` have a bucket each.  For the
    default 32/128 bidirectional configuration: ``(8, (12, 16, 23, 32, 46, 64, 91))``.

    Parameters
    ----------
    bidirectional, num_buckets, max_distance
        As for :func:`t5_bucket` (HF ``T5Attention._relative_position_bucket``).

    Returns
    -------
    (int, tuple of int)
        ``max_exact`` and the start distance of each log-spaced bucket.

    Raises
    ------
    TypeError, ValueError
        As :func:`t5_bucket`.

    References
    ----------
    Raffel et al., "Exploring the Limits of Transfer Learning with a Unified
    Text-to-Text Transformer", JMLR 2020, arXiv:1910.10683.

    Examples
    --------
    With 32/128 bidirectional, ``B = 16`` buckets per direction and ``e = 8``:
    bucket ``8 + s`` starts at the smallest ``n`` with
    ``n >= 8 * 16**(s / 8) = 8 * 2**(s / 2)``, i.e. 11.3, 16, 22.6, 32, ... rounded
    up.  Causal 8/64 (``B = 8``, ``e = 4``): ``4 * 16**(s / 4) = 8, 16, 32``.

    >>> t5_bucket_thresholds()
    (8, (12, 16, 23, 32, 46, 64, 91))
    >>> t5_bucket_thresholds(bidirectional=False, num_buckets=8, max_distance=64)
    (4, (8, 16, 32))
    """
    num_buckets, max_distance, bidirectional = _check_config(num_buckets, max_distance, bidirectional)
    half, max_exact = _split(num_buckets, bidirectional)
    return max_exact, _thresholds(half, max_exact, max_distance)


def t5_bucket(
    relative: Any, /, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> Any:
    r"""T5 bucket index of each relative position (exact integers).

    Parameters
    ----------
    relative : array of an integer dtype
        Relative positions ``key - query`` (HF's ``memory_position -
        context_position``), e.g. from :func:`posenc_ref.relative_positions`.
    bidirectional : bool
        ``True`` for encoders (HF ``not is_decoder``; mesh-tensorflow ``not
        fully_autoregressive``): half of the buckets for keys after the query.
        ``False`` for decoders: keys after the query share bucket 0.
    num_buckets : int
        HF ``relative_attention_num_buckets`` (32 in T5, mT5, UMT5, LongT5,
        Pix2Struct, keras-hub).  At least 2, and at least 4 when bidirectional.
    max_distance : int
        HF ``relative_attention_max_distance`` (128).  Must exceed ``max_exact``.

    Returns
    -------
    array, same shape, dtype and device as ``relative``
        Buckets in ``[0, num_buckets)``.  With 32/128 bidirectional, bucket 16 is
        never used and saturation starts at ``|rp| = 91``; causal saturation starts
        at ``rp = -113``.

    Raises
    ------
    TypeError
        If ``relative`` is not an integer array (float positions would make the
        bucket depend on rounding) or an option has the wrong type.
    ValueError
        If ``num_buckets < 2`` (``< 4`` bidirectional) or above 4096,
        ``max_distance <= max_exact`` or above ``2**62``, or ``num_buckets - 1``
        does not fit ``relative.dtype``.

    Notes
    -----
    With :math:`B` buckets per direction (:math:`B = \lfloor\text{num\_buckets}/2\rfloor`
    if bidirectional, else ``num_buckets``), :math:`e = \lfloor B/2\rfloor`,
    :math:`n = |r|` (bidirectional) or :math:`\max(-r, 0)` (causal):

    .. math::
        b(n) = \begin{cases} n & n < e \\
        \min\!\Bigl(e + \Bigl\lfloor \dfrac{\ln(n/e)}{\ln(D/e)}\,(B - e) \Bigr\rfloor,\; B - 1\Bigr)
        & n \ge e \end{cases}

    plus :math:`B` when bidirectional and :math:`r > 0`.  The floor is evaluated
    exactly by comparing :math:`n` with integer thresholds
    (:func:`t5_bucket_thresholds`), not with a float ``log``.

    Dtype rule: ``relative`` of any integer dtype is widened to int64 before
    ``abs`` and the comparisons (``abs`` of int8 -128 wraps to -128), and the
    buckets are cast back to ``relative.dtype``; unsigned values beyond int64
    saturate, which gives the same (last) bucket.

    Examples
    --------
    Bidirectional 32/128 (:math:`B = 16`, :math:`e = 8`): distances below 8 are
    their own bucket, keys after the query add 16; :math:`|r| = 10` gives
    :math:`8 + \lfloor 8 \ln(10/8) / \ln 16 \rfloor = 8 + \lfloor 0.64 \rfloor = 8`,
    and :math:`|r| = 200` saturates at bucket 15 (31 after the query).  Causal
    (:math:`B = 32`, :math:`e = 16`): keys after the query share bucket 0, a
    distance 10 below 16 is its own bucket and 200 saturates at 31.

    >>> import numpy as np
    >>> r = np.asarray([-200, -10, -1, 0, 1, 10, 200])
    >>> t5_bucket(r).tolist()
    [15, 8, 1, 0, 17, 24, 31]
    >>> t5_bucket(r, bidirectional=False).tolist()
    [31, 10, 1, 0, 0, 0, 0]
    """
    xp = namespace(relative=relative)
    wide = check_relative(relative, "relative", xp)
    num_buckets, max_distance, bidirectional = _check_config(num_buckets, max_distance, bidirectional)
    dtype = relative.dtype
    top = int(xp.iinfo(dtype).max)
    if num_buckets - 1 > top:
        rule = f"small enough that bucket {num_buckets - 1} fits relative's dtype {dtype} (<= {top})"
        raise value_error("num_buckets", rule, num_buckets, hint="pass relative as int64")
    buckets = _buckets(wide, num_buckets, max_distance, bidirectional, xp)
    return _compat.astype(buckets, dtype, xp=xp)


def _buckets(relative: Any, num_buckets: int, max_distance: int, bidirectional: bool, xp: Any) -> Any:
    """Buckets of index-dtype ``relative`` (no wrapping: ``|r| <= 2**63 - 1``), in that dtype."""
    half, max_exact = _split(num_buckets, bidirectional)
    table = _bucket_table(half, max_exact, max_distance, bidirectional)
    if table is None:
        return _count_buckets(relative, half, max_exact, max_distance, bidirectional, xp)
    cap, buckets = table
    lut = _compat.asarray(buckets, xp=xp, dtype=relative.dtype, device=_compat.device(relative))
    return _compat.take_table(lut, _lut_index(relative, cap, xp), xp=xp)


def _count_buckets(
    relative: Any, half: int, max_exact: int, max_distance: int, bidirectional: bool, xp: Any
) -> Any:
    """Buckets by counting thresholds (fallback for a huge saturation distance)."""
    dtype = relative.dtype
    top = int(xp.iinfo(dtype).max)
    relative = _compat.clip(relative, -top, top, xp=xp)  # abs(-2**63) would wrap; buckets saturate anyway
    if bidirectional:
        offset = _compat.astype(relative > 0, dtype, xp=xp) * half
        n = xp.abs(relative)
    else:
        offset = None
        n = -xp.minimum(relative, xp.zeros_like(relative))
    count = xp.zeros_like(n)
    for threshold in _thresholds(half, max_exact, max_distance):
        if threshold > top:
            break
        count = count + _compat.astype(n >= threshold, dtype, xp=xp)
    bucket = xp.where(n < max_exact, n, count + max_exact)
    return bucket if offset is None else bucket + offset


#: Largest saturation distance for which buckets come from a lookup table.
_LUT_LIMIT = 1 << 16


@functools.lru_cache(maxsize=64)
def _bucket_table(
    half: int, max_exact: int, max_distance: int, bidirectional: bool
) -> tuple[int, tuple[int, ...]] | None:
    """``(cap, buckets)``: the bucket of every relative position in ``[-cap, cap]``.

    ``cap`` is the distance where the last bucket starts; every farther position
    shares the bucket of ``-cap`` or ``cap``.  ``None`` when ``cap`` is too large
    for a table.
    """
    thresholds = _thresholds(half, max_exact, max_distance)
    cap = max(thresholds[-1], max_exact) if thresholds else max_exact
    if cap > _LUT_LIMIT:
        return None
    buckets = []
    for r in range(-cap, cap + 1):
        n = abs(r) if bidirectional else max(-r, 0)
        b = n if n < max_exact else max_exact + sum(n >= t for t in thresholds)
        buckets.append(b + (half if bidirectional and r > 0 else 0))
    return cap, tuple(buckets)


def _lut_index(relative: Any, cap: int, xp: Any) -> Any:
    """Row of the bucket table for each (index-dtype) relative position: ``clip(r, -cap, cap) + cap``."""
    return _compat.clip(relative, -cap, cap, xp=xp) + cap


def t5_bias(
    q_positions: Any,
    k_positions: Any,
    table: Any,
    /,
    *,
    bidirectional: bool = True,
    max_distance: int = 128,
) -> Any:
    r"""T5 position bias ``[..., H, Lq, Lk]`` gathered from a ``[num_buckets, H]`` table.

    Parameters
    ----------
    q_positions, k_positions : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Absolute positions (HF ``compute_bias``: ``arange(Lq) + past_seen_tokens``
        and ``arange(Lk)``).
    table : array, shape ``[num_buckets, H]``, real floating
        HF's ``relative_attention_bias.weight`` (``nn.Embedding(num_buckets,
        n_heads)``).  flaxformer stores ``[H, num_buckets]``: pass its transpose.
    bidirectional, max_distance
        As :func:`t5_bucket`; ``num_buckets = table.shape[0]``.

    Returns
    -------
    array, shape ``[..., H, Lq, Lk]``, dtype of ``table``
        Add it to the *unscaled* logits ``q . k`` (T5 uses ``scale=1.0``; fold the
        usual ``1/sqrt(D)`` into the initialisation).  Only the requested block is
        built, so a block of a long sequence costs the same as the first block.

    Raises
    ------
    TypeError, ValueError
        As :func:`t5_bucket`; also for a table that is not 2-D floating.

    Notes
    -----
    .. math:: \mathrm{bias}_{h,i,j} = T\bigl[b(k_j - q_i),\, h\bigr]

    Examples
    --------
    A one-head table whose row ``b`` holds ``b`` shows the buckets themselves:
    a query at 2 and keys at 0..3 have :math:`r = -2, -1, 0, 1`, buckets 2, 1, 0
    and :math:`1 + 16 = 17` (bidirectional, 32 buckets).

    >>> import numpy as np
    >>> table = np.arange(32.0).reshape(32, 1)
    >>> t5_bias(np.asarray([2]), np.arange(4), table).tolist()
    [[[2.0, 1.0, 0.0, 17.0]]]
    """
    xp = namespace(q_positions=q_positions, k_positions=k_positions, table=table)
    q, k = check_position_pair(q_positions, k_positions, xp)
    check_float_array(table, "table", xp, ndim=2)
    num_buckets, max_distance, bidirectional = _check_config(
        table.shape[0], max_distance, bidirectional, buckets_name="table.shape[0] (num_buckets)"
    )
    relative = _compat.pairwise_difference(q, k)
    return _heads_last(_gather(relative, table, num_buckets, max_distance, bidirectional, xp), xp)


def _gather(
    relative: Any, table: Any, num_buckets: int, max_distance: int, bidirectional: bool, xp: Any
) -> Any:
    """``[H, ..., Lq, Lk]``: the row of the bucket of each (index-dtype) relative position, per head."""
    half, max_exact = _split(num_buckets, bidirectional)
    lut = _bucket_table(half, max_exact, max_distance, bidirectional)
    heads_first = xp.permute_dims(table, (1, 0))  # [H, num_buckets]
    if lut is None:
        buckets = _count_buckets(relative, half, max_exact, max_distance, bidirectional, xp)
        return _compat.take_table(heads_first, buckets, xp=xp)  # [H, ..., Lq, Lk]
    cap, rows = lut
    rows = _compat.asarray(rows, xp=xp, dtype=relative.dtype, device=_compat.device(relative))
    extended = xp.take(heads_first, rows, axis=1)  # [H, 2 cap + 1]: bias of each clipped position
    return _compat.take_table(extended, _lut_index(relative, cap, xp), xp=xp)


def _heads_last(bias: Any, xp: Any) -> Any:
    """``[H, ..., Lq, Lk]`` -> ``[..., H, Lq, Lk]``."""
    nd = bias.ndim
    return xp.permute_dims(bias, (*range(1, nd - 2), 0, nd - 2, nd - 1))


# --- the variants: LayoutLM, UDOP, WavLM, ProphetNet, CPM-Ant ----------------------------------------


def _tables(xp: Any, **tables: Any) -> tuple[int, Any]:
    """(heads, dtype) of 2-D real floating tables ``[rows, H]`` sharing H and dtype."""
    heads, dtype = None, None
    for name, table in tables.items():
        check_float_array(table, name, xp, ndim=2)
        if heads is None:
            heads, dtype, first = table.shape[1], table.dtype, name
        elif table.shape[1] != heads:
            rule = f"[rows, H] with the H = {heads} heads of {first}"
            raise value_error(name, rule, text(f"shape {tuple(table.shape)}"))
        elif table.dtype != dtype:
            raise type_error(name, f"of {first}'s dtype {dtype}", text(f"dtype {table.dtype}"))
    return heads, dtype


def _boxes(bbox: Any, length: int | None) -> None:
    if bbox.shape[-1] != 4 or (length is not None and bbox.shape[-2] != length):
        rows = "L" if length is None else str(length)
        rule = f"of shape [..., {rows}, 4] (x0, y0, x1, y1 per position)"
        raise value_error("bbox", rule, text(f"shape {tuple(bbox.shape)}"))


def _gather_rows(table: Any, buckets: Any, xp: Any) -> Any:
    """``[..., H, Lq, Lk]``: ``table[buckets, h]`` for integer buckets ``[..., Lq, Lk]``."""
    return _heads_last(_compat.take_table(xp.permute_dims(table, (1, 0)), buckets, xp=xp), xp)


def _self_relative(length: int, xp: Any, device: Any) -> Any:
    """``j - i`` for ``i, j`` in ``0 .. length - 1``: ``[length, length]`` in the index dtype."""
    idx = _compat.arange(length, xp=xp, dtype=_compat.index_dtype(xp, device), device=device)
    return _compat.pairwise_difference(idx, idx)


def t5_layout_bias(
    positions: Any,
    bbox: Any,
    table: Any,
    x_table: Any,
    y_table: Any,
    /,
    *,
    max_rel_pos: int = 128,
    max_rel_2d_pos: int = 256,
    head_dim: int | None = None,
) -> Any:
    r"""LayoutLMv2/v3's 1-D plus 2-D T5 bias ``[..., H, L, L]`` of a document's tokens.

    Three bidirectional T5 lookups, summed: the 1-D bias of the token positions,
    and the x and y biases of the box coordinates, x the left edge
    ``bbox[..., 0]`` and y the **bottom** edge ``bbox[..., 3]`` (as in the
    original LayoutLMv2 code), then divided by ``sqrt(head_dim)`` when
    ``head_dim`` is given.

    Parameters
    ----------
    positions : array of an integer dtype, shape ``[..., L]``
        Token positions (HF ``position_ids``).
    bbox : array of an integer dtype, shape ``[..., L, 4]``
        Boxes ``(x0, y0, x1, y1)`` (0 .. 1000 in LayoutLM's processors).
    table : array, shape ``[rel_pos_bins, H]``, real floating
        The 1-D table: HF ``rel_pos_bias.weight.T`` (an ``nn.Linear(rel_pos_bins,
        H)``, whose weight is ``[H, rel_pos_bins]``).
    x_table, y_table : arrays, shape ``[rel_2d_pos_bins, H]``, the dtype of ``table``
        HF ``rel_pos_x_bias.weight.T`` and ``rel_pos_y_bias.weight.T``.  A zero
        table drops its term (HF ``has_spatial_attention_bias=False``).
    max_rel_pos, max_rel_2d_pos : int
        HF's ``max_rel_pos`` (128) and ``max_rel_2d_pos`` (256): the
        ``max_distance`` of the 1-D and of the 2-D buckets.
    head_dim : int or None
        LayoutLMv3 and PP-DocLayout-V2 divide the sum by ``sqrt(head_dim)``
        (``hidden_size // num_attention_heads``, 64 in the base models);
        ``None`` for LayoutLMv2, which adds the bias unscaled.

    Returns
    -------
    array, shape ``[..., H, L, L]``, dtype of the tables
        The leading dimensions of ``positions`` and ``bbox`` broadcast.

    Raises
    ------
    TypeError
        Float positions or boxes, non-float or mixed-dtype tables, a non-integer option.
    ValueError
        A box array not ``[..., L, 4]``, tables of different ``H``, bucket counts
        as :func:`posenc_ref.t5_bucket` refuses them (``< 4``, ``max_distance`` not
        above ``max_exact``), ``head_dim < 1``.

    Notes
    -----
    With :math:`b_N^D` the bidirectional T5 bucket of ``N`` buckets saturating at ``D``,
    :math:`x = \text{bbox}[\dots, 0]`, :math:`y = \text{bbox}[\dots, 3]`:

    .. math::
        \mathrm{bias}_{h,i,j} = \bigl(T_x[b_{N_2}^{D_2}(x_j - x_i), h] + T_y[b_{N_2}^{D_2}(y_j - y_i), h]
        + T[b_N^D(p_j - p_i), h]\bigr) / \sqrt{d}

    Xu et al., "LayoutLMv2: Multi-modal Pre-training for Visually-Rich Document
    Understanding" (ACL 2021, arXiv:2012.14740), section 2.1; Huang et al.,
    "LayoutLMv3" (ACM MM 2022, arXiv:2204.08387).  HF
    ``layoutlmv3/modeling_layoutlmv3.py:385-458`` (``_compute_position_bias``:
    ``(2-D + 1-D) / sqrt(head_dim)``), ``layoutlmv2/modeling_layoutlmv2.py:289-395``
    (``rel_pos`` and ``rel_2d_pos`` added to the scaled logits, no division),
    ``pp_doclayout_v2/modeling_pp_doclayout_v2.py:421-434`` (the 1-D bias divided by
    ``sqrt(head_dim)``; its 2-D bias is a box-relation embedding, not T5 buckets:
    zero ``x_table`` and ``y_table`` here).  LayoutLMv3 clamps distances to
    ``max_distance`` before the lookup (the buckets saturate there anyway) and
    casts positions to int32.

    Examples
    --------
    Two tokens at positions 0, 1, boxes with left edges 0 and 300 and bottom
    edges 10 and 10; 1-D table row ``b`` holding ``b``, x rows ``100 b``, y rows
    zero, ``head_dim`` 4: token 0 sees token 1 at 1-D bucket 17 and x distance 300
    (bucket 63 of 64 with ``max_rel_2d_pos`` 256), ``(6300 + 17) / 2``.

    >>> import numpy as np
    >>> t = np.arange(32.0)[:, None]
    >>> tx, ty = 100 * np.arange(64.0)[:, None], np.zeros((64, 1))
    >>> box = np.asarray([[0, 0, 5, 10], [300, 0, 305, 10]])
    >>> t5_layout_bias(np.arange(2), box, t, tx, ty, head_dim=4).tolist()
    [[[0.0, 3158.5], [1550.5, 0.0]]]
    """
    xp = namespace(positions=positions, bbox=bbox, table=table, x_table=x_table, y_table=y_table)
    pos = check_positions(positions, "positions", xp, min_ndim=1)
    box = check_positions(bbox, "bbox", xp, min_ndim=2)
    _boxes(box, pos.shape[-1])
    _broadcast_shapes(positions=pos.shape[:-1], bbox=box.shape[:-2])
    _tables(xp, table=table, x_table=x_table, y_table=y_table)
    if x_table.shape[0] != y_table.shape[0]:
        rule = f"[rel_2d_pos_bins, H] with the {x_table.shape[0]} rows of x_table"
        raise value_error("y_table", rule, text(f"shape {tuple(y_table.shape)}"))
    nb, max_rel_pos, _ = _check_config(
        table.shape[0],
        max_rel_pos,
        True,
        buckets_name="table.shape[0] (rel_pos_bins)",
        distance_name="max_rel_pos",
    )
    nb2, max_rel_2d_pos, _ = _check_config(
        x_table.shape[0],
        max_rel_2d_pos,
        True,
        buckets_name="x_table.shape[0] (rel_2d_pos_bins)",
        distance_name="max_rel_2d_pos",
    )
    if head_dim is not None:
        head_dim = check_int(head_dim, "head_dim", minimum=1, maximum=MAX_CHANNELS)
    x, y = box[..., 0], box[..., 3]
    spatial = _gather(_compat.pairwise_difference(x, x), x_table, nb2, max_rel_2d_pos, True, xp)
    spatial = spatial + _gather(_compat.pairwise_difference(y, y), y_table, nb2, max_rel_2d_pos, True, xp)
    one = _gather(_compat.pairwise_difference(pos, pos), table, nb, max_rel_pos, True, xp)
    bias = _heads_last(spatial, xp) + _heads_last(one, xp)
    return bias if head_dim is None else bias / math.sqrt(head_dim)


def t5_udop_bias(
    bbox: Any,
    table: Any,
    x_table: Any,
    y_table: Any,
    /,
    *,
    max_distance: int = 128,
    max_distance_2d: int = 100,
    scaling_factor: float = 100.0,
    prefix_buckets: bool = False,
) -> Any:
    r"""UDOP's aggregated T5 bias ``[..., H, L, L]``: 1-D, horizontal and vertical buckets.

    The sum of three bidirectional T5 lookups: the 1-D bias of the token indices
    ``0 .. L-1``; the horizontal bias of the box centres ``cx = (x0 + x1) / 2``
    and the vertical bias of ``cy = (y0 + y1) / 2``, whose distances are scaled
    by ``scaling_factor`` and truncated toward zero (``.long()``) before the
    bucket function.

    Parameters
    ----------
    bbox : array, shape ``[..., L, 4]``, real floating
        Boxes ``(x0, y0, x1, y1)`` normalised to ``[0, 1]`` (UDOP's processor).
        With ``prefix_buckets``, tokens whose ``y0 < 0`` are prefix tokens.
    table : array, shape ``[num_buckets (+2), H]``, real floating
        The 1-D module's ``relative_attention_bias.weight`` (``nn.Embedding``).
    x_table, y_table : arrays, shape ``[num_buckets_2d (+2), H]``, the dtype of ``table``
        The horizontal and vertical modules' tables.
    max_distance, max_distance_2d : int
        ``max_distance`` of the 1-D module (128) and of the 2-D modules (100).
    scaling_factor : float
        The 2-D modules' ``scaling_factor`` (100): distances are
        ``trunc(scaling_factor * (c_j - c_i))``.  Positive.
    prefix_buckets : bool
        UDOP's ``prefix_bucket``: every table has two more rows; with ``P`` the
        number of prefix tokens (counted, assumed to come first), a prefix query
        and a non-prefix key take bucket ``num_buckets``, a non-prefix query and a
        prefix key ``num_buckets + 1``, in each of the three lookups.

    Returns
    -------
    array, shape ``[..., H, L, L]``, dtype of the tables

    Raises
    ------
    TypeError
        Integer boxes, non-float or mixed-dtype tables, options of the wrong type.
    ValueError
        A box array not ``[..., L, 4]`` or not finite, tables of different ``H``,
        bucket counts :func:`posenc_ref.t5_bucket` refuses, ``scaling_factor <= 0``.

    Notes
    -----
    .. math::
        \mathrm{bias}_{h,i,j} = T[b(j - i), h]
        + T_x[b_2(\lfloor s (c^x_j - c^x_i) \rceil_0), h] + T_y[b_2(\lfloor s (c^y_j - c^y_i) \rceil_0), h]

    where :math:`\lfloor\cdot\rceil_0` truncates toward zero.  HF
    ``udop/modeling_udop.py:854-1034`` (``RelativePositionBias1D``,
    ``RelativePositionBiasHorizontal``, ``RelativePositionBiasVertical``,
    summed by ``RelativePositionBiasAggregated``).  HF casts the distance to
    float32 before scaling it (``.float()``): for boxes whose scaled distances
    are not exact in float32 the truncation can differ by one.  Not modelled:
    the training-time augmentation (``augmentation=True`` multiplies each
    distance by a random ``uniform(0.8, 1.25)`` in training mode) and UDOP's
    ``expand`` re-initialisation of the prefix rows.  Tang et al., "Unifying
    Vision, Text, and Layout for Universal Document Processing" (CVPR 2023,
    arXiv:2212.02623).

    Examples
    --------
    Two tokens with centres ``cx`` 0.25 and 0.5: distance ``trunc(100 * 0.25) = 25``,
    bucket ``8 + floor(8 ln(25/8) / ln(100/8)) = 11`` (plus 16 for a key after the
    query) of 32 with ``max_distance_2d`` 100.  Tables whose row ``b`` holds ``b``
    (1-D), ``100 b`` (x) and 0 (y): token 0 sees token 1 at ``2700 + 17``.

    >>> import numpy as np
    >>> t = np.arange(32.0)[:, None]
    >>> box = np.asarray([[0.0, 0.0, 0.5, 0.5], [0.25, 0.0, 0.75, 0.5]])
    >>> t5_udop_bias(box, t, 100 * t, 0 * t).tolist()
    [[[0.0, 2717.0], [1101.0, 0.0]]]
    """
    xp = namespace(bbox=bbox, table=table, x_table=x_table, y_table=y_table)
    check_float_array(bbox, "bbox", xp, min_ndim=2)
    _boxes(bbox, None)
    check_finite_values(bbox, "bbox", xp)
    _tables(xp, table=table, x_table=x_table, y_table=y_table)
    prefix_buckets = check_bool(prefix_buckets, "prefix_buckets")
    extra = 2 if prefix_buckets else 0
    if x_table.shape[0] != y_table.shape[0]:
        rule = f"[num_buckets_2d (+2), H] with the {x_table.shape[0]} rows of x_table"
        raise value_error("y_table", rule, text(f"shape {tuple(y_table.shape)}"))
    suffix = " - 2 (num_buckets)" if prefix_buckets else " (num_buckets)"
    nb, max_distance, _ = _check_config(
        table.shape[0] - extra, max_distance, True, buckets_name="table.shape[0]" + suffix
    )
    nb2, max_distance_2d, _ = _check_config(
        x_table.shape[0] - extra,
        max_distance_2d,
        True,
        buckets_name="x_table.shape[0]" + suffix,
        distance_name="max_distance_2d",
    )
    scaling_factor = check_real(scaling_factor, "scaling_factor", exclusive_minimum=0.0)
    device = _compat.device(bbox)
    index = _compat.index_dtype(xp, device)
    limit = float(position_limit(xp, index))

    def scaled(centre: Any) -> Any:
        distance = _compat.pairwise_difference(centre, centre) * scaling_factor
        return _compat.astype(xp.trunc(_compat.clip(distance, -limit, limit, xp=xp)), index, xp=xp)

    one = _buckets(_self_relative(bbox.shape[-2], xp, device), nb, max_distance, True, xp)
    horizontal = _buckets(scaled((bbox[..., 0] + bbox[..., 2]) / 2), nb2, max_distance_2d, True, xp)
    vertical = _buckets(scaled((bbox[..., 1] + bbox[..., 3]) / 2), nb2, max_distance_2d, True, xp)
    if prefix_buckets:
        count = _compat.count_true(bbox[..., 1] < 0, axis=-1, dtype=index, xp=xp)[..., None, None]
        idx = _compat.arange(bbox.shape[-2], xp=xp, dtype=index, device=device)
        q_prefix, k_prefix = idx[:, None] < count, idx[None, :] < count  # [..., L, 1], [..., 1, L]
        to_text, to_prefix = q_prefix & ~k_prefix, ~q_prefix & k_prefix

        def prefixed(buckets: Any, n: int) -> Any:
            first = xp.zeros_like(buckets) + n  # a prefix query, a text key: bucket n; the reverse n + 1
            return xp.where(to_text, first, xp.where(to_prefix, first + 1, buckets))

        one = prefixed(_compat.broadcast_against(one, horizontal, xp=xp), nb)
        horizontal, vertical = prefixed(horizontal, nb2), prefixed(vertical, nb2)
    total = _gather_rows(table, one, xp)
    total = _gather_rows(x_table, horizontal, xp) + total
    return _gather_rows(y_table, vertical, xp) + total


def t5_gated_bias(
    hidden: Any,
    table: Any,
    gate_weight: Any,
    gate_bias: Any,
    gate_const: Any,
    /,
    *,
    max_distance: int = 800,
) -> Any:
    r"""WavLM's gated relative position bias ``[..., H, L, L]``.

    The bidirectional T5 bias of the positions ``0 .. L-1`` (WavLM: 320 buckets,
    ``max_distance`` 800), multiplied per head and query by a gate computed from
    that query's hidden state: with ``u = gate_weight @ x + gate_bias`` (8
    channels), ``a = sigmoid(u_0 + .. + u_3)``, ``b = sigmoid(u_4 + .. + u_7)``,
    the gate is ``a (b c_h - 1) + 2``.

    Parameters
    ----------
    hidden : array, shape ``[..., H, L, Dh]``, real floating
        The attention layer's input split into heads (HF
        ``hidden_states.view(B, L, H, Dh).permute(0, 2, 1, 3)``; not the query
        projection).
    table : array, shape ``[num_buckets, H]``, the dtype of ``hidden``
        HF ``rel_attn_embed.weight`` (layer 0's; every layer reuses its bias).
    gate_weight : array, shape ``[8, Dh]``
        HF ``gru_rel_pos_linear.weight`` (``nn.Linear(Dh, 8)``, one per layer).
    gate_bias : array, shape ``[8]``
        HF ``gru_rel_pos_linear.bias``.
    gate_const : array, shape ``[H]``
        HF ``gru_rel_pos_const`` (``[1, H, 1, 1]``, initialised to ones).
    max_distance : int
        HF ``max_bucket_distance`` (800).

    Returns
    -------
    array, shape ``[..., H, L, L]``, dtype of the inputs

    Raises
    ------
    TypeError
        Non-float or mixed-dtype inputs, a non-integer ``max_distance``.
    ValueError
        Shapes that do not match (``H``, ``Dh``, 8 gate channels), bucket counts
        :func:`posenc_ref.t5_bucket` refuses.

    Notes
    -----
    .. math::
        g_{h,i} = \sigma\Bigl(\sum_{c<4} u_{h,i,c}\Bigr)
        \Bigl(\sigma\Bigl(\sum_{c \ge 4} u_{h,i,c}\Bigr) c_h - 1\Bigr) + 2, \qquad
        \mathrm{bias}_{h,i,j} = g_{h,i}\, T[b(j - i), h]

    Chen et al., "WavLM: Large-Scale Self-Supervised Pre-Training for Full Stack
    Speech Processing" (IEEE JSTSP 2022, arXiv:2110.13900), section 3.2 (gated
    relative position bias).  HF ``wavlm/modeling_wavlm.py:160-185`` (the gate)
    and ``:247-275`` (``compute_bias``, ``_relative_positions_bucket``: T5's
    bidirectional formula, ``max_exact`` added before the truncation).

    Examples
    --------
    A zero hidden state and zero gate parameters give ``a = b = 1/2``, and with
    ``c = 1`` the gate ``(1/2)(1/2 - 1) + 2 = 1.75``: the bias of table rows
    ``b`` (holding ``b``) times 1.75; the key after the query is bucket
    ``160 + 1``, ``1.75 * 161 = 281.75``.

    >>> import numpy as np
    >>> out = t5_gated_bias(np.zeros((1, 2, 4)), np.arange(320.0)[:, None],
    ...                     np.zeros((8, 4)), np.zeros(8), np.ones(1))
    >>> out.tolist()
    [[[0.0, 281.75], [1.75, 0.0]]]
    """
    xp = namespace(
        hidden=hidden, table=table, gate_weight=gate_weight, gate_bias=gate_bias, gate_const=gate_const
    )
    check_float_array(hidden, "hidden", xp, min_ndim=3)
    heads, dtype = _tables(xp, table=table)
    check_float_array(gate_weight, "gate_weight", xp, ndim=2)
    check_float_array(gate_bias, "gate_bias", xp, ndim=1)
    check_float_array(gate_const, "gate_const", xp, ndim=1)
    for name, array in (
        ("hidden", hidden),
        ("gate_weight", gate_weight),
        ("gate_bias", gate_bias),
        ("gate_const", gate_const),
    ):
        if array.dtype != dtype:
            raise type_error(name, f"of table's dtype {dtype}", text(f"dtype {array.dtype}"))
    width = hidden.shape[-1]
    shapes = (
        ("hidden", hidden.shape[-3] == heads, f"[..., H, L, Dh] with the H = {heads} heads of table", hidden),
        ("gate_weight", tuple(gate_weight.shape) == (8, width), f"[8, Dh] = [8, {width}]", gate_weight),
        ("gate_bias", tuple(gate_bias.shape) == (8,), "[8]", gate_bias),
        ("gate_const", tuple(gate_const.shape) == (heads,), f"[H] = [{heads}]", gate_const),
    )
    for name, ok, rule, array in shapes:
        if not ok:
            raise value_error(name, f"of shape {rule}", text(f"shape {tuple(array.shape)}"))
    num_buckets, max_distance, _ = _check_config(
        table.shape[0], max_distance, True, buckets_name="table.shape[0] (num_buckets)"
    )
    proj = xp.matmul(hidden, xp.permute_dims(gate_weight, (1, 0))) + gate_bias  # [..., H, L, 8]
    sig_a = 1.0 / (1.0 + _exp(-xp.sum(proj[..., :4], axis=-1), xp=xp))
    sig_b = 1.0 / (1.0 + _exp(-xp.sum(proj[..., 4:], axis=-1), xp=xp))
    gate = sig_a * (sig_b * gate_const[:, None] - 1.0) + 2.0  # [..., H, L]
    relative = _self_relative(hidden.shape[-2], xp, _compat.device(hidden))
    bias = _heads_last(_gather(relative, table, num_buckets, max_distance, True, xp), xp)  # [H, L, L]
    return gate[..., None] * bias


def t5_stream_buckets(
    positions: Any, /, *, num_buckets: int = 32, max_distance: int = 128
) -> tuple[Any, Any]:
    r"""ProphetNet's causal T5 buckets of the main stream and of the predict streams.

    ``main[..., i, j] = b(p_j - p_i)`` over the ``L`` positions; ``predict[..., i, j]
    = b(k_j - p_i)`` over the ``2L`` keys ``k = [p - 1, p]`` (each predict stream
    attends to the main stream shifted by one, then to itself), with ``b`` the
    causal T5 bucket (keys after the query share bucket 0).

    Parameters
    ----------
    positions : array of an integer dtype, shape ``[..., L]``
        HF ``position_ids`` of the decoder (``padding_idx + 1`` onwards in
        ProphetNet, whose learned table is offset like RoBERTa's).
    num_buckets, max_distance : int
        HF ``num_buckets`` (32) and ``relative_max_distance`` (128).

    Returns
    -------
    (main, predict) : arrays of ``positions``' dtype, shapes ``[..., L, L]`` and ``[..., L, 2L]``

    Raises
    ------
    TypeError, ValueError
        As :func:`posenc_ref.t5_bucket` with ``bidirectional=False``.

    Notes
    -----
    HF ``prophetnet/modeling_prophetnet.py:67-114``: ``compute_relative_buckets``
    negates the relative position (``inv_relative_positions = -relative``) and
    applies T5's formula to the result, the same bucket as T5's of ``k - q``
    (its float sum ``max_exact + log term`` before ``.int()`` agrees with the exact
    value at every distance of the common configurations);
    ``compute_all_stream_relative_buckets`` builds both streams.  The bias table
    of each query is then a linear map of its hidden state
    (``relative_pos_embeddings``), content-dependent, and outside this function.
    Qi et al., "ProphetNet: Predicting Future N-gram for Sequence-to-Sequence
    Pre-training" (EMNLP Findings 2020, arXiv:2001.04063).

    Examples
    --------
    >>> import numpy as np
    >>> main, predict = t5_stream_buckets(np.asarray([2, 3, 4]))
    >>> main.tolist()
    [[0, 0, 0], [1, 0, 0], [2, 1, 0]]
    >>> predict.tolist()
    [[1, 0, 0, 0, 0, 0], [2, 1, 0, 1, 0, 0], [3, 2, 1, 2, 1, 0]]
    """
    xp = namespace(positions=positions)
    pos = check_positions(positions, "positions", xp, min_ndim=1)
    num_buckets, max_distance, _ = _check_config(num_buckets, max_distance, False)
    top = int(xp.iinfo(positions.dtype).max)
    if num_buckets - 1 > top:
        rule = (
            f"small enough that bucket {num_buckets - 1} fits positions' dtype {positions.dtype} (<= {top})"
        )
        raise value_error("num_buckets", rule, num_buckets, hint="pass positions as int64")
    keys = xp.concat([pos - 1, pos], axis=-1)
    main = _buckets(_compat.pairwise_difference(pos, pos), num_buckets, max_distance, False, xp)
    predict = _buckets(_compat.pairwise_difference(pos, keys), num_buckets, max_distance, False, xp)
    return _compat.astype(main, positions.dtype, xp=xp), _compat.astype(predict, positions.dtype, xp=xp)


def t5_segment_bias(
    q_positions: Any,
    k_positions: Any,
    q_segments: Any,
    k_segments: Any,
    table: Any,
    /,
    *,
    num_segments: int = 32,
    max_distance: int = 2048,
) -> Any:
    r"""CPM-Ant's segment-aware T5 bias ``[..., H, Lq, Lk]``.

    A query and a key of the same segment take the row of the bidirectional T5
    bucket of ``k - q``; a pair from different segments takes the segment-pair
    row ``num_buckets + s_q * num_segments + s_k`` of the same table, whatever
    their distance.

    Parameters
    ----------
    q_positions, k_positions : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Positions (CPM-Ant's ``arange``).
    q_segments, k_segments : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Segment ids in ``[0, num_segments)`` (CPM-Ant: 0 for its prompt, 2 for text).
    table : array, shape ``[num_buckets + num_segments**2, H]``, real floating
        HF ``CpmAntSegmentPositionEmbedding.relative_attention_bias``: the
        ``num_buckets`` position rows first, then the segment pairs.
    num_segments : int
        HF ``segment_types`` (32).
    max_distance : int
        HF ``position_bias_max_distance`` (2048; 512 buckets by default).

    Returns
    -------
    array, shape ``[..., H, Lq, Lk]``, dtype of ``table``

    Raises
    ------
    TypeError
        Float positions or segments, a non-float table, a non-integer option.
    ValueError
        Segments outside ``[0, num_segments)`` or of other lengths than the
        positions, a table with fewer than ``num_segments**2 + 4`` rows, bucket
        counts :func:`posenc_ref.t5_bucket` refuses.

    Notes
    -----
    .. math::
        \mathrm{bias}_{h,i,j} = \begin{cases} T[b(k_j - q_i), h] & s_i = s_j \\
        T[N + s_i S + s_j, h] & s_i \ne s_j \end{cases}

    HF ``cpmant/modeling_cpmant.py:418-507``: ``_position_bucket`` is T5's
    bidirectional formula in int32 (the same buckets), and ``forward`` reads
    only the *lengths* of its ``key_pos`` / ``query_pos`` (the buckets are those
    of ``arange(Lk) - arange(Lq)``; the model always passes ``arange``).
    OpenBMB's CPM-Ant (CPM-Live).

    Examples
    --------
    Three tokens, the first in segment 0 and the others in segment 1, a 32-bucket
    table of 2 segments whose row ``r`` holds ``r``: the cross pairs read rows
    ``32 + 0 * 2 + 1 = 33`` and ``32 + 1 * 2 + 0 = 34``.

    >>> import numpy as np
    >>> p, s = np.arange(3), np.asarray([0, 1, 1])
    >>> t5_segment_bias(p, p, s, s, np.arange(36.0)[:, None], num_segments=2, max_distance=128).tolist()
    [[[0.0, 33.0, 33.0], [34.0, 0.0, 17.0], [34.0, 1.0, 0.0]]]
    """
    xp = namespace(
        q_positions=q_positions,
        k_positions=k_positions,
        q_segments=q_segments,
        k_segments=k_segments,
        table=table,
    )
    q, k = check_position_pair(q_positions, k_positions, xp)
    num_segments = check_int(num_segments, "num_segments", minimum=1, maximum=MAX_HEADS, reason=HEADS_REASON)
    qs = check_index(q_segments, "q_segments", xp, rows=num_segments, min_ndim=1)
    ks = check_index(k_segments, "k_segments", xp, rows=num_segments, min_ndim=1)
    for name, seg, pos in (("q_segments", qs, q), ("k_segments", ks, k)):
        if seg.shape[-1] != pos.shape[-1]:
            rule = f"one segment per position ([..., {pos.shape[-1]}])"
            raise value_error(name, rule, text(f"shape {tuple(seg.shape)}"))
    _broadcast_shapes(
        q_positions=q.shape[:-1], k_positions=k.shape[:-1], q_segments=qs.shape[:-1], k_segments=ks.shape[:-1]
    )
    _tables(xp, table=table)
    pairs = num_segments * num_segments
    num_buckets, max_distance, _ = _check_config(
        table.shape[0] - pairs,
        max_distance,
        True,
        buckets_name=f"table.shape[0] - num_segments**2 (num_buckets; num_segments**2 = {pairs})",
    )
    buckets = _buckets(_compat.pairwise_difference(q, k), num_buckets, max_distance, True, xp)
    qs, ks = qs[..., :, None], ks[..., None, :]
    rows = xp.where(qs == ks, buckets, qs * num_segments + ks + num_buckets)
    return _gather_rows(table, rows, xp)
