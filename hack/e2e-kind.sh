#!/usr/bin/env bash
# `make e2e-kind`: the end-to-end test on a real (kind) cluster with the built image and the
# Helm chart. Needs a Docker engine. Steps: create a kind cluster, build the operator image
# and load it (and the samples' agent image) into the cluster, `helm install --wait`, apply
# config/samples, wait for issuerun/demo-1 to finish, assert that it Succeeded with a
# HookSucceeded Event for each of the four hooks, delete the cluster.
#
# Environment: KIND_CLUSTER (default lorenz-e2e), KEEP_CLUSTER=1 keeps (and reuses) the
# cluster, SKIP_SAMPLES=1 stops after the install (hack/demo.sh uses both),
# E2E_TIMEOUT (default 300s) bounds the wait for the IssueRun.
# Tools: docker; kind, helm and kubectl from PATH, else kind is built from the Go module
# proxy (pinned below) and helm/kubectl come from hack/tools.sh.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
KIND_VERSION="v0.30.0"
CLUSTER="${KIND_CLUSTER:-lorenz-e2e}"
CONTEXT="kind-$CLUSTER"
RELEASE="lorenz"
RELEASE_NAMESPACE="lorenz-system"
SAMPLES_NAMESPACE="default"
IMAGE_REPOSITORY="ghcr.io/lorenz-dev/lorenz"
IMAGE_TAG="${IMAGE_TAG:-e2e}"
AGENT_IMAGE="node:24.21.0-bookworm-slim"
TOOLS_CACHE="${LORENZ_TOOLS_CACHE:-$HOME/.cache/lorenz/tools}"
# shellcheck source=lib/samples.sh
source "$ROOT/hack/lib/samples.sh"
PROGRESS_PREFIX="[e2e-kind]"

say() { echo "[e2e-kind] $*" >&2; }
die() {
  say "error: $*"
  exit 1
}

# kubectl and helm from PATH, else from hack/tools.sh (built from the Go module proxy once).
tool_path() {
  local name="$1"
  if command -v "$name" >/dev/null 2>&1; then
    command -v "$name"
  else
    "$ROOT/hack/tools.sh" path "$name"
  fi
}

kind_path() {
  if command -v kind >/dev/null 2>&1; then
    command -v kind
    return
  fi
  local built="$TOOLS_CACHE/kind-$KIND_VERSION"
  if [[ ! -x "$built" ]]; then
    command -v go >/dev/null 2>&1 || die "kind is not on PATH and there is no 'go' to build it"
    say "building kind $KIND_VERSION from the Go module proxy…"
    mkdir -p "$TOOLS_CACHE/kind-bin"
    GOBIN="$TOOLS_CACHE/kind-bin" CGO_ENABLED=0 go install "sigs.k8s.io/kind@$KIND_VERSION"
    mv -f "$TOOLS_CACHE/kind-bin/kind" "$built"
  fi
  echo "$built"
}

command -v docker >/dev/null 2>&1 || die "docker is not on PATH: the kind e2e needs a Docker engine"
docker info >/dev/null 2>&1 || die "the Docker engine does not answer ('docker info' failed)"
KIND="$(kind_path)"
KUBECTL="$(tool_path kubectl)"
HELM="$(tool_path helm)"
# samples.sh calls plain `kubectl`: point it at the kind cluster.
kubectl() { "$KUBECTL" --context "$CONTEXT" "$@"; }

cluster_exists() { "$KIND" get clusters 2>/dev/null | grep -qx "$CLUSTER"; }

diagnose() {
  say "diagnostics:"
  kubectl get pods -A -o wide >&2 || true
  kubectl -n "$RELEASE_NAMESPACE" logs "deploy/$RELEASE" --tail=100 >&2 || true
  kubectl -n "$SAMPLES_NAMESPACE" describe issuerun "$SAMPLE_RUN" >&2 || true
}

finish() {
  local status=$?
  trap - EXIT
  if ((status != 0)) && cluster_exists; then diagnose; fi
  if [[ "${KEEP_CLUSTER:-0}" != 1 ]] && cluster_exists; then
    say "deleting kind cluster $CLUSTER"
    "$KIND" delete cluster --name "$CLUSTER" >&2 || true
  fi
  exit "$status"
}
trap finish EXIT

if cluster_exists && [[ "${KEEP_CLUSTER:-0}" != 1 ]]; then
  say "a kind cluster named $CLUSTER already exists: deleting it for a clean run"
  "$KIND" delete cluster --name "$CLUSTER"
fi
if ! cluster_exists; then
  say "creating kind cluster $CLUSTER"
  "$KIND" create cluster --name "$CLUSTER" --wait 120s ||
    die "kind could not create cluster $CLUSTER (its output is above). kind runs its nodes from the kindest/node image, which it pulls from Docker Hub unless the engine has it already (docker images kindest/node): with no registry in reach it cannot"
fi

say "building $IMAGE_REPOSITORY:$IMAGE_TAG"
docker build -t "$IMAGE_REPOSITORY:$IMAGE_TAG" "$ROOT"
docker image inspect "$AGENT_IMAGE" >/dev/null 2>&1 || docker pull "$AGENT_IMAGE"
say "loading the images into $CLUSTER"
"$KIND" load docker-image --name "$CLUSTER" "$IMAGE_REPOSITORY:$IMAGE_TAG" "$AGENT_IMAGE"

say "installing the chart (helm upgrade --install --wait)"
"$HELM" --kube-context "$CONTEXT" upgrade --install "$RELEASE" "$ROOT/charts/lorenz" \
  --namespace "$RELEASE_NAMESPACE" --create-namespace \
  --set "image.repository=$IMAGE_REPOSITORY" --set "image.tag=$IMAGE_TAG" \
  --set image.pullPolicy=IfNotPresent \
  --wait --timeout 180s
kubectl wait --for=condition=Established --timeout=60s crd/workflows.lorenz.dev crd/issueruns.lorenz.dev

if [[ "${SKIP_SAMPLES:-0}" == 1 ]]; then
  say "installed; samples skipped (SKIP_SAMPLES=1)"
  exit 0
fi

say "applying config/samples"
apply_samples "$SAMPLES_NAMESPACE"
wait_for_sample "$SAMPLES_NAMESPACE" "${E2E_TIMEOUT:-300s}"
show_sample "$SAMPLES_NAMESPACE"
check_sample "$SAMPLES_NAMESPACE"
say "PASS: issuerun/$SAMPLE_RUN Succeeded with an Event for each of the four hooks"
