"""Transformer-XL relative attention: the distance sequence, its sinusoid table, the shift, the score.

Written from Dai et al. (2019, "Transformer-XL", section 3.3 and appendix B), Yang et al. (2019,
XLNet) and the reference code's tricks as they read: the shift is done *literally* here, padding
a flat Python list and re-cutting it (``pad, view, drop, view, slice``), not from an index formula.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

from . import sinusoidal as _sinusoidal
from ._numeric import exact, mp

__all__ = ["LAYOUT", "positions", "rel_attention_scores", "rel_shift", "table"]

#: Table convention -> the sinusoidal layout its implementations use.
LAYOUT = {"conformer": "vaswani", "transformer_xl": "marian", "xlnet": "marian", "xlnet_uni": "marian"}


def positions(
    qlen: int, klen: int | None, convention: str, clamp_len: int | None = None, bi_data: bool = False
) -> list[Any]:
    """The distances of the table rows: XLNet's ``arange(beg, end, -1)``, the Conformers' ``L-1..-(L-1)``."""
    klen = qlen if klen is None else klen
    beg, end = {
        "conformer": (klen - 1, -klen),  # pe_positive flipped (L-1 .. 0) then pe_negative[1:] (-1 .. -(L-1))
        "transformer_xl": (klen - 1, -1),  # pos_seq = arange(klen - 1, -1, -1.0)
        "xlnet": (klen, -qlen),  # attn_type "bi": beg, end = klen, -qlen
        "xlnet_uni": (klen, -1),  # attn_type "uni": beg, end = klen, -1
    }[convention]
    fwd = list(range(beg, end, -1))
    rows = [fwd, [-p for p in fwd]] if bi_data else fwd  # bwd_pos_seq = arange(-beg, -end, 1)
    if clamp_len is None:
        return rows
    clip = lambda p: max(-clamp_len, min(clamp_len, p))  # noqa: E731
    return [[clip(p) for p in row] for row in rows] if bi_data else [clip(p) for p in rows]


def table(
    qlen: int,
    dim: int,
    klen: int | None,
    convention: str,
    clamp_len: int | None = None,
    bi_data: bool = False,
) -> list[Any]:
    """The sinusoid rows of :func:`positions` in the implementation's layout."""
    seq = positions(qlen, klen, convention, clamp_len, bi_data)
    if bi_data:
        return [_sinusoidal.sinusoidal(row, dim, LAYOUT[convention]) for row in seq]
    return _sinusoidal.sinusoidal(seq, dim, LAYOUT[convention])


def _shift_2d(x: Sequence[Sequence[Any]], klen: int | None, convention: str, shift: int) -> list[list[Any]]:
    """One ``[Q][P]`` matrix through the implementation's own steps, on a flat list."""
    q, p = len(x), len(x[0])
    zero = mp.mpf(0)
    if convention == "transformer_xl":
        # F.pad(x, (1, 0)) -> [Q, P+1]; .view(P+1, Q)[1:] drops the first Q flat elements; .view(Q, P)
        flat = [v for row in x for v in [zero, *row]][q:]
        out = [flat[i * p : (i + 1) * p] for i in range(q)]
        k = p if klen is None else klen
    elif convention == "xlnet":
        # .reshape(P, Q)[shift:] drops shift * Q flat elements; .reshape(Q, P - shift)
        flat = [v for row in x for v in row][shift * q :]
        out = [flat[i * (p - shift) : (i + 1) * (p - shift)] for i in range(q)]
        k = p - shift if klen is None else klen
    else:
        # gemma3n: F.pad(x, (0, K + 1 - P)) -> [Q, K+1]; flatten; [: Q K]; .reshape(Q, K)
        k = (p - 1 if p > 1 else 1) if klen is None else klen
        flat = [v for row in x for v in [*row, *([zero] * (k + 1 - p))]][: q * k]
        out = [flat[i * k : (i + 1) * k] for i in range(q)]
    return [row[:k] for row in out]


def _depth(nested: Any) -> int:
    d = 0
    while isinstance(nested, (list, tuple)):
        nested, d = nested[0], d + 1
    return d


def rel_shift(x: Any, klen: int | None, convention: str, shift: int = 1) -> Any:
    """The shift of every ``[Q][P]`` matrix of ``x`` (leading axes kept); values exact."""
    if _depth(x) > 2:
        return [rel_shift(sub, klen, convention, shift) for sub in x]
    return _shift_2d([[exact(v) for v in row] for row in x], klen, convention, shift)


def _shape(nested: Any) -> list[int]:
    shape = []
    while isinstance(nested, (list, tuple)):
        shape.append(len(nested))
        nested = nested[0]
    return shape


def _at(nested: Any, lead_shape: Sequence[int], index: Sequence[int]) -> Any:
    """The sub-array of ``nested`` (leading shape ``lead_shape``) at broadcast index ``index``."""
    offset = len(index) - len(lead_shape)
    for axis, size in enumerate(lead_shape):
        nested = nested[0 if size == 1 else index[offset + axis]]
    return nested


def rel_attention_scores(
    q: Any,
    k: Any,
    r: Any,
    u: Any,
    v: Any,
    convention: str,
    shift: int,
    scale: Any,
) -> Any:
    """``scale ((q + u) . k + shift((q + v) . R))`` with leading axes broadcast (numpy rules)."""
    leads = {"q": _shape(q)[:-2], "k": _shape(k)[:-2], "r": _shape(r)[:-2]}
    if u is not None:
        leads["u"] = _shape(u)[:-1]
    if v is not None:
        leads["v"] = _shape(v)[:-1]
    ndim = max(len(s) for s in leads.values())
    lead = [
        max([s[axis - (ndim - len(s))] for s in leads.values() if axis - (ndim - len(s)) >= 0] or [1])
        for axis in range(ndim)
    ]
    width = _shape(q)[-1]
    s = mp.mpf(width) ** mp.mpf(-0.5) if scale is None else exact(scale)

    def dot(a: Sequence[Any], b: Sequence[Any]) -> Any:
        return mp.fsum(exact(x) * exact(y) for x, y in zip(a, b, strict=True))

    def one(index: tuple[int, ...]) -> list[list[Any]]:
        qs, ks, rs = (_at(a, leads[n], index) for a, n in ((q, "q"), (k, "k"), (r, "r")))
        zero = [0.0] * width
        ub = _at(u, leads["u"], index) if u is not None else zero
        vb = _at(v, leads["v"], index) if v is not None else zero
        qu = [[exact(a) + exact(b) for a, b in zip(row, ub, strict=True)] for row in qs]
        qv = [[exact(a) + exact(b) for a, b in zip(row, vb, strict=True)] for row in qs]
        ac = [[dot(row, key) for key in ks] for row in qu]
        bd = _shift_2d([[dot(row, rel) for rel in rs] for row in qv], len(ks), convention, shift)
        return [[s * (a + b) for a, b in zip(ra, rb, strict=True)] for ra, rb in zip(ac, bd, strict=True)]

    flat = [one(index) for index in itertools.product(*(range(n) for n in lead))]

    def build(dims: Sequence[int], items: list[Any]) -> Any:
        if not dims:
            return items[0]
        step = len(items) // dims[0]
        return [build(dims[1:], items[i * step : (i + 1) * step]) for i in range(dims[0])]

    return build(lead, flat)
