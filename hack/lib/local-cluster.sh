# shellcheck shell=bash disable=SC2034 # CONTROLLER_CMD etc. are read by the sourcing script
# Shared by hack/dev.sh and hack/demo.sh (sourced, not run): the local control plane with
# the process-backed node (hack/dev-cluster.sh) and the controller running on this machine.
# Expects ROOT set to the repository root.

OPERATOR_IMAGE="ghcr.io/lorenz-dev/lorenz:0.1.0"
SAMPLE_AGENT_IMAGE="node:24.21.0-bookworm-slim"
NODE24="$ROOT/node_modules/.bin/node"

# Builds node_modules and dist/ when they are missing (a fresh clone).
ensure_built() {
  if [[ ! -x "$NODE24" ]]; then
    echo "installing dependencies (npm ci)…" >&2
    (cd "$ROOT" && npm ci --no-audit --no-fund)
  fi
  if [[ ! -f "$ROOT/dist/lorenz.js" || ! -f "$ROOT/dist/scripted-agent.mjs" ]]; then
    echo "building dist/ (npm run build)…" >&2
    (cd "$ROOT" && npm run build)
  fi
}

# The process node runs "images" from the host filesystem. This map makes the operator
# image's files the freshly built bundles, and gives the samples' Node image the project's
# Node 24 (the host's may be older).
write_image_map() {
  local file="$1" node_binary
  node_binary="$(readlink -f "$NODE24")"
  mkdir -p "$(dirname "$file")"
  cat >"$file" <<JSON
{
  "$OPERATOR_IMAGE": {
    "/lorenz/lorenz.js": "$ROOT/dist/lorenz.js",
    "/lorenz/lorenz": "$ROOT/dist/lorenz",
    "/lorenz/lorenz.snapshot.blob": "$ROOT/dist/lorenz.snapshot.blob",
    "/lorenz/lorenz.snapshot.key": "$ROOT/dist/lorenz.snapshot.key",
    "/lorenz/scripted-agent.mjs": "$ROOT/dist/scripted-agent.mjs"
  },
  "$SAMPLE_AGENT_IMAGE": {
    "/usr/bin/node": "$node_binary"
  }
}
JSON
}

# Starts the local cluster unless it is up, and exports PATH and KUBECONFIG for it.
# Sets CLUSTER_STARTED_HERE=1 when this call started it.
local_cluster_up() {
  local state="${LORENZ_DEV_CLUSTER_DIR:-$HOME/.cache/lorenz/dev-cluster}" exports
  CLUSTER_STARTED_HERE=0
  if ! "$ROOT/hack/dev-cluster.sh" status >/dev/null 2>&1; then
    CLUSTER_STARTED_HERE=1
  fi
  write_image_map "$state-image-map.json"
  exports="$(LORENZ_IMAGE_MAP="$state-image-map.json" "$ROOT/hack/dev-cluster.sh" up)"
  eval "$exports"
  export PATH KUBECONFIG
  # CRDs may have changed since the cluster came up: apply them again (idempotent).
  kubectl apply --server-side --force-conflicts --field-manager=lorenz-dev -f "$ROOT/crds" >/dev/null
  kubectl wait --for=condition=Established --timeout=60s -f "$ROOT/crds" >/dev/null
}

# Sets CONTROLLER_CMD: the controller command line for this machine (all namespaces,
# loopback-only endpoints).
controller_command() {
  CONTROLLER_CMD=(
    "$NODE24" "$ROOT/dist/lorenz.js" controller
    --kubeconfig "$KUBECONFIG"
    --metrics-bind-address "${LORENZ_METRICS_ADDR:-127.0.0.1:18080}"
    --health-probe-bind-address "${LORENZ_HEALTH_ADDR:-127.0.0.1:18081}"
    # The agent-tools gateway, where the process node's run Pods reach it.
    --tools-bind-address "${LORENZ_TOOLS_ADDR:-127.0.0.1:18090}"
    --tools-url "http://${LORENZ_TOOLS_ADDR:-127.0.0.1:18090}/mcp"
  )
  export LORENZ_OPERATOR_IMAGE="$OPERATOR_IMAGE"
}

# stop_within <pid> <grace seconds> <name> <log>: SIGTERM, then SIGKILL if <pid> is still
# there after the grace, saying so (and where its log is): the caller always gets on.
stop_within() {
  local pid="$1" grace="$2" name="$3" log="$4" ticks=0
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  echo "stopping $name (pid $pid): SIGTERM, up to $grace s…" >&2
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null && ((ticks < grace * 5)); do
    sleep 0.2
    ticks=$((ticks + 1))
  done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$name (pid $pid) did not exit within $grace s of SIGTERM: sent SIGKILL (its log: $log)" >&2
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
}
