#!/usr/bin/env bash
# Install everything the test suite needs (runtime + test requirements, Chromium for the browser
# test, the local llama.cpp server and its tiny model for the LLM tests, the Infinity embeddings server
# for the scale-out tests), then run the whole suite.
#
# Any failed install stops the run with a non-zero exit: a server that could not be installed never
# turns its tests into silent skips here. When CI is set (CI=true on CI runners), RAGSCOPE_REQUIRE
# defaults to "all", so a test that still finds its server missing FAILS instead of skipping
# (tests/conftest.py::require_or_skip). Locally, without CI, a missing server is a skip with its reason;
# set RAGSCOPE_REQUIRE=llm,browser,... (or all) to make it strict.
set -euo pipefail
cd "$(dirname "$0")/.."
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 ANONYMIZED_TELEMETRY=False STREAMLIT_BROWSER_GATHER_USAGE_STATS=false
case "${CI:-}" in
  ""|0|false|False|FALSE|no) ;;
  *) export RAGSCOPE_REQUIRE="${RAGSCOPE_REQUIRE:-all}" ;;
esac

install() {
  # install STEP...: run one install step; on failure say which and stop the run.
  if ! "$@"; then
    echo "test.sh: install step failed: $* (exit status non-zero); not running the tests" >&2
    exit 1
  fi
}

install python -m pip install --quiet --disable-pip-version-check -r requirements.txt -r requirements-test.txt
install bash scripts/install-minilm-int8.sh >/dev/null  # the int8 embedder's model (export + quantise, ~1 min once)
install bash scripts/install-browser.sh
install bash scripts/install-llm.sh
# Infinity lives in its own venv outside the repository (reused when present; RAGSCOPE_INFINITY_VENV).
install bash scripts/install-embeddings.sh >/dev/null
install bash scripts/install-oidc.sh >/dev/null  # OIDC provider for the sign-in browser test (own venv, reused)
# LightRAG (lightrag-hku 1.5.7) in its own venv (reused when present; RAGSCOPE_LIGHTRAG_VENV): the import
# fixtures' regeneration and the LightRAG-vs-RAGScope tests.
install bash scripts/install-lightrag.sh >/dev/null
echo "test.sh: installs done; RAGSCOPE_REQUIRE=${RAGSCOPE_REQUIRE:-<unset: missing servers skip>}" >&2
# Two workers (pytest-xdist) on the two cores CI has; RAGSCOPE_TEST_WORKERS=0 runs serially. --dist loadgroup
# with the groups of tests/conftest.py::xdist_groups: every test file stays on one worker, and the files
# sharing the llama.cpp server, PostgreSQL or Chromium share one, so no server starts twice.
WORKERS="${RAGSCOPE_TEST_WORKERS:-2}"
if [ "$WORKERS" = "0" ]; then
  python -m pytest "$@"
else
  python -m pytest -n "$WORKERS" --dist loadgroup "$@"
fi
