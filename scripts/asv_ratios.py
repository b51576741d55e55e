#!/usr/bin/env python
"""Performance targets of posenc-ref as ratios read from one asv run.

    python scripts/asv_ratios.py --run          # benchmark the targets (NumPy), then print the table
    python scripts/asv_ratios.py [--results F]  # print the table from stored results

``--run`` calls ``asv run -E existing --set-commit-hash <HEAD>`` on the benchmarks
that the targets need, NumPy backend only (``POSENC_REF_BENCH_BACKENDS=numpy``), so
every library figure and its baseline come from the same run, then reads the results
file it wrote.  Without ``--run`` the newest results file in ``.asv/results`` is read
(or ``--results``).  Each row divides a library benchmark by its baseline (both are
asv medians) and compares the ratio with the target; absolute targets are in seconds.
Prints a Markdown table; exits 1 if a target is missed, 0 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import pathlib
import subprocess
import sys
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH_REGEX = (
    r"ApplyRope\.time|Copy\.time|RopeCosSin\.time|CosSin\.time|AlibiBias\.time|Fill\.time|"
    r"AlibiPeakMemory|T5Bucket\.time|Log\.time|GoldenGenerate|ConformanceCheck"
)

#: (label, (benchmark, params), (baseline, params) or None, limit)
ROPE = "bench_rope"
BASE = "bench_baselines"
REL = "bench_relative"
TARGETS: list[tuple[str, tuple[str, dict[str, Any]], tuple[str, dict[str, Any]] | None, float]] = [
    (
        "apply_rope f32 [1,32,4096,128] half / copy of x",
        (
            f"{ROPE}.ApplyRope.time_apply_rope",
            {"shape": "1x32x4096x128", "dtype": "float32", "layout": "half", "rotary": "full"},
        ),
        (f"{BASE}.Copy.time_copy", {"shape": "1x32x4096x128", "dtype": "float32"}),
        4.0,
    ),
    (
        "apply_rope f32 [1,32,4096,128] interleaved / copy of x",
        (
            f"{ROPE}.ApplyRope.time_apply_rope",
            {"shape": "1x32x4096x128", "dtype": "float32", "layout": "interleaved", "rotary": "full"},
        ),
        (f"{BASE}.Copy.time_copy", {"shape": "1x32x4096x128", "dtype": "float32"}),
        4.0,
    ),
    (
        "apply_rope f32 [1,32,4096,128] half, partial rotary (64 of 128) / copy of x",
        (
            f"{ROPE}.ApplyRope.time_apply_rope",
            {"shape": "1x32x4096x128", "dtype": "float32", "layout": "half", "rotary": "half"},
        ),
        (f"{BASE}.Copy.time_copy", {"shape": "1x32x4096x128", "dtype": "float32"}),
        4.0,
    ),
    (
        "rope_cos_sin 131072x64, f64 compute, f64 out / bare f64 cos+sin",
        (
            f"{ROPE}.RopeCosSin.time_rope_cos_sin",
            {"size": "131072x64", "compute": "float64", "dtype": "float64"},
        ),
        (f"{BASE}.CosSin.time_cos_sin", {"size": "131072x64", "dtype": "float64"}),
        1.5,
    ),
    (
        "rope_cos_sin 131072x64, f64 compute, f32 out / bare f64 cos+sin",
        (
            f"{ROPE}.RopeCosSin.time_rope_cos_sin",
            {"size": "131072x64", "compute": "float64", "dtype": "float32"},
        ),
        (f"{BASE}.CosSin.time_cos_sin", {"size": "131072x64", "dtype": "float64"}),
        1.5,
    ),
    (
        "rope_cos_sin 131072x64, precise f32 path / bare f32 cos+sin",
        (
            f"{ROPE}.RopeCosSin.time_rope_cos_sin",
            {"size": "131072x64", "compute": "float32", "dtype": "float32"},
        ),
        (f"{BASE}.CosSin.time_cos_sin", {"size": "131072x64", "dtype": "float32"}),
        4.0,
    ),
    (
        "alibi_bias [16,2048,2048] f32 symmetric / fill",
        (
            f"{REL}.AlibiBias.time_alibi_bias",
            {"shape": "16x2048x2048", "dtype": "float32", "form": "symmetric", "mode": "full"},
        ),
        (f"{BASE}.Fill.time_fill", {"shape": "16x2048x2048", "dtype": "float32"}),
        3.0,
    ),
    (
        "alibi_bias [16,2048,2048] f32 causal / fill",
        (
            f"{REL}.AlibiBias.time_alibi_bias",
            {"shape": "16x2048x2048", "dtype": "float32", "form": "causal", "mode": "full"},
        ),
        (f"{BASE}.Fill.time_fill", {"shape": "16x2048x2048", "dtype": "float32"}),
        3.0,
    ),
    (
        "alibi_bias [16,2048,2048] f32 symmetric, peak NumPy memory / output bytes",
        (
            f"{REL}.AlibiPeakMemory.track_alibi_peak_over_output",
            {"shape": "16x2048x2048", "dtype": "float32", "form": "symmetric"},
        ),
        None,
        1.5,
    ),
    (
        "t5_bucket 4096x4096 bidirectional / one f64 log",
        (f"{REL}.T5Bucket.time_t5_bucket", {"size": "4096x4096", "bidirectional": True}),
        (f"{BASE}.Log.time_log", {"size": "4096x4096", "dtype": "float64"}),
        2.0,
    ),
    (
        "t5_bucket 4096x4096 causal / one f64 log",
        (f"{REL}.T5Bucket.time_t5_bucket", {"size": "4096x4096", "bidirectional": False}),
        (f"{BASE}.Log.time_log", {"size": "4096x4096", "dtype": "float64"}),
        2.0,
    ),
    (
        "posenc-ref golden generate (--check), seconds",
        ("bench_conformance.GoldenGenerate.time_golden_generate", {}),
        None,
        60.0,
    ),
    (
        "posenc-ref check posenc_ref (NumPy), seconds",
        ("bench_conformance.ConformanceCheck.time_check", {"backend": "numpy"}),
        None,
        30.0,
    ),
]


def newest_results(results_dir: pathlib.Path) -> pathlib.Path:
    files = [p for p in results_dir.glob("*/*.json") if p.name not in ("machine.json", "benchmarks.json")]
    if not files:
        msg = f"no asv results under {results_dir}"
        raise SystemExit(msg)
    return max(files, key=lambda p: p.stat().st_mtime)


def lookup(
    results: dict[str, Any], name: str, wanted: dict[str, Any], param_names: dict[str, list[str]]
) -> float:
    """The stored value of benchmark ``name`` at parameters ``wanted`` (NumPy backend)."""
    entry = results["results"].get(name)
    if entry is None:
        return math.nan
    columns = results["result_columns"]
    values, params = entry[columns.index("result")], entry[columns.index("params")]
    if not params:
        return float(values[0]) if values and values[0] is not None else math.nan
    names = param_names.get(name, [])
    wanted = {"backend": "numpy", **wanted}
    for i, combo in enumerate(itertools.product(*params)):
        chosen = dict(zip(names, combo, strict=False))
        if all(chosen.get(k) == repr(v) for k, v in wanted.items() if k in chosen):
            value = values[i]
            return float(value) if value is not None else math.nan
    return math.nan


def param_names() -> dict[str, list[str]]:
    """Parameter names of each benchmark, from asv's benchmarks.json."""
    path = ROOT / ".asv" / "results" / "benchmarks.json"
    data = json.loads(path.read_text()) if path.exists() else {}
    return {k: v.get("param_names", []) for k, v in data.items() if isinstance(v, dict)}


