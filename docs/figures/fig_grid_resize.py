"""Grid resizing of position tables: the kernels' impulse responses and a 4 x 4 table resized (posenc_ref)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

import posenc_ref as pr


def make(outdir: Path) -> list[Path]:
    fig, axes = plt.subplots(1, 4, figsize=(14, 3.6), gridspec_kw={"width_ratios": [1.6, 1, 1, 1]})
    ax = axes[0]
    impulse = np.zeros((8, 1))
    impulse[3] = 1.0  # one table row of 8, enlarged to 32 rows: each curve is the kernel as sampled
    x = (np.arange(32) + 0.5) * 8 / 32 - 0.5  # the source coordinate of each output row
    for (label, mode, antialias), color in zip(
        [
            ("bicubic (A = -0.75)", "bicubic", False),
            ("bicubic, antialias (A = -0.5)", "bicubic", True),
            ("linear", "linear", False),
            ("nearest (legacy floor)", "nearest", False),
        ],
        COLORS,
        strict=False,
    ):
        row = np.asarray(pr.grid_resize(impulse, (32,), mode=mode, antialias=antialias))[:, 0]
        ax.plot(x, row, drawstyle="steps-mid" if mode == "nearest" else "default", color=color, label=label)
    ax.axhline(0, color="0.6", lw=0.7)
    ax.set_xlabel("source coordinate s = (d + 1/2) n / n' - 1/2")
    ax.set_ylabel("weight of source row 3")
    ax.set_title("pr.grid_resize of a unit row: 8 -> 32 rows")
    ax.set_ylim(-0.2, 1.45)
    ax.legend(loc="upper left")
    i, j = np.meshgrid(np.arange(4), np.arange(4), indexing="ij")
    table = np.stack([np.cos(1.3 * i) * np.sin(0.9 * j + 0.4)], axis=-1)  # one channel of a 4 x 4 grid
    for ax, (title, kw) in zip(
        axes[1:],
        [
            ("bicubic 4 x 4 -> 12 x 12 (ViT)", {}),
            ("bicubic, antialias (DINOv2-reg)", {"antialias": True}),
            ("nearest (Timesformer)", {"mode": "nearest"}),
        ],
        strict=True,
    ):
        image = np.asarray(pr.grid_resize(table, (12, 12), **kw))[..., 0]
        ax.imshow(image, cmap="viridis", vmin=-1.1, vmax=1.1)
        ax.set_title(title)
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    return [save(fig, outdir, "grid_resize")]


if __name__ == "__main__":
    main(make)
