"""The oracle of the conformance suite: independent of posenc_ref, right, and precise enough.

Expected values here are published numbers (the reference notes, the papers'
worked examples) or PyTorch running HF's own T5 expression, never posenc_ref.
"""

from __future__ import annotations

import ast
import math
import pathlib
import random
from fractions import Fraction
from typing import ClassVar

import mpmath
import pytest

from posenc_ref_conformance import oracle
from posenc_ref_conformance.oracle import alibi, rope, sinusoidal, t5

ORACLE_DIR = pathlib.Path(oracle.__file__).parent


def test_oracle_imports_nothing_from_posenc_ref() -> None:
    for path in ORACLE_DIR.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            assert not any(n.startswith("posenc_ref") for n in [*names, module]), path.name


def _f64(rows: list[list[mpmath.mpf]]) -> list[list[float]]:
    return [[oracle.round_float64(v) for v in row] for row in rows]


def _round_rational(q: Fraction, bits: int) -> Fraction:
    """``q`` rounded to ``bits`` significant bits, nearest with ties to even, in exact arithmetic."""
    sign, q = (-1 if q < 0 else 1), abs(q)
    e = q.numerator.bit_length() - q.denominator.bit_length()
    if Fraction(2) ** e > q:
        e -= 1
    scale = Fraction(2) ** (bits - 1 - e)
    whole, rest = divmod(q * scale, 1)
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and whole % 2):
        whole += 1
    return sign * whole / scale


class TestRounding:
    def test_ties_to_even_and_context(self) -> None:
        with oracle.working_precision():
            assert oracle.round_float64(1 + mpmath.mpf(2) ** -53) == 1.0
            assert oracle.round_float64(1 + 3 * mpmath.mpf(2) ** -53) == 1 + 2.0**-51
            assert oracle.round_float64(mpmath.mpf(1) / 3) == 1 / 3
            assert oracle.round_float32(mpmath.mpf(1) / 3) == 0.3333333432674408
            assert mpmath.mp.dps == oracle.DEFAULT_DIGITS
        assert mpmath.mp.dps == 15

    @pytest.mark.parametrize("bits", [53, 24])
    def test_matches_exact_rational_rounding(self, bits: int) -> None:
        """Dyadic values of 60-90 bits (ties planted) round as exact rational arithmetic says."""
        rng = random.Random(20261201)
        rounder = oracle.round_float64 if bits == 53 else oracle.round_float32
        values = []
        for _ in range(400):
            width = rng.randint(bits + 1, 90)
            mantissa = rng.getrandbits(width) | (1 << (width - 1))
            if rng.random() < 0.3:  # an exact tie: ...x1000...0 beyond the kept bits
                drop = width - bits
                mantissa = (mantissa >> drop << drop) | (1 << (drop - 1))
            if rng.random() < 0.1:  # all ones: rounding carries into the next binade
                mantissa = (1 << width) - 1
            sign = rng.choice([1, -1])
            values.append(sign * Fraction(mantissa, 2 ** rng.randint(width - 20, width + 20)))
        with oracle.working_precision():
            for q in values:
                exact_mpf = mpmath.mpf(q.numerator) / q.denominator  # dyadic: exact at 80 digits
                assert rounder(exact_mpf) == float(_round_rational(q, bits)), q

    def test_higher_precision_gives_the_same_float64(self) -> None:
        """A sample of hard values (large angles) rounds identically at 80 and 120 digits."""

        def sample() -> list[float]:
            table = sinusoidal.vaswani([2**24 + 1, 2**20], 16) + sinusoidal.tensor2tensor([2**24 - 1], 8)
            inv, factor = rope.rope_frequencies(
                128,
                base=500000.0,
                scaling={
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 8192,
                },
            )
            return [oracle.round_float64(v) for v in [*(v for row in table for v in row), *inv, factor]]

        with oracle.working_precision(oracle.DEFAULT_DIGITS):
            low = sample()
        with oracle.working_precision(oracle.CHECK_DIGITS):
            high = sample()
        assert low == high

    def test_floor_refuses_near_integers(self) -> None:
        from posenc_ref_conformance.oracle._numeric import floor_checked

        with oracle.working_precision():
            assert floor_checked(mpmath.mpf(3), "x") == 3
            assert floor_checked(mpmath.mpf("2.5"), "x") == 2
            with pytest.raises(oracle.IllConditioned, match=r"^x = "):
                floor_checked(3 - mpmath.mpf("1e-12"), "x")


