"""detr_sine_2d, detr_coord_sine and sincos_2d against plain-Python formulas and hand-derived values."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import (
    DETR_SINE_CONVENTIONS,
    SINCOS_2D_CONVENTIONS,
    _compat,
    detr_coord_sine,
    detr_sine_2d,
    sincos_2d,
)
from tests.helpers import assert_close, floats, ints, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily


def _pairs(value, feats, temperature):
    out = []
    for k in range(feats // 2):
        a = value / temperature ** (2 * k / feats)
        out += [math.sin(a), math.cos(a)]
    return out


def detr(mask, feats, *, t_h=10000.0, t_w=10000.0, normalize=True, scale=2 * math.pi, delta=0.0):
    """DETR's sine, element by element (facebookresearch/detr PositionEmbeddingSine)."""
    mask = np.asarray(mask, dtype=np.int64)
    b, h, w = mask.shape
    out = np.empty((b, 2 * feats, h, w))
    for n in range(b):
        ys, xs = np.cumsum(mask[n], axis=0), np.cumsum(mask[n], axis=1)
        for i in range(h):
            for j in range(w):
                y, x = float(ys[i, j]), float(xs[i, j])
                if normalize:
                    y = (y - delta) / (ys[-1, j] + 1e-6) * scale
                    x = (x - delta) / (xs[i, -1] + 1e-6) * scale
                out[n, :, i, j] = _pairs(y, feats, t_h) + _pairs(x, feats, t_w)
    return out


def sincos(h, w, dim, order="rt_detr", cls=False, temperature=10000.0):
    q = dim // 4
    omega = [1 / temperature ** (k / q) for k in range(q)]

    def axis(p):
        return [math.sin(p * o) for o in omega] + [math.cos(p * o) for o in omega]

    cells = [(i, j) for j in w for i in h] if order == "omdet_turbo" else [(i, j) for i in h for j in w]
    rows = [axis(i) + axis(j) if order == "rt_detr" else axis(j) + axis(i) for i, j in cells]
    return np.asarray(([[0.0] * dim] if cls else []) + rows)


def _tol(xp):
    wide = _compat.compute_dtype(xp)
    return wide, ({"rtol": 1e-12, "atol": 1e-12} if wide == xp.float64 else {"rtol": 1e-5, "atol": 2e-5})


MASK = [
    [[1, 1, 1, 1, 1, 1]] * 4,
    [[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 0, 0], [1, 1, 1, 0, 0, 0], [0, 0, 0, 0, 0, 0]],
]


