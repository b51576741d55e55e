"""Float32 answers of the default path (``dtype=float32``): the bound of ``_angles``, at any position.

A float32 table asked of ``sinusoidal`` or ``rope_cos_sin`` is computed from
float64 (addition tables on host arrays that are long enough, else the float64
reduction cast once), so every element is within half a float32 ulp of the
exact value plus ``2**-49`` (:mod:`posenc_ref._angles`, "Float32 answers"); a
scale factor (MLX's ``sqrt(2/d)``, an attention factor) applied in float32 adds
one more float32 ulp at most.  Expected values are mpmath's, from the suite's
oracle (which imports nothing from ``posenc_ref``).
"""

from __future__ import annotations

import functools
from typing import Any

import mpmath
import numpy as np
import pytest

from posenc_ref import SINUSOIDAL_CONVENTIONS, _angles, _compat, rope_cos_sin, rope_frequencies, sinusoidal
from posenc_ref_conformance.oracle import rope as oracle_rope
from posenc_ref_conformance.oracle import sinusoidal as oracle_sinusoidal
from tests.conftest import UNREAD_ON_DASK
from tests.helpers import ints, to_numpy

RNG = np.random.default_rng(17)
#: Position sets: up to 2**20 (spread, with both ends), just below 2**20, the range edges.
POSITIONS = {
    "spread to 2**20": tuple(sorted({0, 2**20, *RNG.integers(0, 2**20, 1400).tolist()})),
    "near 2**20": tuple(range(2**20 - 300, 2**20 + 300)),
    "below 2**62": tuple(range(2**62 - 400, 2**62)),
    "above -2**62": tuple(range(-(2**62) + 1, -(2**62) + 401)),
}
DIM = 8
#: Options per convention: defaults, except MLX's min_freq, whose default 1e-4 the library reads as
#: 10**-4 and the oracle as the float nearest it (5e-21 apart: 6 rad at p = 2**62); 2**-14 is both.
OPTIONS = {"mlx": {"min_freq": 2.0**-14}}
#: The error past the ulps: 2**-49 (derived in _angles) times a scale of at most 1.21 (YaRN's factor
#: here; MLX's is 1/2), plus the reference's own rounding to float64 (2**-53): below 2**-48.
SLACK = 2.0**-48


def within_bound(actual: Any, exact: list[list[Any]], ulps: float) -> float:
    """The largest ``|actual - exact| / (ulps * ulp_f32(exact) + SLACK)``: at most 1 when the bound holds."""
    got = to_numpy(actual).astype(np.float64)
    want = np.asarray([[float(v) for v in row] for row in exact], dtype=np.float64)
    ulp = np.spacing(np.abs(want).astype(np.float32)).astype(np.float64)
    return float(np.max(np.abs(got - want) / (ulps * ulp + SLACK)))


@functools.cache
def sinusoidal_oracle(convention: str, which: str) -> list[list[Any]]:
    with mpmath.workdps(40):
        return oracle_sinusoidal.sinusoidal(POSITIONS[which], DIM, convention, **OPTIONS.get(convention, {}))


def positions_for(convention: str, which: str) -> tuple[int, ...]:
    values = POSITIONS[which]
    if convention == "fairseq" and which == "above -2**62":
        return ()  # fairseq positions start at -(padding_idx + 1)
    return values


@pytest.mark.parametrize("which", list(POSITIONS))
# patchtst standardises a table of num_positions rows (positions 0 .. N - 1 only): tests/test_sinusoidal.py
@pytest.mark.parametrize("convention", [c for c in SINUSOIDAL_CONVENTIONS if c != "patchtst"])
def test_sinusoidal_float32_within_half_an_ulp(xp: Any, convention: str, which: str) -> None:
    values = positions_for(convention, which)
    if not values:
        pytest.skip("fairseq has no positions below -(padding_idx + 1)")
    options = OPTIONS.get(convention, {})
    out = sinusoidal(ints(xp, values), DIM, convention=convention, dtype=xp.float32, **options)
    assert out.dtype == xp.float32
    ulps = 1.5 if convention == "mlx" else 0.5  # MLX's scale sqrt(2/d), applied in float32
    assert within_bound(out, sinusoidal_oracle(convention, which), ulps) <= 1.0


@functools.cache
def rope_oracle(scaling: str, which: str) -> tuple[list[list[Any]], list[list[Any]]]:
    with mpmath.workdps(40):
        config = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
        inv_freq, factor = oracle_rope.rope_frequencies(DIM, base=1e4, scaling=config if scaling else None)
        return oracle_rope.rope_cos_sin(POSITIONS[which], inv_freq, attention_factor=factor)


