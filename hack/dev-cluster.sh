#!/usr/bin/env bash
# A local Kubernetes cluster without Docker: etcd + kube-apiserver (+ a lean controller
# manager) and, when built in, the process-backed node, held by one background daemon.
#
#   eval "$(hack/dev-cluster.sh up)"   start (or find) the cluster; prints export lines:
#                                      PATH with the matching kubectl first, then KUBECONFIG
#   hack/dev-cluster.sh up --node=real  the node is a real kubelet + containerd + runc
#                                      (hack/real-node.sh; root, Docker for the images);
#                                      --node=process (the default) is the process node
#   hack/dev-cluster.sh status         "up <server>" (exit 0) or "down" (exit 1)
#   hack/dev-cluster.sh down           stop it and remove its state
#
# State: ${LORENZ_DEV_CLUSTER_DIR:-$HOME/.cache/lorenz/dev-cluster}. Progress goes to stderr,
# so only the export lines reach `eval`.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STATE="${LORENZ_DEV_CLUSTER_DIR:-$HOME/.cache/lorenz/dev-cluster}"
PID_FILE="$STATE/daemon.pid"
READY_FILE="$STATE/ready.env"
LOG_FILE="$STATE/daemon.log"
BUNDLE="$ROOT/dist/dev-cluster.mjs"
# The project's Node 24 (the system node may be older), and its esbuild.
export PATH="$ROOT/node_modules/.bin:$PATH"

say() { echo "[dev-cluster] $*" >&2; }
# shellcheck source=hack/lib/local-cluster.sh
source "$ROOT/hack/lib/local-cluster.sh" # write_image_map, ensure_built

daemon_pid() {
  local pid
  [[ -f "$PID_FILE" ]] || return 1
  pid="$(cat "$PID_FILE")"
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 1
  # Guard against a recycled pid: it must still be our bundle.
  tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q 'dev-cluster.mjs serve' || return 1
  echo "$pid"
}

print_exports() {
  # shellcheck disable=SC2034 # ready.env also carries SERVER and PROCESS_NODE
  local SERVER KUBECONFIG_PATH BIN_DIR PROCESS_NODE
  # shellcheck disable=SC1090
  source "$READY_FILE"
  # shellcheck disable=SC2016 # $PATH is for the caller's shell to expand
  printf 'export PATH=%q:"$PATH"\n' "$BIN_DIR"
  printf 'export KUBECONFIG=%q\n' "$KUBECONFIG_PATH"
}

# The bundle entry is generated: it links the process node in only when its module exists,
# so the control plane works on its own while the node is being written.
build_bundle() {
  local entry
  entry="import { main } from './hack/cluster/main.ts';"
  if [[ -f "$ROOT/hack/process-node/index.ts" ]] &&
    grep -Eq 'export (async )?function startProcessNode|export \{[^}]*startProcessNode' "$ROOT/hack/process-node/index.ts"; then
    entry+=" import { startProcessNode } from './hack/process-node/index.ts';"
    entry+=" await main(process.argv.slice(2), startProcessNode);"
  else
    entry+=" await main(process.argv.slice(2));"
  fi
  mkdir -p "$ROOT/dist"
  (cd "$ROOT" && echo "$entry" | esbuild --bundle --platform=node --format=esm --target=node22 \
    --sourcefile=dev-cluster-entry.ts --loader=ts --log-level=warning --outfile="$BUNDLE.$$.tmp" \
    "--banner:js=import { createRequire as __lorenzCreateRequire } from 'node:module'; const require = __lorenzCreateRequire(import.meta.url);")
  # Renamed into place: a daemon starting from another checkout's `up` never reads half a file.
  mv -f "$BUNDLE.$$.tmp" "$BUNDLE"
}

wait_until_ready() {
  local pid="$1" waited=0
  until [[ -f "$READY_FILE" ]]; do
    if ! kill -0 "$pid" 2>/dev/null; then
      say "the cluster daemon exited before it was ready; $LOG_FILE ends with:"
      tail -n 30 "$LOG_FILE" >&2 || true
      return 1
    fi
    sleep 0.2
    waited=$((waited + 1))
    if ((waited % 50 == 0)); then say "still starting ($((waited / 5))s)…"; fi
    if ((waited > 3000)); then
      say "not ready after 10 minutes; see $LOG_FILE"
      return 1
    fi
  done
}

