"""The source row each entry of the three relative shifts reads, from posenc_ref.rel_shift."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import main, plt, save

import posenc_ref as pr


def _sources(q: int, p: int, klen: int, convention: str) -> tuple[np.ndarray, np.ndarray]:
    """(row read, query whose row it is) per output entry; -1 for the pad's zeros."""
    code = (np.arange(q)[:, None] * p + np.arange(p)[None, :] + 1).astype(np.float64)  # 1-based
    out = np.asarray(pr.rel_shift(code, klen=klen, convention=convention)).astype(int) - 1
    return np.where(out < 0, -1, out % p), np.where(out < 0, -1, out // p)


def make(outdir: Path) -> list[Path]:
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.6), gridspec_kw={"wspace": 0.35})
    panels = [
        ("transformer_xl, the paper (P = klen = 6, Q = 4)", 4, 6, 6, "transformer_xl"),
        ("transformer_xl, Conformer table (P = 2K - 1 = 11)", 6, 11, 6, "transformer_xl"),
        ("gemma3n, block W = 4 over C = 7 keys (P = 4)", 4, 4, 7, "gemma3n"),
    ]
    for ax, (title, q, p, klen, convention) in zip(axes, panels, strict=True):
        rows, owner = _sources(q, p, klen, convention)
        shown = np.ma.masked_where(rows < 0, rows)
        image = ax.imshow(shown, cmap="viridis", interpolation="nearest")
        for i in range(q):
            for j in range(klen):
                if rows[i, j] < 0:
                    ax.add_patch(plt.Rectangle((j - 0.5, i - 0.5), 1, 1, color="0.8"))
                elif owner[i, j] != i:
                    ax.scatter(j, i, marker="x", color="red", s=40)
                else:
                    ax.text(j, i, str(rows[i, j]), ha="center", va="center", color="white", fontsize=8)
        ax.set_title(title, fontsize=10)
        ax.set_xlabel("key j")
        ax.set_ylabel("query i")
        ax.grid(False)
        fig.colorbar(image, ax=ax, shrink=0.8, label="table row read")
    return [save(fig, outdir, "transformer_xl")]


if __name__ == "__main__":
    main(make)
