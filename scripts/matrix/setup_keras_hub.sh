#!/usr/bin/env bash
# Install keras-hub with Keras 3 on the torch backend in VENV (default /work/venvs/keras); idempotent.
#
#   scripts/matrix/setup_keras_hub.sh [VENV]
#   KERAS_BACKEND=torch posenc-ref check posenc_ref_conformance.adapters.keras_hub
#
# keras-hub imports tensorflow-text only for its tokenizers; the layers checked here need
# Keras and the torch backend only.  The adapter sets KERAS_BACKEND=torch itself when unset.
. "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
VENV="${1:-/work/venvs/keras}"
matrix_venv "$VENV"
python -m pip install -q "keras==3.15.1" "keras-hub==0.32.0" "$MATRIX_TORCH"
matrix_finish "$VENV"
KERAS_BACKEND=torch python -c "import keras, keras_hub; print('keras', keras.__version__, 'keras-hub', keras_hub.__version__, 'backend', keras.backend.backend())"
