#!/bin/sh
# lorenz: starts the CLI from its V8 startup snapshot (lorenz.snapshot.blob, built by
# `npm run build`) when there is one for this node, else from the plain bundle (lorenz.js)
# beside it. A blob loads only in the exact node version and machine that built it (any
# other node refuses it and exits 14), so lorenz.snapshot.key says which, and is checked
# first: a run Pod's agent image may carry another node, and then runs the plain bundle.
# The key's lines: `<node --version> <uname -m>`, the path of the node that built it, and
# the key's own path at the build. Where both are still the same files (the build's own
# dist/, never a copy in a Pod, where the paths may name other files) and node is not newer
# than the key (`-ef`, `-nt`: shell tests, no process), node is not asked its version
# (≈ 5 ms).
# Only the engine's commands are in the snapshot; the operator's start from the bundle, and
# so does --version, which has nothing to load.
# LORENZ_NODE: the node to run (default: node on PATH); LORENZ_SNAPSHOT=0: the plain bundle.
# --max-semi-space-size=1: RUNNER_NODE_FLAGS (src/api/run-pod.ts).
self=$0
if [ -L "$self" ]; then self=$(readlink -f "$self"); fi
dir=${self%/*}
node=${LORENZ_NODE:-node}
blob=$dir/lorenz.snapshot.blob
keyfile=$dir/lorenz.snapshot.key

snapshot_fits() {
  [ "${LORENZ_SNAPSHOT-1}" != 0 ] && [ -r "$blob" ] && [ -r "$keyfile" ] || return 1
  { read -r key && read -r builder && read -r built; } <"$keyfile" || return 1
  case $node in
    /*) path=$node ;;
    *) path=$(command -v "$node") || return 1 ;;
  esac
  if [ "$keyfile" -ef "$built" ] && [ "$path" -ef "$builder" ] && [ ! "$path" -nt "$keyfile" ]; then
    return 0
  fi
  [ "$key" = "$("$node" --version 2>/dev/null) $(uname -m)" ]
}

case ${1-} in
  run | runner | workflow | prompt | hook)
    if snapshot_fits; then
      exec "$node" --max-semi-space-size=1 --snapshot-blob "$blob" -- "$@"
    fi
    ;;
esac
exec "$node" --max-semi-space-size=1 "$dir/lorenz.js" "$@"
