#!/usr/bin/env bash
# `make e2e-real-node`: the samples end to end on the local control plane with a real node
# (hack/dev-cluster.sh up --node=real: kubelet, containerd, runc, CNI; the images built here
# by hack/images.sh). The controller runs on this machine (as in `make dev`), with the built
# operator image for its run Pods' init container; issuerun/demo-1 must Succeed with a
# HookSucceeded Event for each of the four hooks (hack/lib/samples.sh, as in make e2e-kind).
#
# The chart's install, the controller in a Pod, is `make e2e-local` (hack/e2e-local.sh).
# Needs root.
# Environment: KEEP_CLUSTER=1 keeps the cluster; E2E_TIMEOUT (default 300s).
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LORENZ_DEV_CLUSTER_DIR="${LORENZ_E2E_DIR:-$HOME/.cache/lorenz/e2e-real-node}"
NAMESPACE="default"
# shellcheck source=lib/samples.sh
source "$ROOT/hack/lib/samples.sh"
# shellcheck source=lib/local-cluster.sh
source "$ROOT/hack/lib/local-cluster.sh" # ensure_built, controller_command

say() { echo "[e2e-real-node] $*" >&2; }
PROGRESS_PREFIX="[e2e-real-node]"
controller_pid=""

finish() {
  local status=$?
  trap - EXIT
  if [[ -n "$controller_pid" ]]; then
    # Stopped before the cluster goes: a controller whose apiserver is gone mid-shutdown was
    # seen to stay up past SIGTERM, hence the KILL after 10 s.
    kill "$controller_pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$controller_pid" 2>/dev/null || break; sleep 0.2; done
    kill -KILL "$controller_pid" 2>/dev/null || true
  fi
  if ((status != 0)); then
    say "failed; the controller's log ends with:"
    tail -n 30 "$LORENZ_DEV_CLUSTER_DIR/controller.log" >&2 2>/dev/null || true
  fi
  if [[ "${KEEP_CLUSTER:-0}" != 1 ]]; then "$ROOT/hack/dev-cluster.sh" down >&2 || true; fi
  exit "$status"
}
trap finish EXIT

ensure_built >&2
eval "$("$ROOT/hack/dev-cluster.sh" up --node=real)"
# OPERATOR_IMAGE, AGENT_IMAGE, SAMPLE_AGENT_IMAGE, as hack/real-node.sh printed them.
# shellcheck disable=SC1091
source "$LORENZ_DEV_CLUSTER_DIR/real-node.env"
say "controller on this machine, run Pods from $OPERATOR_IMAGE (log: $LORENZ_DEV_CLUSTER_DIR/controller.log)"
# Ports of their own, beside a `make dev` controller (controller_command's defaults).
export LORENZ_METRICS_ADDR="${LORENZ_METRICS_ADDR:-127.0.0.1:28080}"
export LORENZ_HEALTH_ADDR="${LORENZ_HEALTH_ADDR:-127.0.0.1:28081}"
export LORENZ_TOOLS_ADDR="${LORENZ_TOOLS_ADDR:-127.0.0.1:28090}"
controller_command # CONTROLLER_CMD, and LORENZ_OPERATOR_IMAGE from OPERATOR_IMAGE
"${CONTROLLER_CMD[@]}" >"$LORENZ_DEV_CLUSTER_DIR/controller.log" 2>&1 &
controller_pid=$!
sleep 2
kill -0 "$controller_pid" 2>/dev/null || {
  controller_pid=""
  say "the controller exited at once"
  exit 1
}

apply_samples "$NAMESPACE"
wait_for_sample "$NAMESPACE" "${E2E_TIMEOUT:-300s}"
show_sample "$NAMESPACE"
check_sample "$NAMESPACE"
say "PASS: issuerun/$SAMPLE_RUN Succeeded on the real node with an Event for each of the four hooks"
