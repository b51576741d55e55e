"""DETR's 2-D sine, its coordinate sinusoid, and the MAE / RT-DETR 2-D sincos table, in mpmath.

Written from the reference code (HF transformers 5.24, itself a port of
facebookresearch/detr ``models/position_encoding.py``, fundamentalvision/
Deformable-DETR, facebookresearch/mae ``util/pos_embed.py`` and lyuwenyu/RT-DETR):

* DETR sine: ``y = cumsum(mask, H)``, ``x = cumsum(mask, W)`` (counts from 1);
  normalised ``(c - delta) / (c_last + 1e-6) * scale`` (``delta`` 0, Deformable
  DETR 0.5); ``dim_t[i] = T**(2 floor(i/2) / F)``; channel ``2k`` is
  ``sin(c / dim_t[2k])``, ``2k + 1`` ``cos(c / dim_t[2k+1])``; ``[y | x]``,
  channels first.  ``1e-6`` is the float64 value the code adds.
* Coordinate sinusoid: ``coord * scale / dim_t`` per coordinate, the same
  interleaving; Conditional DETR swaps the first two coordinates (y first);
  Deformable DETR's proposals are ``sigmoid(p)`` in their order.
* 2-D sincos: ``omega_k = 1 / T**(k / (D/4))``; per axis ``[sin(p omega) |
  cos(p omega)]``; blocks and rows in the convention's order; an optional zero
  row first.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ._numeric import exact, mp

__all__ = ["detr_coord_sine", "detr_sine_2d", "sincos_2d"]

EPS = 1e-6


def _pair(angle: mp.mpf) -> list[mp.mpf]:
    return [mp.sin(angle), mp.cos(angle)]


def _row(value: mp.mpf, feats: int, temperature: mp.mpf) -> list[mp.mpf]:
    """``F`` channels: ``sin, cos`` of ``value / T**(2k/F)`` for ``k < F/2``."""
    out: list[mp.mpf] = []
    for k in range(feats // 2):
        out += _pair(value / mp.power(temperature, mp.mpf(2 * k) / feats))
    return out


def detr_sine_2d(
    mask: Sequence[Sequence[Sequence[Any]]],
    num_position_features: int,
    *,
    temperature: float,
    temperature_height: float | None,
    temperature_width: float | None,
    normalize: bool,
    scale: float,
    convention: str,
) -> list[list[list[list[mp.mpf]]]]:
    """``[B][2F][H][W]``."""
    feats = num_position_features
    t_h = exact(temperature if temperature_height is None else temperature_height)
    t_w = exact(temperature if temperature_width is None else temperature_width)
    delta = mp.mpf("0.5") if convention == "deformable_detr" else mp.mpf(0)
    eps, s = exact(EPS), exact(scale)
    out = []
    for image in mask:
        m = [[1 if v else 0 for v in row] for row in image]
        height, width = len(m), len(m[0])
        ys = [[sum(m[r][j] for r in range(i + 1)) for j in range(width)] for i in range(height)]
        xs = [[sum(m[i][c] for c in range(j + 1)) for j in range(width)] for i in range(height)]
        chans: list[list[list[mp.mpf]]] = [
            [[mp.mpf(0)] * width for _ in range(height)] for _ in range(2 * feats)
        ]
        for i in range(height):
            for j in range(width):
                y, x = mp.mpf(ys[i][j]), mp.mpf(xs[i][j])
                if normalize:
                    y = (y - delta) / (ys[height - 1][j] + eps) * s
                    x = (x - delta) / (xs[i][width - 1] + eps) * s
                for c, v in enumerate(_row(y, feats, t_h) + _row(x, feats, t_w)):
                    chans[c][i][j] = v
        out.append(chans)
    return out


def detr_coord_sine(
    coords: Sequence[Any], num_pos_feats: int, *, temperature: float, scale: float, convention: str
) -> Any:
    """``[..., n * F]`` for coordinates ``[..., n]`` (nested lists)."""
    if isinstance(coords[0], (list, tuple)):
        return [
            detr_coord_sine(c, num_pos_feats, temperature=temperature, scale=scale, convention=convention)
            for c in coords
        ]
    values = [exact(c) for c in coords]
    if convention == "deformable_detr":
        values = [1 / (1 + mp.exp(-v)) for v in values]
    elif len(values) >= 2:
        values[0], values[1] = values[1], values[0]
    t, s = exact(temperature), exact(scale)
    out: list[mp.mpf] = []
    for v in values:
        out += _row(v * s, num_pos_feats, t)
    return out


def sincos_2d(
    h_positions: Sequence[int],
    w_positions: Sequence[int],
    dim: int,
    *,
    temperature: float,
    convention: str,
    cls_token: bool,
) -> list[list[mp.mpf]]:
    """``[(1 +) H W][D]``."""
    q = dim // 4
    t = exact(temperature)
    omega = [1 / mp.power(t, mp.mpf(k) / q) for k in range(q)]

    def axis(p: int) -> list[mp.mpf]:
        return [mp.sin(p * w) for w in omega] + [mp.cos(p * w) for w in omega]

    if convention == "omdet_turbo":
        cells = [(int(h), int(w)) for w in w_positions for h in h_positions]
    else:
        cells = [(int(h), int(w)) for h in h_positions for w in w_positions]
    rows = [axis(h) + axis(w) if convention == "rt_detr" else axis(w) + axis(h) for h, w in cells]
    return ([[mp.mpf(0)] * dim] if cls_token else []) + rows
