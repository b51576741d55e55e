"""RoPE invariants, per declared layout and dtype: relative shifts, norms, position 0, layouts, c^2 + s^2.

Tolerances follow the adapter's declared precision class (:func:`phase_tolerance`):
the exact class's below, widened to the product class's angle bound where
the adapter declares ``"phase": "product"`` (and *beyond precision* where that
bound says nothing).
"""

from __future__ import annotations

import numpy as np

from .core import expect_close, host, ints, invariant, phase_tolerance

EPS = {"float64": 2.0**-53, "float32": 2.0**-24}
DIM = 16
INV_FREQ = 10000.0 ** (-np.arange(0, DIM, 2) / DIM)  # any frequencies will do; default RoPE here
#: Attention factors the cos/sin tables are checked at (1, a YaRN-like one, one below 1).
FACTORS = (1.0, 1.0 + 0.1 * np.log(4.0), 0.75)


def _layouts(adapter) -> tuple[str, ...]:
    """The RoPE layouts the adapter declares, in canonical order."""
    return tuple(layout for layout in ("half", "interleaved") if layout in adapter.capabilities.layouts)


def _needs_both_layouts(adapter) -> str | None:
    return None if len(_layouts(adapter)) == 2 else "needs both the half and the interleaved layout"


def _rotate(adapter, x, positions, layout, dtype, factor=1.0):
    """Row r of x rotated at positions[r], one call per row (kernels with a scalar offset)."""
    x = np.asarray(x, dtype=dtype)
    rows = [
        host(adapter.rope(x[r : r + 1], ints([p]), INV_FREQ, attention_factor=factor, layout=layout))
        for r, p in enumerate(positions)
    ]
    return np.concatenate(rows, axis=0)


def _scores(adapter, q, k, m, n, layout, dtype):
    """q rotated at positions m, k at n (row-wise); their row dot products."""
    rq, rk = _rotate(adapter, q, m, layout, dtype), _rotate(adapter, k, n, layout, dtype)
    return np.sum(rq * rk, axis=-1)


def _shift_check(adapter, dtype, rng, layout, shifts, strict):
    """q_m . k_n against q_{m+s} . k_{n+s}: each side's angles are off by the class's bound."""
    q = rng.integers(-64, 65, size=(6, DIM)) / 32
    k = rng.integers(-64, 65, size=(6, DIM)) / 32
    m, n = ints([0, 1, 5, 9, 30, 2]), ints([0, 3, 2, 40, 7, 2])
    scale = np.linalg.norm(q, axis=-1) * np.linalg.norm(k, axis=-1)
    ref = _scores(adapter, q, k, m, n, layout, dtype)
    worst = 0.0
    for s in shifts:
        angle = (max(m.max(), n.max()) + s) * INV_FREQ.max()
        exact = 1e-5 if dtype == "float32" else 1e-12
        if not strict:  # one rounding of the angle allowed, as for the golden cases below 2**20
            exact = exact + 8 * EPS[dtype] * angle
        tol = scale * 2 * phase_tolerance(adapter, "rope", dtype, angle, exact)
        got = _scores(adapter, q, k, m + s, n + s, layout, dtype)
        worst = max(worst, expect_close(got, ref, tol, f"{layout}: q.k after shifting both by {s}"))
    return worst


@invariant("rope", "relative-shift", "rope", seed=101, variants=_layouts)
def relative_shift(adapter, dtype, rng, layout):
    """q_m . k_n depends on m - n only (shifts up to 4096; one rounding of the angle allowed)."""
    return _shift_check(adapter, dtype, rng, layout, [1, 7, 1000, 4096], strict=False)


@invariant("rope", "relative-shift-large", "rope", seed=102, flags=("LargePosition",), variants=_layouts)
def relative_shift_large(adapter, dtype, rng, layout):
    """The same at shifts 2**20 and 2**24, at the accuracy claim (1e-5 relative in float32)."""
    return _shift_check(adapter, dtype, rng, layout, [2**20, 2**24], strict=True)


@invariant("rope", "norm-preservation", "rope", seed=103, variants=_layouts)
def norm_preservation(adapter, dtype, rng, layout):
    """A rotation keeps the norm of every row (attention factor 1), whatever its angle's accuracy."""
    x = rng.integers(-256, 257, size=(8, DIM)) / 64
    positions = ints([0, 1, 2, 17, 255, 4095, 65536, 1_000_003])
    norm = np.linalg.norm(x, axis=-1)
    got = np.linalg.norm(_rotate(adapter, x, positions, layout, dtype), axis=-1)
    return expect_close(got, norm, norm * 16 * EPS[dtype] + 1e-300, f"{layout}: |R x| vs |x|")


@invariant("rope", "identity-at-zero", "rope", seed=104, variants=_layouts)
def identity_at_zero(adapter, dtype, rng, layout):
    """Position 0 leaves x unchanged."""
    x = rng.integers(-256, 257, size=(3, DIM)) / 64
    got = _rotate(adapter, x, [0, 0, 0], layout, dtype)
    return expect_close(got, x, np.abs(x) * 4 * EPS[dtype], f"{layout}: rotation at position 0")


@invariant("rope", "layout-equivalence", "rope", seed=105, requires=_needs_both_layouts)
def layout_equivalence(adapter, dtype, rng):
    """Interleaved RoPE of P x equals P (half-split RoPE of x), P: channel i -> 2i, i + d/2 -> 2i + 1.

    The two layouts may be two code paths: each side's angles carry the class's
    error, so the allowed difference includes twice the angle bound at the largest
    position (4097).
    """
    x = rng.integers(-256, 257, size=(5, DIM)) / 64
    positions = ints([0, 1, 3, 100, 4097])
    perm = np.empty(DIM, dtype=np.int64)
    perm[0::2], perm[1::2] = (
        np.arange(DIM // 2),
        np.arange(DIM // 2) + DIM // 2,
    )  # interleaved[c] = half[perm[c]]
    half = _rotate(adapter, x, positions, "half", dtype)
    inter = _rotate(adapter, x[:, perm], positions, "interleaved", dtype)
    angles = positions.astype(np.float64)[:, None] * INV_FREQ[np.arange(DIM) % (DIM // 2)][None, :]
    pair = np.abs(x) + np.abs(x[:, (np.arange(DIM) + DIM // 2) % DIM])  # |x_i| + |x_partner|
    angle_term = 2 * pair[:, perm] * phase_tolerance(adapter, "rope", dtype, angles[:, perm], 0.0)
    tol = 8 * EPS[dtype] * (1 + np.abs(half[:, perm])) + angle_term
    return expect_close(inter, half[:, perm], tol, "interleaved(P x) vs P half(x)")


@invariant("rope", "cos-sin-unit", "rope_cos_sin", seed=106, variants=_layouts)
def cos_sin_unit(adapter, dtype, rng, layout):
    """cos**2 + sin**2 = attention_factor**2 at every position, for several attention factors."""
    positions = ints([0, 1, 2, 1000, 4096, 2**20])
    worst = 0.0
    for factor in FACTORS:
        cos, sin = adapter.rope_cos_sin(
            positions, INV_FREQ, attention_factor=float(factor), layout=layout, dtype=dtype
        )
        total = host(cos) ** 2 + host(sin) ** 2
        want = np.full_like(total, float(factor) ** 2)
        worst = max(
            worst, expect_close(total, want, 16 * EPS[dtype] * want, f"{layout}: c^2 + s^2 = {factor:.4g}^2")
        )
    return worst
