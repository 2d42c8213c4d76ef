#!/usr/bin/env bash
# Builds the operator image (Dockerfile) and the example agent image
# (examples/agent-image/Dockerfile) on this machine, without an image registry: both are
# built on a base image made here instead of the public node:24 image.
#
# Usage:
#   hack/images.sh [--print-env]   build what is missing; print BASE_IMAGE=, OPERATOR_IMAGE=,
#                                  AGENT_IMAGE=, PAUSE_IMAGE= lines (stdout carries only those)
# Exit status: 0 built or found; 3 no Docker engine (none installed or startable, said why);
# 1 anything else (a build that failed, with its log).
#
# The base (lorenz-base:<digest>) is Debian bookworm made by `debootstrap --variant=minbase`
# with bash, git and ca-certificates, plus Node 24 from the npm registry's `node` package
# (the project's own node_modules/node, so the images run the Node the tests run) and npm
# from the registry's `npm` package. The project's Dockerfiles take it through their
# BASE_IMAGE build argument; their default stays the public image.
#
# Every image is tagged with a digest of its inputs and skipped when that tag exists, so a
# warm run builds nothing: the base by the debootstrap recipe, the node binary and the npm
# version; the operator image by the base and every file of its build context (the
# .dockerignore exceptions) and the Dockerfile; the agent image by the base and
# examples/agent-image/; the pause image (the real node's Pod sandbox) by hack/pause and
# the Go version. debootstrap's root filesystem is cached as a tarball in
# ${LORENZ_IMAGES_CACHE:-$HOME/.cache/lorenz/images} (46 s to make, 0 to reuse).
#
# While a step runs it says every LORENZ_PROGRESS_INTERVAL seconds (15), on stderr, which
# step it is at (the Dockerfile's instruction), for how long, and how long it took the last
# time (kept in the cache's build-times.log).
# shellcheck source-path=SCRIPTDIR
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CACHE_DIR="${LORENZ_IMAGES_CACHE:-$HOME/.cache/lorenz/images}"
# shellcheck source=versions.env
source "$ROOT/hack/versions.env"
# shellcheck source=lib/docker.sh
source "$ROOT/hack/lib/docker.sh"
# shellcheck source=lib/progress.sh
source "$ROOT/hack/lib/progress.sh"
PROGRESS_PREFIX="[images]"
DURATIONS="$CACHE_DIR/build-times.log"

SUITE="bookworm"
MIRROR="http://deb.debian.org/debian"
# bash is in minbase already; named so that the recipe says what the images rely on.
PACKAGES="bash,ca-certificates,git"
# Bumped whenever the way the base is put together changes (not its inputs).
BASE_RECIPE="2"

say() { echo "[images] $*" >&2; }
die() {
  echo "[images] error: $*" >&2
  exit 1
}

case "${1-}" in
  "" | --print-env) ;;
  -h | --help)
    sed -n '2,/^# shellcheck/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
  *)
    echo "usage: hack/images.sh [--print-env | --help]" >&2
    exit 2
    ;;
esac

sha() { sha256sum | cut -c1-16; }

# timed <name> <what> <log> <kind> <command> [args…]: runs a long step with its output in
# <log>, saying what it does with the last time's duration first, then a heartbeat while it
# runs (progress_run), and records how long it took. Returns the command's status.
timed() {
  local name="$1" what="$2" log="$3" kind="$4" last started="$SECONDS" status=0
  shift 4
  last="$(progress_last_time "$DURATIONS" "$name")"
  say "$what${last:+ ($last)}…"
  progress_run "$what" "$last" progress_logged "" "$log" "$kind" "$@" || status=$?
  ((status != 0)) || progress_record "$DURATIONS" "$name" image "$((SECONDS - started))"
  return "$status"
}
image_exists() { docker image inspect "$1" >/dev/null 2>&1; }

# Every file under the given paths, by path and content, in a stable order.
hash_paths() {
  (cd "$ROOT" && find "$@" -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum) | sha
}