# --node=real: a kubelet, containerd and runc (hack/real-node.sh) instead of the process node.
# Asked for and impossible here, it stops and says why; the default stays the process node.
real_node_possible() {
  [[ "$(id -u)" == 0 ]] || {
    say "--node=real needs root (containerd and kubelet); use --node=process"
    return 1
  }
  [[ -d /sys/fs/cgroup/memory || -f /sys/fs/cgroup/cgroup.controllers ]] || {
    say "--node=real needs cgroups (none mounted under /sys/fs/cgroup); use --node=process"
    return 1
  }
}

# <pid>: the cluster daemon, which owns the node's lock (hack/lib/node-lock.sh) while it runs.
start_real_node() {
  say "starting the real node (hack/real-node.sh; log: $STATE/real-node/logs)…"
  LORENZ_NODE_OWNER_PID="$1" "$ROOT/hack/real-node.sh" up "$STATE/real-node" "$STATE/cluster/kubeconfig" \
    "$STATE/cluster/certs/ca.crt" "$STATE/cluster/certs/ca.key" >"$STATE/real-node.env"
}

up() {
  local pid started=$SECONDS node="${1:-process}"
  case "$node" in
    process) ;;
    real) real_node_possible || exit 1 ;;
    *)
      say "unknown node kind '$node' (--node=real or --node=process)"
      exit 2
      ;;
  esac
  if pid="$(daemon_pid)"; then
    [[ -f "$READY_FILE" ]] || wait_until_ready "$pid"
    say "already up ($(grep '^SERVER=' "$READY_FILE" | cut -d"'" -f2))"
    print_exports
    return
  fi
  mkdir -p "$STATE"
  rm -f "$READY_FILE" "$PID_FILE"
  rm -rf "$STATE/cluster"
  say "resolving binaries (hack/tools.sh; a cold build takes a long while)…"
  "$ROOT/hack/tools.sh" --print-env >/dev/null
  say "bundling the cluster daemon…"
  build_bundle
  # Unless told otherwise, the process node maps the operator's image to this checkout's
  # bundles, so `lorenz controller` started against this cluster runs IssueRuns end to end.
  if [[ "$node" == real ]]; then
    export LORENZ_DEV_NODE=real
  elif [[ -z "${LORENZ_IMAGE_MAP:-}" ]]; then
    ensure_built >&2
    write_image_map "$STATE/image-map.json"
    export LORENZ_IMAGE_MAP="$STATE/image-map.json"
  fi
  say "starting the cluster daemon (log: $LOG_FILE)…"
  # setsid: the daemon outlives this shell and the terminal it ran in.
  LORENZ_TOOLS_SCRIPT="$ROOT/hack/tools.sh" LORENZ_REPO_ROOT="$ROOT" \
    setsid node "$BUNDLE" serve "$STATE" >"$LOG_FILE" 2>&1 </dev/null &
  pid=$!
  echo "$pid" >"$PID_FILE"
  wait_until_ready "$pid"
  if [[ "$node" == real ]]; then start_real_node "$pid"; fi
  say "up in $((SECONDS - started))s: $(grep '^SERVER=' "$READY_FILE" | cut -d"'" -f2)"
  print_exports
}

down() {
  local pid waited=0
  if [[ -d "$STATE/real-node" ]]; then "$ROOT/hack/real-node.sh" down "$STATE/real-node" || true; fi
  if pid="$(daemon_pid)"; then
    kill -TERM "$pid"
    while kill -0 "$pid" 2>/dev/null && ((waited < 150)); do
      sleep 0.2
      waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
  fi
  # A daemon killed hard takes its children along (parent-death signal); this catches any
  # that were started without it.
  if [[ -f "$STATE/cluster/pids" ]]; then
    local name child
    while read -r name child; do
      if kill -0 "$child" 2>/dev/null && grep -q "$name" "/proc/$child/cmdline" 2>/dev/null; then
        kill -KILL "$child" 2>/dev/null || true
      fi
    done <"$STATE/cluster/pids"
  fi
  rm -rf "$STATE"
  say "down"
}

status() {
  if daemon_pid >/dev/null && [[ -f "$READY_FILE" ]]; then
    echo "up $(grep '^SERVER=' "$READY_FILE" | cut -d"'" -f2)"
  elif daemon_pid >/dev/null; then
    echo "starting"
  else
    echo "down"
    return 1
  fi
}

case "${1:-}" in
  up)
    case "${2:-}" in
      "") up process ;;
      --node=*) up "${2#--node=}" ;;
      *)
        say "usage: hack/dev-cluster.sh up [--node=real|process]"
        exit 2
        ;;
    esac
    ;;
  down) down ;;
  status) status ;;
  *)
    sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
