"""Interleaved min-of-N timing: the one way posenc-ref's ratios are measured.

A ratio of two asv medians taken minutes apart on a shared machine moves with the
machine's load (+-25 % on two cores); two calls timed alternately in one process,
each reported as its fastest of ``N`` samples, see the same machine state and the
same caches, so their ratio holds from run to run.  Used by the ``track_`` ratio
benchmarks (``bench_ratios.py``) and by ``scripts/peer_bench.py``; it imports
nothing but the standard library.

The clock is the process's CPU time (:func:`time.process_time`, all threads, user
and system) by default: on a machine whose other tenants keep both cores busy, a
100 ms call rarely gets 100 ms of wall time without being descheduled, so even the
fastest of N wall-clock samples carries a share of someone else's work, while the
CPU time it used does not.  Everything timed this way runs on one thread (NumPy,
PyTorch set to one thread), where CPU time and uncontended wall time are the same
quantity; ``clock="wall"`` (:func:`time.perf_counter`) is there for multi-threaded
work, where idle worker threads would count.

* Each call runs once untimed: a first call pays for lazy imports, one-time
  initialisation, first-touch page faults (posenc-ref's one-row ALiBi on PyTorch:
  about 350 ms, then 120 us).
* ``number`` (calls per sample) is chosen per call from its second call, so that
  one sample lasts at least ``min_sample`` seconds: a 30 us call is timed as a few
  hundred calls, a 300 ms call alone.  Where ``number > 1``, one untimed sample
  follows (the calibrating call was the warm-up of a long one).
* ``samples`` rounds follow; each round times every call once, in an order that
  alternates between rounds (A B, B A, ...), so neither call always runs right
  after the other.
* The garbage collector is off while timing (as in :mod:`timeit`).
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Mapping

#: Samples per call when nothing else is asked for.
SAMPLES = 7
#: Shortest sample, in seconds (a call faster than this is repeated within one sample).
MIN_SAMPLE = 0.005
#: For calls of tens of microseconds: more, shorter samples (fewer context switches
#: within one, more chances of a clean one).
SMALL_CALL_SAMPLES, SMALL_CALL_MIN_SAMPLE = 31, 0.002
#: The clocks a sample can be read from.
CLOCKS: dict[str, Callable[[], float]] = {"cpu": time.process_time, "wall": time.perf_counter}


def calls_per_sample(seconds: float, min_sample: float = MIN_SAMPLE) -> int:
    """How many calls make one sample of at least ``min_sample`` seconds (at least 1)."""
    if seconds <= 0.0:
        return 1000
    return max(1, math.ceil(min_sample / seconds))


def _sample(call: Callable[[], object], number: int, clock: Callable[[], float]) -> float:
    start = clock()
    for _ in range(number):
        call()
    return (clock() - start) / number


def interleaved_min(
    calls: Mapping[str, Callable[[], object]],
    *,
    samples: int = SAMPLES,
    min_sample: float = MIN_SAMPLE,
    clock: str = "cpu",
) -> dict[str, float]:
    """The fastest time of one call of each of ``calls``, in seconds, timed alternately.

    Parameters
    ----------
    calls : mapping of name -> zero-argument callable
        The work to time; each must do its whole work before returning
        (synchronise lazy or asynchronous backends inside the callable).
    samples : int
        Rounds; every call is sampled once per round.
    min_sample : float
        Shortest duration of one sample in seconds (see :func:`calls_per_sample`).
    clock : {"cpu", "wall"}
        The process's CPU time (default) or wall time (see the module notes).

    Returns
    -------
    dict of name -> seconds
        The minimum over the rounds of the mean time of one call within a sample.
    """
    if samples < 1:
        msg = f"samples must be a positive integer; got {samples!r}"
        raise ValueError(msg)
    if clock not in CLOCKS:
        msg = f"clock must be one of {sorted(CLOCKS)}; got {clock!r}"
        raise ValueError(msg)
    read, names = CLOCKS[clock], list(calls)
    enabled = gc.isenabled()
    gc.disable()
    try:
        for name in names:
            calls[name]()
        number = {name: calls_per_sample(_sample(calls[name], 1, read), min_sample) for name in names}
        for name in names:
            if number[name] > 1:
                _sample(calls[name], number[name], read)
        best = dict.fromkeys(names, math.inf)
        for round_ in range(samples):
            for name in names if round_ % 2 == 0 else reversed(names):
                best[name] = min(best[name], _sample(calls[name], number[name], read))
    finally:
        if enabled:
            gc.enable()
    return best


def ratio(
    work: Callable[[], object],
    baseline: Callable[[], object],
    *,
    samples: int = SAMPLES,
    min_sample: float = MIN_SAMPLE,
    clock: str = "cpu",
) -> float:
    """``min time of work / min time of baseline``, the two timed alternately."""
    calls = {"work": work, "baseline": baseline}
    best = interleaved_min(calls, samples=samples, min_sample=min_sample, clock=clock)
    return best["work"] / best["baseline"]
