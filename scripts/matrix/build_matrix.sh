#!/usr/bin/env bash
# Measure every built-in library adapter in its own venv and build the conformance matrix.
#
#   scripts/matrix/build_matrix.sh [--dry-run] [--venvs DIR] [--out DIR]
#
# For each library, DIR/<library> is the venv its setup script makes
# (scripts/matrix/setup_<library>.sh DIR/<library>); a library without one is skipped
# with the command that would make it.  posenc_ref and mlx run in the current
# environment.  Every run uses this checkout (PYTHONPATH), writes its JSON report to
# reports/matrix/, and `posenc-ref matrix` merges them with the classification of
# failures (docs/matrix/classification.json) into OUT/matrix.json and OUT/matrix.html;
# it exits 1 when a failure is unexplained.  Defaults: --venvs .matrix-venvs, --out docs/matrix.
# Each check gets --timeout 300 per call (torchtune builds a 2**24-row cache for the
# large-position cases); the wall time of each check is printed.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENVS="$REPO/.matrix-venvs"
VENVS_ARG=""
OUT="$REPO/docs/matrix"
DRY=0
while [ "$#" -gt 0 ]; do
    case "$1" in
        --dry-run) DRY=1 ;;
        --venvs) VENVS="$2"; VENVS_ARG=" --venvs $2"; shift ;;
        --out) OUT="$2"; shift ;;
        *) echo "usage: $(basename "$0") [--dry-run] [--venvs DIR] [--out DIR]" >&2; exit 2 ;;
    esac
    shift
done
REPORTS="$REPO/reports/matrix"

# spec -> the library whose venv runs it ("here": the current environment)
SPECS=(
    "posenc_ref here"
    "mlx here"
    "transformers transformers"
)
# the transformers adapter's variants (one per model family's own copy of the code) are the zoo's
# columns, not the matrix's: scripts/matrix/build_zoo.sh runs them
SPECS+=(
    "torchtune torchtune"
    "rotary_embedding_torch rotary_embedding_torch"
    "keras_hub keras_hub"
    "vllm vllm"
    "vllm:native vllm"
    "vllm:deepseek vllm"
    "ggml ggml"
    "mlx_lm mlx_lm"
    "timm timm"
    "timm:mixed timm"
    "x_transformers x_transformers"
    "onnxruntime onnxruntime"
    "onnxruntime:onnx onnxruntime"
    "megatron_core megatron_core"
    "llama_models llama_models"
    "llama_models:llama4 llama_models"
)

run() {
    printf '+'; printf ' %q' "$@"; printf '\n'
    [ "$DRY" = 1 ] || "$@"
}

# check SPEC PYTHON REPORT: the suite's exit 1 (failures) and 3 (nothing tested) are results here
check() {
    local spec="$1" python="$2" report="$3" rc=0 start=$SECONDS
    printf '+ %q -m posenc_ref_conformance check %q --timeout 300 --json %q\n' "$python" "$spec" "$report"
    [ "$DRY" = 1 ] && return 0
    env PYTHONPATH="$REPO" KERAS_BACKEND=torch "$python" -m posenc_ref_conformance check "$spec" \
        --timeout 300 --json "$report" >/dev/null || rc=$?
    echo "# $spec: $((SECONDS - start)) s"
    if [ "$rc" != 0 ] && [ "$rc" != 1 ] && [ "$rc" != 3 ]; then
        echo "# $spec: check exited $rc (usage error); see: $python -m posenc_ref_conformance check $spec" >&2
        return 1
    fi
}

[ "$DRY" = 1 ] || mkdir -p "$REPORTS"
reports=()
for entry in "${SPECS[@]}"; do
    read -r spec library <<<"$entry"
    if [ "$library" = here ]; then
        python="$(command -v python)"
    else
        python="$VENVS/$library/bin/python"
        if [ ! -x "$python" ] && [ "$DRY" = 0 ]; then
            echo "# skip $spec: no venv (make it with scripts/matrix/setup_$library.sh $VENVS/$library)"
            continue
        fi
    fi
    report="$REPORTS/${spec//:/-}.json"
    check "$spec" "$python" "$report" && reports+=("$report")
done
run env PYTHONPATH="$REPO" python -m posenc_ref_conformance matrix --reports "${reports[@]}" \
    --classification "$REPO/docs/matrix/classification.json" --out "$OUT" \
    --command "bash scripts/matrix/build_matrix.sh$VENVS_ARG"
