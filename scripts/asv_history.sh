#!/usr/bin/env bash
# Benchmark the last N commits of main and publish the asv dashboard to .asv/html.
#
#   scripts/asv_history.sh [-n N] [-b REGEX] [--backends LIST] [--envs] [--full] [--no-publish]
#                          [-- ASV_ARGS...]
#
#   -n N            commits to benchmark, newest first along main's first parents (default 5)
#   -b REGEX        benchmarks to run (asv --bench; default: the dashboard's selection, the
#                   ratio tracks of bench_ratios: each encoding over its floor, timed
#                   alternately in one process, min of N; sinusoidal, rope_cos_sin,
#                   apply_rope, t5_bucket, alibi_bias, attention)
#   --backends LIST backends to measure (POSENC_REF_BENCH_BACKENDS; default numpy,torch,mlx;
#                   the others, and any backend that is not installed, are skipped: asv's
#                   n/a)
#   --full          every benchmark at every size, with asv's default sampling (about an hour
#                   per commit on 2 cores) instead of the dashboard's short run
#   --envs          build each commit in an asv-managed virtualenv (asv run HASHFILE:...),
#                   dependencies installed per commit, instead of the default below
#   --rerun         benchmark commits whose results are already stored, too
#   --no-publish    store results only
#
# The default ("existing environment"): the current Python environment (its numpy, torch,
# mlx, ...) runs today's benchmark suite against each commit's library code, exported
# with `git archive` into .asv/history/<hash>/ and put first on the path
# (ASV_PYTHONPATH; checked before each run).  Results are stored under each commit's hash
# (asv run -E existing --set-commit-hash), so the graphs have one point per commit.
# Commits that predate a function skip its benchmarks (NotImplementedError in setup).
# Short-run settings: small sizes only (POSENC_REF_BENCH_QUICK=1), each ratio the fastest of
# 31 samples of at least 2 ms of each call, every thread pool on one thread, glibc's
# allocator fixed (POSENC_REF_BENCH_ALLOCATOR=steady), the backends imported once per run
# (forkserver with POSENC_REF_BENCH_PRELOAD=1); 30 - 40 s per commit on 2 quiet cores.  A
# commit whose results are already stored in .asv/results is not run again (unless --rerun).
#
# Publishing: scripts/asv_dashboard_check.py --publish --prepare-only runs `asv publish` on
# the benchmarks that have results, replaces the dashboard's CDN scripts with local copies
# (npm fetches them once), labels the commits on the graphs and puts the latest value under
# each tile of the grid.  Regression thresholds: asv_benchmarks/asv.conf.json (from
# noise.json; see docs/benchmarks.md).  View it with `python -m http.server -d .asv/html`
# or check it with scripts/asv_dashboard_check.py.  Needs asv (installed when missing).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
count=5
bench="Ratio\.track_"
backends="numpy,torch,mlx"
envs=0
rerun=0
full=0
publish=1
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        -n) count="$2"; shift 2 ;;
        -b|--bench) bench="$2"; shift 2 ;;
        --backends) backends="$2"; shift 2 ;;
        --envs) envs=1; shift ;;
        --rerun) rerun=1; shift ;;
        --full) full=1; shift ;;
        --no-publish) publish=0; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,39p' "$0"; exit 0 ;;
        *) echo "asv_history.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

if ! python -c "import asv" 2>/dev/null; then
    # like docs_ci.sh, it installs what it needs into the environment it runs in, and says where
    echo "== install the bench extra (asv) into $(python -c 'import sys; print(sys.prefix)')"
    python -m pip install --quiet "$root[bench]"
fi
cd "$root/asv_benchmarks"
mkdir -p "$root/.asv/history"
python -m asv machine --yes >/dev/null
export MPLBACKEND=Agg
# one thread for every library's own pool (BLAS, OpenMP), as PyTorch's is set in the ratio
# tracks: a second thread's CPU time counts on the process clock, and so does its spinning
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1
export POSENC_REF_BENCH_BACKENDS="$backends"

