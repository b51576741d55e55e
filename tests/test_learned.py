"""learned(), interpolate_table() and token_positions() against hand-written expectations."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import ClassVar

import numpy as np
import pytest

from posenc_ref import LEARNED_OFFSETS, _compat, interpolate_table, learned, token_positions
from tests.conftest import FLOAT64, UNREAD_ON_DASK
from tests.helpers import assert_close, assert_equal, ints

ROWS, DIM = 10, 3
HOST_TABLE = np.arange(ROWS * DIM, dtype=np.float64).reshape(ROWS, DIM) / 8 - 1  # exact in float32


def floats(xp, values, dtype_name="float64", device=None):
    dtype = getattr(xp, dtype_name) if dtype_name != "float64" or _compat.has_float64(xp) else xp.float32
    return _compat.asarray(values, xp=xp, dtype=dtype, device=device)


def lookup(positions, shift):
    """The offset conventions, written out: row = position + shift."""
    rows = [[HOST_TABLE[p + shift].tolist() for p in line] for line in positions]
    return np.asarray(rows)


class TestLearned:
    @pytest.mark.parametrize(
        ("offset", "padding_idx", "shift"),
        [("plain", None, 0), ("opt", None, 2), ("roberta", None, 2), ("roberta", 0, 1), ("roberta", 3, 4)],
    )
    def test_rows_follow_the_offset(self, xp, offset, padding_idx, shift):
        positions = [[0, 1, 2, 3], [5, 0, ROWS - 1 - shift, 4]]
        out = learned(floats(xp, HOST_TABLE), ints(xp, positions), offset=offset, padding_idx=padding_idx)
        assert_equal(out, lookup(positions, shift), xp=xp)

    @pytest.mark.parametrize(("offset", "padding_row"), [("opt", 1), ("roberta", 1)])
    def test_minus_one_is_the_padding_row(self, xp, offset, padding_row):
        out = learned(floats(xp, HOST_TABLE), ints(xp, [-1, 0]), offset=offset)
        assert_equal(out, HOST_TABLE[[padding_row, 2]], xp=xp)

    @pytest.mark.parametrize("shape", [(), (0,), (4,), (2, 3), (2, 1, 2)])
    def test_any_position_shape(self, xp, shape):
        positions = (np.arange(math.prod(shape)) % ROWS).reshape(shape)
        out = learned(floats(xp, HOST_TABLE), ints(xp, positions))
        assert_equal(out, HOST_TABLE[positions], xp=xp)

    @pytest.mark.parametrize("dtype_name", ["float32", FLOAT64, "int32"])
    def test_dtype_and_device_follow_the_table(self, xp, device, dtype_name):
        dtype = getattr(xp, dtype_name)
        table = _compat.asarray(HOST_TABLE * 8, xp=xp, dtype=dtype, device=device)
        out = learned(table, ints(xp, [3, 0], device=device), offset="opt")
        assert_equal(out, HOST_TABLE[[5, 2]] * 8, xp=xp, dtype=dtype, device=device)

    @pytest.mark.parametrize(
        ("offset", "positions", "pattern"),
        [
            ("plain", [0, ROWS], rf"got a maximum of {ROWS}$"),
            (
                "opt",
                [ROWS - 2, 0],
                rf"in \[-2, {ROWS - 3}\] for a table of {ROWS} rows .*got a maximum of {ROWS - 2}$",
            ),
            ("roberta", [0, -3], r"got a minimum of -3$"),
            ("plain", [-1, 2], r"in \[0, 9\] .*got a minimum of -1$"),
        ],
    )
    @UNREAD_ON_DASK
    def test_position_outside_the_table(self, xp, offset, positions, pattern):
        with pytest.raises(ValueError, match=r"^positions must be in") as info:
            learned(floats(xp, HOST_TABLE), ints(xp, positions), offset=offset)
        assert info.match(pattern)

    @pytest.mark.parametrize("shape", [(5,), (2, 3, 4), (0, 3), ()])
    def test_table_must_be_2d_with_rows(self, xp, shape):
        with pytest.raises(ValueError, match=r"^table must be a 2-D array"):
            learned(floats(xp, np.zeros(shape)), ints(xp, [0]))

    def test_non_integer_positions(self, xp):
        with pytest.raises(TypeError, match=r"^positions must"):
            learned(floats(xp, HOST_TABLE), floats(xp, [0.0]))

    def test_unknown_offset(self, xp):
        with pytest.raises(ValueError, match=r"^offset must be one of 'plain', 'opt', 'roberta'; got 'bart'"):
            learned(floats(xp, HOST_TABLE), ints(xp, [0]), offset="bart")

    @pytest.mark.parametrize(
        ("offset", "padding_idx", "error"),
        [("plain", 1, ValueError), ("roberta", -1, ValueError), ("roberta", 1.0, TypeError)],
    )
    def test_bad_padding_idx(self, xp, offset, padding_idx, error):
        with pytest.raises(error, match=r"^padding_idx must"):
            learned(floats(xp, HOST_TABLE), ints(xp, [0]), offset=offset, padding_idx=padding_idx)

    def test_offsets_tuple(self):
        assert LEARNED_OFFSETS == ("plain", "opt", "roberta")


def linear_align_corners(table, n):
    """The align_corners=True rule by hand: row i samples x = i (L-1)/(n-1), exactly."""
    length = len(table)
    out = []
    for i in range(n):
        x = Fraction(i * (length - 1), n - 1) if n > 1 else Fraction(0)
        lo = math.floor(x)
        w = x - lo
        hi = min(lo + 1, length - 1)
        out.append(
            [
                float((1 - w) * Fraction(a) + w * Fraction(b))
                for a, b in zip(table[lo], table[hi], strict=True)
            ]
        )
    return np.asarray(out)


SOURCE = [[0.0, 1.0], [3.0, -2.0], [0.25, 7.0], [-1.0, 0.1], [5.5, 2.0]]


class TestInterpolateTable:
    def test_hand_values(self, xp):
        # [0, 1] stretched to 3 rows, [0, 3] to 4 rows, 3 rows shrunk to 2 (the endpoints).
        assert_close(interpolate_table(floats(xp, [[0.0], [1.0]]), 3), [[0.0], [0.5], [1.0]], xp=xp)
        assert_close(interpolate_table(floats(xp, [[0.0], [3.0]]), 4), [[0.0], [1.0], [2.0], [3.0]], xp=xp)
        assert_close(interpolate_table(floats(xp, [[1.0], [9.0], [2.0]]), 2), [[1.0], [2.0]], xp=xp)

    @pytest.mark.parametrize("new_length", [1, 2, 5, 7, 12, 33])
    @pytest.mark.parametrize("dtype_name", ["float32", "float64"])
    def test_matches_the_formula(self, xp, new_length, dtype_name):
        table = floats(xp, SOURCE, dtype_name)
        out = interpolate_table(table, new_length)
        assert_close(out, linear_align_corners(SOURCE, new_length), xp=xp, dtype=table.dtype)

    def test_endpoints_are_exact(self, xp):
        out = interpolate_table(floats(xp, SOURCE), 1000)
        assert_equal(out[0, :], SOURCE[0], xp=xp)
        assert_equal(out[-1, :], SOURCE[-1], xp=xp)

    def test_single_row_repeats(self, xp):
        assert_equal(interpolate_table(floats(xp, [[2.0, 3.0]]), 3), [[2.0, 3.0]] * 3, xp=xp)

    def test_matches_torch_interpolate(self, xp):
        torch = pytest.importorskip("torch", reason="torch is not installed", exc_type=ImportError)
        src = torch.tensor(SOURCE, dtype=torch.float64)
        ref = torch.nn.functional.interpolate(src.T[None], size=9, mode="linear", align_corners=True)[0].T
        assert_close(interpolate_table(floats(xp, SOURCE), 9), ref.numpy(), xp=xp)

    def test_dtype_and_device_follow(self, xp, device):
        table = _compat.asarray(SOURCE, xp=xp, dtype=xp.float32, device=device)
        out = interpolate_table(table, 7)
        assert_close(out, linear_align_corners(SOURCE, 7), xp=xp, dtype=xp.float32, device=device)

    def test_errors(self, xp):
        with pytest.raises(TypeError, match=r"^table must be an array of a real floating dtype"):
            interpolate_table(ints(xp, [[1, 2]]), 3)
        with pytest.raises(ValueError, match=r"^table must be a 2-D array"):
            interpolate_table(floats(xp, [1.0, 2.0]), 3)
        with pytest.raises(ValueError, match=r"^new_length must be a positive integer; got 0"):
            interpolate_table(floats(xp, SOURCE), 0)
        with pytest.raises(TypeError, match=r"^new_length must be an integer"):
            interpolate_table(floats(xp, SOURCE), 4.0)


def make_positions(tokens, padding_idx, cache_length=0):
    """fairseq utils.make_positions / HF create_position_ids_from_input_ids, by hand."""
    out = []
    for line in tokens:
        count, row = cache_length, []
        for t in line:
            count += t != padding_idx
            row.append(count + padding_idx if t != padding_idx else padding_idx)
        out.append(row)
    return np.asarray(out)


class TestTokenPositions:
    MASK: ClassVar = [[1, 1, 1, 0, 0], [0, 0, 1, 1, 1], [1, 0, 1, 0, 1]]

    @pytest.mark.parametrize("cache_length", [0, 4])
    @pytest.mark.parametrize("padding_idx", [1, 0])
    def test_matches_make_positions(self, xp, cache_length, padding_idx):
        # Tokens: 5 for a real token, padding_idx for padding; positions = rows - (padding_idx + 1).
        tokens = [[5 if m else padding_idx for m in line] for line in self.MASK]
        want = make_positions(tokens, padding_idx, cache_length) - (padding_idx + 1)
        out = token_positions(ints(xp, self.MASK) != 0, cache_length=cache_length)
        assert_equal(out, want, xp=xp, dtype=_compat.index_dtype(xp))

    def test_integer_mask_and_device(self, xp, device):
        mask = _compat.asarray(self.MASK, xp=xp, dtype=xp.int32, device=device)
        want = [[0, 1, 2, -1, -1], [-1, -1, 0, 1, 2], [0, -1, 1, -1, 2]]
        assert_equal(token_positions(mask), want, xp=xp, device=device)

    def test_feeds_learned_opt_like_hf(self, xp):
        # HF OPT: position_ids = cumsum(mask) * mask - 1, embedding row = position + 2.
        out = learned(floats(xp, HOST_TABLE), token_positions(ints(xp, self.MASK) != 0), offset="opt")
        rows = np.cumsum(self.MASK, axis=1) * np.asarray(self.MASK) - 1 + 2
        assert_equal(out, HOST_TABLE[rows], xp=xp)

    def test_errors(self, xp):
        with pytest.raises(TypeError, match=r"^mask must be an array of a bool or integer dtype"):
            token_positions(floats(xp, [1.0, 0.0]))
        with pytest.raises(ValueError, match=r"^mask must be at least 1-dimensional"):
            token_positions(ints(xp, 1) != 0)
        with pytest.raises(ValueError, match=r"^cache_length must be an integer >= 0; got -1"):
            token_positions(ints(xp, [1]) != 0, cache_length=-1)
