"""Scale-out on Dask: builders stay lazy and chunked; a long T5 bias reduces in bounded memory.

With ``dask.array`` positions, every bias and table builder must return a lazy Dask
array whose blocks follow the chunks of the positions (a block of queries times a
block of keys), without computing anything while the graph is built.  Values are
checked against the formulas, computed here with NumPy/Python.

The scale test builds the T5 bias of 8192 x 8192 positions with 8 heads (4 GiB of
float64 if materialised) in chunks of 1024 positions, reduces it to per-head sums on
the threaded scheduler, and checks the sums exactly against a closed form (the
number of pairs at each distance times the bucket's table entry) and the peak memory
growth against a few chunks.  It runs ``scripts/asv_dask_scale.py`` in a fresh
process so the peak RSS belongs to that computation alone.  The full 131072 x 131072
size (1.1 TB as float64, minutes on two cores) is the asv benchmark
``bench_dask.T5BiasScale``.
"""

from __future__ import annotations

import json
import math
import os
import pathlib
import subprocess
import sys
from typing import Any

import numpy as np
import pytest

da = pytest.importorskip(
    "dask.array", reason="dask is not installed (pip install dask)", exc_type=ImportError
)
dask = pytest.importorskip("dask", reason="dask is not installed (pip install dask)", exc_type=ImportError)

import array_api_compat.dask.array as dxp  # noqa: E402

import posenc_ref as pr  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[1]
N = 64
CHUNK = 16
BLOCKS = N // CHUNK
HEADS = 8


def _no_compute(*args: Any, **kwargs: Any) -> Any:
    msg = "a Dask graph was computed while it was only being built"
    raise AssertionError(msg)


def build_lazily(func: Any, *args: Any, **kwargs: Any) -> Any:
    """``func(*args, **kwargs)`` with every Dask compute forbidden."""
    with dask.config.set(scheduler=_no_compute):
        out = func(*args, **kwargs)
    for array in out if isinstance(out, tuple) else (out,):
        assert isinstance(array, da.Array), f"expected a dask array, got {type(array).__name__}"
    return out


def positions() -> Any:
    return da.arange(N, chunks=CHUNK)


def relative_host() -> np.ndarray:
    return np.arange(N)[None, :] - np.arange(N)[:, None]


def t5_bucket_exact(r: int, num_buckets: int = 32, max_distance: int = 128) -> int:
    """HF's bidirectional T5 bucket, with the log floor decided in integers."""
    half = num_buckets // 2
    exact = half // 2
    span = half - exact
    n = abs(r)
    if n < exact:
        return n + (half if r > 0 else 0)
    s = 0
    while s + 1 < span and n**span * exact ** (s + 1) >= max_distance ** (s + 1) * exact**span:
        s += 1
    return exact + s + (half if r > 0 else 0)


