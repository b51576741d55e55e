"""Every public function on array-api-strict's devices without 64-bit types.

array-api-strict's ``Device("no_float64")`` (the stand-in for Apple's MPS) has
every dtype but float64 and complex128; ``Device("no_x64")`` (JAX's default)
has no int64, uint64, float64 or complex128 either.  Which types a device has
is the inspection API's answer (``__array_namespace_info__().dtypes(device=...)``),
and ``posenc_ref._compat.has_float64`` / ``index_dtype`` must give it.

Each public function (``posenc_ref.__all__`` and ``RopeFrequencies.from_inv_freq``)
is called with the valid arguments of ``tests/test_fuzz_public_api.py``, moved
to the device: arrays cast to the widest dtypes the device has (float64 to
float32, int64 to int32 where those are missing), ``RopeFrequencies`` rebuilt
around a moved ``inv_freq`` (same exact turns), ``device=`` set to the device
for functions that take one.  The result must come back on that device, and
agree with the reference: the same call on the default device
(``CPU_DEVICE``) with the same float32 (or int32) inputs, whose float64
results (builders without array input) are cast to float32.

Tolerance (float32 results), ``|got - want| <= ATOL + RTOL * |want|``:

* The reference is the float64 value rounded once: within half a float32 ulp
  of the exact one (plus ``2**-49`` for cos/sin: ``posenc_ref._angles``,
  "Float32 answers").
* The float32-exact angle path the device takes has, by its documented bound
  (``posenc_ref._angles`` "Bound"; ``rope_cos_sin`` Notes), absolute error
  about ``2**-26`` from the rounded tail, measured below ``1.2e-7`` up to
  ``2**20`` with the rounding of ``x`` and of cos/sin: so cos/sin tables
  differ from the reference by at most ``1.2e-7 + 2**-25 < 2**-22``
  (:data:`ATOL`, a bound on the values, which are at most 1 in magnitude,
  scaled by an attention factor of 1 in these calls).
* Every other float32 result is a short chain of float32 operations
  (products, sums of a few terms, ``log``/``exp``/``sqrt``/``softmax`` of a
  handful of values) where the reference rounds once; each float32 operation
  costs at most half an ulp and the backends' elementary functions a few ulp,
  so a chain of this length stays within 8 ulp (:data:`RTOL` ``= 8 * 2**-23``).
  Elements near zero get the absolute :data:`ATOL`.
* ``sandwich_bias`` (``dim=8``, two heads) sums 4 cos values, each within
  ``2**-22`` of the reference's, with 3 float32 additions of partial sums
  below 4 (each at most half an ulp of ``[2, 4)``, ``2**-22``), subtracts
  ``dim/2`` and scales by ``num_heads / (8 h) <= 1/4``: at most
  ``7 * 2**-22 / 4 < 2**-21`` absolute (:data:`ATOL_OF`).
* ``detr_sine_2d`` takes sin/cos of normalised positions up to ``2 pi``:
  ``c / (c_last + 1e-6) * 2 pi`` is 3 float32 roundings of a value below
  ``2 pi`` (each at most half an ulp of ``[4, 8)``, ``2**-22``), the division by
  ``dim_t`` (1 for the first pair) one more: the angle is within ``4 * 2**-22``,
  and so is its sine, plus the reference's rounding: below ``2**-19``
  (:data:`ATOL_OF`; measured 2.3e-7, the sine of an angle just below ``2 pi``).

Integer and bool results (indices, buckets, masks, position ids) must be equal.
Measured on these calls: at most 1 ulp, 1.2e-7 absolute (``sandwich_bias``
4.2e-8).

On ``Device("no_x64")`` every function must either give a result on that
device or raise a ``ValueError``/``TypeError`` (never a raw backend error);
all do give one, in int32/float32.
"""

from __future__ import annotations

import inspect
from typing import Any

import array_api_strict
import numpy as np
import pytest

import posenc_ref as pr
from posenc_ref import _compat
from tests.test_fuzz_public_api import _call, _function_names, _templates

# array-api-strict moves arrays between its devices with np.asarray(..., copy=True), which NumPy
# added in 2.0: on older NumPy these tests cannot place an array on a device at all.
pytestmark = pytest.mark.skipif(
    int(np.__version__.split(".")[0]) < 2,
    reason=f"array-api-strict's to_device needs NumPy >= 2 (np.asarray copy=); NumPy {np.__version__} here",
)

xp = array_api_strict
DEFAULT = array_api_strict.Device()  # CPU_DEVICE
NO_FLOAT64 = array_api_strict.Device("no_float64")
NO_X64 = array_api_strict.Device("no_x64")

#: Absolute tolerance (see the module notes): the float32 angle path's bound plus the reference's rounding.
ATOL = 2.0**-22
#: Relative tolerance: 8 float32 ulp for a short chain of float32 operations against one rounding.
RTOL = 8 * 2.0**-23
#: Wider absolute bounds where a result sums several cos values (see the module notes).
ATOL_OF = {"sandwich_bias": 2.0**-21, "detr_sine_2d": 2.0**-19}

