"""Which axis and which frequency drive each channel of the 2-D RoPE tables, from posenc_ref."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

import posenc_ref as pr

HEAD_DIM = 32
#: convention -> (base, the step of one patch along an axis: an index step, or DINOv3's 2/n for n = 16)
SETTINGS = {
    "pixtral": (10000.0, 1.0),
    "gemma4_vision": (100.0, 1.0),
    "dinov3": (100.0, 2.0 / 16),
    "llama4_vision": (10000.0, 1.0),
    "sam2": (10000.0, 1.0),
    "kimi_k25": (10000.0, 1.0),
}


def _rates(convention: str) -> tuple[np.ndarray, np.ndarray]:
    """Angle per patch step of every channel, moving one row and one column (from the tables)."""
    base, step = SETTINGS[convention]
    grid = np.asarray([[0.0, step, 0.0], [0.0, 0.0, step]])  # (0, 0), one row down, one column right
    cos, sin = (np.asarray(t) for t in pr.rope_2d_cos_sin(grid, HEAD_DIM, base=base, convention=convention))
    z = cos + 1j * sin
    return np.abs(np.angle(z[1] * np.conj(z[0]))), np.abs(np.angle(z[2] * np.conj(z[0])))


def make(outdir: Path) -> list[Path]:
    fig, axes = plt.subplots(3, 2, figsize=(12, 10.8), sharey=True)
    channels = np.arange(HEAD_DIM)
    for ax, convention in zip(axes.ravel(), SETTINGS, strict=True):
        row, col = _rates(convention)
        ax.bar(
            channels - 0.2,
            np.where(row > 1e-12, row, np.nan),
            width=0.4,
            color=COLORS[0],
            label="one row down",
        )
        ax.bar(
            channels + 0.2,
            np.where(col > 1e-12, col, np.nan),
            width=0.4,
            color=COLORS[1],
            label="one column right",
        )
        ax.set_yscale("log")
        ax.set_xlabel("channel of the cos/sin table (head_dim = 32)")
        base, step = SETTINGS[convention]
        unit = "patch" if step == 1 else "patch of 16 (step 2/16)"
        ax.set_title(f'convention="{convention}", base {base:g}\nangle change per {unit}')
        for edge in (8, 16, 24):
            ax.axvline(edge - 0.5, color="0.6", lw=0.7, ls="--")
    fig.tight_layout(h_pad=2.0)
    for ax in axes[:, 0]:
        ax.set_ylabel("radians")
    axes[0, 0].legend(loc="upper right", fontsize=8.5)
    return [save(fig, outdir, "rope_2d_channels")]


if __name__ == "__main__":
    main(make)