# The operator image's build context as .dockerignore lets it through: its `!` lines.
context_paths() {
  sed -n 's#^!\(.*\)$#\1#p' "$ROOT/.dockerignore" | sed 's#/\*\*$##'
}

# debootstrap's root filesystem, cached as a tarball; returns its path on stdout.
rootfs_tarball() {
  local key tarball work
  key="$(printf '%s\n' "$SUITE" "$MIRROR" "$PACKAGES" "$(debootstrap --version)" | sha)"
  tarball="$CACHE_DIR/debootstrap-$SUITE-minbase-$key.tar"
  if [[ -f "$tarball" ]]; then
    echo "$tarball"
    return
  fi
  [[ "$(id -u)" == 0 ]] || die "debootstrap needs root (it makes device nodes and chroots)"
  work="$(mktemp -d "$CACHE_DIR/rootfs.XXXXXX")"
  if ! timed debootstrap "debootstrap --variant=minbase $SUITE" "$work/debootstrap.log" lines \
    debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$work/rootfs" "$MIRROR"; then
    tail -n 20 "$work/debootstrap.log" >&2
    die "debootstrap failed (log above; the Debian mirror is $MIRROR)"
  fi
  # The host's resolver and name do not belong in an image (the engine provides both); the
  # package lists are fetched again by any build that installs packages.
  rm -rf "$work/rootfs/var/lib/apt/lists/"* "$work/rootfs/var/cache/apt/"*.bin \
    "$work/rootfs/etc/resolv.conf" "$work/rootfs/etc/hostname"
  # The same sources as Debian's own images: updates and security too.
  rm -f "$work/rootfs/etc/apt/sources.list"
  cat >"$work/rootfs/etc/apt/sources.list.d/debian.sources" <<SOURCES
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SOURCES
  tar --numeric-owner -C "$work/rootfs" -cf "$tarball.partial" .
  mv -f "$tarball.partial" "$tarball"
  rm -rf "$work"
  echo "$tarball"
}

# npm from the registry's npm package (the node package carries only the node binary).
npm_tarball() {
  local tarball="$CACHE_DIR/npm-$NPM_VERSION.tgz"
  if [[ ! -f "$tarball" ]]; then
    say "fetching npm $NPM_VERSION from the npm registry…"
    (cd "$CACHE_DIR" && npm pack --silent "npm@$NPM_VERSION" >/dev/null) ||
      die "npm pack npm@$NPM_VERSION failed"
  fi
  echo "$tarball"
}

# The CA certificates this machine adds to Debian's (/usr/local/share/ca-certificates): where
# the registries are reached through a TLS-inspecting proxy, builds on the base must trust
# it as the host does. Only the locally built base gets them; the public image is untouched.
local_cas() {
  find /usr/local/share/ca-certificates -type f -name '*.crt' 2>/dev/null | LC_ALL=C sort
}

