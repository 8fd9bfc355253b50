#!/usr/bin/env bash
# Install everything the test suite needs (runtime + test requirements, Chromium for the browser
# test, the local llama.cpp server and its tiny model for the LLM tests, the Infinity embeddings server
# for the scale-out tests), then run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False STREAMLIT_BROWSER_GATHER_USAGE_STATS=false
python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-test.txt
for extra in scripts/install-browser.sh scripts/install-llm.sh; do
  if [ -f "$extra" ]; then bash "$extra"; fi
done
# Infinity lives in its own venv outside the repository (reused when present). If it cannot be built,
# the suite still runs: the embedding-server tests skip and say why (install-embeddings.sh --check).
bash scripts/install-embeddings.sh >/dev/null \
  || echo "test.sh: the Infinity embeddings server could not be installed; its tests will be skipped" >&2
python -m pytest "$@"
