"""Ratios measured inside one benchmark process: posenc-ref over its floor, interleaved, min of N.

Each ``track_ratio`` sets up a library benchmark and its baseline (the very classes of
``bench_rope``, ``bench_relative`` and ``bench_baselines``, so the work timed is the
same as theirs), times the two alternately and returns ``min(work) / min(baseline)``
(:func:`.timing.ratio`).  Machine load moves both numbers together, so the ratio holds
from run to run where a ratio of two asv medians taken minutes apart does not.
``scripts/asv_ratios.py`` reads the performance gate from these tracks.

* :class:`ApplyRopeRatio`: ``apply_rope`` / one copy of ``x`` (both layouts, full and
  partial rotary; float32).
* :class:`RopeCosSinRatio`: ``rope_cos_sin`` / bare ``cos`` + ``sin`` in the compute dtype.
* :class:`RopeCosSinNaiveRatio`: ``rope_cos_sin(..., dtype=float32)`` (default compute) /
  the naive float32 product in the same layout (:class:`.bench_baselines.NaiveCosSin`).
* :class:`SinusoidalRatio`: ``sinusoidal(..., dtype=float32)`` per convention / the naive
  float32 interleaved table (:class:`.bench_baselines.NaiveTable`).
* :class:`AlibiRatio`: ``alibi_bias`` (full matrix) / a fill of the output's shape.
* :class:`T5BucketRatio`: ``t5_bucket`` / one float64 ``log`` over as many elements.
* :class:`AttentionRatio`: ``attention`` (no bias, and a symmetric ALiBi bias) / its two
  matrix products ``(q @ k^T) @ v``.
* :class:`AlibiRowRatio`: the small call ``[16, 1, 2048]`` (one decoding row) over its
  floor, ``slopes[:, None, None] * k``, and over BLOOM's ``build_alibi_tensor`` and MPT's
  ``build_mpt_alibi_tensor`` where transformers is importable: call overhead.

PyTorch runs on one thread here (restored in ``teardown``), as in the peer comparison
(``scripts/peer_bench.py``): two threads on a shared two-core machine make every
figure depend on the neighbours' load.  ``N`` is 7 samples of at least 5 ms for the
large calls, and 31 samples of at least 2 ms for the one-row ALiBi call (a 10 us floor
is more easily disturbed: its ratio spread 11-16 with 7 samples of 5 ms under a load
of 5 on two cores, 12.4-12.8 with 31 of 2 ms); ``POSENC_REF_BENCH_RATIO_MIN_SAMPLE``
sets the shortest sample (seconds) and ``POSENC_REF_BENCH_RATIO_SAMPLES``
sets ``N`` for every track.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

# The modules, not their classes: asv collects every benchmark class a module's namespace
# holds, so an imported class would be benchmarked a second time as bench_ratios.<Class>.
from . import bench_attention, bench_baselines, bench_relative, bench_rope, bench_sinusoidal, timing
from .bench_baselines import (
    BIAS_SHAPES,
    COS_SIN_SIZES,
    QKV_SHAPES,
    RELATIVE_SIZES,
    ROPE_X_SHAPES,
    TABLE_RATIO_SIZES,
)
from .bench_sinusoidal import CONVENTIONS
from .common import backend, require, require_module, skip

#: Backends whose speed is tracked as ratios (array_api_strict and Dask are not about speed).
RATIO_BACKENDS = ["numpy", "torch", "mlx"]
#: The one dtype of the ratio tracks (the issue's figures are float32).
DTYPE = "float32"


def samples(default: int) -> int:
    """``N`` of min-of-N: ``POSENC_REF_BENCH_RATIO_SAMPLES``, else ``default``."""
    value = os.environ.get("POSENC_REF_BENCH_RATIO_SAMPLES", "")
    return int(value) if value else default


def min_sample(default: float) -> float:
    """The shortest sample in seconds: ``POSENC_REF_BENCH_RATIO_MIN_SAMPLE``, else ``default``."""
    value = os.environ.get("POSENC_REF_BENCH_RATIO_MIN_SAMPLE", "")
    return float(value) if value else default


class _Ratio:
    """One process, two calls timed alternately; the track is their min-of-N ratio."""

    #: N, and the shortest sample in seconds (see :mod:`.timing`).
    ratio_samples = timing.SAMPLES
    min_sample = timing.MIN_SAMPLE
    unit = "ratio"
    rounds = 1
    repeat = 1
    number = 1
    warmup_time = 0.0
    timeout = 600
    _threads: int | None = None

    def _one_thread(self, name: str) -> None:
        if name == "torch":
            torch = require_module("torch")
            self._threads = torch.get_num_threads()
            torch.set_num_threads(1)

    def teardown(self, *params: Any) -> None:
        if self._threads is not None:
            require_module("torch").set_num_threads(self._threads)

    def _ratio(self) -> float:
        n = samples(self.ratio_samples)
        return timing.ratio(self.work, self.baseline, samples=n, min_sample=min_sample(self.min_sample))


class ApplyRopeRatio(_Ratio):
    """``apply_rope(x, cos, sin)`` / ``copy(x)``, float32 ``x`` of shape ``[B, H, L, D]``."""

    params = [RATIO_BACKENDS, ROPE_X_SHAPES, ["half", "interleaved"], ["full", "half"]]
    param_names = ["backend", "shape", "layout", "rotary"]

    def setup(self, name: str, shape: str, layout: str, rotary: str) -> None:
        work, base = bench_rope.ApplyRope(), bench_baselines.Copy()
        work.setup(name, shape, DTYPE, layout, rotary)
        base.setup(name, shape, DTYPE)
        self._one_thread(name)
        self.work = work._run
        self.baseline = lambda: base.time_copy(name, shape, DTYPE)

    def track_apply_rope_over_copy(self, *params: str) -> float:
        return self._ratio()


class RopeCosSinRatio(_Ratio):
    """``rope_cos_sin(arange(n), freqs)`` / bare ``cos`` + ``sin`` of the angles in the compute dtype."""

    params = [RATIO_BACKENDS, COS_SIN_SIZES, ["float64", "float32"], ["float64", "float32"]]
    param_names = ["backend", "size", "compute", "dtype"]

    def setup(self, name: str, size: str, compute: str, dtype: str) -> None:
        work, base = bench_rope.RopeCosSin(), bench_baselines.CosSin()
        work.setup(name, size, compute, dtype)
        base.setup(name, size, compute)
        self._one_thread(name)
        self.work = work._run
        self.baseline = lambda: base.time_cos_sin(name, size, compute)

    def track_rope_cos_sin_over_cos_sin(self, *params: str) -> float:
        return self._ratio()


class RopeCosSinNaiveRatio(_Ratio):
    """``rope_cos_sin(arange(n), freqs, dtype=float32)`` (default compute) / the naive float32 product."""

    params = [RATIO_BACKENDS, COS_SIN_SIZES]
    param_names = ["backend", "size"]

    def setup(self, name: str, size: str) -> None:
        work, base = bench_rope.RopeCosSin(), bench_baselines.NaiveCosSin()
        work.setup(name, size, "float64", DTYPE)
        work.compute = None  # the default: float32 answers from float64 where that is available
        base.setup(name, size)
        self._one_thread(name)
        self.work = work._run
        self.baseline = lambda: base.time_naive_cos_sin(name, size)

    def track_rope_cos_sin_over_naive(self, *params: str) -> float:
        return self._ratio()


class SinusoidalRatio(_Ratio):
    """``sinusoidal(arange(n), dim, convention=..., dtype=float32)`` / the naive float32 table."""

    params = [RATIO_BACKENDS, TABLE_RATIO_SIZES, [*CONVENTIONS, "tensor2tensor", "marian", "mlx"]]
    param_names = ["backend", "size", "convention"]

    def setup(self, name: str, size: str, convention: str) -> None:
        work, base = bench_sinusoidal.Sinusoidal(), bench_baselines.NaiveTable()
        work.setup(name, size, DTYPE, convention)
        base.setup(name, size)
        self._one_thread(name)
        self.work = work._run
        self.baseline = lambda: base.time_naive_table(name, size)

    def track_sinusoidal_over_naive(self, *params: str) -> float:
        return self._ratio()


class AlibiRatio(_Ratio):
    """``alibi_bias(arange(q), arange(k), slopes)`` (one array) / a fill of its shape, float32."""

    params = [RATIO_BACKENDS, BIAS_SHAPES, ["symmetric", "causal"]]
    param_names = ["backend", "shape", "form"]

    def setup(self, name: str, shape: str, form: str) -> None:
        work, base = bench_relative.AlibiBias(), bench_baselines.Fill()
        work.setup(name, shape, DTYPE, form, "full")
        base.setup(name, shape, DTYPE)
        self._one_thread(name)
        self.work = lambda: work.run(form)
        self.baseline = lambda: base.time_fill(name, shape, DTYPE)

    def track_alibi_bias_over_fill(self, *params: str) -> float:
        return self._ratio()


class T5BucketRatio(_Ratio):
    """``t5_bucket(relative)`` (HF's 32 buckets, 128 max distance) / one float64 ``log``."""

    params = [RATIO_BACKENDS, RELATIVE_SIZES, [True, False]]
    param_names = ["backend", "size", "bidirectional"]

    def setup(self, name: str, size: str, bidirectional: bool) -> None:
        work, base = bench_relative.T5Bucket(), bench_baselines.Log()
        work.setup(name, size, bidirectional)
        base.setup(name, size, "float64")
        self._one_thread(name)
        self.work = lambda: work._run(bidirectional)
        self.baseline = lambda: base.time_log(name, size, "float64")

    def track_t5_bucket_over_log(self, *params: Any) -> float:
        return self._ratio()


#: ``[B, H, L, D]`` of the attention ratio: smaller than the timed benchmark's, since the
#: reference attention on one thread takes 0.6 s a call at ``1x8x512x64`` on MLX (140 ms on NumPy).
ATTENTION_RATIO_SHAPES = ["1x4x128x64", *QKV_SHAPES[1:]]


class AttentionRatio(_Ratio):
    """``attention(q, k, v, bias=...)`` / ``(q @ k^T) @ v``, float32 q, k, v of shape ``[B, H, L, D]``."""

    params = [RATIO_BACKENDS, ATTENTION_RATIO_SHAPES, ["none", "alibi"]]
    param_names = ["backend", "shape", "bias"]

    def setup(self, name: str, shape: str, bias: str) -> None:
        work, base = bench_attention.Attention(), bench_baselines.MatMul()
        work.setup(name, shape, DTYPE, bias)
        base.setup(name, shape, DTYPE)
        self._one_thread(name)
        self.work = work._run
        self.baseline = lambda: base.time_matmul(name, shape, DTYPE)

    def track_attention_over_matmul(self, *params: str) -> float:
        return self._ratio()


#: heads, keys of the one-row ALiBi call (a decoding step of a 2048-token context).
ROW_HEADS, ROW_KEYS = 16, 2048
#: What the row call is divided by: the bare product, or a real library's builder.
ROW_BASELINES = ["floor", "bloom", "mpt"]


def _transformers_alibi(kind: str) -> Any:
    """BLOOM's or MPT's ALiBi builder from the installed transformers (never re-implemented)."""
    if kind == "bloom":
        return require_module("transformers.models.bloom.modeling_bloom").build_alibi_tensor
    return require_module("transformers.models.mpt.modeling_mpt").build_mpt_alibi_tensor


class AlibiRowRatio(_Ratio):
    """One query row of ALiBi, ``[16, 1, 2048]`` float32: small-call overhead.

    ``floor``: ``alibi_bias([L-1], arange(L), slopes, form="causal")`` / the bare
    ``slopes[:, None, None] * k`` with the same precomputed slopes and float keys.
    ``bloom``: ``alibi_bias(..., alibi_slopes(16), form="causal")`` (slopes included,
    as BLOOM computes its own) / ``build_alibi_tensor(ones(1, L), 16, float32)``
    (``m j``).  ``mpt``: the same with ``form="symmetric"`` (``-m |j - (L-1)|``) /
    ``build_mpt_alibi_tensor(16, L)`` (``m (j - L + 1)``).  BLOOM and MPT are PyTorch
    only and need transformers.
    """

    params = [RATIO_BACKENDS, ROW_BASELINES]
    param_names = ["backend", "baseline"]
    ratio_samples = timing.SMALL_CALL_SAMPLES
    min_sample = timing.SMALL_CALL_MIN_SAMPLE

    def setup(self, name: str, baseline: str) -> None:
        bias, slopes_of = require("alibi_bias"), require("alibi_slopes")
        be = backend(name)
        if baseline != "floor" and name != "torch":
            skip(f"{baseline}'s ALiBi builder is PyTorch only")
        dtype = be.dtype(DTYPE)
        q = be.asarray(np.asarray([ROW_KEYS - 1]), "int64")
        k = be.asarray(np.arange(ROW_KEYS), "int64")
        slopes = be.sync(slopes_of(ROW_HEADS, xp=be.xp, device=be.device, dtype=dtype))
        form = "symmetric" if baseline == "mpt" else "causal"
        if baseline == "floor":
            keys = be.asarray(np.arange(ROW_KEYS), DTYPE)
            self.work = lambda: be.sync(bias(q, k, slopes, form=form))
            self.baseline = lambda: be.sync(slopes[:, None, None] * keys[None, None, :])
        else:
            build = _transformers_alibi(baseline)
            torch = be.module
            mask = torch.ones((1, ROW_KEYS), dtype=torch.int64)

            def work() -> object:
                own = slopes_of(ROW_HEADS, xp=be.xp, device=be.device, dtype=dtype)
                return be.sync(bias(q, k, own, form=form))

            self.work = work
            if baseline == "bloom":
                self.baseline = lambda: be.sync(build(mask, ROW_HEADS, torch.float32))
            else:
                self.baseline = lambda: be.sync(build(ROW_HEADS, ROW_KEYS))
        self._one_thread(name)

    def track_alibi_row_over_baseline(self, *params: str) -> float:
        return self._ratio()