mapfile -t hashes < <(git -C "$root" rev-list --first-parent --max-count="$count" main)
echo "== benchmarking ${#hashes[@]} commit(s) of main: ${hashes[*]:0:$count}"
run_args=(--show-stderr)
if [[ -n $bench && $full == 0 ]]; then
    run_args+=(--bench "$bench")
fi
if [[ $full == 0 ]]; then
    export POSENC_REF_BENCH_QUICK=1
    # small sizes: 31 samples of at least 2 ms of each call (min of N; the gate's 7 of 5 ms
    # suit its 100 ms calls)
    export POSENC_REF_BENCH_RATIO_SAMPLES="${POSENC_REF_BENCH_RATIO_SAMPLES:-31}"
    export POSENC_REF_BENCH_RATIO_MIN_SAMPLE="${POSENC_REF_BENCH_RATIO_MIN_SAMPLE:-0.002}"
    # glibc's allocator fixed, so that no process's timings depend on its allocation history
    export POSENC_REF_BENCH_ALLOCATOR=steady
    run_args+=(-a rounds=1 -a "repeat=(1,3,0.2)" -a warmup_time=0)
fi

status=0
start=$SECONDS
if [[ $envs == 1 ]]; then
    printf '%s\n' "${hashes[@]}" > "$root/.asv/history/hashes.txt"
    skip=(--skip-existing-successful)
    [[ $rerun == 1 ]] && skip=()
    python -m asv run "HASHFILE:$root/.asv/history/hashes.txt" --launch-method spawn \
        "${skip[@]}" "${run_args[@]}" "${extra[@]}" || status=$?
else
    export POSENC_REF_BENCH_PRELOAD=1
    for hash in "${hashes[@]}"; do
        # (asv's --skip-existing-successful looks at the checkout's commit, not at
        # --set-commit-hash, so stored results are found here instead)
        if [[ $rerun == 0 ]] && compgen -G "$root/.asv/results/*/${hash:0:8}-existing-*.json" >/dev/null; then
            echo "== ${hash:0:8}: results already stored (--rerun to measure again)"
            continue
        fi
        src="$root/.asv/history/$hash"
        if [[ ! -d $src/posenc_ref ]]; then
            rm -rf "$src" && mkdir -p "$src"
            # the library and, where the commit has it, the conformance suite
            paths=()
            for p in posenc_ref posenc_ref_conformance conformance; do
                git -C "$root" cat-file -e "$hash:$p" 2>/dev/null && paths+=("$p")
            done
            git -C "$root" archive "$hash" "${paths[@]}" | tar -x -C "$src"
        fi
        imported="$(cd /tmp && PYTHONPATH="$src" python -c 'import posenc_ref; print(posenc_ref.__file__)')"
        if [[ $imported != "$src/"* ]]; then
            echo "asv_history.sh: $hash: posenc_ref imports from $imported, not $src" >&2
            exit 2
        fi
        t0=$SECONDS
        ASV_PYTHONPATH="$src" python -m asv run -E existing --set-commit-hash "$hash" \
            --launch-method forkserver "${run_args[@]}" "${extra[@]}" || status=$?
        echo "== ${hash:0:8}: $((SECONDS - t0)) s"
    done
fi
echo "== benchmarks: $((SECONDS - start)) s for ${#hashes[@]} commit(s)"

if [[ $publish == 1 ]]; then
    python "$root/scripts/asv_dashboard_check.py" --publish --prepare-only \
        --asv-dir "$root/asv_benchmarks" --results-dir "$root/.asv/results" --html-dir "$root/.asv/html" \
        || { echo "asv_history.sh: could not publish the dashboard" >&2; exit 1; }
    echo "== dashboard: $root/.asv/html (serve: python -m http.server -d .asv/html;"
    echo "   check: python scripts/asv_dashboard_check.py)"
fi
# asv exits 2 when a benchmark fails; the dashboard is published anyway.
exit "$status"
