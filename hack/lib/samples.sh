# shellcheck shell=bash
# Shared by hack/demo.sh and hack/e2e-kind.sh (sourced, not run): apply the samples, wait
# for the sample IssueRun to finish, and show or check what happened. Expects `kubectl` on
# PATH pointing at the cluster, and ROOT set to the repository root. While it waits it says
# every LORENZ_PROGRESS_INTERVAL seconds (15), on stderr, what it waits for and how far the
# run is (hack/lib/progress.sh).

SAMPLE_RUN="${SAMPLE_RUN:-demo-1}"
HOOKS=(after_create before_run after_run before_remove)
# shellcheck source=hack/lib/progress.sh
source "$ROOT/hack/lib/progress.sh"

# "300s", "5m" or "300" -> 300; anything else is refused, naming it.
seconds_of() {
  case "$1" in
    *[!0-9sm]* | "" | s | m) ;;
    *[0-9]s) echo "${1%s}" && return ;;
    *[0-9]m) echo "$((${1%m} * 60))" && return ;;
    *[0-9]) echo "$1" && return ;;
  esac
  echo "not a timeout: '$1' (say 300s, 5m or 300)" >&2
  return 1
}

# Sets RUN_FINISHED (the Finished condition's status) and RUN_NOW, one line of where
# issuerun/$2 in namespace $1 is: "Running, hook before_run running", "Running, agent turn 2",
# "Succeeded (Completed)", "not created yet".
run_state() {
  local fields phase reason hook status turn
  RUN_FINISHED=""
  if ! fields="$(kubectl -n "$1" get issuerun "$2" -o jsonpath='{.status.phase}{"|"}{.status.reason}{"|"}{.status.hooks[-1:].name}{"|"}{.status.hooks[-1:].status}{"|"}{.status.turn}{"|"}{.status.conditions[?(@.type=="Finished")].status}' 2>/dev/null)"; then
    RUN_NOW="not created yet"
    return 0
  fi
  IFS='|' read -r phase reason hook status turn RUN_FINISHED <<<"$fields"
  RUN_NOW="${phase:-Pending}"
  [[ -z "$reason" ]] || RUN_NOW+=" ($reason)"
  if [[ "$status" == started ]]; then
    RUN_NOW+=", hook $hook running"
  elif [[ -n "$turn" && "$turn" != 0 ]]; then
    RUN_NOW+=", agent turn $turn"
  elif [[ -n "$hook" ]]; then
    RUN_NOW+=", hook $hook $status"
  fi
}

# Applies config/samples in namespace $1. A previous run of the same name is deleted
# first, with its Events, so every demo starts from a fresh IssueRun (an IssueRun's spec is
# immutable) and shows only its own Events.
apply_samples() {
  local namespace="$1"
  kubectl -n "$namespace" delete issuerun "$SAMPLE_RUN" --ignore-not-found --wait=true >/dev/null
  kubectl -n "$namespace" delete events --ignore-not-found \
    --field-selector "involvedObject.kind=IssueRun,involvedObject.name=$SAMPLE_RUN" >/dev/null
  kubectl -n "$namespace" apply -k "$ROOT/config/samples"
}

# Waits until the sample IssueRun has Finished (Succeeded or Failed); $2 is the timeout.
# Returns 1 when it has not finished in time, having said where it stands.
wait_for_sample() {
  local namespace="$1" timeout="${2:-300s}" limit started="$SECONDS" next
  limit="$(seconds_of "$timeout")" || return 2
  echo "waiting for issuerun/$SAMPLE_RUN to finish (timeout $timeout)…"
  next=$((SECONDS + PROGRESS_INTERVAL))
  while :; do
    run_state "$namespace" "$SAMPLE_RUN"
    if [[ "$RUN_FINISHED" == True ]]; then
      echo "issuerun/$SAMPLE_RUN finished after $(progress_elapsed $((SECONDS - started))): $RUN_NOW"
      return 0
    fi
    if ((SECONDS - started >= limit)); then
      echo "$PROGRESS_PREFIX issuerun/$SAMPLE_RUN has not finished after $timeout: $RUN_NOW" >&2
      return 1
    fi
    if ((SECONDS >= next)); then
      echo "$PROGRESS_PREFIX waiting for issuerun/$SAMPLE_RUN: $RUN_NOW ($(progress_elapsed $((SECONDS - started))))" >&2
      next=$((SECONDS + PROGRESS_INTERVAL))
    fi
    sleep 1
  done
}

