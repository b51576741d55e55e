"""rope_cos_sin, apply_rope and xpos_scale against mpmath and plain formulas written here."""

from __future__ import annotations

import functools
from typing import Any

import mpmath
import numpy as np
import pytest

from posenc_ref import RopeFrequencies, apply_rope, rope_cos_sin, rope_frequencies, xpos_scale
from posenc_ref._compat import has_float64
from tests.conftest import FLOAT64, JAX_ONLY, UNREAD_ON_DASK
from tests.helpers import assert_close, assert_equal, float_dtype, ints, to_numpy

DPS = 50
RNG = np.random.default_rng(20240603)
# Positions up to 2**24 (float64 target) and 2**20 (float32 target): the ends, powers of two and random ones.
P64 = tuple(sorted({0, 1, 2, 3, 1000, 2**23 + 12345, 2**24 - 1, 2**24, *RNG.integers(0, 2**24, 24).tolist()}))
P32 = tuple(sorted({0, 1, 2, 3, 1000, 2**19 + 777, 2**20 - 1, 2**20, *RNG.integers(0, 2**20, 24).tolist()}))
DIM = 64


# --- independent oracle ------------------------------------------------------------------------------------


def mp_thetas(dim: int, base: float) -> list[mpmath.mpf]:
    with mpmath.workdps(DPS):
        return [mpmath.power(mpmath.mpf(base), -mpmath.mpf(2 * i) / dim) for i in range(dim // 2)]


@functools.cache
def mp_table(thetas: tuple, positions: tuple) -> tuple[np.ndarray, np.ndarray]:
    """cos(m theta), sin(m theta) at 50 digits rounded once to float64, shape (positions, thetas)."""
    with mpmath.workdps(DPS):
        cos = np.array([[float(mpmath.cos(m * mpmath.mpf(t))) for t in thetas] for m in positions])
        sin = np.array([[float(mpmath.sin(m * mpmath.mpf(t))) for t in thetas] for m in positions])
    return cos, sin


def default_table(base: float, positions: tuple, dim: int = DIM) -> tuple[np.ndarray, np.ndarray]:
    return mp_table(tuple(mp_thetas(dim, base)), positions)


def max_ulp(actual: np.ndarray, expected: np.ndarray) -> float:
    """Largest error in units of the float64 spacing at the exact value."""
    return float(np.max(np.abs(actual - expected) / np.spacing(np.abs(expected))))


def pairs(table: Any, layout: str = "half") -> np.ndarray:
    """The per-pair columns of a cos/sin table in either layout, as float64 NumPy."""
    host = to_numpy(table).astype(np.float64)
    return host[..., : host.shape[-1] // 2] if layout == "half" else host[..., 0::2]


def expand(pair_values: np.ndarray, layout: str) -> np.ndarray:
    if layout == "half":
        return np.concatenate([pair_values, pair_values], axis=-1)
    return np.repeat(pair_values, 2, axis=-1)


def rotate(x: np.ndarray, dim: int, base: float, positions: tuple, layout: str) -> np.ndarray:
    """Reference rotation (RoFormer eq. 34) of the first ``dim`` channels, exact angles from mpmath."""
    c, s = default_table(base, positions, dim=dim)
    out = x.copy()
    if layout == "half":
        a, b = x[..., : dim // 2], x[..., dim // 2 : dim]
        out[..., : dim // 2], out[..., dim // 2 : dim] = a * c - b * s, b * c + a * s
    else:
        a, b = x[..., 0:dim:2], x[..., 1:dim:2]
        out[..., 0:dim:2], out[..., 1:dim:2] = a * c - b * s, b * c + a * s
    return out


LAYOUTS = ["half", "interleaved"]


class TestRopeCosSin:
    @pytest.mark.parametrize("layout", LAYOUTS)
    def test_values_any_shape(self, xp: Any, device: Any, layout: str) -> None:
        values = [[[0, 1, 2]], [[7, 100, 5000]]]  # (2, 1, 3): per-batch rows with KV-cache offsets
        freqs = rope_frequencies(8, xp=xp, device=device)
        cos, sin = rope_cos_sin(ints(xp, values, device), freqs, layout=layout)
        flat = tuple(np.ravel(values).tolist())
        c, s = default_table(10000.0, flat, dim=8)
        shape = (2, 1, 3, 8)
        assert_close(cos, expand(c, layout).reshape(shape), xp=xp, dtype=float_dtype(xp), device=device)
        assert_close(sin, expand(s, layout).reshape(shape), xp=xp, dtype=float_dtype(xp), device=device)

    @pytest.mark.needs_float64
    @pytest.mark.parametrize("base", [1e4, 5e5, 1e6, 1e7])
    def test_float64_within_4_ulp_up_to_2_24(self, xp: Any, base: float) -> None:
        cos, sin = rope_cos_sin(ints(xp, P64), rope_frequencies(DIM, base=base, xp=xp))
        c, s = default_table(base, P64)
        assert cos.dtype == xp.float64
        assert max_ulp(pairs(cos), c) <= 4
        assert max_ulp(pairs(sin), s) <= 4

    @pytest.mark.parametrize("base", [1e4, 1e6, 1e7])
    @pytest.mark.parametrize("where", ["frequencies", "tables"])
    def test_float32_within_2e6_up_to_2_20(self, xp: Any, base: float, where: str) -> None:
        positions = ints(xp, P32)
        if where == "frequencies":
            freqs = rope_frequencies(DIM, base=base, compute_dtype=xp.float32, xp=xp)
            cos, sin = rope_cos_sin(positions, freqs)
        else:
            cos, sin = rope_cos_sin(
                positions, rope_frequencies(DIM, base=base, xp=xp), compute_dtype=xp.float32
            )
        assert cos.dtype == xp.float32
        c, s = default_table(base, P32)
        assert np.max(np.abs(pairs(cos) - c)) <= 2e-6
        assert np.max(np.abs(pairs(sin) - s)) <= 2e-6

    def test_far_positions(self, xp: Any) -> None:
        # Beyond the targets: up to the int32 limit (float32 digits cover 2**36, float64 digits 2**52).
        far = (2**30 + 7, 2**31 - 1)
        c, s = default_table(1e6, far)
        freqs = rope_frequencies(DIM, base=1e6, xp=xp)
        cos, sin = rope_cos_sin(ints(xp, far), freqs, compute_dtype=xp.float32)
        assert np.max(np.abs(pairs(cos) - c)) <= 2e-6 and np.max(np.abs(pairs(sin) - s)) <= 2e-6
        if has_float64(xp):
            cos, sin = rope_cos_sin(ints(xp, far), freqs)
            assert max_ulp(pairs(cos), c) <= 4 and max_ulp(pairs(sin), s) <= 4

    @pytest.mark.float32_only
    def test_float32_only_backends_default_to_float32(self, xp: Any) -> None:
        cos, sin = rope_cos_sin(ints(xp, P32), rope_frequencies(DIM, base=1e7, xp=xp))
        assert cos.dtype == xp.float32
        c, s = default_table(1e7, P32)
        assert np.max(np.abs(pairs(cos) - c)) <= 2e-6 and np.max(np.abs(pairs(sin) - s)) <= 2e-6

    def test_naive_float32_product_fails(self, xp: Any) -> None:
        # The check above has teeth: cos(float32(m) * float32(theta)) misses by far more than 2e-6.
        thetas = mp_thetas(DIM, 1e4)
        angle = xp.astype(xp.expand_dims(ints(xp, P32), axis=-1), xp.float32) * xp.asarray(
            [float(t) for t in thetas], dtype=xp.float32
        )
        c, _ = default_table(1e4, P32)
        assert np.max(np.abs(to_numpy(xp.cos(angle)).astype(np.float64) - c)) > 1e-3

    def test_arrays_without_turns(self, xp: Any) -> None:
        # HF's float32 inv_freq used as given: the values are taken as exact, phases still reduced exactly.
        thetas32 = np.asarray([float(t) for t in mp_thetas(DIM, 5e5)], dtype=np.float32)
        exact = tuple(mpmath.mpf(float(t)) for t in thetas32)
        freqs = RopeFrequencies(xp.asarray(thetas32.astype(np.float64).tolist(), dtype=float_dtype(xp)))
        if has_float64(xp):
            cos, sin = rope_cos_sin(ints(xp, P64), freqs)
            c, s = mp_table(exact, P64)
            assert max_ulp(pairs(cos), c) <= 4 and max_ulp(pairs(sin), s) <= 4
        cos, sin = rope_cos_sin(ints(xp, P32), freqs, compute_dtype=xp.float32)
        c, s = mp_table(exact, P32)
        assert np.max(np.abs(pairs(cos) - c)) <= 2e-6 and np.max(np.abs(pairs(sin) - s)) <= 2e-6

    def test_attention_factor(self, xp: Any) -> None:
        scaling = {
            "rope_type": "yarn",
            "factor": 32.0,
            "original_max_position_embeddings": 4096,
            "truncate": False,
        }
        freqs = rope_frequencies(DIM, base=150000.0, scaling=scaling, xp=xp)
        plain = RopeFrequencies(freqs.inv_freq, 1.0, freqs.turns)
        positions = ints(xp, [0, 5, 4096, 2**20])
        cos, sin = rope_cos_sin(positions, freqs)
        cos1, sin1 = rope_cos_sin(positions, plain)
        factor = 0.1 * np.log(32.0) + 1  # YaRN's sqrt(1/t) = 0.1 ln(s) + 1
        assert_close(cos, to_numpy(cos1) * factor, xp=xp)
        assert_close(sin, to_numpy(sin1) * factor, xp=xp)

    def test_decoding_steps_match_prefill(self, xp: Any, device: Any) -> None:
        freqs = rope_frequencies(16, base=1e6, xp=xp, device=device)
        full_cos, full_sin = rope_cos_sin(ints(xp, np.arange(1000, 1010), device), freqs)
        for step in (0, 7):
            cos, sin = rope_cos_sin(ints(xp, [1000 + step], device), freqs)
            assert_equal(cos, to_numpy(full_cos)[step : step + 1], xp=xp, device=device)
            assert_equal(sin, to_numpy(full_sin)[step : step + 1], xp=xp, device=device)

    @pytest.mark.parametrize("compute", [FLOAT64, "float32"])
    def test_long_tables_match_single_rows(self, xp: Any, device: Any, compute: str) -> None:
        # 2 x 3000 positions x 32 pairs: large enough that host backends work in row blocks.
        freqs = rope_frequencies(DIM, base=5e5, xp=xp, device=device)
        values = (np.arange(6000).reshape(2, 3000) * 2797) % 2**20
        kwargs = {"layout": "interleaved", "compute_dtype": getattr(xp, compute)}
        cos, sin = rope_cos_sin(ints(xp, values, device), freqs, **kwargs)
        assert cos.shape == sin.shape == (2, 3000, DIM)
        for row, col in ((0, 0), (0, 2047), (0, 2048), (1, 2999)):
            one_cos, one_sin = rope_cos_sin(ints(xp, [values[row, col]], device), freqs, **kwargs)
            assert_equal(one_cos, to_numpy(cos)[row, col][None], xp=xp, device=device)
            assert_equal(one_sin, to_numpy(sin)[row, col][None], xp=xp, device=device)

    @JAX_ONLY
    def test_jit(self, xp: Any) -> None:
        import jax

        freqs = rope_frequencies(16, base=1e6, xp=xp)
        positions = ints(xp, [[0, 5], [4097, 2**20]])
        jitted = jax.jit(lambda p: rope_cos_sin(p, freqs, layout="interleaved"))(positions)
        x, _ = random_x(xp, (2, 2, 16))
        rotated = jax.jit(lambda x, c, s: apply_rope(x, c, s, layout="interleaved"))(x, *jitted)
        eager = rope_cos_sin(positions, freqs, layout="interleaved")
        for got, want in zip(jitted, eager, strict=True):
            assert_close(got, to_numpy(want), xp=xp)
        assert_close(rotated, to_numpy(apply_rope(x, *eager, layout="interleaved")), xp=xp)

    def test_negative_positions(self, xp: Any) -> None:
        freqs = rope_frequencies(16, xp=xp)
        cos_p, sin_p = rope_cos_sin(ints(xp, [3, 4097, 2**20]), freqs)
        cos_n, sin_n = rope_cos_sin(ints(xp, [-3, -4097, -(2**20)]), freqs)
        assert_close(cos_n, to_numpy(cos_p), xp=xp, atol=2e-6 if not has_float64(xp) else None)
        assert_close(sin_n, -to_numpy(sin_p), xp=xp, atol=2e-6 if not has_float64(xp) else None)

    def test_output_dtype(self, xp: Any) -> None:
        positions = ints(xp, [0, 1, 2])
        cos, sin = rope_cos_sin(positions, rope_frequencies(8, xp=xp), dtype=xp.float32)
        assert cos.dtype == sin.dtype == xp.float32
        cos, _ = rope_cos_sin(positions, rope_frequencies(8, compute_dtype=xp.float32, xp=xp))
        assert cos.dtype == xp.float32  # the compute dtype follows float32 frequencies
        if hasattr(xp, "float16"):
            cos, _ = rope_cos_sin(positions, rope_frequencies(8, xp=xp), dtype=xp.float16)
            assert cos.dtype == xp.float16

    def test_bad_input(self, xp: Any) -> None:
        freqs = rope_frequencies(8, xp=xp)
        positions = ints(xp, [0, 1])
        with pytest.raises(TypeError, match=r"^positions must be an array of an integer dtype"):
            rope_cos_sin(xp.asarray([0.0, 1.0]), freqs)
        with pytest.raises(
            ValueError, match=r"^layout must be one of 'half', 'interleaved'; got 'neox' \(GPT-NeoX"
        ):
            rope_cos_sin(positions, freqs, layout="neox")
        with pytest.raises(
            ValueError, match=r"^layout must be one of .* \(MLX traditional=True is 'interleaved'\)"
        ):
            rope_cos_sin(positions, freqs, layout="traditional")
        with pytest.raises(TypeError, match=r"^freqs must be a RopeFrequencies"):
            rope_cos_sin(positions, freqs.inv_freq)
        with pytest.raises(TypeError, match=r"^dtype must be a real floating dtype"):
            rope_cos_sin(positions, freqs, dtype=xp.int32)
        if not has_float64(xp):
            with pytest.raises(ValueError, match=r"^compute_dtype must be float32"):
                rope_cos_sin(positions, freqs, compute_dtype=xp.float64)


def random_x(xp: Any, shape: tuple, dtype: Any = None, device: Any = None) -> tuple[Any, np.ndarray]:
    host = RNG.standard_normal(shape)
    dtype = float_dtype(xp) if dtype is None else dtype
    arr = xp.asarray(host.tolist(), dtype=dtype, **({"device": device} if device else {}))
    return arr, to_numpy(arr).astype(np.float64)


class TestApplyRope:
    @pytest.mark.parametrize("layout", LAYOUTS)
    def test_matches_rotation_formula(self, xp: Any, layout: str) -> None:
        x, host = random_x(xp, (2, 3, 5, 8))  # [B, H, S, D]
        freqs = rope_frequencies(8, base=100.0, xp=xp)
        cos, sin = rope_cos_sin(ints(xp, [0, 1, 2, 30, 400]), freqs, layout=layout)
        out = apply_rope(x, cos, sin, layout=layout)
        assert_close(out, rotate(host, 8, 100.0, (0, 1, 2, 30, 400), layout), xp=xp, dtype=x.dtype)

    @pytest.mark.parametrize("layout", LAYOUTS)
    def test_bit_identical_to_the_reference_expressions(self, xp: Any, layout: str) -> None:
        # Same float32 tables in, the same bits out as HF's ``q * cos + rotate_half(q) * sin``
        # (half) and Meta/GPT-J's pairwise ``(a c - b s, b c + a s)`` (interleaved), in NumPy.
        rng = np.random.default_rng(7)
        host_x = rng.standard_normal((2, 3, 6, 8)).astype(np.float32)
        host_cos = rng.standard_normal((6, 4)).astype(np.float32)
        host_sin = rng.standard_normal((6, 4)).astype(np.float32)
        if layout == "half":
            cos_t, sin_t = np.concatenate([host_cos] * 2, -1), np.concatenate([host_sin] * 2, -1)
            rotate_half = np.concatenate([-host_x[..., 4:], host_x[..., :4]], -1)
            expected = host_x * cos_t + rotate_half * sin_t
        else:
            cos_t, sin_t = np.repeat(host_cos, 2, -1), np.repeat(host_sin, 2, -1)
            a, b = host_x[..., 0::2], host_x[..., 1::2]
            pairs = np.stack([a * host_cos - b * host_sin, b * host_cos + a * host_sin], -1)
            expected = pairs.reshape(host_x.shape)
        out = apply_rope(*(xp.asarray(v) for v in (host_x, cos_t, sin_t)), layout=layout)
        assert_equal(out, expected, xp=xp, dtype=xp.float32)

    @pytest.mark.parametrize("layout", LAYOUTS)
    @pytest.mark.parametrize("width", [8, 4])
    def test_inputs_are_left_as_they_were(self, xp: Any, layout: str, width: int) -> None:
        # The rotation reuses its own temporaries in place; x and the tables (full and
        # partial width, where ``x[..., :width]`` is a view of x) must come back unchanged.
        x, _ = random_x(xp, (2, 3, 5, 8))
        cos, sin = rope_cos_sin(ints(xp, [0, 1, 2, 30, 400]), rope_frequencies(width, xp=xp), layout=layout)
        x_before, cos_before, sin_before = (to_numpy(a).copy() for a in (x, cos, sin))
        apply_rope(x, cos, sin, layout=layout)
        assert_equal(x, x_before, xp=xp, dtype=x.dtype)
        assert_equal(cos, cos_before, xp=xp, dtype=cos.dtype)
        assert_equal(sin, sin_before, xp=xp, dtype=sin.dtype)

    @pytest.mark.parametrize("layout", LAYOUTS)
    def test_torch_gradients_match_the_plain_formula(self, layout: str) -> None:
        # The in-place products must not corrupt autograd's saved tensors.
        torch = pytest.importorskip("torch", reason="torch is not installed", exc_type=ImportError)
        gen = torch.Generator().manual_seed(3)
        leaves = [
            torch.randn(shape, generator=gen, dtype=torch.float64) for shape in ((2, 5, 8), (5, 8), (5, 8))
        ]
        ours = [t.clone().requires_grad_() for t in leaves]
        plain = [t.clone().requires_grad_() for t in leaves]
        weights = torch.randn((2, 5, 8), generator=gen, dtype=torch.float64)
        (apply_rope(*ours, layout=layout) * weights).sum().backward()
        x, cos, sin = plain
        if layout == "half":
            swapped = torch.cat([-x[..., 4:], x[..., :4]], -1)
        else:
            swapped = torch.stack([-x[..., 1::2], x[..., 0::2]], -1).reshape(x.shape)
            cos, sin = (
                torch.repeat_interleave(cos[..., 0::2], 2, -1),
                torch.repeat_interleave(sin[..., 0::2], 2, -1),
            )
        ((x * cos + swapped * sin) * weights).sum().backward()
        for mine, theirs in zip(ours, plain, strict=True):
            torch.testing.assert_close(mine.grad, theirs.grad, rtol=1e-12, atol=1e-12)

    @pytest.mark.parametrize("layout", LAYOUTS)
    def test_partial_rotary_passthrough(self, xp: Any, device: Any, layout: str) -> None:
        x, host = random_x(xp, (4, 10), device=device)
        positions = ints(xp, [5, 6, 7, 8], device)
        cos, sin = rope_cos_sin(positions, rope_frequencies(6, xp=xp), layout=layout)
        out = apply_rope(x, cos, sin, layout=layout)
        assert_equal(out[..., 6:], to_numpy(x)[..., 6:], xp=xp, device=device)
        assert_close(out, rotate(host, 6, 1e4, (5, 6, 7, 8), layout), xp=xp, dtype=x.dtype, device=device)

    def test_dtype_preserved(self, xp: Any) -> None:
        positions = ints(xp, [0, 1, 2])
        cos, sin = rope_cos_sin(positions, rope_frequencies(8, xp=xp))
        for name in ("float32", "float16"):
            if not hasattr(xp, name):
                continue  # array_api_strict has no float16
            x, host = random_x(xp, (3, 8), getattr(xp, name))
            out = apply_rope(x, cos, sin)
            assert out.dtype == x.dtype
            # float16: the rotation runs in the tables' dtype, then rounds once to float16 (2**-11 relative)
            tol = {"rtol": 1e-3, "atol": 1e-3} if name == "float16" else {}
            assert_close(out, rotate(host, 8, 1e4, (0, 1, 2), "half"), xp=xp, dtype=x.dtype, **tol)

    def test_layout_equivalence(self, xp: Any) -> None:
        # Half and interleaved are the same function up to the permutation i <-> 2i, i + d/2 <-> 2i + 1.
        d = 16
        perm = [c // 2 + (d // 2) * (c % 2) for c in range(d)]
        q, _ = random_x(xp, (3, d))
        k, _ = random_x(xp, (3, d))
        qi, ki = xp.take(q, xp.asarray(perm), axis=-1), xp.take(k, xp.asarray(perm), axis=-1)
        freqs = rope_frequencies(d, xp=xp)
        qpos, kpos = ints(xp, [10, 2000, 70000]), ints(xp, [3, 1999, 12])
        scores = {}
        for layout, (qq, kk) in {"half": (q, k), "interleaved": (qi, ki)}.items():
            qc, qs = rope_cos_sin(qpos, freqs, layout=layout)
            kc, ks = rope_cos_sin(kpos, freqs, layout=layout)
            q_rot = to_numpy(apply_rope(qq, qc, qs, layout=layout)).astype(np.float64)
            scores[layout] = q_rot @ to_numpy(apply_rope(kk, kc, ks, layout=layout)).astype(np.float64).T
        tol = 1e-12 if has_float64(xp) else 1e-5
        np.testing.assert_allclose(scores["half"], scores["interleaved"], rtol=tol, atol=tol)

    @pytest.mark.parametrize("layout", LAYOUTS)
    def test_relative_shift_invariance(self, xp: Any, layout: str) -> None:
        # RoFormer: q_m . k_n depends on n - m only, at any absolute offset (here up to a million).
        d = 32
        freqs = rope_frequencies(d, base=5e5, xp=xp)
        q, _ = random_x(xp, (1, d))
        k, _ = random_x(xp, (1, d))
        dots = []
        for shift in (0, 1000, 1_000_000):
            qc, qs = rope_cos_sin(ints(xp, [17 + shift]), freqs, layout=layout)
            kc, ks = rope_cos_sin(ints(xp, [5 + shift]), freqs, layout=layout)
            qr, kr = apply_rope(q, qc, qs, layout=layout), apply_rope(k, kc, ks, layout=layout)
            dots.append(float(to_numpy(xp.sum(qr * kr))))
            norm = float(to_numpy(xp.sum(qr * qr)))
            assert norm == pytest.approx(
                float(to_numpy(xp.sum(q * q))), rel=1e-12 if has_float64(xp) else 1e-5
            )
        assert dots == pytest.approx([dots[0]] * 3, rel=1e-12 if has_float64(xp) else 1e-5, abs=1e-12)

    def test_bad_input(self, xp: Any) -> None:
        x, _ = random_x(xp, (3, 8))
        cos, sin = rope_cos_sin(ints(xp, [0, 1, 2]), rope_frequencies(8, xp=xp))
        with pytest.raises(ValueError, match=r"^sin must be of the shape of cos"):
            apply_rope(x, cos, sin[:2, ...])
        with pytest.raises(
            ValueError, match=r"^cos.shape\[-1\] must be even and <= x.shape\[-1\] = 4; got 8"
        ):
            apply_rope(x[..., :4], cos, sin)
        with pytest.raises(ValueError, match=r"^cos.shape\[-1\] must be even"):
            apply_rope(x, cos[..., :3], sin[..., :3])
        with pytest.raises(ValueError, match=r"^cos.shape\[:-1\] must be broadcastable to x.shape\[:-1\]"):
            apply_rope(x[:2, ...], cos, sin)
        with pytest.raises(TypeError, match=r"^x must be an array of a real floating dtype"):
            apply_rope(xp.asarray([[1, 2, 3, 4, 5, 6, 7, 8]]), cos, sin)
        with pytest.raises(
            ValueError, match=r"^layout must be one of .*got 'gptj' \(GPT-J uses 'interleaved'\)"
        ):
            apply_rope(x, cos, sin, layout="gptj")


def mp_zeta(dim: int, gamma: float) -> list[mpmath.mpf]:
    with mpmath.workdps(DPS):
        return [
            (mpmath.mpf(2 * i) / dim + mpmath.mpf(gamma)) / (1 + mpmath.mpf(gamma)) for i in range(dim // 2)
        ]


class TestXposScale:
    @pytest.mark.parametrize("layout", LAYOUTS)
    @pytest.mark.parametrize("offset", [0, 64])
    def test_values(self, xp: Any, device: Any, layout: str, offset: int) -> None:
        values = [0, 1, 100, 1000]
        q_scale, k_scale = xpos_scale(ints(xp, values, device), 8, offset=offset, layout=layout)
        zeta = mp_zeta(8, 0.4)
        with mpmath.workdps(DPS):
            q = np.array([[float(z ** (mpmath.mpf(m - offset) / 512)) for z in zeta] for m in values])
        # float64 on every backend, MLX included (its own float64 exp has float32 accuracy): the exponent
        # (m - c)/B ln zeta carries ~3 roundings of |arg| <= 2.5, exp adds 1 ulp -> rtol (1 + 3 * 2.5) ulp
        tol = {"rtol": 9 * 2.0**-52, "atol": 0.0} if has_float64(xp) else {}
        assert_close(q_scale, expand(q, layout), xp=xp, dtype=float_dtype(xp), device=device, **tol)
        assert_close(k_scale, expand(1 / q, layout), xp=xp, dtype=float_dtype(xp), device=device, **tol)

    def test_product_depends_on_distance_only(self, xp: Any) -> None:
        n, m = ints(xp, [700]), ints(xp, [300])
        products = []
        for offset in (0, 500):
            q_scale, _ = xpos_scale(n, 16, offset=offset)
            _, k_scale = xpos_scale(m, 16, offset=offset)
            products.append(to_numpy(q_scale * k_scale).astype(np.float64))
        zeta = mp_zeta(16, 0.4)
        expected = expand(np.array([[float(z ** (mpmath.mpf(400) / 512)) for z in zeta]]), "half")
        tol = 1e-13 if has_float64(xp) else 1e-6  # MLX float64 included (main: float32 accuracy there)
        for product in products:
            np.testing.assert_allclose(product, expected, rtol=tol)

    def test_mlx_float64_is_float64_accurate_far_from_the_centre(self, xp: Any) -> None:
        # main: xp.exp on MLX float64 (float32-accurate): relative errors near 1e-7 at |arg| ~ 100
        values = [0, 5000, 20000, 40000]
        q_scale, _ = xpos_scale(ints(xp, values), 4, scale_base=512.0)
        zeta = mp_zeta(4, 0.4)
        with mpmath.workdps(DPS):
            q = np.array([[float(z ** (mpmath.mpf(m) / 512)) for z in zeta] for m in values])
        # |arg| <= 40000/512 * 1.25 = 98: the rounded exponent costs ~3 * 98 ulp relative
        rtol = 300 * 2.0**-52 if has_float64(xp) else 300 * 2.0**-23
        assert_close(q_scale, expand(q, "half"), xp=xp, rtol=rtol, atol=0.0)

    @UNREAD_ON_DASK
    def test_overflowing_scales_are_refused(self, xp: Any) -> None:
        far = ints(xp, [0, 2**40])
        with pytest.raises(ValueError, match=r"^positions must be within .* of offset=0 \(farther, the xPos"):
            xpos_scale(far, 8)

    def test_bad_input(self, xp: Any) -> None:
        positions = ints(xp, [0, 1])
        with pytest.raises(ValueError, match=r"^dim must be an even positive integer; got 5"):
            xpos_scale(positions, 5)
        with pytest.raises(ValueError, match=r"^scale_base must be > 0"):
            xpos_scale(positions, 8, scale_base=0)
        with pytest.raises(ValueError, match=r"^gamma must be > 0"):
            xpos_scale(positions, 8, gamma=0.0)
        with pytest.raises(TypeError, match=r"^positions must be an array of an integer dtype"):
            xpos_scale(xp.asarray([0.5]), 8)