NAMES = _function_names()


def _listed(device: Any, kind: str) -> set[str]:
    """The dtype names the inspection API lists for ``device`` and ``kind``."""
    return set(xp.__array_namespace_info__().dtypes(device=device, kind=kind))


def _move(value: Any, device: Any) -> Any:
    """``value`` on ``device``: arrays in the widest dtypes it has, ``RopeFrequencies`` rebuilt."""
    if isinstance(value, pr.RopeFrequencies):
        return pr.RopeFrequencies(_move(value.inv_freq, device), value.attention_factor, value.turns)
    if _compat.namespace_of(value) is not xp:
        return value
    if value.dtype == xp.float64 and "float64" not in _listed(device, "real floating"):
        value = xp.astype(value, xp.float32)
    if value.dtype == xp.int64 and "int64" not in _listed(device, "signed integer"):
        value = xp.astype(value, xp.int32)
    return value.to_device(device)


def _call_on(name: str, device: Any, like: Any) -> Any:
    """The template call of ``name`` with its arrays in the dtypes of ``like`` and on ``device``."""
    fn, arguments = _templates(xp)[name]
    moved = {key: _move(_move(value, like), device) for key, value in arguments.items()}
    if "device" in inspect.signature(fn).parameters:
        moved["device"] = device
    return _call(fn, moved)


def _arrays(result: Any, device: Any) -> list[Any]:
    """The arrays a result holds: itself, a tuple's, a RopeFrequencies' ``inv_freq``, and a RopeConfig's
    frequencies built on ``device`` (the call's)."""
    if isinstance(result, pr.RopeConfig):
        return _arrays(result.frequencies(xp=xp, device=device), device)
    if isinstance(result, pr.RopeFrequencies):
        return [result.inv_freq]
    if isinstance(result, tuple):
        return [a for item in result for a in _arrays(item, device)]
    return [result] if _compat.namespace_of(result) is xp else []


def _host(x: Any) -> np.ndarray:
    """The values of an array on any array-api-strict device, as NumPy (float32 or integer)."""
    values = np.asarray(x.to_device(DEFAULT))
    return values.astype(np.float32) if values.dtype == np.float64 else values


def _assert_agrees(name: str, got: Any, device: Any, want: Any) -> list[Any]:
    """The arrays of ``got`` (on ``device``), after checking them against those of ``want`` (default
    device): within the module's float32 tolerance, equal if integer; a result without arrays equal."""
    got_arrays, want_arrays = _arrays(got, device), _arrays(want, DEFAULT)
    assert len(got_arrays) == len(want_arrays)
    if not got_arrays:
        assert got == want
    atol = ATOL_OF.get(name, ATOL)
    for g, w in zip(got_arrays, want_arrays, strict=True):
        g_host, w_host = _host(g), _host(w)
        assert g_host.shape == w_host.shape
        if np.issubdtype(w_host.dtype, np.floating):
            np.testing.assert_allclose(g_host, w_host, rtol=RTOL, atol=atol, err_msg=name)
        else:
            np.testing.assert_array_equal(g_host, w_host, err_msg=name)
    return got_arrays


def test_every_public_callable_is_covered() -> None:
    public = {n for n in pr.__all__ if callable(getattr(pr, n))}
    assert public <= set(NAMES)


@pytest.mark.parametrize(
    ("device", "float64", "int64"),
    [
        (DEFAULT, True, True),
        (array_api_strict.Device("device1"), True, True),
        (array_api_strict.Device("device2"), True, True),  # float32 by default, float64 present
        (NO_FLOAT64, False, True),
        (NO_X64, False, False),
    ],
    ids=repr,
)
def test_types_come_from_the_inspection_api(device: Any, float64: bool, int64: bool) -> None:
    assert ("float64" in _listed(device, "real floating")) is float64  # what the standard's API says
    assert _compat.has_float64(xp, device) is float64
    assert _compat.compute_dtype(xp, device) == (xp.float64 if float64 else xp.float32)
    assert _compat.index_dtype(xp, device) == (xp.int64 if int64 else xp.int32)


def test_no_device_is_the_default_device() -> None:
    assert _compat.has_float64(xp) is True
    assert _compat.index_dtype(xp) == xp.int64


class _Bare:
    """A namespace with the dtype names and no inspection API."""

    __name__ = "bare"
    float32, float64, int32, int64 = xp.float32, xp.float64, xp.int32, xp.int64


class _Raising(_Bare):
    __name__ = "raising"

    @staticmethod
    def __array_namespace_info__() -> Any:
        raise RuntimeError


