#!/usr/bin/env bash
# Install megatron-core beside the CPU torch in VENV (default /work/mvenvs/megatron_core); idempotent.
#
#   scripts/matrix/setup_megatron_core.sh [VENV]
#   posenc-ref check megatron_core
#
# megatron-core 0.16.1's own dependencies are torch, numpy and packaging only (its GPU stack,
# transformer-engine, apex, flash-attn, is in the dev/lts extras, which are not installed), so a
# plain install with torch pinned to the local CPU wheel pulls no CUDA wheel and needs no --no-deps.
# Without transformer-engine and flash-attn, megatron's RoPE runs its unfused PyTorch code.
. "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
VENV="${1:-/work/mvenvs/megatron_core}"
case "$VENV" in -*) echo "usage: $(basename "$0") [VENV]  (no options)" >&2 && exit 2 ;; esac
matrix_venv "$VENV"
python -m pip install -q "megatron-core==0.16.1" "$MATRIX_TORCH"
matrix_finish "$VENV"
python -c "import megatron.core.models.common.embeddings.rotary_pos_embedding, importlib.metadata as m; print('megatron-core', m.version('megatron-core'))"
