"""T5 invariants: bucket range, monotonicity in |distance|, sign partition, exact small distances; the bias
is the table row of the bucket."""

from __future__ import annotations

import numpy as np

from ..compare import as_numpy
from .core import expect_close, expect_true, host, ints, invariant

CONFIGS = [(32, 128), (64, 128), (16, 64), (128, 1024), (20, 50), (33, 100)]


def _buckets(adapter, relative, bidirectional, nb, md):
    out = as_numpy(adapter.t5_bucket(relative, bidirectional=bidirectional, num_buckets=nb, max_distance=md))
    expect_true(np.issubdtype(out.dtype, np.integer), f"{nb}/{md}: integer buckets")
    return out.astype(np.int64)


@invariant("t5", "range-monotone-partition", "t5_bucket", seed=401, float_outputs=False)
def structure(adapter, dtype, rng):
    """Buckets lie in [0, num_buckets); they never decrease as |distance| grows on either side;
    bidirectional: keys after the query use the upper half, the rest the lower half;
    causal: keys after the query share bucket 0; |distance| < max_exact is its own bucket."""
    for nb, md in CONFIGS:
        rel = ints(range(-3 * md, 3 * md + 1))
        extra = rng.integers(-(2**40), 2**40, size=64)
        for bidirectional in (True, False):
            b = _buckets(adapter, rel, bidirectional, nb, md)
            half = nb // 2 if bidirectional else nb
            exact = half // 2
            tag = f"{nb}/{md} {'bidirectional' if bidirectional else 'causal'}"
            expect_true((b >= 0) & (b < nb), f"{tag}: range [0, {nb})")
            past = b[rel <= 0][::-1]  # |rel| increasing
            expect_true(np.diff(past) >= 0, f"{tag}: monotone for keys before the query")
            expect_true(
                b[(rel <= 0) & (rel > -exact)] == -rel[(rel <= 0) & (rel > -exact)], f"{tag}: exact buckets"
            )
            if bidirectional:
                future = b[rel > 0]
                expect_true(np.diff(future) >= 0, f"{tag}: monotone for keys after the query")
                expect_true(future >= half, f"{tag}: keys after the query in the upper half")
                expect_true(b[rel <= 0] < half, f"{tag}: keys before the query in the lower half")
                expect_true(future - half == b[np.isin(rel, -rel[rel > 0])][::-1], f"{tag}: mirror symmetry")
            else:
                expect_true(b[rel >= 0] == 0, f"{tag}: keys after the query in bucket 0")
            far = _buckets(adapter, ints(extra), bidirectional, nb, md)
            expect_true((far >= 0) & (far < nb), f"{tag}: range at huge distances")
    return 0.0


@invariant("t5", "bias-is-table-of-bucket", "t5_bias", "t5_bucket", seed=402)
def bias_of_bucket(adapter, dtype, rng):
    """t5_bias(q, k, table)[h, i, j] = table[t5_bucket(k_j - q_i), h], for each configuration and a
    random table (positions far into a sequence, so every bucket and the saturation are reached)."""
    worst = 0.0
    for nb, md in ((32, 128), (20, 50)):
        table = (rng.integers(-512, 513, size=(nb, 3)) / 64).astype(dtype)
        q = ints(rng.integers(10**6, 10**6 + 400, size=5))
        k = ints(np.arange(10**6 - 50, 10**6 + 450, 7))
        for bidirectional in (True, False):
            rel = k[None, :] - q[:, None]
            buckets = as_numpy(
                adapter.t5_bucket(rel, bidirectional=bidirectional, num_buckets=nb, max_distance=md)
            ).astype(np.int64)
            bias = host(adapter.t5_bias(q, k, table, bidirectional=bidirectional, max_distance=md))
            expected = np.moveaxis(table.astype(np.float64)[buckets], -1, 0)
            tag = f"{nb}/{md} {'bidirectional' if bidirectional else 'causal'}"
            worst = max(worst, expect_close(bias, expected, 0.0, f"{tag}: bias vs table[bucket]"))
    return worst