build_base() {
  local node rootfs rootfs_image npm digest tag context cas=() trust=""
  node="$(readlink -f "$ROOT/node_modules/node/bin/node" 2>/dev/null || true)"
  [[ -x "$node" ]] || die "no Node 24 in node_modules/node (run npm ci first)"
  rootfs="$(rootfs_tarball)"
  npm="$(npm_tarball)"
  mapfile -t cas < <(local_cas)
  digest="$(printf '%s\n' "$BASE_RECIPE" "$(basename "$rootfs")" \
    "$(sha256sum <"$node")" "$(sha256sum <"$npm")" "$(cat /dev/null "${cas[@]}" | sha)" | sha)"
  tag="lorenz-base:$digest"
  if image_exists "$tag"; then
    echo "$tag"
    return
  fi
  rootfs_image="lorenz-rootfs:$(basename "$rootfs" .tar | sed 's/.*-//')"
  if ! image_exists "$rootfs_image"; then
    say "docker import $rootfs_image"
    docker import --change 'CMD ["bash"]' "$rootfs" "$rootfs_image" >/dev/null
  fi
  context="$(mktemp -d)"
  cp "$node" "$context/node"
  mkdir -p "$context/npm"
  tar -xzf "$npm" -C "$context/npm" --strip-components=1
  mkdir -p "$context/cas"
  if ((${#cas[@]} > 0)); then
    cp "${cas[@]}" "$context/cas/"
    # Node reads its own CA list, not the system's, unless told.
    trust="ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt"
  fi
  # The layout of the public node image: node, npm and npx in /usr/local.
  cat >"$context/Dockerfile" <<DOCKERFILE
FROM $rootfs_image
COPY node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY cas/ /usr/local/share/ca-certificates/
RUN update-ca-certificates >/dev/null \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
$trust
CMD ["node"]
DOCKERFILE
  if ! DOCKER_BUILDKIT=0 timed lorenz-base \
    "building $tag (rootfs + node $("$node" --version) + npm $NPM_VERSION)" \
    "$CACHE_DIR/base.build.log" docker docker build --network none -t "$tag" "$context"; then
    tail -n 30 "$CACHE_DIR/base.build.log" >&2
    die "building the base image $tag failed (log: $CACHE_DIR/base.build.log)"
  fi
  rm -rf "$context"
  echo "$tag"
}

# The Pod sandbox image of the real node: hack/pause, a static Go binary, alone in an image.
build_pause() {
  local digest tag work
  digest="$(printf '%s\n' "$(go env GOVERSION 2>/dev/null)" "$(hash_paths hack/pause)" | sha)"
  tag="lorenz-local/pause:$digest"
  if image_exists "$tag"; then
    echo "$tag"
    return
  fi
  command -v go >/dev/null 2>&1 || die "building the pause image needs go (1.22 or newer)"
  work="$(mktemp -d)"
  say "building $tag"
  (cd "$ROOT/hack/pause" && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$work/pause" .) ||
    die "go build of hack/pause failed"
  tar --numeric-owner --owner=0 --group=0 -C "$work" -cf - pause |
    docker import --change 'ENTRYPOINT ["/pause"]' --change 'USER 65535:65535' - "$tag" >/dev/null
  rm -rf "$work"
  echo "$tag"
}

# docker build on the given base, unless the tag for these inputs exists already.
build_on() {
  local base="$1" name="$2" context="$3" digest="$4" tag
  tag="lorenz-local/$name:$digest"
  if ! image_exists "$tag"; then
    # --network host: npm ci / apt-get reach the registries; the engine has no bridge.
    if ! DOCKER_BUILDKIT=0 timed "$name" "building $tag on $base" "$CACHE_DIR/$name.build.log" \
      docker docker build --network host --build-arg "BASE_IMAGE=$base" -t "$tag" "$context"; then
      tail -n 30 "$CACHE_DIR/$name.build.log" >&2
      die "docker build of $name failed (log: $CACHE_DIR/$name.build.log)"
    fi
  fi
  echo "$tag"
}

mkdir -p "$CACHE_DIR"
if ! ensure_docker; then
  # A distinct status: the containers tier skips (visibly) on this one, and fails on any other.
  echo "[images] error: no Docker engine: $DOCKER_UNAVAILABLE" >&2
  exit 3
fi
command -v debootstrap >/dev/null 2>&1 || {
  say "installing Debian's debootstrap…"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null 2>&1 ||
    die "debootstrap is not installed and apt-get install -y debootstrap failed"
}

# One build at a time: two runs would debootstrap into the same cache.
exec {lock_fd}>"$CACHE_DIR/.build.lock"
flock "$lock_fd"

base="$(build_base)"
mapfile -t context < <(context_paths)
operator_digest="$(printf '%s\n' "$base" "$(hash_paths Dockerfile .dockerignore "${context[@]}")" | sha)"
operator="$(build_on "$base" lorenz "$ROOT" "$operator_digest")"
agent_digest="$(printf '%s\n' "$base" "$(hash_paths examples/agent-image)" | sha)"
agent="$(build_on "$base" lorenz-agent "$ROOT/examples/agent-image" "$agent_digest")"
pause="$(build_pause)"

echo "BASE_IMAGE=$base"
echo "OPERATOR_IMAGE=$operator"
echo "AGENT_IMAGE=$agent"
echo "PAUSE_IMAGE=$pause"
