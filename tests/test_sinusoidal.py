"""sinusoidal(): every convention against its implementation's formula, evaluated with mpmath."""

from __future__ import annotations

import functools
import math

import mpmath
import numpy as np
import pytest

from posenc_ref import SINUSOIDAL_CONVENTIONS, _compat, sinusoidal
from tests.conftest import FLOAT64, JAX_ONLY, UNREAD_ON_DASK, Backend
from tests.helpers import assert_close, assert_equal, ints, to_numpy

# --- independent expectations: the implementations' formulas, in mpmath at 40 digits -------------


def dec(x):
    """An option as the decimal number it prints as (1e-4 is 10**-4), as the library documents."""
    return mpmath.mpf(repr(float(x)))


def _vaswani(p, d, base=10000.0):
    w = [dec(base) ** (-mpmath.mpf(2 * (j // 2)) / d) for j in range(d)]
    return [mpmath.sin(p * w[j]) if j % 2 == 0 else mpmath.cos(p * w[j]) for j in range(d)]


def _marian(p, d, base=10000.0):
    sentinel = (d + 1) // 2  # sin gets ceil(d/2) columns, cos the rest
    w = [dec(base) ** (-mpmath.mpf(2 * k) / d) for k in range(sentinel)]
    return [mpmath.sin(p * w[k]) for k in range(sentinel)] + [
        mpmath.cos(p * w[k]) for k in range(d - sentinel)
    ]


def _concat(p, inv, d):
    return [mpmath.sin(p * w) for w in inv] + [mpmath.cos(p * w) for w in inv] + [0] * (d - 2 * len(inv))


def _t2t(p, d, min_timescale=1.0, max_timescale=1.0e4):
    n = d // 2
    increment = mpmath.log(dec(max_timescale) / dec(min_timescale)) / max(n - 1, 1)
    inv = [
        dec(min_timescale) * mpmath.exp(-k * increment) for k in range(n)
    ]  # t2t's min_timescale * exp(...)
    return _concat(p, inv, d)


def _fairseq(p, d, padding_idx=1):
    if p == -1:  # padding token: fairseq zeroes row padding_idx
        return [0] * d
    n = d // 2
    inv = [mpmath.exp(-k * mpmath.log(10000) / (n - 1)) for k in range(n)]
    return _concat(p + padding_idx + 1, inv, d)  # fairseq's make_positions offset


def _t2t_cos_first(p, d):
    row = _t2t(p, d)
    n = d // 2
    return row[n : 2 * n] + row[:n] + row[2 * n :]  # MusicGen: torch.cat([cos, sin]), zero column last


def _mlx(p, d, min_freq=1e-4, max_freq=1.0, scale=None, cos_first=False, full_turns=False):
    n = d // 2
    one_zero = [1] if n == 1 else [1 - mpmath.mpf(k) / (n - 1) for k in range(n)]
    lo, hi = mpmath.log(dec(min_freq)), mpmath.log(dec(max_freq))
    sigma = [mpmath.exp(t * (hi - lo) + lo) * (2 * mpmath.pi if full_turns else 1) for t in one_zero]
    sin, cos = [mpmath.sin(p * s) for s in sigma], [mpmath.cos(p * s) for s in sigma]
    s = mpmath.sqrt(mpmath.mpf(2) / d) if scale is None else scale
    return [s * v for v in (cos + sin if cos_first else sin + cos)]


FORMULAS = {"vaswani": _vaswani, "tensor2tensor": _t2t, "fairseq": _fairseq, "marian": _marian, "mlx": _mlx}


@functools.lru_cache(maxsize=4096)
def _row(convention, p, d, options):
    with mpmath.workdps(40):
        return tuple(float(v) for v in FORMULAS[convention](mpmath.mpf(p), d, **dict(options)))


def expected(convention, positions, d, **options):
    """Host float64 table of shape positions.shape + (d,) (rows cached across backends)."""
    positions = np.asarray(positions)
    rows = [_row(convention, int(p), d, tuple(sorted(options.items()))) for p in positions.ravel()]
    return np.asarray(rows, dtype=np.float64).reshape((*positions.shape, d))


def valid_dims(convention):
    dims = [*range(1, 10), 64]
    if convention == "fairseq":
        return [d for d in dims if d not in (2, 3)]  # fairseq divides by d // 2 - 1
    if convention == "mlx":
        return [d for d in dims if d % 2 == 0]  # MLX requires even dims
    return dims


POSITIONS = [0, 1, 2, 3, 7, 100, 1023, 4095, 2**20, 2**31 - 1]
#: patchtst standardises a table of num_positions rows: its own tests below (TestPatchTST).
PLAIN = [c for c in SINUSOIDAL_CONVENTIONS if c != "patchtst"]
CASES = [(c, d) for c in PLAIN for d in valid_dims(c)]


class TestSinusoidal:
    # Reference §1.7 numbers (printed to 6 decimals), a check independent of the mpmath formulas.
    @pytest.mark.parametrize(
        ("convention", "d", "row"),
        [
            ("vaswani", 8, [0.841471, 0.540302, 0.099833, 0.995004, 0.01, 0.99995, 0.001, 1.0]),
            ("tensor2tensor", 8, [0.841471, 0.046399, 0.002154, 0.0001, 0.540302, 0.998923, 0.999998, 1.0]),
            ("marian", 8, [0.841471, 0.099833, 0.01, 0.001, 0.540302, 0.995004, 0.99995, 1.0]),
            ("vaswani", 5, [0.841471, 0.540302, 0.025116, 0.999685, 0.000631]),
            ("tensor2tensor", 5, [0.841471, 1e-4, 0.540302, 1.0, 0.0]),
            ("marian", 5, [0.841471, 0.025116, 0.000631, 0.540302, 0.999685]),
        ],
    )
    def test_reference_numbers_at_position_1(self, xp, convention, d, row):
        out = sinusoidal(ints(xp, [1]), d, convention=convention)
        assert_close(out, [row], xp=xp, rtol=0, atol=5e-7)  # the reference rounds to 6 decimals

    def test_fairseq_reference_frequencies(self, xp):
        # §1.7: at d=8 fairseq/t2t frequencies are [1, 0.046416, 0.0021544, 1e-4]; token 0 sits at row 2.
        out = to_numpy(sinusoidal(ints(xp, [0]), 8, convention="fairseq"))[0]
        angles = [2 * w for w in (1.0, 0.046416, 0.0021544, 1e-4)]
        np.testing.assert_allclose(
            out, [math.sin(a) for a in angles] + [math.cos(a) for a in angles], atol=2e-6
        )

    @pytest.mark.parametrize(("convention", "d"), CASES)
    @pytest.mark.needs_float64
    def test_values_float64(self, xp, convention, d):
        out = sinusoidal(ints(xp, POSITIONS), d, convention=convention)
        assert_close(out, expected(convention, POSITIONS, d), xp=xp, dtype=xp.float64)

    @pytest.mark.parametrize(("convention", "d"), CASES)
    def test_values_float32(self, xp, convention, d):
        out = sinusoidal(ints(xp, POSITIONS), d, convention=convention, dtype=xp.float32)
        assert_close(out, expected(convention, POSITIONS, d), xp=xp, dtype=xp.float32)

    @pytest.mark.parametrize("convention", PLAIN)
    @pytest.mark.skip_xp_backend(Backend.JAX_X32, reason="int64 positions need JAX x64")
    def test_large_positions(self, xp, convention):
        positions = [2**40 + 12345, 2**53 + 1, 2**62 - 3]
        out = sinusoidal(ints(xp, positions), 64, convention=convention)
        assert_close(out, expected(convention, positions, 64), xp=xp)

    @pytest.mark.parametrize("convention", ["vaswani", "tensor2tensor", "marian", "mlx"])
    def test_negative_positions_follow_the_formula(self, xp, convention):
        positions = [-1, -5, -4096]
        out = sinusoidal(ints(xp, positions), 8, convention=convention)
        assert_close(out, expected(convention, positions, 8), xp=xp)

    def test_t2t_options_and_min_timescale_quirk(self, xp):
        # t2t multiplies by min_timescale: the first frequency is 2.0, not 1/2.
        out = sinusoidal(ints(xp, [3]), 6, convention="tensor2tensor", min_timescale=2.0, max_timescale=500.0)
        assert_close(out, expected("tensor2tensor", [3], 6, min_timescale=2.0, max_timescale=500.0), xp=xp)
        assert abs(float(to_numpy(out)[0, 0]) - math.sin(6.0)) < 1e-6

    @pytest.mark.parametrize("d", [1, 2])
    def test_t2t_small_dims(self, xp, d):
        out = sinusoidal(ints(xp, [0, 5]), d, convention="tensor2tensor")
        assert_close(out, expected("tensor2tensor", [0, 5], d), xp=xp)

    @pytest.mark.parametrize("padding_idx", [0, 1, 3])
    def test_fairseq_padding_offset_and_row(self, xp, padding_idx):
        positions = [[-1, 0, 1, 2], [0, 1, -1, -1]]
        out = sinusoidal(ints(xp, positions), 9, convention="fairseq", padding_idx=padding_idx)
        assert_close(out, expected("fairseq", positions, 9, padding_idx=padding_idx), xp=xp)
        assert np.all(to_numpy(out)[0, 0] == 0)

    def test_fairseq_full_table(self, xp):
        # fairseq's weights table: rows 0..N-1 are positions -(padding_idx+1) .. N-padding_idx-2.
        out = sinusoidal(ints(xp, list(range(-2, 6))), 4, convention="fairseq")
        w = [1.0, 1e-4]  # half_dim = 2: exp(-k log(1e4) / 1)
        want = [
            [0.0] * 4 if row == 1 else [*(math.sin(row * v) for v in w), *(math.cos(row * v) for v in w)]
            for row in range(8)
        ]
        assert_close(out, want, xp=xp)

    def test_fairseq_dim_one_is_a_zero_column(self, xp):
        assert_equal(sinusoidal(ints(xp, [0, 3]), 1, convention="fairseq"), [[0.0], [0.0]], xp=xp)

    @pytest.mark.parametrize(
        "options",
        [
            {"scale": 0.0},
            {"scale": 1.0, "cos_first": True},
            {"full_turns": True, "min_freq": 1e-3, "max_freq": 2.0},
        ],
    )
    @pytest.mark.parametrize("d", [2, 8])
    def test_mlx_options(self, xp, options, d):
        out = sinusoidal(ints(xp, [0, 1, 9, 1000]), d, convention="mlx", **options)
        assert_close(out, expected("mlx", [0, 1, 9, 1000], d, **options), xp=xp)

    def test_mlx_defaults_have_the_t2t_frequencies(self, xp):
        # min_freq=1e-4 is read as 10**-4, so the frequencies are t2t's exactly, even at large positions.
        positions = ints(xp, [7, 2**31 - 1])
        mlx = to_numpy(sinusoidal(positions, 16, convention="mlx")) * math.sqrt(16 / 2)
        assert_close(sinusoidal(positions, 16, convention="tensor2tensor"), mlx, xp=xp)

    def test_mlx_explicit_zero_scale_is_kept(self, xp):
        out = sinusoidal(ints(xp, [1, 2]), 4, convention="mlx", scale=0.0)
        assert_equal(out, np.zeros((2, 4)), xp=xp)

    @pytest.mark.parametrize("shape", [(), (0,), (3, 4), (2, 1, 3)])
    def test_any_position_shape(self, xp, shape):
        values = np.arange(math.prod(shape)).reshape(shape) * 7
        out = sinusoidal(ints(xp, values), 6)
        assert_close(out, expected("vaswani", values, 6), xp=xp)

    @pytest.mark.parametrize("convention", ["vaswani", "fairseq"])
    def test_long_tables_match_single_rows(self, xp, convention):
        # 3000 x 2 positions x 32 frequencies: large enough that host backends work in row blocks.
        values = (np.arange(6000).reshape(3000, 2) * 7919) % 2**30
        out = to_numpy(sinusoidal(ints(xp, values.tolist()), 64, convention=convention))
        assert out.shape == (3000, 2, 64)
        for row, col in ((0, 0), (1023, 1), (1024, 0), (2999, 1)):
            value = int(values[row, col])
            one = sinusoidal(ints(xp, [value]), 64, convention=convention)
            assert_equal(one, out[row, col][None], xp=xp)
            assert_close(one, expected(convention, [value], 64), xp=xp)

    def test_default_dtype_is_compute_dtype(self, xp, device):
        out = sinusoidal(ints(xp, [1, 2], device=device), 4)
        want = xp.float64 if _compat.has_float64(xp) else xp.float32
        assert out.dtype == want
        assert _compat.device(out) == device

    @pytest.mark.parametrize("convention", PLAIN)
    @pytest.mark.parametrize("dtype_name", ["float32", FLOAT64])
    def test_dtype_and_device_follow(self, xp, device, convention, dtype_name):
        dtype = getattr(xp, dtype_name)
        out = sinusoidal(ints(xp, [[0, 5]], device=device), 8, convention=convention, dtype=dtype)
        assert_close(out, expected(convention, [[0, 5]], 8), xp=xp, dtype=dtype, device=device)

    @pytest.mark.parametrize("int_dtype", ["int8", "int16", "int32", "uint8"])
    def test_narrow_integer_positions(self, xp, int_dtype):
        out = sinusoidal(ints(xp, [0, 1, 100], dtype=getattr(xp, int_dtype)), 8, convention="fairseq")
        assert_close(out, expected("fairseq", [0, 1, 100], 8), xp=xp)

    @JAX_ONLY
    def test_under_jit(self, xp):
        import jax

        positions = ints(xp, [0, 3, 70])
        out = jax.jit(lambda p: sinusoidal(p, 8, convention="fairseq"))(positions)
        assert_close(out, expected("fairseq", [0, 3, 70], 8), xp=xp)


class TestSinusoidalErrors:
    @pytest.mark.parametrize("base", [1e-100, 0.5, 1.0])
    def test_base_at_most_one_is_refused(self, xp, base):
        # main: base=1e-100 gave frequencies 1e50 rad per position, beyond the 42-digit turns: garbage
        with pytest.raises(ValueError, match=r"^base must be > 1\.0; got"):
            sinusoidal(ints(xp, [0, 1]), 4, base=base)

    @pytest.mark.parametrize(
        ("convention", "options", "pattern"),
        [
            ("tensor2tensor", {"min_timescale": 1e30}, r"^min_timescale must be small enough that every"),
            ("mlx", {"max_freq": 1e30}, r"^max_freq must be small enough that every frequency"),
            ("mlx", {"min_freq": 1e30}, r"^min_freq must be small enough that every frequency"),
        ],
    )
    def test_frequencies_beyond_the_exact_range_are_refused(self, xp, convention, options, pattern):
        with pytest.raises(ValueError, match=pattern):
            sinusoidal(ints(xp, [0, 1]), 4, convention=convention, **options)

    def test_narrow_positions_are_exact(self, xp):
        positions = _compat.asarray([-128, 0, 127], xp=xp, dtype=xp.int8)
        out = sinusoidal(positions, 2)
        assert_close(out, [[math.sin(p), math.cos(p)] for p in (-128, 0, 127)], xp=xp)

    @pytest.mark.parametrize(
        "make", [lambda xp: xp.asarray([0.0, 1.0]), lambda xp: xp.asarray([True]), lambda xp: [0, 1]]
    )
    def test_non_integer_positions(self, xp, make):
        with pytest.raises(TypeError, match=r"^positions must"):
            sinusoidal(make(xp), 4)

    @pytest.mark.parametrize(
        ("dim", "error"), [(0, ValueError), (-3, ValueError), (2.0, TypeError), (True, TypeError)]
    )
    def test_bad_dim(self, xp, dim, error):
        with pytest.raises(error, match=r"^dim must"):
            sinusoidal(ints(xp, [1]), dim)

    @pytest.mark.parametrize(("convention", "dim"), [("fairseq", 2), ("fairseq", 3), ("mlx", 1), ("mlx", 7)])
    def test_dim_a_convention_cannot_build(self, xp, convention, dim):
        with pytest.raises(ValueError, match=r"^dim must"):
            sinusoidal(ints(xp, [1]), dim, convention=convention)

    @pytest.mark.parametrize(
        ("name", "hint"), [("t2t", "tensor2tensor"), ("sinusoid", "convention must be one of")]
    )
    def test_unknown_convention(self, xp, name, hint):
        with pytest.raises(ValueError, match=r"^convention must") as info:
            sinusoidal(ints(xp, [1]), 4, convention=name)
        assert hint in str(info.value)

    @pytest.mark.parametrize(
        ("convention", "option", "hint"),
        [
            ("vaswani", "max_wavelength", "'base'"),
            ("vaswani", "min_timescale", "'tensor2tensor'"),
            ("mlx", "bse", ""),
        ],
    )
    def test_unknown_option(self, xp, convention, option, hint):
        pattern = rf"^options must be among .* for convention '{convention}'; got '{option}'"
        with pytest.raises(TypeError, match=pattern) as info:
            sinusoidal(ints(xp, [1]), 4, convention=convention, **{option: 1.0})
        assert hint in str(info.value)

    @pytest.mark.parametrize(
        ("convention", "option", "value", "error"),
        [
            ("vaswani", "base", 0.0, ValueError),
            ("marian", "base", "10000", TypeError),
            ("tensor2tensor", "min_timescale", -1.0, ValueError),
            ("tensor2tensor", "max_timescale", math.inf, ValueError),
            ("fairseq", "padding_idx", -1, ValueError),
            ("fairseq", "padding_idx", None, TypeError),
            ("mlx", "min_freq", 0.0, ValueError),
            ("mlx", "scale", "1", TypeError),
            ("mlx", "cos_first", 1, TypeError),
            ("mlx", "full_turns", None, TypeError),
        ],
    )
    def test_bad_option_value(self, xp, convention, option, value, error):
        with pytest.raises(error, match=rf"^{option} must"):
            sinusoidal(ints(xp, [1]), 4, convention=convention, **{option: value})

    @UNREAD_ON_DASK
    def test_fairseq_position_before_row_zero(self, xp):
        with pytest.raises(ValueError, match=r"^positions must be at least -\(padding_idx \+ 1\) = -2"):
            sinusoidal(ints(xp, [0, -3]), 4, convention="fairseq")

    @pytest.mark.parametrize("dtype", [lambda xp: xp.int32, lambda xp: xp.complex64, lambda xp: 42])
    def test_bad_dtype(self, xp, dtype):
        with pytest.raises(TypeError, match=r"^dtype must"):
            sinusoidal(ints(xp, [1]), 4, dtype=dtype(xp))

    @pytest.mark.float32_only
    def test_float64_where_unavailable(self, xp):
        with pytest.raises(ValueError, match=r"^dtype must"):
            sinusoidal(ints(xp, [1]), 4, dtype=xp.float64)


# --- MusicGen's [cos | sin] and PatchTST's standardised table -----------------------------------------


class TestCosFirst:
    @pytest.mark.parametrize("d", [1, 2, 5, 8, 64])
    def test_musicgen_halves(self, xp, d):
        positions = [0, 1, 7, 1000, 2**20]
        out = sinusoidal(ints(xp, positions), d, convention="tensor2tensor", cos_first=True)
        with mpmath.workdps(40):
            want = np.asarray([[float(v) for v in _t2t_cos_first(mpmath.mpf(p), d)] for p in positions])
        assert_close(out, want, xp=xp)

    def test_musicgen_reference_row(self, xp):
        # torch.cat([cos(emb), sin(emb)]) of MusicGen's get_embedding at position 1, d = 4
        out = sinusoidal(ints(xp, [1]), 4, convention="tensor2tensor", cos_first=True)
        assert_close(out, [[math.cos(1.0), math.cos(1e-4), math.sin(1.0), math.sin(1e-4)]], xp=xp)

    def test_cos_first_must_be_a_bool(self, xp):
        with pytest.raises(TypeError, match=r"^cos_first must be"):
            sinusoidal(ints(xp, [1]), 4, convention="tensor2tensor", cos_first=1)


def _patchtst_reference(rows, d):
    """HF PatchTST._init_pe in NumPy float64: Vaswani table, minus its mean, over 10 sample stds."""
    position = np.arange(rows)[:, None]
    div_term = np.exp(np.arange(0, d, 2) * -(math.log(10000.0) / d))
    pe = np.zeros((rows, d))
    pe[:, 0::2] = np.sin(position * div_term)
    pe[:, 1::2] = np.cos(position * div_term)
    pe = pe - pe.mean()
    return pe / (pe.std(ddof=1) * 10)


class TestPatchTST:
    @pytest.mark.parametrize(("rows", "d"), [(1, 2), (1, 4), (8, 8), (42, 16), (513, 128)])
    def test_matches_the_hf_formula(self, xp, rows, d):
        positions = sorted({0, rows // 2, rows - 1})
        out = sinusoidal(ints(xp, positions), d, convention="patchtst", num_positions=rows)
        assert_close(out, _patchtst_reference(rows, d)[positions], xp=xp, rtol=1e-12, atol=1e-13)

    def test_statistics_of_the_whole_table(self, xp):
        rows, d = 30, 6
        table = to_numpy(
            sinusoidal(ints(xp, list(range(rows))), d, convention="patchtst", num_positions=rows)
        )
        assert abs(float(table.mean())) < 1e-15
        assert abs(float(table.std(ddof=1)) - 0.1) < 1e-15  # the sample std: torch.std's correction=1
        assert abs(float(table.std(ddof=0)) - 0.1) > 1e-4  # not the population std

    def test_values_depend_on_the_row_count(self, xp):
        a = to_numpy(sinusoidal(ints(xp, [0]), 4, convention="patchtst", num_positions=4))
        b = to_numpy(sinusoidal(ints(xp, [0]), 4, convention="patchtst", num_positions=5))
        assert not np.allclose(a, b)

    def test_float32_is_the_float64_value_rounded(self, xp):
        out = sinusoidal(ints(xp, [0, 9]), 8, convention="patchtst", num_positions=10, dtype=xp.float32)
        assert out.dtype == xp.float32
        want = _patchtst_reference(10, 8)[[0, 9]].astype(np.float32)
        assert_close(out, want, xp=xp, dtype=xp.float32, rtol=0, atol=2**-26)

    @UNREAD_ON_DASK
    def test_positions_outside_the_table(self, xp):
        with pytest.raises(ValueError, match=r"^positions must be in \[0, num_positions - 1 = 3\]"):
            sinusoidal(ints(xp, [4]), 4, convention="patchtst", num_positions=4)

    @pytest.mark.parametrize(
        ("d", "options", "error", "pattern"),
        [
            (4, {}, TypeError, r"^num_positions must be an integer"),
            (5, {"num_positions": 3}, ValueError, r"^dim must be even for convention 'patchtst'"),
            (4, {"num_positions": 0}, ValueError, r"^num_positions must be"),
            (4, {"num_positions": 2.0}, TypeError, r"^num_positions must be"),
            (4, {"num_positions": 3, "base": 10.0}, TypeError, r"^options must be among 'num_positions'"),
            (2**10, {"num_positions": 2**19}, ValueError, r"^num_positions must be small enough"),
        ],
    )
    def test_bad_input(self, xp, d, options, error, pattern):
        with pytest.raises(error, match=pattern):
            sinusoidal(ints(xp, [0]), d, convention="patchtst", **options)
