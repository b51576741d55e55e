"""grid_resize and patch_grid_resize against hand-derived weights, the mpmath oracle and F.interpolate."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from posenc_ref import RESIZE_MODES, _compat, grid_resize, patch_grid_resize
from posenc_ref_conformance import oracle
from posenc_ref_conformance.golden import VECTORS_DIR
from tests.helpers import assert_close, assert_equal, floats, to_numpy
from tests.lazy_helpers import LAZY_BACKENDS, run_lazily


def _table(seed: int, shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(seed).integers(-256, 257, size=shape) / 64.0  # exact in float32


def _oracle(table: np.ndarray, size, **kw) -> np.ndarray:
    with oracle.working_precision(30):
        return np.asarray(oracle.grid_resize.grid_resize(table.tolist(), size, **kw), dtype=np.float64)


def _tol(xp, dtype=None):
    """Separable sums of at most 16 products of weights <= 1.25 in magnitude, on values <= 4."""
    wide = _compat.compute_dtype(xp) if dtype is None else dtype
    return {"rtol": 0, "atol": 1e-13} if wide == xp.float64 else {"rtol": 0, "atol": 4e-5}


CONFIGS = [
    ((4, 4, 3), (6, 6), {"mode": "bicubic"}),
    ((6, 5, 2), (4, 3), {"mode": "bicubic"}),
    ((3, 5, 2), (5, 4), {"mode": "bicubic", "align_corners": True}),
    ((3, 3, 2), (5, 7), {"mode": "bilinear"}),
    ((3, 4, 2), (6, 2), {"mode": "linear", "align_corners": True}),
    ((8, 8, 2), (3, 5), {"mode": "bilinear", "antialias": True}),
    ((8, 7, 2), (5, 5), {"mode": "bicubic", "antialias": True}),
    ((3, 3, 2), (5, 4), {"mode": "bicubic", "antialias": True}),
    ((4, 4, 2), (6, 6), {"mode": "bicubic", "scale_factor": (6.1 / 4, 6.1 / 4)}),
    ((3, 4, 2), (3, 6), {"mode": "bilinear", "scale_factor": (1.25, 1.5)}),
    ((3, 4, 2), (3, 6), {"mode": "bicubic", "scale_factor": (1.25, 1.5)}),
    ((5, 5, 2), (3, 2), {"mode": "nearest"}),
    ((3, 2, 2), (5, 4), {"mode": "nearest"}),
    ((2, 7, 4), (13,), {"mode": "linear"}),
    ((15, 3), (9,), {"mode": "bicubic"}),
]


class TestGridResize:
    @pytest.mark.parametrize(("shape", "size", "kw"), CONFIGS, ids=lambda v: str(v).replace(" ", ""))
    def test_against_oracle(self, xp, device, shape, size, kw):
        table = _table(sum(shape) + len(size), shape)
        out = grid_resize(floats(xp, table, device), size, **kw)
        lead = shape[: len(shape) - 1 - len(size)]
        assert_close(out, _oracle(table, size, **kw), xp=xp, device=device, **_tol(xp))
        assert tuple(out.shape) == (*lead, *size, shape[-1])

    def test_bicubic_weights_by_hand(self, xp):
        # 4 -> 2: source (d + 1/2) 2 - 1/2 = 0.5, 2.5; W(1.5) = -0.09375, W(0.5) = 0.59375 with A = -0.75;
        # d = 0 reads rows (-1 -> 0, 0, 1, 2): 0 (-0.09375 + 0.59375) + 1 (0.59375) + 2 (-0.09375) = 0.40625
        line = floats(xp, [[0.0], [1.0], [2.0], [3.0]])
        assert_close(grid_resize(line, (2,), mode="bicubic"), [[0.40625], [2.59375]], xp=xp)
        assert_close(grid_resize(line, (2,), mode="linear"), [[0.5], [2.5]], xp=xp)

    def test_antialias_weights_by_hand(self, xp):
        # 4 -> 2, triangle widened by 2: centre 1 reads rows 0, 1, 2 at x = -1/4, 1/4, 3/4: weights
        # 3/4, 3/4, 1/4 normalised to 3/7, 3/7, 1/7: 0 + 3/7 + 2/7 = 5/7; centre 3: rows 1, 2, 3 weigh
        # 1/7, 3/7, 3/7
        line = floats(xp, [[0.0], [1.0], [2.0], [3.0]])
        out = grid_resize(line, (2,), mode="linear", antialias=True)
        assert_close(out, [[5 / 7], [16 / 7]], xp=xp)  # 1/7 + 2 (3/7) + 3 (3/7)

    def test_nearest_is_the_legacy_floor(self, xp):
        # 5 -> 3: floor(5 d / 3) = 0, 1, 3 (nearest-exact would read floor((d + 1/2) 5/3) = 0, 2, 4)
        rows = floats(xp, [[0.0], [1.0], [2.0], [3.0], [4.0]])
        assert_equal(grid_resize(rows, (3,), mode="nearest"), [[0.0], [1.0], [3.0]], xp=xp)
        # doubling reads d // 2
        assert_equal(grid_resize(rows[:2, :], (4,), mode="nearest"), [[0.0], [0.0], [1.0], [1.0]], xp=xp)

    def test_scale_factor_map_is_not_the_size_map(self, xp):
        table = _table(3, (4, 4, 2))
        by_size = to_numpy(grid_resize(floats(xp, table), (6, 6)))
        by_factor = to_numpy(grid_resize(floats(xp, table), (6, 6), scale_factor=(6.1 / 4, 6.1 / 4)))
        assert np.abs(by_size - by_factor).max() > 1e-2  # Idefics' (h + 0.1)/n map moves every row

    def test_same_size_is_the_identity(self, xp):
        table = floats(xp, _table(4, (4, 3, 2)))
        for mode in ("bilinear", "bicubic", "nearest"):
            assert_equal(grid_resize(table, (4, 3), mode=mode), to_numpy(table), xp=xp)

    def test_float32_in_float32_out(self, xp):
        table = floats(xp, _table(5, (3, 3, 2)), dtype=xp.float32)
        out = grid_resize(table, (5, 4))
        assert out.dtype == xp.float32
        assert_close(out, _oracle(_table(5, (3, 3, 2)), (5, 4), mode="bicubic"), xp=xp, atol=4e-6, rtol=0)

    def test_torch_f_interpolate(self):
        torch = pytest.importorskip("torch", exc_type=ImportError)
        functional = torch.nn.functional
        rng = np.random.default_rng(7)
        for n, m, h, w in [(4, 4, 7, 5), (6, 3, 2, 5), (5, 5, 5, 5), (1, 3, 4, 1)]:
            for mode in ("nearest", "bilinear", "bicubic"):
                for align, aa in [(False, False), (True, False), (False, True), (True, True)]:
                    if mode == "nearest" and (align or aa):
                        continue
                    table = rng.standard_normal((2, n, m, 3))
                    options = {} if mode == "nearest" else {"align_corners": align}
                    x = torch.from_numpy(table).permute(0, 3, 1, 2)
                    ref = functional.interpolate(x, size=(h, w), mode=mode, antialias=aa, **options)
                    out = grid_resize(table, (h, w), mode=mode, align_corners=align, antialias=aa)
                    np.testing.assert_allclose(out, ref.permute(0, 2, 3, 1).numpy(), rtol=0, atol=1e-13)

    @pytest.mark.parametrize(
        ("kwargs", "error", "pattern"),
        [
            ({"size": (0, 3)}, ValueError, r"^size must be a positive integer; got 0"),
            ({"size": (2, 2, 2)}, ValueError, r"^size must be a sequence of 1 or 2 positive integers"),
            ({"size": 4}, TypeError, r"^size must be a sequence"),
            ({"size": (4, 4), "mode": "cubic"}, ValueError, r"^mode must be one of .*use 'bicubic'"),
            (
                {"size": (4, 4), "mode": "nearest", "align_corners": True},
                ValueError,
                r"^align_corners must be",
            ),
            ({"size": (4, 4), "mode": "nearest", "antialias": True}, ValueError, r"^antialias must be False"),
            ({"size": (4, 4), "align_corners": 1}, TypeError, r"^align_corners must be True or False"),
            ({"size": (5, 5), "scale_factor": (2.0, 2.0)}, ValueError, r"^scale_factor must be factors"),
            ({"size": (5, 5), "scale_factor": (0.0, 2.0)}, ValueError, r"^scale_factor must be > 0"),
            (
                {"size": (5, 5), "scale_factor": (2.0,)},
                ValueError,
                r"^scale_factor must be None or a sequence of 2",
            ),
            ({"size": (5, 5), "scale_factor": 2.0}, TypeError, r"^scale_factor must be None or"),
        ],
    )
    def test_errors(self, xp, kwargs, error, pattern):
        with pytest.raises(error, match=pattern):
            grid_resize(floats(xp, _table(6, (3, 3, 2))), **kwargs)

    def test_table_errors(self, xp):
        with pytest.raises(ValueError, match=r"^table must be an array of shape \[\.\.\., n, m, D\]"):
            grid_resize(floats(xp, _table(6, (3, 2))), (4, 4))
        with pytest.raises(TypeError, match=r"^table must be an array of a real floating dtype"):
            grid_resize(_compat.asarray([[1, 2]], xp=xp, dtype=xp.int32), (3,))


class TestPatchGridResize:
    def test_against_oracle_with_prefix_rows(self, xp, device):
        for prefix, grid, new, lead in [
            (1, (4, 4), (6, 5), (1,)),
            (0, (3, 3), (4, 5), ()),
            (2, (3, 4), (5, 2), ()),
        ]:
            table = _table(prefix + 10 * len(lead), (*lead, prefix + grid[0] * grid[1], 3))
            out = patch_grid_resize(floats(xp, table, device), grid, new, prefix_tokens=prefix)
            with oracle.working_precision(30):
                expected = oracle.grid_resize.patch_grid_resize(
                    table.tolist(), grid, new, prefix_tokens=prefix, mode="bicubic"
                )
            assert_close(out, np.asarray(expected, dtype=np.float64), xp=xp, device=device, **_tol(xp))
            assert_equal(out[..., :prefix, :], table[..., :prefix, :], xp=xp)  # prefix rows copied

    def test_row_major_grid(self, xp):
        # a 2 x 3 grid of values 10 i + j: column 0 of the result is rows 0, 1 of the source's column 0
        grid = np.asarray([[10.0 * i + j] for i in range(2) for j in range(3)])
        out = to_numpy(patch_grid_resize(floats(xp, grid), (2, 3), (2, 3), prefix_tokens=0, mode="nearest"))
        np.testing.assert_array_equal(out, grid)
        out = to_numpy(patch_grid_resize(floats(xp, grid), (2, 3), (4, 3), prefix_tokens=0, mode="nearest"))
        np.testing.assert_array_equal(out[:, 0], [0, 1, 2, 0, 1, 2, 10, 11, 12, 10, 11, 12])

    def test_skip_same_grid_returns_the_table(self, xp):
        table = floats(xp, _table(8, (1, 10, 2)))
        idefics = (3.1 / 3, 3.1 / 3)
        assert patch_grid_resize(table, (3, 3), (3, 3), scale_factor=idefics, skip_same_grid=True) is table
        moved = patch_grid_resize(table, (3, 3), (3, 3), scale_factor=idefics)
        assert np.abs(to_numpy(moved) - to_numpy(table)).max() > 1e-3

    @pytest.mark.parametrize(
        ("kwargs", "error", "pattern"),
        [
            ({"grid": (4, 4)}, ValueError, r"^grid must be rows \* cols = 9"),
            ({"grid": (9,)}, ValueError, r"^grid must be a sequence of 2 positive integers"),
            ({"new_grid": (0, 4)}, ValueError, r"^new_grid must be a positive integer"),
            ({"prefix_tokens": -1}, ValueError, r"^prefix_tokens must be an integer >= 0"),
            ({"skip_same_grid": None}, TypeError, r"^skip_same_grid must be True or False"),
            ({"mode": "area"}, ValueError, r"^mode must be one of"),
        ],
    )
    def test_errors(self, xp, kwargs, error, pattern):
        call = {"grid": (3, 3), "new_grid": (4, 4), **kwargs}
        grid, new = call.pop("grid"), call.pop("new_grid")
        with pytest.raises(error, match=pattern):
            patch_grid_resize(floats(xp, _table(9, (10, 2))), grid, new, **call)


def test_modes_constant():
    assert RESIZE_MODES == ("nearest", "linear", "bilinear", "bicubic")


def test_golden_tolerances_reject_the_neighbouring_conventions():
    """A convention a golden case pins differs from its neighbours by far more than its float32 tolerance."""
    cases = {c["id"]: c for c in json.loads((VECTORS_DIR / "grid_resize.json").read_text())["cases"]}

    def check(case_id: str, **wrong) -> None:
        case = cases[case_id]
        table = np.asarray(case["inputs"]["table"]["decimal"], dtype=np.float64)
        table = table.reshape(case["inputs"]["table"]["shape"])
        kw = {k: case["inputs"][k] for k in ("mode", "align_corners", "antialias")}
        factor = case["inputs"]["scale_factor"]
        kw["scale_factor"] = None if factor is None else list(np.asarray(factor["decimal"], dtype=np.float64))
        right = _oracle(table, case["inputs"]["size"], **kw)
        other = _oracle(table, case["inputs"]["size"], **{**kw, **wrong})
        atol = case["tolerances"]["float32"]["atol"]
        assert np.abs(right - other).max() > 10 * atol, (case_id, wrong)

    check("grid_resize/bicubic/up-4x4-to-6x6", mode="bilinear")
    check("grid_resize/bicubic/up-4x4-to-6x6", align_corners=True)
    check("grid_resize/bicubic/antialias-down-8x8-to-5x5", antialias=False)
    check("grid_resize/bilinear/antialias-down-8x8-to-3x5", antialias=False)
    check("grid_resize/bicubic/scale-factor-4x4-to-6x6", scale_factor=None)
    check("grid_resize/bilinear/up-3x3-to-5x7", align_corners=True)


@LAZY_BACKENDS
def test_lazy_backends(xp, library):
    table = _table(10, (1, 17, 2))
    out = run_lazily(library, lambda t: patch_grid_resize(t, (4, 4), (3, 5)), floats(xp, table))
    with oracle.working_precision(30):
        expected = oracle.grid_resize.patch_grid_resize(
            table.tolist(), (4, 4), (3, 5), prefix_tokens=1, mode="bicubic"
        )
    assert_close(out, np.asarray(expected, dtype=np.float64), xp=xp, **_tol(xp))


def test_weights_are_exact_rationals():
    # the library's weights are the oracle's exact rationals (rounded once): same taps, same values
    from posenc_ref.grid_resize import _axis_weights

    for n, n_out, mode, align, aa in [
        (4, 7, "bicubic", False, False),
        (9, 4, "bicubic", False, True),
        (5, 3, "linear", True, True),
    ]:
        mine = _axis_weights(n, n_out, mode, align, None, aa)
        ref = oracle.grid_resize.axis_weights(n, n_out, mode=mode, align_corners=align, antialias=aa)
        assert [{j: w for j, w in row if w} for row in mine] == [
            {j: w for j, w in r.items() if w} for r in ref
        ]
    assert math.isclose(float(sum(w for _, w in mine[0])), 1.0)
