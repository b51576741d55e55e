"""rel_sinusoid_positions, rel_sinusoid_table, rel_shift and rel_attention_scores against hand-derived
values, the pad-and-reshape tricks written out in NumPy, and Python loops."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ref import (
    REL_SHIFT_CONVENTIONS,
    rel_attention_scores,
    rel_shift,
    rel_sinusoid_positions,
    rel_sinusoid_table,
    sinusoidal,
)
from tests.helpers import assert_close, assert_equal, float_dtype, floats, to_numpy


def trick(x: np.ndarray, klen: int | None, convention: str, shift: int = 1) -> np.ndarray:
    """The implementations' reshapes, in NumPy (ESPnet/HF pad-left, XLNet/Funnel drop, Gemma pad-right)."""
    *lead, q, p = x.shape
    if convention == "transformer_xl":
        padded = np.concatenate([np.zeros((*lead, q, 1)), x], axis=-1)
        out = padded.reshape(*lead, p + 1, q)[..., 1:, :].reshape(*lead, q, p)
        return out[..., : p if klen is None else klen]
    if convention == "xlnet":
        out = x.reshape(*lead, p, q)[..., shift:, :].reshape(*lead, q, p - shift)
        return out[..., : p - shift if klen is None else klen]
    k = p - 1 if klen is None else klen
    padded = np.concatenate([x, np.zeros((*lead, q, k + 1 - p))], axis=-1)
    return padded.reshape(*lead, q * (k + 1))[..., : q * k].reshape(*lead, q, k)


class TestRelSinusoidPositions:
    def test_each_convention(self, xp):
        assert to_numpy(rel_sinusoid_positions(3, xp=xp)).tolist() == [2, 1, 0, -1, -2]
        assert to_numpy(rel_sinusoid_positions(2, 4, convention="transformer_xl", xp=xp)).tolist() == [
            3,
            2,
            1,
            0,
        ]
        assert to_numpy(rel_sinusoid_positions(2, 4, convention="xlnet", xp=xp)).tolist() == [
            4,
            3,
            2,
            1,
            0,
            -1,
        ]
        assert to_numpy(rel_sinusoid_positions(2, 4, convention="xlnet_uni", xp=xp)).tolist() == [
            4,
            3,
            2,
            1,
            0,
        ]

    def test_xlnet_clamp_and_bi_data(self, xp):
        out = to_numpy(rel_sinusoid_positions(3, 5, convention="xlnet", clamp_len=2, bi_data=True, xp=xp))
        assert out.tolist() == [[2, 2, 2, 2, 1, 0, -1, -2], [-2, -2, -2, -2, -1, 0, 1, 2]]

    def test_streaming_query_meets_its_distance(self, xp):
        # Nemotron: 2 new frames after 3 cached, K = 5: query i (absolute 3 + i) at key j reads row
        # j + Q - 1 - i of the table, whose distance is (3 + i) - j
        seq = to_numpy(rel_sinusoid_positions(2, 5, xp=xp))
        for i in range(2):
            for j in range(5):
                assert seq[j + 2 - 1 - i] == 3 + i - j

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"qlen": 3, "klen": 2}, "^klen must"),
            ({"qlen": 0}, "^qlen must"),
            ({"qlen": 3, "clamp_len": -1}, "^clamp_len must"),
            ({"qlen": 3, "convention": "espnet"}, "^convention must"),
        ],
    )
    def test_errors(self, kwargs, match):
        qlen = kwargs.pop("qlen")
        with pytest.raises(ValueError, match=match):
            rel_sinusoid_positions(qlen, **kwargs)
        with pytest.raises(TypeError, match=r"^bi_data must"):
            rel_sinusoid_positions(2, bi_data=1)


class TestRelSinusoidTable:
    def test_conformer_is_interleaved_vaswani_at_the_distances(self, xp, device):
        out = rel_sinusoid_table(3, 6, xp=xp, device=device)
        expected = to_numpy(sinusoidal(np.arange(2, -3, -1), 6, convention="vaswani"))
        assert_close(out, expected, xp=xp, dtype=float_dtype(xp, device), device=device)

    def test_xlnet_is_sin_then_cos(self, xp):
        out = to_numpy(rel_sinusoid_table(2, 4, klen=3, convention="xlnet", xp=xp))
        d = np.arange(3, -2, -1.0)[:, None]
        w = 10000.0 ** (-np.arange(0, 4, 2) / 4)
        np.testing.assert_allclose(out, np.concatenate([np.sin(d * w), np.cos(d * w)], axis=1), atol=1e-15)

    def test_bi_data_shape(self, xp):
        out = to_numpy(rel_sinusoid_table(2, 4, convention="xlnet", bi_data=True, xp=xp))
        assert out.shape == (2, 4, 4)
        np.testing.assert_array_equal(out[1, :, :2], -out[0, :, :2])  # sin(-d) = -sin(d)
        np.testing.assert_array_equal(out[1, :, 2:], out[0, :, 2:])


