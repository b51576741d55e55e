#!/usr/bin/env bash
# Install lucidrains' rotary-embedding-torch beside the CPU torch in VENV
# (default /work/venvs/rotary_embedding_torch); idempotent.
#
#   scripts/matrix/setup_rotary_embedding_torch.sh [VENV]
#   posenc-ref check posenc_ref_conformance.adapters.rotary_embedding_torch
. "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
VENV="${1:-/work/venvs/rotary_embedding_torch}"
matrix_venv "$VENV"
python -m pip install -q "rotary-embedding-torch==0.9.1" "$MATRIX_TORCH"
matrix_finish "$VENV"
python -c "import rotary_embedding_torch, importlib.metadata as m; print('rotary-embedding-torch', m.version('rotary-embedding-torch'))"
