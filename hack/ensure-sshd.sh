#!/usr/bin/env bash
# The SSH worker tests start a real OpenSSH server on loopback (test/support/fakes/sshd.ts).
# Debian's openssh-server is all it takes; installed here when missing, as .ci/run installs
# Debian's shellcheck package. Without it (no apt, not root) the tests that need sshd fail
# and say why.
set -euo pipefail
if [[ -x /usr/sbin/sshd ]]; then exit 0; fi
if ! command -v apt-get >/dev/null || [[ "$(id -u)" != 0 ]]; then
  echo "ensure-sshd: /usr/sbin/sshd is missing and cannot be installed here (needs apt-get as root)" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get install -y -qq openssh-server >/dev/null 2>&1 ||
  { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq openssh-server >/dev/null 2>&1; } ||
  echo "ensure-sshd: openssh-server could not be installed; the SSH worker tests will fail" >&2