class TestRelShift:
    @pytest.mark.parametrize("convention", REL_SHIFT_CONVENTIONS)
    def test_equals_the_trick(self, xp, device, convention):
        rng = np.random.default_rng(1)
        for q in range(1, 5):
            for p in range(2, 7):
                x = rng.integers(-99, 100, size=(2, q, p)).astype(np.float64)
                if convention == "transformer_xl":
                    klens = [None, *range(1, p + 1)]
                elif convention == "xlnet":
                    klens = [None, *range(1, p)]
                else:
                    klens = [None, *range(p - 1, p + 4)]
                for k in klens:
                    out = rel_shift(floats(xp, x, device), klen=k, convention=convention)
                    assert_equal(
                        out, trick(x, k, convention), xp=xp, dtype=float_dtype(xp, device), device=device
                    )

    def test_funnel_shift_two(self, xp):
        x = np.arange(30.0).reshape(3, 10)
        out = to_numpy(rel_shift(floats(xp, x), klen=4, convention="xlnet", shift=2))
        np.testing.assert_array_equal(out, trick(x, 4, "xlnet", 2))
        for i in range(3):  # x[i, j + 2 (Q - i)]
            np.testing.assert_array_equal(out[i], x[i, 2 * (3 - i) : 2 * (3 - i) + 4])

    def test_documented_garbage(self, xp):
        # the paper: P = klen = 4 rows, Q = 2: row i valid while j <= P - Q + i, then 0, then row i + 1
        x = np.arange(1.0, 9.0).reshape(2, 4)
        out = to_numpy(rel_shift(floats(xp, x)))
        assert out.tolist() == [[2.0, 3.0, 4.0, 0.0], [5.0, 6.0, 7.0, 8.0]]
        # gemma3n: x[i, j - i] on the band, zeros past it, the previous row for i - j > K + 1 - P
        g = to_numpy(rel_shift(floats(xp, np.arange(1.0, 10.0).reshape(3, 3)), klen=3, convention="gemma3n"))
        assert g.tolist() == [[1.0, 2.0, 3.0], [0.0, 4.0, 5.0], [6.0, 0.0, 7.0]]

    def test_dtype_follows(self, xp):
        x = floats(xp, np.ones((2, 3)), dtype=xp.float32)
        assert rel_shift(x).dtype == xp.float32

    @pytest.mark.parametrize(
        ("kwargs", "match"),
        [
            ({"klen": 6}, "^klen must"),
            ({"shift": 2}, "^shift must"),
            ({"convention": "gemma3n", "klen": 2}, "^klen must"),
            ({"convention": "xlnet", "shift": 5}, "^shift must"),
            ({"convention": "lingvo"}, "^convention must"),
        ],
    )
    def test_errors(self, kwargs, match):
        with pytest.raises(ValueError, match=match):
            rel_shift(np.ones((3, 5)), **kwargs)
        with pytest.raises(ValueError, match=r"^x must"):
            rel_shift(np.ones((3, 0)))
        with pytest.raises(TypeError, match=r"^x must"):
            rel_shift(np.ones((3, 5), dtype=np.int64))


class TestRelAttentionScores:
    def test_against_loops(self, xp, device):
        rng = np.random.default_rng(2)
        h, q, k, d = 2, 3, 3, 4
        p = 2 * k - 1
        qa, ka = rng.standard_normal((1, h, q, d)), rng.standard_normal((1, h, k, d))
        ra, u, v = rng.standard_normal((h, p, d)), rng.standard_normal((h, d)), rng.standard_normal((h, d))
        out = rel_attention_scores(
            floats(xp, qa, device),
            floats(xp, ka, device),
            floats(xp, ra, device),
            u=floats(xp, u, device),
            v=floats(xp, v, device),
        )
        expected = np.zeros((1, h, q, k))
        for a in range(h):
            for i in range(q):
                for j in range(k):  # the distance i - j sits at row (k - 1) - (i - j)
                    row = ra[a, k - 1 - (i - j)]
                    expected[0, a, i, j] = (
                        (qa[0, a, i] + u[a]) @ ka[0, a, j] + (qa[0, a, i] + v[a]) @ row
                    ) / 2.0
        assert_close(out, expected, xp=xp, dtype=float_dtype(xp, device), device=device)

    def test_u_goes_with_keys_and_v_with_the_table(self, xp):
        q, k, r = np.ones((1, 2)), np.asarray([[1.0, 0.0]]), np.asarray([[0.0, 1.0]])
        only_u = to_numpy(
            rel_attention_scores(
                floats(xp, q), floats(xp, k), floats(xp, r), u=floats(xp, np.asarray([2.0, 5.0])), scale=1.0
            )
        )
        only_v = to_numpy(
            rel_attention_scores(
                floats(xp, q), floats(xp, k), floats(xp, r), v=floats(xp, np.asarray([2.0, 5.0])), scale=1.0
            )
        )
        assert only_u.tolist() == [[4.0]] and only_v.tolist() == [[7.0]]  # (1+2)*1 + 1*1, 1*1 + (1+5)*1

    def test_errors(self):
        q = np.ones((2, 3, 4))
        with pytest.raises(ValueError, match=r"^r must"):
            rel_attention_scores(q, q, np.ones((2, 5, 3)))
        with pytest.raises(ValueError, match=r"^k must"):
            rel_attention_scores(q, np.ones((2, 6, 4)), np.ones((2, 5, 4)))
        with pytest.raises(TypeError, match=r"^v must"):
            rel_attention_scores(q, q, np.ones((2, 5, 4)), v=np.ones(4, dtype=np.int64))
