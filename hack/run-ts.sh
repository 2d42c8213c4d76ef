#!/usr/bin/env bash
# Runs a TypeScript script of hack/ on the project's Node 24. The sources import each other
# with `.js` suffixes (module nodenext), which Node's own type stripping cannot resolve, so
# the entry point is bundled with esbuild first (npm packages stay external). The bundle is
# written next to the entry point, so paths the script derives from import.meta.url stay
# right, and removed afterwards.
#   hack/run-ts.sh hack/gen-crds.ts [--check]
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
[[ $# -ge 1 ]] || {
  echo "usage: hack/run-ts.sh <entry.ts> [args...]" >&2
  exit 2
}
entry="$1"
shift
[[ -f "$entry" ]] || {
  echo "hack/run-ts.sh: no such file: $entry" >&2
  exit 2
}
for tool in node esbuild; do
  [[ -x "$ROOT/node_modules/.bin/$tool" ]] || {
    echo "hack/run-ts.sh: $ROOT/node_modules/.bin/$tool is missing: run 'make deps' (npm ci) first" >&2
    exit 1
  }
done

bundle="$(dirname "$entry")/.$(basename "${entry%.ts}").$$.run.mjs"
trap 'rm -f "$bundle"' EXIT
"$ROOT/node_modules/.bin/esbuild" "$entry" --bundle --platform=node --format=esm \
  --packages=external --log-level=warning --outfile="$bundle"
cd "$ROOT"
"$ROOT/node_modules/.bin/node" "$bundle" "$@"
