#!/usr/bin/env python
"""posenc-ref's speed gate: ratios measured inside one asv benchmark process, min of N.

    python scripts/asv_ratios.py --run            # benchmark HEAD, then print the gate
    python scripts/asv_ratios.py                  # the gate from HEAD's stored results
    python scripts/asv_ratios.py --commit REV     # ... from another commit's results
    python scripts/asv_ratios.py --run --targets  # exit 1 on a missed target as well

``--run`` calls ``asv run -E existing --set-commit-hash <HEAD>`` twice: the ratio
tracks, ALiBi's peak memory and the two conformance commands on NumPy, then the
one-row ALiBi call on PyTorch.  Each ratio comes from ``bench_ratios.py``: the work
and its baseline timed alternately in one process, each the fastest of N samples
(7 samples, 31 for the small ALiBi call; ``--samples`` sets N for all), so machine
load moves both together.  Results are read
from HEAD's own results file (``.asv/results/<machine>/<HEAD>-existing-*.json``; the
one written by this interpreter if there are several), never from whichever file is
newest.

Each row has the issue's **target** and the gate's **limit**.  Where the code meets
the target with room, the limit is the target.  Where it misses (or meets it by less
than run-to-run noise), the limit is the worst ratio measured on the project's 2-core
machine times :data:`MARGIN`, so the gate fails on a regression and not on noise; the
speed work lowers a limit to the target once it is met (the derivation per row is in
``asv_benchmarks/README.md``).  Exit status: 1 if a row is over its limit or has no
value (rows needing an optional peer library excepted), with ``--targets`` also if a
target is missed; 0 otherwise; 2 when HEAD has no stored results.
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import math
import os
import pathlib
import re
import subprocess
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESULTS = ROOT / ".asv" / "results"
COMMAND = "python scripts/asv_ratios.py --run"

#: (environment, asv --bench regex) of the two runs behind the gate.
RUNS = [
    (
        {"POSENC_REF_BENCH_BACKENDS": "numpy"},
        r"Ratio\.track_|AlibiPeakMemory|GoldenGenerate|ConformanceCheck",
    ),
    ({"POSENC_REF_BENCH_BACKENDS": "torch"}, r"AlibiRowRatio\.track_"),
]


#: Headroom over the worst ratio measured where a limit cannot be the target (see module doc).
MARGIN = 1.2


@dataclasses.dataclass(frozen=True)
class Row:
    """One line of the gate: a stored value, the issue's target and the gate's limit."""

    label: str
    benchmark: str
    params: dict[str, Any]
    target: float
    limit: float
    seconds: bool = False
    optional: str = ""  # the optional library the row needs; no value is then not a failure


ROPE = "bench_ratios.ApplyRopeRatio.track_apply_rope_over_copy"
COS_SIN = "bench_ratios.RopeCosSinRatio.track_rope_cos_sin_over_cos_sin"
COS_SIN_NAIVE = "bench_ratios.RopeCosSinNaiveRatio.track_rope_cos_sin_over_naive"
SINUSOIDAL = "bench_ratios.SinusoidalRatio.track_sinusoidal_over_naive"
ALIBI = "bench_ratios.AlibiRatio.track_alibi_bias_over_fill"
T5 = "bench_ratios.T5BucketRatio.track_t5_bucket_over_log"
ROW = "bench_ratios.AlibiRowRatio.track_alibi_row_over_baseline"
NONE_FILED = math.inf

#: Limits: the target where the worst of 20 runs on the 2-core machine (load 1.3 to 7,
#: six of them beside a memory- or CPU-bound neighbour) times MARGIN stays within it;
#: else that product, rounded up to 0.1 (asv_benchmarks/README.md has every figure).
ROWS: list[Row] = [
    *(
        Row(
            f"apply_rope f32 [1,32,4096,128] {layout}"
            f"{', partial (64 of 128)' * (rotary == 'half')} / copy of x",
            ROPE,
            {"backend": "numpy", "shape": "1x32x4096x128", "layout": layout, "rotary": rotary},
            4.0,
            limit,
        )
        for layout, rotary, limit in [
            ("half", "full", 6.6),
            ("half", "half", 7.2),
            ("interleaved", "full", 7.6),
            ("interleaved", "half", 7.2),
        ]
    ),
    *(
        Row(
            f"rope_cos_sin 131072x64, {what} / bare f{compute[-2:]} cos+sin",
            COS_SIN,
            {"backend": "numpy", "size": "131072x64", "compute": compute, "dtype": dtype},
            target,
            limit,
        )
        for what, compute, dtype, target, limit in [
            ("f64 compute, f64 out", "float64", "float64", 1.5, 1.9),
            ("f64 compute, f32 out", "float64", "float32", 1.5, 1.6),
            ("precise f32 path", "float32", "float32", 4.0, 5.1),
        ]
    ),
    Row(
        "rope_cos_sin 131072x64, f32 out (default) / naive f32 cos(m w), sin(m w)",
        COS_SIN_NAIVE,
        {"backend": "numpy", "size": "131072x64"},
        1.5,
        1.5,
    ),
    *(
        Row(
            f"sinusoidal 8192x1024 f32 {convention} / naive f32 interleaved table",
            SINUSOIDAL,
            {"backend": "numpy", "size": "8192x1024", "convention": convention},
            1.5,
            limit,
        )
        for convention, limit in [
            ("vaswani", 1.5),
            ("fairseq", 1.5),
            ("tensor2tensor", 1.5),
            ("marian", 1.5),
            ("mlx", 1.5),
        ]
    ),
    *(
        Row(
            f"alibi_bias [16,2048,2048] f32 {form} / fill",
            ALIBI,
            {"backend": "numpy", "shape": "16x2048x2048", "form": form},
            3.0,
            3.0,
        )
        for form in ["symmetric", "causal"]
    ),
    Row(
        "alibi_bias [16,2048,2048] f32 symmetric, peak NumPy memory / output bytes",
        "bench_relative.AlibiPeakMemory.track_alibi_peak_over_output",
        {"shape": "16x2048x2048", "dtype": "float32", "form": "symmetric"},
        1.5,
        1.5,
    ),
    *(
        Row(
            f"t5_bucket 4096x4096 {'bidirectional' if bidirectional else 'causal'} / one f64 log",
            T5,
            {"backend": "numpy", "size": "4096x4096", "bidirectional": bidirectional},
            2.0,
            3.3,  # on an AVX-512 CPU NumPy's float64 log is ~3x faster (asv_benchmarks/README.md)
        )
        for bidirectional in [True, False]
    ),
    *(
        Row(
            f"{work} one row [16,1,2048] f32, torch (1 thread) / {floor}",
            ROW,
            {"backend": "torch", "baseline": baseline},
            target,
            limit,
            optional="transformers" if baseline != "floor" else "",
        )
        # issue 17: small calls within 1.2x of the fastest peer; against the bare product, none filed
        for work, floor, baseline, target, limit in [
            ("alibi_bias causal", "slopes[:, None, None] * k", "floor", NONE_FILED, 8.6),
            ("alibi_slopes + alibi_bias causal", "BLOOM build_alibi_tensor", "bloom", 1.2, 3.3),
            ("alibi_slopes + alibi_bias symmetric", "MPT build_mpt_alibi_tensor", "mpt", 1.2, 3.9),
        ]
    ),
    Row(
        "posenc-ref golden generate (--check), seconds",
        "bench_conformance.GoldenGenerate.time_golden_generate",
        {},
        60.0,
        60.0,
        seconds=True,
    ),
    Row(
        "posenc-ref check posenc_ref (NumPy), seconds",
        "bench_conformance.ConformanceCheck.time_check",
        {"backend": "numpy"},
        30.0,
        30.0,
        seconds=True,
    ),
]


def git(*args: str) -> str:
    done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True)
    return done.stdout.strip()


def env_name(executable: str = sys.executable) -> str:
    """asv's name for the ``-E existing`` environment of ``executable`` (``asv.util.sanitize_filename``)."""
    return re.sub('[<>:"/\\\\^|?*\x00-\x1f]', "_", "existing-py" + os.path.abspath(executable))


