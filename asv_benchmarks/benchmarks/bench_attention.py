"""The reference attention ``posenc_ref.attention`` (softmax(q k^T * scale + bias) v)."""

from __future__ import annotations

import numpy as np

from .bench_baselines import QKV_SHAPES
from .common import BACKENDS, DTYPES, backend, limit_size, require, require_dtype, shape_of


class Attention:
    """``attention(q, k, v, bias=...)`` with no bias or a symmetric ALiBi bias."""

    params = [BACKENDS, QKV_SHAPES, DTYPES, ["none", "alibi"]]
    param_names = ["backend", "shape", "dtype", "bias"]

    def setup(self, name: str, shape: str, dtype: str, bias: str) -> None:
        self.func = require("attention")
        self.be = backend(name)
        require_dtype(self.be, dtype)
        b, h, n, d = shape_of(shape)
        limit_size(b * h * n * n)  # the logits
        rng = np.random.default_rng(0)
        self.q, self.k, self.v = (self.be.asarray(rng.standard_normal((b, h, n, d)), dtype) for _ in range(3))
        self.bias = None
        if bias == "alibi":
            slopes = require("alibi_slopes")(
                h, xp=self.be.xp, device=self.be.device, dtype=self.be.dtype(dtype)
            )
            pos = self.be.asarray(np.arange(n), "int64")
            self.bias = self.be.sync(require("alibi_bias")(pos, pos, slopes, form="symmetric"))

    def _run(self) -> object:
        return self.be.sync(self.func(self.q, self.k, self.v, bias=self.bias))

    def time_attention(self, *params: str) -> None:
        self._run()

    def peakmem_attention(self, *params: str) -> None:
        self._run()
