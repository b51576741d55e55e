#!/usr/bin/env bash
# Benchmark the last N commits of main in asv-managed virtualenvs, then publish
# the dashboard to .asv/html (static files; view with `asv preview` or
# scripts/asv_dashboard_check.py).
#
#   scripts/asv_history.sh [-n N] [--existing] [--quick] [-b REGEX] [--no-publish] [-- ASV_ARGS...]
#
#   -n N          commits to benchmark, newest first along main's first parents (default 5)
#   --existing    also record the current Python environment as HEAD (asv run -E existing
#                 --set-commit-hash HEAD): the working tree's code, attributed to HEAD
#   --quick       one sample per benchmark and POSENC_REF_BENCH_QUICK=1 (small sizes);
#                 quick results are not saved by asv, so this only checks that it runs
#   -b REGEX      only benchmarks matching REGEX (asv --bench)
#   --no-publish  skip `asv publish`
#
# How it stays offline-friendly:
#   * each commit is built with `pip wheel --no-deps --no-build-isolation` (asv.conf.json),
#     so no build backend is fetched; setuptools and wheel come from the env's matrix;
#   * dependencies are installed by pip into each env from whatever index pip is
#     configured with.  With no network at all, point pip at a wheelhouse:
#         PIP_NO_INDEX=1 PIP_FIND_LINKS=/path/to/wheels scripts/asv_history.sh
#     (asv passes the environment to pip; `pip download -d /path/to/wheels
#     'posenc-ref[test]' dask setuptools wheel` on a connected machine fills it);
#   * benchmarks run with --launch-method spawn (a fresh interpreter per benchmark,
#     nothing shared with asv's own process); no benchmark touches the network.
# After publishing, the dashboard's CDN scripts are replaced by local copies
# (scripts/asv_dashboard_check.py --vendor-only; npm fetches them once), so the
# published site renders with no network.
# Commits that predate a function skip its benchmarks (NotImplementedError in setup),
# so the whole history can be run with today's benchmark suite.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
count=5
existing=0
quick=0
publish=1
bench=()
extra=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        -n) count="$2"; shift 2 ;;
        --existing) existing=1; shift ;;
        --quick) quick=1; shift ;;
        -b|--bench) bench=(--bench "$2"); shift 2 ;;
        --no-publish) publish=0; shift ;;
        --) shift; extra=("$@"); break ;;
        -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
        *) echo "asv_history.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
    esac
done

cd "$root/asv_benchmarks"
mkdir -p "$root/.asv"
python -m asv machine --yes >/dev/null

hashes="$root/.asv/history_hashes.txt"
git -C "$root" rev-list --first-parent --max-count="$count" main > "$hashes"
echo "== benchmarking $(wc -l < "$hashes") commit(s) of main in asv-managed virtualenvs"

run_args=(--launch-method spawn --show-stderr "${bench[@]}")
if [[ $quick == 1 ]]; then
    export POSENC_REF_BENCH_QUICK=1
    run_args+=(--quick)
else
    run_args+=(--skip-existing-successful)
fi
# asv exits 2 when a benchmark fails; keep going so the dashboard still gets published.
status=0
python -m asv run "HASHFILE:$hashes" "${run_args[@]}" "${extra[@]}" || status=$?

if [[ $existing == 1 ]]; then
    head="$(git -C "$root" rev-parse HEAD)"
    echo "== recording the current environment as $head"
    ASV_PYTHONPATH="$root" python -m asv run -E existing --set-commit-hash "$head" \
        "${run_args[@]}" "${extra[@]}" || status=$?
fi

if [[ $publish == 1 ]]; then
    python -m asv publish
    # asv's index.html loads jQuery/Flot/Bootstrap from CDNs; swap in local copies
    # (fetched once with npm into .asv/vendor-cache) so the dashboard works offline.
    python "$root/scripts/asv_dashboard_check.py" --vendor-only \
        || echo "asv_history.sh: could not vendor the dashboard's scripts; it needs a network to render" >&2
    echo "== dashboard: $root/.asv/html/index.html (serve it: cd asv_benchmarks && asv preview;"
    echo "   check it renders offline: python scripts/asv_dashboard_check.py)"
fi
exit "$status"