class TestLazyChunked:
    """Each builder returns a lazy array blocked like its positions, with the formula's values."""

    def test_relative_positions(self):
        out = build_lazily(pr.relative_positions, positions(), positions())
        assert out.numblocks == (BLOCKS, BLOCKS)
        np.testing.assert_array_equal(out.compute(), relative_host())

    def test_shaw_index(self):
        rel = build_lazily(pr.relative_positions, positions(), positions())
        out = build_lazily(pr.shaw_index, rel, 8)
        assert out.numblocks == (BLOCKS, BLOCKS)
        np.testing.assert_array_equal(out.compute(), np.clip(relative_host(), -8, 8) + 8)

    def test_t5_bucket(self):
        rel = build_lazily(pr.relative_positions, positions(), positions())
        out = build_lazily(pr.t5_bucket, rel)
        assert out.numblocks == (BLOCKS, BLOCKS)
        expected = np.vectorize(t5_bucket_exact)(relative_host())
        np.testing.assert_array_equal(out.compute(), expected)

    def test_t5_bias(self):
        host_table = np.arange(32 * HEADS, dtype=np.float64).reshape(32, HEADS)
        out = build_lazily(pr.t5_bias, positions(), positions(), da.from_array(host_table))
        assert out.shape == (HEADS, N, N)
        assert out.numblocks == (1, BLOCKS, BLOCKS), f"blocks {out.numblocks}: the bias was rechunked"
        buckets = np.vectorize(t5_bucket_exact)(relative_host())
        np.testing.assert_array_equal(out.compute(), np.moveaxis(host_table[buckets], -1, 0))

    @pytest.mark.parametrize("form", ["symmetric", "causal"])
    def test_alibi_bias(self, form):
        slopes = pr.alibi_slopes(HEADS, xp=dxp, dtype=dxp.float64)
        out = build_lazily(pr.alibi_bias, positions(), positions(), slopes, form=form)
        assert out.shape == (HEADS, N, N)
        assert out.numblocks[-2:] == (BLOCKS, BLOCKS)
        m = 2.0 ** -np.arange(1, HEADS + 1)  # 2**(-8 (h+1) / 8) for 8 heads
        rel = relative_host()
        dist = -np.abs(rel) if form == "symmetric" else np.broadcast_to(np.arange(N)[None, :], rel.shape)
        np.testing.assert_array_equal(out.compute(), m[:, None, None] * dist[None])

    def test_sinusoidal(self):
        out = build_lazily(pr.sinusoidal, positions(), 16, dtype=dxp.float64)
        assert out.shape == (N, 16)
        assert out.numblocks[0] == BLOCKS
        w = 10000.0 ** (-np.arange(0, 16, 2) / 16)
        angles = np.arange(N)[:, None] * w[None, :]
        expected = np.empty((N, 16))
        expected[:, 0::2], expected[:, 1::2] = np.sin(angles), np.cos(angles)
        # float64 angles p * w rounded once: |error| <= 64 * 2**-53 ~ 7e-15
        np.testing.assert_allclose(out.compute(), expected, rtol=0, atol=1e-13)

    def test_rope_cos_sin_and_apply_rope(self):
        freqs = pr.rope_frequencies(16, xp=dxp)
        cos, sin = build_lazily(pr.rope_cos_sin, positions(), freqs)
        assert cos.shape == sin.shape == (N, 16)
        assert cos.numblocks[0] == sin.numblocks[0] == BLOCKS
        theta = 10000.0 ** (-np.arange(0, 16, 2) / 16)
        angles = np.arange(N)[:, None] * theta[None, :]
        # same rounding argument as above
        np.testing.assert_allclose(cos.compute(), np.cos(np.concatenate([angles, angles], -1)), atol=1e-13)
        np.testing.assert_allclose(sin.compute(), np.sin(np.concatenate([angles, angles], -1)), atol=1e-13)
        x_host = np.random.default_rng(0).standard_normal((2, N, 16))
        out = build_lazily(pr.apply_rope, da.from_array(x_host, chunks=(1, CHUNK, 16)), cos, sin)
        assert out.numblocks[:2] == (2, BLOCKS)
        c, s = np.cos(angles), np.sin(angles)
        x1, x2 = x_host[..., :8], x_host[..., 8:]
        expected = np.concatenate([x1 * c - x2 * s, x2 * c + x1 * s], -1)
        np.testing.assert_allclose(out.compute(), expected, atol=1e-13)


class TestT5BiasScale:
    """The T5 bias of 8192 x 8192 positions, 8 heads, reduced per head in bounded memory."""

    n = 8192
    chunk = 1024

    @pytest.fixture(scope="class")
    @classmethod
    def result(cls) -> dict[str, Any]:
        script = ROOT / "scripts" / "asv_dask_scale.py"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        }
        cmd = [sys.executable, str(script), "--n", str(cls.n), "--chunk", str(cls.chunk), "--workers", "2"]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, check=False)
        assert proc.returncode in (0, 1), proc.stderr[-3000:]
        return json.loads(proc.stdout.strip().splitlines()[-1])

    def test_sums_equal_closed_form(self, result):
        # Integer table entries: every partial sum is exact in float64, so equality is exact.
        assert result["sums"] == result["expected"]

    def test_blocks_follow_position_chunks(self, result):
        assert result["bias_chunksize"] == [HEADS, self.chunk, self.chunk]
        assert result["bias_chunks"] == [1, self.n // self.chunk, self.n // self.chunk]

    def test_peak_memory_is_a_few_chunks(self, result):
        # Two threads each hold a chunk of the bias plus its int64 index (~1.2 chunks);
        # the whole bias would be (n / chunk)**2 = 64 chunks.
        chunks = result["peak_bytes"] / result["chunk_bytes"]
        assert chunks <= 6, (
            f"peak memory grew by {chunks:.1f} chunks of {result['chunk_bytes'] / 2**20:.0f} MiB"
        )
        assert result["peak_bytes"] < result["full_bytes"] / 10
        assert math.isfinite(result["seconds"])
