"""timm's ``RotaryEmbeddingDinoV3`` accepts ``temperature <= 0`` and returns a NaN embedding.

Found by the posenc-ref conformance suite, adapter ``timm`` (timm 1.0.31, torch 2.13.0):
``rope_2d_cos_sin/invalid-base``.

Run (any Python with torch and timm; torchvision is not needed)::

    python docs/matrix/repro/timm_dinov3_rope_base.py

DINOv3's 2-D RoPE (Simeoni et al. 2025, arXiv:2508.10104; timm's
``RotaryEmbeddingDinoV3``, "numerically matching original") rotates each axis by the angles
``2 pi c / period_k`` with ``period_k = base ** (4k / D)``, ``k < D/4``, ``base > 0``.
``RotaryEmbeddingDinoV3(dim, temperature=0.)`` builds the periods ``0 ** (4k / D)`` =
``[1, 0, 0, ..]`` (and ``NaN`` for a negative temperature) without a word, so every band
but the first divides by zero: ``get_embed`` returns NaN sines and cosines, which reach
the attention logits silently.  posenc-ref raises ``ValueError`` naming ``base``.

Issue text (ready to paste)::

    timm: RotaryEmbeddingDinoV3 accepts temperature <= 0 and returns NaN embeddings

    RotaryEmbeddingDinoV3(16, temperature=0.).periods is [1, 0, 0, 0] and
    get_embed([2, 2]) is NaN in every band but the first; temperature=-100. gives
    periods [1, nan, nan, nan] and the same NaNs. Nothing is raised, so a bad config
    value reaches the attention as NaN. Expected: a ValueError naming temperature
    when it is not > 0. Suggested fix: in RotaryEmbeddingDinoV3.__init__ (or
    _compute_periods) raise ValueError when temperature <= 0.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import pathlib
import sys
import types

import torch


def pos_embed_sincos() -> types.ModuleType:
    """``timm.layers.pos_embed_sincos``; without torchvision, the file itself (no package __init__)."""
    try:
        return importlib.import_module("timm.layers.pos_embed_sincos")
    except ImportError as exc:
        if "torchvision" not in str(exc):
            raise
    for name in [n for n in sys.modules if n == "timm" or n.startswith("timm.")]:
        del sys.modules[name]
    spec = importlib.util.find_spec("timm")
    assert spec is not None and spec.submodule_search_locations, "timm is not installed"
    root = pathlib.Path(next(iter(spec.submodule_search_locations)))
    for name, folder in (("timm", root), ("timm.layers", root / "layers")):
        package = types.ModuleType(name)
        package.__path__ = [str(folder)]
        package.__spec__ = importlib.machinery.ModuleSpec(name, None, is_package=True)
        package.__spec__.submodule_search_locations = [str(folder)]
        sys.modules[name] = package
    return importlib.import_module("timm.layers.pos_embed_sincos")


def main() -> int:
    timm = pos_embed_sincos()
    found = 0
    for temperature in (100.0, 0.0, -100.0):
        try:
            module = timm.RotaryEmbeddingDinoV3(16, temperature=temperature)
            embed = module.get_embed([2, 2])
        except (ValueError, TypeError, AssertionError) as exc:
            print(f"temperature={temperature}: rejected ({type(exc).__name__}: {exc})")
            continue
        nans = int(torch.isnan(embed).sum())
        periods = module.periods.tolist()
        print(f"temperature={temperature}: accepted, periods {periods}, {nans} NaN of {embed.numel()}")
        found += temperature <= 0
    print(f"torch {torch.__version__}; {found} of 2 invalid temperatures accepted silently")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
