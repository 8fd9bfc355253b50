#!/usr/bin/env bash
# Try RAGScope's sign-in on this machine in a few minutes, with the OIDC provider mock the tests use.
#
#   bash scripts/try-sign-in.sh                 start the provider and the app (Ctrl-C stops both)
#   bash scripts/try-sign-in.sh --secrets-only  write the secrets file, print its path, start nothing
#
# It installs oidc-provider-mock if needed (scripts/install-oidc.sh, its own venv outside the repository),
# starts it on 127.0.0.1:$OIDC_PORT (default 9400), writes a secrets file with [auth] and three users into
# a fresh temporary directory (never into the repository), then runs the app on 127.0.0.1:$APP_PORT
# (default 8501) with --secrets.files pointing at it. On the provider's page, type one of these e-mails
# into the "sub" field and press Authorize:
#   admin@example.com (admin)   editor@example.com (editor)   viewer@example.com (viewer)
# Any other value is signed in but has no role (the app says so). Local trial only: the secrets are
# throw-away, the provider accepts anyone, and both bind loopback only.
set -euo pipefail
cd "$(dirname "$0")/.."
OIDC_PORT="${OIDC_PORT:-9400}"
APP_PORT="${APP_PORT:-8501}"
ONLY_SECRETS=0
case "${1:-}" in
  --secrets-only) ONLY_SECRETS=1 ;;
  -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  "") ;;
  *) echo "try-sign-in.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
esac

DIR="$(mktemp -d "${TMPDIR:-/tmp}/ragscope-signin.XXXXXX")"
chmod 700 "$DIR"
SECRETS="$DIR/secrets.toml"
PY="${PYTHON:-python}"
COOKIE="$("$PY" -c 'import secrets; print(secrets.token_hex(32))')"
CLIENT_SECRET="$("$PY" -c 'import secrets; print(secrets.token_hex(16))')"
cat > "$SECRETS" <<TOML
# Written by scripts/try-sign-in.sh for a local trial; throw-away values.
[auth]
redirect_uri = "http://127.0.0.1:${APP_PORT}/oauth2callback"
cookie_secret = "${COOKIE}"
client_id = "ragscope-try"
client_secret = "${CLIENT_SECRET}"
server_metadata_url = "http://127.0.0.1:${OIDC_PORT}/.well-known/openid-configuration"

[ragscope.roles]
default = "none"

[ragscope.roles.users]
"admin@example.com" = "admin"
"editor@example.com" = "editor"
"viewer@example.com" = "viewer"
TOML
chmod 600 "$SECRETS"
if [ "$ONLY_SECRETS" = 1 ]; then
  echo "$SECRETS"
  exit 0
fi

VENV="$(bash scripts/install-oidc.sh)" || { echo "try-sign-in.sh: could not install the OIDC provider" >&2; exit 1; }
"$VENV/bin/oidc-provider-mock" --host 127.0.0.1 --port "$OIDC_PORT" >"$DIR/oidc.log" 2>&1 &
OIDC_PID=$!
trap 'kill "$OIDC_PID" 2>/dev/null || true' EXIT INT TERM
for _ in $(seq 1 60); do
  if "$PY" -c "import urllib.request,sys; urllib.request.urlopen(sys.argv[1], timeout=2)" \
      "http://127.0.0.1:${OIDC_PORT}/.well-known/openid-configuration" 2>/dev/null; then
    break
  fi
  kill -0 "$OIDC_PID" 2>/dev/null || { echo "try-sign-in.sh: the provider stopped; see $DIR/oidc.log" >&2; exit 1; }
  sleep 1
done
echo "Provider: http://127.0.0.1:${OIDC_PORT}   secrets: $SECRETS"
echo "Open http://127.0.0.1:${APP_PORT}, press Sign in, type admin@example.com, editor@example.com or"
echo "viewer@example.com into the \"sub\" field and press Authorize."
"$PY" -m streamlit run app.py --server.address 127.0.0.1 --server.port "$APP_PORT" --secrets.files "$SECRETS"
