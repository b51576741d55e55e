"""The compatibility layer: namespace, device and dtype handling on every backend."""

from __future__ import annotations

import inspect

import array_api_compat
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

    def test_namespace_normalizes_itself(self, xp):
        assert _compat.normalize_namespace(xp) is xp

    def test_default_is_numpy(self):
        assert _compat.array_namespace().__name__ == "array_api_compat.numpy"
        assert _compat.default_namespace().__name__ == "array_api_compat.numpy"

    def test_plain_numpy_module_is_wrapped(self):
        assert _compat.normalize_namespace(np).__name__ == "array_api_compat.numpy"

    def test_plain_torch_module_is_wrapped(self):
        torch = pytest.importorskip("torch", reason="torch is not installed", exc_type=ImportError)
        assert _compat.normalize_namespace(torch).__name__ == "array_api_compat.torch"

    def test_non_namespaces_are_none(self):
        import math

        assert _compat.normalize_namespace(math) is None
        assert _compat.normalize_namespace("numpy") is None

    def test_non_arrays_have_no_namespace(self):
        assert _compat.namespace_of([1, 2]) is None
        assert _compat.namespace_of(None) is None
        assert _compat.namespace_of(3) is None


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

    def test_widen_gives_the_index_dtype(self, xp):
        x = _compat.widen(xp.asarray([1, 2], dtype=xp.int8), xp)
        assert x.dtype == _compat.index_dtype(xp)


def test_mlx_device_is_none():
    mx = pytest.importorskip("mlx.core", reason="mlx is not installed", exc_type=ImportError)
    assert _compat.device(mx.array([1.0])) is None
    assert _compat.is_mlx_namespace(mx)


def test_device_is_array_api_compats(xp, device):
    x = _compat.asarray([1.0], xp=xp, dtype=xp.float32, device=device)
    if not _compat.is_mlx_array(x):  # array-api-compat does not know MLX: None (test_mlx_device_is_none)
        assert _compat.device(x) == array_api_compat.device(x)


def test_to_numpy_roundtrip(xp, device):
    x = _compat.asarray([1.0, -2.0], xp=xp, dtype=xp.float32, device=device)
    out = to_numpy(x)
    assert isinstance(out, np.ndarray)
    np.testing.assert_array_equal(out, [1.0, -2.0])


class TestMinMax:
    @pytest.mark.parametrize(
        ("values", "dtype"),
        [
            ([3, -7, 2**62, 0, -(2**63)], "int64"),
            ([5, 1, 9], "int32"),
            ([0.5, -2.25, 1e300, -0.0], "float64"),
            ([7.0], "float32"),
        ],
    )
    def test_the_extremes(self, xp, device, values, dtype):
        if dtype == "float64" and not _compat.has_float64(xp, device):
            pytest.skip(f"{xp.__name__} has no float64 here")
        x = _compat.asarray(values, xp=xp, dtype=getattr(xp, dtype), device=device)
        low, high = _compat.min_max(x, xp)
        assert (low.shape, high.shape) == ((), ())
        assert (float(low), float(high)) == (float(min(values)), float(max(values)))


class TestAstype:
    def test_same_dtype_is_the_same_array(self, xp):
        x = xp.asarray([1.0, 2.0], dtype=xp.float32)
        assert _compat.astype(x, xp.float32, xp=xp) is x

    def test_other_dtype_is_cast(self, xp):
        x = xp.asarray([1, 2], dtype=xp.int32)
        assert_equal(_compat.astype(x, xp.float32, xp=xp), [1.0, 2.0], xp=xp, dtype=xp.float32)


def test_all_lists_every_public_function():
    public = {
        name
        for name, obj in vars(_compat).items()
        if inspect.isfunction(obj) and not name.startswith("_") and obj.__module__ == _compat.__name__
    }
    assert public == set(_compat.__all__)


#: A first call of each encoding on PyTorch, in a fresh interpreter.  array-api-compat's
#: ``broadcast_arrays`` on PyTorch goes through ``torch.broadcast_shapes``, whose first
#: call imports SymPy: 0.5-0.8 s added to the first causal ``alibi_bias`` of a process
#: (and a bimodal benchmark: ~1 ms or ~100 ms, depending on which sample paid it).
_FIRST_CALLS = """
import sys
import torch
import posenc_ref as pr
from array_api_compat import torch as xt
q = torch.arange(3, dtype=torch.int64).reshape(1, 3)
slopes = pr.alibi_slopes(2, xp=xt, dtype=torch.float32)
for form in ("causal", "symmetric"):
    pr.alibi_bias(q, torch.arange(4), slopes, form=form)
pr.alibi_bias(torch.arange(3), torch.arange(4), slopes, form="causal")
freqs = pr.rope_frequencies(8, xp=xt)
cos, sin = pr.rope_cos_sin(torch.arange(5), freqs)
pr.apply_rope(torch.ones((1, 2, 5, 8)), cos, sin)
pr.sinusoidal(torch.arange(5), 8)
pr.t5_bias(torch.arange(4), torch.arange(4), torch.ones((32, 2)))
print(sorted(m for m in ("sympy", "torch.fx.experimental.symbolic_shapes") if m in sys.modules))
"""


def test_first_calls_on_torch_do_not_import_sympy():
    pytest.importorskip("torch", reason="torch is not installed", exc_type=ImportError)
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FIRST_CALLS], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]", f"imported on a first call: {done.stdout.strip()}"
