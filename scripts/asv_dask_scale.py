#!/usr/bin/env python
"""Scale-out check: the T5 bias of N x N positions as a Dask array, reduced per head.

Builds ``posenc_ref.t5_bias(q, k, table)`` for ``q = k = arange(N)`` as Dask arrays
(chunks of ``--chunk`` positions), sums it over queries and keys for every head on
the threaded scheduler, and compares the sums with a closed form computed here
without posenc_ref:

    sum_h = sum_{d = -(N-1)}^{N-1} (N - |d|) * table[bucket(d), h]

(``N - |d|`` pairs have ``key - query = d``; ``bucket`` is the exact integer form of
the T5 formula).  The table holds small integers, so every partial sum is exact in
float64 and the comparison is exact.

Prints one JSON object: ``seconds`` (compute only), ``peak_bytes`` (growth of the
process's peak RSS during the compute, from ``resource.getrusage``), ``chunk_bytes``
(one chunk of the bias: heads x chunk x chunk x 8), ``full_bytes`` (the whole bias),
``sums``, ``expected`` and ``exact`` (whether they are equal).  Used by
``tests/test_dask_scale.py`` and ``asv_benchmarks/benchmarks/bench_dask.py``; run it
by hand as ``python scripts/asv_dask_scale.py --n 131072 --chunk 2048``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time

NUM_BUCKETS = 32
MAX_DISTANCE = 128


def t5_bucket_exact(relative: int, *, bidirectional: bool = True) -> int:
    """The T5 bucket of one relative position, with exact integer arithmetic."""
    half = NUM_BUCKETS // 2 if bidirectional else NUM_BUCKETS
    exact = half // 2
    span = half - exact
    offset = half if (bidirectional and relative > 0) else 0
    n = abs(relative) if bidirectional else max(-relative, 0)
    if n < exact:
        return offset + n
    # floor(span * ln(n/e) / ln(D/e)) >= s  <=>  n**span * e**s >= D**s * e**span
    s = 0
    while s + 1 < span and n**span * exact ** (s + 1) >= MAX_DISTANCE ** (s + 1) * exact**span:
        s += 1
    return offset + exact + s


def head_table(heads: int) -> list[list[float]]:
    """A [num_buckets, heads] table of small integers (exact sums in float64)."""
    return [[float((3 * b + 5 * h) % 7 - 3) for h in range(heads)] for b in range(NUM_BUCKETS)]


def closed_form(n: int, table: list[list[float]]) -> list[float]:
    """Per-head sums of the bias, from the number of pairs at each distance."""
    heads = len(table[0])
    weight = [0] * NUM_BUCKETS  # pairs falling in each bucket
    saturated = None
    for d in range(-(n - 1), n):
        if abs(d) > 4 * MAX_DISTANCE:  # beyond every threshold: the bucket no longer changes
            saturated = saturated or {}
            b = saturated.setdefault(d > 0, t5_bucket_exact(d))
        else:
            b = t5_bucket_exact(d)
        weight[b] += n - abs(d)
    return [float(sum(weight[b] * int(table[b][h]) for b in range(NUM_BUCKETS))) for h in range(heads)]


def run(n: int, chunk: int, heads: int, workers: int) -> dict[str, object]:
    import dask
    import dask.array as da
    import numpy as np

    import posenc_ref as pr

    table = head_table(heads)
    q = da.arange(n, chunks=chunk)
    k = da.arange(n, chunks=chunk)
    bias = pr.t5_bias(q, k, da.from_array(np.asarray(table)))  # [heads, n, n], lazy
    sums = bias.sum(axis=(1, 2))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    with dask.config.set(scheduler="threads", num_workers=workers):
        values = sums.compute()
    seconds = time.perf_counter() - start
    peak = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024  # KiB on Linux
    expected = closed_form(n, table)
    return {
        "n": n,
        "chunk": chunk,
        "heads": heads,
        "workers": workers,
        "bias_chunks": [len(c) for c in bias.chunks],
        "bias_chunksize": list(bias.chunksize),
        "seconds": seconds,
        "peak_bytes": peak,
        "chunk_bytes": heads * chunk * chunk * 8,
        "full_bytes": heads * n * n * 8,
        "sums": [float(v) for v in values],
        "expected": expected,
        "exact": [float(v) for v in values] == expected,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=131072, help="positions per axis (default 131072)")
    parser.add_argument("--chunk", type=int, default=2048, help="positions per chunk (default 2048)")
    parser.add_argument("--heads", type=int, default=8, help="attention heads (default 8)")
    parser.add_argument("--workers", type=int, default=2, help="threads (default 2)")
    args = parser.parse_args(argv)
    result = run(args.n, args.chunk, args.heads, args.workers)
    json.dump(result, sys.stdout)
    print()
    return 0 if result["exact"] else 1


if __name__ == "__main__":
    sys.exit(main())
