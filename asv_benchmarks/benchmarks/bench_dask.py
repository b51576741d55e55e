"""Scale-out on Dask: the T5 bias of N x N positions (8 heads), built lazily and reduced.

``T5BiasScale`` runs ``scripts/asv_dask_scale.py`` in a fresh process per size, so
its peak-memory figure is the growth of that process's peak RSS during the compute
(not asv's whole-process ``peakmem_``), and reports three tracks from that one run:

* ``track_seconds``: wall time of ``bias.sum(axis=(1, 2)).compute()`` on the threaded
  scheduler with 2 workers;
* ``track_peak_in_chunks``: peak memory growth divided by the bytes of one bias chunk
  (``8 x 2048 x 2048`` float64 = 256 MiB); "bounded by a few chunks" means a small
  number here, against ``N**2 / 2048**2`` chunks in the whole bias;
* ``track_exact``: 1 if the per-head sums equal the closed form exactly, else 0.

N = 131072 (17 G entries per head, 1.1 TB of float64 for 8 heads) takes minutes on
two cores; it is skipped when ``POSENC_REF_BENCH_QUICK=1`` (``scripts/asv_ci.sh``
sets it).  ``T5BiasGraph`` times graph construction and a small compute.
"""

from __future__ import annotations

import json
import os
import pathlib
from typing import Any

from .common import require, require_module, run_python, skip

SCRIPT = pathlib.Path(__file__).resolve().parents[2] / "scripts" / "asv_dask_scale.py"
SIZES = ["8192", "131072"]
CHUNK = 2048
HEADS = 8


def _quick() -> bool:
    return os.environ.get("POSENC_REF_BENCH_QUICK", "") not in ("", "0")


def _measure(n: int) -> dict[str, Any]:
    cmd = [str(SCRIPT), "--n", str(n), "--chunk", str(CHUNK), "--heads", str(HEADS)]
    proc = run_python(cmd, timeout=3000)
    if proc.returncode not in (0, 1) or not proc.stdout.strip():
        msg = f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stderr[-3000:]}"
        raise RuntimeError(msg)
    return json.loads(proc.stdout.strip().splitlines()[-1])


class T5BiasScale:
    """One measured run per size, shared by the three tracks (see the module docstring)."""

    params = [SIZES]
    param_names = ["n"]
    timeout = 3600

    def setup_cache(self) -> dict[str, Any]:
        results: dict[str, Any] = {}
        try:
            import dask.array  # noqa: F401
        except ImportError as exc:
            return {"error": f"dask is not installed: {exc}"}
        for n in SIZES:
            if _quick() and int(n) > 8192:
                continue
            results[n] = _measure(int(n))
        return results

    def setup(self, results: dict[str, Any], n: str) -> None:
        if "error" in results:
            skip(results["error"])
        if n not in results:
            skip(f"n={n} skipped (POSENC_REF_BENCH_QUICK is set)")
        self.result = results[n]

    def track_seconds(self, results: dict[str, Any], n: str) -> float:
        return float(self.result["seconds"])

    track_seconds.unit = "seconds"  # type: ignore[attr-defined]

    def track_peak_in_chunks(self, results: dict[str, Any], n: str) -> float:
        return self.result["peak_bytes"] / self.result["chunk_bytes"]

    track_peak_in_chunks.unit = "chunks"  # type: ignore[attr-defined]

    def track_exact(self, results: dict[str, Any], n: str) -> int:
        return int(bool(self.result["exact"]))

    track_exact.unit = "bool"  # type: ignore[attr-defined]


class T5BiasGraph:
    """Build the lazy bias for N = 131072 (graph only) and reduce a 4096 x 4096 one."""

    def setup(self) -> None:
        self.da = require_module("dask.array")
        self.t5_bias = require("t5_bias")
        import numpy as np

        self.table = self.da.from_array(np.arange(32 * HEADS, dtype=np.float64).reshape(32, HEADS) % 7 - 3)

    def _bias(self, n: int, chunk: int) -> Any:
        q = self.da.arange(n, chunks=chunk)
        return self.t5_bias(q, q, self.table)

    def time_build_graph_131072(self) -> None:
        self._bias(131072, CHUNK)

    def time_sum_4096(self) -> None:
        self._bias(4096, 1024).sum(axis=(1, 2)).compute(scheduler="threads", num_workers=2)