def results_for(commit: str, results_dir: pathlib.Path | None = None) -> pathlib.Path:
    """The results file of ``commit`` (full hash): this interpreter's, else the newest of that commit's."""
    results_dir = results_dir or RESULTS
    files = sorted(results_dir.glob(f"*/{commit[:8]}-*.json"), key=lambda p: p.stat().st_mtime)
    files = [p for p in files if json.loads(p.read_text()).get("commit_hash") == commit]
    if not files:
        msg = f"no asv results for commit {commit[:8]} under {results_dir}; run: {COMMAND}"
        raise FileNotFoundError(msg)
    mine = [p for p in files if json.loads(p.read_text()).get("env_name") == env_name()]
    return (mine or files)[-1]


def param_names(results_dir: pathlib.Path) -> dict[str, list[str]]:
    """Parameter names of each benchmark, from asv's benchmarks.json in ``results_dir``."""
    path = results_dir / "benchmarks.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    return {k: v.get("param_names", []) for k, v in data.items() if isinstance(v, dict)}


def lookup(results: dict[str, Any], name: str, wanted: dict[str, Any], names: dict[str, list[str]]) -> float:
    """The stored value of benchmark ``name`` at parameters ``wanted`` (NaN if absent or skipped)."""
    entry = results["results"].get(name)
    if entry is None:
        return math.nan
    columns = results["result_columns"]
    values, params = entry[columns.index("result")], entry[columns.index("params")]
    if not params:
        return float(values[0]) if values and values[0] is not None else math.nan
    for i, combo in enumerate(itertools.product(*params)):
        chosen = dict(zip(names.get(name, []), combo, strict=False))
        if all(chosen.get(k) == repr(v) for k, v in wanted.items()):
            value = values[i] if i < len(values) else None
            return float(value) if value is not None else math.nan
    return math.nan


