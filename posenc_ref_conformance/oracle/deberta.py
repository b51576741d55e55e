"""DeBERTa disentangled-attention relative positions (He et al. 2021, arXiv:2006.03654, section 3.1;
the log buckets of DeBERTa-v2/v3, microsoft/DeBERTa ``make_log_bucket_position``).

``r = q - k`` (query minus key), ``mid = position_buckets // 2``, ``L = mid - 1``,
``D = max_relative_positions - 1``:

* ``|r| <= mid``: the bucket is ``r``;
* otherwise ``sign(r) (mid + ceil(L ln(|r|/mid) / ln(D/mid)))``.

:func:`bucket` decides the ceiling in integers: ``ceil(x) = c`` is the smallest
``c >= 0`` with ``x <= c``, i.e. ``|r|**L * mid**c <= D**c * mid**L`` (both sides
positive, ``D > mid``).  A float estimate is corrected by that exact test, so ties
(``x`` an integer) are exact.  :func:`bucket_float32` is HF's float32 evaluation
with each step correctly rounded to float32 (mpmath, then rounded): ``fl(fl(|r|) /
mid)``, ``fl(log(.))``, ``fl(log(fl(fl64(D / mid))))`` (HF's
``torch.tensor((max_position - 1) / mid)``), their ``fl`` quotient, ``fl(. * L)``.

:func:`relative_index` is the row of the ``2 S``-row relative embedding table:
``clamp(b(q_i - k_j) + S, 0, 2S - 1)`` for the content-to-position term and
``clamp(-b(k_j - q_i) + S, 0, 2S - 1)`` for the position-to-content term, ``S =
position_buckets`` when positive, else ``max_relative_positions`` (no buckets:
``b(r) = r``).  Both are computed as written (not from each other).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ._numeric import exact, mp, round_float32

__all__ = ["bucket", "bucket_float32", "relative_index"]


def _ceil_exact(a: int, mid: int, depth: int) -> int:
    """``ceil(L ln(a/mid) / ln(depth/mid))`` for ``a > mid``, ``depth > mid``, decided in integers."""
    width = mid - 1
    if width == 0:
        return 0
    c = max(0, math.ceil(width * math.log(a / mid) / math.log(depth / mid)))

    def at_most(c: int) -> bool:  # x <= c
        return a**width * mid**c <= depth**c * mid**width

    while c > 0 and at_most(c - 1):
        c -= 1
    while not at_most(c):
        c += 1
    return c


def _ceil_float32(a: int, mid: int, depth: int) -> int:
    width = mid - 1
    quotient = round_float32(exact(round_float32(exact(a))) / mid)
    log_q = round_float32(mp.log(exact(quotient)))
    log_d = round_float32(mp.log(exact(round_float32(exact(depth / mid)))))
    ratio = round_float32(exact(log_q) / exact(log_d))
    return int(mp.ceil(exact(round_float32(exact(ratio) * width))))


def _bucket(relative: int, position_buckets: int, max_relative_positions: int, *, float32: bool) -> int:
    r = int(relative)
    mid = position_buckets // 2
    a = abs(r)
    if a <= mid:
        return r
    c = (_ceil_float32 if float32 else _ceil_exact)(a, mid, max_relative_positions - 1)
    return (mid + c) * (1 if r > 0 else -1)


def bucket(relative: int, position_buckets: int, max_relative_positions: int) -> int:
    """The exact log bucket of one relative position ``q - k``."""
    return _bucket(relative, position_buckets, max_relative_positions, float32=False)


def bucket_float32(relative: int, position_buckets: int, max_relative_positions: int) -> int:
    """The bucket as HF's float32 expression gives it (each step correctly rounded)."""
    return _bucket(relative, position_buckets, max_relative_positions, float32=True)


def relative_index(
    q_positions: Sequence[int],
    k_positions: Sequence[int],
    position_buckets: int,
    max_relative_positions: int,
    term: str,
    arithmetic: str,
) -> list[list[int]]:
    """``[Lq][Lk]`` rows of the relative embedding table read by ``term`` ("c2p" or "p2c")."""
    span = position_buckets if position_buckets > 0 else max_relative_positions

    def b(r: int) -> int:
        if position_buckets <= 0:
            return r
        return _bucket(r, position_buckets, max_relative_positions, float32=arithmetic == "float32")

    def row(q: int, k: int) -> int:
        value = b(q - k) if term == "c2p" else -b(k - q)
        return min(max(value + span, 0), 2 * span - 1)

    return [[row(int(q), int(k)) for k in k_positions] for q in q_positions]
