"""rope_frequencies: every scaling type against mpmath formulas written here from the papers and HF."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import mpmath
import pytest

from posenc_ref import SCALING_TYPES, RopeFrequencies, _compat, rope_cos_sin, rope_frequencies
from posenc_ref._compat import has_float64
from posenc_ref_conformance import oracle
from tests.conftest import UNREAD_ON_DASK
from tests.helpers import assert_close, float_dtype, to_numpy

DPS = 50


# --- expected values: the suite's oracle (mpmath, from the papers and HF's formulas) -------------------


def oracle_freqs(
    dim: int, *, base: float = 10000.0, scaling: dict | None = None, seq_len: int | None = None
) -> tuple[list[mpmath.mpf], mpmath.mpf]:
    """``(inv_freq, attention_factor)`` of the oracle at :data:`DPS` digits."""
    with oracle.working_precision(DPS):
        return oracle.rope.rope_frequencies(dim, base=base, scaling=scaling, seq_len=seq_len)


def thetas(dim: int, base: float = 10000.0) -> list[mpmath.mpf]:
    """The unscaled ``base**(-2i/dim)``."""
    return oracle_freqs(dim, base=base)[0]


def same(a: Any, b: Any, divisor: float = 1) -> bool:
    """``a == b / divisor`` to 40 digits (evaluated at the oracle's precision)."""
    with mpmath.workdps(DPS):
        b = mpmath.mpf(b) / divisor
        return abs(mpmath.mpf(a) - b) <= mpmath.mpf("1e-40") * abs(b)


# --- helpers ---------------------------------------------------------------------------------------------


def check_inv_freq(freqs: RopeFrequencies, expected: list, xp: Any, device: Any = None) -> None:
    """inv_freq is the once-rounded exact value: at most one ulp of the compute dtype."""
    dtype = float_dtype(xp)
    rtol = 2.0**-52 if dtype == xp.float64 else 2.0**-23
    assert_close(
        freqs.inv_freq, [float(v) for v in expected], xp=xp, dtype=dtype, device=device, rtol=rtol, atol=0
    )


def frequencies(xp: Any, dim: int, **kwargs: Any) -> RopeFrequencies:
    return rope_frequencies(dim, xp=xp, **kwargs)


LLAMA2_YARN = {"rope_type": "yarn", "factor": 16.0, "original_max_position_embeddings": 4096}
GPT_OSS = {
    "rope_type": "yarn",
    "factor": 32.0,
    "beta_fast": 32.0,
    "beta_slow": 1.0,
    "original_max_position_embeddings": 4096,
    "truncate": False,
}
YARN_4096 = {"rope_type": "yarn", "original_max_position_embeddings": 4096}
LLAMA31 = {
    "rope_type": "llama3",
    "factor": 8.0,
    "low_freq_factor": 1.0,
    "high_freq_factor": 4.0,
    "original_max_position_embeddings": 8192,
}


class TestRopeFrequencies:
    def test_scaling_types(self) -> None:
        assert SCALING_TYPES == (
            "default",
            "linear",
            "ntk",
            "dynamic",
            "yarn",
            "llama3",
            "longrope",
            "proportional",
        )

    @pytest.mark.parametrize("base", [10000.0, 500000.0, 1e7])
    def test_default(self, xp: Any, device: Any, base: float) -> None:
        freqs = rope_frequencies(128, base=base, xp=xp, device=device)
        check_inv_freq(freqs, thetas(128, base), xp, device)
        assert freqs.attention_factor == 1.0
        assert rope_frequencies(128, base=base, scaling={"type": "default"}, xp=xp).attention_factor == 1.0

    def test_linear(self, xp: Any) -> None:
        freqs = frequencies(xp, 64, scaling={"rope_type": "linear", "factor": 4})
        check_inv_freq(freqs, [t / 4 for t in thetas(64)], xp)

    def test_ntk(self, xp: Any) -> None:
        # bloc97: b' = b * s**(d/(d-2)); the top frequency is kept, the lowest divided by exactly s.
        scaling = {"rope_type": "ntk", "factor": 8.0}
        freqs = frequencies(xp, 64, scaling=scaling)
        expected = oracle_freqs(64, scaling=scaling)[0]
        check_inv_freq(freqs, expected, xp)
        assert same(expected[0], thetas(64)[0]) and same(expected[-1], thetas(64)[-1], 8)

    @pytest.mark.parametrize(("seq_len", "length"), [(None, 2048), (1000, 2048), (2048, 2048), (8192, 8192)])
    def test_dynamic(self, xp: Any, seq_len: int | None, length: int) -> None:
        # HF: b' = b (s L/Lmax - (s-1))**(d/(d-2)), L = max(seq_len, Lmax): unchanged below and at the limit.
        scaling = {"rope_type": "dynamic", "factor": 4.0, "max_position_embeddings": 2048}
        freqs = frequencies(xp, 128, scaling=scaling, seq_len=seq_len)
        check_inv_freq(freqs, oracle_freqs(128, scaling=scaling, seq_len=seq_len)[0], xp)
        check_inv_freq(freqs, oracle_freqs(128, scaling=scaling, seq_len=length)[0], xp)
        if length == 2048:
            check_inv_freq(freqs, thetas(128), xp)

    def test_yarn_llama2_range_20_46(self, xp: Any) -> None:
        # correction dims 20.94 and 45.03, truncated to 20/46: pairs 0..20 extrapolated (unchanged),
        # 46.. interpolated (theta / 16), a ramp between
        freqs = frequencies(xp, 128, scaling=LLAMA2_YARN)
        expected, attention = oracle_freqs(128, scaling=LLAMA2_YARN)
        check_inv_freq(freqs, expected, xp)
        plain = thetas(128)
        check_inv_freq(freqs, plain[:21] + expected[21:46] + [t / 16 for t in plain[46:]], xp)
        assert not any(same(expected[i], plain[i]) or same(expected[i], plain[i], 16) for i in range(21, 46))
        assert freqs.attention_factor == pytest.approx(float(attention), rel=1e-15)

    def test_yarn_gpt_oss_untruncated(self, xp: Any) -> None:
        # correction dims 8.0928 and 17.3980, not truncated
        freqs = frequencies(xp, 64, base=150000.0, scaling=GPT_OSS)
        untruncated = oracle_freqs(64, base=150000.0, scaling=GPT_OSS)[0]
        check_inv_freq(freqs, untruncated, xp)
        assert freqs.attention_factor == pytest.approx(1.3465735902799727, rel=1e-15)
        assert round(freqs.attention_factor, 5) == 1.34657
        # the truncated range (8/18) gives different frequencies: the vLLM#27722 bug is visible
        truncated = to_numpy(
            frequencies(xp, 64, base=150000.0, scaling={**GPT_OSS, "truncate": True}).inv_freq
        )
        exact = float(untruncated[9])
        assert abs(truncated[9] / exact - 1) > 1e-3

    @pytest.mark.parametrize(
        ("extra", "expected"),
        [
            ({"mscale": 1.0, "mscale_all_dim": 1.0}, 1.0),  # DeepSeek-V3: the ratio is 1
            ({"mscale": 0.707, "mscale_all_dim": 1.0}, None),  # a real ratio
            ({"mscale": 1.0}, "default"),  # only one key: HF falls back to 0.1 ln s + 1
            ({"attention_factor": 1.0, "mscale": 1.0, "mscale_all_dim": 0.5}, 1.0),  # explicit wins
        ],
    )
    def test_yarn_attention_factor(self, xp: Any, extra: dict, expected: Any) -> None:
        scaling = {"rope_type": "yarn", "factor": 40, "original_max_position_embeddings": 4096, **extra}
        freqs = frequencies(xp, 64, scaling=scaling)
        if expected is None:  # HF: get_mscale(s, 0.707) / get_mscale(s, 1.0)
            expected = float(oracle_freqs(64, scaling=scaling)[1])
        elif expected == "default":
            expected = float(oracle_freqs(64, scaling=scaling)[1])
            assert expected == pytest.approx(1.3688879454113936)
        assert freqs.attention_factor == pytest.approx(expected, rel=1e-15)

    def test_yarn_factor_from_lengths(self, xp: Any) -> None:
        # v5 / PR #40320: factor absent -> max_position_embeddings / original_max
        scaling = {
            "rope_type": "yarn",
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 16384,
        }
        freqs = frequencies(xp, 128, scaling=scaling)
        factor_4, attention_4 = oracle_freqs(128, scaling={**YARN_4096, "factor": 4.0})
        check_inv_freq(freqs, factor_4, xp)
        assert freqs.attention_factor == pytest.approx(float(attention_4), rel=1e-15)
        # an explicit factor wins over the ratio
        explicit = frequencies(xp, 128, scaling={**scaling, "factor": 2.0})
        check_inv_freq(explicit, oracle_freqs(128, scaling={**YARN_4096, "factor": 2.0})[0], xp)
        # original_max defaults to max_position_embeddings (HF v5 standardize_rope_params)
        only_max = frequencies(
            xp, 128, scaling={"rope_type": "yarn", "factor": 4.0, "max_position_embeddings": 4096}
        )
        check_inv_freq(only_max, factor_4, xp)

    @pytest.mark.parametrize(
        ("key", "value"),
        [("beta_fast", 0), ("beta_slow", 0.0), ("mscale", 0), ("mscale_all_dim", 0.0), ("mscale", -100.0)],
    )
    def test_yarn_zero_or_negative_is_an_error_never_a_default(self, xp: Any, key: str, value: float) -> None:
        # HF's `rope.get("beta_fast") or 32` and `if mscale and mscale_all_dim` read 0 as absent; a
        # reference refuses the present-but-invalid value (mscale=-100 made the factor -11.3 before).
        scaling = {**LLAMA2_YARN, "mscale": 1.0, "mscale_all_dim": 1.0, key: value}
        pattern = rf"^scaling\['{key}'\] must be > 0\.0; got .*HF reads 0 as absent"
        with pytest.raises(ValueError, match=pattern):
            frequencies(xp, 128, scaling=scaling)

    def test_longrope_with_an_original_length_of_one_is_a_value_error(self, xp: Any) -> None:
        # its attention factor sqrt(1 + ln(factor) / ln(original)) divides by ln(1) = 0 (a raw
        # decimal.DivisionByZero before)
        scaling = {
            "rope_type": "longrope",
            "short_factor": [1.0] * 4,
            "long_factor": [2.0] * 4,
            "original_max_position_embeddings": 1,
            "factor": 4.0,
        }
        pattern = r"^scaling\['original_max_position_embeddings'\] must be >= 2 .*; got 1$"
        with pytest.raises(ValueError, match=pattern):
            frequencies(xp, 8, scaling=scaling)

    def test_yarn_beta_defaults(self, xp: Any) -> None:
        # absent or None: the default (32, 1)
        absent = {**LLAMA2_YARN, "beta_slow": None}
        check_inv_freq(frequencies(xp, 128, scaling=absent), oracle_freqs(128, scaling=LLAMA2_YARN)[0], xp)
        custom = {**LLAMA2_YARN, "beta_fast": 16, "beta_slow": 2}
        by_betas = oracle_freqs(128, scaling=custom)[0]
        check_inv_freq(frequencies(xp, 128, scaling=custom), by_betas, xp)
        assert by_betas != oracle_freqs(128, scaling=LLAMA2_YARN)[0]

    def test_yarn_equal_bounds_guard(self, xp: Any) -> None:
        # original_max = 4 < 2 pi: both correction dims are negative, clamp to 0 == 0, then high = 0.001
        scaling = {"rope_type": "yarn", "factor": 8.0, "original_max_position_embeddings": 4}
        expected = oracle_freqs(32, scaling=scaling)[0]
        plain = thetas(32)
        assert same(expected[0], plain[0]) and same(expected[1], plain[1], 8)
        check_inv_freq(frequencies(xp, 32, scaling=scaling), expected, xp)

    def test_llama3_1(self, xp: Any) -> None:
        freqs = frequencies(xp, 128, base=500000.0, scaling=LLAMA31)
        expected = oracle_freqs(128, base=500000.0, scaling=LLAMA31)[0]
        check_inv_freq(freqs, expected, xp)
        kinds = [
            "kept" if same(e, t) else "scaled" if same(e, t, 8) else "smoothed"
            for e, t in zip(expected, thetas(128, 500000.0), strict=True)
        ]
        assert kinds.count("kept") > 0 and kinds.count("scaled") > 0 and kinds.count("smoothed") > 0
        assert freqs.attention_factor == 1.0

    @pytest.mark.parametrize("side", [-1, 1])
    def test_llama3_band_edges(self, xp: Any, side: int) -> None:
        # Put pair 5's wavelength 1e-9 (relative) inside or outside each band edge.
        wavelength = float(2 * mpmath.pi / thetas(64)[5])
        edge = wavelength * (1 + side * 1e-9)
        for key in ("high_freq_factor", "low_freq_factor"):
            params = {"low_freq_factor": 1.0, "high_freq_factor": 8.0}
            params[key] = 8192 / edge
            if params["high_freq_factor"] < params["low_freq_factor"]:
                continue
            scaling = {**LLAMA31, **params}
            expected = oracle_freqs(64, scaling=scaling)[0]
            check_inv_freq(frequencies(xp, 64, scaling=scaling), expected, xp)

    @pytest.mark.parametrize("side", [-1, 1])
    def test_llama3_equal_factors(self, xp: Any, side: int) -> None:
        # Llama-4 style low == high: two bands with a jump at wavelength == original_max
        wavelength = float(2 * mpmath.pi / thetas(64)[20])
        factor = 8192 / (wavelength * (1 + side * 1e-9))
        scaling = {**LLAMA31, "low_freq_factor": factor, "high_freq_factor": factor}
        expected = oracle_freqs(64, scaling=scaling)[0]
        theta = thetas(64)[20]
        assert same(expected[20], theta, 8 if side < 0 else 1)
        check_inv_freq(frequencies(xp, 64, scaling=scaling), expected, xp)

    def test_longrope_short_long_switch(self, xp: Any) -> None:
        short = [1.0 + i / 10 for i in range(48)]
        long = [2.0 + i for i in range(48)]
        scaling = {
            "rope_type": "longrope",
            "short_factor": short,
            "long_factor": long,
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 131072,
        }
        plain = thetas(96)
        for seq_len, factors in ((None, short), (1, short), (4096, short), (4097, long), (131072, long)):
            freqs = frequencies(xp, 96, scaling=scaling, seq_len=seq_len)
            expected, scale = oracle_freqs(96, scaling=scaling, seq_len=seq_len)
            check_inv_freq(freqs, expected, xp)
            assert all(same(e, t, f) for e, t, f in zip(expected, plain, factors, strict=True))
            assert freqs.attention_factor == pytest.approx(float(scale), rel=1e-15)
        assert float(scale) == pytest.approx(1.1902380714238083)  # sqrt(1 + ln 32 / ln 4096)
        explicit = frequencies(xp, 96, scaling={**scaling, "factor": 4.0})
        assert explicit.attention_factor == pytest.approx(
            float(mpmath.sqrt(1 + mpmath.log(4) / mpmath.log(4096)))
        )
        assert frequencies(xp, 96, scaling={**scaling, "attention_factor": 1.25}).attention_factor == 1.25
        no_scale = {**scaling, "max_position_embeddings": 4096}
        assert frequencies(xp, 96, scaling=no_scale).attention_factor == 1.0

    def test_proportional(self, xp: Any) -> None:
        scaling = {"rope_type": "proportional", "partial_rotary_factor": 0.25, "factor": 2.0}
        freqs = frequencies(xp, 256, scaling=scaling)
        rotated = thetas(256)[:32]  # denominator: the full head_dim 256
        check_inv_freq(freqs, [t / 2 for t in rotated] + [0] * 96, xp)
        full = frequencies(xp, 64, scaling={"rope_type": "proportional"})
        check_inv_freq(full, thetas(64), xp)

    def test_compute_dtype_float32(self, xp: Any, device: Any) -> None:
        freqs = rope_frequencies(
            64, scaling=GPT_OSS, base=150000.0, compute_dtype=xp.float32, xp=xp, device=device
        )
        expected = [float(v) for v in oracle_freqs(64, base=150000.0, scaling=GPT_OSS)[0]]
        assert_close(freqs.inv_freq, expected, xp=xp, dtype=xp.float32, device=device, rtol=2.0**-24, atol=0)

    def test_turns_are_exact(self) -> None:
        freqs = rope_frequencies(16, base=500000.0)
        for turn, theta in zip(freqs.turns, thetas(16, 500000.0), strict=True):
            with mpmath.workdps(DPS):
                assert abs(mpmath.mpf(turn.numerator) / turn.denominator - theta / (2 * mpmath.pi)) < 1e-45

    def test_built_from_an_array(self, xp: Any) -> None:
        freqs = RopeFrequencies(xp.asarray([1.0, 0.5]), 1.5)
        assert freqs.attention_factor == 1.5 and freqs.turns is None


class TestRopeFrequenciesValidation:
    """main: a hand-built RopeFrequencies with NaN, a 2-D or wrong-length table was never validated."""

    @pytest.mark.parametrize(
        ("values", "kwargs", "error", "pattern"),
        [
            pytest.param(
                [float("nan"), 1.0],
                {},
                ValueError,
                r"^inv_freq must be finite and >= 0\.0; got a NaN",
                marks=UNREAD_ON_DASK,
            ),
            pytest.param([float("inf")], {}, ValueError, r"^inv_freq must be finite", marks=UNREAD_ON_DASK),
            pytest.param(
                [-1.0, 1.0],
                {},
                ValueError,
                r"^inv_freq must be finite and >= 0\.0; got a minimum of -1\.0",
                marks=UNREAD_ON_DASK,
            ),
            ([[1.0], [0.5]], {}, ValueError, r"^inv_freq must be 1-dimensional; got shape \(2, 1\)"),
            ([], {}, ValueError, r"^inv_freq must be of length 1 to 16384"),
            ([1.0], {"attention_factor": 0.0}, ValueError, r"^attention_factor must be > 0\.0; got 0\.0"),
            ([1.0], {"attention_factor": float("nan")}, ValueError, r"^attention_factor must be finite"),
            ([1.0], {"attention_factor": "2"}, TypeError, r"^attention_factor must be a real number"),
            ([1.0, 0.5], {"turns": (Fraction(1, 7),)}, ValueError, r"^turns must be None or a sequence of 2"),
            ([1.0], {"turns": (0.5,)}, TypeError, r"^turns\[0\] must be a Fraction or Decimal; got 0\.5"),
            pytest.param(
                [1.0],
                {"turns": (Fraction(1, 7),)},
                ValueError,
                r"^turns\[0\] must be inv_freq\[0\] / 2pi",
                marks=UNREAD_ON_DASK,
            ),
        ],
    )
    def test_hand_built_frequencies_are_validated(self, xp: Any, values, kwargs, error, pattern) -> None:
        array = xp.asarray(values, dtype=xp.float32)
        with pytest.raises(error, match=pattern):
            RopeFrequencies(array, **kwargs)

    def test_an_integer_table_is_a_type_error(self, xp: Any) -> None:
        with pytest.raises(TypeError, match=r"^inv_freq must be an array of a real floating dtype"):
            RopeFrequencies(xp.asarray([1, 2]))
        with pytest.raises(
            TypeError, match=r"^inv_freq must be an array of a real floating dtype; got \[1\.0\]"
        ):
            RopeFrequencies([1.0])

    def test_zeros_are_unrotated_pairs(self, xp: Any) -> None:
        freqs = RopeFrequencies(xp.asarray([1.0, 0.0], dtype=xp.float32))  # as proportional scaling makes
        assert freqs.inv_freq.shape == (2,)


def assert_exact_turns(turns: Any, values: list[float]) -> None:
    """Each turn is value / 2pi for the exact binary value, to the 80 digits of the library's pi."""
    with mpmath.workdps(100):
        for turn, v in zip(turns, values, strict=True):
            exact = mpmath.mpf(v) / (2 * mpmath.pi)
            assert abs(mpmath.mpf(turn.numerator) / turn.denominator - exact) < 1e-78 * exact


class TestFromInvFreq:
    def test_turns_are_exact_rationals_of_the_values(self, xp: Any) -> None:
        values = [1.0, 0.1, 1e-4]
        freqs = RopeFrequencies.from_inv_freq(values, 1.25, xp=xp)
        assert freqs.attention_factor == 1.25
        assert_exact_turns(freqs.turns, values)

    def test_phases_are_exact_at_far_positions(self, xp: Any) -> None:
        # the same inv_freq values through the device reduction lose accuracy past |m| = 2**21 in
        # float32; with exact turns the table is a few ulp of the compute dtype at 2**40
        values = [0.9, 0.0123, 1e-4]
        freqs = RopeFrequencies.from_inv_freq(values, xp=xp)
        positions = xp.asarray([2**40 + 3, -(2**33)], dtype=_compat.index_dtype(xp))
        cos, _ = rope_cos_sin(positions, freqs)
        with mpmath.workdps(DPS):
            expected = [
                [float(mpmath.cos(mpmath.mpf(m) * mpmath.mpf(v))) for v in values]
                for m in (2**40 + 3, -(2**33))
            ]
        atol = 8 * 2.0**-53 if has_float64(xp) else 2e-7
        assert_close(cos[..., :3], expected, xp=xp, rtol=0, atol=atol)

    def test_an_array_keeps_its_namespace_and_dtype(self, xp: Any) -> None:
        array = xp.asarray([1.0, 0.5], dtype=xp.float32)
        freqs = RopeFrequencies.from_inv_freq(array)
        assert freqs.inv_freq.dtype == xp.float32
        if _compat.values_known(array):
            assert_exact_turns(freqs.turns, [1.0, 0.5])
        with pytest.raises(ValueError, match=r"^device must be None when inv_freq is an array"):
            RopeFrequencies.from_inv_freq(array, device="cpu")

    @pytest.mark.parametrize(
        ("values", "error", "pattern"),
        [
            (
                {1.0, 0.5},
                TypeError,
                r"^inv_freq must be an array or a sequence of 1 to 16384 real numbers; got",
            ),
            ([1.0, float("nan")], ValueError, r"^inv_freq\[1\] must be finite"),
            ([1.0, -0.5], ValueError, r"^inv_freq\[1\] must be >= 0\.0"),
            (["1.0"], TypeError, r"^inv_freq\[0\] must be a real number"),
            ([], ValueError, r"^inv_freq must be an array or a sequence of 1 to 16384"),
        ],
    )
    def test_bad_values(self, xp: Any, values: Any, error: type, pattern: str) -> None:
        with pytest.raises(error, match=pattern):
            RopeFrequencies.from_inv_freq(values, xp=xp)


class TestRopeFrequenciesErrors:
    @pytest.mark.parametrize(
        ("kwargs", "error", "match"),
        [
            ({"dim": 0}, ValueError, r"^dim must be a positive integer"),
            ({"dim": 7}, ValueError, r"^dim must be an even positive integer; got 7"),
            ({"dim": 8.0}, TypeError, r"^dim must be an integer"),
            ({"base": 1.0}, ValueError, r"^base must be > 1.0"),
            ({"seq_len": 0}, ValueError, r"^seq_len must be a positive integer"),
            ({"scaling": [("rope_type", "linear")]}, TypeError, r"^scaling must be None or a mapping"),
            (
                {"scaling": {"rope_type": "yarm"}},
                ValueError,
                r"^scaling\['rope_type'\] must be one of .*'yarn'",
            ),
            ({"scaling": {"type": "su"}}, ValueError, r"^scaling\['rope_type'\] must be one of .*'longrope'"),
            (
                {"scaling": {"rope_type": "linear", "type": "yarn"}},
                ValueError,
                r"^scaling\['type'\] must be equal to scaling\['rope_type'\]",
            ),
            (
                {"scaling": {"rope_type": "linear"}},
                ValueError,
                r"^scaling must be a mapping that contains 'factor' for rope_type",
            ),
            (
                {"scaling": {"rope_type": "linear", "factor": 0.5}},
                ValueError,
                r"^scaling\['factor'\] must be >= 1",
            ),
            (
                {"scaling": {"rope_type": "linear", "factor": "2"}},
                TypeError,
                r"^scaling\['factor'\] must be a real",
            ),
            (
                {"scaling": {"rope_type": "linear", "factor": 2, "beta_fast": 3}},
                ValueError,
                r"^scaling must be a mapping with only the keys .* got the key 'beta_fast'",
            ),
            (
                {"scaling": {**LLAMA2_YARN, "beta_fats": 3}},
                ValueError,
                r"^scaling must be a mapping with only the keys .*\(did you mean 'beta_fast'\?\)",
            ),
            (
                {"scaling": {**LLAMA2_YARN, "beta_fast": 1, "beta_slow": 2}},
                ValueError,
                r"^scaling\['beta_fast'\] must be >",
            ),
            (
                {"scaling": {**LLAMA2_YARN, "beta_slow": -1}},
                ValueError,
                r"^scaling\['beta_slow'\] must be > 0",
            ),
            (
                {"scaling": {**LLAMA2_YARN, "truncate": 0}},
                TypeError,
                r"^scaling\['truncate'\] must be True or False",
            ),
            (
                {"scaling": {**LLAMA2_YARN, "attention_factor": 0}},
                ValueError,
                r"^scaling\['attention_factor'\] must be > 0",
            ),
            (
                {"scaling": {"rope_type": "yarn", "factor": 4.0}},
                ValueError,
                r"^scaling must be a mapping that contains 'original_max_position_embeddings' or 'max_posi",
            ),
            (
                {"scaling": {"rope_type": "yarn", "original_max_position_embeddings": 4096}},
                ValueError,
                r"^scaling must be a mapping that contains 'factor' or 'max_position_embeddings'",
            ),
            (
                {
                    "scaling": {
                        "rope_type": "yarn",
                        "original_max_position_embeddings": 4096,
                        "max_position_embeddings": 2048,
                    }
                },
                ValueError,
                r"^scaling\['factor'\] must be >= 1 \(none given, .*; got 2048 / 4096",
            ),
            (
                {"scaling": {"rope_type": "dynamic", "factor": 2.0}},
                ValueError,
                r"^scaling must be a mapping that contains 'max_position_embeddings'",
            ),
            (
                {"dim": 2, "scaling": {"rope_type": "ntk", "factor": 2.0}},
                ValueError,
                r"^dim must be > 2 for rope_type 'ntk'",
            ),
            (
                {"scaling": {**LLAMA31, "high_freq_factor": 0.5}},
                ValueError,
                r"^scaling\['high_freq_factor'\] must be >=",
            ),
            (
                {"scaling": {**LLAMA31, "low_freq_factor": None}},
                ValueError,
                r"^scaling must be a mapping that contains 'low_freq_factor'",
            ),
            (
                {"scaling": {**LLAMA31, "original_max_position_embeddings": 8192.5}},
                TypeError,
                r"^scaling\['original_max_position_embeddings'\] must be an integer",
            ),
            (
                {
                    "scaling": {
                        "rope_type": "longrope",
                        "short_factor": [1.0] * 3,
                        "long_factor": [1.0] * 4,
                        "original_max_position_embeddings": 4096,
                    }
                },
                ValueError,
                r"^scaling\['short_factor'\] must be a list of dim // 2 = 4 positive numbers; got 3 entries",
            ),
            (
                {
                    "scaling": {
                        "rope_type": "longrope",
                        "short_factor": [1.0] * 4,
                        "long_factor": [1.0, 1.0, 0.0, 1.0],
                        "original_max_position_embeddings": 4096,
                    }
                },
                ValueError,
                r"^scaling\['long_factor'\]\[2\] must be > 0",
            ),
            (
                {
                    "scaling": {
                        "rope_type": "longrope",
                        "long_factor": [1.0] * 4,
                        "original_max_position_embeddings": 4096,
                    }
                },
                ValueError,
                r"^scaling must be a mapping that contains 'short_factor'",
            ),
            (
                {"scaling": {"rope_type": "default", "rope_theta": 5.0e5}},
                ValueError,
                r"^scaling\['rope_theta'\] must be equal to base",
            ),
            (
                {"scaling": {"rope_type": "linear", "factor": 2.0, "partial_rotary_factor": 0.5}},
                ValueError,
                r"^scaling\['partial_rotary_factor'\] must be 1 for rope_type 'linear'",
            ),
            (
                {"scaling": {"rope_type": "proportional", "partial_rotary_factor": 1.5}},
                ValueError,
                r"^scaling\['partial_rotary_factor'\] must be <= 1.0",
            ),
        ],
    )
    def test_bad_input(self, kwargs: dict, error: type, match: str) -> None:
        kwargs = {"dim": 8, **kwargs}
        dim = kwargs.pop("dim")
        with pytest.raises(error, match=match):
            rope_frequencies(dim, **kwargs)

    def test_longrope_factor_lists_must_be_ordered_sequences(self) -> None:
        # main: a set was accepted (iteration order is arbitrary: silently permuted factors)
        scaling = {"rope_type": "longrope", "original_max_position_embeddings": 64, "factor": 2.0}
        for bad in ({1.0, 2.0}, {"a": 1.0, "b": 2.0}, "12"):
            with pytest.raises(TypeError, match=r"^scaling\['short_factor'\] must be a list of dim // 2 = 2"):
                rope_frequencies(4, scaling={**scaling, "short_factor": bad, "long_factor": [1.0, 1.0]})

    def test_nested_dicts_in_scaling_are_type_errors(self) -> None:
        with pytest.raises(TypeError, match=r"^scaling\['factor'\] must be a real number; got \{"):
            rope_frequencies(8, scaling={"rope_type": "linear", "factor": {"value": 2.0}})
        with pytest.raises(TypeError, match=r"^scaling\['rope_type'\] must be one of .*; got \{"):
            rope_frequencies(8, scaling={"rope_type": {"name": "linear"}})

    def test_rope_theta_equal_to_base_is_accepted(self) -> None:
        freqs = rope_frequencies(8, base=5.0e5, scaling={"rope_type": "default", "rope_theta": 500000})
        assert float(to_numpy(freqs.inv_freq)[0]) == 1.0

    @pytest.mark.float32_only
    def test_float64_where_absent(self, xp: Any) -> None:
        with pytest.raises(ValueError, match=r"^compute_dtype must be float32"):
            rope_frequencies(8, compute_dtype=xp.float64, xp=xp)
