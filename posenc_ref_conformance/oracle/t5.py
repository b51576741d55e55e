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

The variants (written from the models' papers and code, transformers 5.24):
:func:`layout_bias` (LayoutLMv2/v3: 1-D plus x = left edge and y = bottom edge
buckets, divided by ``sqrt(head_dim)``), :func:`udop_bias` (UDOP: box centres
scaled and truncated toward zero, prefix buckets), :func:`gated_bias` (WavLM's
per-query gate), :func:`stream_buckets` (ProphetNet's main and predict streams)
and :func:`segment_bias` (CPM-Ant's segment-pair rows).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ._numeric import exact, mp, round_float32

__all__ = [
    "gated_bias",
    "layout_bias",
    "segment_bias",
    "stream_buckets",
    "t5_bias",
    "t5_bucket",
    "t5_bucket_float32",
    "t5_buckets",
    "udop_bias",
]

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


# --- variants: document layouts (LayoutLMv2/v3, UDOP), WavLM's gate, ProphetNet's streams, CPM-Ant ---


def _lookup(table: Sequence[Sequence[float]], rows: list[list[int]]) -> list[list[list[mp.mpf]]]:
    """``[H][Lq][Lk]``: ``table[rows[i][j]][h]`` as exact mpf values."""
    return [[[exact(table[r][h]) for r in row] for row in rows] for h in range(len(table[0]))]


def _sum(*terms: list[list[list[mp.mpf]]]) -> list[list[list[mp.mpf]]]:
    return [
        [
            [mp.fsum(t[h][i][j] for t in terms) for j in range(len(terms[0][h][i]))]
            for i in range(len(terms[0][h]))
        ]
        for h in range(len(terms[0]))
    ]


def _self_rows(values: Sequence[Any], num_buckets: int, max_distance: int) -> list[list[int]]:
    """Bidirectional buckets of ``values[j] - values[i]`` (exact integers or Fractions truncated)."""
    return [
        [t5_bucket(int(b - a), num_buckets=num_buckets, max_distance=max_distance) for b in values]
        for a in values
    ]


def layout_bias(
    positions: Sequence[int],
    bbox: Sequence[Sequence[int]],
    table: Sequence[Sequence[float]],
    x_table: Sequence[Sequence[float]],
    y_table: Sequence[Sequence[float]],
    *,
    max_rel_pos: int,
    max_rel_2d_pos: int,
    head_dim: int | None,
) -> list[list[list[mp.mpf]]]:
    """LayoutLMv2/v3 ``[H][L][L]``: ``(Tx[b(x_j - x_i)] + Ty[b(y_j - y_i)] + T[b(p_j - p_i)]) / sqrt(d)``,
    ``x = bbox[:, 0]`` (left edge), ``y = bbox[:, 3]`` (bottom edge); all buckets bidirectional."""
    one = _lookup(table, _self_rows([int(p) for p in positions], len(table), max_rel_pos))
    xs = _lookup(x_table, _self_rows([int(b[0]) for b in bbox], len(x_table), max_rel_2d_pos))
    ys = _lookup(y_table, _self_rows([int(b[3]) for b in bbox], len(y_table), max_rel_2d_pos))
    out = _sum(xs, ys, one)
    if head_dim is None:
        return out
    root = mp.sqrt(head_dim)
    return [[[v / root for v in row] for row in head] for head in out]


def _prefix_rows(rows: list[list[int]], count: int, num_buckets: int) -> list[list[int]]:
    """UDOP's prefix buckets: prefix query -> text key ``N``, text query -> prefix key ``N + 1``."""
    out = []
    for i, row in enumerate(rows):
        out.append(
            [
                num_buckets if i < count <= j else num_buckets + 1 if j < count <= i else b
                for j, b in enumerate(row)
            ]
        )
    return out


def udop_bias(
    bbox: Sequence[Sequence[float]],
    table: Sequence[Sequence[float]],
    x_table: Sequence[Sequence[float]],
    y_table: Sequence[Sequence[float]],
    *,
    max_distance: int,
    max_distance_2d: int,
    scaling_factor: float,
    prefix_buckets: bool,
) -> list[list[list[mp.mpf]]]:
    """UDOP ``[H][L][L]``: ``T[b(j - i)] + Tx[b(trunc(s (cx_j - cx_i)))] + Ty[b(trunc(s (cy_j - cy_i)))]``,
    ``cx = (x0 + x1) / 2``, ``cy = (y0 + y1) / 2`` exactly (Fractions), truncated toward zero."""
    extra = 2 if prefix_buckets else 0
    n1, n2 = len(table) - extra, len(x_table) - extra
    s = Fraction(scaling_factor)
    cx = [(Fraction(b[0]) + Fraction(b[2])) / 2 for b in bbox]
    cy = [(Fraction(b[1]) + Fraction(b[3])) / 2 for b in bbox]

    def rows2d(centres: list[Fraction]) -> list[list[int]]:
        return [
            [t5_bucket(int(s * (c - d)), num_buckets=n2, max_distance=max_distance_2d) for c in centres]
            for d in centres
        ]

    r1 = _self_rows(list(range(len(bbox))), n1, max_distance)
    rx, ry = rows2d(cx), rows2d(cy)
    if prefix_buckets:
        count = sum(1 for b in bbox if b[1] < 0)
        r1, rx, ry = _prefix_rows(r1, count, n1), _prefix_rows(rx, count, n2), _prefix_rows(ry, count, n2)
    return _sum(_lookup(table, r1), _lookup(x_table, rx), _lookup(y_table, ry))


def gated_bias(
    hidden: Sequence[Sequence[Sequence[float]]],
    table: Sequence[Sequence[float]],
    gate_weight: Sequence[Sequence[float]],
    gate_bias: Sequence[float],
    gate_const: Sequence[float],
    *,
    max_distance: int,
) -> list[list[list[mp.mpf]]]:
    """WavLM ``[H][L][L]``: ``g[h][i] * T[b(j - i)][h]``, ``g = a (b c_h - 1) + 2``,
    ``a = sigmoid(sum u[0:4])``, ``b = sigmoid(sum u[4:8])``, ``u = W x + bias`` (x: head h, query i)."""

    def sigmoid(v: mp.mpf) -> mp.mpf:
        return 1 / (1 + mp.exp(-v))

    length = len(hidden[0])
    bias = _lookup(table, _self_rows(list(range(length)), len(table), max_distance))
    out = []
    for h, rows in enumerate(hidden):
        head = []
        for i, x in enumerate(rows):
            u = [
                mp.fsum(exact(w) * exact(v) for w, v in zip(wrow, x, strict=True)) + exact(b)
                for wrow, b in zip(gate_weight, gate_bias, strict=True)
            ]
            a, g_b = sigmoid(mp.fsum(u[:4])), sigmoid(mp.fsum(u[4:]))
            gate = a * (g_b * exact(gate_const[h]) - 1) + 2
            head.append([gate * v for v in bias[h][i]])
        out.append(head)
    return out


def stream_buckets(
    positions: Sequence[int], *, num_buckets: int, max_distance: int
) -> tuple[list[list[int]], list[list[int]]]:
    """ProphetNet: causal buckets of ``p_j - p_i`` (main) and of ``[p - 1, p]_j - p_i`` (predict)."""
    p = [int(v) for v in positions]
    keys = [v - 1 for v in p] + p
    kw = {"bidirectional": False, "num_buckets": num_buckets, "max_distance": max_distance}
    main = [[t5_bucket(k - q, **kw) for k in p] for q in p]
    predict = [[t5_bucket(k - q, **kw) for k in keys] for q in p]
    return main, predict


def segment_bias(
    q_positions: Sequence[int],
    k_positions: Sequence[int],
    q_segments: Sequence[int],
    k_segments: Sequence[int],
    table: Sequence[Sequence[float]],
    *,
    num_segments: int,
    max_distance: int,
) -> list[list[list[mp.mpf]]]:
    """CPM-Ant ``[H][Lq][Lk]``: the bucket of ``k - q`` within a segment, else row ``N + s_q S + s_k``."""
    n = len(table) - num_segments * num_segments
    rows = [
        [
            t5_bucket(int(k) - int(q), num_buckets=n, max_distance=max_distance)
            if sq == sk
            else n + int(sq) * num_segments + int(sk)
            for k, sk in zip(k_positions, k_segments, strict=True)
        ]
        for q, sq in zip(q_positions, q_segments, strict=True)
    ]
    return _lookup(table, rows)
