"""Rules every public function shares (issue 11): no wrapped integers, namespaces and dtypes given
as objects, sizes that fail at once, and clear errors for bad input classes.

Expected values are computed here from exact Python integers (or NumPy float64 on small
distances) and the T5 oracle, never from posenc_ref.
"""

from __future__ import annotations

import importlib
import math
from typing import Any

import numpy as np
import pytest

import posenc_ref as pr
from posenc_ref import _compat
from posenc_ref_conformance.oracle import t5 as t5_oracle
from tests.conftest import UNREAD_ON_DASK, Backend
from tests.helpers import assert_close, assert_equal, to_numpy

#: Query and key positions whose differences wrap in their own dtype.
WRAPPING = {
    "uint8": ([0, 1, 2, 255], [0, 1, 2, 255]),
    "int8": ([-128, 0, 127], [127, -128, 5]),
    "uint16": ([0, 65535], [0, 3, 65535]),
    "int16": ([-32768, 32767], [32767, -32768, 0]),
    "uint32": ([0, 2**32 - 1], [0, 2**32 - 1]),
    "int32": ([-(2**31), 2**31 - 1], [2**31 - 1, -(2**31), 7]),
}
SMALL = (
    "uint8",
    "int8",
    "uint16",
    "int16",
)  # distances below 2**17: float64 cos/log1p formulas are exact enough


#: The wrapping dtypes as parameters, each skipped where the namespace lacks it.
WRAPPING_DTYPES = [pytest.param(name, marks=pytest.mark.needs_dtype(name)) for name in WRAPPING]


def _pair(xp: Any, name: str) -> tuple[Any, Any, list[int], list[int]]:
    dtype = getattr(xp, name)  # present: the parameters carry needs_dtype marks
    q, k = WRAPPING[name]
    as_array = lambda v: _compat.asarray(np.asarray(v, dtype=name), xp=xp, dtype=dtype)  # noqa: E731
    return as_array(q), as_array(k), q, k


def _differences(q: list[int], k: list[int]) -> np.ndarray:
    return np.asarray([[kj - qi for kj in k] for qi in q], dtype=np.int64)


