"""Grid resizing of position tables, as PyTorch's ``F.interpolate`` defines it, in exact arithmetic.

Written from ATen's definitions (``aten/src/ATen/native/UpSample.h``:
``area_pixel_compute_scale``, ``area_pixel_compute_source_index``,
``nearest_idx``, ``cubic_convolution1/2``; ``native/cpu/UpSampleKernel.cpp``:
``_compute_weights_aa`` and the ``aa_filter`` of the linear and cubic helpers),
with every coordinate and weight an exact rational (:class:`fractions.Fraction`)
and every output an exact rational sum of table values (the float64 inputs
taken exactly), converted to :class:`mpmath.mpf` once.

For one grid axis with ``n`` inputs and ``n'`` outputs, output index ``d``
takes the weights ``w(d, j)`` over the input rows ``j``:

* scale ``r = (n - 1)/(n' - 1)`` with ``align_corners`` (0 when ``n' = 1``),
  ``1/scale_factor`` when one is given, else ``n/n'``;
* source coordinate ``s = r d`` (``align_corners``) or ``r (d + 1/2) - 1/2``;
* ``linear``: the tent ``max(0, 1 - |clamp(s, 0, n - 1) - j|)``;
* ``bicubic``: Keys' kernel ``W_A`` (``A = -3/4``) at ``s - k`` for the four
  ``k = floor(s) - 1 .. floor(s) + 2``, each credited to row ``clamp(k, 0, n - 1)``;
* ``nearest``: row ``min(floor(d r), n - 1)`` (row ``floor(d / 2)`` when ``n' = 2 n``);
* antialias: rows ``j`` in ``[max(floor(c - S + 1/2), 0), min(floor(c + S + 1/2), n))``,
  ``c = r (d + 1/2)``, ``S = (K/2) max(r, 1)``, weight ``f((j - c + 1/2) / max(r, 1))``
  normalised to sum 1; ``f`` the triangle (``K = 2``) or ``W_{-1/2}`` (``K = 4``);
* an axis whose size is unchanged keeps its rows, except under ``bicubic``
  without antialias (PyTorch's CPU kernels skip such an axis; the bicubic
  kernel applies its map).

A 2-D resize is the product of the two axes' weights, summed directly per
output element (no intermediate rounding, unlike a separable two-pass kernel).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from ._numeric import mp

__all__ = ["axis_weights", "grid_resize", "patch_grid_resize"]

_HALF = Fraction(1, 2)


def _keys(x: Fraction, a: Fraction) -> Fraction:
    """Keys (1981) cubic convolution kernel ``W_a(x)``."""
    x = abs(x)
    if x < 1:
        return (a + 2) * x**3 - (a + 3) * x**2 + 1
    if x < 2:
        return a * x**3 - 5 * a * x**2 + 8 * a * x - 4 * a
    return Fraction(0)


def axis_weights(
    n: int,
    n_out: int,
    *,
    mode: str,
    align_corners: bool = False,
    scale_factor: float | None = None,
    antialias: bool = False,
) -> list[dict[int, Fraction]]:
    """``w(d, j)`` for every output index ``d``: a mapping input row -> exact weight (see the module)."""
    if n_out == n and (mode != "bicubic" or antialias):
        return [{d: Fraction(1)} for d in range(n)]
    if align_corners:
        r = Fraction(n - 1, n_out - 1) if n_out > 1 else Fraction(0)
    elif scale_factor is not None:
        r = 1 / Fraction(scale_factor)
    else:
        r = Fraction(n, n_out)
    out: list[dict[int, Fraction]] = []
    for d in range(n_out):
        w: dict[int, Fraction] = {}
        if mode == "nearest":
            w[d // 2 if n_out == 2 * n else min(math.floor(d * r), n - 1)] = Fraction(1)
        elif antialias:
            half_width = 1 if mode in ("linear", "bilinear") else 2
            stretch = max(r, Fraction(1))
            support = half_width * stretch
            c = r * (d + _HALF)
            for j in range(max(math.floor(c - support + _HALF), 0), min(math.floor(c + support + _HALF), n)):
                x = (j - c + _HALF) / stretch
                w[j] = max(1 - abs(x), Fraction(0)) if half_width == 1 else _keys(x, Fraction(-1, 2))
            total = sum(w.values())
            if total:
                w = {j: v / total for j, v in w.items()}
        else:
            s = r * d if align_corners else r * (d + _HALF) - _HALF
            if mode in ("linear", "bilinear"):
                s = min(max(s, Fraction(0)), Fraction(n - 1))
                for j in (math.floor(s), math.floor(s) + 1):
                    if j < n and 1 - abs(s - j) > 0:
                        w[j] = 1 - abs(s - j)
            else:
                base = math.floor(s)
                for k in range(base - 1, base + 3):
                    row = min(max(k, 0), n - 1)
                    w[row] = w.get(row, Fraction(0)) + _keys(s - k, Fraction(-3, 4))
        out.append(w)
    return out


def _depth(nested: Any) -> int:
    depth = 0
    while isinstance(nested, (list, tuple)):
        depth, nested = depth + 1, nested[0]
    return depth


def _resize_grid(grid: Any, weights: list[list[dict[int, Fraction]]]) -> list[Any]:
    """One grid ``[*sides, D]`` (nested lists of floats) resized with the per-axis weights, exactly."""
    if len(weights) == 1:
        (wr,) = weights
        return [
            [
                sum((v * Fraction(grid[a][c]) for a, v in row.items()), Fraction(0))
                for c in range(len(grid[0]))
            ]
            for row in wr
        ]
    wr, wc = weights
    dim = len(grid[0][0])
    return [
        [
            [
                sum(
                    (va * vb * Fraction(grid[a][b][c]) for a, va in ra.items() for b, vb in rb.items()),
                    Fraction(0),
                )
                for c in range(dim)
            ]
            for rb in wc
        ]
        for ra in wr
    ]


def _to_mpf(nested: Any) -> Any:
    if isinstance(nested, list):
        return [_to_mpf(v) for v in nested]
    return mp.mpf(nested.numerator) / nested.denominator


def grid_resize(
    table: Any,
    size: Sequence[int],
    *,
    mode: str,
    align_corners: bool = False,
    scale_factor: Sequence[float] | None = None,
    antialias: bool = False,
) -> Any:
    """``table [..., *grid, D]`` (nested lists) resized to ``[..., *size, D]``: mpf values."""
    k = len(size)
    lead = _depth(table) - k - 1

    def sides(grid: Any) -> list[int]:
        out = []
        for _ in range(k):
            out.append(len(grid))
            grid = grid[0]
        return out

    def walk(node: Any, level: int) -> Any:
        if level < lead:
            return [walk(child, level + 1) for child in node]
        weights = [
            axis_weights(
                n,
                n_out,
                mode=mode,
                align_corners=align_corners,
                scale_factor=None if scale_factor is None else scale_factor[i],
                antialias=antialias,
            )
            for i, (n, n_out) in enumerate(zip(sides(node), size, strict=True))
        ]
        return _to_mpf(_resize_grid(node, weights))

    return walk(table, 0)


def patch_grid_resize(
    table: Any,
    grid: Sequence[int],
    new_grid: Sequence[int],
    *,
    prefix_tokens: int,
    mode: str,
    align_corners: bool = False,
    scale_factor: Sequence[float] | None = None,
    antialias: bool = False,
    skip_same_grid: bool = False,
) -> Any:
    """``[..., P + n m, D]``: the P prefix rows, then the ``n x m`` patch rows resized, row-major."""
    n, m = grid
    n2, m2 = new_grid
    if _depth(table) > 2:
        return [
            patch_grid_resize(
                t,
                grid,
                new_grid,
                prefix_tokens=prefix_tokens,
                mode=mode,
                align_corners=align_corners,
                scale_factor=scale_factor,
                antialias=antialias,
                skip_same_grid=skip_same_grid,
            )
            for t in table
        ]
    if skip_same_grid and (n2, m2) == (n, m):
        return [[mp.mpf(v) for v in row] for row in table]
    prefix = [[mp.mpf(v) for v in row] for row in table[:prefix_tokens]]
    patches = table[prefix_tokens:]
    grid_rows = [patches[i * m : (i + 1) * m] for i in range(n)]  # row-major: patch (i, j) is row i m + j
    resized = grid_resize(
        grid_rows,
        (n2, m2),
        mode=mode,
        align_corners=align_corners,
        scale_factor=scale_factor,
        antialias=antialias,
    )
    return prefix + [resized[i][j] for i in range(n2) for j in range(m2)]
