"""fourier_features and fourier_grid against SAM's formula in plain Python (and the mpmath oracle)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from posenc_ref import _compat, fourier_features, fourier_grid
from tests.helpers import assert_close, floats, to_numpy

G = [[1.0, -0.5, 2.25], [0.75, 1.5, -3.0]]


def sam(points, gaussian, shape=None, offset=0.0):
    """SamPositionalEmbedding.forward, written out: [sin z | cos z], z = 2 pi (2c - 1) G."""
    out = []
    for x, y in points:
        cx, cy = x + offset, y + offset
        if shape is not None:
            cx, cy = cx / shape[1], cy / shape[0]
        z = [2 * math.pi * ((2 * cx - 1) * a + (2 * cy - 1) * b) for a, b in zip(*gaussian, strict=True)]
        out.append([math.sin(t) for t in z] + [math.cos(t) for t in z])
    return out


def tolerance(xp):
    return (
        {"atol": 1e-13, "rtol": 0} if _compat.compute_dtype(xp) == xp.float64 else {"atol": 2e-5, "rtol": 0}
    )


class TestFourierFeatures:
    def test_normalised_points(self, xp, device):
        pts = [[0.0, 0.0], [1.0, 1.0], [0.25, 0.75], [0.5, 0.5]]
        out = fourier_features(floats(xp, pts, device), floats(xp, G, device))
        wide = _compat.compute_dtype(xp)
        assert_close(out, sam(pts, G), xp=xp, dtype=wide, device=device, **tolerance(xp))

    def test_centre_is_zero_angle(self, xp):
        out = to_numpy(fourier_features(floats(xp, [[0.5, 0.5]]), floats(xp, G)))
        assert out.tolist() == [[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]]

    def test_x_by_width_y_by_height_with_pixel_shift(self, xp):
        # SAM: coordinates[..., 0] / input_shape[1], coordinates[..., 1] / input_shape[0]
        pts = [[100.0, 700.0], [1000.0, 5.0]]
        out = fourier_features(floats(xp, pts), floats(xp, G), input_shape=(768, 1024), offset=0.5)
        assert_close(out, sam(pts, G, (768, 1024), 0.5), xp=xp, **tolerance(xp))
        swapped = sam(pts, G, (1024, 768), 0.5)
        assert np.abs(to_numpy(out) - np.asarray(swapped)).max() > 0.1

    def test_leading_axes_and_unit_pairs(self, xp):
        rng = np.random.default_rng(3)
        pts = rng.integers(0, 64, size=(2, 3, 2, 2)) / 64
        out = to_numpy(fourier_features(floats(xp, pts), floats(xp, G)))
        assert out.shape == (2, 3, 2, 6)
        np.testing.assert_allclose(out[..., :3] ** 2 + out[..., 3:] ** 2, 1.0, atol=1e-6)

    def test_against_the_oracle(self, xp):
        from posenc_ref_conformance import oracle

        pts = [[3.0, 599.0], [450.0, 300.0]]
        with oracle.working_precision():
            want = [
                [float(v) for v in row]
                for row in oracle.fourier_features.fourier_features(
                    pts, G, input_shape=(600, 900), offset=0.0
                )
            ]
        out = fourier_features(floats(xp, pts), floats(xp, G), input_shape=(600, 900))
        assert_close(out, want, xp=xp, **tolerance(xp))

    def test_float32_in_float32_out(self, xp):
        out = fourier_features(floats(xp, [[0.25, 0.5]], dtype=xp.float32), floats(xp, G, dtype=xp.float32))
        assert out.dtype == xp.float32

    @pytest.mark.parametrize(
        ("kwargs", "name", "error"),
        [
            ({"coords": [[0.0, 1.0, 2.0]]}, "coords", ValueError),
            ({"gaussian": [[1.0], [2.0], [3.0]]}, "gaussian", ValueError),
            ({"input_shape": (0, 4)}, "input_shape", ValueError),
            ({"input_shape": (4, 4, 4)}, "input_shape", ValueError),
            ({"input_shape": (4.0, 4)}, "input_shape", TypeError),
            ({"offset": float("nan")}, "offset", ValueError),
        ],
    )
    def test_invalid(self, xp, kwargs, name, error):
        args = {"coords": [[0.5, 0.5]], "gaussian": [[1.0], [0.5]], **kwargs}
        coords, gaussian = floats(xp, args.pop("coords")), floats(xp, args.pop("gaussian"))
        with pytest.raises(error, match=rf"^{name} must"):
            fourier_features(coords, gaussian, **args)

    def test_integer_coords_rejected(self, xp):
        from tests.helpers import ints

        with pytest.raises(TypeError, match=r"^coords must"):
            fourier_features(ints(xp, [[1, 2]]), floats(xp, G))


class TestFourierGrid:
    def test_pixel_centres_channels_first(self, xp, device):
        out = fourier_grid(floats(xp, G, device), height=3, width=5)
        want = np.empty((6, 3, 5))
        for i in range(3):
            for j in range(5):
                want[:, i, j] = sam([[(j + 0.5) / 5, (i + 0.5) / 3]], G)[0]
        wide = _compat.compute_dtype(xp)
        assert_close(out, want, xp=xp, dtype=wide, device=device, **tolerance(xp))

    def test_equals_features_of_the_shifted_integer_grid(self, xp):
        # SAM's (cumsum(ones) - 0.5) / size is the prompt path's (p + 0.5) / size on integer pixels
        grid = to_numpy(fourier_grid(floats(xp, G), height=4, width=2))
        pts = [[float(j), float(i)] for i in range(4) for j in range(2)]
        feats = to_numpy(fourier_features(floats(xp, pts), floats(xp, G), input_shape=(4, 2), offset=0.5))
        np.testing.assert_allclose(grid.reshape(6, -1).T, feats, atol=1e-6)

    @pytest.mark.parametrize(("kwargs", "name"), [({"height": 0}, "height"), ({"width": -1}, "width")])
    def test_invalid(self, xp, kwargs, name):
        with pytest.raises(ValueError, match=rf"^{name} must"):
            fourier_grid(floats(xp, G), **{"height": 2, "width": 2, **kwargs})
