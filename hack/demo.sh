#!/usr/bin/env bash
# `make demo`: from a fresh clone to a finished IssueRun in one command.
#
#   hack/demo.sh [--local | --kind]      (make demo, make demo CLUSTER=kind)
#
# Brings up what it needs: by default the local control plane with the process-backed node
# and the controller running on this machine (no Docker, no image registry); with --kind
# (DEMO_CLUSTER=kind, which `make demo CLUSTER=kind` sets), a kind cluster with the operator
# image and the Helm chart, which needs Docker and kind's node image. Then applies
# config/samples, waits for issuerun/demo-1 to finish (saying every 15 s where it is), and
# prints `kubectl get issueruns` and the run's hook Events; then the board, and an agent that
# asks before a force push, answered with `/approve` on its issue. Locally it then stops what
# it started (the controller; the cluster, unless it was up before) and leaves nothing
# running; DEMO_KEEP=1 (`make demo KEEP=1`) leaves the cluster and the web view up. A kind
# cluster is left up.
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

PROGRESS_PREFIX="[demo]"

# Sets `mode`: the local control plane unless kind is asked for (--kind, or DEMO_CLUSTER=kind,
# which `make demo CLUSTER=kind` sets; a flag wins). A Docker engine that answers (the tests
# start one) says nothing of whether kind can get its node image, so it is not a reason.
choose_mode() {
  case "${DEMO_CLUSTER:-local}" in
    local | kind) mode="${DEMO_CLUSTER:-local}" ;;
    *)
      echo "hack/demo.sh: CLUSTER (DEMO_CLUSTER) is local or kind, not '$DEMO_CLUSTER'" >&2
      exit 2
      ;;
  esac
  case "${1:-}" in
    --local) mode=local ;;
    --kind) mode=kind ;;
    "") ;;
    -h | --help)
      sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "usage: hack/demo.sh [--local | --kind]" >&2
      exit 2
      ;;
  esac
}

CONTROLLER_PID=""
CONTROLLER_LOG="${LORENZ_DEV_CLUSTER_DIR:-$HOME/.cache/lorenz/dev-cluster}-controller.log"
# How long the controller has to exit on SIGTERM before it is killed: the demo returns.
STOP_GRACE="${DEMO_STOP_GRACE:-15}"
stop_controller() {
  stop_within "$CONTROLLER_PID" "$STOP_GRACE" "the controller" "$CONTROLLER_LOG"
}

# DEMO_KEEP=1 (make demo KEEP=1): the cluster and the web view outlive the demo.
keeping() { [[ "${DEMO_KEEP:-0}" == 1 ]]; }

# On any exit: the controller stops; so does the cluster when this demo started it, unless kept.
finish_local() {
  stop_controller
  if [[ "${CLUSTER_STARTED_HERE:-0}" == 1 ]] && ! keeping; then
    say "stopping the local cluster this demo started (make demo KEEP=1 leaves it up)…"
    "$ROOT/hack/dev-cluster.sh" down >/dev/null 2>&1 || say "hack/dev-cluster.sh down failed"
  fi
}

# The local path: dev cluster + the controller as a background process of this script.
# The controller stops when the demo ends; what it wrote stays in the cluster.
demo_local() {
  ensure_built
  say "starting the local control plane and process node (the first start builds kube-apiserver and etcd: minutes)…"
  trap finish_local EXIT
  local_cluster_up
  controller_command
  "${CONTROLLER_CMD[@]}" >"$CONTROLLER_LOG" 2>&1 &
  CONTROLLER_PID=$!
  say "controller started (pid $CONTROLLER_PID, logs: $CONTROLLER_LOG)"
  run_samples
  show_git_sample "$NAMESPACE" 180
  show_history "$NAMESPACE"
  echo
  if [[ "$CLUSTER_STARTED_HERE" == 1 ]] && ! keeping; then
    echo "The demo stops the cluster it started now. To look further, keep it up:"
    echo "  make demo KEEP=1                        # the cluster and the web view stay up"
    return
  fi
  start_web_view "$NAMESPACE"
  echo
  echo "The local cluster is still up. To look further:"
  echo "  eval \"\$(hack/dev-cluster.sh up)\"      # PATH and KUBECONFIG for kubectl"
  echo "  kubectl describe issuerun $SAMPLE_RUN       # conditions, per-hook results, Events"
  echo "  kubectl get pods -l lorenz.dev/issuerun=$SAMPLE_RUN"
  echo "  lorenz get runs --all; lorenz describe run NAME   # live and archived runs (npx lorenz)"
  echo "  make dev                                # the controller in the foreground, logs readable"
  echo "  hack/dev-cluster.sh down                # stop the cluster"
}

