"""Token-position invariants: padding shifts nothing, the cache length shifts everything, pads are -1."""

from __future__ import annotations

import numpy as np

from ..compare import as_numpy
from .core import expect_true, invariant


@invariant("learned", "token-positions-padding", "token_positions", seed=801, float_outputs=False)
def padding(adapter, dtype, rng):
    """For random masks: real tokens are numbered c, c + 1, ... in order whatever the padding, pads -1,
    and the positions of a row with its pads removed are those of the unpadded row."""
    mask = rng.random((6, 17)) < 0.7
    mask[0] = True
    for cache in (0, 5):
        got = as_numpy(adapter.token_positions(mask, cache_length=cache)).astype(np.int64)
        expect_true(got.shape == mask.shape, f"cache {cache}: shape of the mask")
        expect_true(got[~mask] == -1, f"cache {cache}: padding is -1")
        for row, m in zip(got, mask, strict=True):
            expect_true(
                row[m] == cache + np.arange(int(m.sum())), f"cache {cache}: real tokens count from {cache}"
            )
        unpadded = as_numpy(adapter.token_positions(np.ones(9, bool), cache_length=cache)).astype(np.int64)
        expect_true(unpadded == cache + np.arange(9), f"cache {cache}: an unpadded row is arange + cache")
    return 0.0
