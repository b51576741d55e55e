"""ALiBi invariants: Toeplitz, shift invariance, blockwise = full, causal-form equivalence, slopes; own
slopes equal the slopes function's; a padded row equals the unpadded one on its real tokens."""

from __future__ import annotations

import numpy as np

from .core import expect_close, expect_true, host, ints, invariant

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}


def _slopes(dtype: str) -> np.ndarray:
    return (2.0 ** (-2.0 * np.arange(1, 5))).astype(dtype)  # the original 4-head slopes, exact powers of two


def _needs_form(form: str):
    def check(adapter) -> str | None:
        return None if form in adapter.capabilities.alibi_forms else f"alibi form {form!r} not supported"

    return check


@invariant("alibi", "toeplitz", "alibi_bias", seed=301, requires=_needs_form("symmetric"))
def toeplitz(adapter, dtype, rng):
    """The symmetric bias is Toeplitz: b[i+1, j+1] = b[i, j]."""
    slopes = _slopes(dtype)
    q, k = ints(range(8)), ints(range(10))
    full = host(adapter.alibi_bias(q, k, slopes, form="symmetric"))
    return expect_close(full[:, 1:, 1:], full[:, :-1, :-1], 0.0, "b[i+1, j+1] vs b[i, j]")


@invariant("alibi", "shift-invariance", "alibi_bias", seed=305, requires=_needs_form("symmetric"))
def shift_invariance(adapter, dtype, rng):
    """Shifting every query and key position by the same amount changes nothing."""
    slopes = _slopes(dtype)
    q, k = ints(range(8)), ints(range(10))
    full = host(adapter.alibi_bias(q, k, slopes, form="symmetric"))
    shifted = host(adapter.alibi_bias(q + 65536, k + 65536, slopes, form="symmetric"))
    return expect_close(shifted, full, 0.0, "bias after shifting every position by 65536")


@invariant("alibi", "blockwise-equals-full", "alibi_bias", seed=302, requires=_needs_form("symmetric"))
def blockwise(adapter, dtype, rng):
    """A block computed from its own positions equals the same slice of the full matrix."""
    slopes = _slopes(dtype)
    q = k = ints(range(64))
    full = host(adapter.alibi_bias(q, k, slopes, form="symmetric"))
    block = host(adapter.alibi_bias(q[40:48], k[8:40], slopes, form="symmetric"))
    return expect_close(block, full[:, 40:48, 8:40], 0.0, "block vs slice of the full bias")


@invariant("alibi", "causal-form-equivalence", "alibi_bias", seed=303, requires=_needs_form("causal"))
def causal_equivalence(adapter, dtype, rng):
    """On k <= q the causal form equals -m|k - q| up to a constant per (head, query) row."""
    slopes = _slopes(dtype)
    q, k = ints(range(3, 11)), ints(range(12))
    causal = host(adapter.alibi_bias(q, k, slopes, form="causal"))
    reference = -slopes.astype(np.float64)[:, None, None] * np.abs(k[None, None, :] - q[None, :, None])
    allowed = k[None, :] <= q[:, None]
    diff = np.where(allowed[None], causal - reference, np.nan)
    row = np.nanmax(diff, axis=-1, keepdims=True)
    spread = np.where(allowed[None], diff - row, 0.0)
    return expect_close(spread, np.zeros_like(spread), 8 * EPS[dtype] * 12, "causal - symmetric within a row")


@invariant("alibi", "slopes-geometric", "alibi_slopes", seed=304)
def slopes_geometric(adapter, dtype, rng):
    """Power-of-two heads: a geometric sequence starting at 2**(-8/n) with that ratio; others extend it."""
    worst = 0.0
    for n in (4, 8, 16):
        s = host(adapter.alibi_slopes(n, max_bias=8.0, dtype=dtype))
        ratio = 2.0 ** (-8.0 / n)
        worst = max(worst, expect_close(s, ratio ** np.arange(1, n + 1), 4 * n * EPS[dtype], f"{n} heads"))
    for n, c in ((12, 8), (20, 16), (6, 4)):
        s = host(adapter.alibi_slopes(n, max_bias=8.0, dtype=dtype))
        head = host(adapter.alibi_slopes(c, max_bias=8.0, dtype=dtype))
        worst = max(
            worst, expect_close(s[:c], head, 4 * c * EPS[dtype], f"{n} heads begin with the {c}-head set")
        )
        expect_true(np.all(s > 0) and np.all(s < 1), f"{n} heads: slopes in (0, 1)")
    return worst


@invariant(
    "alibi",
    "from-heads-uses-the-slopes",
    "alibi_bias_from_heads",
    "alibi_slopes",
    "alibi_bias",
    seed=306,
    requires=_needs_form("symmetric"),
)
def from_heads(adapter, dtype, rng):
    """The bias from a head count equals alibi_bias with alibi_slopes of that head count (6 and 16 heads)."""
    q, k = ints(range(2, 9)), ints(range(10))
    worst = 0.0
    for heads, max_bias in ((6, 8.0), (16, 4.0)):
        own = host(
            adapter.alibi_bias_from_heads(
                q, k, num_heads=heads, max_bias=max_bias, form="symmetric", dtype=dtype
            )
        )
        slopes = np.asarray(host(adapter.alibi_slopes(heads, max_bias=max_bias, dtype=dtype)), dtype=dtype)
        given = host(adapter.alibi_bias(q, k, slopes, form="symmetric"))
        tol = 2 * (heads + 6) * EPS[dtype] * np.abs(given)
        worst = max(worst, expect_close(own, given, tol, f"{heads} heads, max_bias {max_bias}"))
    return worst


@invariant("alibi", "padded-equals-unpadded", "alibi_bias_from_mask", seed=307)
def padded(adapter, dtype, rng):
    """Left or right padding leaves the bias of every real token as in the unpadded sequence; pads get 0."""
    worst = 0.0
    for heads in (4, 12):
        plain = host(
            adapter.alibi_bias_from_mask(np.ones((1, 7), bool), num_heads=heads, max_bias=8.0, dtype=dtype)
        )
        for pads in (1, 3):
            left = np.concatenate([np.zeros((1, pads), bool), np.ones((1, 7), bool)], axis=1)
            for mask, real in ((left, slice(pads, None)), (left[:, ::-1].copy(), slice(0, 7))):
                got = host(adapter.alibi_bias_from_mask(mask, num_heads=heads, max_bias=8.0, dtype=dtype))
                what = f"{heads} heads, {pads} pads {'left' if real.start else 'right'}"
                worst = max(worst, expect_close(got[..., real], plain, 0.0, f"{what}: real tokens"))
                expect_true(got[..., ~mask[0]] == 0, f"{what}: padding keys get 0")
    return worst
