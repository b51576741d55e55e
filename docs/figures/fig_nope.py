"""Causal masks from positions, and Llama 4's NoPE attention temperature, from posenc_ref."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

import posenc_ref as pr


def make(outdir: Path) -> list[Path]:
    return [_masks(outdir), _temperature(outdir)]


def _masks(outdir: Path) -> Path:
    keys = np.arange(8)
    cases = (
        ("full: queries 0-7", np.arange(8)),
        ("decode step: query 7", np.array([7])),
        ("block: queries 4-7", np.arange(4, 8)),
    )
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.4), gridspec_kw={"width_ratios": [8, 8, 8]})
    for ax, (title, queries) in zip(axes, cases, strict=True):
        mask = np.asarray(pr.causal_mask(queries, keys)).astype(float)
        ax.imshow(
            mask,
            cmap="Blues",
            vmin=0,
            vmax=1.3,
            interpolation="nearest",
            aspect="equal",
            extent=(-0.5, 7.5, queries[-1] + 0.5, queries[0] - 0.5),
        )
        ax.set_title(f"pr.causal_mask: {title}")
        ax.set_xlabel("key position")
        ax.set_ylabel("query position")
        ax.set_xticks(keys)
        ax.set_yticks(queries)
        ax.set_ylim(7.5, -0.5)
        ax.grid(False)
        ax.set_facecolor("0.88")  # grey: rows not built for this call
    fig.text(
        0.5,
        -0.04,
        "blue: may attend (key <= query); white: masked; grey: rows not built by this call",
        ha="center",
        fontsize=9,
    )
    return save(fig, outdir, "nope_mask")


def _temperature(outdir: Path) -> Path:
    positions = np.arange(0, 131072, 64)
    scale = np.asarray(pr.llama4_attn_scale(positions))
    mistral = np.asarray(pr.llama4_attn_scale(positions, floor_scale=16384, convention="mistral"))
    beam = np.asarray(pr.llama4_attn_scale(positions, floor_scale=2048, convention="beam"))
    fig, ax = plt.subplots(figsize=(6.4, 3.4))
    ax.plot(positions, scale, color=COLORS[0], label='"llama4", F = 8192')
    ax.plot(positions, mistral, color=COLORS[1], label='"mistral", F = 16384 (Ministral 3)')
    ax.plot(positions, beam, color=COLORS[2], label='"beam", F = 2048')
    ax.axvline(8191, color="0.6", lw=0.8, ls="--")
    ax.text(9000, 1.02, "p + 1 = 8192", color="0.35", fontsize=8.5)
    ax.set_xlabel("position p")
    ax.set_ylabel("query scale")
    ax.legend(fontsize=8, loc="upper left")
    ax.set_title("pr.llama4_attn_scale(p, convention=...), attn_scale=0.1")
    return save(fig, outdir, "nope_temperature")


if __name__ == "__main__":
    main(make)