class TestDetrSine2d:
    @pytest.mark.parametrize("convention", DETR_SINE_CONVENTIONS)
    def test_values_with_padding(self, xp, device, convention):
        mask = ints(xp, MASK, device) == 1
        out = detr_sine_2d(mask, 8, convention=convention)
        wide, tol = _tol(xp)
        delta = 0.5 if convention == "deformable_detr" else 0.0
        # the all-padding row and columns of image 2 give -0.5 / 1e-6 * 2 pi with the offset: compare the rest
        expected = detr(MASK, 8, delta=delta)
        got = to_numpy(out)
        assert got.shape == (2, 16, 4, 6)
        keep = np.asarray(MASK, dtype=bool)[:, None].repeat(16, axis=1) if delta else np.ones(got.shape, bool)
        np.testing.assert_allclose(got[keep], expected[keep], rtol=tol["rtol"], atol=tol["atol"])
        if not delta:
            assert_close(out, expected, xp=xp, dtype=wide, device=device, **tol)

    def test_hand_values(self, xp):
        # one real row of 2 pixels, F = 2: y = 1 / (1 + 1e-6) * 2 pi, x = (1, 2) / (2 + 1e-6) * 2 pi
        out = to_numpy(detr_sine_2d(ints(xp, [[[1, 1]]]), 2))
        y = 2 * math.pi / (1 + 1e-6)
        x = [2 * math.pi / (2 + 1e-6), 4 * math.pi / (2 + 1e-6)]
        want = [[math.sin(y)] * 2, [math.cos(y)] * 2, [math.sin(v) for v in x], [math.cos(v) for v in x]]
        tol = _tol(xp)[1]
        np.testing.assert_allclose(out[0, :, 0, :], want, atol=tol["atol"], rtol=0)
        assert abs(out[0, 3, 0, 1] - 1.0) < 1e-5  # cos of just under 2 pi

    def test_dab_temperatures_and_unnormalised(self, xp):
        mask = ints(xp, [[[1] * 5] * 3]) == 1
        out = detr_sine_2d(mask, 6, temperature_height=20.0, temperature_width=3.0, normalize=False)
        wide, tol = _tol(xp)
        assert_close(
            out, detr([[[1] * 5] * 3], 6, t_h=20.0, t_w=3.0, normalize=False), xp=xp, dtype=wide, **tol
        )

    def test_int_mask_equals_bool_mask_and_nonzero_counts_once(self, xp):
        ints_mask = ints(xp, [[[2, 5, 0], [1, 1, 0]]])
        bools = ints(xp, [[[1, 1, 0], [1, 1, 0]]]) == 1
        assert np.array_equal(to_numpy(detr_sine_2d(ints_mask, 4)), to_numpy(detr_sine_2d(bools, 4)))

    def test_dtype(self, xp):
        out = detr_sine_2d(ints(xp, [[[1, 1]]]), 4, dtype=xp.float32)
        assert out.dtype == xp.float32

    @pytest.mark.parametrize(
        ("kwargs", "error", "pattern"),
        [
            ({"num_position_features": 5}, ValueError, r"^num_position_features must be an even"),
            ({"temperature": 0.0}, ValueError, r"^temperature must be > 0"),
            ({"temperature_width": -1.0}, ValueError, r"^temperature_width must be > 0"),
            ({"scale": 0.0}, ValueError, r"^scale must be > 0"),
            ({"normalize": 1}, TypeError, r"^normalize must be True or False"),
            ({"convention": "detr_deformable"}, ValueError, r"^convention must be one of"),
        ],
    )
    def test_errors(self, xp, kwargs, error, pattern):
        with pytest.raises(error, match=pattern):
            detr_sine_2d(ints(xp, [[[1, 1]]]), **{"num_position_features": 4, **kwargs})

    def test_no_mask_is_the_all_ones_mask(self, xp, device):
        ones = detr_sine_2d(ints(xp, [[[1] * 5] * 3] * 2, device), 4, convention="deformable_detr")
        plain = detr_sine_2d(None, 4, shape=(2, 3, 5), xp=xp, device=device, convention="deformable_detr")
        assert_close(plain, to_numpy(ones), xp=xp, dtype=ones.dtype, device=device, rtol=0, atol=0)

    @pytest.mark.parametrize(
        ("shape", "error", "pattern"),
        [
            (None, TypeError, r"^shape must be a sequence \(B, H, W\)"),
            ((2, 3), ValueError, r"^shape must be a sequence"),
            ((2, 0, 3), ValueError, r"^shape must be a positive integer"),
            ((2, 3.0, 3), TypeError, r"^shape must be an integer"),
        ],
    )
    def test_shape_errors_without_a_mask(self, xp, shape, error, pattern):
        with pytest.raises(error, match=pattern):
            detr_sine_2d(None, 4, shape=shape, xp=xp)

    def test_mask_errors(self, xp):
        with pytest.raises(ValueError, match=r"^mask must be 3-dimensional"):
            detr_sine_2d(ints(xp, [[1, 1]]), 4)
        with pytest.raises(TypeError, match=r"^mask must be an array of a bool or integer dtype"):
            detr_sine_2d(floats(xp, [[[1.0]]]), 4)


class TestDetrCoordSine:
    def test_conditional_detr_swaps_x_and_y(self, xp, device):
        boxes = [[0.25, 0.75, 0.5, 0.125], [1.0, 0.0, 0.0625, 0.9375]]
        out = detr_coord_sine(floats(xp, boxes, device), 8)
        want = [[v for j in (1, 0, 2, 3) for v in _pairs(2 * math.pi * b[j], 8, 10000.0)] for b in boxes]
        wide, tol = _tol(xp)
        assert_close(out, want, xp=xp, dtype=wide, device=device, **tol)

    def test_deformable_proposals_take_the_sigmoid_in_order(self, xp):
        logits = [[[0.0, -1.5, 2.25, -8.0]]]
        out = detr_coord_sine(floats(xp, logits), 4, convention="deformable_detr")
        sig = [1 / (1 + math.exp(-v)) for v in logits[0][0]]
        want = [[[v for s in sig for v in _pairs(2 * math.pi * s, 4, 10000.0)]]]
        wide, tol = _tol(xp)
        assert_close(out, want, xp=xp, dtype=wide, **tol)
        # sigmoid(0) = 1/2: the first pair is sin(pi), cos(pi)
        assert np.allclose(to_numpy(out)[0, 0, :2], [0.0, -1.0], atol=1e-6)

    def test_hand_value_and_dtype_follows_input(self, xp):
        out = detr_coord_sine(floats(xp, [0.25, 0.5], dtype=xp.float32), 2)
        assert out.dtype == xp.float32
        np.testing.assert_allclose(to_numpy(out), [0.0, -1.0, 1.0, 0.0], atol=1e-6)

    def test_one_coordinate_is_not_swapped(self, xp):
        out = to_numpy(detr_coord_sine(floats(xp, [[3.0]]), 2, temperature=1.0, scale=1.0))
        np.testing.assert_allclose(out, [[math.sin(3.0), math.cos(3.0)]], atol=1e-6)

    @pytest.mark.parametrize(
        ("kwargs", "error", "pattern"),
        [
            ({"num_pos_feats": 3}, ValueError, r"^num_pos_feats must be an even"),
            ({"temperature": -2.0}, ValueError, r"^temperature must be > 0"),
            ({"convention": "dab_detr"}, ValueError, r"^convention must be one of"),
        ],
    )
    def test_errors(self, xp, kwargs, error, pattern):
        with pytest.raises(error, match=pattern):
            detr_coord_sine(floats(xp, [0.5, 0.5]), **{"num_pos_feats": 4, **kwargs})

    def test_integer_coordinates_are_refused(self, xp):
        with pytest.raises(TypeError, match=r"^coords must be an array of a real floating dtype"):
            detr_coord_sine(ints(xp, [1, 2]), 4)