# The status of the sample's Succeeded condition: True, False or Unknown (empty if unset).
sample_succeeded() {
  kubectl -n "$1" get issuerun "$SAMPLE_RUN" \
    -o jsonpath='{.status.conditions[?(@.type=="Succeeded")].status}'
}

# The hook Events of the sample IssueRun (this one: by uid): "<reason> <note>" lines,
# oldest first.
sample_hook_events() {
  local uid
  uid="$(kubectl -n "$1" get issuerun "$SAMPLE_RUN" -o jsonpath='{.metadata.uid}')"
  kubectl -n "$1" get events \
    --field-selector "involvedObject.kind=IssueRun,involvedObject.name=$SAMPLE_RUN,involvedObject.uid=$uid" \
    --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{range .items[*]}{.reason}{" "}{.message}{"\n"}{end}' | grep '^Hook' || true
}

# Prints the IssueRuns and the sample's hook Events.
show_sample() {
  local namespace="$1"
  echo
  echo "\$ kubectl get issueruns -n $namespace"
  kubectl -n "$namespace" get issueruns
  echo
  echo "hook Events of issuerun/$SAMPLE_RUN:"
  sample_hook_events "$namespace" | sed 's/^/  /'
}

# Fails (returning 1, with a reason on stderr) unless the sample Succeeded and each of the
# four hooks has a HookSucceeded Event.
check_sample() {
  local namespace="$1" events status hook missing=0
  status="$(sample_succeeded "$namespace")"
  if [[ "$status" != "True" ]]; then
    echo "issuerun/$SAMPLE_RUN did not succeed (Succeeded=${status:-unset}):" >&2
    kubectl -n "$namespace" describe issuerun "$SAMPLE_RUN" >&2 || true
    return 1
  fi
  events="$(sample_hook_events "$namespace")"
  for hook in "${HOOKS[@]}"; do
    if ! grep -q "^HookSucceeded $hook " <<<"$events"; then
      echo "no HookSucceeded Event for $hook on issuerun/$SAMPLE_RUN" >&2
      missing=1
    fi
  done
  return "$missing"
}

# The board sample (config/samples/workflow-board.yaml): waits, up to $2, until the tracker
# has nothing left to do (no candidates: the agents moved BOARD-1 and BOARD-2 to Done
# through the tools gateway), then shows the Workflow's dispatch status and its IssueRuns.
# Only says so when it does not get there: the board is a show, demo-1 is the check.
show_board() {
  local namespace="$1" timeout="${2:-180}" waited=0 candidates running dispatch
  echo
  echo "waiting for the board Workflow to run out of work (the agents move their issues to Done)…"
  while ((waited < timeout)); do
    dispatch="$(kubectl -n "$namespace" get workflows.lorenz.dev board \
      -o jsonpath='{.status.dispatch.candidates}{"|"}{.status.dispatch.running}' 2>/dev/null || true)"
    IFS='|' read -r candidates running <<<"$dispatch"
    [[ "$candidates" == "0" ]] && break
    if ((waited > 0 && waited % PROGRESS_INTERVAL < 2)); then
      echo "$PROGRESS_PREFIX waiting for the board Workflow: ${candidates:-?} issues to work on, ${running:-0} running ($(progress_elapsed "$waited"))" >&2
    fi
    sleep 2
    waited=$((waited + 2))
  done
  echo "\$ kubectl get workflows.lorenz.dev board"
  kubectl -n "$namespace" get workflows.lorenz.dev board
  echo "\$ kubectl get issueruns -l lorenz.dev/workflow=board"
  kubectl -n "$namespace" get issueruns -l lorenz.dev/workflow=board
  if [[ "$candidates" != "0" ]]; then
    echo "(the board still has work after ${timeout}s: kubectl describe workflows.lorenz.dev board)"
  fi
}

