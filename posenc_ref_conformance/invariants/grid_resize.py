"""Grid-resize invariants: same size is the identity, constants stay, aligned bilinear is exact on planes.

Tolerances follow the golden cases' error model (golden/cases/grid_resize.py): a resize
evaluated in the run's dtype errs by a few hundred unit roundoffs of max|T| per axis at
these sizes (coordinates rounded, weights moved by at most 4.5 per unit of coordinate);
every bound below is that model at the check's sizes, doubled.
"""

from __future__ import annotations

import numpy as np

from .core import expect_close, host, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}


def _tol(dtype: str, scale: float, sides: tuple[int, ...], slope: float = 4.5, mass: float = 1.5) -> float:
    """2 x max|T| prod(mass) u sum_axes (slope 4 (n + 1) + mass (taps + 8)), taps <= 16 here."""
    per_axis = sum(slope * 4 * (n + 1) + mass * 24 for n in sides)
    return 2 * scale * mass ** len(sides) * per_axis * EPS[dtype]


def _table(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    return (rng.integers(-256, 257, size=shape) / 64.0).astype(dtype)  # exact in float32 and float64


def _resize(adapter, table, size, *, mode, align_corners=False, scale_factor=None, antialias=False):
    return host(
        adapter.grid_resize(
            table,
            list(size),
            mode=mode,
            align_corners=align_corners,
            scale_factor=scale_factor,
            antialias=antialias,
        )
    )


@invariant("grid_resize", "same-size-identity", "grid_resize", seed=901)
def same_size(adapter, dtype, rng):
    """Resizing to the same size with align_corners=False and no antialias gives the table back.

    1-D linear (SAM's call, 7 rows), then 2-D bilinear and bicubic (5 x 3): every weight is 0 or 1.
    """
    one = _table(rng, (7, 4), dtype)
    worst = expect_close(
        _resize(adapter, one, (7,), mode="linear"), one, _tol(dtype, 4, (7,)), "linear 7 -> 7"
    )
    two = _table(rng, (5, 3, 2), dtype)
    for mode in ("bilinear", "bicubic"):
        out = _resize(adapter, two, (5, 3), mode=mode)
        worst = max(worst, expect_close(out, two, _tol(dtype, 4, (5, 3)), f"{mode} 5 x 3 -> 5 x 3"))
    return worst


@invariant("grid_resize", "constant-stays-constant", "grid_resize", seed=902)
def constant(adapter, dtype, rng):
    """A table constant over the grid stays that constant: every kernel's weights sum to 1.

    1-D linear 5 -> 9 (SAM), bicubic 4 x 4 -> 7 x 5 and 6 x 6 -> 4 x 3, bicubic antialias 8 x 8 -> 3 x 5,
    bilinear align_corners=True 3 x 3 -> 5 x 6.
    """
    channels = _table(rng, (3,), dtype)
    worst = 0.0
    for mode, sides, size, options in [
        ("linear", (5,), (9,), {}),
        ("bicubic", (4, 4), (7, 5), {}),
        ("bicubic", (6, 6), (4, 3), {}),
        ("bicubic", (8, 8), (3, 5), {"antialias": True}),
        ("bilinear", (3, 3), (5, 6), {"align_corners": True}),
    ]:
        table = np.broadcast_to(channels, (*sides, 3)).astype(dtype)
        out = _resize(adapter, table, size, mode=mode, **options)
        expected = np.broadcast_to(channels, (*size, 3))
        slope = 24.0 if options.get("antialias") else 4.5
        tol = _tol(dtype, 4, sides, slope=slope)
        worst = max(worst, expect_close(out, expected, tol, f"{mode} {options} {sides} -> {size}"))
    return worst


@invariant("grid_resize", "plane-exact-align-corners", "grid_resize", seed=903)
def plane(adapter, dtype, rng):
    """A plane a + b i + c j resized by bilinear with align_corners=True is that plane at the sources.

    Output (i', j') holds a + b i' (n-1)/(n'-1) + c j' (m-1)/(m'-1).

    Linear interpolation reproduces affine functions exactly, and aligned corners map output i' to
    source i' (n - 1)/(n' - 1); 4 x 6 -> 7 x 3 and 1-D 5 -> 9.
    """
    a, b, c = 0.5, 0.25, -0.375
    i, j = np.arange(4)[:, None, None], np.arange(6)[None, :, None]
    table = (a + b * i + c * j + np.zeros((1, 1, 2))).astype(dtype)
    out = _resize(adapter, table, (7, 3), mode="bilinear", align_corners=True)
    i2, j2 = np.arange(7)[:, None, None] * 3 / 6, np.arange(3)[None, :, None] * 5 / 2
    expected = a + b * i2 + c * j2 + np.zeros((1, 1, 2))
    worst = expect_close(out, expected, _tol(dtype, 4, (4, 6), slope=2.0), "bilinear plane 4 x 6 -> 7 x 3")
    line = (a + b * np.arange(5)[:, None] + np.zeros((1, 2))).astype(dtype)
    out = _resize(adapter, line, (9,), mode="linear", align_corners=True)
    expected = a + b * (np.arange(9)[:, None] / 2) + np.zeros((1, 2))
    return max(worst, expect_close(out, expected, _tol(dtype, 4, (5,), slope=2.0), "linear line 5 -> 9"))


@invariant("grid_resize", "patch-same-grid-identity", "patch_grid_resize", seed=904)
def patch_same_grid(adapter, dtype, rng):
    """The same patch grid without the early return gives the table back (bicubic, size map), prefix kept."""
    table = _table(rng, (1, 1 + 16, 3), dtype)
    out = host(
        adapter.patch_grid_resize(
            table,
            [4, 4],
            [4, 4],
            prefix_tokens=1,
            mode="bicubic",
            align_corners=False,
            scale_factor=None,
            antialias=False,
            skip_same_grid=False,
        )
    )
    return expect_close(out, table, _tol(dtype, 4, (4, 4)), "patch table 4 x 4 -> 4 x 4")
