"""Windowed 2-D relative positions: Swin/BEiT index and gather, Swin-V2 log coordinates, SAM terms.

Written from Liu et al. (2021, Swin), Bao et al. (2021, BEiT), Liu et al. (2022,
Swin-V2, eq. 4) and the reference code's expressions (microsoft/Swin-Transformer
``relative_position_index``, facebookresearch/segment_anything ``get_rel_pos``).
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from ._numeric import exact, mp

__all__ = ["decomposed_index", "decomposed_rel_pos", "swinv2_log_coords", "window_bias", "window_index"]


def window_index(wh: int, ww: int, *, cls_token: bool = False) -> list[list[int]]:
    """``idx(a, b) = (h_a - h_b + Wh - 1)(2Ww - 1) + (w_a - w_b + Ww - 1)``; BEiT's cls rows first."""
    tokens = [(a // ww, a % ww) for a in range(wh * ww)]
    body = [
        [(ha - hb + wh - 1) * (2 * ww - 1) + (wa - wb + ww - 1) for hb, wb in tokens] for ha, wa in tokens
    ]
    if not cls_token:
        return body
    rows = (2 * wh - 1) * (2 * ww - 1)
    return [[rows + 2] + [rows] * len(tokens)] + [[rows + 1, *row] for row in body]


def window_bias(table: Sequence[Sequence[float]], window_size: Sequence[int], cls_token: bool) -> list[Any]:
    """``bias[head][a][b] = table[idx(a, b)][head]``."""
    index = window_index(*window_size, cls_token=cls_token)
    heads = len(table[0])
    return [[[exact(table[i][h]) for i in row] for row in index] for h in range(heads)]


def _axis(side: int, norm: int) -> list[Any]:
    out = []
    for d in range(-(side - 1), side):
        x = mp.mpf(8 * d) / (norm - 1)
        out.append(mp.sign(x) * mp.log(1 + abs(x), 2) / 3)
    return out


def swinv2_log_coords(window_size: Sequence[int], pretrained: Sequence[int] | None) -> list[Any]:
    """``[2Wh-1][2Ww-1][2]`` of ``sign(x) log2(1 + |x|) / 3``, ``x = 8 d / (P - 1)`` per axis."""
    wh, ww = window_size
    ph, pw = pretrained if pretrained else window_size
    h, w = _axis(wh, ph), _axis(ww, pw)
    return [[[a, b] for b in w] for a in h]


def _f32(x: float) -> float:
    """``x`` rounded to float32 (nearest, ties to even).  Every ``x`` passed here is an exact float64
    (a float32 times an int below 2**13, or a sum or difference of two float32 values of the same
    binade range), so this one rounding is the float32 operation's."""
    return struct.unpack("f", struct.pack("f", x))[0]


def decomposed_index(q: int, k: int, coords: str) -> list[list[int]]:
    """Row of the per-axis table for query ``i``, key ``j`` (SAM ``get_rel_pos``).

    ``exact``: ``floor((i k + (k - 1 - j) q) / min(q, k))``.  ``float32``: the code's float32
    expression ``trunc(f32(f32(i s_q) - f32(j s_k)) + c)``, each operation rounded to float32, with
    ``s_q = f32(max(k/q, 1))``, ``s_k = f32(max(q/k, 1))``, ``c = f32((k - 1) max(q/k, 1))``.
    """
    if coords == "exact" or q == k:
        return [[(i * k + (k - 1 - j) * q) // min(q, k) for j in range(k)] for i in range(q)]
    sq, sk = _f32(max(k / q, 1.0)), _f32(max(q / k, 1.0))
    c = _f32((k - 1) * max(q / k, 1.0))
    out = []
    for i in range(q):
        row = []
        for j in range(k):
            v = _f32(_f32(_f32(i * sq) - _f32(j * sk)) + c)
            row.append(int(v))  # int() truncates toward zero, as .long()
        out.append(row)
    return out


def decomposed_rel_pos(
    query: Any,
    rel_h: Sequence[Sequence[float]],
    rel_w: Sequence[Sequence[float]],
    k_size: Sequence[int],
    coords: str,
) -> Any:
    """``[..][qh][qw][kh][kw]`` of ``q . Rh[r_h(y, ky)] + q . Rw[r_w(x, kx)]``."""
    if isinstance(query[0][0][0], (list, tuple)):
        return [decomposed_rel_pos(b, rel_h, rel_w, k_size, coords) for b in query]
    qh, qw = len(query), len(query[0])
    kh, kw = k_size
    ih, iw = decomposed_index(qh, kh, coords), decomposed_index(qw, kw, coords)

    def dot(a: Sequence[float], b: Sequence[float]) -> Any:
        return mp.fsum(exact(x) * exact(y) for x, y in zip(a, b, strict=True))

    out = []
    for y in range(qh):
        row = []
        for x in range(qw):
            v = query[y][x]
            th = [dot(v, rel_h[ih[y][a]]) for a in range(kh)]
            tw = [dot(v, rel_w[iw[x][b]]) for b in range(kw)]
            row.append([[th[a] + tw[b] for b in range(kw)] for a in range(kh)])
        out.append(row)
    return out