class TestPositionsDoNotWrap:
    """Probes on main: alibi_bias(uint8 0..2) gave +0.996 for -0.0039; relative_positions(uint32) gave
    4294967295 for -1; int8/int16/int32 wrapped likewise in every bias builder and windowed mask."""

    @pytest.mark.parametrize("dtype", WRAPPING_DTYPES)
    def test_relative_positions(self, xp: Any, dtype: str) -> None:
        q, k, hq, hk = _pair(xp, dtype)
        assert_equal(pr.relative_positions(q, k), _differences(hq, hk), xp=xp, dtype=_compat.index_dtype(xp))

    @pytest.mark.parametrize("dtype", WRAPPING_DTYPES)
    @pytest.mark.parametrize("form", pr.ALIBI_FORMS)
    def test_alibi_bias(self, xp: Any, dtype: str, form: str) -> None:
        q, k, hq, hk = _pair(xp, dtype)
        slopes = pr.alibi_slopes(2, xp=xp, dtype=xp.float64 if _compat.has_float64(xp) else xp.float32)
        m = to_numpy(slopes).astype(np.float64)
        d = _differences(hq, hk)
        distance = (
            -np.abs(d) if form == "symmetric" else np.broadcast_to(np.asarray(hk, dtype=np.int64), d.shape)
        )
        expected = m[:, None, None] * distance.astype(np.float64)[None]
        assert_close(pr.alibi_bias(q, k, slopes, form=form), expected, xp=xp, rtol=2**-52, atol=0)

    @pytest.mark.parametrize("dtype", WRAPPING_DTYPES)
    def test_t5_bias(self, xp: Any, dtype: str) -> None:
        q, k, hq, hk = _pair(xp, dtype)
        table = np.arange(64, dtype=np.float64).reshape(32, 2)
        bias = pr.t5_bias(q, k, _compat.asarray(table, xp=xp, dtype=_compat.compute_dtype(xp)))
        # buckets saturate from |r| = 91 on (32/128): clip far distances for the oracle's exact log
        buckets = np.vectorize(lambda r: t5_oracle.t5_bucket(int(r)))(
            np.clip(_differences(hq, hk), -999, 999)
        )
        assert_equal(bias, np.moveaxis(table[buckets], -1, 0), xp=xp)

    @pytest.mark.parametrize("dtype", WRAPPING_DTYPES)
    def test_windowed_causal_mask(self, xp: Any, dtype: str) -> None:
        q, k, hq, hk = _pair(xp, dtype)
        d = _differences(hq, hk)
        expected = (d <= 0) & (-d < 3)
        assert_equal(pr.causal_mask(q, k, sliding_window=3), expected, xp=xp)

    @pytest.mark.parametrize("dtype", SMALL)
    @pytest.mark.parametrize("kind", pr.KERPLE_KINDS)
    def test_kerple_bias(self, xp: Any, dtype: str, kind: str) -> None:
        q, k, hq, hk = _pair(xp, dtype)
        r1, r2 = [0.5, 1.5], [0.25, 0.75]
        work = _compat.compute_dtype(xp)
        r1a, r2a = (_compat.asarray(r, xp=xp, dtype=work) for r in (r1, r2))
        out = pr.kerple_bias(q, k, r1a, r2a, kind=kind)
        dist = np.abs(_differences(hq, hk)).astype(np.float64)[None]
        a, p = np.asarray(r1)[:, None, None], np.asarray(r2)[:, None, None]
        expected = -a * (np.log1p(p * dist) if kind == "log" else dist**p)
        assert_close(out, expected, xp=xp, rtol=1e-13 if work == xp.float64 else 1e-5)

    @pytest.mark.parametrize("dtype", SMALL)
    def test_sandwich_bias(self, xp: Any, dtype: str) -> None:
        q, k, hq, hk = _pair(xp, dtype)
        d = _differences(hq, hk).astype(np.float64)
        dim, heads = 8, 2
        total = sum(np.cos(d * 10000.0 ** (-2 * i / dim)) for i in range(1, dim // 2 + 1)) - dim / 2
        expected = np.stack([total * heads / (8 * h) for h in range(1, heads + 1)])
        tol = {"atol": 1e-10} if _compat.has_float64(xp) else {"atol": 1e-5}
        assert_close(pr.sandwich_bias(q, k, num_heads=heads, dim=dim), expected, xp=xp, rtol=0, **tol)

    def test_llama4_attn_scale_of_int8_positions(self, xp: Any) -> None:
        # main: OverflowError (Python integer 8192 out of bounds for int8)
        positions = _compat.asarray([0, 9, 127], xp=xp, dtype=xp.int8)
        assert_close(pr.llama4_attn_scale(positions), [1.0, 1.0, 1.0], xp=xp)
        expected = [math.log(math.floor((p + 1) / 10) + 1) * 0.1 + 1 for p in (0, 9, 127)]
        assert_close(pr.llama4_attn_scale(positions, floor_scale=10), expected, xp=xp)

    @UNREAD_ON_DASK
    def test_positions_beyond_2_62_are_refused(self, xp: Any) -> None:
        big = _compat.asarray([0, 2**62], xp=xp, dtype=_compat.index_dtype(xp))
        with pytest.raises(ValueError, match=r"^k_positions must be positions with \|p\| < 2\*\*62"):
            pr.relative_positions(big[:1], big)


def _plain_module(library: Any) -> Any:
    name = {"jax.numpy:x32": "jax.numpy"}.get(library.value, library.value)
    return importlib.import_module("mlx.core" if name == "mlx" else name)


class _Unhashable:
    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return "unhashable"


class _RaisingHash:
    def __hash__(self) -> int:
        msg = "no hash"
        raise ValueError(msg)

    def __repr__(self) -> str:
        return "raising-hash"


class TestNamespacesAndDtypes:
    """Probes on main: xp=torch (the plain module) broke alibi_slopes and mrope_position_ids; a dtype
    string gave AttributeError on torch."""

    def test_builders_accept_the_plain_module(self, xp: Any, library: Any) -> None:
        plain = _plain_module(library)
        f32 = plain.float32
        slopes = pr.alibi_slopes(4, xp=plain, dtype=f32)
        assert _compat.array_namespace(slopes).__name__ == xp.__name__ and slopes.dtype == xp.float32
        assert_close(slopes, [2.0**-2, 2.0**-4, 2.0**-6, 2.0**-8], xp=xp, dtype=xp.float32)
        ids = pr.mrope_position_ids([2, (1, 2, 2)], xp=plain)
        assert_equal(ids, [[0, 1, 2, 2, 2, 2], [0, 1, 2, 2, 3, 3], [0, 1, 2, 3, 2, 3]], xp=xp)
        assert_equal(pr.vision_position_ids(1, 1, 2, xp=plain), [[0, 0], [0, 1]], xp=xp)
        freqs = pr.rope_frequencies(4, xp=plain, compute_dtype=f32)
        assert_close(freqs.inv_freq, [1.0, 0.01], xp=xp, dtype=xp.float32)
        own = pr.RopeFrequencies.from_inv_freq([1.0, 0.01], xp=plain, compute_dtype=f32)
        assert_close(own.inv_freq, [1.0, 0.01], xp=xp, dtype=xp.float32)

    @pytest.mark.parametrize("bad", ["numpy", math, 3])
    def test_a_non_namespace_is_a_type_error(self, bad: Any) -> None:
        for call in (
            lambda: pr.alibi_slopes(4, xp=bad),
            lambda: pr.rope_frequencies(8, xp=bad),
            lambda: pr.mrope_position_ids([2], xp=bad),
            lambda: pr.vision_position_ids(1, 2, 2, xp=bad),
            lambda: pr.RopeFrequencies.from_inv_freq([1.0], xp=bad),
        ):
            with pytest.raises(TypeError, match=r"^xp must be an array namespace"):
                call()

    @pytest.mark.skip_xp_backend(Backend.MLX, reason="device= is ignored (MLX arrays have no device)")
    def test_a_bad_device_names_the_parameter(self, xp: Any) -> None:
        with pytest.raises(ValueError, match=r"^device must be a device of"):
            pr.alibi_slopes(4, xp=xp, device="no-such-device")

    def _dtype_calls(self, xp: Any, dtype: Any) -> list[Any]:
        pos = _compat.asarray([0, 1, 2], xp=xp, dtype=_compat.index_dtype(xp))
        freqs = pr.rope_frequencies(8, xp=xp)
        return [
            lambda: pr.sinusoidal(pos, 8, dtype=dtype),
            lambda: pr.rope_cos_sin(pos, freqs, dtype=dtype),
            lambda: pr.xpos_scale(pos, 8, dtype=dtype),
            lambda: pr.alibi_slopes(4, xp=xp, dtype=dtype),
            lambda: pr.sandwich_bias(pos, pos, num_heads=2, dim=8, dtype=dtype),
            lambda: pr.llama4_attn_scale(pos, dtype=dtype),
        ]

    def test_dtype_strings_are_refused_everywhere(self, xp: Any) -> None:
        for call in self._dtype_calls(xp, "float32"):
            with pytest.raises(
                TypeError, match=r"^dtype must be a real floating dtype of .*pass the dtype object"
            ):
                call()
        pos = _compat.asarray([0], xp=xp, dtype=_compat.index_dtype(xp))
        with pytest.raises(TypeError, match=r"^compute_dtype must be a real floating dtype"):
            pr.rope_cos_sin(pos, pr.rope_frequencies(8, xp=xp), compute_dtype="float32")
        with pytest.raises(TypeError, match=r"^compute_dtype must be a real floating dtype"):
            pr.rope_frequencies(8, xp=xp, compute_dtype="float64")

    def test_dtype_objects_are_honoured_everywhere(self, xp: Any) -> None:
        for call in self._dtype_calls(xp, xp.float32):
            out = call()
            for array in out if isinstance(out, tuple) else (out,):
                assert array.dtype == xp.float32

    def test_an_array_is_no_dtype(self, xp: Any) -> None:
        pos = _compat.asarray([0, 1], xp=xp, dtype=_compat.index_dtype(xp))
        with pytest.raises(TypeError, match=r"^dtype must be a real floating dtype of .*; got an array"):
            pr.sinusoidal(pos, 4, dtype=pos)

    @pytest.mark.parametrize("odd", [_Unhashable(), _RaisingHash(), float, 3.5], ids=repr)
    def test_objects_that_are_no_dtype_are_refused_every_time(self, xp: Any, odd: Any) -> None:
        # Dtype answers are remembered per hashable object: an object that cannot be hashed, or
        # whose hash raises, is still refused, and asking twice gives the same refusal.
        for _ in range(2):
            for call in self._dtype_calls(xp, odd):
                with pytest.raises(TypeError, match=r"^dtype must be a real floating dtype of "):
                    call()

    def test_arrays_of_two_libraries_name_the_second(self, xp: Any) -> None:
        other = np.asarray([0, 1]) if xp.__name__ != "array_api_compat.numpy" else _strict_ints([0, 1])
        pos = _compat.asarray([0, 1], xp=xp, dtype=_compat.index_dtype(xp))
        with pytest.raises(
            TypeError, match=r"^k_positions must be an array of the same library as q_positions"
        ):
            pr.relative_positions(pos, other)


def _strict_ints(values: list[int]) -> Any:
    import array_api_strict

    return array_api_strict.asarray(values)


def _positions(xp: Any) -> Any:
    return _compat.asarray([0, 1, 2], xp=xp, dtype=_compat.index_dtype(xp))


#: (call, message start): sizes that ran for minutes or exhausted memory on main now fail at once.
SIZES = [
    (lambda xp: pr.rope_frequencies(2**40, xp=xp), r"^dim must be an integer <= 32768; got 1099511627776"),
    (lambda xp: pr.sinusoidal(_positions(xp), 2**40), r"^dim must be an integer <= 32768"),
    (lambda xp: pr.xpos_scale(_positions(xp), 2**40), r"^dim must be an integer <= 32768"),
    (
        lambda xp: pr.sandwich_bias(_positions(xp), _positions(xp), num_heads=2, dim=2**40),
        r"^dim must be an integer <=",
    ),
    (
        lambda xp: pr.sandwich_bias(_positions(xp), _positions(xp), num_heads=2**40, dim=8),
        r"^num_heads must be an",
    ),
    (lambda xp: pr.alibi_slopes(2**40, xp=xp), r"^num_heads must be an integer <= 32768"),
    (
        lambda xp: pr.t5_bucket(_positions(xp), num_buckets=2**40),
        r"^num_buckets must be an integer from|^num_buckets must be an integer <= 4096",
    ),
    (
        lambda xp: pr.t5_bucket_thresholds(max_distance=2**70),
        r"^max_distance must be an integer <= 4611686018427387904",
    ),
    (
        lambda xp: pr.interpolate_table(_compat.asarray(np.ones((2, 4)), xp=xp, dtype=xp.float32), 2**40),
        r"^new_length must be an integer <= 268435456",
    ),
    (lambda xp: pr.mrope_position_ids([2**40], xp=xp), r"^segments\[0\] must be an integer <= 1073741824"),
    (lambda xp: pr.mrope_position_ids([2**29, 2**29], xp=xp), r"^segments must be at most 357913941 tokens"),
    (lambda xp: pr.vision_position_ids(1, 2**20, 2**20, xp=xp), r"^grid_t must be a grid of at most"),
    (lambda xp: pr.mrope_slot_components((2**40, 1)), r"^mrope_section\[0\] must be an integer <= 32768"),
    (
        lambda xp: pr.causal_mask(_positions(xp), _positions(xp), sliding_window=2**70),
        r"^sliding_window must be an integer <=",
    ),
    (
        lambda xp: pr.token_positions(_positions(xp) > 0, cache_length=2**70),
        r"^cache_length must be an integer <=",
    ),
    (
        lambda xp: pr.shaw_index(_positions(xp), 2**70),
        r"^max_distance must be an integer <= 4611686018427387904",
    ),
    (
        lambda xp: pr.rope_config_from_hf({"head_dim": 2**40}),
        r"^config\['head_dim'\] must be an integer <= 32768",
    ),
]


@pytest.mark.parametrize(
    ("call", "pattern"),
    SIZES,
    ids=[p.split(" must")[0].lstrip("^") + str(i) for i, (_, p) in enumerate(SIZES)],
)
def test_sizes_fail_at_once_naming_the_limit(xp: Any, call: Any, pattern: str) -> None:
    with pytest.raises(ValueError, match=pattern):
        call(xp)


class TestBadInputClasses:
    """Representatives of the input classes that raised something other than ValueError/TypeError or
    did not name the parameter on main (tests/test_fuzz_public_api.py sweeps every function)."""

    def test_none_for_an_array(self, xp: Any) -> None:
        # main: AttributeError: 'NoneType' object has no attribute 'dtype'
        cos, _ = pr.rope_cos_sin(_positions(xp), pr.rope_frequencies(8, xp=xp))
        x = _compat.asarray(np.ones((3, 8)), xp=xp, dtype=cos.dtype)
        with pytest.raises(TypeError, match=r"^sin must be an array of a real floating dtype; got None"):
            pr.apply_rope(x, cos, None)

    def test_mismatched_bias_shape(self, xp: Any) -> None:
        # main: numpy's "operands could not be broadcast together"
        f = lambda *shape: _compat.asarray(np.ones(shape), xp=xp, dtype=_compat.compute_dtype(xp))  # noqa: E731
        with pytest.raises(ValueError, match=r"^bias must be broadcastable to the shape \(2, 3\) of logits"):
            pr.attention(f(2, 4), f(3, 4), f(3, 4), bias=f(5, 7))
        with pytest.raises(ValueError, match=r"^mask must be broadcastable"):
            pr.attention(
                f(2, 4), f(3, 4), f(3, 4), mask=_compat.asarray(np.ones((4, 3)), xp=xp, dtype=xp.float32) > 0
            )

    def test_mismatched_batch_dims_of_positions(self, xp: Any) -> None:
        q = _compat.asarray(np.zeros((2, 3), dtype=np.int64), xp=xp, dtype=_compat.index_dtype(xp))
        k = _compat.asarray(np.zeros((3, 4), dtype=np.int64), xp=xp, dtype=_compat.index_dtype(xp))
        with pytest.raises(
            ValueError, match=r"^k_positions must be broadcastable to the shape \(2,\) of q_positions"
        ):
            pr.relative_positions(q, k)

    def test_boolean_flags_and_options_of_the_wrong_type(self, xp: Any) -> None:
        q = _positions(xp)
        with pytest.raises(TypeError, match=r"^return_weights must be True or False; got 'yes'"):
            f = _compat.asarray(np.ones((2, 4)), xp=xp, dtype=_compat.compute_dtype(xp))
            pr.attention(f, f, f, return_weights="yes")
        with pytest.raises(
            TypeError, match=r"^layout must be one of 'half', 'interleaved'; got None of type"
        ):
            pr.xpos_scale(q, 8, layout=None)
        with pytest.raises(TypeError, match=r"^max_distance must be an integer k or a pair"):
            pr.shaw_index(q, [2, 3])
