r"""DeBERTa's disentangled-attention relative positions: log buckets and the rows each term reads.

He et al. (2021), "DeBERTa: Decoding-enhanced BERT with Disentangled Attention",
https://arxiv.org/abs/2006.03654, section 3.1; DeBERTa-v2/v3 add the log buckets
(``make_log_bucket_position`` of microsoft/DeBERTa and HF).

* :func:`deberta_bucket`: the log bucket of a relative position ``r = q - k``
  (query minus key): ``r`` itself while ``|r| <= mid = position_buckets // 2``, beyond
  that ``sign(r) (mid + ceil((mid - 1) ln(|r|/mid) / ln((M - 1)/mid)))`` with
  ``M = max_relative_positions``.  There is no saturation: the clamp of
  :func:`deberta_relative_index` bounds it.
* :func:`deberta_relative_index`: the row of the relative-embedding table
  (``rel_embeddings``, ``2 S`` rows) that each query/key pair reads,
  ``clamp(b(q_i - k_j) + S, 0, 2 S - 1)``, ``S = position_buckets`` (v2/v3, SEW-D)
  or ``max_relative_positions`` (v1, v2 without buckets).  The content-to-position
  term reads it from ``K_r``, the position-to-content term from ``Q_r``; both read
  the same row (see the function's notes).

Exactness.  The ceiling is decided in integers: ``ceil(x) >= s`` exactly when
``|r|**(mid-1) * mid**(s-1) > (M-1)**(s-1) * mid**(mid-1)``, so each log bucket starts at
an integer threshold computed once per configuration on the host (``decimal`` at 60
digits, exact integers at a near tie) and the array code corrects a float estimate of
the bucket by comparing ``|r|`` with its two neighbouring thresholds.  ``"float32"`` is
HF's float32 evaluation instead (:data:`DEBERTA_ARITHMETIC`).
"""

from __future__ import annotations

import decimal
import functools
import math
import struct
from typing import Any

from . import _compat
from ._validate import (
    POSITION_LIMIT,
    check_choice,
    check_int,
    check_position_pair,
    check_relative,
    namespace,
    value_error,
)

__all__ = ["DEBERTA_ARITHMETIC", "DEBERTA_TERMS", "deberta_bucket", "deberta_relative_index"]

#: How :func:`deberta_bucket` evaluates the log bucket: ``"exact"``, the mathematical
#: ceiling (microsoft/DeBERTa's NumPy float64 code agrees away from exact ties);
#: ``"float32"``, HF's float32 ``abs_pos / mid``, ``log``, division and product, each
#: rounded to float32 (``log`` correctly rounded).
DEBERTA_ARITHMETIC = ("exact", "float32")

#: The two disentangled terms whose gathers :func:`deberta_relative_index` describes.
DEBERTA_TERMS = ("c2p", "p2c")

#: Most log buckets below ``2**62`` one configuration may have (their thresholds are built on the host).
_MAX_THRESHOLDS = 2**16
_BUCKETS_LIMIT = 2**20  # position_buckets: the row count 2 S of a table


def _f32(x: float) -> float:
    """``x`` rounded to float32 (nearest, ties to even), as a Python float."""
    return float(struct.unpack("f", struct.pack("f", x))[0])


def _check_config(
    position_buckets: object, max_relative_positions: object, *, optional: bool
) -> tuple[int, int]:
    """``(position_buckets, max_relative_positions)``; ``position_buckets <= 0`` (none) if ``optional``."""
    buckets = check_int(
        position_buckets, "position_buckets", minimum=None if optional else 2, maximum=_BUCKETS_LIMIT
    )
    top = check_int(max_relative_positions, "max_relative_positions", maximum=_BUCKETS_LIMIT)
    if 0 < buckets < 2:
        raise value_error("position_buckets", "<= 0 (no buckets) or >= 2", buckets)
    if buckets >= 2 and top - 1 <= buckets // 2:
        rule = f"> position_buckets // 2 + 1 = {buckets // 2 + 1} (so that ln((M - 1) / mid) is positive)"
        raise value_error(
            "max_relative_positions", rule, top, hint="HF divides by zero or inverts the buckets"
        )
    if buckets >= 2:
        mid = buckets // 2
        count = (mid - 1) * math.log(POSITION_LIMIT / mid) / math.log((top - 1) / mid)
        if count > _MAX_THRESHOLDS:
            least = (
                math.ceil(mid * math.exp((mid - 1) * math.log(POSITION_LIMIT / mid) / _MAX_THRESHOLDS)) + 1
            )
            rule = f">= {least} for position_buckets={buckets} (<= {_MAX_THRESHOLDS} log buckets under 2**62)"
            raise value_error("max_relative_positions", rule, top)
    return buckets, top


