#!/usr/bin/env bash
# Install timm beside the CPU torch 2.13.0 in VENV, for the timm adapter; idempotent.
#
#   scripts/matrix/setup_timm.sh [--dry-run] /work/mvenvs/timm
#   VENV/bin/posenc-ref check timm --json /tmp/timm.json      # also: timm:mixed
#
# timm is installed with --no-deps: it requires torchvision, and PyPI's torchvision does not
# import beside the local CPU torch 2.13.0 ('operator torchvision::nms does not exist'); the
# torchvision that does (torch 2.14.1 + torchvision 0.29.1, a 5.5 GB CUDA build) is not needed.
# Without torchvision `import timm` and `import timm.layers` fail (timm/layers/create_norm.py
# and norm_act.py import torchvision.ops.misc at import time), but the positional code,
# timm/layers/pos_embed_sincos.py, imports only torch (and timm's own _fx, grid, trace_utils):
# the adapter loads that file, unmodified, without running the package __init__ files, and
# says so in its describe().  So neither torchvision nor timm's other requirements (pyyaml,
# huggingface_hub, safetensors: used by timm.models, which the adapter never imports) are
# installed.
source "$(dirname "${BASH_SOURCE[0]}")/_common.sh"

TIMM="timm==1.0.31"

matrix_parse_args "$@"
make_venv
step torch "$MATRIX_PY" -m pip install -q "$MATRIX_TORCH"
step timm "$MATRIX_PY" -m pip install -q --no-deps "$TIMM"
step posenc-ref "$MATRIX_PY" -m pip install -q -e "$MATRIX_REPO[test]" "$MATRIX_TORCH"
# the smoke check: the sincos module loads, and torch is still the local CPU 2.13.0
SMOKE="import importlib.metadata as m, torch; from posenc_ref_conformance.adapters.timm import load_pos_embed_sincos"
SMOKE="$SMOKE; how = load_pos_embed_sincos()[1]; assert torch.__version__.startswith('2.13.0'), torch.__version__"
SMOKE="$SMOKE; print('timm', m.version('timm'), 'torch', torch.__version__, 'via', how)"
step smoke "$MATRIX_PY" -c "$SMOKE"
summary
