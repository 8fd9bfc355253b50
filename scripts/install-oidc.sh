#!/usr/bin/env bash
# Install a real OpenID Connect provider for the sign-in browser test (tests/test_browser_auth.py):
# oidc-provider-mock==0.3.4 from PyPI, in its own virtual environment OUTSIDE the repository (it pins
# its own Flask/Authlib versions), reused when present:
#   $RAGSCOPE_OIDC_VENV (default: ${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/oidc-provider-mock-0.3.4)
# The provider binds 127.0.0.1 only; its authorize page takes a subject (the test types an e-mail).
#
#   bash scripts/install-oidc.sh           build if needed; print the venv path (exit 1 when it cannot)
#   bash scripts/install-oidc.sh --check   exit 0 (printing the path) if ready, else 1 with the reason
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv-lib.sh
PY="${PYTHON:-python}"
venv_init install-oidc "${RAGSCOPE_OIDC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/oidc-provider-mock-0.3.4}" install-oidc.sh
PACKAGE="oidc-provider-mock==0.3.4"

ready() {
  [ -f "$MARKER" ] && [ -x "$VENV/bin/oidc-provider-mock" ] &&
    "$VENV/bin/python" -c "import oidc_provider_mock" >/dev/null 2>&1
}

venv_start "$VENV" "OIDC provider" "installing $PACKAGE in $VENV" "$@"
venv_step "pip install $PACKAGE" "${VENV_PIP[@]}" "$PACKAGE"
venv_step "importing oidc_provider_mock" "$VENV/bin/python" -c "import oidc_provider_mock"
venv_done "$VENV"
