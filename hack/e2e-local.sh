#!/usr/bin/env bash
# `make e2e-local`: the chart installed on the local control plane with the real node, as on
# a real cluster: the operator image built here (hack/images.sh, imported into the node's
# containerd, never pulled), `helm upgrade --install --wait`, the samples applied, and
# issuerun/demo-1 must Succeed with a HookSucceeded Event for each of the four hooks
# (hack/lib/samples.sh, as in make e2e-kind). The controller runs in a Pod and reaches the
# apiserver through the `kubernetes` Service: the cluster is started with
# LORENZ_APISERVER_ADVERTISE (the apiserver listens beyond loopback and advertises the node's
# address; the Deployment and ReplicaSet loops run) and LORENZ_KUBE_PROXY=1 (kube-proxy, and
# a route to the Service range in Pods). Needs root; one at a time per machine (kube-proxy's
# rules are the machine's).
# Environment: KEEP_CLUSTER=1 keeps the cluster; E2E_TIMEOUT (default 300s).
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
export LORENZ_DEV_CLUSTER_DIR="${LORENZ_E2E_DIR:-$HOME/.cache/lorenz/e2e-local}"
# A node of its own, beside a dev cluster's (hack/real-node.sh's defaults) and the tests'.
export LORENZ_NODE_NAME="${LORENZ_NODE_NAME:-lorenz-e2e-local}"
export LORENZ_NODE_IP="${LORENZ_NODE_IP:-10.89.0.6}"
export LORENZ_KUBELET_PORT="${LORENZ_KUBELET_PORT:-10255}"
export LORENZ_BRIDGE="${LORENZ_BRIDGE:-lorenz5}"
export LORENZ_POD_CIDR="${LORENZ_POD_CIDR:-10.88.5.0/24}"
export LORENZ_APISERVER_ADVERTISE="$LORENZ_NODE_IP"
export LORENZ_KUBE_PROXY=1
NAMESPACE="default"
RELEASE="lorenz"
RELEASE_NAMESPACE="lorenz-system"
# shellcheck source=lib/samples.sh
source "$ROOT/hack/lib/samples.sh"

say() { echo "[e2e-local] $*" >&2; }
PROGRESS_PREFIX="[e2e-local]"

finish() {
  local status=$?
  trap - EXIT
  if ((status != 0)); then
    say "failed; the controller Pod's log ends with:"
    kubectl -n "$RELEASE_NAMESPACE" logs deploy/"$RELEASE" --tail 30 >&2 2>/dev/null || true
    kubectl -n "$RELEASE_NAMESPACE" get pods -o wide >&2 2>/dev/null || true
  fi
  if [[ "${KEEP_CLUSTER:-0}" != 1 ]]; then "$ROOT/hack/dev-cluster.sh" down >&2 || true; fi
  exit "$status"
}
trap finish EXIT

eval "$("$ROOT/hack/dev-cluster.sh" up --node=real)"
# OPERATOR_IMAGE, AGENT_IMAGE, SAMPLE_AGENT_IMAGE, as hack/real-node.sh printed them.
# shellcheck disable=SC1091
source "$LORENZ_DEV_CLUSTER_DIR/real-node.env"
HELM="$("$ROOT/hack/tools.sh" path helm)"

say "installing the chart with $OPERATOR_IMAGE (helm upgrade --install --wait)"
"$HELM" upgrade --install "$RELEASE" "$ROOT/charts/lorenz" \
  --namespace "$RELEASE_NAMESPACE" --create-namespace \
  --set "image.repository=${OPERATOR_IMAGE%:*}" --set "image.tag=${OPERATOR_IMAGE##*:}" \
  --set image.pullPolicy=Never \
  --wait --timeout 180s
kubectl wait --for=condition=Established --timeout=60s crd/workflows.lorenz.dev crd/issueruns.lorenz.dev

apply_samples "$NAMESPACE"
wait_for_sample "$NAMESPACE" "${E2E_TIMEOUT:-300s}"
show_sample "$NAMESPACE"
check_sample "$NAMESPACE"
say "PASS: the chart's controller in a Pod on the real node; issuerun/$SAMPLE_RUN Succeeded with an Event for each of the four hooks"
