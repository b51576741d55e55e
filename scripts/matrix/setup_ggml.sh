#!/usr/bin/env bash
# Build ggml-python (ggml's C library, compiled by cmake from the sdist) and install
# posenc-ref into a venv, for the ggml adapter.
#
#   scripts/matrix/setup_ggml.sh [--dry-run] /work/venvs/ggml
#   VENV/bin/posenc-ref check posenc_ref_conformance.adapters.ggml --json /tmp/ggml.json
#
# The build needs cmake and a C/C++ compiler (cmake comes from PyPI through the
# sdist's build requirements; the compiler from the system).  It takes minutes.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

GGML="ggml-python==0.0.45"

matrix_parse_args "$@"
make_venv
step ggml "$MATRIX_PY" -m pip install --no-binary ggml-python "$GGML"
step posenc-ref "$MATRIX_PY" -m pip install -e "$MATRIX_REPO[test]"
step smoke "$MATRIX_PY" -c "import ggml; print('ggml-python', ggml.__version__)"
summary
