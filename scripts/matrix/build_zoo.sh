#!/usr/bin/env bash
# Rebuild the zoo: every model family of the installed transformers, each run in its own code.
#
#   scripts/matrix/build_zoo.sh [--dry-run] [--venvs DIR] [--jobs N] [--out DIR] [--only NAME ...]
#
# Makes or refreshes DIR/transformers (scripts/matrix/setup_transformers.sh, idempotent), lists the
# families of that transformers (the directories of transformers/models), checks the default
# transformers column and every variant of the adapter's ADAPTERS table (one per model family) in N
# processes (default 2; each checks its share of the columns in-process, as `posenc-ref check SPEC
# --json` would), each report into reports/zoo/, then writes OUT/zoo.json and OUT/zoo.html
# (python -m posenc_ref_conformance.zoo merge) with the wall time.  --only runs just the
# named variants (and the default column) into the same page, for a quick look.  Exit status 1 when
# a failure is unexplained (docs/matrix/classification.json).  --dry-run prints each check and the
# merge instead of running them.  Defaults: --venvs .matrix-venvs, --out docs/matrix.
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENVS="$REPO/.matrix-venvs"
VENVS_ARG=""
OUT="$REPO/docs/matrix"
JOBS=2
ONLY=()
DRY=0
while [ "$#" -gt 0 ]; do
    case "$1" in
        --dry-run) DRY=1 ;;
        --venvs) VENVS="$2"; VENVS_ARG=" --venvs $2"; shift ;;
        --jobs) JOBS="$2"; shift ;;
        --out) OUT="$2"; shift ;;
        --only) shift; while [ "$#" -gt 0 ] && [ "${1#--}" = "$1" ]; do ONLY+=("$1"); shift; done; continue ;;
        -h | --help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "usage: $(basename "$0") [--dry-run] [--venvs DIR] [--jobs N] [--out DIR] [--only NAME ...]" >&2; exit 2 ;;
    esac
    shift
done
start=$SECONDS
REPORTS="$REPO/reports/zoo"
PY="$VENVS/transformers/bin/python"
if [ "${#ONLY[@]}" -gt 0 ]; then
    specs="transformers $(printf 'transformers:%s ' "${ONLY[@]}")"
else  # the adapter's table; reading it needs no torch
    specs="transformers $(PYTHONPATH="$REPO" python3 -c 'from posenc_ref_conformance.adapters.transformers import ADAPTERS; print(" ".join("transformers:" + v for v in ADAPTERS if v != "default"))')"
fi
merge=(env PYTHONPATH="$REPO" "$PY" -m posenc_ref_conformance.zoo merge
    --installed "$REPORTS/installed.txt" --out "$OUT" --families "$REPO/docs/matrix/zoo_families.csv"
    --classification "$REPO/docs/matrix/classification.json" --command "bash scripts/matrix/build_zoo.sh$VENVS_ARG")
# the columns split round-robin over JOBS processes, each checking its share in one process (one
# import of torch and transformers): python -m posenc_ref_conformance.zoo run --out DIR SPEC ...
shares=()
for ((j = 0; j < JOBS; j++)); do
    shares+=("$(printf '%s\n' $specs | awk -v j="$j" -v n="$JOBS" '(NR - 1) % n == j' | tr '\n' ' ')")
done
if [ "$DRY" = 1 ]; then
    for share in "${shares[@]}"; do
        printf '+ env PYTHONPATH=%q %q -m posenc_ref_conformance.zoo run --out %q %s\n' "$REPO" "$PY" "$REPORTS" "$share"
    done
    printf '+'; printf ' %q' "${merge[@]}" --transformers-version VERSION --wall-s SECONDS
    printf ' --reports %s\n' "$REPORTS/transformers*.json"
    exit 0
fi
rm -rf "$REPORTS"
mkdir -p "$REPORTS"
bash "$REPO/scripts/matrix/setup_transformers.sh" "$VENVS/transformers" >"$REPORTS/setup.log" 2>&1 ||
    { cat "$REPORTS/setup.log" >&2; exit 1; }
"$PY" - >"$REPORTS/installed.txt" <<'PY'
import pathlib, transformers.models as m
skip = {"auto", "deprecated"}  # the Auto* registry and the removed models' folder: no family
folder = pathlib.Path(m.__file__).parent
print("\n".join(sorted(p.name for p in folder.iterdir() if (p / "__init__.py").exists() and p.name not in skip)))
PY
version="$("$PY" -c 'import transformers; print(transformers.__version__)')"
total=$(wc -w <<<"$specs")
echo "# zoo: $total columns, $JOBS at a time, transformers $version ($(wc -l <"$REPORTS/installed.txt") families installed)"
pids=()
for share in "${shares[@]}"; do  # each prints [n/its share] SPEC: VERDICT (seconds) as it goes
    env PYTHONPATH="$REPO" "$PY" -m posenc_ref_conformance.zoo run --out "$REPORTS" $share 2>>"$REPORTS/run.err" &
    pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
[ "$rc" = 0 ] || { echo "# a column did not load (see above; stderr in $REPORTS/run.err)" >&2; exit 1; }
wall=$((SECONDS - start))
"${merge[@]}" --transformers-version "$version" --wall-s "$wall" --reports "$REPORTS"/transformers*.json
echo "# zoo rebuilt in $wall s"
