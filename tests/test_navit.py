"""navit_position_ids against Idefics2's float32 rule (NumPy float32, written out) and the exact rule."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ref import NAVIT_ARITHMETIC, _compat, navit_position_ids
from tests.helpers import assert_equal, to_numpy


def mask_of(xp, sizes, rows, cols, device=None):
    m = np.zeros((len(sizes), rows, cols), dtype=bool)
    for b, (h, w) in enumerate(sizes):
        m[b, :h, :w] = True
    return _compat.asarray(m, xp=xp, device=device)


def exact_ids(sizes, rows, cols, side):
    out = []
    for h, w in sizes:
        out.append(
            [
                min(i * side // h, side - 1) * side + min(j * side // w, side - 1) if i < h and j < w else 0
                for i in range(rows)
                for j in range(cols)
            ]
        )
    return out


class TestNavitPositionIds:
    def test_full_grid_is_the_identity(self, xp, device):
        out = navit_position_ids(mask_of(xp, [(4, 4)], 4, 4, device), num_patches_per_side=4)
        assert_equal(out, [list(range(16))], xp=xp, dtype=_compat.index_dtype(xp), device=device)

    def test_padded_batch_matches_the_exact_rule_off_boundaries(self, xp):
        sizes = [(3, 5), (2, 2), (1, 4)]  # no i / h equal to a k / 8 except 0: float32 agrees with exact
        out = navit_position_ids(mask_of(xp, sizes, 3, 5), num_patches_per_side=8)
        assert to_numpy(out).tolist() == exact_ids(sizes, 3, 5, 8)

    def test_float32_boundary_rounds_down(self, xp):
        # h = 25, N = 5: fl32(5 * fl32(1/25)) < fl32(1/5), so row 5 goes to bucket 0 (exactly, 1)
        m = mask_of(xp, [(25, 1)], 25, 1)
        f32 = to_numpy(navit_position_ids(m, num_patches_per_side=5))[0] // 5
        exact = to_numpy(navit_position_ids(m, num_patches_per_side=5, arithmetic="exact"))[0] // 5
        assert f32[[4, 5, 6, 10, 20]].tolist() == [0, 0, 1, 1, 3]
        assert exact[[4, 5, 6, 10, 20]].tolist() == [0, 1, 1, 2, 4]
        assert (np.float32(5) * (np.float32(1) / np.float32(25))) < np.float32(0.2)  # the cause, in NumPy

    def test_minicpm_division_is_a_third_rule(self, xp):
        # MiniCPM-V: fl(i / h), correctly rounded: row 5 of 25 on N = 5 is fl(1/5), bucket 1 (Idefics2: 0);
        # N = 19: PyTorch's boundary 11 is one float32 above 12/19: row 12 of 19 stays in bucket 11
        m25, m19 = mask_of(xp, [(25, 1)], 25, 1), mask_of(xp, [(19, 1)], 19, 1)
        assert (
            to_numpy(navit_position_ids(m25, num_patches_per_side=5, arithmetic="float32_divide"))[0, 5] == 5
        )
        assert to_numpy(navit_position_ids(m25, num_patches_per_side=5))[0, 5] == 0
        divide = to_numpy(navit_position_ids(m19, num_patches_per_side=19, arithmetic="float32_divide"))[
            0, 12
        ]
        exact = to_numpy(navit_position_ids(m19, num_patches_per_side=19, arithmetic="exact"))[0, 12]
        assert (divide, exact) == (11 * 19, 12 * 19)

    def test_idefics2_table_against_the_oracle(self, xp):
        from posenc_ref_conformance import oracle

        sizes = [(25, 2), (49, 1), (7, 12)]
        m = mask_of(xp, sizes, 49, 12)
        with oracle.working_precision():
            want = oracle.navit.navit_position_ids(
                to_numpy(m).tolist(), num_patches_per_side=70, arithmetic="float32"
            )
        assert to_numpy(navit_position_ids(m, num_patches_per_side=70)).tolist() == want
        assert want != exact_ids(sizes, 49, 12, 70)  # the case exercises the float32 rounding

    @pytest.mark.parametrize("arithmetic", NAVIT_ARITHMETIC)
    def test_monotone_and_in_range(self, xp, arithmetic):
        sizes = [(17, 9), (30, 30), (1, 1)]
        out = to_numpy(
            navit_position_ids(mask_of(xp, sizes, 30, 30), num_patches_per_side=13, arithmetic=arithmetic)
        )
        assert out.min() >= 0 and out.max() < 169
        for b, (h, w) in enumerate(sizes):
            grid = out[b].reshape(30, 30)[:h, :w]
            assert (np.diff(grid // 13, axis=0) >= 0).all() and (np.diff(grid % 13, axis=1) >= 0).all()

    def test_empty_image_is_all_padding(self, xp):
        out = navit_position_ids(mask_of(xp, [(0, 0), (2, 2)], 2, 2), num_patches_per_side=4)
        assert to_numpy(out).tolist() == [[0, 0, 0, 0], [0, 2, 8, 10]]

    @pytest.mark.parametrize(
        ("kwargs", "name", "error"),
        [
            ({"num_patches_per_side": 0}, "num_patches_per_side", ValueError),
            ({"num_patches_per_side": 2.0}, "num_patches_per_side", TypeError),
            ({"arithmetic": "float64"}, "arithmetic", ValueError),
        ],
    )
    def test_invalid_options(self, xp, kwargs, name, error):
        with pytest.raises(error, match=rf"^{name} must"):
            navit_position_ids(mask_of(xp, [(1, 1)], 1, 1), **{"num_patches_per_side": 4, **kwargs})

    def test_invalid_masks(self, xp):
        with pytest.raises(ValueError, match=r"^patch_attention_mask must"):
            navit_position_ids(_compat.asarray([[True]], xp=xp), num_patches_per_side=2)
        with pytest.raises(TypeError, match=r"^patch_attention_mask must"):
            navit_position_ids(_compat.asarray([[[1.0]]], xp=xp), num_patches_per_side=2)
