"""bbox_embedding and row_col_embedding against LayoutLM's, LayoutLMv2/v3's, Pix2Struct's and DETR's rules."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ref import COMBINE_MODES, bbox_embedding, row_col_embedding
from tests.conftest import UNREAD_ON_DASK
from tests.helpers import assert_close, floats, ints, to_numpy

RNG = np.random.default_rng(25)
X, Y, H, W = (RNG.integers(-128, 129, size=(16, 4)) / 64 for _ in range(4))
BOXES = [[[0, 0, 3, 5], [2, 7, 9, 15]], [[15, 15, 15, 15], [4, 0, 12, 8]]]


def layoutlm(boxes, clip=False, concat=False):
    out = []
    for x0, y0, x1, y1 in np.asarray(boxes).reshape(-1, 4):
        h, w = y1 - y0, x1 - x0
        if clip:
            h, w = min(max(h, 0), 15), min(max(w, 0), 15)
        parts = [X[x0], Y[y0], X[x1], Y[y1], H[h], W[w]]
        out.append(np.concatenate(parts) if concat else sum(parts))
    return np.asarray(out).reshape(*np.asarray(boxes).shape[:-1], -1)


def tables(xp, device=None):
    return [floats(xp, t, device) for t in (X, Y, H, W)]


class TestBboxEmbedding:
    def test_sum(self, xp, device):
        out = bbox_embedding(*tables(xp, device), ints(xp, BOXES, device))
        assert_close(out, layoutlm(BOXES), xp=xp, device=device, rtol=0, atol=1e-6)

    def test_concat(self, xp):
        out = bbox_embedding(*tables(xp), ints(xp, BOXES), combine="concat")
        assert_close(out, layoutlm(BOXES, concat=True), xp=xp, rtol=0, atol=0)

    def test_clip_shape(self, xp):
        boxes = [[9, 12, 3, 2], [0, 0, 15, 15]]  # negative height and width clip to 0
        out = bbox_embedding(*tables(xp), ints(xp, boxes), combine="concat", clip_shape=True)
        assert_close(out, layoutlm(boxes, clip=True, concat=True), xp=xp, rtol=0, atol=0)

    def test_additive_in_the_corner_terms(self, xp):
        zero = floats(xp, np.zeros((16, 4)))
        x, y = floats(xp, X), floats(xp, Y)
        a = to_numpy(bbox_embedding(x, y, zero, zero, ints(xp, [[1, 2, 5, 9], [3, 4, 8, 10]])))
        b = to_numpy(bbox_embedding(x, y, zero, zero, ints(xp, [[1, 4, 5, 10], [3, 2, 8, 9]])))
        np.testing.assert_allclose(a.sum(0), b.sum(0), atol=1e-6)

    def test_float32_tables_give_float32(self, xp):
        t = [floats(xp, v, dtype=xp.float32) for v in (X, Y, H, W)]
        assert bbox_embedding(*t, ints(xp, BOXES)).dtype == xp.float32

    @UNREAD_ON_DASK
    @pytest.mark.parametrize("box", [[0, 0, 16, 1], [5, 0, 2, 4], [0, 9, 1, 3]])
    def test_out_of_range(self, xp, box):
        with pytest.raises(ValueError, match=r"^bbox must"):
            bbox_embedding(*tables(xp), ints(xp, [box]))

    def test_invalid(self, xp):
        with pytest.raises(ValueError, match=r"^bbox must"):
            bbox_embedding(*tables(xp), ints(xp, [[1, 2, 3]]))
        with pytest.raises(TypeError, match=r"^bbox must"):
            bbox_embedding(*tables(xp), floats(xp, [[0.0, 0.0, 1.0, 1.0]]))
        with pytest.raises(ValueError, match=r"^combine must"):
            bbox_embedding(*tables(xp), ints(xp, BOXES), combine="mean")
        narrow = floats(xp, np.zeros((16, 2)))
        with pytest.raises(ValueError, match=r"^h_table must"):
            bbox_embedding(floats(xp, X), floats(xp, Y), narrow, floats(xp, W), ints(xp, BOXES))
        with pytest.raises(TypeError, match=r"^clip_shape must"):
            bbox_embedding(*tables(xp), ints(xp, BOXES), clip_shape=1)


class TestRowColEmbedding:
    R, C = RNG.integers(-128, 129, size=(6, 3)) / 64, RNG.integers(-128, 129, size=(7, 3)) / 64

    def test_sum_pix2struct(self, xp, device):
        rows, cols = [[1, 1, 2, 0]], [[1, 2, 1, 0]]
        out = row_col_embedding(
            floats(xp, self.R, device),
            floats(xp, self.C, device),
            ints(xp, rows, device),
            ints(xp, cols, device),
        )
        want = self.R[np.asarray(rows)] + self.C[np.asarray(cols)]
        assert_close(out, want, xp=xp, device=device, rtol=0, atol=1e-6)

    @pytest.mark.parametrize(("h", "w"), [(2, 3), (4, 2)])
    def test_concat_detr_grid(self, xp, h, w):
        rows, cols = np.indices((h, w))
        out = to_numpy(
            row_col_embedding(
                floats(xp, self.R), floats(xp, self.C), ints(xp, rows), ints(xp, cols), combine="concat"
            )
        )
        assert out.shape == (h, w, 6)
        for i in range(h):
            for j in range(w):  # DETR: cat(col_emb[j], row_emb[i])
                assert out[i, j].tolist() == [*self.C[j], *self.R[i]]

    @pytest.mark.parametrize("combine", COMBINE_MODES)
    def test_invalid(self, xp, combine):
        r, c = floats(xp, self.R), floats(xp, self.C)
        with pytest.raises(ValueError, match=r"^cols must"):
            row_col_embedding(r, c, ints(xp, [0, 1]), ints(xp, [0]), combine=combine)
        with pytest.raises(TypeError, match=r"^rows must"):
            row_col_embedding(r, c, floats(xp, [1.0]), ints(xp, [0]), combine=combine)

    @UNREAD_ON_DASK
    def test_index_past_the_table(self, xp):
        with pytest.raises(ValueError, match=r"^rows must"):
            row_col_embedding(floats(xp, self.R), floats(xp, self.C), ints(xp, [6]), ints(xp, [0]))

    def test_sum_needs_equal_widths(self, xp):
        with pytest.raises(ValueError, match=r"^col_table must"):
            row_col_embedding(floats(xp, self.R), floats(xp, np.ones((7, 2))), ints(xp, [0]), ints(xp, [0]))
