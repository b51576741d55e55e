"""DETR's sine on a padded image, and the 2-D sincos tables of RT-DETR and OmDet-Turbo, from posenc_ref."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import main, plt, save

import posenc_ref as pr


def make(outdir: Path) -> list[Path]:
    mask = np.zeros((1, 12, 16), dtype=bool)
    mask[0, :8, :11] = True  # an 8 x 11 image padded to 12 x 16
    emb = np.asarray(pr.detr_sine_2d(mask, 16))[0]  # [32, 12, 16]
    fig, axes = plt.subplots(1, 4, figsize=(15, 3.8), gridspec_kw={"width_ratios": [1, 1, 1.3, 1.3]})
    for ax, channel, title in (
        (axes[0], 1, "y block, channel 1"),
        (axes[1], 17, "x block, channel 17"),
    ):
        image = ax.imshow(emb[channel], cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
        ax.contour(mask[0], levels=[0.5], colors="k", linewidths=1.2)
        ax.set_title(title, fontsize=9.5)
        ax.set_xlabel("column")
        ax.set_ylabel("row")
        ax.grid(False)
    fig.colorbar(image, ax=axes[:2], shrink=0.8, pad=0.02)
    h, w = np.arange(3), np.arange(5)
    orders = (("rt_detr", "h-major rows, [h | w]"), ("omdet_turbo", "w-major rows, [w | h]"))
    for ax, (convention, what) in zip(axes[2:], orders, strict=True):
        table = np.asarray(pr.sincos_2d(h, w, 16, convention=convention))
        ax.imshow(table, cmap="RdBu_r", vmin=-1, vmax=1, aspect="auto", interpolation="nearest")
        ax.set_title(f'sincos_2d on a 3 x 5 grid, "{convention}"\n{what}', fontsize=9)
        ax.set_xlabel("channel")
        ax.set_ylabel("row of the table")
        ax.grid(False)
    fig.suptitle(
        "detr_sine_2d(mask, 16) on an 8 x 11 image padded to 12 x 16 (black: the real region)", fontsize=10
    )
    return [save(fig, outdir, "vision_sine")]


if __name__ == "__main__":
    main(make)
