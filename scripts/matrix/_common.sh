# Shared helpers of the matrix setup scripts (sourced, not run).
#
# usage of a setup script: setup_X.sh [--dry-run] VENV
#   --dry-run  print each step (the exact commands) and run none
#   VENV       the virtual environment to create or update (idempotent)
#
# Every step is printed as "+ COMMAND" before it runs; with --dry-run that is all.
# At the end the script prints each step's wall time and the venv's size.

set -euo pipefail

MATRIX_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
MATRIX_DRY_RUN=0
MATRIX_VENV=""
MATRIX_TIMES=()

matrix_parse_args() {
    while [ "$#" -gt 0 ]; do
        case "$1" in
            --dry-run) MATRIX_DRY_RUN=1 ;;
            -h | --help)
                echo "usage: $(basename "$0") [--dry-run] VENV"
                exit 0
                ;;
            -*)
                echo "$(basename "$0"): unknown option $1 (allowed: --dry-run)" >&2
                exit 2
                ;;
            *)
                if [ -n "$MATRIX_VENV" ]; then
                    echo "$(basename "$0"): one VENV only; got $MATRIX_VENV and $1" >&2
                    exit 2
                fi
                MATRIX_VENV="$1"
                ;;
        esac
        shift
    done
    if [ -z "$MATRIX_VENV" ]; then
        echo "usage: $(basename "$0") [--dry-run] VENV" >&2
        exit 2
    fi
    MATRIX_PY="$MATRIX_VENV/bin/python"
}

# step NAME COMMAND...: print the command, run it unless --dry-run, record its wall time.
step() {
    local name="$1"
    shift
    printf '+'
    printf ' %q' "$@"
    printf '\n'
    if [ "$MATRIX_DRY_RUN" = 1 ]; then
        return 0
    fi
    local start=$SECONDS
    "$@"
    MATRIX_TIMES+=("$name: $((SECONDS - start)) s")
}

# make_venv: create VENV from the base interpreter unless it already has a python.
make_venv() {
    if [ -x "$MATRIX_PY" ] && [ "$MATRIX_DRY_RUN" = 0 ]; then
        echo "# $MATRIX_VENV exists: reused"
    else
        step venv python3 -m venv "$MATRIX_VENV"
    fi
}

# uninstall_if_broken MODULE DIST: pip uninstall DIST when it is installed and importing MODULE fails.
uninstall_if_broken() {
    local module="$1" dist="$2"
    if [ "$MATRIX_DRY_RUN" = 1 ]; then
        echo "+ $MATRIX_PY -m pip uninstall -y $dist  # only if 'import $module' fails"
        return 0
    fi
    if "$MATRIX_PY" -m pip show -q "$dist" >/dev/null 2>&1 &&
        ! "$MATRIX_PY" -c "import $module" >/dev/null 2>&1; then
        step "uninstall-$dist" "$MATRIX_PY" -m pip uninstall -y "$dist"
    fi
}

summary() {
    if [ "$MATRIX_DRY_RUN" = 1 ]; then
        return 0
    fi
    echo "# step times"
    printf '#   %s\n' "${MATRIX_TIMES[@]}"
    echo "# venv size: $(du -sh "$MATRIX_VENV" | cut -f1)"
}

# --- the simpler pair used by setup_torchtune.sh, setup_rotary_embedding_torch.sh, setup_keras_hub.sh ---
# matrix_venv VENV: create VENV if absent, activate it, install the local CPU torch 2.13.0 first.
# matrix_finish VENV: drop CUDA-only torchvision/torchaudio/torchcodec that fail to import, install
# this checkout with its test extra, check torch is still 2.13.0, print time and size.
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
