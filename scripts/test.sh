#!/usr/bin/env bash
# Install everything the test suite needs (runtime + test requirements), then run the whole suite.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False STREAMLIT_BROWSER_GATHER_USAGE_STATS=false
python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-test.txt
python -m pytest "$@"
