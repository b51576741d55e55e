"""The T5 bucket map (bidirectional and causal) and a bucket matrix, from posenc_ref."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

import posenc_ref as pr


def make(outdir: Path) -> list[Path]:
    rel = np.arange(-160, 161)
    both = np.asarray(pr.t5_bucket(rel, bidirectional=True))
    causal = np.asarray(pr.t5_bucket(rel, bidirectional=False))
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.2), gridspec_kw={"width_ratios": [1.7, 1]})
    ax.step(rel, both, where="mid", color=COLORS[0], label="bidirectional (encoder)")
    ax.step(rel, causal, where="mid", color=COLORS[1], label="causal (decoder)")
    ax.axhline(16, color=COLORS[0], lw=0.8, ls=":")
    ax.text(-158, 16.4, "bucket 16: never used bidirectionally", color=COLORS[0], fontsize=8.5)
    for x, label in ((-91, "-91"), (91, "91"), (-113, "-113")):
        ax.axvline(x, color="0.6", lw=0.7, ls="--")
        ax.text(x, 33, label, ha="center", fontsize=8, color="0.35")
    ax.set_ylim(-1, 35)
    ax.set_xlabel("relative position  j - i  (key - query)")
    ax.set_ylabel("bucket")
    ax.set_title("pr.t5_bucket(rel, num_buckets=32, max_distance=128)")
    ax.legend(loc=(0.55, 0.22))
    positions = np.arange(48)
    matrix = np.asarray(pr.t5_bucket(pr.relative_positions(positions, positions), bidirectional=True))
    image = ax2.imshow(matrix, cmap="viridis", interpolation="nearest")
    ax2.set_title("bidirectional buckets, 48 x 48")
    ax2.set_xlabel("key j")
    ax2.set_ylabel("query i")
    ax2.grid(False)
    fig.colorbar(image, ax=ax2, shrink=0.85)
    return [save(fig, outdir, "t5_buckets")]


if __name__ == "__main__":
    main(make)
