"""attention(): plain-Python softmax attention, stability, masking and fully-masked rows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import _compat, attention
from tests.helpers import assert_close, floats, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily


def wide_tol(xp):
    """Tolerance for float64 host data on a float32-only backend (inputs rounded to float32)."""
    return {} if _compat.compute_dtype(xp) == xp.float64 else {"rtol": 2e-5, "atol": 2e-5}


def reference(q, k, v, bias=None, mask=None, scale=None):
    """Softmax attention with plain Python floats and math.exp, row by row."""
    q, k, v = np.asarray(q), np.asarray(k), np.asarray(v)
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    lead = np.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    q, k, v = (np.broadcast_to(a, lead + a.shape[-2:]) for a in (q, k, v))
    lq, lk = q.shape[-2], k.shape[-2]
    bias = np.zeros((lq, lk)) if bias is None else bias
    bias = np.broadcast_to(bias, (*lead, lq, lk))
    mask = np.ones((lq, lk), dtype=bool) if mask is None else mask
    mask = np.broadcast_to(mask, (*lead, lq, lk))
    out = np.zeros((*lead, lq, v.shape[-1]))
    weights = np.zeros((*lead, lq, lk))
    for idx in np.ndindex(*lead, lq):
        logits = [
            scale * sum(float(a) * float(b) for a, b in zip(q[idx], k[(*idx[:-1], j)], strict=True))
            + float(bias[(*idx, j)])
            for j in range(lk)
        ]
        live = [j for j in range(lk) if mask[(*idx, j)] and logits[j] != -math.inf]
        if not live:
            continue
        top = max(logits[j] for j in live)
        e = {j: math.exp(logits[j] - top) for j in live}
        total = math.fsum(e.values())
        for j in live:
            weights[(*idx, j)] = e[j] / total
            out[idx] += weights[(*idx, j)] * v[(*idx[:-1], j)]
    return out, weights


def _qkv(seed=0, shape_q=(2, 3, 4, 5), lk=6, dv=3):
    rng = np.random.default_rng(seed)
    q = rng.standard_normal(shape_q)
    k = rng.standard_normal((*shape_q[:-2], lk, shape_q[-1]))
    v = rng.standard_normal((*shape_q[:-2], lk, dv))
    return q, k, v


class TestAttention:
    def test_plain(self, xp, device):
        q, k, v = _qkv()
        out, w = attention(
            floats(xp, q, device), floats(xp, k, device), floats(xp, v, device), return_weights=True
        )
        exp_out, exp_w = reference(q, k, v)
        wide = _compat.compute_dtype(xp)
        assert_close(out, exp_out, xp=xp, dtype=wide, device=device, **wide_tol(xp))
        assert_close(w, exp_w, xp=xp, dtype=wide, device=device, **wide_tol(xp))

    def test_bias_mask_scale(self, xp):
        q, k, v = _qkv(seed=1)
        rng = np.random.default_rng(2)
        bias = rng.standard_normal((3, 4, 6))
        mask = rng.random((4, 6)) > 0.3
        mask[:, 0] = True
        out = attention(
            floats(xp, q),
            floats(xp, k),
            floats(xp, v),
            bias=floats(xp, bias),
            mask=xp.asarray(mask),
            scale=0.7,
        )
        assert_close(out, reference(q, k, v, bias, mask, 0.7)[0], xp=xp, **wide_tol(xp))

    def test_scale_zero_is_uniform(self, xp):
        q, k, v = _qkv(seed=3)
        out = attention(floats(xp, q), floats(xp, k), floats(xp, v), scale=0.0)
        assert_close(out, np.broadcast_to(v.mean(axis=-2, keepdims=True), out.shape), xp=xp, **wide_tol(xp))

    def test_fully_masked_rows_are_zero(self, xp):
        q, k, v = _qkv(seed=4, shape_q=(3, 5))
        mask = np.ones((3, 6), dtype=bool)
        mask[1] = False
        out, w = attention(
            floats(xp, q), floats(xp, k), floats(xp, v), mask=xp.asarray(mask), return_weights=True
        )
        host_out, host_w = to_numpy(out), to_numpy(w)
        assert np.all(host_out[1] == 0.0) and np.all(host_w[1] == 0.0)
        assert np.all(np.isfinite(host_out))
        np.testing.assert_allclose(host_w.sum(-1), [1.0, 0.0, 1.0], rtol=1e-6)

    def test_minus_inf_bias_rows_are_zero(self, xp):
        q, k, v = _qkv(seed=5, shape_q=(2, 5))
        bias = np.zeros((2, 6))
        bias[0] = -np.inf
        out = attention(floats(xp, q), floats(xp, k), floats(xp, v), bias=floats(xp, bias))
        host = to_numpy(out)
        assert np.all(host[0] == 0.0)
        np.testing.assert_allclose(host[1], reference(q[1:], k, v)[0][0], rtol=1e-5)

    def test_large_logits_are_stable(self, xp):
        q, k, v = _qkv(seed=6, shape_q=(4, 5))
        bias = np.full((4, 6), 1.0e4)
        bias[:, 2] += 5.0
        out = attention(
            floats(xp, q, dtype=xp.float32),
            floats(xp, k, dtype=xp.float32),
            floats(xp, v, dtype=xp.float32),
            bias=floats(xp, bias, dtype=xp.float32),
        )
        expected = reference(q.astype(np.float32), k.astype(np.float32), v.astype(np.float32), bias)[0]
        # float32 inputs, float64 (or float32) compute: the 1e4 offset costs ~1e-3 absolute in float32 logits.
        assert_close(out, expected, xp=xp, dtype=xp.float32, rtol=1e-3, atol=1e-3)

    def test_float32_in_float32_out(self, xp, device):
        q, k, v = _qkv(seed=7)
        args = (floats(xp, a, device, dtype=xp.float32) for a in (q, k, v))
        out = attention(*args)
        exp_out = reference(*(a.astype(np.float32) for a in (q, k, v)))[0]
        assert_close(out, exp_out, xp=xp, dtype=xp.float32, device=device, rtol=1e-5, atol=1e-6)

    def test_keys_shared_by_heads_broadcast(self, xp):
        rng = np.random.default_rng(8)
        q = rng.standard_normal((2, 3, 4, 5))
        k = rng.standard_normal((2, 1, 6, 5))
        v = rng.standard_normal((2, 1, 6, 2))
        out = attention(floats(xp, q), floats(xp, k), floats(xp, v))
        assert_close(out, reference(q, k, v)[0], xp=xp, **wide_tol(xp))

    def test_nope_is_permutation_equivariant_without_a_mask(self, xp):
        q, k, v = _qkv(seed=9, shape_q=(7, 4), lk=7)
        perm = np.random.default_rng(10).permutation(7)
        base = to_numpy(attention(floats(xp, q), floats(xp, k), floats(xp, v)))
        permuted_q = attention(floats(xp, q[perm]), floats(xp, k), floats(xp, v))
        assert_close(permuted_q, base[perm], xp=xp, rtol=1e-12 if wide_tol(xp) == {} else 1e-5)
        permuted_kv = attention(floats(xp, q), floats(xp, k[perm]), floats(xp, v[perm]))
        assert_close(
            permuted_kv,
            base,
            xp=xp,
            rtol=1e-12 if wide_tol(xp) == {} else 1e-5,
            atol=1e-12 if wide_tol(xp) == {} else 1e-6,
        )

    @pytest.mark.parametrize(
        ("change", "error", "pattern"),
        [
            ({"k": "short_d"}, ValueError, r"^k must be of shape \[\.\.\., Lk, 5\] \(the head"),
            ({"v": "short_l"}, ValueError, r"^v must be of shape \[\.\.\., 6, Dv\]"),
            ({"q": "int"}, TypeError, r"^q must be an array of a real floating dtype"),
            ({"mask": "float"}, TypeError, r"^mask must be a boolean array"),
            ({"bias": "int"}, TypeError, r"^bias must be an array of a real floating dtype"),
            ({"scale": "str"}, TypeError, r"^scale must be a real number"),
        ],
    )
    def test_errors(self, xp, change, error, pattern):
        q, k, v = _qkv()
        args = {"q": floats(xp, q), "k": floats(xp, k), "v": floats(xp, v)}
        kwargs = {}
        name, what = next(iter(change.items()))
        if what == "short_d":
            args["k"] = args["k"][..., :4]
        elif what == "short_l":
            args["v"] = args["v"][..., :5, :]
        elif what == "int":
            target = _compat.asarray(np.ones((4, 6), dtype=np.int32), xp=xp, dtype=xp.int32)
            if name == "q":
                args["q"] = _compat.asarray(np.ones(q.shape, dtype=np.int32), xp=xp, dtype=xp.int32)
            else:
                kwargs[name] = target
        elif what == "float":
            kwargs["mask"] = floats(xp, np.ones((4, 6)))
        else:
            kwargs["scale"] = "0.5"
        with pytest.raises(error, match=pattern):
            attention(args["q"], args["k"], args["v"], **kwargs)


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    q, k, v = _qkv(seed=12, shape_q=(2, 4, 5))
    mask = np.tril(np.ones((4, 6), dtype=bool), k=2)
    args = (floats(xp, q), floats(xp, k), floats(xp, v), xp.asarray(mask))
    out = run_lazily(library, lambda a, b, c, m: attention(a, b, c, mask=m), *args)
    assert_close(out, reference(q, k, v, mask=mask)[0], xp=xp, **wide_tol(xp))