class _Listing(_Bare):
    """Inspection that lists float64 and int64 only for the device ``"big"``."""

    __name__ = "listing"

    class _Info:
        @staticmethod
        def dtypes(*, device: Any = None, kind: Any = None) -> dict[str, Any]:
            names = {"real floating": ["float32", "float64"], "signed integer": ["int32", "int64"]}[kind]
            return {n: None for n in (names if device == "big" else names[:1])}

    def __array_namespace_info__(self) -> Any:
        return self._Info()


@pytest.mark.parametrize("device", ["somewhere", ["an", "unhashable", "device"]], ids=["str", "list"])
def test_no_inspection_answer_means_64_bit_types(device: Any) -> None:
    """A namespace without ``__array_namespace_info__`` (or whose answer raises) keeps float64 and int64."""
    for namespace in (_Bare(), _Raising()):
        assert _compat.has_float64(namespace, device) is True
        assert _compat.index_dtype(namespace, device) == xp.int64


def test_the_inspection_answer_decides() -> None:
    namespace = _Listing()
    assert _compat.has_float64(namespace, "big") is True
    assert _compat.index_dtype(namespace, "big") == xp.int64
    assert _compat.has_float64(namespace, "small") is False
    assert _compat.index_dtype(namespace, "small") == xp.int32
    assert _compat.has_float64(namespace, ["small"]) is False  # unhashable: asked afresh, same answer


@pytest.mark.parametrize("name", NAMES)
def test_runs_on_the_device_without_float64(name: str) -> None:
    got = _call_on(name, NO_FLOAT64, like=NO_FLOAT64)
    for array in _assert_agrees(name, got, NO_FLOAT64, _call_on(name, DEFAULT, like=NO_FLOAT64)):
        assert array.device == NO_FLOAT64
        assert array.dtype != xp.float64


@pytest.mark.parametrize("name", NAMES)
def test_runs_on_the_device_without_64_bit_types(name: str) -> None:
    try:
        got = _call_on(name, NO_X64, like=NO_X64)
    except (ValueError, TypeError) as exc:  # allowed, if it says which device and what it lacks
        message = str(exc)
        assert "no_x64" in message or "int32" in message, message
        assert "does not support dtype" not in message, f"a raw backend error: {message}"
        return
    for array in _assert_agrees(name, got, NO_X64, _call_on(name, DEFAULT, like=NO_X64)):
        assert array.device == NO_X64
        assert array.dtype not in (xp.float64, xp.int64)


def test_float64_is_refused_on_the_device_without_it() -> None:
    """Asking for float64 there is the library's ValueError naming the parameter, not the backend's."""
    positions = xp.asarray([0, 1, 2], device=NO_FLOAT64)
    with pytest.raises(ValueError, match=r"^dtype must be float32 or narrower on this backend/device"):
        pr.sinusoidal(positions, 8, dtype=xp.float64)
    with pytest.raises(ValueError, match=r"^compute_dtype must be"):
        pr.rope_frequencies(8, xp=xp, device=NO_FLOAT64, compute_dtype=xp.float64)


def test_large_positions_keep_float32_accuracy_there() -> None:
    """The float32-exact reduction at positions near 2**20, against float64 rounded once (module notes)."""
    positions = np.asarray([0, 1, 2**20 - 3, 2**20 + 5, -(2**19)], dtype=np.int64)
    freqs = pr.rope_frequencies(64, xp=xp, device=NO_FLOAT64)
    cos, sin = pr.rope_cos_sin(xp.asarray(positions, device=NO_FLOAT64), freqs)
    assert cos.dtype == xp.float32 and cos.device == NO_FLOAT64
    want_cos, want_sin = pr.rope_cos_sin(xp.asarray(positions), pr.rope_frequencies(64, xp=xp))
    np.testing.assert_allclose(_host(cos), _host(want_cos), rtol=0, atol=ATOL)
    np.testing.assert_allclose(_host(sin), _host(want_sin), rtol=0, atol=ATOL)


def test_int32_index_limits_are_clear_errors() -> None:
    """Where the index dtype is int32, sizes past its range are the library's ValueErrors."""
    mask = xp.asarray([True, False, True], device=NO_X64)
    out = pr.token_positions(mask, cache_length=2**30)
    assert out.dtype == xp.int32 and out.device == NO_X64
    assert _host(out).tolist() == [2**30, -1, 2**30 + 1]
    with pytest.raises(ValueError, match=r"^cache_length must be an integer <= 1073741824; .*int32"):
        pr.token_positions(mask, cache_length=2**30 + 1)
    table = xp.ones((70_000, 1), dtype=xp.float32, device=NO_X64)
    with pytest.raises(ValueError, match=r"^new_length must be at most 30679 for 70000 rows .*int32"):
        pr.interpolate_table(table, 30_680)
    positions = xp.asarray([2**30], dtype=xp.int32, device=NO_X64)
    with pytest.raises(ValueError, match=r"^positions must be positions with \|p\| < 2\*\*30"):
        pr.rope_cos_sin(positions, pr.rope_frequencies(8, xp=xp, device=NO_X64))
