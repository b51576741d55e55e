"""Format conversions shared by the built-in library adapters (no arithmetic on results).

Each helper either recognises a canonical input in a form a library can take
(a scalar offset, a base instead of an ``inv_freq`` array) or raises
:class:`Unsupported`, so the case is skipped with the reason rather than
emulated.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import LAYOUTS, Unsupported

__all__ = ["check_layout", "contiguous_offset", "default_base", "require_default_base", "scaling_kind"]


def contiguous_offset(positions: Any, what: str) -> int:
    """``p0`` when ``positions`` (flattened) are ``p0 + arange(n)``; else :class:`Unsupported`."""
    flat = np.asarray(positions).reshape(-1)
    start = int(flat[0]) if flat.size else 0
    if not np.array_equal(flat, start + np.arange(flat.size)):
        msg = f"{what} takes a scalar offset: positions must be contiguous (offset + arange(L))"
        raise Unsupported(msg)
    return start


def default_base(inv_freq: Any) -> float | None:
    """The base ``b`` with ``inv_freq == b**(-2i/d)`` (``d = 2 len(inv_freq)``), if there is one.

    For libraries that build their frequencies from a base: the case's exact
    ``inv_freq`` is recognised as a default table (to 1e-12 relative) and the
    library is given the base, so it computes its own frequencies.
    """
    inv_freq = np.asarray(inv_freq, dtype=np.float64).reshape(-1)
    dims = 2 * inv_freq.size
    if inv_freq.size < 2 or inv_freq[0] != 1.0 or not np.all(inv_freq > 0) or inv_freq[1] >= 1.0:
        return None
    base = float(inv_freq[1] ** (-dims / 2))
    expected = base ** (-np.arange(0, dims, 2) / dims)
    return base if np.allclose(inv_freq, expected, rtol=1e-12, atol=0) else None


def require_default_base(inv_freq: Any, library: str) -> float:
    """:func:`default_base`, or :class:`Unsupported` naming ``library``."""
    base = default_base(inv_freq)
    if base is None:
        msg = f"{library} builds its frequencies from a base; these are not base**(-2i/d)"
        raise Unsupported(msg)
    return base


def scaling_kind(scaling: dict[str, Any] | None) -> str:
    """The HF ``rope_type`` of ``scaling`` (legacy ``type`` key accepted), ``"default"`` for None."""
    if not scaling:
        return "default"
    return str(scaling.get("rope_type", scaling.get("type", "default")))


def check_layout(layout: str, allowed: tuple[str, ...], library: str) -> str:
    """``layout`` if the library has it; :class:`Unsupported` otherwise.

    An unknown layout string is also :class:`Unsupported`: these libraries take
    no layout argument, so there is nothing of theirs that could reject it.
    """
    if layout not in LAYOUTS:
        msg = f"{library} takes no layout argument to check {layout!r} against"
        raise Unsupported(msg)
    if layout not in allowed:
        msg = f"{library} has no {layout!r} layout here (only {', '.join(allowed)})"
        raise Unsupported(msg)
    return layout
