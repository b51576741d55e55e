"""SAM's Fourier grid, NaViT ids of a padded image and the float32 boundary rounding, from posenc_ref."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

import posenc_ref as pr


def make(outdir: Path) -> list[Path]:
    rng = np.random.default_rng(0)
    gaussian = rng.integers(-128, 129, size=(2, 8)) / 64
    grid = np.asarray(pr.fourier_grid(gaussian, height=32, width=48))
    fig, (ax, ax2, ax3) = plt.subplots(1, 3, figsize=(14, 4.2), gridspec_kw={"width_ratios": [1.3, 1.3, 1]})
    image = ax.imshow(grid[0], cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
    ax.set_title("SAM grid, channel 0 (32 x 48)")
    ax.set_xlabel("column j  (x = (j + 1/2) / W)")
    ax.set_ylabel("row i  (y = (i + 1/2) / H)")
    ax.grid(False)
    fig.colorbar(image, ax=ax, shrink=0.8)

    mask = np.zeros((1, 10, 12), dtype=bool)
    mask[0, :7, :9] = True
    ids = np.asarray(pr.navit_position_ids(mask, num_patches_per_side=8))[0].reshape(10, 12)
    shown = np.where(mask[0], ids, np.nan)
    image2 = ax2.imshow(shown, cmap="viridis", interpolation="nearest")
    for i in range(10):
        for j in range(12):
            ax2.text(
                j,
                i,
                str(ids[i, j]),
                ha="center",
                va="center",
                fontsize=6.5,
                color="white" if mask[0, i, j] else "0.5",
            )
    ax2.set_title("NaViT ids: 7 x 9 padded to 10 x 12, N = 8")
    ax2.set_xlabel("patch column")
    ax2.set_ylabel("patch row")
    ax2.grid(False)
    fig.colorbar(image2, ax=ax2, shrink=0.8)

    rows = np.ones((1, 25, 1), dtype=bool)
    f32 = np.asarray(pr.navit_position_ids(rows, num_patches_per_side=5))[0] // 5
    exact = np.asarray(pr.navit_position_ids(rows, num_patches_per_side=5, arithmetic="exact"))[0] // 5
    i = np.arange(25)
    ax3.step(i, exact, where="mid", color=COLORS[0], label="exact: floor(5 i / 25)")
    ax3.step(i, f32, where="mid", color=COLORS[1], ls="--", label='float32 (HF): arithmetic="float32"')
    for k in (5, 10, 15, 20):
        ax3.axvline(k, color="0.7", lw=0.7, ls=":")
    ax3.set_xlabel("patch row i of a 25-row image")
    ax3.set_ylabel("row bucket (N = 5)")
    ax3.set_title("rows 5, 10, 15, 20 land one bucket lower")
    ax3.legend(loc="upper left", fontsize=8)
    return [save(fig, outdir, "vision_features")]


if __name__ == "__main__":
    main(make)
