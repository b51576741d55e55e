"""window_bias, swinv2_log_coords and decomposed_rel_pos against hand-derived values and Python loops."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from posenc_ref import DECOMPOSED_COORDS, decomposed_rel_pos, swinv2_log_coords, window_bias
from tests.helpers import assert_close, assert_equal, float_dtype, floats, to_numpy


def swin_index(wh, ww):
    """Swin's relative_position_index by loops over (h, w) pairs (row-major tokens)."""
    tokens = [(h, w) for h in range(wh) for w in range(ww)]
    return np.asarray(
        [[(ha - hb + wh - 1) * (2 * ww - 1) + (wa - wb + ww - 1) for hb, wb in tokens] for ha, wa in tokens]
    )


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def sam_index_float32(q, k):
    """segment_anything get_rel_pos's coordinate: float32 ops, then .long() (truncation)."""
    sq, sk, c = f32(max(k / q, 1.0)), f32(max(q / k, 1.0)), f32((k - 1) * max(q / k, 1.0))
    return np.asarray([[int(f32(f32(f32(i * sq) - f32(j * sk)) + c)) for j in range(k)] for i in range(q)])


def table_of(rows, heads=2):
    """Row r holds (r, -r / 2, ...): distinct, exact in float32."""
    return np.stack([np.arange(rows) * (1.0 if h == 0 else -(0.5**h)) for h in range(heads)], axis=1)


class TestWindowBias:
    @pytest.mark.parametrize("window", [(2, 2), (2, 3), (3, 2), (1, 4), (4, 4)])
    def test_gather_of_the_swin_index(self, xp, device, window):
        wh, ww = window
        table = table_of((2 * wh - 1) * (2 * ww - 1))
        out = window_bias(floats(xp, table, device), window)
        index = swin_index(wh, ww)
        expected = np.stack([table[index, h] for h in range(2)])
        assert_equal(out, expected, xp=xp, dtype=float_dtype(xp, device), device=device)

    def test_hand_derived_2x3(self, xp):
        # token 0 = (0, 0), token 5 = (1, 2): idx(0, 5) = (0 - 1 + 1) * 5 + (0 - 2 + 2) = 0,
        # idx(5, 0) = (1 + 1) * 5 + (2 + 2) = 14 (the last row), idx(a, a) = 1 * 5 + 2 = 7 (the centre)
        out = to_numpy(window_bias(floats(xp, table_of(15, 1)), (2, 3)))[0]
        assert out[0, 5] == 0 and out[5, 0] == 14
        assert (np.diagonal(out) == 7).all()

    def test_beit_cls_rows(self, xp, device):
        table = table_of(9 + 3)
        out = to_numpy(window_bias(floats(xp, table, device), 2, cls_token=True))
        assert out.shape == (2, 5, 5)
        assert (out[0, 0, 1:] == 9).all() and (out[0, 1:, 0] == 10).all() and out[0, 0, 0] == 11
        np.testing.assert_array_equal(out[:, 1:, 1:], to_numpy(window_bias(floats(xp, table[:9]), 2)))

    def test_dtype_follows_the_table(self, xp):
        out = window_bias(floats(xp, table_of(9), dtype=xp.float32), (2, 2))
        assert out.dtype == xp.float32

    def test_wrong_rows_name_the_table_and_the_rows_expected(self, xp):
        with pytest.raises(
            ValueError, match=r"^table must be of 15 = \(2Wh - 1\)\(2Ww - 1\) rows .*got shape \(9, 2\)"
        ):
            window_bias(floats(xp, table_of(9)), (2, 3))
        with pytest.raises(ValueError, match=r"^table must be of 12 = .* \+ 3 rows"):
            window_bias(floats(xp, table_of(9)), 2, cls_token=True)

    @pytest.mark.parametrize(
        ("window", "error", "match"),
        [
            ((0, 2), ValueError, "^window_size must be sides in"),
            ((2, 2, 2), ValueError, "^window_size must be an int"),
            (2.0, TypeError, "^window_size must be an int"),
            ((2, True), TypeError, "^window_size must be"),
        ],
    )
    def test_bad_windows(self, xp, window, error, match):
        with pytest.raises(error, match=match):
            window_bias(floats(xp, table_of(9)), window)

    def test_integer_table_and_bad_cls(self, xp):
        with pytest.raises(TypeError, match=r"^table must be"):
            window_bias(xp.asarray([[1]] * 9), 2)
        with pytest.raises(TypeError, match=r"^cls_token must be"):
            window_bias(floats(xp, table_of(9)), 2, cls_token=1)


def log_coords(side, norm):
    return [
        math.copysign(math.log2(1 + abs(8 * d / (norm - 1))) / 3, d) if d else 0.0
        for d in range(1 - side, side)
    ]