# The run archive (docs/archive.md): the laptop controller archives to the user's cache
# (~/.cache/lorenz/archive.db), so the board runs the poller deleted once their issues were
# Done are still there. Prints `lorenz get runs --all` and the transcript of one board run.
show_history() {
  local namespace="$1" run
  local lorenz=("$NODE24" "$ROOT/dist/lorenz.js")
  echo
  echo "\$ lorenz get runs --all"
  "${lorenz[@]}" get runs --all -n "$namespace" --kubeconfig "$KUBECONFIG" || return 0
  run="$("${lorenz[@]}" get runs --all -n "$namespace" --kubeconfig "$KUBECONFIG" -o json 2>/dev/null |
    "$NODE24" -e 'let t="";process.stdin.on("data",(d)=>(t+=d)).on("end",()=>{const r=JSON.parse(t).items.find((x)=>x.workflow==="board"&&x.source==="archived")??JSON.parse(t).items.find((x)=>x.workflow==="board");if(r)console.log(r.name)})' ||
    true)"
  [[ -n "$run" ]] || return 0
  echo
  echo "\$ lorenz logs $run"
  "${lorenz[@]}" logs "$run" -n "$namespace" --kubeconfig "$KUBECONFIG" || true
}

# The web view (docs/web-view.md): `lorenz server` in local mode, on loopback, with the
# user's own kubeconfig and the laptop archive. It outlives the demo, like the cluster does;
# a second demo replaces the first one's server.
WEB_VIEW_PORT="${DEMO_WEB_VIEW_PORT:-8090}"
WEB_VIEW_STATE="${LORENZ_DEV_CLUSTER_DIR:-$HOME/.cache/lorenz/dev-cluster}-web-view"
start_web_view() {
  local namespace="$1" pid url="http://127.0.0.1:$WEB_VIEW_PORT"
  if [[ -f "$WEB_VIEW_STATE.pid" ]]; then
    kill "$(cat "$WEB_VIEW_STATE.pid")" 2>/dev/null || true
    rm -f "$WEB_VIEW_STATE.pid"
    sleep 0.5
  fi
  setsid "$NODE24" "$ROOT/dist/lorenz.js" server --kubeconfig "$KUBECONFIG" \
    --bind-address "127.0.0.1:$WEB_VIEW_PORT" </dev/null >"$WEB_VIEW_STATE.log" 2>&1 &
  pid=$!
  echo "$pid" >"$WEB_VIEW_STATE.pid"
  # Ready when the API lists the demo's runs (the server has synced its watches).
  local deadline=$((SECONDS + 30))
  until "$NODE24" -e 'fetch(process.argv[1]).then(async (r) => process.exit(r.ok && (await r.json()).runs.length > 0 ? 0 : 1), () => process.exit(1))' \
    "$url/api/v1/runs?namespace=$namespace" 2>/dev/null; do
    if ((SECONDS >= deadline)) || ! kill -0 "$pid" 2>/dev/null; then
      say "the web view did not start (its log: $WEB_VIEW_STATE.log)"
      return 0
    fi
    sleep 0.5
  done
  echo
  echo "The web view of these runs: $url/runs?namespace=$namespace"
  echo "  (lorenz server, pid $pid, log $WEB_VIEW_STATE.log; stop it: kill \$(cat $WEB_VIEW_STATE.pid))"
}

# The kind path: the same steps as hack/e2e-kind.sh, keeping the cluster.
demo_kind() {
  local status=0
  say "using kind cluster '$KIND_CLUSTER' (asked for: --kind or CLUSTER=kind)"
  KEEP_CLUSTER=1 KIND_CLUSTER="$KIND_CLUSTER" SKIP_SAMPLES=1 "$ROOT/hack/e2e-kind.sh" || status=$?
  if ((status != 0)); then
    say "the kind cluster could not be set up (exit $status; why is above)."
    say "the default demo needs neither Docker nor a registry: make demo (hack/demo.sh --local)"
    exit "$status"
  fi
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
  show_approvals "$NAMESPACE" "${DEMO_APPROVALS_TIMEOUT:-180}"
}

# Sourced (the script tests do), it only defines its functions.
if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  choose_mode "$@"
  "demo_$mode"
fi
