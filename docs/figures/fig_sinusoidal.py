"""Sinusoidal tables per convention, and the two frequency rules, from posenc_ref."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

from posenc_ref.sinusoidal import SINUSOIDAL_CONVENTIONS, sinusoidal

POSITIONS, DIM = 64, 32


def make(outdir: Path) -> list[Path]:
    return [_tables(outdir), _frequencies(outdir)]


def _tables(outdir: Path) -> Path:
    positions = np.arange(POSITIONS)
    conventions = SINUSOIDAL_CONVENTIONS
    fig, axes = plt.subplots(1, len(conventions), figsize=(13, 3.6), sharey=True)
    for ax, convention in zip(axes, conventions, strict=True):
        # patchtst standardises its whole table of num_positions rows: values near +-0.2
        options = {"num_positions": POSITIONS} if convention == "patchtst" else {}
        table = np.asarray(sinusoidal(positions, DIM, convention=convention, **options))
        image = ax.imshow(table, aspect="auto", cmap="RdBu_r", vmin=-1, vmax=1, interpolation="nearest")
        ax.set_title(f'"{convention}"')
        ax.set_xlabel("column")
        ax.grid(False)
    axes[0].set_ylabel("position p")
    fig.colorbar(image, ax=axes, shrink=0.85, pad=0.01)
    fig.suptitle(f"pr.sinusoidal(arange({POSITIONS}), {DIM}, convention=...)", y=1.02)
    return save(fig, outdir, "sinusoidal_conventions")


def _frequencies(outdir: Path) -> Path:
    one = np.array([1])
    half = DIM // 2
    vaswani = np.asarray(sinusoidal(one, DIM, convention="vaswani"))[0]
    t2t = np.asarray(sinusoidal(one, DIM, convention="tensor2tensor"))[0]
    # At p = 1 the angle of each (sin, cos) pair is the frequency itself (all <= 1 rad).
    w_vaswani = np.arctan2(vaswani[0::2], vaswani[1::2])
    w_t2t = np.arctan2(t2t[:half], t2t[half:])
    k = np.arange(half)
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.semilogy(k, w_vaswani, "o-", color=COLORS[0], ms=4, label=r"vaswani, marian: $10000^{-2k/d}$")
    ax.semilogy(k, w_t2t, "s--", color=COLORS[1], ms=4, label=r"tensor2tensor, fairseq: $10000^{-k/(n-1)}$")
    ax.axhline(1e-4, color="0.5", lw=0.8, ls=":")
    ax.text(0.3, 1.25e-4, r"$10^{-4}$", color="0.4")
    ax.set_xlabel("pair index k")
    ax.set_ylabel(r"frequency $\omega_k$ (rad / position)")
    ax.set_title(f"Frequencies read back from the tables at p = 1, d = {DIM}")
    ax.legend()
    return save(fig, outdir, "sinusoidal_frequencies")


if __name__ == "__main__":
    main(make)
