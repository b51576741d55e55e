"""Learned absolute position tables: a row lookup with an offset convention.

``row = position + offset`` where ``offset`` is 0 (GPT-2, BERT: ``plain``), 2
(OPT, BART: ``opt``), or ``padding_idx + 1`` (RoBERTa, fairseq learned: ``fairseq``).
A row outside ``[0, rows)`` is an error.  ``interpolate_table`` resamples a table
to ``new_length`` rows by linear interpolation with aligned end points
(``t_r = r (L - 1) / (new_length - 1)``).

``token_positions`` numbers the real tokens of a padded sequence: fairseq
``utils.make_positions`` (``cumsum(mask) * mask + padding_idx``) and HF
``create_position_ids_from_input_ids`` (``(cumsum(mask) + past_key_values_length)
* mask + padding_idx``), less their row offset ``padding_idx + 1``: real tokens
get ``cache_length, cache_length + 1, ...``, padding ``-1``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ._numeric import exact, mp

__all__ = ["interpolate_table", "learned", "token_positions"]


def learned(
    table: Sequence[Sequence[float]], positions: Sequence[int], *, offset: int = 0
) -> list[list[float]]:
    """Rows ``table[p + offset]`` (exact copies)."""
    rows = len(table)
    out = []
    for p in positions:
        r = int(p) + offset
        if not 0 <= r < rows:
            msg = f"positions must map to rows in [0, {rows}); position {p} maps to row {r}"
            raise IndexError(msg)
        out.append(list(table[r]))
    return out


def interpolate_table(table: Sequence[Sequence[float]], new_length: int) -> list[list[mp.mpf]]:
    """Linear interpolation with aligned corners from ``len(table)`` to ``new_length`` rows."""
    length = len(table)
    out = []
    for r in range(new_length):
        t = mp.mpf(r * (length - 1)) / (new_length - 1) if new_length > 1 else mp.mpf(0)
        lo = int(mp.floor(t))
        hi = min(lo + 1, length - 1)
        w = t - lo
        out.append([exact(a) * (1 - w) + exact(b) * w for a, b in zip(table[lo], table[hi], strict=True)])
    return out


def token_positions(mask: Sequence[bool | int], *, cache_length: int = 0) -> list[int]:
    """``(cache_length + cumsum(mask)) * mask - 1`` for one sequence (non-zero = real token)."""
    out, count = [], 0
    for m in mask:
        real = int(bool(m))
        count += real
        out.append((cache_length + count) * real - 1)
    return out
