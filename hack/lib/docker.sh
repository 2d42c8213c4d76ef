# shellcheck shell=bash disable=SC2034 # DOCKER_UNAVAILABLE is read by the sourcing script
# Sourced (not run) by hack/images.sh and the containers tier: a Docker engine that
# answers, started here when it can be. This machine has no image registry and must route
# nothing off itself, so the engine runs without its bridge and without iptables rules
# (`--bridge=none --iptables=false`): containers get `--network none`, and only
# `docker build --network host` reaches the package registries.
#
# ensure_docker: returns 0 when `docker info` answers; otherwise tries, in order, Debian's
# docker.io (apt-get, as root) and starting dockerd in the background, and returns 1 with
# the reason in DOCKER_UNAVAILABLE (one sentence naming what failed).
#
# State: ${LORENZ_DOCKER_DIR:-$HOME/.cache/lorenz/docker} holds dockerd's log and pid.

DOCKER_UNAVAILABLE=""

docker_answers() { docker info >/dev/null 2>&1; }

# Debian's engine: docker.io brings dockerd, containerd 1.6 and runc 1.1.
install_docker_engine() {
  if [[ "$(id -u)" != 0 ]]; then
    DOCKER_UNAVAILABLE="dockerd is not installed and installing Debian's docker.io needs root"
    return 1
  fi
  if ! command -v apt-get >/dev/null 2>&1; then
    DOCKER_UNAVAILABLE="dockerd is not installed and there is no apt-get to install docker.io"
    return 1
  fi
  echo "[docker] installing Debian's docker.io (dockerd, containerd, runc)…" >&2
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null 2>&1; then
    apt-get update -qq >/dev/null 2>&1 || true
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null 2>&1; then
      DOCKER_UNAVAILABLE="apt-get install -y docker.io failed"
      return 1
    fi
  fi
}

start_dockerd() {
  local dir="${LORENZ_DOCKER_DIR:-$HOME/.cache/lorenz/docker}" waited=0
  if [[ "$(id -u)" != 0 ]]; then
    DOCKER_UNAVAILABLE="the Docker engine does not answer and starting dockerd needs root"
    return 1
  fi
  mkdir -p "$dir"
  echo "[docker] starting dockerd --bridge=none --iptables=false (log: $dir/dockerd.log)…" >&2
  # setsid: the engine outlives this script (a warm second run finds it answering).
  setsid dockerd --bridge=none --iptables=false --ip-masq=false \
    --pidfile "$dir/dockerd.pid" >>"$dir/dockerd.log" 2>&1 </dev/null &
  until docker_answers; do
    sleep 0.5
    waited=$((waited + 1))
    if ((waited > 120)); then
      DOCKER_UNAVAILABLE="dockerd did not answer within 60 s; $dir/dockerd.log ends with: $(tail -n 3 "$dir/dockerd.log" | tr '\n' ' ')"
      return 1
    fi
  done
}

ensure_docker() {
  DOCKER_UNAVAILABLE=""
  docker_answers && return 0
  if ! command -v dockerd >/dev/null 2>&1; then
    install_docker_engine || return 1
  fi
  if ! command -v docker >/dev/null 2>&1; then
    DOCKER_UNAVAILABLE="there is no docker command (Debian's docker.io provides it)"
    return 1
  fi
  docker_answers && return 0
  start_dockerd
}