def table(results_path: pathlib.Path, command: str) -> tuple[str, bool]:
    results = json.loads(results_path.read_text())
    names = param_names()
    rows = ["| target | measured | limit | met | command |", "|---|---|---|---|---|"]
    all_met = True
    for label, (bench, params), baseline, limit in TARGETS:
        value = lookup(results, bench, params, names)
        if baseline is not None:
            value /= lookup(results, baseline[0], baseline[1], names)
        met = value <= limit if not math.isnan(value) else False
        all_met &= met
        shown = "n/a" if math.isnan(value) else (f"{value:.2f} s" if "seconds" in label else f"{value:.2f}x")
        limit_text = f"< {limit:g} s" if "seconds" in label else f"<= {limit:g}x"
        rows.append(f"| {label} | {shown} | {limit_text} | {'yes' if met else 'NO'} | `{command}` |")
    header = (
        f"results: {results_path.relative_to(ROOT) if results_path.is_relative_to(ROOT) else results_path}"
    )
    header += f" (commit {results['commit_hash'][:8]}, env {results['env_name']})"
    return header + "\n\n" + "\n".join(rows), all_met


def run_asv(extra: list[str]) -> None:
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    )
    env = {
        **os.environ,
        "POSENC_REF_BENCH_BACKENDS": "numpy",
        "ASV_PYTHONPATH": os.environ.get("ASV_PYTHONPATH", str(ROOT)),
    }
    cmd = [
        sys.executable,
        "-m",
        "asv",
        "run",
        "-E",
        "existing",
        "--set-commit-hash",
        head.stdout.strip(),
        "--show-stderr",
        "-b",
        BENCH_REGEX,
        *extra,
    ]
    subprocess.run(
        [sys.executable, "-m", "asv", "machine", "--yes"],
        cwd=ROOT / "asv_benchmarks",
        check=True,
        capture_output=True,
    )
    subprocess.run(cmd, cwd=ROOT / "asv_benchmarks", env=env, check=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", action="store_true", help="run the benchmarks first (NumPy, existing env)")
    parser.add_argument("--results", type=pathlib.Path, help="an asv results JSON file (default: the newest)")
    parser.add_argument("asv_args", nargs="*", help="extra arguments for asv run (after --)")
    args = parser.parse_args(argv)
    if args.run:
        run_asv(args.asv_args)
    path = args.results or newest_results(ROOT / ".asv" / "results")
    text, met = table(path, "python scripts/asv_ratios.py --run")
    print(text)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
