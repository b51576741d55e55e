"""Shared look for the documentation figures (matplotlib, Agg backend).

Every ``fig_*.py`` beside this file defines ``make(outdir) -> list[Path]`` and draws
from the library itself (``import posenc_ref as pr``); ``docs/_ext/posenc_docs.py``
calls it at build time.  Run one by hand with ``python docs/figures/fig_x.py OUTDIR``.
"""

from __future__ import annotations

import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: A colour-blind-safe cycle (Okabe & Ito).
COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442"]

plt.rcParams.update(
    {
        "figure.dpi": 100,
        # Vector output: text and lines stay sharp at any zoom.  Heat maps (imshow) are
        # embedded as images at their data resolution, drawn without smoothing.
        "savefig.format": "svg",
        "svg.fonttype": "path",  # glyphs as paths: the same look without the fonts installed
        "svg.hashsalt": "posenc-ref",  # stable element ids, so the files are byte-stable
        "svg.image_inline": True,
        "image.interpolation": "nearest",
        "image.interpolation_stage": "data",
        "font.size": 10,
        "axes.titlesize": 10.5,
        "axes.labelsize": 10,
        "axes.grid": True,
        "grid.alpha": 0.3,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "axes.prop_cycle": matplotlib.cycler(color=COLORS),
        "legend.fontsize": 8.5,
        "legend.frameon": False,
        "image.cmap": "viridis",
    }
)


def save(fig: matplotlib.figure.Figure, outdir: Path, name: str) -> Path:
    """Write ``outdir/name.svg`` without a date (byte-stable) and close the figure."""
    path = Path(outdir) / f"{name}.svg"
    fig.savefig(path, bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    return path


def main(make) -> None:  # pragma: no cover - manual use
    outdir = Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    outdir.mkdir(parents=True, exist_ok=True)
    for path in make(outdir):
        print(path)
