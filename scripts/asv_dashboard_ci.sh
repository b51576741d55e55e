#!/usr/bin/env bash
# CI job for the asv dashboard: prove it flags a real regression and nothing else.
#
#   bash scripts/asv_dashboard_ci.sh    # from anywhere; installs the bench and docs extras if missing
#
# Runs scripts/asv_dashboard_trial.py: in a clone of this repository, HEAD and 5 no-op
# commits (the Regressions tab must stay empty), then a commit that makes t5_bucket do its
# work twice and 2 no-op commits (the tab must list t5_bucket's ratio track, in every
# combination measured, at that commit, and nothing else).  Each time the dashboard is
# published by scripts/asv_history.sh and every tab (summary grid with values, Benchmark
# list, Regressions, one graph with commit labels) is checked offline in headless Chromium
# by scripts/asv_dashboard_check.py; screenshots go to .asv/trial/{quiet,planted}/.
# About 6 minutes on 2 quiet cores.  Needs git, asv (the bench extra) and Playwright (the
# docs extra), installed into the current environment when missing; Debian's chromium;
# npm once, for the dashboard's vendored scripts.  Prints the seconds it took.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
start=$SECONDS

if ! python -c "import asv, playwright" 2>/dev/null; then
    # like docs_ci.sh, it installs what it needs into the environment it runs in, and says where
    echo "== install the bench and docs extras (asv, Playwright) into $(python -c 'import sys; print(sys.prefix)')"
    python -m pip install --quiet ".[bench,docs]"
fi

echo "== the dashboard trial (scripts/asv_dashboard_trial.py)"
python scripts/asv_dashboard_trial.py --out "$root/.asv/trial"
echo "== [$((SECONDS - start)) s] dashboard trial done (screenshots: .asv/trial/)"
