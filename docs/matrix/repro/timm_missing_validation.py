"""timm's RoPE frequency helpers accept parameters that give no valid rotary encoding.

Found by the posenc-ref conformance suite, adapter ``timm`` (timm 1.0.31, torch 2.13.0):
``rope_frequencies/invalid/odd-dim`` and ``rope_frequencies/invalid/base-1``.

Run (any Python with torch and timm; torchvision is not needed)::

    python docs/matrix/repro/timm_missing_validation.py

``timm.layers.freq_bands(num_bands, temperature, step=2)`` is the RoPE inverse frequency
table ``1 / temperature ** (arange(0, num_bands, 2) / num_bands)`` (Su et al. 2021:
``theta_i = base ** (-2i / d)`` for an even head dim ``d``, ``base > 1``).  It returns a
table for an odd ``d`` (4 bands with exponents ``2k / 7`` for ``d = 7``: no head dim has
that table) and for ``base = 1`` (every frequency 1: all pairs rotate alike), where
posenc-ref raises ``ValueError``.  The axial modules do the same:
``RotaryEmbeddingCat(dim=14)`` floors ``dim // 4`` and returns a ``[N, 24]`` embedding on a
2-D grid where ``2 * dim = 28`` is documented, and ``temperature=1`` is accepted too.
(``build_sincos2d_pos_embed`` does check ``dim % 4 == 0``, with an ``assert``, which
``python -O`` removes.)

Issue text (ready to paste)::

    timm: freq_bands / RotaryEmbedding(Cat) accept an odd or non-multiple-of-4 dim and
    temperature <= 1 silently

    freq_bands(7, temperature=10000., step=2) returns 4 bands 10000 ** -(0, 2/7, 4/7, 6/7),
    a table no even head dim has; freq_bands(8, temperature=1., step=2) returns [1, 1, 1, 1]
    (no multi-scale rotation). RotaryEmbeddingCat(dim=14, in_pixels=False).get_embed([4, 4])
    has shape [16, 24], not [16, 28]: dim // 4 = 3 bands per axis are used and 2 channels
    are dropped without a word; RotaryEmbeddingCat(dim=64, temperature=1.0) is accepted.
    Expected: a ValueError naming the parameter, as build_sincos2d_pos_embed already
    asserts dim % 4 == 0. Suggested fix: in freq_bands raise ValueError when step == 2 and
    num_bands is odd, or temperature <= 1 (non-positive temperatures give NaN or
    increasing frequencies); in _RotaryEmbeddingBase.__init__ raise ValueError when
    dim % 4 != 0 (and turn the assert in build_sincos2d_pos_embed into a ValueError).
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


def accepted(label: str, call: object) -> bool:
    """Run ``call``; print what it returned (or raised); True when nothing was raised."""
    try:
        value = call()  # type: ignore[operator]
    except (ValueError, TypeError, AssertionError) as exc:
        print(f"{label}: rejected ({type(exc).__name__}: {exc})")
        return False
    print(f"{label}: accepted, returned {value}")
    return True


def main() -> int:
    timm = pos_embed_sincos()
    found = 0
    # The paper's table exists for an even dim only; for d = 8 it is base ** (-2i/8), i < 4.
    paper_d8 = [10000.0 ** (-2 * i / 8) for i in range(4)]
    print(f"paper, d = 8, base 10000: {[f'{v:.6g}' for v in paper_d8]}")
    found += accepted(
        "freq_bands(7, temperature=10000., step=2)", lambda: timm.freq_bands(7, 10000.0, step=2)
    )
    found += accepted("freq_bands(8, temperature=1., step=2)", lambda: timm.freq_bands(8, 1.0, step=2))
    found += accepted(
        "RotaryEmbeddingCat(dim=14, in_pixels=False).get_embed([4, 4]).shape (2 * dim = 28 documented)",
        lambda: tuple(timm.RotaryEmbeddingCat(14, in_pixels=False).get_embed([4, 4]).shape),
    )
    found += accepted(
        "RotaryEmbeddingCat(dim=64, temperature=1., in_pixels=False).bands",
        lambda: timm.RotaryEmbeddingCat(64, temperature=1.0, in_pixels=False).bands,
    )
    accepted(
        "build_sincos2d_pos_embed([4, 4], dim=14) (checks with an assert)",
        lambda: timm.build_sincos2d_pos_embed([4, 4], dim=14),
    )
    print(f"torch {torch.__version__}; {found} of 4 invalid parameter sets accepted silently")
    return 1 if found else 0


if __name__ == "__main__":
    raise SystemExit(main())
