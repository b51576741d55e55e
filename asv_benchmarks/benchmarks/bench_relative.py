"""Relative-position families: Shaw index, T5 buckets and ALiBi bias.

Ratios to read (same run): ``T5Bucket`` against ``bench_baselines.Log`` (one
``log`` over as many elements) and ``AlibiBias`` against ``bench_baselines.Fill``
(a fresh output filled with a constant).  ``AlibiPeakMemory`` tracks the peak of
NumPy allocations during one ``alibi_bias`` call divided by the output's size.
"""

from __future__ import annotations

import tracemalloc

import numpy as np

from .bench_baselines import BIAS_SHAPES, RELATIVE_SIZES
from .common import BACKENDS, DTYPES, backend, require, require_dtype, shape_of

#: Query rows per block in the blockwise ALiBi benchmarks.
BLOCK_ROWS = 256


class _Relative:
    """Relative positions ``k - q`` for ``arange(q)``, ``arange(k)``, made in setup."""

    def _relative(self, name: str, size: str) -> None:
        self.be = backend(name)
        q, k = shape_of(size)
        rel = np.arange(k, dtype=np.int64)[None, :] - np.arange(q, dtype=np.int64)[:, None]
        self.rel = self.be.asarray(rel)


class RelativePositions:
    """``relative_positions(arange(q), arange(k))``."""

    params = [BACKENDS, RELATIVE_SIZES]
    param_names = ["backend", "size"]

    def setup(self, name: str, size: str) -> None:
        self.func = require("relative_positions")
        self.be = backend(name)
        q, k = shape_of(size)
        self.q = self.be.asarray(np.arange(q), "int64")
        self.k = self.be.asarray(np.arange(k), "int64")

    def time_relative_positions(self, name: str, size: str) -> None:
        self.be.sync(self.func(self.q, self.k))


class ShawIndex(_Relative):
    """``shaw_index(relative, 128)`` (tensor2tensor clipping)."""

    params = [BACKENDS, RELATIVE_SIZES]
    param_names = ["backend", "size"]

    def setup(self, name: str, size: str) -> None:
        self.func = require("shaw_index")
        self._relative(name, size)

    def time_shaw_index(self, name: str, size: str) -> None:
        self.be.sync(self.func(self.rel, 128))


class T5Bucket(_Relative):
    """``t5_bucket(relative, bidirectional=...)`` with HF's 32 buckets / 128 max distance."""

    params = [BACKENDS, RELATIVE_SIZES, [True, False]]
    param_names = ["backend", "size", "bidirectional"]

    def setup(self, name: str, size: str, bidirectional: bool) -> None:
        self.func = require("t5_bucket")
        self._relative(name, size)

    def _run(self, bidirectional: bool) -> object:
        return self.be.sync(self.func(self.rel, bidirectional=bidirectional))

    def time_t5_bucket(self, name: str, size: str, bidirectional: bool) -> None:
        self._run(bidirectional)

    def peakmem_t5_bucket(self, name: str, size: str, bidirectional: bool) -> None:
        self._run(bidirectional)


class _Alibi:
    def _alibi(self, name: str, shape: str, dtype: str) -> None:
        self.func = require("alibi_bias")
        slopes = require("alibi_slopes")
        self.be = backend(name)
        require_dtype(self.be, dtype)
        h, q, k = shape_of(shape)
        self.q = self.be.asarray(np.arange(q), "int64")
        self.k = self.be.asarray(np.arange(k), "int64")
        self.slopes = self.be.sync(
            slopes(h, xp=self.be.xp, device=self.be.device, dtype=self.be.dtype(dtype))
        )
        self.blocks = [self.q[i : i + BLOCK_ROWS] for i in range(0, q, BLOCK_ROWS)]

    def _full(self, form: str) -> object:
        return self.be.sync(self.func(self.q, self.k, self.slopes, form=form))

    def _blockwise(self, form: str) -> None:
        for block in self.blocks:  # one block of query rows at a time, as a tiled kernel would
            self.be.sync(self.func(block, self.k, self.slopes, form=form))


class AlibiBias(_Alibi):
    """``alibi_bias(arange(q), arange(k), alibi_slopes(h))`` as one array or by query blocks."""

    params = [BACKENDS, BIAS_SHAPES, DTYPES, ["symmetric", "causal"], ["full", "blockwise"]]
    param_names = ["backend", "shape", "dtype", "form", "mode"]

    def setup(self, name: str, shape: str, dtype: str, form: str, mode: str) -> None:
        self._alibi(name, shape, dtype)
        self.run = self._full if mode == "full" else self._blockwise

    def time_alibi_bias(self, name: str, shape: str, dtype: str, form: str, mode: str) -> None:
        self.run(form)

    def peakmem_alibi_bias(self, name: str, shape: str, dtype: str, form: str, mode: str) -> None:
        self.run(form)


class AlibiPeakMemory(_Alibi):
    """Peak NumPy allocation during one full ``alibi_bias`` call / bytes of the output.

    Measured with :mod:`tracemalloc`, which sees NumPy's data buffers, so the
    interpreter's baseline (the pitfall of ``peakmem_``) is not included.
    Target for float32 ``16x2048x2048``: at most 1.5.
    """

    params = [BIAS_SHAPES, DTYPES, ["symmetric", "causal"]]
    param_names = ["shape", "dtype", "form"]
    unit = "output sizes"

    def setup(self, shape: str, dtype: str, form: str) -> None:
        self._alibi("numpy", shape, dtype)

    def track_alibi_peak_over_output(self, shape: str, dtype: str, form: str) -> float:
        tracemalloc.start()
        try:
            tracemalloc.reset_peak()
            out = self._full(form)
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        return peak / out.nbytes