class TestSinusoidal:
    """other_schemes.md §1.7: d = 8, p = 1 and the odd d = 5 table, to 6 decimals."""

    @pytest.mark.parametrize(
        ("convention", "expected"),
        [
            ("vaswani", [0.841471, 0.540302, 0.099833, 0.995004, 0.01, 0.99995, 0.001, 1.0]),
            ("tensor2tensor", [0.841471, 0.046399, 0.002154, 0.0001, 0.540302, 0.998923, 0.999998, 1.0]),
            ("marian", [0.841471, 0.099833, 0.01, 0.001, 0.540302, 0.995004, 0.99995, 1.0]),
        ],
    )
    def test_d8_p1(self, convention: str, expected: list[float]) -> None:
        with oracle.working_precision():
            row = _f64(sinusoidal.sinusoidal([1], 8, convention))[0]
        assert row == pytest.approx(expected, abs=5e-7)

    @pytest.mark.parametrize(
        ("convention", "expected"),
        [
            ("vaswani", [0.841471, 0.540302, 0.025116, 0.999685, 0.000631]),
            ("tensor2tensor", [0.841471, 1e-4, 0.540302, 1.0, 0.0]),
            ("marian", [0.841471, 0.025116, 0.000631, 0.540302, 0.999685]),
        ],
    )
    def test_odd_d5_p1(self, convention: str, expected: list[float]) -> None:
        with oracle.working_precision():
            row = _f64(sinusoidal.sinusoidal([1], 5, convention))[0]
        assert row == pytest.approx(expected, abs=5e-7)

    def test_fairseq_offset_and_padding_row(self) -> None:
        with oracle.working_precision():
            rows = _f64(sinusoidal.fairseq([-1, 0], 8, padding_idx=1))
            t2t = _f64(sinusoidal.tensor2tensor([2], 8))
        assert rows[0] == [0.0] * 8
        assert rows[1] == t2t[0]  # token 0 sits on row padding_idx + 1 = 2

    def test_mlx_defaults(self) -> None:
        with oracle.working_precision():
            row = _f64(sinusoidal.mlx([1], 4))[0]
        s = math.sqrt(2 / 4)
        assert row == pytest.approx(
            [s * math.sin(1), s * math.sin(1e-4), s * math.cos(1), s * math.cos(1e-4)]
        )


