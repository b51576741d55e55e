"""The compatibility layer: namespace, device and dtype handling on every backend."""

from __future__ import annotations

import numpy as np
import pytest

from posenc_ref import _compat
from tests.helpers import assert_equal, to_numpy


class TestArrayNamespace:
    def test_resolves_from_array(self, xp):
        x = xp.asarray([1, 2, 3])
        assert _compat.array_namespace(x).__name__ == xp.__name__

    def test_ignores_none_and_scalars(self, xp):
        x = xp.asarray([1.0])
        assert _compat.array_namespace(None, 3, x, 2.5).__name__ == xp.__name__

    def test_explicit_xp_wins(self, xp):
        assert _compat.array_namespace(xp=xp) is xp

    def test_default_is_numpy(self):
        assert _compat.array_namespace().__name__ == "array_api_compat.numpy"

    def test_plain_numpy_module_is_wrapped(self):
        assert _compat.array_namespace(xp=np).__name__ == "array_api_compat.numpy"

    def test_mixing_mlx_with_numpy_is_a_type_error(self):
        mx = pytest.importorskip("mlx.core", reason="mlx is not installed")
        with pytest.raises(TypeError, match=r"^arrays must all come from one library"):
            _compat.array_namespace(mx.array([1]), np.asarray([1]))


class TestCreation:
    def test_arange_dtype_and_device(self, xp, device):
        idx = _compat.index_dtype(xp)
        x = _compat.arange(2, 5, xp=xp, dtype=idx, device=device)
        assert_equal(x, [2, 3, 4], xp=xp, dtype=idx, device=device)

    def test_arange_single_argument(self, xp, device):
        assert_equal(_compat.arange(3, xp=xp, dtype=xp.int32, device=device), [0, 1, 2], xp=xp, device=device)

    def test_zeros_full_asarray(self, xp, device):
        dt = xp.float32
        assert_equal(_compat.zeros((2, 3), xp=xp, dtype=dt, device=device), np.zeros((2, 3)), xp=xp, dtype=dt)
        assert_equal(
            _compat.full((2,), 1.5, xp=xp, dtype=dt, device=device), [1.5, 1.5], xp=xp, device=device
        )
        assert_equal(_compat.asarray([1, 2], xp=xp, dtype=dt, device=device), [1, 2], xp=xp, device=device)

    def test_device_of_created_array_follows_request(self, xp, device):
        x = _compat.zeros((1,), xp=xp, dtype=xp.float32, device=device)
        assert _compat.device(x) == device


class TestDtype:
    def test_float64_when_available(self, xp, library):
        expected = library.value != "jax.numpy:x32"
        assert _compat.has_float64(xp) is expected
        assert _compat.compute_dtype(xp) == (xp.float64 if expected else xp.float32)

    def test_requested_float32_is_honoured(self, xp):
        assert _compat.compute_dtype(xp, requested=xp.float32) == xp.float32

    def test_requested_int_is_rejected(self, xp):
        with pytest.raises(ValueError, match=r"^compute_dtype must be float32 or float64"):
            _compat.compute_dtype(xp, requested=xp.int32)


def test_mlx_device_is_none():
    mx = pytest.importorskip("mlx.core", reason="mlx is not installed")
    assert _compat.device(mx.array([1.0])) is None
    assert _compat.is_mlx_namespace(mx)


def test_to_numpy_roundtrip(xp, device):
    x = _compat.asarray([1.0, -2.0], xp=xp, dtype=xp.float32, device=device)
    out = to_numpy(x)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [1.0, -2.0])