@pytest.mark.parametrize("which", list(POSITIONS))
@pytest.mark.parametrize("scaling", [False, True], ids=["default", "yarn"])
def test_rope_cos_sin_float32_within_half_an_ulp(xp: Any, scaling: bool, which: str) -> None:
    config = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4096}
    freqs = rope_frequencies(DIM, base=1e4, scaling=config if scaling else None, xp=xp)
    cos, sin = rope_cos_sin(ints(xp, POSITIONS[which]), freqs, dtype=xp.float32)
    assert cos.dtype == sin.dtype == xp.float32
    want_cos, want_sin = rope_oracle(scaling, which)
    ulps = 1.5 if scaling else 0.5  # YaRN's attention factor, applied in float32
    assert within_bound(cos, want_cos, ulps) <= 1.0
    assert within_bound(sin, want_sin, ulps) <= 1.0


@UNREAD_ON_DASK
def test_host_arrays_use_the_addition_tables(xp: Any) -> None:
    # The bound above is the tables' on host arrays (NumPy, PyTorch CPU, array-api-strict) ...
    positions = ints(xp, POSITIONS["below 2**62"])
    tables = _angles.addition_tables(positions, turns=(0.25,), xp=xp, dtype=xp.float32)
    assert (tables is not None) == (_compat.is_host_array(positions) and _compat.has_float64(xp))
    # ... and one position is cheaper without them (tables of 2049 rows for one row).
    assert _angles.addition_tables(ints(xp, [2**20]), turns=(0.25,), xp=xp, dtype=xp.float32) is None


def test_naive_float32_product_misses_the_bound() -> None:
    # The check has teeth: cos/sin of the float32 product m * w, rounded in float32, is far outside it.
    values = POSITIONS["near 2**20"]
    w = np.float32(10000.0 ** (-1 / 3))  # tensor2tensor frequency 1 of 4
    angles = np.asarray(values, dtype=np.float32)[:, None] * w
    naive = np.concatenate([np.sin(angles), np.cos(angles)], axis=-1)
    exact = [[row[1], row[DIM // 2 + 1]] for row in sinusoidal_oracle("tensor2tensor", "near 2**20")]
    assert within_bound(naive, exact, 0.5) > 1e3


@pytest.mark.parametrize("order", ["consecutive", "shuffled"])
def test_tables_do_not_depend_on_the_blocking(xp: Any, order: str) -> None:
    # Each row is combined on its own: blocks of any size give the bits of one call, whether a
    # block reads slices of the tables (consecutive positions inside one row of the high table:
    # steps 1, 16 and the default) or gathers rows (a block across two high rows, steps 37 and
    # 4096, or positions out of order).
    values = list(range(-700, 4300))
    if order == "shuffled":
        values = values[1::2] + values[0::2]
    tables = _angles.addition_tables(ints(xp, values), turns=(0.1, 0.013), xp=xp, dtype=xp.float32)
    if tables is None:
        pytest.skip("the addition tables are for host arrays with float64")
    assert tables.consecutive == (order == "consecutive")
    whole = [to_numpy(t) for t in tables.cos_sin()]
    default = tables.block_elements // tables.width
    assert (
        default & (default - 1) == 0 and tables.low[0].shape[0] % default == 0
    )  # never across two high rows
    for step in (1, 16, 37, default, 4096):
        blocks = [tables.cos_sin(slice(a, min(a + step, 5000))) for a in range(0, 5000, step)]
        for i, table in enumerate(whole):
            assert np.array_equal(np.concatenate([to_numpy(b[i]) for b in blocks]), table)


def test_consecutive_blocks_read_slices_not_gathers(monkeypatch: pytest.MonkeyPatch) -> None:
    # The fast path is taken where it should be: a block of an arange inside one high row does not gather.
    import array_api_compat.numpy as xp

    tables = _angles.addition_tables(np.arange(5000), turns=(0.1, 0.013), xp=xp, dtype=xp.float32)
    step = tables.block_elements // tables.width
    whole = tables.cos_sin()

    def no_take(*args: Any, **kwargs: Any) -> Any:
        msg = "gathered"
        raise AssertionError(msg)

    monkeypatch.setattr(xp, "take", no_take)
    for start in range(0, 5000, step):
        block = tables.cos_sin(slice(start, min(start + step, 5000)))
        assert np.array_equal(block[0], whole[0][start : start + step])