# --- T5-bucket variants -----------------------------------------------------------------------------


def _dyadic_table(rng, rows, heads, dtype):
    return (rng.integers(-512, 513, size=(rows, heads)) / 64).astype(dtype)


def _close_tol(dtype, scale):
    """A few roundings of values of magnitude ``scale``."""
    return 8 * float(np.finfo(dtype).eps) * max(1.0, scale)


@invariant("t5", "layout-is-sum-of-biases", "t5_layout_bias", "t5_bias", seed=403)
def layout_sum(adapter, dtype, rng):
    """t5_layout_bias(p, bbox, T, Tx, Ty) * sqrt(d) = t5_bias(p, p, T) + t5_bias(x, x, Tx)
    + t5_bias(y, y, Ty),
    x the left and y the bottom box edge (head_dim 16: the scale is exact)."""
    length = 9
    pos = ints(np.sort(rng.choice(600, size=length, replace=False)))
    box = rng.integers(0, 1001, size=(length, 4)).astype(np.int64)
    t, tx, ty = (_dyadic_table(rng, n, 2, dtype) for n in (32, 64, 64))
    out = host(adapter.t5_layout_bias(pos, box, t, tx, ty, max_rel_pos=128, max_rel_2d_pos=256, head_dim=16))
    x, y = ints(box[:, 0]), ints(box[:, 3])
    terms = [
        host(adapter.t5_bias(pos, pos, t, bidirectional=True, max_distance=128)),
        host(adapter.t5_bias(x, x, tx, bidirectional=True, max_distance=256)),
        host(adapter.t5_bias(y, y, ty, bidirectional=True, max_distance=256)),
    ]
    scale = sum(float(np.abs(a).max()) for a in (t, tx, ty))
    return expect_close(
        out * 4.0, sum(terms), _close_tol(dtype, scale), "layout bias * sqrt(16) vs three t5_bias"
    )


@invariant("t5", "udop-shift-and-prefix", "t5_udop_bias", seed=404)
def udop_structure(adapter, dtype, rng):
    """Moving every box by the same (dyadic) offset leaves UDOP's bias unchanged; with prefix buckets,
    every prefix-query/text-key pair holds T[N] + Tx[N2] + Ty[N2] and every text-query/prefix-key pair
    T[N + 1] + Tx[N2 + 1] + Ty[N2 + 1]."""
    length, prefix = 7, 2
    box = (rng.integers(0, 48, size=(length, 4)) / 64).astype(dtype)
    t, tx, ty = (_dyadic_table(rng, 34, 2, dtype) for _ in range(3))
    kw = {"max_distance": 128, "max_distance_2d": 100, "scaling_factor": 100.0}
    plain = host(adapter.t5_udop_bias(box, t[:32], tx[:32], ty[:32], prefix_buckets=False, **kw))
    moved = host(
        adapter.t5_udop_bias(
            box + np.asarray(0.25, dtype), t[:32], tx[:32], ty[:32], prefix_buckets=False, **kw
        )
    )
    scale = sum(float(np.abs(a).max()) for a in (t, tx, ty))
    worst = expect_close(moved, plain, _close_tol(dtype, scale), "bias after moving every box by 1/4")
    box[:prefix, 1] = -1.0
    out = host(adapter.t5_udop_bias(box, t, tx, ty, prefix_buckets=True, **kw))
    to_text = (t[32] + tx[32] + ty[32]).astype(np.float64)[:, None, None]
    to_prefix = (t[33] + tx[33] + ty[33]).astype(np.float64)[:, None, None]
    worst = max(
        worst,
        expect_close(
            out[:, :prefix, prefix:],
            np.broadcast_to(to_text, (2, prefix, length - prefix)),
            _close_tol(dtype, scale),
            "prefix query -> text key rows",
        ),
    )
    return max(
        worst,
        expect_close(
            out[:, prefix:, :prefix],
            np.broadcast_to(to_prefix, (2, length - prefix, prefix)),
            _close_tol(dtype, scale),
            "text query -> prefix key rows",
        ),
    )


