#!/usr/bin/env bash
# Install lucidrains' x-transformers beside the CPU torch in VENV (default /work/mvenvs/x_transformers);
# idempotent.
#
#   scripts/matrix/setup_x_transformers.sh [VENV]
#   posenc-ref check x_transformers
#
# x-transformers is pure Python; its dependencies are pinned too so that a rebuilt venv computes
# the same thing (torch stays the local CPU 2.13.0: it is named on every install line).
. "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
VENV="${1:-/work/mvenvs/x_transformers}"
matrix_venv "$VENV"
python -m pip install -q "x-transformers==2.31.10" "einops==0.8.2" "einx==0.4.3" \
    "torch-einops-utils==0.2.0" "loguru==0.7.3" "$MATRIX_TORCH"
matrix_finish "$VENV"
python -c "import x_transformers, importlib.metadata as m; print('x-transformers', m.version('x-transformers'))"
