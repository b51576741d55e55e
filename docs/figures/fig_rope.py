"""RoPE figures from posenc_ref: q.k against distance, inv_freq per scaling, float32 angle error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

from posenc_ref.rope import apply_rope, rope_cos_sin
from posenc_ref.rope_scaling import rope_frequencies

DIM = 128


def make(outdir: Path) -> list[Path]:
    return [_qk_distance(outdir), _scalings(outdir), _angle_error(outdir)]


def _qk(base: float, query_position: int, distances: np.ndarray) -> np.ndarray:
    """<R_m q, R_n k> / d for q = k = 1, query at m, keys at m + distance."""
    freqs = rope_frequencies(DIM, base=base, xp=np)
    ones = np.ones((1, DIM))
    cos_q, sin_q = rope_cos_sin(np.array([query_position]), freqs)
    cos_k, sin_k = rope_cos_sin(query_position + distances, freqs)
    q = apply_rope(ones, cos_q, sin_q)
    k = apply_rope(np.ones((distances.size, DIM)), cos_k, sin_k)
    return (k @ q[0]) / DIM


def _qk_distance(outdir: Path) -> Path:
    distances = np.unique(np.round(np.logspace(0, np.log10(65536), 600)).astype(np.int64))
    distances = np.concatenate([[0], distances])
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 3.9), gridspec_kw={"width_ratios": [1.6, 1]})
    for base, color in ((1e4, COLORS[0]), (5e5, COLORS[1]), (1e6, COLORS[2])):
        ax.plot(distances, _qk(base, 0, distances), color=color, lw=1.1, label=f"base = {base:g}")
    ax.set_xscale("symlog", linthresh=1)
    ax.set_xlabel("distance n - m")
    ax.set_ylabel(r"$\langle R_m q, R_n k\rangle / d$,  q = k = 1")
    ax.set_title(f"RoPE logit against distance (d = {DIM}, layout='half')")
    ax.legend()
    near = np.arange(0, 257)
    ax2.plot(near, _qk(1e4, 0, near), color=COLORS[0], lw=2.5, alpha=0.5, label="query at m = 0")
    ax2.plot(near, _qk(1e4, 100_000, near), color=COLORS[6], lw=0.9, ls="--", label="query at m = 100 000")
    ax2.set_xlabel("distance n - m")
    ax2.set_title("only n - m matters (base 1e4)")
    ax2.legend()
    return save(fig, outdir, "rope_qk_distance")


SCALINGS = {
    "default": None,
    "linear": {"rope_type": "linear", "factor": 8.0},
    "ntk": {"rope_type": "ntk", "factor": 8.0},
    "dynamic (seq_len 32k)": {"rope_type": "dynamic", "factor": 8.0, "max_position_embeddings": 8192},
    "yarn": {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 8192},
    "llama3": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
}


def _scalings(outdir: Path) -> Path:
    base, half = 500000.0, DIM // 2
    pairs = np.arange(half)
    # A made-up smooth LongRoPE profile: 1 for fast pairs, rising to the factor for slow ones.
    long_factor = (1.0 + 7.0 / (1.0 + np.exp(-(pairs - 40) / 5.0))).tolist()
    scalings = dict(SCALINGS)
    scalings["longrope (long factors)"] = {
        "rope_type": "longrope",
        "short_factor": [1.0] * half,
        "long_factor": long_factor,
        "original_max_position_embeddings": 8192,
        "max_position_embeddings": 65536,
    }
    default = np.asarray(rope_frequencies(DIM, base=base, xp=np).inv_freq)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12.5, 4.2))
    for (name, scaling), color in zip(scalings.items(), COLORS, strict=False):
        seq_len = 32768 if scaling is not None and scaling["rope_type"] in ("dynamic", "longrope") else None
        freqs = rope_frequencies(DIM, base=base, scaling=scaling, seq_len=seq_len, xp=np)
        inv = np.asarray(freqs.inv_freq)
        style = {
            "color": color,
            "lw": 2.4 if name == "default" else 1.2,
            "ls": "-" if name != "ntk" else "--",
        }
        ax.semilogy(pairs, inv, label=f"{name}  (attention_factor {freqs.attention_factor:.3f})", **style)
        ax2.plot(pairs, default / inv, **style)
    ax.set_xlabel("pair index i")
    ax.set_ylabel(r"inv_freq $\theta_i$")
    ax.set_title(f"pr.rope_frequencies({DIM}, base=5e5, scaling=...), factor 8, L = 8192")
    ax.legend(fontsize=7.8)
    ax2.set_xlabel("pair index i")
    ax2.set_ylabel(r"$\theta_i^{\mathrm{default}} / \theta_i$  (interpolation per pair)")
    ax2.set_title("how much each pair is slowed down")
    return save(fig, outdir, "rope_inv_freq_scalings")


def _angle_error(outdir: Path) -> Path:
    base = 1e4
    positions = np.unique(np.round(np.logspace(0, 24 * np.log10(2), 160)).astype(np.int64))
    freqs64 = rope_frequencies(DIM, base=base, xp=np)
    theta = np.asarray(freqs64.inv_freq)  # float64, each within an ulp of b^(-2i/d)
    # Reference: float64 product and cos/sin; at m <= 2**24 its error is below 2e-9, far under
    # the float32 errors being compared (6e-8 and up).
    angle = positions[:, None].astype(np.float64) * theta[None, :]
    ref_cos, ref_sin = np.cos(angle), np.sin(angle)
    naive_angle = positions[:, None].astype(np.float32) * theta.astype(np.float32)[None, :]
    naive = np.maximum(np.abs(np.cos(naive_angle) - ref_cos), np.abs(np.sin(naive_angle) - ref_sin)).max(
        axis=1
    )
    cos32, sin32 = rope_cos_sin(positions[:, None], freqs64, dtype=np.float32, compute_dtype=np.float32)
    cos32 = np.asarray(cos32)[:, 0, : DIM // 2].astype(np.float64)
    sin32 = np.asarray(sin32)[:, 0, : DIM // 2].astype(np.float64)
    lib = np.maximum(np.abs(cos32 - ref_cos), np.abs(sin32 - ref_sin)).max(axis=1)
    fig, ax = plt.subplots(figsize=(8, 4))
    ax.loglog(
        positions,
        np.maximum(naive, 1e-10),
        color=COLORS[1],
        label="naive float32: cos(float32(m) * float32(theta))",
    )
    ax.loglog(positions, np.maximum(lib, 1e-10), color=COLORS[0], label="posenc_ref, compute_dtype=float32")
    ax.axhline(2.0**-24, color="0.5", lw=0.8, ls=":")
    ax.text(2e5, 2.0**-24 / 2.2, "float32 half-ulp of 1", color="0.4", fontsize=8.5)
    ax.set_xlabel("position m")
    ax.set_ylabel("max |error| of cos, sin over 64 pairs")
    ax.set_title(f"float32 RoPE tables against position (d = {DIM}, base = 1e4)")
    ax.legend(loc="upper left")
    return save(fig, outdir, "rope_float32_angle_error")


if __name__ == "__main__":
    main(make)
