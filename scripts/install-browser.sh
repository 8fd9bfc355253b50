#!/usr/bin/env bash
# Install Debian Chromium for the Playwright browser test (never `playwright install`).
# Does nothing when /usr/bin/chromium exists; fails (exit 1) when it is missing and we are not root.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "install-browser: FAILED: /usr/bin/chromium is missing and installing it needs root (apt-get install chromium)" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
echo "install-browser: $(/usr/bin/chromium --version 2>/dev/null || echo chromium installed)"
