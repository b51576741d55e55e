"""relative_positions and Shaw et al. (index, relative-key logits, relative-value term)."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ref import (
    SHAW_CONVENTIONS,
    _compat,
    attention,
    relative_positions,
    shaw_index,
    shaw_logits,
    shaw_table_rows,
    shaw_values,
)
from tests.conftest import UNREAD_ON_DASK
from tests.helpers import assert_close, assert_equal, floats, ints, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily


class TestRelativePositions:
    def test_key_minus_query(self, xp, device):
        q, k = [3, 4, 5], [0, 1, 2, 3, 4, 5, 6]
        expected = [[kj - qi for kj in k] for qi in q]
        assert_equal(
            relative_positions(ints(xp, q, device), ints(xp, k, device)), expected, xp=xp, device=device
        )

    def test_decode_step_and_block_match_the_full_matrix(self, xp):
        full = to_numpy(relative_positions(ints(xp, list(range(40))), ints(xp, list(range(40)))))
        step = relative_positions(ints(xp, [39]), ints(xp, list(range(40))))
        assert_equal(step, full[39:40], xp=xp)
        block = relative_positions(ints(xp, list(range(8, 16))), ints(xp, list(range(24, 40))))
        assert_equal(block, full[8:16, 24:40], xp=xp)

    def test_batch_dims_broadcast(self, xp):
        q = np.asarray([[0, 1], [7, 8]])
        k = np.asarray([0, 1, 2])
        out = relative_positions(ints(xp, q), ints(xp, k))
        assert_equal(out, k[None, None, :] - q[:, :, None], xp=xp)

    def test_int32_widened_to_the_index_dtype(self, xp):
        out = relative_positions(ints(xp, [1], dtype=xp.int32), ints(xp, [0, 5], dtype=xp.int32))
        assert_equal(out, [[-1, 4]], xp=xp, dtype=_compat.index_dtype(xp))

    def test_errors(self, xp):
        with pytest.raises(TypeError, match=r"^q_positions must be an array of an integer dtype"):
            relative_positions(xp.asarray([0.0]), ints(xp, [0]))
        with pytest.raises(TypeError, match=r"^k_positions must be an array of an integer dtype"):
            relative_positions(ints(xp, [0]), [0, 1])
        with pytest.raises(ValueError, match=r"^q_positions must be at least 1-dimensional"):
            relative_positions(ints(xp, 3), ints(xp, [0]))


class TestShawIndex:
    def test_tensor2tensor_clip_and_shift(self, xp, device):
        rel = list(range(-6, 7))
        k = 3
        expected = [max(-k, min(k, r)) + k for r in rel]  # 2k + 1 rows
        assert_equal(shaw_index(ints(xp, rel, device), 3), expected, xp=xp, device=device)
        assert shaw_table_rows(3) == 7

    def test_asymmetric_wav2vec2_bert(self, xp):
        rel = list(range(-70, 12))
        left, right = 64, 8
        expected = [max(-left, min(right, r)) + left for r in rel]
        assert_equal(shaw_index(ints(xp, rel), (left, right)), expected, xp=xp)
        assert shaw_table_rows((64, 8)) == 73

    def test_bert_query_minus_key_without_clipping(self, xp):
        max_pos = 5
        rel = list(range(-4, 5))
        expected = [(-r) + max_pos - 1 for r in rel]  # distance = query - key
        assert_equal(shaw_index(ints(xp, rel), max_pos, convention="bert"), expected, xp=xp)
        assert shaw_table_rows(5, convention="bert") == 9

    def test_narrow_relative_does_not_wrap(self, xp):
        # main: clip(rel, -64, 64) + 64 wrapped in int8 (row 128 became -128)
        with pytest.raises(
            ValueError, match=r"^max_distance must be small enough that the last row 128 fits"
        ):
            shaw_index(ints(xp, [100], dtype=xp.int8), 64)
        rel = [-128, -61, 0, 61, 127]
        out = shaw_index(ints(xp, rel, dtype=xp.int8), 60)  # 121 rows: every index fits int8
        assert_equal(out, [max(-60, min(60, r)) + 60 for r in rel], xp=xp, dtype=xp.int8)
        unsigned = [0, 3, 255]
        out = shaw_index(ints(xp, unsigned, dtype=xp.uint8), (100, 100))
        assert_equal(out, [min(100, r) + 100 for r in unsigned], xp=xp, dtype=xp.uint8)

    @UNREAD_ON_DASK
    def test_bert_outside_the_table_is_an_error(self, xp):
        with pytest.raises(ValueError, match=r"^relative must be in \[-4, 4\] for convention='bert'"):
            shaw_index(ints(xp, [-5, 0]), 5, convention="bert")

    def test_dtype_preserved(self, xp):
        out = shaw_index(ints(xp, [-9, 0, 9], dtype=xp.int32), 2)
        assert_equal(out, [0, 2, 4], xp=xp, dtype=xp.int32)

    @pytest.mark.parametrize(
        ("args", "kwargs", "error", "pattern"),
        [
            ((0,), {}, ValueError, r"^max_distance must be a positive integer"),
            ((2.5,), {}, TypeError, r"^max_distance must be an integer"),
            (((1, 2, 3),), {}, ValueError, r"^max_distance must be an integer k or a pair"),
            (((-1, 2),), {}, ValueError, r"^max_distance\[0\] \(left\) must be an integer >= 0"),
            (((2, 2),), {"convention": "bert"}, TypeError, r"^max_distance must be an integer \(HF BERT"),
            (
                (2,),
                {"convention": "relative_key"},
                ValueError,
                r"^convention must be one of .* \(HF BERT relative_key",
            ),
        ],
    )
    def test_bad_input(self, xp, args, kwargs, error, pattern):
        with pytest.raises(error, match=pattern):
            shaw_index(ints(xp, [0]), *args, **kwargs)

    def test_float_relative(self, xp):
        with pytest.raises(TypeError, match=r"^relative must be an array of an integer dtype"):
            shaw_index(xp.asarray([0.5]), 2)

    def test_conventions_tuple(self):
        assert SHAW_CONVENTIONS == ("tensor2tensor", "bert", "speecht5", "vits", "granite_speech")

    def test_speecht5_mirrors_tensor2tensor(self, xp, device):
        # SpeechT5RelativePositionalEncoding: pos = i - j; < -L -> -L; >= L -> L - 1; + L
        rel = list(range(-7, 8))
        big = 3
        expected = [min(max(-r, -big), big - 1) + big for r in rel]
        out = shaw_index(ints(xp, rel, device), big, convention="speecht5")
        assert_equal(out, expected, xp=xp, device=device)
        mirrored = [2 * big - 1 - (max(-(big - 1), min(big, r)) + big - 1) for r in rel]
        assert expected == mirrored
        assert shaw_table_rows(big, convention="speecht5") == 6

    def test_vits_zero_row_beyond_the_window(self, xp):
        rel = list(range(-6, 7))
        w = 2
        expected = [r + w if abs(r) <= w else 2 * w + 1 for r in rel]
        assert_equal(shaw_index(ints(xp, rel), w, convention="vits"), expected, xp=xp)
        assert shaw_table_rows(w, convention="vits") == 2 * w + 2

    def test_granite_speech_block_distances(self, xp):
        # GraniteSpeechCTCEncoder: clamp(i - j, -c, c) + M over one block of c frames
        c, m = 4, 6
        rel = [[j - i for j in range(c)] for i in range(c)]
        expected = [[min(max(i - j, -c), c) + m for j in range(c)] for i in range(c)]
        out = shaw_index(ints(xp, rel), (c, m), convention="granite_speech")
        assert_equal(out, expected, xp=xp)
        assert_equal(shaw_index(ints(xp, [-9, 9]), (2, 3), convention="granite_speech"), [5, 1], xp=xp)
        assert shaw_table_rows((c, m), convention="granite_speech") == 2 * m + 1

    @pytest.mark.parametrize(
        ("max_distance", "convention", "error", "pattern"),
        [
            ((2, 2), "speecht5", TypeError, r"^max_distance must be an integer \(SpeechT5's"),
            (0, "vits", ValueError, r"^max_distance must be a positive integer"),
            (4, "granite_speech", TypeError, r"^max_distance must be a pair \(context_size, max_pos_emb\)"),
            ((5, 4), "granite_speech", ValueError, r"^max_distance\[0\] \(context_size\) must be at most"),
            ((1, 2, 3), "granite_speech", ValueError, r"^max_distance must be a pair"),
        ],
    )
    def test_speech_conventions_bad_input(self, xp, max_distance, convention, error, pattern):
        with pytest.raises(error, match=pattern):
            shaw_index(ints(xp, [0]), max_distance, convention=convention)
        with pytest.raises(error, match=pattern):
            shaw_table_rows(max_distance, convention=convention)


# --- Shaw logits and values: plain-Python loops ----------------------------------------------------


def wide_tol(xp):
    """Tolerance for float64 host data fed to a float32-only backend (jax.numpy:x32): inputs are
    rounded to float32 (relative 6e-8), so sums of a few products carry ~1e-6 error."""
    return {} if _compat.compute_dtype(xp) == xp.float64 else {"rtol": 1e-5, "atol": 1e-5}


def _problem(seed=0, batch=2, heads=3, lq=4, lk=5, depth=6, k=2):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((batch, heads, lq, depth))
    key = rng.standard_normal((batch, heads, lk, depth))
    v = rng.standard_normal((batch, heads, lk, depth))
    table_k = rng.standard_normal((2 * k + 1, depth))
    table_v = rng.standard_normal((2 * k + 1, depth))
    qpos, kpos = list(range(lk - lq, lk)), list(range(lk))  # t2t: range_q = range_k[-length_q:]
    index = [[max(-k, min(k, kj - qi)) + k for kj in kpos] for qi in qpos]
    return q, key, v, table_k, table_v, qpos, kpos, index


def _dot(a, b):
    return sum(float(x) * float(y) for x, y in zip(a, b, strict=True))


class TestShawLogits:
    def test_relative_key_term(self, xp, device):
        q, _key, _, table, _, _qpos, kpos, index = _problem()
        out = shaw_logits(floats(xp, q, device), ints(xp, index, device), floats(xp, table, device))
        expected = np.empty((*q.shape[:-1], len(kpos)))
        for b, h, i, j in np.ndindex(expected.shape):
            expected[b, h, i, j] = _dot(q[b, h, i], table[index[i][j]])
        assert_close(out, expected, xp=xp, dtype=_compat.compute_dtype(xp), device=device, **wide_tol(xp))

    def test_relative_key_query_adds_key_term(self, xp):
        q, key, _, table, _, _qpos, kpos, index = _problem(seed=1)
        out = shaw_logits(floats(xp, q), ints(xp, index), floats(xp, table), k=floats(xp, key))
        expected = np.empty((*q.shape[:-1], len(kpos)))
        for b, h, i, j in np.ndindex(expected.shape):
            expected[b, h, i, j] = _dot(q[b, h, i], table[index[i][j]]) + _dot(
                key[b, h, j], table[index[i][j]]
            )
        assert_close(out, expected, xp=xp, **wide_tol(xp))

    def test_float32(self, xp):
        q, _, _, table, _, _, _kpos, index = _problem(seed=2)
        out = shaw_logits(
            floats(xp, q, dtype=xp.float32), ints(xp, index), floats(xp, table, dtype=xp.float32)
        )
        q32, t32 = q.astype(np.float32).astype(np.float64), table.astype(np.float32).astype(np.float64)
        expected = np.einsum("bhid,ijd->bhij", q32, t32[np.asarray(index)])
        # products summed in float64 then rounded once: within a few float32 ulp of |value| <~ 10.
        assert_close(out, expected, xp=xp, dtype=xp.float32, atol=4e-6)

    def test_per_batch_index(self, xp):
        q, _, _, table, _, _, _, index = _problem(seed=3)
        per_batch = np.stack([np.asarray(index), np.asarray(index)[:, ::-1]])[:, None]  # [B, 1, Lq, Lk]
        out = shaw_logits(floats(xp, q), ints(xp, per_batch), floats(xp, table))
        expected = np.einsum(
            "bhid,bhijd->bhij", q, np.broadcast_to(table[per_batch], (*q.shape[:2], 4, 5, 6))
        )
        assert_close(out, expected, xp=xp, **wide_tol(xp))

    def test_errors(self, xp, library):
        q, _, _, table, _, _, _, index = _problem()
        qa, ta, ia = floats(xp, q), floats(xp, table), ints(xp, index)
        with pytest.raises(ValueError, match=r"^q must be of shape \[\.\.\., Lq=4, D=6\]"):
            shaw_logits(qa[..., :3], ia, ta)
        with pytest.raises(TypeError, match=r"^index must be an array of an integer dtype"):
            shaw_logits(qa, floats(xp, index), ta)
        with pytest.raises(TypeError, match=r"^table must be an array of a real floating dtype"):
            shaw_logits(qa, ia, ints(xp, [[1] * 6] * 5))
        with pytest.raises(ValueError, match=r"^k must be of shape \[\.\.\., Lk=5, D=6\]"):
            shaw_logits(qa, ia, ta, k=qa)
        if _compat.values_known(ia):
            with pytest.raises(ValueError, match=r"^index must be in \[0, 5\) for a table of 5 rows"):
                shaw_logits(qa, ia + 1, ta)


class TestShawValues:
    def test_relative_value_term(self, xp, device):
        _, _, _, _, table, _, kpos, index = _problem()
        rng = np.random.default_rng(5)
        weights = rng.random((2, 3, 4, 5))
        out = shaw_values(floats(xp, weights, device), ints(xp, index, device), floats(xp, table, device))
        expected = np.zeros((2, 3, 4, table.shape[1]))
        for b, h, i in np.ndindex(2, 3, 4):
            for j in range(len(kpos)):
                expected[b, h, i] += weights[b, h, i, j] * table[index[i][j]]
        assert_close(out, expected, xp=xp, dtype=_compat.compute_dtype(xp), device=device, **wide_tol(xp))

    def test_errors(self, xp):
        _, _, _, _, table, _, _, index = _problem()
        with pytest.raises(ValueError, match=r"^weights must be of shape \[\.\.\., 4, 5\]"):
            shaw_values(floats(xp, np.ones((4, 4))), ints(xp, index), floats(xp, table))
        with pytest.raises(TypeError, match=r"^weights must be an array of a real floating dtype"):
            shaw_values(ints(xp, index), ints(xp, index), floats(xp, table))


def test_vits_logits_and_values_equal_its_skew():
    # VITS's _get_relative_embeddings + _relative_position_to_absolute_position, in NumPy
    n, w, d = 6, 2, 3
    rng = np.random.default_rng(5)
    emb, q = rng.standard_normal((2 * w + 1, d)), rng.standard_normal((n, d))
    pad = max(n - (w + 1), 0)
    padded = np.concatenate([np.zeros((pad, d)), emb, np.zeros((pad, d))])
    start = max(w + 1 - n, 0)
    rel = q @ padded[start : start + 2 * n - 1].T  # [n, 2n - 1], column c: relative c - (n - 1)
    skewed = np.array([[rel[i, j - i + n - 1] for j in range(n)] for i in range(n)])
    index = shaw_index(relative_positions(np.arange(n), np.arange(n)), w, convention="vits")
    table = np.concatenate([emb, np.zeros((1, d))])
    np.testing.assert_allclose(shaw_logits(q, index, table), skewed, rtol=1e-13, atol=1e-13)
    # the value-side skew (_absolute_position_to_relative_position) is the same map
    weights = rng.random((n, n))
    unskewed = np.zeros((n, 2 * n - 1))
    for i in range(n):
        for j in range(n):
            unskewed[i, j - i + n - 1] = weights[i, j]
    expected = unskewed @ padded[start : start + 2 * n - 1]
    np.testing.assert_allclose(shaw_values(weights, index, table), expected, rtol=1e-13, atol=1e-13)


def test_tensor2tensor_relative_attention_end_to_end(xp):
    """dot_product_attention_relative: softmax(q.k + q.a^K) @ (v + a^V), q pre-scaled by D**-0.5."""
    q, key, v, table_k, table_v, _, _, index = _problem(seed=7)
    depth = q.shape[-1]
    qs = q * depth**-0.5
    expected = np.zeros((*v.shape[:2], q.shape[2], depth))
    for b, h, i in np.ndindex(*q.shape[:3]):
        logits = [_dot(qs[b, h, i], key[b, h, j] + table_k[index[i][j]]) for j in range(key.shape[2])]
        top = max(logits)
        w = np.exp(np.asarray(logits) - top)
        w /= w.sum()
        for j in range(key.shape[2]):
            expected[b, h, i] += w[j] * (v[b, h, j] + table_v[index[i][j]])
    qa, ka, va, ia = floats(xp, q), floats(xp, key), floats(xp, v), ints(xp, index)
    scale = depth**-0.5
    bias = shaw_logits(qa, ia, floats(xp, table_k)) * scale
    out, weights = attention(qa, ka, va, bias=bias, scale=scale, return_weights=True)
    out = out + shaw_values(weights, ia, floats(xp, table_v))
    assert_close(out, expected, xp=xp, **wide_tol(xp))


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    q, _, _, table, _, _, _, index = _problem(seed=11)
    rel = ints(xp, [[kj - qi for kj in range(5)] for qi in range(1, 5)])
    out = run_lazily(
        library, lambda r, a, t: shaw_logits(a, shaw_index(r, 2), t), rel, floats(xp, q), floats(xp, table)
    )
    expected = np.einsum("bhid,ijd->bhij", q, table[np.asarray(index)])
    assert_close(out, expected, xp=xp, **wide_tol(xp))