# The git sample (config/samples/workflow-git.yaml) on the local control plane: serves a
# bare repository with `git daemon` on 127.0.0.1:9418 (anonymous push), applies the
# sample, waits up to $2 for the agent's push to reach the issue's branch, and shows it.
# Run Pods of the process-backed node are processes of this machine, so they reach it.
GIT_SAMPLE_BRANCH="lorenz/git-1-add-a-greeting"
show_git_sample() {
  local namespace="$1" timeout="${2:-180}" waited=0 served daemon
  served="$(mktemp -d)"
  git init -q --bare -b main "$served/web.git"
  git -C "$served/web.git" config daemon.receivepack true
  git clone -q "$served/web.git" "$served/seed" 2>/dev/null
  echo "# web" >"$served/seed/README.md"
  git -C "$served/seed" add README.md
  git -C "$served/seed" -c user.name=demo -c user.email=demo@localhost commit -qm "Initial commit"
  git -C "$served/seed" push -q origin main
  git daemon --reuseaddr --listen=127.0.0.1 --port=9418 --base-path="$served" --export-all \
    --enable=receive-pack "$served" &
  daemon=$!
  kubectl -n "$namespace" delete workflows.lorenz.dev git-demo --ignore-not-found --wait=true >/dev/null
  kubectl -n "$namespace" apply -f "$ROOT/config/samples/workflow-git.yaml"
  echo
  echo "waiting for the git sample's agent to push $GIT_SAMPLE_BRANCH…"
  while ((waited < timeout)); do
    git --git-dir "$served/web.git" rev-parse -q --verify "refs/heads/$GIT_SAMPLE_BRANCH" >/dev/null && break
    if ((waited > 0 && waited % PROGRESS_INTERVAL < 2)); then
      run_state "$namespace" git-demo-git-1
      echo "$PROGRESS_PREFIX waiting for the push of $GIT_SAMPLE_BRANCH: issuerun/git-demo-git-1 $RUN_NOW ($(progress_elapsed "$waited"))" >&2
    fi
    sleep 2
    waited=$((waited + 2))
  done
  echo "\$ git log --oneline $GIT_SAMPLE_BRANCH   (in the served repository)"
  git --git-dir "$served/web.git" log --oneline "$GIT_SAMPLE_BRANCH" 2>/dev/null ||
    echo "(no push after ${timeout}s: kubectl describe issuerun git-demo-git-1)"
  kill "$daemon" 2>/dev/null || true
  wait "$daemon" 2>/dev/null || true
  rm -rf "$served"
}

# The approvals sample (config/samples/approvals/workflow-approvals.yaml, docs/approvals.md):
# a memory board whose scripted agent asks before `git push --force origin main`; the rule
# says ask, so its run waits. This applies it, waits up to $2 seconds for the request in the
# IssueRun's status.inbox.pending and shows it, answers it ON THE BOARD (a `/approve` comment
# added to APPROVE-1 in the Workflow's WORKFLOW.md, as a person would comment on the issue),
# waits up to $2 more for the run to go on and finish, and shows the approval Events. A show,
# like the board: it says where it stopped and returns 0 when it does not get there.
APPROVALS_SAMPLE="${APPROVALS_SAMPLE:-$ROOT/config/samples/approvals/workflow-approvals.yaml}"
APPROVALS_WORKFLOW="approvals"
APPROVALS_ISSUE="APPROVE-1"
show_approvals() {
  local namespace="$1" timeout="${2:-180}"
  if [[ ! -f "$APPROVALS_SAMPLE" ]]; then
    echo "(no ${APPROVALS_SAMPLE#"$ROOT"/}: the approvals walk-through is skipped)"
    return 0
  fi
  kubectl -n "$namespace" delete workflows.lorenz.dev "$APPROVALS_WORKFLOW" --ignore-not-found --wait=true >/dev/null
  kubectl -n "$namespace" apply -f "$APPROVALS_SAMPLE"
  echo
  echo "waiting for the approvals sample's agent to ask before its force push…"
  if ! wait_for_approval_request "$namespace" "$timeout"; then
    echo "(no request waits after ${timeout}s: kubectl describe workflows.lorenz.dev $APPROVALS_WORKFLOW)"
    return 0
  fi
  echo "\$ kubectl get issueruns -l lorenz.dev/workflow=$APPROVALS_WORKFLOW"
  kubectl -n "$namespace" get issueruns -l "lorenz.dev/workflow=$APPROVALS_WORKFLOW"
  echo "issuerun/$APPROVAL_RUN waits on request $APPROVAL_REQUEST:"
  kubectl -n "$namespace" get issuerun "$APPROVAL_RUN" \
    -o jsonpath='{range .status.inbox.pending[*]}  {.kind} {.toolKind}: {.command}{"\n"}  rule: {.ruleReason}{"\n"}  deadline: {.deadline}{"\n"}{end}'
  approval_events "$namespace" "$APPROVAL_RUN" | grep '^ApprovalRequested' | sed 's/^/  /' || true
  echo
  echo "answering it on the board: a comment /approve on $APPROVALS_ISSUE (or: lorenz approve $APPROVAL_RUN, or the web view's Approve)"
  if ! approve_on_board "$namespace"; then
    echo "(the Workflow could not be patched: answer with lorenz approve $APPROVAL_RUN -n $namespace)"
    return 0
  fi
  if ! wait_for_approved_run "$namespace" "$APPROVAL_RUN" "$timeout"; then
    echo "(issuerun/$APPROVAL_RUN has not finished ${timeout}s after the approval: kubectl describe issuerun $APPROVAL_RUN)"
  fi
  echo "\$ kubectl get issueruns -l lorenz.dev/workflow=$APPROVALS_WORKFLOW"
  kubectl -n "$namespace" get issueruns -l "lorenz.dev/workflow=$APPROVALS_WORKFLOW" 2>/dev/null || true
  echo "approval Events of issuerun/$APPROVAL_RUN:"
  approval_events "$namespace" "$APPROVAL_RUN" | sed 's/^/  /'
}

