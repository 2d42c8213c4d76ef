#!/usr/bin/env bash
# The web view's browser tests drive Debian's chromium headless through playwright-core
# (test/support/browser.ts), never a browser downloaded by Playwright. Installed here when
# missing, as hack/ensure-postgres.sh installs postgresql. Prints the browser's path on
# stdout; without one (no apt, not root) prints nothing, says why on stderr, and the browser
# tests fail saying the same.
set -euo pipefail

find_chromium() {
  local candidate
  for candidate in "${LORENZ_CHROMIUM:-}" /usr/bin/chromium /usr/bin/chromium-browser; do
    if [[ -n "$candidate" && -x "$candidate" ]]; then
      echo "$candidate"
      return 0
    fi
  done
  return 1
}

if path="$(find_chromium)"; then
  echo "$path"
  exit 0
fi
if ! command -v apt-get >/dev/null || [[ "$(id -u)" != 0 ]]; then
  echo "ensure-chromium: no /usr/bin/chromium and it cannot be installed here (needs apt-get as root)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 ||
  { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; } ||
  echo "ensure-chromium: chromium could not be installed; the web view's browser tests will fail" >&2
if path="$(find_chromium)"; then echo "$path"; fi
