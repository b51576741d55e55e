"""Random Fourier features of 2-D points (Tancik et al. 2020; SAM, Kirillov et al. 2023).

SAM's ``PositionEmbeddingRandom`` (facebookresearch/segment-anything
``modeling/prompt_encoder.py``; HF ``SamPositionalEmbedding``): points are
normalised to ``[0, 1]`` (x by the width, y by the height; prompts first
shifted by 1/2 to the pixel centre), mapped to ``c' = 2c - 1``, projected by a
given ``[2, F]`` Gaussian matrix ``G`` and multiplied by ``2 pi``; the
encoding is ``[sin z | cos z]``.  The image-wide grid encodes the pixel
centres ``((j + 1/2)/W, (i + 1/2)/H)`` and is returned channels first.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = ["fourier_features", "fourier_grid"]


def _encode(cx: mp.mpf, cy: mp.mpf, gaussian: Sequence[Sequence[float]]) -> list[mp.mpf]:
    gx, gy = gaussian
    # z = 2 pi t; sinpi/cospi of 2t are exact zeros where t is a multiple of 1/2 (dyadic inputs hit them)
    turns = [(2 * cx - 1) * exact(a) + (2 * cy - 1) * exact(b) for a, b in zip(gx, gy, strict=True)]
    return [mp.sinpi(2 * t) for t in turns] + [mp.cospi(2 * t) for t in turns]


def fourier_features(
    coords: Sequence[Sequence[float]],
    gaussian: Sequence[Sequence[float]],
    *,
    input_shape: Sequence[int] | None = None,
    offset: float = 0.0,
) -> list[list[mp.mpf]]:
    """``[N][2F]`` for points ``[N][2]`` (x, y)."""
    h, w = (1, 1) if input_shape is None else (int(input_shape[0]), int(input_shape[1]))
    o = exact(offset)
    return [_encode((exact(x) + o) / w, (exact(y) + o) / h, gaussian) for x, y in coords]


def fourier_grid(gaussian: Sequence[Sequence[float]], *, height: int, width: int) -> list[list[list[mp.mpf]]]:
    """``[2F][H][W]``: the pixel-centre grid, channels first."""
    cells = [
        [
            _encode(mp.mpf(2 * j + 1) / (2 * width), mp.mpf(2 * i + 1) / (2 * height), gaussian)
            for j in range(width)
        ]
        for i in range(height)
    ]
    return [
        [[cells[i][j][f] for j in range(width)] for i in range(height)] for f in range(2 * len(gaussian[0]))
    ]