class TestRope:
    def test_yarn_correction_ranges_from_the_notes(self) -> None:
        """rope_variants.md §1.3: Llama-2 20.94/45.03 -> 20/46; gpt-oss 8.0928/17.3980, factor 1.34657."""

        def bounds(d: int, b: float, length: int) -> tuple[float, float]:
            dim = [d * math.log(length / (r * 2 * math.pi)) / (2 * math.log(b)) for r in (32, 1)]
            return dim[0], dim[1]

        assert bounds(128, 1e4, 4096) == pytest.approx((20.94, 45.03), abs=0.005)
        assert bounds(64, 150000, 4096) == pytest.approx((8.0928, 17.3980), abs=5e-5)
        with oracle.working_precision():
            inv, factor = rope.rope_frequencies(
                64,
                base=150000.0,
                scaling={
                    "rope_type": "yarn",
                    "factor": 32.0,
                    "original_max_position_embeddings": 4096,
                    "truncate": False,
                },
            )
            theta = [oracle.round_float64(150000.0 ** (-2 * i / 64)) for i in range(32)]
            got = [oracle.round_float64(v) for v in inv]
        assert float(factor) == pytest.approx(1.34657359, abs=1e-8)
        low, high = bounds(64, 150000, 4096)
        for i, (g, t) in enumerate(zip(got, theta, strict=True)):
            ramp = min(max((i - low) / (high - low), 0.0), 1.0)
            assert g == pytest.approx(t / 32 * ramp + t * (1 - ramp), rel=1e-12)

    def test_llama3_bands(self) -> None:
        with oracle.working_precision():
            inv, _ = rope.rope_frequencies(
                128,
                base=500000.0,
                scaling={
                    "rope_type": "llama3",
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 8192,
                },
            )
        for i, value in enumerate(inv):
            theta = 500000.0 ** (-2 * i / 128)
            wavelength = 2 * math.pi / theta
            if wavelength < 2048:
                assert float(value) == pytest.approx(theta, rel=1e-14)
            elif wavelength > 8192:
                assert float(value) == pytest.approx(theta / 8, rel=1e-14)

    def test_longrope_switch_is_strict(self) -> None:
        params = {
            "rope_type": "longrope",
            "original_max_position_embeddings": 4096,
            "max_position_embeddings": 131072,
            "short_factor": [1.0] * 4,
            "long_factor": [2.0] * 4,
        }
        with oracle.working_precision():
            at, _ = rope.rope_frequencies(8, scaling=params, seq_len=4096)
            above, factor = rope.rope_frequencies(8, scaling=params, seq_len=4097)
        assert float(at[1]) == pytest.approx(2 * float(above[1]))
        assert float(factor) == pytest.approx(math.sqrt(1 + math.log(32) / math.log(4096)))

    def test_cos_sin_and_rotation(self) -> None:
        with oracle.working_precision():
            cos, sin = rope.rope_cos_sin([3], [1.0, 0.5], attention_factor=2.0, layout="interleaved")
            y = rope.apply_rope([1.0, 0.0, 0.0, 1.0], cos[0], sin[0], layout="interleaved")
        assert [float(c) for c in cos[0]] == pytest.approx([2 * math.cos(3)] * 2 + [2 * math.cos(1.5)] * 2)
        assert [float(v) for v in y] == pytest.approx(
            [2 * math.cos(3), 2 * math.sin(3), -2 * math.sin(1.5), 2 * math.cos(1.5)]
        )


