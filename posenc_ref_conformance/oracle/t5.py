"""T5 relative-position buckets (Raffel et al. 2020; mesh-tensorflow / HF formula).

``relative`` is ``key - query`` (``memory_position - query_position``).  With
``n = -relative``:

* bidirectional: ``num_buckets //= 2``; keys after the query (``relative > 0``)
  add ``num_buckets``; ``n = |relative|``;
* causal: ``n = max(n, 0)`` (future keys fall in bucket 0);
* ``max_exact = num_buckets // 2``; ``n < max_exact`` is its own bucket; otherwise
  ``min(max_exact + floor(ln(n/max_exact) / ln(max_distance/max_exact)
  * (num_buckets - max_exact)), num_buckets - 1)``.

:func:`t5_bucket` is the exact value of that formula (mpmath).  HF (PyTorch)
and mesh-tensorflow (TF) evaluate the log term in float32, which can land on
the other side of an integer when the exact value is an integer (a tie) or
within float32 rounding of one.  :func:`t5_bucket_float32` models that
evaluation with correctly rounded float32 steps: float32 ``n / max_exact``,
``log``, division by the float32 rounding of the float64
``math.log(max_distance / max_exact)``, multiplication by the integer
``num_buckets - max_exact``, truncation.  The golden files store the exact
bucket and, where the float32 model differs, accept that value too.  For every
common configuration (32/128, 64/128, 32/256, 128/1024, 16/64, both
directions) the two agree at every distance; the model is checked against
PyTorch in the project's tests.

:func:`t5_bias` is T5's position bias (HF ``T5Attention.compute_bias``): the
row ``bucket(k - q)`` of a ``[num_buckets, H]`` table (``relative_attention_bias``,
an ``nn.Embedding(num_buckets, n_heads)``), as ``[H][Lq][Lk]``.  UMT5 gives every
layer a table of its own; T5 computes it in the first layer and reuses it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ._numeric import exact, mp, round_float32

__all__ = ["t5_bias", "t5_bucket", "t5_bucket_float32", "t5_buckets"]

#: Relative distance to an integer below which the float32 model is consulted.
_NEAR = 1e-4


def _split(relative: int, bidirectional: bool, num_buckets: int) -> tuple[int, int, int]:
    """(bucket offset, n, buckets per direction)."""
    n = -int(relative)
    if bidirectional:
        half = num_buckets // 2
        return (half if n < 0 else 0), abs(n), half
    return 0, max(n, 0), num_buckets


def _log_term_exact(n: int, max_exact: int, max_distance: int, span: int) -> mp.mpf:
    return mp.log(exact(n) / max_exact) / mp.log(exact(max_distance) / max_exact) * span


def _floor_exact(n: int, max_exact: int, max_distance: int, span: int) -> int:
    """``floor(span ln(n/e) / ln(D/e))``, with exact ties decided in integers.

    The value is an integer ``k`` exactly when ``(n/e)**span == (D/e)**k``,
    i.e. ``n**span * e**k == D**k * e**span``; any other value lies far further
    from an integer than the mpmath rounding error.
    """
    value = _log_term_exact(n, max_exact, max_distance, span)
    k = int(mp.nint(value))
    near = abs(value - k) < mp.mpf("1e-6")
    if near and k >= 0 and n**span * max_exact**k == max_distance**k * max_exact**span:
        return k
    if abs(value - k) < mp.mpf(10) ** (-(mp.dps // 2)):
        msg = f"T5 log term for n={n} is {value} and not provably on either side of {k}"
        raise ArithmeticError(msg)
    return int(mp.floor(value))


def _log_term_float32(n: int, max_exact: int, max_distance: int, span: int) -> float:
    quotient = round_float32(exact(n) / max_exact)
    log_q = round_float32(mp.log(exact(quotient)))
    denominator = round_float32(exact(math.log(max_distance / max_exact)))
    ratio = round_float32(exact(log_q) / exact(denominator))
    return round_float32(exact(ratio) * span)


def _bucket(relative: int, bidirectional: bool, num_buckets: int, max_distance: int, *, float32: bool) -> int:
    offset, n, per_direction = _split(relative, bidirectional, num_buckets)
    max_exact = per_direction // 2
    if n < max_exact:
        return offset + n
    span = per_direction - max_exact
    if float32:
        term = int(_log_term_float32(n, max_exact, max_distance, span))  # trunc == floor (term >= 0)
    else:
        term = _floor_exact(n, max_exact, max_distance, span)
    return offset + min(max_exact + term, per_direction - 1)


def t5_bucket(
    relative: int, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> int:
    """The exact bucket of one relative position."""
    return _bucket(relative, bidirectional, num_buckets, max_distance, float32=False)


def t5_bucket_float32(
    relative: int, *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> int:
    """The bucket as a float32 evaluation of the HF / mesh-tf expression gives it (see module docs)."""
    _, n, per_direction = _split(relative, bidirectional, num_buckets)
    max_exact = per_direction // 2
    if n >= max_exact:
        value = _log_term_exact(n, max_exact, max_distance, per_direction - max_exact)
        if abs(value - mp.nint(value)) > _NEAR * max(1, abs(value)):
            return t5_bucket(
                relative, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance
            )
    return _bucket(relative, bidirectional, num_buckets, max_distance, float32=True)


def t5_buckets(
    relative: Sequence[int], *, bidirectional: bool = True, num_buckets: int = 32, max_distance: int = 128
) -> list[int]:
    """:func:`t5_bucket` over a flat sequence."""
    return [
        t5_bucket(r, bidirectional=bidirectional, num_buckets=num_buckets, max_distance=max_distance)
        for r in relative
    ]


def t5_bias(
    q_positions: Sequence[int],
    k_positions: Sequence[int],
    table: Sequence[Sequence[float]],
    *,
    bidirectional: bool = True,
    max_distance: int = 128,
    float32: bool = False,
) -> list[list[list[float]]]:
    """``[H][Lq][Lk]``: ``table[bucket(k - q)][h]`` (exact copies); ``float32``: HF's float32 buckets."""
    bucket = t5_bucket_float32 if float32 else t5_bucket
    kw = {"bidirectional": bidirectional, "num_buckets": len(table), "max_distance": max_distance}
    rows = [[bucket(int(k) - int(q), **kw) for k in k_positions] for q in q_positions]
    return [[[table[b][h] for b in row] for row in rows] for h in range(len(table[0]))]
