"""RoPE: frequencies per scaling type, cos/sin tables, and applying the rotation.

Ratios to read (same run): ``RopeCosSin`` against ``bench_baselines.CosSin`` (the
float64-compute path should cost little more than bare ``cos``+``sin``; the
precise float32 path reduces angles with extra precision and costs more), and
``ApplyRope`` against ``bench_baselines.Copy`` (one copy of ``x`` is the floor).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .bench_baselines import COS_SIN_SIZES, ROPE_X_SHAPES
from .common import BACKENDS, DTYPES, backend, require, require_dtype, shape_of, skip

#: rope_frequencies scaling types (HF ``rope_type``) and the configuration used for each.
SCALINGS: dict[str, Any] = {
    "default": None,
    "linear": {"rope_type": "linear", "factor": 4.0},
    "ntk": {"rope_type": "ntk", "factor": 4.0},
    "dynamic": {"rope_type": "dynamic", "factor": 4.0, "max_position_embeddings": 4096},
    "yarn": {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096},
    "llama3": {
        "rope_type": "llama3",
        "factor": 8.0,
        "low_freq_factor": 1.0,
        "high_freq_factor": 4.0,
        "original_max_position_embeddings": 8192,
    },
    "longrope": {
        "rope_type": "longrope",
        "short_factor": [1.0 + 0.01 * i for i in range(64)],
        "long_factor": [1.0 + 0.5 * i for i in range(64)],
        "original_max_position_embeddings": 4096,
        "max_position_embeddings": 131072,
    },
    "proportional": {"rope_type": "proportional", "factor": 2.0, "partial_rotary_factor": 0.5},
}
ROPE_DIM = 128
SEQ_LEN = 32768


def frequencies(be: Any, scaling: str = "default", dim: int = ROPE_DIM, compute_dtype: Any = None) -> Any:
    """``rope_frequencies`` for one scaling type on backend ``be``."""
    func = require("rope_frequencies")
    kwargs: dict[str, Any] = {"base": 10000.0, "scaling": SCALINGS[scaling], "seq_len": SEQ_LEN}
    if compute_dtype is not None:
        kwargs["compute_dtype"] = compute_dtype
    try:
        return func(dim, xp=be.xp, device=be.device, **kwargs)
    except (TypeError, ValueError) as exc:
        skip(f"rope_frequencies rejects scaling {scaling!r} here: {exc}")
        raise  # unreachable


class RopeFrequencies:
    """``rope_frequencies(128, scaling=...)``: small, so this measures per-call overhead."""

    params = [BACKENDS, list(SCALINGS)]
    param_names = ["backend", "scaling"]

    def setup(self, name: str, scaling: str) -> None:
        self.be = backend(name)
        self.scaling = scaling
        self.be.sync(frequencies(self.be, scaling))  # skips if this type is not supported

    def time_rope_frequencies(self, name: str, scaling: str) -> None:
        self.be.sync(frequencies(self.be, self.scaling))


class RopeCosSin:
    """``rope_cos_sin(arange(n), freqs)`` for ``f = 64`` frequencies (``dim = 128``).

    ``compute`` is the dtype angles are computed in: ``float64``, or the precise
    ``float32`` path (extra-precision reduction) used where float64 is missing.
    """

    params = [BACKENDS, COS_SIN_SIZES, ["float64", "float32"], DTYPES]
    param_names = ["backend", "size", "compute", "dtype"]

    def setup(self, name: str, size: str, compute: str, dtype: str) -> None:
        self.func = require("rope_cos_sin")
        self.be = backend(name)
        require_dtype(self.be, compute)
        require_dtype(self.be, dtype)
        if compute == "float32" and dtype == "float64":
            skip("float64 output from float32 compute is not a useful combination")
        n, f = shape_of(size)
        self.compute = self.be.dtype(compute)
        self.freqs = frequencies(self.be, "default", dim=2 * f, compute_dtype=self.compute)
        self.positions = self.be.asarray(np.arange(n), "int64")
        self.dtype = self.be.dtype(dtype)
        self._run()

    def _run(self) -> object:
        out = self.func(
            self.positions, self.freqs, layout="half", dtype=self.dtype, compute_dtype=self.compute
        )
        return self.be.sync(out)

    def time_rope_cos_sin(self, *params: str) -> None:
        self._run()

    def peakmem_rope_cos_sin(self, *params: str) -> None:
        self._run()


class ApplyRope:
    """``apply_rope(x, cos, sin)`` on ``x`` of shape ``[B, H, L, D]``.

    ``rotary`` is the fraction of the ``D`` channels rotated (``"half"``: partial
    rotary with ``cos.shape[-1] = D/2``).
    """

    params = [BACKENDS, ROPE_X_SHAPES, DTYPES, ["half", "interleaved"], ["full", "half"]]
    param_names = ["backend", "shape", "dtype", "layout", "rotary"]

    def setup(self, name: str, shape: str, dtype: str, layout: str, rotary: str) -> None:
        self.func = require("apply_rope")
        cos_sin = require("rope_cos_sin")
        self.be = backend(name)
        require_dtype(self.be, dtype)
        b, h, n, d = shape_of(shape)
        rot = d if rotary == "full" else d // 2
        rng = np.random.default_rng(0)
        self.x = self.be.asarray(rng.standard_normal((b, h, n, d)), dtype)
        freqs = frequencies(self.be, "default", dim=rot)
        positions = self.be.asarray(np.arange(n), "int64")
        self.cos, self.sin = self.be.sync(
            cos_sin(positions, freqs, layout=layout, dtype=self.be.dtype(dtype))
        )
        self.layout = layout

    def _run(self) -> object:
        return self.be.sync(self.func(self.x, self.cos, self.sin, layout=self.layout))

    def time_apply_rope(self, *params: str) -> None:
        self._run()

    def peakmem_apply_rope(self, *params: str) -> None:
        self._run()
