"""RoPE invariants, per declared layout and dtype.

Relative shifts, norms, position 0, layouts, c^2 + s^2; scalings that must
reduce to the default frequencies (every factor 1, dynamic within its limit, an
explicit YaRN attention factor); rope_heads across the declared head layouts.

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


# --- frequencies: scalings that must reduce to the default -------------------------------------------

_UNIT_DIM = 32
#: Each scaling type with every factor 1: the default frequencies and attention factor 1 (HF semantics).
UNIT_SCALINGS = {
    "linear": {"rope_type": "linear", "factor": 1.0},
    "ntk": {"rope_type": "ntk", "factor": 1.0},
    "yarn": {"rope_type": "yarn", "factor": 1.0, "original_max_position_embeddings": 4096},
    "llama3": {
        "rope_type": "llama3",
        "factor": 1.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    "longrope": {
        "rope_type": "longrope",
        "factor": 1.0,
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 4096,
        "short_factor": [1.0] * (_UNIT_DIM // 2),
        "long_factor": [1.0] * (_UNIT_DIM // 2),
    },
    "proportional": {"rope_type": "proportional", "factor": 1.0, "partial_rotary_factor": 1.0},
}
_DYNAMIC = {"rope_type": "dynamic", "factor": 2.0, "max_position_embeddings": 4096}


def _unit_types(adapter) -> tuple[str, ...]:
    """Every scaling type with a unit form (one result each; an undeclared type is skipped when run)."""
    return tuple(UNIT_SCALINGS)


def _frequencies(adapter, dtype, scaling, seq_len=None, dim=_UNIT_DIM, base=10000.0):
    inv, factor = adapter.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len, dtype=dtype)
    return host(inv), float(host(factor))


def _expect_default(adapter, dtype, scaling, seq_len, what):
    """``scaling`` at ``seq_len`` gives the adapter's own default frequencies and attention factor 1."""
    reference, _ = _frequencies(adapter, dtype, None)
    inv, factor = _frequencies(adapter, dtype, scaling, seq_len)
    # two code paths of one implementation: a blend, a base power and a division each round a few times
    worst = expect_close(inv, reference, 16 * EPS[dtype] * np.abs(reference), f"{what}: inv_freq")
    return max(worst, expect_close(factor, 1.0, 4 * EPS[dtype], f"{what}: attention factor"))


@invariant("rope", "unit-factor-is-default", "rope_frequencies", seed=107, variants=_unit_types)
def unit_factor_is_default(adapter, dtype, rng, kind):
    """Every factor 1: the default frequencies, attention factor 1 (no correction applied regardless)."""
    if kind not in adapter.capabilities.scaling_types:
        msg = f"scaling type {kind!r} not declared"
        raise NotImplementedError(msg)
    # LongRoPE at its original length: a served length past max_position_embeddings is refused by some
    # (vLLM's ModelConfig), and both factor lists are ones here
    seq_len = 4096 if kind == "longrope" else None
    return _expect_default(adapter, dtype, UNIT_SCALINGS[kind], seq_len, f"{kind} with factor 1")


def _declares(kind: str):
    def requires(adapter) -> str | None:
        if kind not in adapter.capabilities.scaling_types:
            return f"needs scaling type {kind!r}"
        declared = adapter.capabilities.variants.get(kind)
        return None if declared is None else f"the adapter computes variant {kind}:{declared}"

    return requires


@invariant(
    "rope", "dynamic-within-limit-is-default", "rope_frequencies", seed=108, requires=_declares("dynamic")
)
def dynamic_within_limit_is_default(adapter, dtype, rng):
    """Dynamic NTK with seq_len at or below max_position_embeddings (or None) leaves the base unchanged."""
    return max(
        _expect_default(adapter, dtype, _DYNAMIC, seq_len, f"dynamic at seq_len {seq_len}")
        for seq_len in (None, 1, 2048, 4096)
    )


@invariant("rope", "yarn-explicit-attention-factor", "rope_frequencies", seed=109, requires=_declares("yarn"))
def yarn_explicit_attention_factor(adapter, dtype, rng):
    """An explicit YaRN attention_factor comes back unchanged, whatever factor and mscale keys say."""
    worst = 0.0
    for given in (0.5, 1.0, 1.25, 2.0):
        scaling = {
            "rope_type": "yarn",
            "factor": 8.0,
            "original_max_position_embeddings": 4096,
            "mscale": 1.0,
            "mscale_all_dim": 0.5,
            "attention_factor": given,
        }
        _, factor = _frequencies(adapter, dtype, scaling, dim=64)
        worst = max(worst, expect_close(factor, given, 2 * EPS[dtype] * given, f"attention_factor={given}"))
    return worst


# --- head layouts ---------------------------------------------------------------------------------------

_B, _H, _S = 2, 3, 5


def _head_layouts(adapter) -> tuple[str, ...]:
    return tuple(h for h in ("bhsd", "bshd", "thd") if h in adapter.capabilities.head_layouts)


def _other_head_layouts(adapter) -> tuple[str, ...]:
    """The declared head layouts past the first (each checked against it); the first alone if only one."""
    declared = _head_layouts(adapter) or ("bhsd",)
    return declared[1:] or declared


def _needs_two_head_layouts(adapter) -> str | None:
    return None if len(_head_layouts(adapter)) >= 2 else "needs two head layouts to compare"


def _to_layout(x_bhsd, positions_bs, head_layout):
    """x [B, H, S, D] and positions [B, S] in ``head_layout``'s order (thd: every token of every sequence)."""
    if head_layout == "bhsd":
        return x_bhsd, positions_bs
    x_bshd = np.ascontiguousarray(np.transpose(x_bhsd, (0, 2, 1, 3)))
    if head_layout == "bshd":
        return x_bshd, positions_bs
    return x_bshd.reshape(-1, x_bhsd.shape[1], x_bhsd.shape[3]), positions_bs.reshape(-1)


def _from_layout(out, head_layout):
    """An output in ``head_layout`` back to [B, H, S, D]."""
    if head_layout == "thd":
        out = out.reshape(_B, _S, _H, -1)
    return out if head_layout == "bhsd" else np.transpose(out, (0, 2, 1, 3))


@invariant(
    "rope",
    "head-layout-transpose",
    "rope_heads",
    seed=110,
    requires=_needs_two_head_layouts,
    variants=_other_head_layouts,
)
def head_layout_transpose(adapter, dtype, rng, head_layout):
    """x transposed into another declared head layout gives the transposed output of the first layout.

    The two layouts may be two code paths: each side's angles carry the class's error, so the allowed
    difference includes twice the angle bound (positions up to 4100).
    """
    reference = _head_layouts(adapter)[0]
    x = (rng.integers(-256, 257, size=(_B, _H, _S, DIM)) / 64).astype(dtype)
    positions = ints([[0, 1, 2, 3, 4], [4096, 4097, 4098, 4099, 4100]])
    layout = _layouts(adapter)[0]

    def rotate(head):
        xs, ps = _to_layout(x, positions, head)
        out = adapter.rope_heads(xs, ps, INV_FREQ, attention_factor=1.0, layout=layout, head_layout=head)
        return _from_layout(host(out), head)

    want, got = rotate(reference), rotate(head_layout)
    angles = positions.astype(np.float64)[:, None, :, None] * INV_FREQ.max()
    bound = phase_tolerance(adapter, "rope_heads", dtype, angles, 0.0)
    tol = 8 * EPS[dtype] * (1 + np.abs(want)) + 4 * np.max(np.abs(x)) * bound
    return expect_close(got, want, tol, f"rope_heads {head_layout} vs {reference}, transposed")
