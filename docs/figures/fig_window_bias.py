"""The Swin window index as a bias, Swin-V2's log-spaced coordinates, SAM's per-axis rows, from posenc_ref."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from _style import COLORS, main, plt, save

import posenc_ref as pr


def _sam_rows(q: int, k: int, coords: str) -> np.ndarray:
    """SAM's per-axis table row r(i, j): a table whose row r holds r, read back through a unit query."""
    table = np.arange(2 * max(q, k) - 1, dtype=np.float64)[:, None]
    out = pr.decomposed_rel_pos(np.ones((q, 1, 1)), table, np.zeros((1, 1)), k_size=(k, 1), coords=coords)
    return np.asarray(out)[:, 0, :, 0]


def make(outdir: Path) -> list[Path]:
    fig, (ax, ax2, ax3) = plt.subplots(
        1, 3, figsize=(15, 4.6), gridspec_kw={"width_ratios": [1, 1.15, 1], "wspace": 0.45}
    )
    wh, ww = 3, 4
    rows = (2 * wh - 1) * (2 * ww - 1)
    bias = np.asarray(pr.window_bias(np.arange(rows, dtype=np.float64)[:, None], (wh, ww)))[0]
    image = ax.imshow(bias, cmap="viridis", interpolation="nearest")
    for edge in range(ww, wh * ww, ww):
        ax.axhline(edge - 0.5, color="white", lw=0.8)
        ax.axvline(edge - 0.5, color="white", lw=0.8)
    ax.set_title(f"window_bias index, {wh} x {ww} window")
    ax.set_xlabel("key token b = h Ww + w")
    ax.set_ylabel("query token a")
    ax.grid(False)
    fig.colorbar(image, ax=ax, shrink=0.8, label="table row idx(a, b)")

    for color, (window, pretrained) in zip(COLORS, [(4, None), (8, 4), (16, 8)], strict=False):
        coords = np.asarray(pr.swinv2_log_coords(window, pretrained_window_size=pretrained))[:, 0, 0]
        offsets = np.arange(1 - window, window)
        label = f"window {window}" + (f", pretrained {pretrained}" if pretrained else "")
        style = {"ls": "none", "ms": 7, "mfc": "none"} if window == 4 else {"ms": 3}
        ax2.plot(offsets, coords, marker="o", color=color, label=label, **style)
    ax2.axhline(np.log2(9) / 3, color="0.6", lw=0.7, ls="--")
    ax2.text(-14.5, np.log2(9) / 3 + 0.05, "log2(9)/3: offset +-(P - 1)", fontsize=8, color="0.35")
    ax2.set_title("swinv2_log_coords, height axis")
    ax2.set_xlabel("offset dh = h_a - h_b  (x = 8 dh / (P - 1))")
    ax2.set_ylabel("coordinate  sign(x) log2(1 + |x|) / 3")
    ax2.legend(loc="lower right", fontsize=8.5)

    q, k = 8, 6
    f32, exact = _sam_rows(q, k, "float32"), _sam_rows(q, k, "exact")
    image = ax3.imshow(f32, cmap="viridis", interpolation="nearest")
    ys, xs = np.nonzero(f32 != exact)
    ax3.scatter(xs, ys, marker="x", color="red", s=30, label="coords='float32' is the exact floor - 1")
    ax3.set_title(f"decomposed_rel_pos rows, q = {q}, k = {k}")
    ax3.set_xlabel("key j")
    ax3.set_ylabel("query i")
    ax3.grid(False)
    ax3.legend(loc="upper center", bbox_to_anchor=(0.5, -0.12), fontsize=8.5, frameon=False)
    fig.colorbar(image, ax=ax3, shrink=0.8, label="table row r(i, j)")
    return [save(fig, outdir, "window_bias")]


if __name__ == "__main__":
    main(make)
