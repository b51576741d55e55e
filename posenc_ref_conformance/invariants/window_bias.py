"""Windowed 2-D relative-position invariants: Toeplitz-block-Toeplitz index, centre row, table rows;
Swin-V2 coordinate symmetry; decomposed terms shift-invariant and separable."""

from __future__ import annotations

import numpy as np

from .core import expect_close, expect_true, host, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}
_WINDOW = (3, 4)  # non-square: the row stride 2Ww - 1 = 7 differs from 2Wh - 1 = 5


def _rows(wh: int, ww: int) -> int:
    return (2 * wh - 1) * (2 * ww - 1)


def _index_table(rows: int, dtype: str) -> np.ndarray:
    """Two heads: row r holds r (head 0) and -r (head 1), so the bias reads back the index."""
    r = np.arange(rows, dtype=np.float64)
    return np.stack([r, -r], axis=1).astype(dtype)


@invariant("window_bias", "toeplitz-block-toeplitz", "window_bias", seed=801)
def window_shift(adapter, dtype, rng):
    """Shifting query and key token by the same (dh, dw) inside the window keeps the bias."""
    wh, ww = _WINDOW
    b = host(adapter.window_bias(_index_table(_rows(wh, ww), dtype), list(_WINDOW), cls_token=False))
    grid = b.reshape(2, wh, ww, wh, ww)
    worst = expect_close(grid[:, 1:, :, 1:, :], grid[:, :-1, :, :-1, :], 0.0, "shift by (1, 0)")
    worst = max(worst, expect_close(grid[:, :, 1:, :, 1:], grid[:, :, :-1, :, :-1], 0.0, "shift by (0, 1)"))
    return max(worst, expect_close(grid[1], -grid[0], 0.0, "head 1 is the table's second column"))


@invariant("window_bias", "centre-row-and-table-rows", "window_bias", seed=802)
def window_rows(adapter, dtype, rng):
    """idx(a, a) is the centre row; every entry is a table row and every row is used; BEiT's cls rows."""
    wh, ww = _WINDOW
    rows = _rows(wh, ww)
    b = host(adapter.window_bias(_index_table(rows, dtype), list(_WINDOW), cls_token=False))[0]
    centre = (wh - 1) * (2 * ww - 1) + (ww - 1)
    expect_true(np.diagonal(b) == centre, "idx(a, a) = (Wh - 1)(2Ww - 1) + Ww - 1")
    expect_true(np.isin(b, np.arange(rows)), "every entry is a row of the table")
    expect_true(np.isin(np.arange(rows), b), "every offset row is used")
    c = host(adapter.window_bias(_index_table(rows + 3, dtype), list(_WINDOW), cls_token=True))[0]
    expect_true(c[0, 1:] == rows, "cls -> token is row R")
    expect_true(c[1:, 0] == rows + 1, "token -> cls is row R + 1")
    expect_true(c[0, 0] == rows + 2, "cls -> cls is row R + 2")
    return expect_close(c[1:, 1:], b, 0.0, "the patch block of the cls layout")


@invariant("window_bias", "swinv2-odd-monotone", "swinv2_log_coords", seed=803)
def swinv2_symmetry(adapter, dtype, rng):
    """Odd in the offset, increasing, 0 at offset 0, +-log2(9)/3 at the window's edge, each axis alone."""
    wh, ww = _WINDOW
    c = host(adapter.swinv2_log_coords([wh, ww], pretrained_window_size=[], dtype=dtype))
    tol = 8 * EPS[dtype]
    worst = expect_close(c[::-1, ::-1], -c, tol, "c(-d) = -c(d)")
    worst = max(
        worst, expect_close(c[:, :, 0], np.broadcast_to(c[:, :1, 0], c.shape[:2]), 0.0, "dh ignores dw")
    )
    worst = max(
        worst, expect_close(c[:, :, 1], np.broadcast_to(c[:1, :, 1], c.shape[:2]), 0.0, "dw ignores dh")
    )
    expect_true(np.diff(c[:, 0, 0]) > 0, "increasing in dh")
    expect_true(np.diff(c[0, :, 1]) > 0, "increasing in dw")
    edge = np.log2(9.0) / 3.0
    worst = max(worst, expect_close(c[-1, -1], [edge, edge], tol, "offset Wh - 1, Ww - 1 maps to log2(9)/3"))
    return max(worst, expect_close(c[wh - 1, ww - 1], [0.0, 0.0], 0.0, "offset 0 maps to 0"))


def _dot_bound(width: int, dtype: str) -> float:
    """The golden cases' error bound of one entry, |q| <= 2 and |T| <= 2: 2 (C + 2) u C 2 (2 + 2)."""
    return 2 * (width + 2) * EPS[dtype] * width * 2 * 4


def _constant_query(rng: np.random.Generator, qh: int, qw: int, width: int, dtype: str) -> np.ndarray:
    vector = rng.integers(-32, 33, size=width) / 16.0
    return np.broadcast_to(vector, (1, qh, qw, width)).astype(dtype)


@invariant("window_bias", "decomposed-shift", "decomposed_rel_pos", seed=804)
def decomposed_shift(adapter, dtype, rng):
    """Equal grids, the same query everywhere: shifting query and key together leaves every term."""
    qh, qw, width = 4, 5, 3
    th = (rng.integers(-64, 65, size=(2 * qh - 1, width)) / 32.0).astype(dtype)
    tw = (rng.integers(-64, 65, size=(2 * qw - 1, width)) / 32.0).astype(dtype)
    out = host(
        adapter.decomposed_rel_pos(
            _constant_query(rng, qh, qw, width, dtype), th, tw, k_size=[qh, qw], coords="float32"
        )
    )[0]
    # each entry is two dot products of C terms, |q| <= 2, |T| <= 2: the golden cases' model
    # 2 (C + 2) u C max|q| (max|Th| + max|Tw|) = 16 (C + 2) C u per entry, twice for a difference
    tol = 2 * _dot_bound(width, dtype)
    worst = expect_close(out[1:, :, 1:, :], out[:-1, :, :-1, :], tol, "shift by (1, 0)")
    return max(worst, expect_close(out[:, 1:, :, 1:], out[:, :-1, :, :-1], tol, "shift by (0, 1)"))


@invariant("window_bias", "decomposed-separable", "decomposed_rel_pos", seed=805)
def decomposed_separable(adapter, dtype, rng):
    """out[y, x, ky, kx] = rel_h[y, x, ky] + rel_w[y, x, kx]: every mixed second difference is 0."""
    qh, qw, kh, kw, width = 3, 2, 3, 4, 3
    q = (rng.integers(-32, 33, size=(2, qh, qw, width)) / 16.0).astype(dtype)
    th = (rng.integers(-64, 65, size=(2 * max(qh, kh) - 1, width)) / 32.0).astype(dtype)
    tw = (rng.integers(-64, 65, size=(2 * max(qw, kw) - 1, width)) / 32.0).astype(dtype)
    out = host(adapter.decomposed_rel_pos(q, th, tw, k_size=[kh, kw], coords="float32"))
    mixed = out - out[..., :1] - out[..., :1, :] + out[..., :1, :1]
    return expect_close(
        mixed, np.zeros_like(mixed), 4 * _dot_bound(width, dtype), "mixed difference (four entries)"
    )
