#!/usr/bin/env bash
# Install Meta's llama-models (the reference Llama 3 / Llama 4 code) beside the CPU torch in VENV
# (default /work/mvenvs/llama_models); idempotent.
#
#   scripts/matrix/setup_llama_models.sh [VENV]
#   posenc-ref check llama_models            # llama_models.llama3.model
#   posenc-ref check llama_models:llama4     # llama_models.llama4.model
#
# Only what importing the RoPE functions needs is installed, each pinned:
# - llama-models 0.3.0 with --no-deps: its own requirements (tiktoken, rich, httpx, Pillow,
#   huggingface-hub, ...) serve the tokenizer and the CLI, not llama3/model.py or llama4/model.py;
# - fairscale 0.4.13 with --no-deps: both model files import fairscale.nn.model_parallel at import
#   time; its requirement "torch >= 1.8" is met by the CPU torch 2.13.0 here, and --no-deps keeps
#   pip from ever resolving it to another torch build (an sdist, pure Python: BUILD_CUDA_EXTENSIONS
#   stays unset);
# - pydantic 2.14.3: llama_models.llama4.args is a pydantic model.
. "$(dirname "${BASH_SOURCE[0]}")/_common.sh"
VENV="${1:-/work/mvenvs/llama_models}"
matrix_venv "$VENV"
python -m pip install -q --no-deps "llama-models==0.3.0" "fairscale==0.4.13"
python -m pip install -q "pydantic==2.14.3" "$MATRIX_TORCH"
matrix_finish "$VENV"
python - <<'PY'
import importlib.metadata as m

import llama_models.llama3.model  # noqa: F401  (fairscale and torch import beside each other)
import llama_models.llama4.model  # noqa: F401

print("llama-models", m.version("llama-models"), "fairscale", m.version("fairscale"), "pydantic", m.version("pydantic"))
PY
