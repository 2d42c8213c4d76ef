#!/usr/bin/env bash
# `make dev`: the local control plane + process-backed node + CRDs, and the controller in
# the foreground with readable logs. Ctrl-C stops the controller and tears down the cluster
# (a cluster that was already up before `make dev` is left running).
#
# Then, in another terminal:
#   eval "$(hack/dev-cluster.sh up)"          # same cluster: PATH and KUBECONFIG
#   kubectl apply -k config/samples && kubectl get issueruns -w
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/local-cluster.sh
source "$ROOT/hack/lib/local-cluster.sh"

if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi

ensure_built
CLUSTER_STARTED_HERE=0
teardown() {
  local status=$?
  trap - EXIT INT TERM
  if [[ "$CLUSTER_STARTED_HERE" == 1 ]]; then
    echo "[dev] stopping the local cluster…" >&2
    "$ROOT/hack/dev-cluster.sh" down >&2 || true
  else
    echo "[dev] the local cluster was up before make dev: left running (hack/dev-cluster.sh down stops it)" >&2
  fi
  exit "$status"
}
trap teardown EXIT
trap 'exit 130' INT TERM

echo "[dev] starting the local cluster (the first start builds kube-apiserver and etcd: minutes)…" >&2
local_cluster_up
controller_command
echo "[dev] cluster up; in another terminal:" >&2
echo "[dev]   export PATH=$(dirname "$(command -v kubectl)"):\$PATH KUBECONFIG=$KUBECONFIG" >&2
echo "[dev]   kubectl apply -k config/samples && kubectl get issueruns -w" >&2
echo "[dev] controller logs follow; Ctrl-C stops everything." >&2
# The formatter ignores SIGINT and ends at EOF, so the controller's last lines still show.
"${CONTROLLER_CMD[@]}" 2>&1 | "$NODE24" "$ROOT/hack/log-format.mjs"