class TestSwinv2LogCoords:
    @pytest.mark.parametrize(("window", "pretrained"), [((4, 4), None), ((3, 5), None), ((8, 6), (4, 3))])
    def test_values(self, xp, device, window, pretrained):
        out = swinv2_log_coords(window, pretrained_window_size=pretrained, xp=xp, device=device)
        norm = pretrained or window
        h, w = log_coords(window[0], norm[0]), log_coords(window[1], norm[1])
        expected = np.stack(np.broadcast_arrays(np.asarray(h)[:, None], np.asarray(w)[None, :]), axis=-1)
        assert_close(out, expected, xp=xp, dtype=float_dtype(xp, device), device=device)

    def test_hand_values_at_the_edge(self, xp):
        # offset +-(W - 1) over W - 1 is +-8: log2(9) / 3 = 1.05664...; axis 0 is dh
        out = to_numpy(swinv2_log_coords((2, 3), xp=xp))
        assert out.shape == (3, 5, 2)
        assert out[2, 0, 0] == pytest.approx(math.log2(9) / 3) and out[2, 0, 1] == pytest.approx(
            -math.log2(9) / 3
        )

    def test_float32(self, xp):
        out = swinv2_log_coords(4, dtype=xp.float32, xp=xp)
        assert out.dtype == xp.float32

    @pytest.mark.parametrize(
        ("window", "pretrained", "name"),
        [
            ((1, 1), None, "window_size"),
            ((4, 1), None, "window_size"),
            ((1, 4), None, "window_size"),
            ((4, 4), (1, 4), "pretrained_window_size"),
            ((4, 4), 0, "pretrained_window_size must be None or"),
        ],
    )
    def test_a_side_of_one_divides_by_zero(self, xp, window, pretrained, name):
        match = name if " " in name else f"{name} must be sides >= 2"
        with pytest.raises(ValueError, match=f"^{match}"):
            swinv2_log_coords(window, pretrained_window_size=pretrained, xp=xp)

    def test_a_side_of_one_is_fine_with_a_pretrained_window(self, xp):
        out = to_numpy(swinv2_log_coords((1, 4), pretrained_window_size=(4, 4), xp=xp))
        assert out.shape == (1, 7, 2) and (out[..., 0] == 0).all()


def decomposed_loops(q, th, tw, k_size, index):
    *lead, qh, qw, _ = q.shape
    kh, kw = k_size
    ih, iw = index(qh, kh), index(qw, kw)
    out = np.zeros((*lead, qh, qw, kh, kw))
    for y in range(qh):
        for x in range(qw):
            for a in range(kh):
                for b in range(kw):
                    out[..., y, x, a, b] = q[..., y, x, :] @ th[ih[y, a]] + q[..., y, x, :] @ tw[iw[x, b]]
    return out


def exact_index(q, k):
    return np.asarray([[(i * k + (k - 1 - j) * q) // min(q, k) for j in range(k)] for i in range(q)])


class TestDecomposedRelPos:
    @pytest.mark.parametrize(
        ("q_size", "k_size"), [((3, 3), (3, 3)), ((2, 4), (2, 4)), ((8, 3), (6, 3)), ((2, 2), (4, 4))]
    )
    @pytest.mark.parametrize("coords", DECOMPOSED_COORDS)
    def test_against_loops(self, xp, device, q_size, k_size, coords):
        rng = np.random.default_rng(5)
        q = rng.integers(-16, 17, size=(2, *q_size, 3)) / 8.0
        th = rng.integers(-16, 17, size=(2 * max(q_size[0], k_size[0]) - 1, 3)) / 8.0
        tw = rng.integers(-16, 17, size=(2 * max(q_size[1], k_size[1]) - 1, 3)) / 8.0
        out = decomposed_rel_pos(
            floats(xp, q, device),
            floats(xp, th, device),
            floats(xp, tw, device),
            k_size=k_size,
            coords=coords,
        )
        index = sam_index_float32 if coords == "float32" else exact_index
        assert_close(
            out,
            decomposed_loops(q, th, tw, k_size, index),
            xp=xp,
            dtype=float_dtype(xp, device),
            device=device,
        )

    def test_float32_coordinate_is_one_row_below_the_floor_at_8_over_6(self):
        f, e = sam_index_float32(8, 6), exact_index(8, 6)
        assert (e - f >= 0).all() and (e - f <= 1).all() and int((f != e).sum()) == 8

    def test_equal_sizes_are_i_minus_j_plus_k_minus_1(self):
        i, j = np.arange(5)[:, None], np.arange(5)[None, :]
        np.testing.assert_array_equal(sam_index_float32(5, 5), i - j + 4)
        np.testing.assert_array_equal(exact_index(5, 5), i - j + 4)

    def test_hand_value(self, xp):
        q = floats(xp, [[[1.0, 2.0]]])
        th, tw = floats(xp, [[1.0, 0.0]]), floats(xp, [[0.0, 1.0], [1.0, 1.0], [2.0, 0.0]])
        # rel_h = q . th[0] = 1; rel_w rows 1 - j: q . tw[1] = 3, q . tw[0] = 2
        np.testing.assert_array_equal(
            to_numpy(decomposed_rel_pos(q, th, tw, k_size=(1, 2))), [[[[4.0, 3.0]]]]
        )

    def test_wrong_table_length_names_the_table_and_rows(self, xp):
        q = floats(xp, np.ones((1, 3, 3, 2)))
        with pytest.raises(
            ValueError,
            match=r"^rel_pos_h must be of shape \(5, 2\): 2 max\(q, k\) - 1 rows .*got shape \(7, 2\)",
        ):
            decomposed_rel_pos(q, floats(xp, np.ones((7, 2))), floats(xp, np.ones((5, 2))), k_size=3)
        with pytest.raises(ValueError, match=r"^rel_pos_w must be of shape \(9, 2\)"):
            decomposed_rel_pos(q, floats(xp, np.ones((5, 2))), floats(xp, np.ones((5, 2))), k_size=(3, 5))

    def test_bad_arguments(self, xp):
        q, t = floats(xp, np.ones((1, 3, 3, 2))), floats(xp, np.ones((5, 2)))
        with pytest.raises(ValueError, match=r"^coords must be"):
            decomposed_rel_pos(q, t, t, k_size=3, coords="float16")
        with pytest.raises(ValueError, match=r"^query must be at least 3-dimensional"):
            decomposed_rel_pos(floats(xp, np.ones((3, 2))), t, t, k_size=3)
        with pytest.raises(TypeError, match=r"^k_size must be"):
            decomposed_rel_pos(q, t, t, k_size=3.0)