def _number(value: float, seconds: bool) -> str:
    if math.isnan(value):
        return "n/a"
    if math.isinf(value):
        return "none filed"
    return f"{value:.2f} s" if seconds else f"{value:.2f}x"


def gate(results: dict[str, Any], names: dict[str, list[str]]) -> tuple[list[str], bool, bool]:
    """Markdown rows of the gate, whether every limit holds, and whether every target is met."""
    lines = [
        "| gate row | measured | target | met | limit | within |",
        "|---|---|---|---|---|---|",
    ]
    limits_hold = targets_met = True
    for row in ROWS:
        value = lookup(results, row.benchmark, row.params, names)
        if math.isnan(value):  # no value: a failure, unless the row needs an absent optional library
            met = "n/a"
            within = f"skipped (needs {row.optional})" if row.optional else "NO (no value)"
            limits_hold &= bool(row.optional)
            targets_met &= bool(row.optional)
        else:
            ok_limit, ok_target = value <= row.limit, value <= row.target
            within, met = ("yes" if ok_limit else "NO"), ("yes" if ok_target else "no")
            limits_hold &= ok_limit
            targets_met &= ok_target
        lines.append(
            f"| {row.label} | {_number(value, row.seconds)} | "
            f"{'<= ' * (not math.isinf(row.target))}{_number(row.target, row.seconds)} | {met} | "
            f"<= {_number(row.limit, row.seconds)} | {within} |"
        )
    return lines, limits_hold, targets_met


def run_asv(commit: str, samples: int | None, extra: list[str]) -> None:
    """Benchmark the gate's rows for ``commit`` in this interpreter and store the results."""
    subprocess.run(
        [sys.executable, "-m", "asv", "machine", "--yes"],
        cwd=ROOT / "asv_benchmarks",
        check=True,
        capture_output=True,
    )
    for env, regex in RUNS:
        run_env = {
            **os.environ,
            **env,
            "POSENC_REF_BENCH_PRELOAD": "1",
            "ASV_PYTHONPATH": os.environ.get("ASV_PYTHONPATH", str(ROOT)),
            "MPLBACKEND": "Agg",
        }
        run_env.pop("POSENC_REF_BENCH_QUICK", None)  # the gate's sizes are the large ones
        if samples is not None:
            run_env["POSENC_REF_BENCH_RATIO_SAMPLES"] = str(samples)
        cmd = [sys.executable, "-m", "asv", "run", "-E", "existing", "--set-commit-hash", commit]
        cmd += ["--launch-method", "forkserver", "--show-stderr", "-b", regex, *extra]
        subprocess.run(cmd, cwd=ROOT / "asv_benchmarks", env=run_env, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="benchmark HEAD first (existing environment)")
    parser.add_argument("--commit", default="HEAD", help="the commit whose results are read (default HEAD)")
    parser.add_argument("--results", type=pathlib.Path, help="an asv results JSON file (instead of --commit)")
    parser.add_argument(
        "--samples", type=int, help="N of min-of-N for every ratio (default 7; 31 small calls)"
    )
    parser.add_argument("--targets", action="store_true", help="exit 1 when a target is missed, too")
    parser.add_argument("asv_args", nargs="*", help="extra arguments for asv run (after --)")
    args = parser.parse_args(argv)
    commit = git("rev-parse", args.commit)
    if args.run:
        if args.commit != "HEAD" or args.results:
            parser.error("--run benchmarks HEAD; it takes neither --commit nor --results")
        run_asv(commit, args.samples, args.asv_args)
    try:
        path = args.results or results_for(commit)
    except FileNotFoundError as exc:
        print(f"asv_ratios.py: {exc}", file=sys.stderr)
        return 2
    results = json.loads(path.read_text())
    lines, limits_hold, targets_met = gate(results, param_names(path.parent.parent))
    shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
    print(f"results: {shown} (commit {results['commit_hash'][:8]}, env {results['env_name']})")
    print(f"command: {COMMAND}{f' --samples {args.samples}' * (args.samples is not None)}\n")
    print("\n".join(lines))
    print(
        f"\nlimits: {'all hold' if limits_hold else 'EXCEEDED'}; "
        f"targets: {'all met' if targets_met else 'some missed (see met)'}"
    )
    return 0 if limits_hold and (targets_met or not args.targets) else 1


if __name__ == "__main__":
    sys.exit(main())