@functools.lru_cache(maxsize=32)
def _thresholds(mid: int, top: int) -> tuple[int, ...]:
    """``(0, T_1, ..., T_n, 2**63 - 1)``: ``T_s`` is the smallest ``a > mid`` with ``ceil(x(a)) >= s``.

    ``x(a) = L ln(a / mid) / ln(D / mid)``, ``L = mid - 1``, ``D = top - 1``; ``ceil(x) >= s``
    <=> ``x > s - 1`` <=> ``a > y_s = mid (D / mid)**((s - 1) / L)``, so ``T_s = floor(y_s) + 1``
    (``y_s`` itself when it is an integer: then ``x(y_s) = s - 1`` exactly).  ``y_s = mid rho**(s-1)``,
    ``rho = (D / mid)**(1 / L)``, comes from ``decimal`` at 60 digits; within ``1e-20`` of an integer
    ``n`` the exact test
    ``n**L mid**(s-1) <= D**(s-1) mid**L`` (``n <= y_s``) decides.
    """
    big = POSITION_LIMIT
    bounds = [0]
    width, depth = mid - 1, top - 1
    if width > 0:
        ctx = decimal.Context(prec=60)
        ratio = ctx.exp(ctx.divide(ctx.ln(ctx.divide(decimal.Decimal(depth), decimal.Decimal(mid))), width))
        y = decimal.Decimal(mid)
        tie = decimal.Decimal("1e-20")
        for g in range(_MAX_THRESHOLDS + 1):  # y = mid ratio**g: relative error below g 1e-59
            n = int(y.to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
            if abs(y - n) < tie * n:
                floor = n if n**width * mid**g <= depth**g * mid**width else n - 1
            else:
                floor = int(y.to_integral_value(rounding=decimal.ROUND_FLOOR))
            threshold = max(floor + 1, mid + 1)
            if threshold >= big:
                break
            bounds.append(threshold)
            y = ctx.multiply(y, ratio)
    bounds.append(2**63 - 1)
    return tuple(bounds)


def _log_term(a: Any, mid: int, top: int, xp: Any, *, float32: bool) -> Any:
    """``(mid - 1) ln(a / mid) / ln((top - 1) / mid)`` of ``a > mid`` (index dtype): a float estimate, or
    HF's float32 value ``fl(fl(log(fl(fl(a) / mid)) / fl(log(fl((top - 1) / mid)))) (mid - 1))``."""
    dev = _compat.device(a)
    if float32:
        f32 = xp.float32
        q = _compat.astype(a, f32, xp=xp) / _compat.asarray(float(mid), xp=xp, dtype=f32, device=dev)
        if _compat.has_float64(xp, dev):  # log correctly rounded to float32 (through float64)
            log_q = _compat.astype(xp.log(_compat.astype(q, xp.float64, xp=xp)), f32, xp=xp)
        else:
            log_q = xp.log(q)
        log_d = _f32(math.log(_f32((top - 1) / mid)))
        ratio = log_q / _compat.asarray(log_d, xp=xp, dtype=f32, device=dev)
        return ratio * _compat.asarray(float(mid - 1), xp=xp, dtype=f32, device=dev)
    ft = _compat.compute_dtype(xp, dev)
    scale = (mid - 1) / math.log((top - 1) / mid)
    return xp.log(_compat.astype(a, ft, xp=xp) / mid) * scale


def _buckets(relative: Any, buckets: int, top: int, arithmetic: str, xp: Any) -> Any:
    """Buckets of index-dtype ``relative`` (any values), in that dtype."""
    mid = buckets // 2
    idx = relative.dtype
    limit = min(POSITION_LIMIT, int(xp.iinfo(idx).max) // 2)
    r = _compat.clip(relative, -limit, limit, xp=xp)  # abs(-2**63) wraps; buckets grow slowly
    a = xp.abs(r)
    safe = xp.where(a > mid, a, xp.full_like(a, mid + 1))  # no log(0)
    if mid == 1:  # L = 0: every |r| > 1 is bucket +-1 in either arithmetic
        count = xp.zeros_like(a)
    elif arithmetic == "float32":
        count = _compat.astype(xp.ceil(_log_term(safe, mid, top, xp, float32=True)), idx, xp=xp)
    else:
        bounds = _thresholds(mid, top)
        last = len(bounds) - 2
        estimate = _compat.astype(xp.ceil(_log_term(safe, mid, top, xp, float32=False)), idx, xp=xp)
        estimate = _compat.clip(estimate, 1, max(last, 1), xp=xp)
        cap = int(xp.iinfo(idx).max)
        table = _compat.asarray([min(t, cap) for t in bounds], xp=xp, dtype=idx, device=_compat.device(a))
        below = _compat.astype(safe < _compat.take_table(table, estimate, xp=xp), idx, xp=xp)
        above = _compat.astype(safe >= _compat.take_table(table, estimate + 1, xp=xp), idx, xp=xp)
        count = estimate - below + above
    log_pos = count + mid
    signed = xp.where(r < 0, -log_pos, log_pos)
    return xp.where(a <= mid, r, signed)


def deberta_bucket(
    relative: Any, /, *, position_buckets: int, max_relative_positions: int, arithmetic: str = "exact"
) -> Any:
    r"""DeBERTa-v2/v3's log bucket of each relative position ``q - k`` (exact integers).

    Parameters
    ----------
    relative : array of an integer dtype
        Relative positions *query minus key* (HF ``q_ids[:, None] - k_ids[None, :]``;
        the opposite sign of :func:`posenc_ref.relative_positions`).
    position_buckets : int
        HF ``config.position_buckets`` (256 in DeBERTa-v3 and SEW-D), at least 2;
        ``mid = position_buckets // 2`` distances on each side are exact.
    max_relative_positions : int
        HF ``config.max_relative_positions`` (``max_position_embeddings``, 512, when the
        config says -1): the distance ``M - 1`` maps to bucket ``2 mid - 1``.  Must
        exceed ``mid + 1``.
    arithmetic : {"exact", "float32"}
        ``"exact"``: the mathematical ceiling.  ``"float32"``: HF's float32 expression
        (:data:`DEBERTA_ARITHMETIC`), which lands one bucket away at a few
        distances, e.g. ``|r| = 1643`` with 512/4096 (exact 428, float32 427).

    Returns
    -------
    array, same shape, dtype and device as ``relative``

    Raises
    ------
    TypeError
        If ``relative`` is not an integer array or an option has the wrong type.
    ValueError
        If ``position_buckets < 2``, ``max_relative_positions <= mid + 1`` or so close
        to ``mid`` that there are more than 65536 log buckets below ``2**62``, or an
        unknown ``arithmetic``.

    Notes
    -----
    With :math:`m = \lfloor\text{position\_buckets}/2\rfloor`, :math:`M` =
    ``max_relative_positions``, :math:`a = |r|`:

    .. math::
        b(r) = \begin{cases} r & a \le m \\
        \operatorname{sign}(r)\Bigl(m + \Bigl\lceil (m - 1)\,\dfrac{\ln(a/m)}{\ln((M-1)/m)}\Bigr\rceil\Bigr)
        & a > m \end{cases}

    ``make_log_bucket_position`` in ``transformers/models/deberta_v2/modeling_deberta_v2.py:56-68``
    (5.24; SEW-D's copy ``sew_d/modeling_sew_d.py:163-175``) evaluates the log term in
    float32 (``"float32"``); microsoft/DeBERTa's original evaluates it in NumPy float64.
    The bucket is odd, :math:`b(-r) = -b(r)`, and not clamped: ``|r| = M - 1`` gives
    :math:`2m - 1`, farther distances larger buckets, which :func:`deberta_relative_index`
    clamps.  ``relative`` of a narrow dtype must hold the buckets (they never exceed
    :math:`|r|`).  The float32 ``log`` here is correctly rounded (through float64);
    PyTorch's float32 ``log`` is not always, so at rare distances HF lands elsewhere
    again (384/1024 at ``|r| = 1032``: exact and correctly rounded float32 385 and 384,
    PyTorch 385).

    Examples
    --------
    256/512 (``m = 128``): distances up to 128 are their own bucket, 511 is bucket 255
    and 200 is :math:`128 + \lceil 127 \ln(200/128) / \ln(511/128) \rceil = 128 + 41`.

    >>> import numpy as np
    >>> r = np.asarray([-511, -200, -128, 0, 5, 129, 200, 1000])
    >>> deberta_bucket(r, position_buckets=256, max_relative_positions=512).tolist()
    [-255, -169, -128, 0, 5, 129, 169, 317]
    """
    xp = namespace(relative=relative)
    wide = check_relative(relative, "relative", xp)
    buckets, top = _check_config(position_buckets, max_relative_positions, optional=False)
    arithmetic = check_choice(arithmetic, "arithmetic", DEBERTA_ARITHMETIC)
    return _compat.astype(_buckets(wide, buckets, top, arithmetic, xp), relative.dtype, xp=xp)


def deberta_relative_index(
    q_positions: Any,
    k_positions: Any,
    /,
    *,
    position_buckets: int,
    max_relative_positions: int,
    term: str = "c2p",
    arithmetic: str = "exact",
) -> Any:
    r"""The row of DeBERTa's relative-embedding table read for each query/key pair.

    Parameters
    ----------
    q_positions, k_positions : arrays of an integer dtype, shapes ``[..., Lq]``, ``[..., Lk]``
        Query and key positions (HF: ``arange(Lq)`` and ``arange(Lk)``).
    position_buckets : int
        HF ``config.position_buckets``: ``> 0`` (at least 2) buckets ``q - k`` with
        :func:`deberta_bucket` and makes the table ``2 position_buckets`` rows; ``<= 0``
        (HF's default -1, and DeBERTa v1, which has no buckets) uses ``q - k`` as is.
    max_relative_positions : int
        HF ``max_relative_positions`` (after HF's ``< 1`` -> ``max_position_embeddings``):
        the bucket parameter, and the half-size of the table when there are no buckets.
    term : {"c2p", "p2c"}
        Which term's gather: content-to-position (query ``i`` reads ``K_r[row]``) or
        position-to-content (key ``j`` reads ``Q_r[row]``).  Both read the same row
        (Notes); the option lets a port check each of its two gathers.
    arithmetic : {"exact", "float32"}
        As :func:`deberta_bucket` (unused without buckets).

    Returns
    -------
    array of the index dtype (int64), shape ``[..., Lq, Lk]``
        Rows in ``[0, 2 S)`` of ``rel_embeddings`` (``2 S`` rows, ``S`` below).

    Raises
    ------
    TypeError, ValueError
        Non-integer or too large positions, leading dimensions that do not broadcast,
        the bucket rules of :func:`deberta_bucket`, an unknown ``term`` or ``arithmetic``.

    Notes
    -----
    With :math:`S` = ``position_buckets`` if positive, else ``max_relative_positions``, and
    :math:`b` the bucket (the identity without buckets):

    .. math::
        \text{c2p: } \operatorname{clamp}(b(q_i - k_j) + S,\ 0,\ 2S - 1), \qquad
        \text{p2c: } \operatorname{clamp}(-b(k_j - q_i) + S,\ 0,\ 2S - 1)

    HF ``DisentangledSelfAttention.disentangled_attention_bias``
    (``deberta_v2/modeling_deberta_v2.py:270-339``; ``sew_d/modeling_sew_d.py:758-835``):
    ``c2p_pos = clamp(relative_pos + att_span, 0, 2 att_span - 1)`` gathered along the
    positions of ``q K_r^T``; ``p2c_pos = clamp(-r_pos + att_span, ...)`` gathered along
    those of ``k Q_r^T`` (key-major) and transposed, so key ``j`` of query ``i`` reads row
    :math:`-b(k_j - q_i) + S`.  The bucket is odd, so both terms read the same row.  The
    paper writes the p2c row as :math:`\delta(j, i) = k_j - q_i + S`; every implementation
    (microsoft/DeBERTa included) reads :math:`\delta(i, j)`, which is what is given here.
    DeBERTa v1 (``deberta/modeling_deberta.py:279-333``) slices rows
    :math:`[M - s, M + s)` of its :math:`2M`-row table with the span
    :math:`s = \min(\max(L_q, L_k), M)` and gathers ``clamp(r + s, 0, 2s - 1)`` there:
    for positions ``arange(Lq)``, ``arange(Lk)`` that is the row
    :math:`\operatorname{clamp}(r + M, 0, 2M - 1)` of the whole table, the formula above.

    Examples
    --------
    Four queries over three keys, 4 buckets (``m = 2``), ``max_relative_positions`` 8:
    ``q - k`` from -2 to 3, buckets -2 .. 3 (``|r| = 3``: :math:`2 + \lceil \ln 1.5 / \ln 3.5 \rceil = 3`),
    plus ``S = 4``:

    >>> import numpy as np
    >>> deberta_relative_index(np.arange(4), np.arange(3), position_buckets=4,
    ...                        max_relative_positions=8).tolist()
    [[4, 3, 2], [5, 4, 3], [6, 5, 4], [7, 6, 5]]
    """
    xp = namespace(q_positions=q_positions, k_positions=k_positions)
    q, k = check_position_pair(q_positions, k_positions, xp)
    buckets, top = _check_config(position_buckets, max_relative_positions, optional=True)
    term = check_choice(term, "term", DEBERTA_TERMS)
    arithmetic = check_choice(arithmetic, "arithmetic", DEBERTA_ARITHMETIC)
    forward = -_compat.pairwise_difference(q, k)  # q_i - k_j, [..., Lq, Lk]
    span = buckets if buckets > 0 else top
    if term == "p2c":  # -b(k_j - q_i): the key-side relative position, negated after the bucket
        relative = -forward
        shifted = -(_buckets(relative, buckets, top, arithmetic, xp) if buckets > 0 else relative)
    else:
        shifted = _buckets(forward, buckets, top, arithmetic, xp) if buckets > 0 else forward
    return _compat.clip(shifted + span, 0, 2 * span - 1, xp=xp)
