#!/usr/bin/env bash
# `make demo`: from a fresh clone to a finished IssueRun in one command.
#
#   hack/demo.sh [--local | --kind]
#
# Brings up what it needs: a kind cluster with the operator image and the Helm chart when a
# Docker engine answers (`docker info`), else the local control plane with the
# process-backed node and the controller running on this machine. Then applies
# config/samples, waits for issuerun/demo-1 to finish, and prints `kubectl get issueruns`
# and the run's hook Events. The cluster is left up for a closer look.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
NAMESPACE="${DEMO_NAMESPACE:-default}"
TIMEOUT="${DEMO_TIMEOUT:-300s}"
KIND_CLUSTER="${KIND_CLUSTER:-lorenz-demo}"
# shellcheck source=lib/samples.sh
source "$ROOT/hack/lib/samples.sh"
# shellcheck source=lib/local-cluster.sh
source "$ROOT/hack/lib/local-cluster.sh"

say() { echo "[demo] $*" >&2; }

mode=""
case "${1:-}" in
  --local) mode=local ;;
  --kind) mode=kind ;;
  "") ;;
  -h | --help)
    sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "usage: hack/demo.sh [--local | --kind]" >&2
    exit 2
    ;;
esac
if [[ -z "$mode" ]]; then
  if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
    mode=kind
  else
    mode=local
  fi
fi

CONTROLLER_PID=""
CONTROLLER_LOG="${LORENZ_DEV_CLUSTER_DIR:-$HOME/.cache/lorenz/dev-cluster}-controller.log"
stop_controller() {
  if [[ -n "$CONTROLLER_PID" ]] && kill -0 "$CONTROLLER_PID" 2>/dev/null; then
    kill -TERM "$CONTROLLER_PID" 2>/dev/null || true
    wait "$CONTROLLER_PID" 2>/dev/null || true
  fi
}

# The local path: dev cluster + the controller as a background process of this script.
# The controller stops when the demo ends; what it wrote stays in the cluster.
demo_local() {
  ensure_built
  say "starting the local control plane and process node (the first start builds kube-apiserver and etcd: minutes)…"
  local_cluster_up
  controller_command
  "${CONTROLLER_CMD[@]}" >"$CONTROLLER_LOG" 2>&1 &
  CONTROLLER_PID=$!
  trap stop_controller EXIT
  say "controller started (pid $CONTROLLER_PID, logs: $CONTROLLER_LOG)"
  run_samples
  show_git_sample "$NAMESPACE" 180
  echo
  echo "The local cluster is still up. To look further:"
  echo "  eval \"\$(hack/dev-cluster.sh up)\"      # PATH and KUBECONFIG for kubectl"
  echo "  kubectl describe issuerun $SAMPLE_RUN       # conditions, per-hook results, Events"
  echo "  kubectl get pods -l lorenz.dev/issuerun=$SAMPLE_RUN"
  echo "  make dev                                # the controller in the foreground, logs readable"
  echo "  hack/dev-cluster.sh down                # stop the cluster"
}

# The kind path: the same steps as hack/e2e-kind.sh, keeping the cluster.
demo_kind() {
  say "Docker answers: using kind cluster '$KIND_CLUSTER'"
  KEEP_CLUSTER=1 KIND_CLUSTER="$KIND_CLUSTER" SKIP_SAMPLES=1 "$ROOT/hack/e2e-kind.sh"
  local kubectl_binary
  kubectl_binary="$(command -v kubectl || "$ROOT/hack/tools.sh" path kubectl)"
  # samples.sh calls plain `kubectl`: point it at the kind cluster.
  kubectl() { "$kubectl_binary" --context "kind-$KIND_CLUSTER" "$@"; }
  run_samples
  echo
  echo "The kind cluster '$KIND_CLUSTER' is still up (kubectl context kind-$KIND_CLUSTER). To look further:"
  echo "  kubectl describe issuerun $SAMPLE_RUN"
  echo "  kubectl -n lorenz-system logs deploy/lorenz"
  echo "  kind delete cluster --name $KIND_CLUSTER     # remove it"
}

run_samples() {
  say "applying config/samples in namespace $NAMESPACE"
  apply_samples "$NAMESPACE"
  if ! wait_for_sample "$NAMESPACE" "$TIMEOUT"; then
    show_sample "$NAMESPACE"
    say "issuerun/$SAMPLE_RUN did not finish in $TIMEOUT"
    if [[ -n "$CONTROLLER_PID" ]]; then
      say "the controller's log ends with:"
      tail -n 20 "$CONTROLLER_LOG" >&2 || true
    fi
    return 1
  fi
  show_sample "$NAMESPACE"
  check_sample "$NAMESPACE"
  echo
  echo "issuerun/$SAMPLE_RUN Succeeded, with an Event for each of the four hooks."
  show_board "$NAMESPACE" 180
}

"demo_$mode"
