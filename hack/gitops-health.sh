#!/usr/bin/env bash
# Prints the path of hack/gitops-health (the kstatus and Argo CD Lua judge the health tests
# use), building it first when its sources changed. Cached outside the project by a digest
# of its sources, like the other tools (hack/tools.sh), so a warm run does not rebuild.
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOURCE="$HACK_DIR/gitops-health"
CACHE_DIR="${LORENZ_TOOLS_CACHE:-$HOME/.cache/lorenz/tools}"
digest="$(cat "$SOURCE/go.mod" "$SOURCE/go.sum" "$SOURCE/main.go" | sha256sum | cut -c1-16)"
out="$CACHE_DIR/gitops-health-$digest"
if [[ ! -x "$out" ]]; then
  command -v go >/dev/null 2>&1 || { echo "gitops-health: 'go' is not on PATH" >&2; exit 1; }
  mkdir -p "$CACHE_DIR"
  echo "[tools] building gitops-health (kstatus, gopher-lua)…" >&2
  (cd "$SOURCE" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath -o "$out.partial" .)
  mv "$out.partial" "$out"
fi
echo "$out"
