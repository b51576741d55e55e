#!/usr/bin/env bash
# Install the ONNX Runtime CPU wheel, onnx (to build the graphs) and posenc-ref into a venv,
# for the onnxruntime adapter (com.microsoft RotaryEmbedding on the CPU execution provider).
#
#   scripts/matrix/setup_onnxruntime.sh [--dry-run] /work/mvenvs/onnxruntime
#   VENV/bin/posenc-ref check onnxruntime --json /tmp/onnxruntime.json
#
# Both are binary wheels from PyPI (no build, no torch).  onnx is pinned beside
# onnxruntime: the adapter builds each graph with onnx.helper.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

ONNXRUNTIME="onnxruntime==1.31.1"
ONNX="onnx==1.23.2"

matrix_parse_args "$@"
make_venv
step onnxruntime "$MATRIX_PY" -m pip install "$ONNXRUNTIME" "$ONNX"
step posenc-ref "$MATRIX_PY" -m pip install -e "$MATRIX_REPO[test]" "$ONNXRUNTIME" "$ONNX"
step smoke "$MATRIX_PY" -c "import onnx, onnxruntime as ort; print('onnxruntime', ort.__version__, 'onnx', onnx.__version__, ort.get_available_providers())"
summary
