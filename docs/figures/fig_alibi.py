"""ALiBi bias matrices, symmetric and causal, and the slopes, from posenc_ref."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

import posenc_ref as pr

L, HEADS, HEAD = 16, 8, 0


def make(outdir: Path) -> list[Path]:
    positions = np.arange(L)
    slopes = pr.alibi_slopes(HEADS, xp=np)
    symmetric = np.asarray(pr.alibi_bias(positions, positions, slopes, form="symmetric"))[HEAD]
    causal = np.asarray(pr.alibi_bias(positions, positions, slopes, form="causal"))[HEAD]
    masked = np.where(np.tril(np.ones((L, L), dtype=bool)), causal, np.nan)
    fig, axes = plt.subplots(1, 3, figsize=(13, 4), gridspec_kw={"width_ratios": [1, 1, 1.1]})
    for ax, data, title in (
        (axes[0], symmetric, 'form="symmetric":  -m |i - j|'),
        (axes[1], masked, 'form="causal" (masked above the diagonal)'),
    ):
        image = ax.imshow(data, cmap="magma", interpolation="nearest")
        ax.set_title(title)
        ax.set_xlabel("key j")
        ax.set_ylabel("query i")
        ax.grid(False)
        fig.colorbar(image, ax=ax, shrink=0.8)
    ax = axes[2]
    for heads, color, marker, size in ((8, COLORS[0], "o", 9), (12, COLORS[1], "s", 4)):
        values = np.asarray(pr.alibi_slopes(heads, xp=np))
        ax.semilogy(
            np.arange(1, heads + 1),
            values,
            marker=marker,
            color=color,
            ls="none",
            ms=size,
            mfc="none" if heads == 8 else color,
            label=f"{heads} heads (recursion)",
        )
    h = np.arange(1, 13)
    ax.semilogy(
        h, 2.0 ** (-8 * h / 12), "x:", color=COLORS[3], label="12 heads, 2^(-8h/12): MLX before #3071"
    )
    ax.set_xlabel("head h")
    ax.set_ylabel("slope m_h")
    ax.set_title("pr.alibi_slopes(num_heads)")
    ax.legend(loc="lower left")
    fig.suptitle(f"ALiBi, head {HEAD + 1} of {HEADS} (m = {float(np.asarray(slopes)[HEAD]):g})", y=1.01)
    return [save(fig, outdir, "alibi_bias")]


if __name__ == "__main__":
    main(make)
