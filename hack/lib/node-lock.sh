# shellcheck shell=bash
# One real node per identity on this machine (sourced by hack/real-node.sh, not run). Two
# checkouts starting the same node (name, address, bridge, cgroup root) at once would kill or
# corrupt each other: `down` kills every process of the node's cgroup root and deletes its
# bridge and address. So `up` takes this lock and `down` gives it back.
#
# The lock is a file, ${LORENZ_NODE_LOCK_DIR:-/run/lock/lorenz}/real-node-<name>.lock, naming
# its owner: a pid (the process that will call `down`, by default the caller of real-node.sh),
# that pid's start time (a recycled pid is not the owner), the node's state directory and the
# checkout. flock(1) on a guard file makes each look-and-write atomic. A second `up` waits,
# saying who holds the node, for at most LORENZ_NODE_LOCK_WAIT seconds (default 480), then
# fails. An owner that is gone left a stale lock: the next `up` stops what the owner left
# (node_lock_on_stale <its dir>, defined by the caller) and takes the lock over.

NODE_LOCK_DIR="${LORENZ_NODE_LOCK_DIR:-/run/lock/lorenz}"

node_lock_file() { echo "$NODE_LOCK_DIR/real-node-$1.lock"; }

# The start time of <pid> (clock ticks since boot), or nothing when it is gone.
node_lock_start_time() {
  local stat
  stat="$(cat "/proc/$1/stat" 2>/dev/null)" || return 0
  # Field 22; the command name (field 2) may hold spaces, so count after its ')'.
  awk '{ print $20 }' <<<"${stat##*) }"
}

# Reads <lock file> into LOCK_PID, LOCK_START, LOCK_DIR, LOCK_CHECKOUT (empty when absent).
node_lock_read() {
  LOCK_PID="" LOCK_START="" LOCK_DIR="" LOCK_CHECKOUT=""
  [[ -f "$1" ]] || return 0
  local key value
  while IFS='=' read -r key value; do
    case "$key" in
      pid) LOCK_PID="$value" ;;
      start) LOCK_START="$value" ;;
      dir) LOCK_DIR="$value" ;;
      checkout) LOCK_CHECKOUT="$value" ;;
    esac
  done <"$1"
}

# Whether the lock just read names a live owner.
node_lock_owner_alive() {
  [[ -n "$LOCK_PID" ]] && kill -0 "$LOCK_PID" 2>/dev/null &&
    [[ "$(node_lock_start_time "$LOCK_PID")" == "$LOCK_START" ]]
}

# node_lock_guarded <name> <command...>: runs the command holding the guard of <name>'s lock.
node_lock_guarded() {
  local name="$1" status=0
  shift
  mkdir -p "$NODE_LOCK_DIR"
  exec {guard_fd}>>"$NODE_LOCK_DIR/real-node-$name.guard"
  flock -x "$guard_fd"
  "$@" || status=$?
  exec {guard_fd}>&-
  return "$status"
}

# One attempt, under the guard: 0 when the lock is now ours, 1 when a live owner holds it.
node_lock_try() {
  local name="$1" dir="$2" owner="$3" checkout="$4" file
  file="$(node_lock_file "$name")"
  node_lock_read "$file"
  if [[ -n "$LOCK_PID" && "$LOCK_DIR" != "$dir" ]] && node_lock_owner_alive; then return 1; fi
  if [[ -n "$LOCK_PID" && "$LOCK_DIR" != "$dir" ]]; then
    echo "[real-node] node $name: its lock's owner (pid $LOCK_PID, ${LOCK_CHECKOUT:-?}) is gone; stopping what it left in $LOCK_DIR and taking the node over" >&2
    node_lock_on_stale "$LOCK_DIR" || true
  fi
  printf 'pid=%s\nstart=%s\ndir=%s\ncheckout=%s\n' "$owner" "$(node_lock_start_time "$owner")" \
    "$dir" "$checkout" >"$file.tmp.$$"
  mv -f "$file.tmp.$$" "$file"
}

# node_lock_acquire <name> <dir> <owner pid> <checkout>: takes the node for <dir>, waiting
# (bounded) while another live owner has it. Taken again for the same <dir> (an idempotent
# `up`), it is ours already.
node_lock_acquire() {
  local name="$1" dir="$2" owner="$3" checkout="$4"
  local wait="${LORENZ_NODE_LOCK_WAIT:-480}" started=$SECONDS said=-1
  [[ -n "$(node_lock_start_time "$owner")" ]] || {
    echo "[real-node] error: the lock's owner pid $owner is not running" >&2
    return 1
  }
  until node_lock_guarded "$name" node_lock_try "$name" "$dir" "$owner" "$checkout"; do
    local waited=$((SECONDS - started))
    if ((waited >= wait)); then
      echo "[real-node] error: node $name is still held by pid $LOCK_PID (${LOCK_CHECKOUT:-?}, state $LOCK_DIR) after $wait s; gave up (LORENZ_NODE_LOCK_WAIT)" >&2
      return 1
    fi
    if ((said < 0 || waited - said >= 15)); then
      echo "[real-node] node $name is in use by pid $LOCK_PID (${LOCK_CHECKOUT:-?}, state $LOCK_DIR): waiting for it to go down (${waited}/${wait} s)…" >&2
      said=$waited
    fi
    sleep 1
  done
}

node_lock_release_held() {
  local file
  file="$(node_lock_file "$1")"
  node_lock_read "$file"
  [[ "$LOCK_DIR" == "$2" ]] && rm -f "$file"
  return 0
}

# node_lock_release <name> <dir>: gives the node back, if <dir> holds it.
node_lock_release() { node_lock_guarded "$1" node_lock_release_held "$1" "$2"; }

# node_lock_held_by_other <name> <dir>: 0 when a live owner other than <dir> holds the node
# (LOCK_* then describe it): its cgroup root, bridge and address are not ours to remove.
node_lock_held_by_other() {
  node_lock_read "$(node_lock_file "$1")"
  [[ -n "$LOCK_PID" && "$LOCK_DIR" != "$2" ]] && node_lock_owner_alive
}
