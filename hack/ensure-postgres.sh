#!/usr/bin/env bash
# The PostgreSQL archive tests start a real server on loopback (test/support/postgres.ts):
# initdb into a temp dir, never the distribution's own cluster. Debian's postgresql package is
# all it takes; installed here when missing, as hack/ensure-sshd.sh installs openssh-server.
# Prints the server's bin directory (initdb, postgres) on stdout; without one (no apt, not
# root) prints nothing, says why on stderr, and the PostgreSQL tests fail saying the same.
set -euo pipefail

bin_dir() {
  local found
  # The newest major version when several are installed.
  found="$(find /usr/lib/postgresql -mindepth 3 -maxdepth 3 -path '*/bin/postgres' 2>/dev/null | sort -V | tail -n 1)"
  [[ -n "$found" ]] && dirname "$found"
}

if dir="$(bin_dir)"; then
  echo "$dir"
  exit 0
fi
if ! command -v apt-get >/dev/null || [[ "$(id -u)" != 0 ]]; then
  echo "ensure-postgres: no /usr/lib/postgresql/*/bin/postgres and it cannot be installed here (needs apt-get as root)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
# Debian's package creates and starts a cluster "main"; the tests never use it.
apt-get install -y -qq postgresql >/dev/null 2>&1 ||
  { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq postgresql >/dev/null 2>&1; } ||
  echo "ensure-postgres: postgresql could not be installed; the PostgreSQL archive tests will fail" >&2
if dir="$(bin_dir)"; then echo "$dir"; fi
