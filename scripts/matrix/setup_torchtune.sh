#!/usr/bin/env bash
# Install torchtune beside the CPU torch in VENV (default /work/venvs/torchtune); idempotent.
#
#   scripts/matrix/setup_torchtune.sh [VENV]
#   posenc-ref check posenc_ref_conformance.adapters.torchtune
#
# torchtune 0.6.1 imports torchao.dtypes.nf4tensor at import time; torchao 0.11.0 provides it
# and installs as a pure-Python wheel (no CUDA build is pulled in).
. "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
VENV="${1:-/work/venvs/torchtune}"
matrix_venv "$VENV"
python -m pip install -q "torchtune==0.6.1" "torchao==0.11.0" "$MATRIX_TORCH"
matrix_finish "$VENV"
python -c "import torchtune.modules, importlib.metadata as m; print('torchtune', m.version('torchtune'), 'torchao', m.version('torchao'))"