class TestT5:
    BIDIRECTIONAL: ClassVar[dict[int, int]] = {
        -7: 7,
        -8: 8,
        -11: 8,
        -12: 9,
        -16: 10,
        -22: 10,
        -23: 11,
        -31: 11,
        -32: 12,
        -45: 12,
        -46: 13,
        -63: 13,
        -64: 14,
        -90: 14,
        -91: 15,
        -1000: 15,
        0: 0,
        1: 17,
        7: 23,
        8: 24,
        11: 24,
        12: 25,
        90: 30,
        91: 31,
        10**6: 31,
    }
    CAUSAL: ClassVar[dict[int, int]] = {
        5: 0,
        0: 0,
        -1: 1,
        -15: 15,
        -16: 16,
        -18: 16,
        -99: 30,
        -112: 30,
        -113: 31,
    }

    def test_table_from_the_notes(self) -> None:
        """other_schemes.md §4.3, 32 buckets / max distance 128."""
        for rel, bucket in self.BIDIRECTIONAL.items():
            assert t5.t5_bucket(rel, bidirectional=True) == bucket, rel
        for rel, bucket in self.CAUSAL.items():
            assert t5.t5_bucket(rel, bidirectional=False) == bucket, rel
        assert 16 not in {t5.t5_bucket(r, bidirectional=True) for r in range(-300, 301)}

    @pytest.mark.parametrize(
        ("num_buckets", "max_distance", "bidirectional", "relative"),
        [
            (32, 128, True, range(-300, 301)),
            (32, 128, False, range(-300, 10)),
            (64, 128, True, range(-400, 401)),
            (36, 50, False, range(-60, 1)),
            (9, 128, False, range(-200, 1)),
            (55, 32768, False, range(-3400, -3300)),
            (1000, 32768, True, range(21700, 21800)),
        ],
    )
    def test_float32_model_matches_pytorch(
        self, num_buckets: int, max_distance: int, bidirectional: bool, relative: range
    ) -> None:
        """HF's expression run by PyTorch gives the oracle's float32-model bucket or the exact one.

        The model rounds each float32 step correctly; PyTorch's float32 ``log`` is not
        correctly rounded everywhere and differs by CPU (AMD EPYC, torch 2.13: at
        36/50 causal, ``-30`` gives the exact bucket 27 where the model's correctly
        rounded log gives 26, because the log term is 9 up to one float32 ulp).  Both
        are stored in the golden files (exact as the value, the model as acceptable).
        """
        torch = pytest.importorskip(
            "torch",
            reason="torch is not installed (the model evaluation is torch's float32)",
            exc_type=ImportError,
        )
        rp = torch.tensor(list(relative))
        nb = num_buckets
        out = torch.zeros_like(rp)
        if bidirectional:
            nb //= 2
            out += (rp > 0).to(torch.long) * nb
            rp = torch.abs(rp)
        else:
            rp = -torch.min(rp, torch.zeros_like(rp))
        exact = nb // 2
        large = exact + (torch.log(rp.float() / exact) / math.log(max_distance / exact) * (nb - exact)).to(
            torch.long
        )
        large = torch.min(large, torch.full_like(large, nb - 1))
        hf = (out + torch.where(rp < exact, rp, large)).tolist()
        kw = {"bidirectional": bidirectional, "num_buckets": num_buckets, "max_distance": max_distance}
        with oracle.working_precision():
            model = [t5.t5_bucket_float32(r, **kw) for r in relative]
            exact_buckets = [t5.t5_bucket(r, **kw) for r in relative]
        outside = [
            (r, h, m, e)
            for r, h, m, e in zip(relative, hf, model, exact_buckets, strict=True)
            if h not in (m, e)
        ]
        assert not outside, f"(relative, torch, float32 model, exact): {outside}"
        assert sum(m != e for m, e in zip(model, exact_buckets, strict=True)) <= 1

    def test_exact_and_float32_differ_only_at_documented_points(self) -> None:
        with oracle.working_precision():
            assert t5.t5_bucket(-30, bidirectional=False, num_buckets=36, max_distance=50) == 27
            assert t5.t5_bucket_float32(-30, bidirectional=False, num_buckets=36, max_distance=50) == 26
            assert t5.t5_bucket(-8, bidirectional=False, num_buckets=9, max_distance=128) == 5  # exact tie


class TestAlibi:
    def test_slopes(self) -> None:
        """Press et al.'s recursion: 12 heads = the 8-head set, then odd entries of the 16-head set."""
        with oracle.working_precision():
            twelve = [float(s) for s in alibi.alibi_slopes(12)]
            eight = [float(s) for s in alibi.alibi_slopes(8)]
            mpt = [float(s) for s in alibi.alibi_slopes(12, max_bias=16.0)]
        assert eight == [2.0**-k for k in range(1, 9)]
        assert twelve[:8] == eight
        assert twelve[8:] == pytest.approx([2**-0.5, 2**-1.5, 2**-2.5, 2**-3.5])
        p = 16  # MPT: 2 ** ceil(log2 12); slopes 2 ** -(k * 16 / p); cat(s[1::2], s[::2])[:12]
        s = [2.0 ** -(k * 16.0 / p) for k in range(1, p + 1)]
        assert mpt == pytest.approx((s[1::2] + s[::2])[:12], rel=1e-15)

    def test_forms_agree_under_a_causal_mask(self) -> None:
        with oracle.working_precision():
            sym = alibi.alibi_bias([3], [0, 1, 2, 3, 4], [0.5], form="symmetric")[0][0]
            causal = alibi.alibi_bias([3], [0, 1, 2, 3, 4], [0.5], form="causal")[0][0]
        assert [float(v) for v in sym] == [-1.5, -1.0, -0.5, 0.0, -0.5]
        assert [float(v) for v in causal[:4]] == [float(v) for v in sym[:4]]
