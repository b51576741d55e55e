"""DeBERTa's log bucket against the relative position, and the c2p rows of a self-attention block."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

import posenc_ref as pr


def make(outdir: Path) -> list[Path]:
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.6), gridspec_kw={"wspace": 0.3})
    rel = np.arange(-1200, 1201)
    buckets = np.asarray(pr.deberta_bucket(rel, position_buckets=256, max_relative_positions=512))
    ax.plot(rel, buckets, color=COLORS[0], label="deberta_bucket, 256 / 512")
    ax.plot(rel, rel, color="0.6", lw=0.7, ls="--", label="r (exact up to |r| = 128)")
    ax.axhline(255, color="0.6", lw=0.7, ls=":")
    ax.text(-1150, 262, "bucket 255 at |r| = 511: the row clamp of S = 256", fontsize=8, color="0.35")
    ax.set_ylim(-400, 400)
    ax.set_title("deberta_bucket (query minus key)")
    ax.set_xlabel("relative position r = q - k")
    ax.set_ylabel("bucket b(r)")
    ax.legend(loc="lower right", fontsize=8.5)

    rows = np.asarray(
        pr.deberta_relative_index(
            np.arange(48), np.arange(48), position_buckets=16, max_relative_positions=32
        )
    )
    image = ax2.imshow(rows, cmap="viridis", interpolation="nearest")
    ax2.set_title("deberta_relative_index, 16 / 32, 48 tokens")
    ax2.set_xlabel("key j")
    ax2.set_ylabel("query i")
    ax2.grid(False)
    fig.colorbar(image, ax=ax2, shrink=0.8, label="row of rel_embeddings (c2p = p2c)")
    return [save(fig, outdir, "deberta")]


if __name__ == "__main__":
    main(make)
