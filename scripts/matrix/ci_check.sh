#!/usr/bin/env bash
# CI's check of the published conformance matrix (docs/matrix/matrix.json) and zoo (docs/matrix/zoo.json).
#
#   scripts/matrix/ci_check.sh [--venvs DIR] [--validate-only] [--sample] [LIBRARY ...]
#
# 1. The committed matrix is well-formed, every failure is classified and every bug's
#    reproduction exists (scripts/matrix/compare_matrix.py validate).
# 2. For each library (default: the ones that fit CI's time, transformers torchtune
#    rotary_embedding_torch keras_hub mlx_lm onnxruntime): make or refresh its venv DIR/<library> with
#    scripts/matrix/setup_<library>.sh (idempotent), run `posenc-ref check` on every
#    matrix column of that library with this checkout on PYTHONPATH, and compare each
#    result's status with the committed one; any difference is an error naming the result.
# vLLM and ggml are not run here (minutes and gigabytes each), nor timm, x_transformers,
# megatron_core and llama_models (2-3 minutes each to install): build_matrix.sh runs them.
# 3. With transformers among the libraries: the zoo (one row per model family of transformers, each
#    run in its own code by a column transformers:FAMILY) is well-formed and explained, and its
#    family columns give the committed statuses.  --sample: only the fixed sample ZOO_SAMPLE below
#    (CI's time budget); build_zoo.sh rebuilds the whole zoo.
# Default DIR: .matrix-venvs in the checkout.  Exit status 0 when all agree, 1 otherwise.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENVS="$REPO/.matrix-venvs"
VALIDATE_ONLY=0
SAMPLE_ONLY=0
# the zoo's families CI re-checks: one per kind of family column (the default column is above): a
# RoPE copy, a layer-type RoPE (YaRN truncate bug), NanoChat's -theta, a Qwen2-VL vision tower,
# SAM's Fourier copy, SpeechT5's Shaw, a Conformer's relative attention, SEW-D's DeBERTa, LayoutLMv3's
# 2-D buckets, Falcon's bf16 ALiBi, HunYuan-VL's XD-RoPE, a Marian copy and a learned table
ZOO_SAMPLE="transformers:mistral transformers:gemma3 transformers:nanochat transformers:glm4v \
transformers:sam3_tracker transformers:speecht5 transformers:wav2vec2_conformer transformers:sew_d \
transformers:layoutlmv3 transformers:falcon transformers:hunyuan_vl transformers:pegasus"
LIBRARIES=()
while [ "$#" -gt 0 ]; do
    case "$1" in
        --venvs) VENVS="$2"; shift ;;
        --validate-only) VALIDATE_ONLY=1 ;;
        --sample) SAMPLE_ONLY=1 ;;
        -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
        -*) echo "$(basename "$0"): unknown option $1 (allowed: --venvs DIR, --validate-only, --sample)" >&2; exit 2 ;;
        *) LIBRARIES+=("$1") ;;
    esac
    shift
done
[ "${#LIBRARIES[@]}" -gt 0 ] || LIBRARIES=(transformers torchtune rotary_embedding_torch keras_hub mlx_lm onnxruntime)
MATRIX="$REPO/docs/matrix/matrix.json"
COMPARE="$REPO/scripts/matrix/compare_matrix.py"
started=$SECONDS

echo "== [0 s] the committed matrix: well-formed, every failure classified"
PYTHONPATH="$REPO" python3 "$COMPARE" validate "$MATRIX"
ZOO="$REPO/docs/matrix/zoo.json"
PYTHONPATH="$REPO" python3 "$COMPARE" zoo-validate "$ZOO"
[ "$VALIDATE_ONLY" = 1 ] && exit 0

# the matrix columns of LIBRARY (its spec and its variants), read from the committed matrix
columns_of() {
    PYTHONPATH="$REPO" python3 - "$MATRIX" "$1" <<'PY'
import json, sys
matrix, library = json.load(open(sys.argv[1], encoding="utf-8")), sys.argv[2]
print(" ".join(c["id"] for c in matrix["columns"] if c["id"].partition(":")[0] == library))
PY
}

reports=()
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
for library in "${LIBRARIES[@]}"; do
    setup="$REPO/scripts/matrix/setup_$library.sh"
    if [ ! -f "$setup" ]; then
        echo "$(basename "$0"): no setup script for $library ($setup)" >&2
        exit 2
    fi
    echo "== [$((SECONDS - started)) s] $library: venv $VENVS/$library"
    bash "$setup" "$VENVS/$library"
    for spec in $(columns_of "$library"); do
        echo "== [$((SECONDS - started)) s] posenc-ref check $spec"
        report="$tmp/${spec//:/-}.json"
        rc=0
        env PYTHONPATH="$REPO" KERAS_BACKEND=torch "$VENVS/$library/bin/python" -m posenc_ref_conformance \
            check "$spec" --timeout 300 --json "$report" >/dev/null || rc=$?
        if [ "$rc" != 0 ] && [ "$rc" != 1 ] && [ "$rc" != 3 ]; then  # 1 failures, 3 nothing tested
            echo "$(basename "$0"): posenc-ref check $spec exited $rc (a usage error)" >&2
            exit 1
        fi
        reports+=("$report")
    done
done
echo "== [$((SECONDS - started)) s] fresh statuses against the committed matrix"
PYTHONPATH="$REPO" python3 "$COMPARE" compare "$MATRIX" "${reports[@]}"
if [[ " ${LIBRARIES[*]} " == *" transformers "* ]]; then
    if [ "$SAMPLE_ONLY" = 1 ]; then
        zoo_specs="$ZOO_SAMPLE"
    else
        zoo_specs="$(PYTHONPATH="$REPO" python3 -c 'from posenc_ref_conformance.adapters.transformers import ADAPTERS; print(" ".join("transformers:" + v for v in ADAPTERS if v != "default"))')"
    fi
    zoo_reports=()
    for spec in $zoo_specs; do
        echo "== [$((SECONDS - started)) s] posenc-ref check $spec (zoo)"
        report="$tmp/zoo-${spec//:/-}.json"
        rc=0
        env PYTHONPATH="$REPO" "$VENVS/transformers/bin/python" -m posenc_ref_conformance \
            check "$spec" --timeout 300 --json "$report" >/dev/null || rc=$?
        if [ "$rc" != 0 ] && [ "$rc" != 1 ] && [ "$rc" != 3 ]; then
            echo "$(basename "$0"): posenc-ref check $spec exited $rc (a usage error)" >&2
            exit 1
        fi
        zoo_reports+=("$report")
    done
    echo "== [$((SECONDS - started)) s] fresh statuses against the committed zoo"
    PYTHONPATH="$REPO" python3 "$COMPARE" zoo-compare "$ZOO" "${zoo_reports[@]}"
fi
echo "== [$((SECONDS - started)) s] done"
