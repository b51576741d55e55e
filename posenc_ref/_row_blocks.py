"""Row blocks on host arrays: a per-position pipeline run a cache-sized block at a time.

Elementwise work on NumPy and PyTorch CPU arrays is bound by memory traffic:
the exact angle reduction makes about a dozen temporaries per table element,
and a table of a million positions would stream each of them through main
memory.  :func:`in_row_blocks` runs a whole pipeline (the reduction *and* the
caller's layout step: duplication into the RoPE layout, the sinusoidal column
order, a sum over frequencies) on blocks of positions whose temporaries stay
in the cache, writing each block's results into preallocated outputs.

Only host arrays are blocked; lazy and accelerator arrays (JAX, Dask, CuPy,
MLX, PyTorch on a GPU) get the pipeline once on all positions.  The values do
not depend on the blocking as long as the pipeline is elementwise along the
positions (every caller's is), which ``tests/test_rope.py`` and
``tests/test_sinusoidal.py`` check on tables long enough to be split.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from . import _compat

__all__ = ["BLOCK_ELEMENTS", "in_row_blocks", "row_layout"]

#: Table elements (positions x frequencies) per block on host backends: a dozen float64 temporaries
#: of 512 KiB each, about 6 MiB, which fit the shared L3 of current CPUs (the 2-core VM this was
#: measured on: 512 KiB L2 per core, 32 MiB L3), not an L2.
BLOCK_ELEMENTS = 2**16

Pipeline = Callable[[slice | None], tuple[Any, ...]]


def row_layout(positions: Any, xp: Any) -> Any:
    """The positions as a pipeline sees them: flattened to rows on host arrays, else as they are."""
    return xp.reshape(positions, (-1,)) if _compat.is_host_array(positions) else positions


def in_row_blocks(
    pipeline: Pipeline, positions: Any, *, width: int, xp: Any, elements: int = BLOCK_ELEMENTS
) -> tuple[Any, ...]:
    """``pipeline(None)`` reshaped to ``positions``, on host arrays computed a block of rows at a time.

    ``pipeline(rows)`` returns a tuple of arrays for the rows ``rows`` (a
    ``slice``; ``None`` for all) of :func:`row_layout` ``(positions)``, each
    of shape ``rows + tail`` and elementwise along the rows; ``width`` is the
    number of table elements per position (frequencies), which sizes the
    blocks: ``elements`` table elements each (default :data:`BLOCK_ELEMENTS`;
    the float64 addition tables of ``_angles`` ask for fewer).  The outputs have shapes
    ``positions.shape + tail``: the same values as one call.
    """
    if not _compat.is_host_array(positions):
        return pipeline(None)
    rows, step = math.prod(positions.shape), max(1, elements // max(width, 1))
    outs = pipeline(None) if rows <= step else _fill_by_blocks(pipeline, rows, step, xp)
    return tuple(xp.reshape(out, (*positions.shape, *out.shape[1:])) for out in outs)


def _fill_by_blocks(pipeline: Pipeline, rows: int, step: int, xp: Any) -> tuple[Any, ...]:
    """The outputs of ``pipeline`` for ``rows`` rows, preallocated from the first block and filled block
    by block (NumPy and PyTorch CPU allow item assignment)."""
    outs: list[Any] = []
    for start in range(0, rows, step):
        stop = min(start + step, rows)
        parts = pipeline(slice(start, stop))
        if not outs:
            device = _compat.device(parts[0])
            outs = [xp.empty((rows, *p.shape[1:]), dtype=p.dtype, device=device) for p in parts]
        for out, part in zip(outs, parts, strict=True):
            out[start:stop, ...] = part
    return tuple(outs)
