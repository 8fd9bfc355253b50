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
PY="${PYTHON:-python}"
VENV="${RAGSCOPE_OIDC_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/ragscope/oidc-provider-mock-0.3.4}"
LOG="$VENV.install.log"
MARKER="$VENV/.ragscope-ready"
PACKAGE="oidc-provider-mock==0.3.4"

ready() {
  [ -f "$MARKER" ] && [ -x "$VENV/bin/oidc-provider-mock" ] &&
    "$VENV/bin/python" -c "import oidc_provider_mock" >/dev/null 2>&1
}

if ready; then
  echo "$VENV"
  exit 0
fi
if [ "${1:-}" = "--check" ]; then
  echo "the OIDC provider environment at $VENV is not ready (run bash scripts/install-oidc.sh)" >&2
  exit 1
fi
echo "install-oidc: installing $PACKAGE in $VENV" >&2
mkdir -p "$(dirname "$VENV")"
rm -rf "$VENV"
: > "$LOG"
fail() {
  echo "install-oidc: FAILED ($1); last lines of $LOG:" >&2
  tail -n 15 "$LOG" >&2
  exit 1
}
"$PY" -m venv "$VENV" >>"$LOG" 2>&1 || fail "python -m venv"
"$VENV/bin/python" -m pip install --disable-pip-version-check --progress-bar off "$PACKAGE" >>"$LOG" 2>&1 \
  || fail "pip install $PACKAGE"
"$VENV/bin/python" -c "import oidc_provider_mock" >>"$LOG" 2>&1 || fail "importing oidc_provider_mock"
touch "$MARKER"
echo "install-oidc: ready in $VENV" >&2
echo "$VENV"
