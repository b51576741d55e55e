#!/usr/bin/env bash
# Create (or refresh) a virtual environment for the Hugging Face transformers adapter.
#
#   scripts/matrix/setup_transformers.sh VENV_PATH [TRANSFORMERS_SPEC]   (default transformers==5.24.0)
#
# Installs the CPU torch 2.13.0 wheel, transformers 5.24.0 (the published matrix's; or TRANSFORMERS_SPEC,
# e.g. "transformers" for the newest), and this checkout editable with its test extra.  Idempotent: an
# existing venv is reused and pip only installs what is missing.  CUDA builds of torchvision /
# torchaudio, if anything pulled them in, are removed (the adapter needs neither).  Prints the
# versions, the time taken and the venv's size at the end.
set -euo pipefail

venv=${1:?usage: setup_transformers.sh VENV_PATH [TRANSFORMERS_SPEC]}
spec=${2:-transformers==5.24.0}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
start=$(date +%s)

if [ ! -x "$venv/bin/python" ]; then
    python3 -m venv "$venv"
fi
py="$venv/bin/python"
"$py" -m pip install --quiet --upgrade pip
"$py" -m pip install --quiet "torch==2.13.0" "$spec"
"$py" -m pip install --quiet "torch==2.13.0" -e "$repo[test]"
for extra in torchvision torchaudio; do
    if "$py" -m pip show --quiet "$extra" >/dev/null 2>&1; then
        "$py" -m pip uninstall --yes --quiet "$extra"
    fi
done

"$py" - <<'PY'
import torch, transformers
print(f"torch {torch.__version__}  transformers {transformers.__version__}")
PY
echo "setup took $(( $(date +%s) - start )) s; venv size $(du -sh "$venv" | cut -f1)"
