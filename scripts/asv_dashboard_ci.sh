#!/usr/bin/env bash
# CI job for the asv dashboard: benchmark the last commits of main, publish, check.
#
#   bash scripts/asv_dashboard_ci.sh            # from anywhere; installs the bench and docs extras if missing
#
# 1. scripts/asv_history.sh -n "${POSENC_REF_DASHBOARD_COMMITS:-3}": the dashboard's short
#    benchmark selection for each of the last commits of main, in the current environment
#    (about 25 s per commit on 2 cores; commits already stored are skipped), then
#    `asv publish`, local copies of the CDN scripts, and no benchmark or backend without data;
# 2. scripts/asv_dashboard_check.py: the dashboard renders offline in headless Chromium, and
#    a benchmark's graph shows at least two commits with labelled axes (screenshots in
#    .asv/dashboard/).
# Needs: git history of main (a clone, not a single-commit checkout), asv (the bench
# extra) and Playwright (the docs extra), installed into the current environment when missing, Debian's chromium, and npm once for the vendored
# scripts.  Prints the seconds each step took.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
commits="${POSENC_REF_DASHBOARD_COMMITS:-3}"
start=$SECONDS

if ! python -c "import asv, playwright" 2>/dev/null; then
    # like docs_ci.sh, it installs what it needs into the environment it runs in, and says where
    echo "== install the bench and docs extras (asv, Playwright) into $(python -c 'import sys; print(sys.prefix)')"
    python -m pip install --quiet ".[bench,docs]"
fi
if (( $(git rev-list --first-parent --count main) < 2 )); then
    echo "asv_dashboard_ci.sh: main has fewer than 2 commits here (a shallow clone?)" >&2
    exit 2
fi

echo "== benchmark the last $commits commits of main and publish"
bash scripts/asv_history.sh -n "$commits"
echo "== [$((SECONDS - start)) s] check the dashboard offline"
python scripts/asv_dashboard_check.py --min-commits 2
echo "== [$((SECONDS - start)) s] dashboard done: .asv/html (screenshots: .asv/dashboard/)"
