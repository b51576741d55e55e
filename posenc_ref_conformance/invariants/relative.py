"""Relative-position and Shaw invariants: antisymmetry, clipping, identity inside the window, and the
index maps of SpeechT5 (mirrored), VITS (zero row beyond the window) and Granite Speech (offset)."""

from __future__ import annotations

import numpy as np

from ..compare import as_numpy
from .core import expect_true, ints, invariant


@invariant("shaw", "relative-antisymmetry", "relative_positions", seed=501, float_outputs=False)
def antisymmetry(adapter, dtype, rng):
    """relative(q, k) = k - q, and relative(k, q) is its negated transpose."""
    q, k = ints(rng.integers(-1000, 1000, size=7)), ints(rng.integers(-1000, 1000, size=9))
    r = as_numpy(adapter.relative_positions(q, k)).astype(np.int64)
    expect_true(r == k[None, :] - q[:, None], "relative == k - q")
    expect_true(as_numpy(adapter.relative_positions(k, q)).astype(np.int64) == -r.T, "antisymmetry")
    return 0.0


def _t2t(adapter) -> str | None:
    if "tensor2tensor" not in adapter.capabilities.shaw_conventions:
        return "the adapter declares no tensor2tensor convention"
    return None


_SPEECH = ("speecht5", "vits", "granite_speech")


def _speech(adapter) -> tuple[str, ...]:
    return tuple(c for c in _SPEECH if c in adapter.capabilities.shaw_conventions)


@invariant("shaw", "clipping", "shaw_index", seed=502, float_outputs=False, requires=_t2t)
def clipping(adapter, dtype, rng):
    """Indices lie in [0, 2k]; inside [-k, k] the index is relative + k; outside it saturates."""
    rel = ints(np.concatenate([np.arange(-40, 41), rng.integers(-(2**40), 2**40, size=32)]))
    for k in (1, 2, 20):
        idx = as_numpy(adapter.shaw_index(rel, max_distance=k, convention="tensor2tensor")).astype(np.int64)
        expect_true((idx >= 0) & (idx <= 2 * k), f"k={k}: range [0, 2k]")
        inside = np.abs(rel) <= k
        expect_true(idx[inside] == rel[inside] + k, f"k={k}: identity inside the window")
        expect_true(idx[rel < -k] == 0, f"k={k}: saturates at 0")
        expect_true(idx[rel > k] == 2 * k, f"k={k}: saturates at 2k")
    return 0.0


@invariant("shaw", "speech-index-maps", "shaw_index", seed=503, float_outputs=False, variants=_speech)
def speech_index_maps(adapter, dtype, rng, convention):
    """SpeechT5: 2L - 1 - tensor2tensor's (L - 1, L) index (its table mirrored); VITS: r + w inside
    |r| <= w, the zero row 2w + 1 outside; Granite Speech: M - r for in-block distances |r| < c."""
    rel = ints(np.concatenate([np.arange(-12, 13), rng.integers(-40, 41, size=16)]))
    for limit in (1, 2, 5):
        if convention == "speecht5":
            md, expected = limit, 2 * limit - 1 - (np.clip(rel, -(limit - 1), limit) + limit - 1)
        elif convention == "vits":
            md, expected = limit, np.where(np.abs(rel) <= limit, rel + limit, 2 * limit + 1)
        else:  # one block of c = 8 limit + 33 frames: every |r| <= 40 is an in-block distance
            context = 8 * limit + 33
            md, expected = [context, context + limit], context + limit - rel
        idx = as_numpy(adapter.shaw_index(rel, max_distance=md, convention=convention)).astype(np.int64)
        expect_true(idx == expected, f"{convention} max_distance={md}: index map")
        rows = int(adapter.shaw_table_rows(md, convention=convention))
        inside = np.asarray((idx >= 0) & (idx < rows))
        expect_true(inside, f"{convention} max_distance={md}: rows 0 .. {rows - 1}")
    return 0.0
