# shellcheck shell=bash
# Progress of the long steps of hack/tools.sh, hack/images.sh and hack/demo.sh, on stderr (stdout
# stays the scripts' answer): a heartbeat every LORENZ_PROGRESS_INTERVAL seconds (15) saying
# what runs, which step it is at and for how long, and how long it took the last time (the
# durations are kept in a file in the cache, one line per run: "<date> <name> <what> <N>s").
# Sourced; the caller sets PROGRESS_PREFIX (e.g. "[tools]").

PROGRESS_INTERVAL="${LORENZ_PROGRESS_INTERVAL:-15}"
if [[ ! "$PROGRESS_INTERVAL" =~ ^[1-9][0-9]*$ ]]; then
  echo "LORENZ_PROGRESS_INTERVAL is a whole number of seconds (15 when unset), not '$PROGRESS_INTERVAL'" >&2
  exit 2
fi
PROGRESS_PREFIX="${PROGRESS_PREFIX:-[progress]}"

# 45 -> "45 s", 125 -> "2 min 05 s".
progress_elapsed() {
  local seconds="$1"
  if ((seconds < 60)); then
    echo "$seconds s"
  else
    printf '%d min %02d s\n' $((seconds / 60)) $((seconds % 60))
  fi
}

# "took ~6 min last time" from the newest line for <name> in <file>; nothing when none.
progress_last_time() {
  local file="$1" name="$2" seconds
  [[ -f "$file" ]] || return 0
  seconds="$(awk -v name="$name" '$2 == name && $NF ~ /^[0-9]+s$/ { s = $NF } END { sub(/s$/, "", s); print s }' "$file")"
  [[ -n "$seconds" ]] || return 0
  if ((seconds < 90)); then
    echo "took ~$seconds s last time"
  else
    echo "took ~$(((seconds + 30) / 60)) min last time"
  fi
}

# Appends one line to the durations file: <file> <name> <what> <seconds>.
progress_record() {
  local file="$1" name="$2" what="$3" seconds="$4"
  mkdir -p "$(dirname "$file")"
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $name $what ${seconds}s" >>"$file"
}

# Called by the command progress_run runs (in the background: hence a file, not a variable):
# progress_step <step> [<log> <kind> [<main package>]], the step it is at, and optionally a
# log whose last lines say more (<kind> "go": the output of `go build -v <main package>`;
# "docker": of a classic `docker build`).
progress_step() {
  [[ -n "${PROGRESS_STEP_FILE:-}" ]] || return 0
  printf '%s\n' "$1" "${2-}" "${3-}" "${4-}" >"$PROGRESS_STEP_FILE"
}

# progress_logged <step> <log> <kind> <command> [args…]: the command, its output (both streams)
# into <log>, as the step <step> whose progress the log tells (for progress_run to run).
progress_logged() {
  local step="$1" log="$2" kind="$3"
  shift 3
  progress_step "$step" "$log" "$kind"
  "$@" >"$log" 2>&1
}

# What a log tells of its step's progress, or nothing.
progress_log_detail() {
  local kind="$1" log="$2" main="${3-}" last packages
  [[ -s "$log" ]] || return 0
  case "$kind" in
    go)
      # `go build -v` prints "go: downloading <module>" while it fetches, then the import path
      # of each package as it is built, the main package last (its link follows).
      last="$(tail -n 1 "$log")"
      if [[ "$last" == "go: downloading "* ]]; then
        echo "downloading modules: $(grep -c '^go: downloading ' "$log") so far, now ${last#go: downloading }"
        return
      fi
      packages="$(grep -cv '^go: ' "$log" || true)"
      if [[ -n "$main" && "$last" == "$main" ]]; then
        echo "linking (after $packages packages)"
      else
        echo "compiling: $packages packages so far, now $last"
      fi
      ;;
    docker)
      # The classic builder prints "Step 3/7 : RUN npm ci" as each instruction starts.
      last="$(grep -E '^Step [0-9]+/[0-9]+ : ' "$log" | tail -n 1 | cut -c1-100)"
      [[ -z "$last" ]] || echo "$last"
      ;;
    lines)
      # debootstrap and the like: their last line ("I: Extracting libc6...").
      tail -n 1 "$log" | cut -c1-100
      ;;
  esac
}

# The heartbeat's text: the step, and what its log says.
progress_now() {
  local step="" log="" kind="" main="" detail=""
  if [[ -s "$PROGRESS_STEP_FILE" ]]; then
    { IFS= read -r step; IFS= read -r log; IFS= read -r kind; IFS= read -r main; } <"$PROGRESS_STEP_FILE" || true
  fi
  [[ -z "$log" ]] || detail="$(progress_log_detail "$kind" "$log" "$main")"
  if [[ -n "$step" && -n "$detail" ]]; then
    echo "$step: $detail"
  else
    echo "${step:-$detail}"
  fi
}

# progress_run <what> <estimate> <command> [args…]: runs the command (a function may call
# progress_step) in the background and waits for it, printing
#   "<prefix> <what>: <step> (<elapsed>; <estimate>)"
# on stderr every PROGRESS_INTERVAL seconds while it runs. Returns the command's status.
progress_run() {
  local what="$1" estimate="$2" pid status=0 started="$SECONDS" next now
  shift 2
  PROGRESS_STEP_FILE="$(mktemp "${TMPDIR:-/tmp}/lorenz-progress.XXXXXX")"
  "$@" &
  pid=$!
  next=$((SECONDS + PROGRESS_INTERVAL))
  while kill -0 "$pid" 2>/dev/null; do
    sleep 0.2
    if ((SECONDS >= next)) && kill -0 "$pid" 2>/dev/null; then
      now="$(progress_now)"
      echo "$PROGRESS_PREFIX $what${now:+: $now} ($(progress_elapsed $((SECONDS - started)))${estimate:+; $estimate})" >&2
      next=$((SECONDS + PROGRESS_INTERVAL))
    fi
  done
  wait "$pid" || status=$?
  rm -f "$PROGRESS_STEP_FILE"
  PROGRESS_STEP_FILE=""
  return "$status"
}
