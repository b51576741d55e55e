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
"""

from __future__ import annotations

import functools
from typing import Any

from . import _compat
from ._validate import (
    BUCKETS_REASON,
    MAX_BUCKETS,
    POSITION_LIMIT,
    POSITION_REASON,
    check_bool,
    check_float_array,
    check_int,
    check_position_pair,
    check_relative,
    namespace,
    value_error,
)

__all__ = ["t5_bias", "t5_bucket", "t5_bucket_thresholds"]


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
