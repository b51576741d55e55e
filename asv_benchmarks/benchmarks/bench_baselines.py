"""Baselines measured in the same run as the library, so every figure reads as a ratio.

* :class:`Copy`: one plain copy of an array (the memory-bandwidth floor of a pass
  that reads and writes every element, e.g. ``apply_rope``).
* :class:`CosSin`: bare ``cos`` and ``sin`` over precomputed angles (the floor of
  ``rope_cos_sin`` and of sinusoidal tables).
* :class:`NaiveCosSin`, :class:`NaiveTable`: the naive float32 product, ``cos(m w)``
  and ``sin(m w)`` of float32 ``m * w`` in the output's layout (the speed the issue asks
  of posenc-ref's float32 answers, at a loss of up to 0.06 rad of phase at ``2**20``).
* :class:`Fill`: a plain ``full`` of a fresh output (the floor of bias builders).
* :class:`Log`: one ``log`` over as many elements (the floor of ``t5_bucket``).
* :class:`MatMul`: ``(q @ k^T) @ v``, the two products of attention (the floor of
  ``attention``).

Sizes match those of the library benchmarks exactly; ``scripts/asv_ratios.py``
divides one by the other.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .common import BACKENDS, DTYPES, Backend, backend, limit_size, require_dtype, shape_of

#: Shapes of ``x`` in the apply_rope benchmarks.
ROPE_X_SHAPES = ["1x8x512x64", "1x32x4096x128"]
#: positions x frequencies in the rope_cos_sin benchmarks.
COS_SIN_SIZES = ["4096x64", "131072x64"]
#: heads x queries x keys in the ALiBi benchmarks.
BIAS_SHAPES = ["8x512x512", "16x2048x2048"]
#: queries x keys in the T5 bucket / Shaw index benchmarks.
RELATIVE_SIZES = ["512x512", "4096x4096"]
#: ``[B, H, L, D]`` of q, k and v in the attention benchmarks.
QKV_SHAPES = ["1x8x512x64", "1x16x2048x64"]


class Copy:
    """One copy of an array shaped like the ``x`` of ``apply_rope``."""

    params = [BACKENDS, ROPE_X_SHAPES, DTYPES]
    param_names = ["backend", "shape", "dtype"]

    def setup(self, name: str, shape: str, dtype: str) -> None:
        self.be = backend(name)
        require_dtype(self.be, dtype)
        rng = np.random.default_rng(0)
        self.x = self.be.asarray(rng.standard_normal(shape_of(shape)), dtype)

    def time_copy(self, name: str, shape: str, dtype: str) -> None:
        self.be.sync(self.be.copy(self.x))


class CosSin:
    """``cos`` and ``sin`` of ``positions[:, None] * inv_freq[None, :]`` (angles precomputed)."""

    params = [BACKENDS, COS_SIN_SIZES, DTYPES]
    param_names = ["backend", "size", "dtype"]

    def setup(self, name: str, size: str, dtype: str) -> None:
        self.be = backend(name)
        require_dtype(self.be, dtype)
        n, f = shape_of(size)
        inv_freq = 10000.0 ** (-np.arange(f, dtype=np.float64) / f)
        angles = np.arange(n, dtype=np.float64)[:, None] * inv_freq[None, :]
        self.angles = self.be.asarray(angles, dtype)

    def time_cos_sin(self, name: str, size: str, dtype: str) -> None:
        xp = self.be.xp
        self.be.sync((xp.cos(self.angles), xp.sin(self.angles)))


#: positions x dim of the sinusoidal ratio track: a size the dashboard's short run measures, and
#: the peer comparison's.
TABLE_RATIO_SIZES = ["2048x512", "8192x1024"]


class NaiveCosSin:
    """float32 ``m * w``, then ``cos``/``sin``, each repeated into the half layout: ``[n, 2f]``."""

    params = [BACKENDS, COS_SIN_SIZES]
    param_names = ["backend", "size"]

    def setup(self, name: str, size: str) -> None:
        self.be = backend(name)
        n, f = shape_of(size)
        self.positions = self.be.asarray(np.arange(n, dtype=np.float32)[:, None], "float32")
        self.inv_freq = self.be.asarray((10000.0 ** (-np.arange(f) / f))[None, :], "float32")

    def time_naive_cos_sin(self, name: str, size: str) -> None:
        xp = self.be.xp
        angles = self.positions * self.inv_freq
        c, s = xp.cos(angles), xp.sin(angles)
        self.be.sync((xp.concat([c, c], axis=-1), xp.concat([s, s], axis=-1)))


class NaiveTable:
    """float32 ``m * w``, then the interleaved ``[sin, cos, ...]`` table ``[n, dim]`` (Vaswani's)."""

    params = [BACKENDS, TABLE_RATIO_SIZES]
    param_names = ["backend", "size"]

    def setup(self, name: str, size: str) -> None:
        self.be = backend(name)
        n, self.dim = shape_of(size)
        self.positions = self.be.asarray(np.arange(n, dtype=np.float32)[:, None], "float32")
        w = 10000.0 ** (-np.arange(0, self.dim, 2) / self.dim)
        self.w = self.be.asarray(w[None, :], "float32")

    def time_naive_table(self, name: str, size: str) -> None:
        xp = self.be.xp
        angles = self.positions * self.w
        pairs = xp.stack([xp.sin(angles), xp.cos(angles)], axis=-1)
        self.be.sync(xp.reshape(pairs, (angles.shape[0], self.dim)))


class Fill:
    """A fresh array of the ALiBi output's shape, filled with a constant."""

    params = [BACKENDS, BIAS_SHAPES, DTYPES]
    param_names = ["backend", "shape", "dtype"]

    def setup(self, name: str, shape: str, dtype: str) -> None:
        self.be = backend(name)
        require_dtype(self.be, dtype)
        self.shape = shape_of(shape)
        self.dtype = self.be.dtype(dtype)

    def _fill(self) -> object:
        from posenc_ref._compat import full

        return full(self.shape, -1.5, xp=self.be.xp, dtype=self.dtype, device=self.be.device)

    def time_fill(self, name: str, shape: str, dtype: str) -> None:
        self.be.sync(self._fill())

    def peakmem_fill(self, name: str, shape: str, dtype: str) -> None:
        self.be.sync(self._fill())


class Log:
    """One ``log`` over as many elements as a T5 bucket matrix (inputs >= 1)."""

    params = [BACKENDS, RELATIVE_SIZES, DTYPES]
    param_names = ["backend", "size", "dtype"]

    def setup(self, name: str, size: str, dtype: str) -> None:
        self.be = backend(name)
        require_dtype(self.be, dtype)
        q, k = shape_of(size)
        rel = np.abs(np.arange(k)[None, :] - np.arange(q)[:, None]) + 1
        self.x = self.be.asarray(rel, dtype)

    def time_log(self, name: str, size: str, dtype: str) -> None:
        self.be.sync(self.be.xp.log(self.x))


def qkv(be: Backend, shape: str, dtype: str) -> tuple[Any, Any, Any]:
    """Seeded q, k, v of ``shape`` ``[B, H, L, D]`` on ``be``; skips a size whose logits are large."""
    b, h, n, d = shape_of(shape)
    limit_size(b * h * n * n)  # the logits
    rng = np.random.default_rng(0)
    return tuple(be.asarray(rng.standard_normal((b, h, n, d)), dtype) for _ in range(3))


class MatMul:
    """``(q @ k^T) @ v`` for q, k, v of one attention shape: the two products, no softmax."""

    params = [BACKENDS, QKV_SHAPES, DTYPES]
    param_names = ["backend", "shape", "dtype"]

    def setup(self, name: str, shape: str, dtype: str) -> None:
        self.be = backend(name)
        require_dtype(self.be, dtype)
        self.q, self.k, self.v = qkv(self.be, shape, dtype)

    def time_matmul(self, name: str, shape: str, dtype: str) -> None:
        xp = self.be.xp
        self.be.sync(xp.matmul(xp.matmul(self.q, xp.matrix_transpose(self.k)), self.v))
