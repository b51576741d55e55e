"""Vision-sine invariants: DETR's padding independence and axis separation, the coordinate sinusoid's
y-first assembly, and the 2-D sincos table's per-axis 1-D structure."""

from __future__ import annotations

import math

import numpy as np

from .core import expect_close, host, ints, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}
TWO_PI = 2 * math.pi


def _tol(dtype: str, max_angle: float, temperature: float = 10000.0, roundings: int = 8) -> float:
    """The golden cases' error model of a plain evaluation (see golden/cases/vision_sine.py), doubled:
    both sides of each comparison are evaluations of the same angles."""
    return 2 * (max_angle * (math.log(temperature) + roundings) + 2) * EPS[dtype]


def _detr(adapter, mask, dtype, convention="detr", normalize=True):
    return host(
        adapter.detr_sine_2d(
            mask,
            8,
            temperature=10000.0,
            temperature_height=None,
            temperature_width=None,
            normalize=normalize,
            scale=TWO_PI,
            convention=convention,
            dtype=dtype,
        )
    )


@invariant("vision_sine", "detr-padding-independence", "detr_sine_2d", seed=901)
def detr_padding(adapter, dtype, rng):
    """A 3 x 4 image padded (bottom, right) to 5 x 7 in a batch with a full image: its real pixels get the
    values of the 3 x 4 image alone, and the full image those of itself alone (DETR normalises each image
    by its own extent)."""
    padded = np.zeros((2, 5, 7), dtype=bool)
    padded[0] = True
    padded[1, :3, :4] = True
    batch = _detr(adapter, padded, dtype)
    alone = _detr(adapter, np.ones((1, 3, 4), dtype=bool), dtype)
    full = _detr(adapter, np.ones((1, 5, 7), dtype=bool), dtype)
    tol = _tol(dtype, TWO_PI)
    worst = expect_close(
        batch[1:, :, :3, :4], alone, tol, "the padded image's real pixels vs the image alone"
    )
    return max(worst, expect_close(batch[:1], full, tol, "the full image in the batch vs alone"))


@invariant("vision_sine", "detr-axis-separation", "detr_sine_2d", seed=902)
def detr_axes(adapter, dtype, rng):
    """Without padding, the y channels (first F) do not vary along a row and the x channels (last F) not
    along a column; unnormalised, the y block of an H x W image at row i is the x block of a W x H image
    at column i (the same 1-D sinusoid of the count i + 1)."""
    e = _detr(adapter, np.ones((1, 4, 6), dtype=bool), dtype, normalize=False)
    t = _detr(adapter, np.ones((1, 6, 4), dtype=bool), dtype, normalize=False)
    tol = _tol(dtype, 6.0)
    worst = expect_close(
        e[:, :8], np.broadcast_to(e[:, :8, :, :1], e[:, :8].shape), tol, "y block along a row"
    )
    worst = max(
        worst, expect_close(e[:, 8:], np.broadcast_to(e[:, 8:, :1, :], e[:, 8:].shape), tol, "x block")
    )
    return max(
        worst, expect_close(e[0, :8, :, 0], t[0, 8:, 0, :], tol, "y block of H x W vs x block of W x H")
    )


@invariant("vision_sine", "coord-sine-y-first", "detr_coord_sine", seed=903)
def coord_y_first(adapter, dtype, rng):
    """Conditional DETR's embedding of (x, y, w, h) is the single-coordinate embeddings of y, x, w, h
    concatenated (the swap, then one block per coordinate)."""
    boxes = (rng.integers(0, 65, size=(5, 4)) / 64).astype(dtype)

    def call(c):
        return host(
            adapter.detr_coord_sine(c, 16, temperature=10000.0, scale=TWO_PI, convention="conditional_detr")
        )

    whole = call(boxes)
    parts = [call(np.ascontiguousarray(boxes[:, j : j + 1])) for j in (1, 0, 2, 3)]
    return expect_close(whole, np.concatenate(parts, axis=-1), _tol(dtype, TWO_PI), "(x, y, w, h) vs y|x|w|h")


@invariant("vision_sine", "sincos-2d-axis-structure", "sincos_2d", seed=904)
def sincos_axes(adapter, dtype, rng):
    """rt_detr on a 5 x 3 grid: the h half of row (i, j) does not depend on j, and the w half of row (i, j)
    is the h half of row (j, 0): both halves are one 1-D sinusoid of their own axis."""
    h, w = 5, 3
    table = host(
        adapter.sincos_2d(
            ints(range(h)),
            ints(range(w)),
            16,
            temperature=10000.0,
            convention="rt_detr",
            cls_token=False,
            dtype=dtype,
        )
    ).reshape(h, w, 16)
    tol = _tol(dtype, float(h), roundings=4)
    worst = expect_close(
        table[:, :, :8], np.broadcast_to(table[:, :1, :8], (h, w, 8)), tol, "h half along a row"
    )
    return max(
        worst, expect_close(table[0, :, 8:], table[:w, 0, :8], tol, "w half of (i, j) vs h half of (j, 0)")
    )
