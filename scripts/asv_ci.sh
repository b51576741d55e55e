#!/usr/bin/env bash
# CI gate for the asv benchmarks: import/check the suite, then run every benchmark
# once against the current Python environment, so a broken benchmark fails CI.
#
#   scripts/asv_ci.sh            # from anywhere; needs posenc-ref and asv importable
#
# What it does (no git history, no network, no virtualenv creation):
#   1. asv machine --yes          machine info for a non-interactive run
#   2. asv check -E existing      imports the suite and validates every benchmark
#   3. asv run -E existing --quick --dry-run --show-stderr
#                                 each benchmark runs once; results are not saved;
#                                 asv exits 2 if any benchmark fails
# Environment it sets for the benchmarks (see asv_benchmarks/README.md):
#   POSENC_REF_BENCH_QUICK=1      skip sizes above 2**21 elements, the N=131072 Dask
#                                 scale-out and the JAX conformance check (minutes)
#   POSENC_REF_BENCH_PRELOAD=1    import the backends once in asv's fork server
#   ASV_PYTHONPATH=<repo root>    asv >= 0.6.5 strips PYTHONPATH; this puts the
#                                 checkout first, so an uninstalled tree works too
# Budget: the quick run takes about 2-4 minutes on 2 cores.  Extra asv arguments
# are passed to `asv run` (e.g. -b Alibi to select benchmarks).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root/asv_benchmarks"

if ! python -c "import asv" 2>/dev/null; then
    echo "asv_ci.sh: asv is not installed; run: pip install '.[bench]'  (or: pip install asv)" >&2
    exit 2
fi

export ASV_PYTHONPATH="$root${ASV_PYTHONPATH:+:$ASV_PYTHONPATH}"
export POSENC_REF_BENCH_QUICK="${POSENC_REF_BENCH_QUICK:-1}"
export POSENC_REF_BENCH_PRELOAD="${POSENC_REF_BENCH_PRELOAD:-1}"
export MPLBACKEND=Agg

python -m asv machine --yes >/dev/null
echo "== asv check"
python -m asv check -E existing
echo "== asv quick run (existing environment, results not saved)"
start=$SECONDS
python -m asv run -E existing --quick --dry-run --show-stderr \
    --launch-method forkserver --durations 10 "$@"
echo "== asv quick run passed in $((SECONDS - start)) s"
