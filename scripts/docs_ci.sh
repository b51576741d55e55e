#!/usr/bin/env bash
# Build the documentation site the way CI does, and check it works offline.
#
#   bash scripts/docs_ci.sh            # install what is missing, build, doctest, offline check
#
# Runs in the current Python environment (CI calls it from .ci/run inside its venv).
# Needs: pip (PyPI), npm (to vendor MathJax from the npm registry once), and Debian's
# chromium for the offline check (installed with apt-get when missing and running as root);
# Playwright (the docs extra) drives that Chromium and never downloads a browser.
# Steps: 1. install  2. tests of the build helpers  3. the generated blocks of the pages
#        are up to date (scripts/docs_generate.py reruns every generator and every sample
#        run, and writes nothing)  4. sphinx html with -W  5. rendered text equals its source
#        (every paragraph's words as written, in order)  6. sphinx doctest with -W
#        7. golden-vector readers (JS always; C++ when g++ and nlohmann-json exist)
#        8. headless Chromium offline check (screenshots under reports/docs-offline/)
# Prints the seconds each step took.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
step() { printf '\n== %s (%ss)\n' "$1" "$(( $(date +%s) - start ))"; }

step "install"
echo "installing the docs, mlx and test extras (and torch 2.13.0 if missing) into $(python -c 'import sys; print(sys.prefix)')"
python -m pip install --quiet ".[docs,mlx,test]"  # test: pytest runs the docs helpers' tests below
# The generated blocks of the "check your implementation" page are a run of its torch
# example adapter, which the check of step 3 reruns.
# On this project's machines torch 2.13.0 (CPU) is a local wheel; elsewhere it downloads.
python -c "import torch" 2>/dev/null || python -m pip install --quiet "torch==2.13.0"
if ! command -v chromium >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
    else
        echo "chromium is missing: apt-get install -y chromium" >&2; exit 2
    fi
fi
if [ ! -f /usr/include/nlohmann/json.hpp ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    # header-only, used to compile the C++ golden-vector reader shown in the docs
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nlohmann-json3-dev >/dev/null 2>&1 \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nlohmann-json3-dev >/dev/null; }
fi
command -v npm >/dev/null 2>&1 || { echo "npm is missing (needed once to vendor MathJax)" >&2; exit 2; }

step "tests of the docs' build helpers and the tolerance figure"
python -m pytest -q -p no:cacheprovider tests/test_docs_tools.py tests/test_docs_tolerance_figure.py

step "generated blocks of the pages are up to date"
python scripts/docs_generate.py --check

step "sphinx html (warnings are errors)"
rm -rf docs/_build
python -m sphinx -W --keep-going -q -b html docs docs/_build/html

step "rendered text equals its source"
python scripts/docs_text_check.py --site docs/_build/html

step "sphinx doctest (pages and docstring examples)"
python -m sphinx -W --keep-going -q -b doctest docs docs/_build/doctest
tail -n 5 docs/_build/doctest/output.txt

step "golden-vector readers"
bash scripts/docs_golden_readers.sh

step "offline check in headless chromium"
python scripts/docs_offline_check.py --site docs/_build/html --out reports/docs-offline

step "done"
