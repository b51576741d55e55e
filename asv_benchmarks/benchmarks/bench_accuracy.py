"""Accuracy over commits: ``track_`` benchmarks of the largest error against mpmath.

References are computed once per run in ``setup_cache`` with mpmath at 40 digits
from the papers' formulas (nothing from ``posenc_ref``).  Errors are reported in
units of the output dtype's machine epsilon (``max |actual - exact| / eps``; the
values compared lie in [-1, 1] or are scaled to it), except for T5 buckets, where
the track is the number of wrong buckets (exact integers are expected).

Positions include large ones (up to ``2**24``) because that is where a rounded
product ``m * theta`` goes wrong; a regression in angle reduction shows here as a
jump of several orders of magnitude.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import BACKENDS, DTYPES, backend, require, require_dtype, skip

DPS = 40
DIM = 64


def _positions() -> np.ndarray:
    rng = np.random.default_rng(1234)
    powers = [2**k + d for k in range(6, 25, 3) for d in (-1, 0, 1)]
    return np.unique(np.concatenate([np.arange(32), powers, rng.integers(0, 2**24, 24)])).astype(np.int64)


def _cos_sin_table(positions: np.ndarray, thetas: list[Any]) -> tuple[np.ndarray, np.ndarray]:
    import mpmath

    cos = np.array([[float(mpmath.cos(int(m) * t)) for t in thetas] for m in positions])
    sin = np.array([[float(mpmath.sin(int(m) * t)) for t in thetas] for m in positions])
    return cos, sin


def _t5_reference(
    relative: np.ndarray, bidirectional: bool, num_buckets: int, max_distance: int
) -> np.ndarray:
    """Exact T5 buckets: the floor of the log term decided with integer powers."""
    half = num_buckets // 2 if bidirectional else num_buckets
    exact = half // 2
    span = half - exact
    out = []
    for r in relative.tolist():
        offset = half if (bidirectional and r > 0) else 0
        n = abs(r) if bidirectional else max(-r, 0)
        if n < exact:
            out.append(offset + n)
            continue
        # largest s with (n/e)**span >= (D/e)**s  <=>  n**span * e**s >= D**s * e**span
        s = 0
        while s + 1 <= span and n**span * exact ** (s + 1) >= max_distance ** (s + 1) * exact**span:
            s += 1
        out.append(offset + min(exact + s, half - 1))
    return np.array(out, dtype=np.int64)


def _alibi_slopes(n: int) -> list[Any]:
    import mpmath

    if n & (n - 1) == 0:
        return [mpmath.power(2, mpmath.mpf(-8) * (h + 1) / n) for h in range(n)]
    c = 1 << (n.bit_length() - 1)
    return _alibi_slopes(c) + _alibi_slopes(2 * c)[0::2][: n - c]


def _attention_reference(q: np.ndarray, k: np.ndarray, v: np.ndarray) -> np.ndarray:
    import mpmath

    scale = 1 / mpmath.sqrt(q.shape[-1])
    out = np.zeros((*q.shape[:-1], v.shape[-1]))
    for idx in np.ndindex(*q.shape[:-2]):
        for i in range(q.shape[-2]):
            logits = [
                scale * mpmath.fsum(mpmath.mpf(a) * b for a, b in zip(q[idx][i], k[idx][j], strict=True))
                for j in range(k.shape[-2])
            ]
            top = max(logits)
            w = [mpmath.exp(x - top) for x in logits]
            total = mpmath.fsum(w)
            for c in range(v.shape[-1]):
                out[(*idx, i, c)] = float(
                    mpmath.fsum(wj * float(v[idx][j][c]) for j, wj in enumerate(w)) / total
                )
    return out


def _references() -> dict[str, Any]:
    import mpmath

    mpmath.mp.dps = DPS
    pos = _positions()
    ref: dict[str, Any] = {"positions": pos}
    # Vaswani sinusoidal: column 2k is sin(p w_k), 2k+1 cos(p w_k), w_k = 10000**(-2k/dim).
    w = [mpmath.power(10000, -mpmath.mpf(2 * i) / DIM) for i in range(DIM // 2)]
    cos, sin = _cos_sin_table(pos, w)
    table = np.empty((pos.size, DIM))
    table[:, 0::2], table[:, 1::2] = sin, cos
    ref["sinusoidal"] = table
    # RoPE, dim = 2 * DIM, default base: theta_i = 10000**(-2i/(2 DIM)); half layout repeats the block.
    theta = [mpmath.power(10000, -mpmath.mpf(2 * i) / (2 * DIM)) for i in range(DIM)]
    cos, sin = _cos_sin_table(pos, theta)
    ref["rope_cos"], ref["rope_sin"] = np.concatenate([cos, cos], -1), np.concatenate([sin, sin], -1)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 2, pos.size, 2 * DIM))
    x1, x2 = x[..., :DIM], x[..., DIM:]
    ref["rope_x"] = x
    ref["rope_out"] = np.concatenate(
        [x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1
    )  # float64 of exact cos/sin
    ref["alibi_q"] = np.array([0, 1, 5, 1000, 2**20], dtype=np.int64)
    ref["alibi_k"] = np.arange(0, 2**20 + 1, 2**14, dtype=np.int64)
    slopes = _alibi_slopes(12)
    ref["alibi"] = np.array(
        [[[float(-s * abs(int(k) - int(q))) for k in ref["alibi_k"]] for q in ref["alibi_q"]] for s in slopes]
    )
    qkv = rng.standard_normal((3, 1, 2, 16, 8))
    ref["qkv"] = qkv
    ref["attention_float64"] = _attention_reference(*qkv)
    ref["attention_float32"] = _attention_reference(*qkv.astype(np.float32).astype(np.float64))
    return ref


def _eps_error(actual: np.ndarray, expected: np.ndarray, dtype: str) -> float:
    err = np.max(np.abs(actual.astype(np.float64) - expected)) if expected.size else 0.0
    return float(err / np.finfo(dtype).eps)


class _Accuracy:
    """Largest error against mpmath per backend and output dtype, in eps of that dtype."""

    params = [BACKENDS, DTYPES]
    param_names = ["backend", "dtype"]
    unit = "eps"
    timeout = 600
    functions: tuple[str, ...] = ()

    def setup_cache(self) -> dict[str, Any]:
        return _references()

    def setup(self, ref: dict[str, Any], name: str, dtype: str, *rest: str) -> None:
        self.f = {f: require(f) for f in self.functions}
        self.be = backend(name)
        require_dtype(self.be, dtype)
        self.dt = self.be.dtype(dtype)
        self.positions = self.be.asarray(ref["positions"], "int64")

    def _cos_sin(self, compute: Any = None) -> tuple[Any, Any]:
        freqs = self.f["rope_frequencies"](2 * DIM, xp=self.be.xp, device=self.be.device)
        kwargs = {} if compute is None else {"compute_dtype": compute}
        return self.f["rope_cos_sin"](self.positions, freqs, dtype=self.dt, **kwargs)


class SinusoidalAccuracy(_Accuracy):
    """Vaswani table, dim 64, positions up to 2**24."""

    functions = ("sinusoidal",)

    def track_sinusoidal_error(self, ref: dict[str, Any], name: str, dtype: str) -> float:
        out = self.f["sinusoidal"](self.positions, DIM, dtype=self.dt)
        return _eps_error(self.be.to_numpy(out), ref["sinusoidal"], dtype)


class RopeCosSinAccuracy(_Accuracy):
    """cos/sin tables (dim 128, base 1e4) computed in float64 or on the precise float32 path."""

    params = [BACKENDS, DTYPES, ["float64", "float32"]]
    param_names = ["backend", "dtype", "compute"]
    functions = ("rope_frequencies", "rope_cos_sin")

    def setup(self, ref: dict[str, Any], name: str, dtype: str, compute: str) -> None:  # type: ignore[override]
        super().setup(ref, name, dtype)
        require_dtype(self.be, compute)
        if compute == "float32" and dtype == "float64":
            skip("float64 output from float32 compute is float32-accurate by design")

    def track_rope_cos_sin_error(self, ref: dict[str, Any], name: str, dtype: str, compute: str) -> float:
        cos, sin = self._cos_sin(self.be.dtype(compute))
        return max(
            _eps_error(self.be.to_numpy(cos), ref["rope_cos"], dtype),
            _eps_error(self.be.to_numpy(sin), ref["rope_sin"], dtype),
        )


class ApplyRopeAccuracy(_Accuracy):
    """apply_rope (half layout) against the exact rotation of the rounded input."""

    functions = ("rope_frequencies", "rope_cos_sin", "apply_rope")

    def track_apply_rope_error(self, ref: dict[str, Any], name: str, dtype: str) -> float:
        cos, sin = self._cos_sin()
        x = self.be.asarray(ref["rope_x"], dtype)
        out = self.f["apply_rope"](x, cos, sin)
        return _eps_error(self.be.to_numpy(out), _rotate(self.be.to_numpy(x), ref), dtype)


class AlibiAccuracy(_Accuracy):
    """Symmetric ALiBi, 12 heads (not a power of two), distances up to 2**20; relative error."""

    functions = ("alibi_slopes", "alibi_bias")

    def track_alibi_bias_relative_error(self, ref: dict[str, Any], name: str, dtype: str) -> float:
        slopes = self.f["alibi_slopes"](12, xp=self.be.xp, device=self.be.device, dtype=self.dt)
        q, k = (self.be.asarray(ref[key], "int64") for key in ("alibi_q", "alibi_k"))
        out = self.be.to_numpy(self.f["alibi_bias"](q, k, slopes, form="symmetric"))
        scale = np.max(np.abs(ref["alibi"]), axis=(1, 2), keepdims=True)
        return _eps_error(out / scale, ref["alibi"] / scale, dtype)


class AttentionAccuracy(_Accuracy):
    """Reference attention [1, 2, 16, 8] against mpmath on the rounded inputs."""

    functions = ("attention",)

    def track_attention_error(self, ref: dict[str, Any], name: str, dtype: str) -> float:
        q, k, v = (self.be.asarray(a, dtype) for a in ref["qkv"])
        out = self.f["attention"](q, k, v)
        return _eps_error(self.be.to_numpy(out), ref[f"attention_{dtype}"], dtype)


def _rotate(x: np.ndarray, ref: dict[str, Any]) -> np.ndarray:
    half = x.shape[-1] // 2
    cos, sin = ref["rope_cos"][:, :half], ref["rope_sin"][:, :half]
    x = x.astype(np.float64)
    x1, x2 = x[..., :half], x[..., half:]
    return np.concatenate([x1 * cos - x2 * sin, x2 * cos + x1 * sin], -1)


class T5BucketAccuracy:
    """Number of wrong T5 buckets (32 buckets, max distance 128) for |relative| <= 3000."""

    params = [BACKENDS, [True, False]]
    param_names = ["backend", "bidirectional"]
    unit = "wrong buckets"

    def setup_cache(self) -> dict[str, Any]:
        rel = np.arange(-3000, 3001, dtype=np.int64)
        return {"relative": rel, **{str(b): _t5_reference(rel, b, 32, 128) for b in (True, False)}}

    def setup(self, ref: dict[str, Any], name: str, bidirectional: bool) -> None:
        self.func = require("t5_bucket")
        self.be = backend(name)
        self.rel = self.be.asarray(ref["relative"], "int64")

    def track_t5_bucket_wrong(self, ref: dict[str, Any], name: str, bidirectional: bool) -> int:
        out = self.be.to_numpy(self.func(self.rel, bidirectional=bidirectional))
        return int(np.count_nonzero(out != ref[str(bidirectional)]))
