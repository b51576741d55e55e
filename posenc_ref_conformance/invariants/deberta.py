"""DeBERTa invariants: the log bucket is odd, exact up to mid, non-decreasing and 2 mid - 1 at M - 1; the
rows of the two disentangled terms agree, are Toeplitz in (query, key) and stay in [0, 2S)."""

from __future__ import annotations

import numpy as np

from ..compare import as_numpy
from .core import expect_true, ints, invariant

CONFIGS = [(256, 512), (16, 32), (7, 20), (64, 1024)]


@invariant("deberta", "odd-exact-monotone", "deberta_bucket", seed=901, float_outputs=False)
def bucket_shape(adapter, dtype, rng):
    """b(-r) = -b(r); b(r) = r for |r| <= mid; b never decreases in r; b(M - 1) = 2 mid - 1;
    random far distances keep the sign and exceed mid (HF's float32 arithmetic, which every port has)."""
    for pb, top in CONFIGS:
        mid = pb // 2
        rel = np.arange(-3 * top, 3 * top + 1)
        kw = {"position_buckets": pb, "max_relative_positions": top, "arithmetic": "float32"}
        b = as_numpy(adapter.deberta_bucket(ints(rel), **kw)).astype(np.int64)
        tag = f"{pb}/{top}"
        expect_true(b == -b[::-1], f"{tag}: odd")
        expect_true(b[np.abs(rel) <= mid] == rel[np.abs(rel) <= mid], f"{tag}: exact up to mid")
        expect_true(np.diff(b) >= 0, f"{tag}: non-decreasing")
        expect_true(b[rel == top - 1] == 2 * mid - 1, f"{tag}: b(M - 1) = 2 mid - 1")
        far = rng.integers(top, 2**40, size=32)
        fb = as_numpy(adapter.deberta_bucket(ints(np.concatenate([far, -far])), **kw)).astype(np.int64)
        expect_true(np.abs(fb) > mid, f"{tag}: far distances beyond mid")
        expect_true(np.sign(fb) == np.sign(np.concatenate([far, -far])), f"{tag}: far signs")
    return 0.0


@invariant("deberta", "terms-agree-toeplitz", "deberta_relative_index", seed=902, float_outputs=False)
def index_shape(adapter, dtype, rng):
    """Self-attention over L tokens: the c2p and p2c rows agree, row(i + 1, j + 1) = row(i, j), the
    diagonal is S, and every row lies in [0, 2S) (without buckets and with: DeBERTa v1 has none)."""
    checked = 0
    for pb, top, length in ((0, 8, 20), (16, 32, 64), (256, 512, 40)):
        span = pb if pb > 0 else top
        pos = ints(range(length))
        kw = {"position_buckets": pb, "max_relative_positions": top, "arithmetic": "float32"}
        try:
            c2p = as_numpy(adapter.deberta_relative_index(pos, pos, term="c2p", **kw)).astype(np.int64)
        except NotImplementedError:  # the adapter's Unsupported, through the call isolation
            if pb > 0 and checked:  # an implementation without buckets: the bucket-free rows were checked
                continue
            raise
        p2c = as_numpy(adapter.deberta_relative_index(pos, pos, term="p2c", **kw)).astype(np.int64)
        tag = f"{pb}/{top}, {length} tokens"
        expect_true(c2p == p2c, f"{tag}: c2p and p2c read the same rows")
        expect_true(c2p[1:, 1:] == c2p[:-1, :-1], f"{tag}: Toeplitz")
        expect_true(np.diagonal(c2p) == span, f"{tag}: the diagonal is row S")
        expect_true((c2p >= 0) & (c2p < 2 * span), f"{tag}: rows in [0, 2S)")
        checked += 1
    return 0.0
