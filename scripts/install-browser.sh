#!/usr/bin/env bash
# Install Debian Chromium for the Playwright browser test (never `playwright install`).
# Does nothing when /usr/bin/chromium exists; skips quietly when not root (the test then skips).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" != "0" ]; then
  echo "install-browser: /usr/bin/chromium missing and not root; the browser test will be skipped" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq chromium >/dev/null
echo "install-browser: $(/usr/bin/chromium --version 2>/dev/null || echo chromium installed)"
