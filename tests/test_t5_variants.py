"""The T5-bucket variants (LayoutLM, UDOP, WavLM, ProphetNet, CPM-Ant) against hand-derived values and the
oracle's loops."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import (
    _compat,
    t5_gated_bias,
    t5_layout_bias,
    t5_segment_bias,
    t5_stream_buckets,
    t5_udop_bias,
)
from tests.helpers import assert_close, assert_equal, float_dtype, floats, ints, to_numpy

oracle = pytest.importorskip(
    "posenc_ref_conformance.oracle", reason="mpmath (the test extra) is not installed", exc_type=ImportError
)


def rows_table(rows, heads=2, step=1.0):
    """Row r, head h holds (r + 1) * step * (-1)**h / 2**h: distinct, exact in float32."""
    return np.stack([(np.arange(rows) + 1.0) * step * (-1.0) ** h / 2.0**h for h in range(heads)], axis=1)


def as_float(nested):
    return np.asarray([[[float(v) for v in row] for row in head] for head in nested])


BOXES = np.asarray([[0, 900, 40, 910], [12, 20, 60, 400], [100, 300, 140, 330], [1000, 40, 1000, 980]])


class TestLayoutBias:
    def test_against_the_oracle(self, xp, device):
        pos = np.asarray([2, 3, 4, 5])
        t, tx, ty = rows_table(32), rows_table(64, step=64.0), rows_table(64, step=4096.0)
        for head_dim in (None, 64):
            out = t5_layout_bias(
                ints(xp, pos, device),
                ints(xp, BOXES, device),
                *(floats(xp, a, device) for a in (t, tx, ty)),
                head_dim=head_dim,
            )
            with oracle.working_precision():
                expected = as_float(
                    oracle.t5.layout_bias(
                        pos.tolist(),
                        BOXES.tolist(),
                        t.tolist(),
                        tx.tolist(),
                        ty.tolist(),
                        max_rel_pos=128,
                        max_rel_2d_pos=256,
                        head_dim=head_dim,
                    )
                )
            assert_equal(out, expected, xp=xp, dtype=float_dtype(xp, device), device=device)

    def test_bottom_edge_not_top(self, xp):
        # equal bottom edges: y's term is the table's bucket-0 row; top edges 0 and 480 change nothing
        box = np.asarray([[0, 0, 10, 500], [0, 480, 10, 500]])
        zero = np.zeros((64, 1))
        out = to_numpy(
            t5_layout_bias(
                ints(xp, [0, 0]),
                ints(xp, box),
                floats(xp, np.zeros((32, 1))),
                floats(xp, zero),
                floats(xp, rows_table(64, 1)),
            )
        )
        assert (out == 1.0).all()  # row 0 holds 1: bucket 0 everywhere

    def test_hand_derived_scale(self, xp):
        # 1-D distance +1 is bucket 17 (row 17 holds 18); x distance +300 saturates at bucket 63
        # (row 63 holds 64 * 64)
        box = np.asarray([[0, 0, 5, 10], [300, 0, 305, 10]])
        out = to_numpy(
            t5_layout_bias(
                ints(xp, [0, 1]),
                ints(xp, box),
                floats(xp, rows_table(32, 1)),
                floats(xp, rows_table(64, 1, 64.0)),
                floats(xp, np.zeros((64, 1))),
                head_dim=16,
            )
        )
        assert out[0, 0, 1] == (64 * 64 + 18) / 4
        assert out[0, 0, 0] == (64 + 1) / 4  # bucket 0 of both tables

    def test_float32_keeps_dtype(self, xp):
        tables = [floats(xp, rows_table(n), dtype=xp.float32) for n in (32, 64, 64)]
        out = t5_layout_bias(ints(xp, [0, 1, 2, 3]), ints(xp, BOXES), *tables, head_dim=12)
        assert out.dtype == xp.float32

    def test_errors(self, xp):
        t, tx = floats(xp, rows_table(32)), floats(xp, rows_table(64))
        with pytest.raises(ValueError, match=r"^bbox must"):
            t5_layout_bias(ints(xp, [0, 1]), ints(xp, [[0, 0, 1], [1, 1, 2]]), t, tx, tx)
        with pytest.raises(ValueError, match=r"^y_table must"):
            t5_layout_bias(ints(xp, [0, 1]), ints(xp, BOXES[:2]), t, tx, t)
        with pytest.raises(TypeError, match=r"^positions must"):
            t5_layout_bias(floats(xp, [0.0, 1.0]), ints(xp, BOXES[:2]), t, tx, tx)
        with pytest.raises(ValueError, match=r"^max_rel_2d_pos must"):
            t5_layout_bias(ints(xp, [0, 1]), ints(xp, BOXES[:2]), t, tx, tx, max_rel_2d_pos=8)
        with pytest.raises(ValueError, match=r"^head_dim must"):
            t5_layout_bias(ints(xp, [0, 1]), ints(xp, BOXES[:2]), t, tx, tx, head_dim=0)


class TestUdopBias:
    BOX = np.asarray([[0, 0, 8, 4], [2, 1, 10, 6], [30, 2, 40, 8], [60, 40, 64, 44], [1, 60, 3, 64]]) / 64

    def test_against_the_oracle(self, xp, device):
        for prefix in (False, True):
            box = self.BOX.copy()
            if prefix:
                box[:2, 1] = -1.0
            rows = 34 if prefix else 32
            t, tx, ty = rows_table(rows), rows_table(rows, step=64.0), rows_table(rows, step=4096.0)
            out = t5_udop_bias(*(floats(xp, a, device) for a in (box, t, tx, ty)), prefix_buckets=prefix)
            with oracle.working_precision():
                expected = as_float(
                    oracle.t5.udop_bias(
                        box.tolist(),
                        t.tolist(),
                        tx.tolist(),
                        ty.tolist(),
                        max_distance=128,
                        max_distance_2d=100,
                        scaling_factor=100.0,
                        prefix_buckets=prefix,
                    )
                )
            assert_equal(out, expected, xp=xp, dtype=float_dtype(xp, device), device=device)

    def test_truncation_toward_zero(self, xp):
        # centres 1/128 apart: 100 d = +-0.78 -> distance 0 both ways (floor would give -1: bucket 1)
        box = np.asarray([[0.0, 0.0, 0.0, 0.0], [1 / 64, 0.0, 1 / 64, 0.0]]) / 2 * 2
        box[1, 0], box[1, 2] = 0.0, 1 / 64
        out = to_numpy(
            t5_udop_bias(
                floats(xp, box),
                floats(xp, np.zeros((32, 1))),
                floats(xp, rows_table(32, 1)),
                floats(xp, np.zeros((32, 1))),
            )
        )
        assert (out == 1.0).all()

    def test_prefix_rows(self, xp):
        box = self.BOX.copy()
        box[:2, 1] = -1.0
        zero = np.zeros((34, 1))
        out = to_numpy(
            t5_udop_bias(
                floats(xp, box),
                floats(xp, rows_table(34, 1)),
                floats(xp, zero),
                floats(xp, zero),
                prefix_buckets=True,
            )
        )[0]
        assert (out[:2, 2:] == 33).all() and (out[2:, :2] == 34).all()
        assert out[0, 1] == 18 and out[1, 0] == 2  # prefix-prefix pairs keep the buckets of +1 and -1

    def test_errors(self, xp):
        t = floats(xp, rows_table(32))
        with pytest.raises(ValueError, match=r"^scaling_factor must"):
            t5_udop_bias(floats(xp, self.BOX), t, t, t, scaling_factor=0.0)
        with pytest.raises(TypeError, match=r"^bbox must"):
            t5_udop_bias(ints(xp, [[0, 0, 1, 1]]), t, t, t)
        if _compat.values_known(t):  # lazy backends: values are not read back
            with pytest.raises(ValueError, match=r"^bbox must"):
                t5_udop_bias(floats(xp, [[0.0, np.nan, 1.0, 1.0]]), t, t, t)
        with pytest.raises(ValueError, match=r"^table.shape\[0\] - 2"):
            t5_udop_bias(floats(xp, self.BOX), floats(xp, rows_table(4)), t, t, prefix_buckets=True)


class TestGatedBias:
    def test_against_the_oracle(self, xp, device):
        rng = np.random.default_rng(5)
        hidden = rng.integers(-64, 65, size=(2, 7, 4)) / 64
        weight, bias = rng.integers(-64, 65, size=(8, 4)) / 128, rng.integers(-64, 65, size=8) / 64
        const, table = np.asarray([0.75, -1.5]), rows_table(320)
        arrays = (hidden, table, weight, bias, const)
        out = t5_gated_bias(*(floats(xp, a, device) for a in arrays))
        with oracle.working_precision():
            expected = as_float(oracle.t5.gated_bias(*(a.tolist() for a in arrays), max_distance=800))
        dtype = float_dtype(xp, device)
        assert_close(out, expected, xp=xp, dtype=dtype, device=device, atol=64 * float(xp.finfo(dtype).eps))

    def test_zero_state_gate(self, xp):
        out = to_numpy(
            t5_gated_bias(
                floats(xp, np.zeros((1, 3, 4))),
                floats(xp, rows_table(320, 1)),
                floats(xp, np.zeros((8, 4))),
                floats(xp, np.zeros(8)),
                floats(xp, np.ones(1)),
            )
        )
        # a = b = 1/2, c = 1: gate 1.75; distance 0 reads row 0 (1.0), +1 row 161 (162.0)
        assert out[0, 0, 0] == 1.75 and out[0, 0, 1] == 1.75 * 162

    def test_errors(self, xp):
        h, t = floats(xp, np.zeros((2, 3, 4))), floats(xp, rows_table(320))
        w, b, c = floats(xp, np.zeros((8, 4))), floats(xp, np.zeros(8)), floats(xp, np.ones(2))
        with pytest.raises(ValueError, match=r"^gate_weight must"):
            t5_gated_bias(h, t, floats(xp, np.zeros((4, 4))), b, c)
        with pytest.raises(ValueError, match=r"^hidden must"):
            t5_gated_bias(floats(xp, np.zeros((3, 3, 4))), t, w, b, c)
        with pytest.raises(ValueError, match=r"^gate_const must"):
            t5_gated_bias(h, t, w, b, floats(xp, np.ones(3)))


class TestStreamBuckets:
    def test_against_the_oracle(self, xp, device):
        pos = [0, 1, 15, 16, 17, 100, 113, 114, 250]
        main, predict = t5_stream_buckets(ints(xp, pos, device))
        m, p = oracle.t5.stream_buckets(pos, num_buckets=32, max_distance=128)
        assert_equal(main, np.asarray(m), xp=xp, dtype=xp.int64, device=device)
        assert_equal(predict, np.asarray(p), xp=xp, dtype=xp.int64, device=device)

    def test_hand_derived(self, xp):
        main, predict = t5_stream_buckets(ints(xp, [5, 6]))
        assert to_numpy(main).tolist() == [[0, 0], [1, 0]]
        # keys [4, 5, 5, 6]: query 5 sees 4 at distance 1, query 6 sees 4 at distance 2
        assert to_numpy(predict).tolist() == [[1, 0, 0, 0], [2, 1, 1, 0]]

    def test_errors(self, xp):
        with pytest.raises(ValueError, match=r"^num_buckets must"):
            t5_stream_buckets(ints(xp, [0, 1]), num_buckets=1)
        with pytest.raises(TypeError, match=r"^positions must"):
            t5_stream_buckets(floats(xp, [0.0, 1.0]))


class TestSegmentBias:
    def test_against_the_oracle(self, xp, device):
        q, k = [0, 1, 2, 3, 9], [0, 2, 4, 6, 8, 300]
        qs, ks = [0, 1, 2, 2, 1], [1, 1, 2, 0, 2, 2]
        table = rows_table(32 + 9)
        out = t5_segment_bias(
            *(ints(xp, a, device) for a in (q, k, qs, ks)),
            floats(xp, table, device),
            num_segments=3,
            max_distance=128,
        )
        expected = as_float(
            oracle.t5.segment_bias(q, k, qs, ks, table.tolist(), num_segments=3, max_distance=128)
        )
        assert_equal(out, expected, xp=xp, dtype=float_dtype(xp, device), device=device)

    def test_hand_derived(self, xp):
        p, s = ints(xp, [0, 1, 2]), ints(xp, [0, 1, 1])
        out = to_numpy(
            t5_segment_bias(
                p, p, s, s, floats(xp, np.arange(36.0)[:, None]), num_segments=2, max_distance=128
            )
        )[0]
        assert out.tolist() == [[0.0, 33.0, 33.0], [34.0, 0.0, 17.0], [34.0, 1.0, 0.0]]

    def test_errors(self, xp):
        p, t = ints(xp, [0, 1]), floats(xp, rows_table(36))
        if _compat.values_known(t):  # lazy backends: values are not read back
            with pytest.raises(ValueError, match=r"^q_segments must"):
                t5_segment_bias(p, p, ints(xp, [0, 2]), ints(xp, [0, 1]), t, num_segments=2, max_distance=128)
        with pytest.raises(ValueError, match=r"^k_segments must"):
            t5_segment_bias(p, p, ints(xp, [0, 1]), ints(xp, [0, 1, 1]), t, num_segments=2, max_distance=128)
        with pytest.raises(ValueError, match=r"^table.shape\[0\] - num_segments"):
            t5_segment_bias(p, p, p, p, floats(xp, rows_table(6)), num_segments=2, max_distance=128)


def test_sqrt_head_dim_is_the_float_division(xp):
    """head_dim 12: the sum divided by the float sqrt(12), as LayoutLMv3's div_(math.sqrt(...))."""
    out = to_numpy(
        t5_layout_bias(
            ints(xp, [0]),
            ints(xp, [[0, 0, 0, 0]]),
            floats(xp, rows_table(32, 1)),
            floats(xp, np.zeros((64, 1))),
            floats(xp, np.zeros((64, 1))),
            head_dim=12,
        )
    )
    assert out[0, 0, 0] == 1.0 / math.sqrt(12)
