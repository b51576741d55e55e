"""causal_mask: global, sliding-window and Llama 4 chunked masks from explicit positions."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ref import _compat, causal_mask
from tests.helpers import assert_equal, ints, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily


def expected_mask(q, k, window=None, chunk=None):
    return [
        [
            kj <= qi
            and (window is None or qi - kj < window)
            and (chunk is None or kj // chunk == qi // chunk)
            for kj in k
        ]
        for qi in q
    ]


class TestCausalMask:
    def test_global(self, xp, device):
        q = k = list(range(6))
        out = causal_mask(ints(xp, q, device), ints(xp, k, device))
        assert_equal(out, expected_mask(q, k), xp=xp, device=device)
        assert to_numpy(out).dtype == np.bool_

    def test_decode_step_with_cache(self, xp):
        out = causal_mask(ints(xp, [7]), ints(xp, list(range(10))))
        assert_equal(out, [[j <= 7 for j in range(10)]], xp=xp)

    def test_sliding_window(self, xp):
        q = k = list(range(10))
        out = causal_mask(ints(xp, q), ints(xp, k), sliding_window=3)
        assert_equal(out, expected_mask(q, k, window=3), xp=xp)
        assert to_numpy(out).sum(-1).tolist() == [1, 2, 3, 3, 3, 3, 3, 3, 3, 3]

    def test_llama4_chunks(self, xp):
        q, k = list(range(4, 14)), list(range(14))
        out = causal_mask(ints(xp, q), ints(xp, k), chunk_size=4)
        assert_equal(out, expected_mask(q, k, chunk=4), xp=xp)

    def test_window_and_chunk_together_and_batched(self, xp):
        q = np.asarray([[3, 4, 5], [10, 11, 12]])
        k = np.asarray([[0, 1, 2, 3, 4, 5], [7, 8, 9, 10, 11, 12]])
        out = causal_mask(ints(xp, q), ints(xp, k), sliding_window=2, chunk_size=4)
        expected = [expected_mask(q[b], k[b], window=2, chunk=4) for b in range(2)]
        assert_equal(out, expected, xp=xp)

    def test_errors(self, xp, library):
        pos = ints(xp, [0, 1])
        with pytest.raises(ValueError, match=r"^sliding_window must be a positive integer"):
            causal_mask(pos, pos, sliding_window=0)
        with pytest.raises(TypeError, match=r"^chunk_size must be an integer"):
            causal_mask(pos, pos, chunk_size=2.0)
        with pytest.raises(TypeError, match=r"^q_positions must be an array of an integer dtype"):
            causal_mask(xp.asarray([0.0]), pos)
        if _compat.values_known(pos) and not _compat.is_lazy(pos):
            with pytest.raises(ValueError, match=r"^k_positions must be non-negative"):
                causal_mask(pos, ints(xp, [-1, 0]), chunk_size=2)


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    q, k = list(range(3, 9)), list(range(9))
    out = run_lazily(
        library, lambda a, b: causal_mask(a, b, sliding_window=4, chunk_size=4), ints(xp, q), ints(xp, k)
    )
    assert_equal(out, expected_mask(q, k, window=4, chunk=4), xp=xp)
