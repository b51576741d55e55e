"""The reference attention ``posenc_ref.attention`` (softmax(q k^T * scale + bias) v)."""

from __future__ import annotations

import numpy as np

from .bench_baselines import QKV_SHAPES, qkv
from .common import BACKENDS, DTYPES, backend, require, require_dtype


class Attention:
    """``attention(q, k, v, bias=...)`` with no bias or a symmetric ALiBi bias."""

    params = [BACKENDS, QKV_SHAPES, DTYPES, ["none", "alibi"]]
    param_names = ["backend", "shape", "dtype", "bias"]

    def setup(self, name: str, shape: str, dtype: str, bias: str) -> None:
        self.func = require("attention")
        self.be = backend(name)
        require_dtype(self.be, dtype)
        self.q, self.k, self.v = qkv(self.be, shape, dtype)
        _, h, n, _ = self.q.shape
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