@invariant("t5", "gate-times-bias", "t5_gated_bias", "t5_bias", seed=405)
def gated_product(adapter, dtype, rng):
    """WavLM's gated bias is a per-(head, query) gate times the T5 bias of 0 .. L-1: with an all-ones table
    the output is the gate, constant along each query row; with a table T it is that gate times t5_bias."""
    heads, length, dim = 2, 11, 4
    hidden = (rng.integers(-64, 65, size=(heads, length, dim)) / 64).astype(dtype)
    weight = (rng.integers(-64, 65, size=(8, dim)) / 128).astype(dtype)
    bias = (rng.integers(-64, 65, size=8) / 128).astype(dtype)
    const = (rng.integers(-64, 65, size=heads) / 32).astype(dtype)
    ones = np.ones((320, heads), dtype=dtype)
    gate = host(adapter.t5_gated_bias(hidden, ones, weight, bias, const, max_distance=800))
    tol = _close_tol(dtype, 4.0)
    worst = expect_close(
        gate, np.broadcast_to(gate[..., :1], gate.shape), tol, "gate constant along a query row"
    )
    table = _dyadic_table(rng, 320, heads, dtype)
    out = host(adapter.t5_gated_bias(hidden, table, weight, bias, const, max_distance=800))
    idx = ints(range(length))
    plain = host(adapter.t5_bias(idx, idx, table, bidirectional=True, max_distance=800))
    scale = 4.0 * float(np.abs(table).max())
    return max(
        worst, expect_close(out, gate * plain, _close_tol(dtype, scale), "gated bias vs gate * t5_bias")
    )


@invariant(
    "t5", "streams-are-causal-buckets", "t5_stream_buckets", "t5_bucket", seed=406, float_outputs=False
)
def stream_buckets(adapter, dtype, rng):
    """ProphetNet's main stream is t5_bucket(p_j - p_i) and its predict stream t5_bucket(k_j - p_i) over the
    keys k = [p - 1, p], both causal."""
    pos = ints(np.sort(rng.choice(400, size=12, replace=False)))
    main, predict = adapter.t5_stream_buckets(pos, num_buckets=32, max_distance=128)
    main, predict = as_numpy(main).astype(np.int64), as_numpy(predict).astype(np.int64)
    keys = np.concatenate([pos - 1, pos])
    expect_true(main == _buckets(adapter, pos[None, :] - pos[:, None], False, 32, 128), "main stream")
    expect_true(predict == _buckets(adapter, keys[None, :] - pos[:, None], False, 32, 128), "predict stream")
    return 0.0


@invariant("t5", "segments-within-and-across", "t5_segment_bias", "t5_bias", seed=407)
def segment_rows(adapter, dtype, rng):
    """CPM-Ant's bias is t5_bias where the query and key segments agree, and the segment-pair row
    N + s_q S + s_k of the table where they differ."""
    length, segments, nb = 10, 3, 32
    pos = ints(range(length))
    seg = ints(rng.integers(0, segments, size=length))
    table = _dyadic_table(rng, nb + segments * segments, 2, dtype)
    out = host(adapter.t5_segment_bias(pos, pos, seg, seg, table, num_segments=segments, max_distance=128))
    plain = host(adapter.t5_bias(pos, pos, table[:nb], bidirectional=True, max_distance=128))
    same = seg[:, None] == seg[None, :]
    cross = np.moveaxis(table.astype(np.float64)[nb + seg[:, None] * segments + seg[None, :]], -1, 0)
    return expect_close(out, np.where(same, plain, cross), 0.0, "segment bias vs t5_bias / segment-pair rows")
