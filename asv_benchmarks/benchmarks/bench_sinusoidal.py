"""Sinusoidal absolute position tables (``posenc_ref.sinusoidal``).

Read against :class:`bench_baselines.CosSin`: a table of ``n`` positions and
``dim`` columns costs at least one ``sin`` or ``cos`` per element.
"""

from __future__ import annotations

import numpy as np

from .common import BACKENDS, DTYPES, backend, require, require_dtype, shape_of

#: positions x dim.
TABLE_SIZES = ["2048x512", "65536x128"]
#: Interleaved (vaswani) and concatenated (fairseq, with its padding offset) layouts.
CONVENTIONS = ["vaswani", "fairseq"]


class Sinusoidal:
    """A full table ``sinusoidal(arange(n), dim, convention=...)``."""

    params = [BACKENDS, TABLE_SIZES, DTYPES, CONVENTIONS]
    param_names = ["backend", "size", "dtype", "convention"]

    def setup(self, name: str, size: str, dtype: str, convention: str) -> None:
        self.func = require("sinusoidal")
        self.be = backend(name)
        require_dtype(self.be, dtype)
        n, self.dim = shape_of(size)
        self.positions = self.be.asarray(np.arange(n), "int64")
        self.dtype = self.be.dtype(dtype)
        self.convention = convention

    def _run(self) -> object:
        out = self.func(self.positions, self.dim, convention=self.convention, dtype=self.dtype)
        return self.be.sync(out)

    def time_sinusoidal(self, *params: str) -> None:
        self._run()

    def peakmem_sinusoidal(self, *params: str) -> None:
        self._run()
