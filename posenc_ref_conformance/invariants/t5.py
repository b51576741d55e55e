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
