"""Building blocks of the case catalogue: the Case record, array markers, deterministic inputs.

Ids are stable (``function/group/name``); adding a case never renames another.
Free float inputs (x, tables, slopes, q/k/v) are dyadic rationals or float32
values, exactly representable in float32 *and* float64, so a float32 run sees
the same inputs as a float64 run.  Inputs derived from formulas (``inv_freq``)
come from the oracle, rounded once to float64.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

from ... import oracle
from ..notes import add_note

__all__ = ["CASES", "B", "Case", "F", "I"]


class _Array:
    def __init__(self, values: Any) -> None:
        self.values = values


class F(_Array):
    """A float64 array input (exact values)."""


class I(_Array):  # noqa: E742 - short names keep the catalogue readable
    """An int64 array input."""


class B(_Array):
    """A boolean array input."""


@dataclasses.dataclass(frozen=True)
class Case:
    """One golden case; ``error`` = (exception type, parameter named) for invalid inputs.

    ``variant``: the name of a declared variant of the case's topic (see
    ``FunctionSpec.variants``): the expected values follow that variant's formula.
    ``dtypes``: the run dtypes the case is for, where it is not for every dtype of its
    file (the float64 reach sweep past 2**24 + 1); ``None``: the file's.
    """

    id: str
    comment: str
    flags: tuple[str, ...]
    inputs: dict[str, Any]
    error: tuple[str, str] | None = None
    compare: str | None = None
    variant: str | None = None
    dtypes: tuple[str, ...] | None = None

    @property
    def function(self) -> str:
        return self.id.split("/", 1)[0]


def _dyadic(seed: int, shape: tuple[int, ...], *, denominator: int = 64, span: int = 256) -> list[Any]:
    rng = random.Random(seed)

    def build(dims: tuple[int, ...]) -> Any:
        if not dims:
            return rng.randint(-span, span) / denominator
        return [build(dims[1:]) for _ in range(dims[0])]

    return build(shape)


def _freqs(
    dim: int, base: float = 10000.0, scaling: dict[str, Any] | None = None, seq_len: int | None = None
) -> tuple[list[float], float]:
    with oracle.working_precision():
        inv, factor = oracle.rope.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len)
        return [oracle.round_float64(t) for t in inv], oracle.round_float64(factor)


def _float32_cos_sin(positions: list[int], inv: list[float], layout: str) -> tuple[list[Any], list[Any]]:
    with oracle.working_precision():
        cos, sin = oracle.rope.rope_cos_sin(positions, inv, layout=layout)
        return (
            [[oracle.round_float32(v) for v in row] for row in cos],
            [[oracle.round_float32(v) for v in row] for row in sin],
        )


CASES: list[Case] = []


def case(
    id: str,
    comment: str,
    flags: tuple[str, ...] | str,
    error: tuple[str, str] | None = None,
    compare: str | None = None,
    variant: str | None = None,
    dtypes: tuple[str, ...] | None = None,
    **inputs: Any,
) -> None:
    flags = (flags,) if isinstance(flags, str) else tuple(flags)
    if error is not None and "InvalidInput" not in flags:
        flags = (*flags, "InvalidInput")
    CASES.append(Case(id, comment, flags, inputs, error, compare, variant, dtypes))


BIG = [2**20, 2**20 + 1, 2**24 - 1, 2**24, 2**24 + 1]
#: Consecutive runs at large offsets: five positions across 2**20, and across 2**24 (where float32
#: spacing becomes 2: 2**24 + 1 is the first position a float32 cannot hold).
RUN_2E20 = list(range(2**20 - 2, 2**20 + 3))
RUN_2E24 = list(range(2**24 - 2, 2**24 + 3))
ConsecutiveRun = add_note(
    "ConsecutiveRun",
    "NumericalPrecision",
    "Large positions as one consecutive run (p0 + arange(5) across 2**20 or 2**24): what an "
    "implementation that takes a start offset instead of positions (mx.fast.rope, mlx-lm, timm's "
    "grid_offset, megatron, a cache table sliced from p0) can be given, so it is judged where float32 "
    "positions and products lose precision (declared with positions: consecutive).",
)

#: The reach sweep: 0, 1, then 2**k - 1, 2**k, 2**k + 1 for k = 1 .. 24 (float32 spacing doubles at
#: each power of two; 2**24 + 1 is the first position a float32 cannot hold), ascending, unique.
REACH_SWEEP = sorted({0, 1, *(2**k + d for k in range(1, 25) for d in (-1, 0, 1))})
#: The float64 continuation of the sweep: 2**k - 1, 2**k, 2**k + 1 for k = 25 .. 40.
REACH_SWEEP_F64 = [2**k + d for k in range(25, 41) for d in (-1, 0, 1)]