# "<reason> <message>" of the inbox Events of IssueRun $2 (approvals, questions), oldest first.
approval_events() {
  kubectl -n "$1" get events \
    --field-selector "involvedObject.kind=IssueRun,involvedObject.name=$2" \
    --sort-by=.metadata.creationTimestamp \
    -o jsonpath='{range .items[*]}{.reason}{" "}{.message}{"\n"}{end}' 2>/dev/null |
    grep -E '^(Approval|Question)' || true
}

# Waits up to $2 seconds for a run of the approvals Workflow with a request in
# status.inbox.pending; sets APPROVAL_RUN and APPROVAL_REQUEST. Returns 1 on timeout.
wait_for_approval_request() {
  local namespace="$1" timeout="$2" started="$SECONDS" next fields
  APPROVAL_RUN=""
  APPROVAL_REQUEST=""
  next=$((SECONDS + PROGRESS_INTERVAL))
  while ((SECONDS - started < timeout)); do
    fields="$(kubectl -n "$namespace" get issueruns -l "lorenz.dev/workflow=$APPROVALS_WORKFLOW" \
      -o jsonpath='{range .items[*]}{.metadata.name}{"|"}{.status.inbox.pending[0].id}{"\n"}{end}' 2>/dev/null || true)"
    while IFS='|' read -r APPROVAL_RUN APPROVAL_REQUEST; do
      [[ -n "$APPROVAL_REQUEST" ]] && return 0
    done <<<"$fields"
    if ((SECONDS >= next)); then
      echo "$PROGRESS_PREFIX waiting for the approvals sample's request: ${fields:-no run yet} ($(progress_elapsed $((SECONDS - started))))" >&2
      next=$((SECONDS + PROGRESS_INTERVAL))
    fi
    sleep 1
  done
  return 1
}

# Adds `comments: [{author: alice, body: "/approve", created_at: <now>}]` to APPROVE-1 in the
# approvals Workflow's WORKFLOW.md: on the memory board that is a comment on the issue.
approve_on_board() {
  local namespace="$1" now patch
  now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  patch="$(kubectl -n "$namespace" get workflows.lorenz.dev "$APPROVALS_WORKFLOW" -o json |
    "${NODE24:-node}" "$ROOT/hack/lib/board-comment.mjs" "$APPROVALS_ISSUE" alice /approve "$now")" ||
    return 1
  kubectl -n "$namespace" patch workflows.lorenz.dev "$APPROVALS_WORKFLOW" --type merge -p "$patch" >/dev/null
}

# Waits up to $3 seconds for IssueRun $2 to finish, or to be gone (the poller removes a run
# whose issue is Done); says every interval where it is. Returns 1 on timeout.
wait_for_approved_run() {
  local namespace="$1" run="$2" timeout="$3" started="$SECONDS" next
  next=$((SECONDS + PROGRESS_INTERVAL))
  while ((SECONDS - started < timeout)); do
    run_state "$namespace" "$run"
    if [[ "$RUN_FINISHED" == True ]]; then
      echo "issuerun/$run finished after the approval: $RUN_NOW"
      return 0
    fi
    if [[ "$RUN_NOW" == "not created yet" ]]; then
      echo "issuerun/$run is done and removed (its issue is Done)"
      return 0
    fi
    if ((SECONDS >= next)); then
      echo "$PROGRESS_PREFIX waiting for issuerun/$run after the approval: $RUN_NOW ($(progress_elapsed $((SECONDS - started))))" >&2
      next=$((SECONDS + PROGRESS_INTERVAL))
    fi
    sleep 1
  done
  return 1
}