class TestSincos2d:
    @pytest.mark.parametrize("convention", SINCOS_2D_CONVENTIONS)
    @pytest.mark.parametrize("cls", [False, True])
    def test_values_non_square(self, xp, device, convention, cls):
        h, w = [0, 1, 2], [0, 1, 2, 3, 4]
        out = sincos_2d(ints(xp, h, device), ints(xp, w, device), 16, convention=convention, cls_token=cls)
        wide, tol = _tol(xp)
        assert_close(out, sincos(h, w, 16, convention, cls), xp=xp, dtype=wide, device=device, **tol)

    def test_hand_values(self, xp):
        out = to_numpy(sincos_2d(ints(xp, [0]), ints(xp, [0, 1]), 4))
        np.testing.assert_allclose(out, [[0, 1, 0, 1], [0, 1, math.sin(1), math.cos(1)]], atol=1e-6)
        # omdet_turbo on a 2 x 1 grid: the w block (all zero) first, then h
        out = to_numpy(sincos_2d(ints(xp, [0, 1]), ints(xp, [0]), 4, convention="omdet_turbo"))
        np.testing.assert_allclose(out, [[0, 1, 0, 1], [0, 1, math.sin(1), math.cos(1)]], atol=1e-6)

    def test_conventions_agree_up_to_order_on_square_grids(self, xp):
        g = ints(xp, [0, 1, 2, 3])
        mae = to_numpy(sincos_2d(g, g, 8, convention="vit_mae"))
        omdet = to_numpy(sincos_2d(g, g, 8, convention="omdet_turbo"))
        rt = to_numpy(sincos_2d(g, g, 8))
        np.testing.assert_allclose(omdet, rt, atol=1e-6)  # both [a | b] for row a n + b
        np.testing.assert_allclose(mae, np.concatenate([rt[:, 4:], rt[:, :4]], axis=1), atol=1e-6)

    def test_offset_block_of_a_larger_grid(self, xp):
        big = to_numpy(sincos_2d(ints(xp, range(6)), ints(xp, range(7)), 8)).reshape(6, 7, 8)
        part = to_numpy(sincos_2d(ints(xp, [3, 4, 5]), ints(xp, [2, 3]), 8)).reshape(3, 2, 8)
        np.testing.assert_allclose(part, big[3:, 2:4], atol=1e-6)

    @pytest.mark.parametrize(
        ("kwargs", "error", "pattern"),
        [
            ({"dim": 6}, ValueError, r"^dim must be a positive multiple of 4"),
            ({"temperature": 0.0}, ValueError, r"^temperature must be > 0"),
            ({"convention": "mae"}, ValueError, r"^convention must be one of"),
            ({"cls_token": None}, TypeError, r"^cls_token must be True or False"),
        ],
    )
    def test_errors(self, xp, kwargs, error, pattern):
        with pytest.raises(error, match=pattern):
            sincos_2d(ints(xp, [0, 1]), ints(xp, [0]), **{"dim": 8, **kwargs})

    def test_position_errors(self, xp):
        with pytest.raises(ValueError, match=r"^w_positions must be 1-dimensional"):
            sincos_2d(ints(xp, [0]), ints(xp, [[0, 1]]), 8)
        with pytest.raises(TypeError, match=r"^h_positions must be"):
            sincos_2d(floats(xp, [0.0]), ints(xp, [0]), 8)


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    tol = _tol(xp)[1]
    out = run_lazily(library, lambda m: detr_sine_2d(m, 4), ints(xp, MASK[1:]))
    assert_close(out, detr(MASK[1:], 4), xp=xp, **tol)
    out = run_lazily(library, lambda a, b: sincos_2d(a, b, 8), ints(xp, [0, 1]), ints(xp, [0, 1, 2]))
    assert_close(out, sincos([0, 1], [0, 1, 2], 8), xp=xp, **tol)
