#!/usr/bin/env bash
# Install mlx-lm (with MLX's CPU build on Linux) and posenc-ref into a venv, for the mlx_lm adapter.
#
#   scripts/matrix/setup_mlx_lm.sh [--dry-run] /work/mvenvs/mlx_lm
#   VENV/bin/posenc-ref check mlx_lm --json /tmp/mlx_lm.json
#
# mlx-lm pulls transformers (for its tokenizers), which needs no torch; none is installed.
# The adapter uses mlx_lm.models.rope_utils only.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

MLX_LM="mlx-lm==0.32.2"
if [ "$(uname -s)" = Linux ]; then
    MLX="mlx[cpu]==0.32.4"
else
    MLX="mlx==0.32.4"
fi

matrix_parse_args "$@"
make_venv
step mlx-lm "$MATRIX_PY" -m pip install -q "$MLX" "$MLX_LM"
step posenc-ref "$MATRIX_PY" -m pip install -q -e "$MATRIX_REPO[test]"
step smoke "$MATRIX_PY" -c "import importlib.metadata as m, mlx.core as mx, mlx_lm.models.rope_utils; print('mlx', m.version('mlx'), 'mlx-lm', m.version('mlx-lm'), mx.default_device())"
summary
