#!/usr/bin/env bash
# Install everything the test suite needs (runtime + test requirements, Chromium for the browser
# test, the local llama.cpp server and its tiny model for the LLM tests), then run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False STREAMLIT_BROWSER_GATHER_USAGE_STATS=false
python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-test.txt
for extra in scripts/install-browser.sh scripts/install-llm.sh; do
  if [ -f "$extra" ]; then bash "$extra"; fi
done
python -m pytest "$@"
