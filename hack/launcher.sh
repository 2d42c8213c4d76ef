#!/bin/sh
# lorenz: starts the CLI from its V8 startup snapshot (lorenz.snapshot.blob, built by
# `npm run build`) when there is one for this node, else from the plain bundle (lorenz.js)
# beside it. A blob loads only in the exact node version and machine that built it (any
# other node refuses it and exits 14), so lorenz.snapshot.key names both and is checked
# first: a run Pod's agent image may carry another node, and then runs the plain bundle.
# Only the engine's commands are in the snapshot; the operator's start from the bundle.
# LORENZ_NODE: the node to run (default: node on PATH); LORENZ_SNAPSHOT=0: the plain bundle.
# --max-semi-space-size=1: RUNNER_NODE_FLAGS (src/api/run-pod.ts).
self=$0
if [ -L "$self" ]; then self=$(readlink -f "$self"); fi
dir=${self%/*}
node=${LORENZ_NODE:-node}
case ${1-} in
  run | runner | workflow | prompt | hook | --version)
    if [ "${LORENZ_SNAPSHOT-1}" != 0 ] && [ -r "$dir/lorenz.snapshot.blob" ] &&
      [ -r "$dir/lorenz.snapshot.key" ] && read -r key <"$dir/lorenz.snapshot.key" &&
      [ "$key" = "$("$node" --version 2>/dev/null) $(uname -m)" ]; then
      exec "$node" --max-semi-space-size=1 --snapshot-blob "$dir/lorenz.snapshot.blob" -- "$@"
    fi
    ;;
esac
exec "$node" --max-semi-space-size=1 "$dir/lorenz.js" "$@"
