# Shared steps of scripts/matrix/setup_<lib>.sh (sourced, not run).
#
# matrix_venv VENV: create VENV from python3 if absent, activate it, install the local CPU
# torch 2.13.0 first (so nothing pulls a CUDA build), and start the clock.
# matrix_finish VENV: drop CUDA-only torchvision/torchaudio/torchcodec wheels that a
# dependency pulled in (they fail to import beside the CPU torch), install this checkout
# with its test extra, check that torch is still 2.13.0, print the time taken and the size.
set -euo pipefail

MATRIX_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MATRIX_TORCH="torch==2.13.0"

matrix_venv() {
    local venv="$1"
    MATRIX_START=$SECONDS
    if [ ! -x "$venv/bin/python" ]; then
        python3 -m venv "$venv"
    fi
    # shellcheck disable=SC1091
    . "$venv/bin/activate"
    python -m pip install -q "$MATRIX_TORCH"
}

matrix_finish() {
    local venv="$1"
    for broken in torchvision torchaudio torchcodec; do
        if python -m pip show -q "$broken" >/dev/null 2>&1 && ! python -c "import $broken" >/dev/null 2>&1; then
            echo "removing $broken (does not import beside the CPU torch)"
            python -m pip uninstall -q -y "$broken"
        fi
    done
    python -m pip install -q -e "$MATRIX_ROOT[test]" "$MATRIX_TORCH"
    python - <<'PY'
import torch
assert torch.__version__.startswith("2.13.0"), f"torch was replaced: {torch.__version__}"
PY
    echo "venv $venv ready in $((SECONDS - MATRIX_START)) s, $(du -sh "$venv" | cut -f1)"
}
