#!/usr/bin/env bash
# Resolves (and when needed builds) the binaries of the local control plane:
# kube-apiserver, etcd, kubectl, kube-controller-manager and helm, at the versions in
# hack/versions.env. No Docker, no downloads of release tarballs: everything is built from
# the Go module proxy, once, into a cache outside the project.
#
# Usage:
#   hack/tools.sh [--print-env]   print NAME=path lines for every tool, plus BIN_DIR
#   hack/tools.sh path <tool>     print the path of one tool (kubectl, etcd, …)
#
# Lookup order for each tool: TEST_ASSET_<TOOL> env (e.g. TEST_ASSET_KUBE_APISERVER),
# then $KUBEBUILDER_ASSETS/<tool>, then ${LORENZ_TOOLS_CACHE:-$HOME/.cache/lorenz/tools}/<tool>-<version>,
# else a build from source. Progress goes to stderr; stdout carries only the answer. A build
# says every LORENZ_PROGRESS_INTERVAL seconds (15) which step it is at, for how long, and how
# long the last build of that tool took (kept in <cache>/build-times.log).
set -euo pipefail

HACK_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=hack/versions.env
source "$HACK_DIR/versions.env"
# shellcheck source=hack/lib/progress.sh
source "$HACK_DIR/lib/progress.sh"
PROGRESS_PREFIX="[tools]"

CACHE_DIR="${LORENZ_TOOLS_CACHE:-$HOME/.cache/lorenz/tools}"
DURATIONS="$CACHE_DIR/build-times.log"
TOOLS=(kube-apiserver etcd kubectl kube-controller-manager helm)
# The real node's binaries (and the scheduler it needs: the process node binds Pods itself),
# from the same Kubernetes module: built only when asked for by
# name (`hack/tools.sh path kubelet`), never by --print-env, so the tiers that do not run a
# real node never pay for them.
NODE_TOOLS=(kubelet kube-proxy kube-scheduler)
# Kueue's manager, for the queueing tests (docs/queues.md), also built only when asked for by
# name. Its build keeps, beside the binary, the manifests of the same release the tests install:
# <cache>/kueue-<version>.manifests/{crds/*.yaml,webhook.yaml}.
EXTRA_TOOLS=(kueue)
# The real node's CSI storage (test/containers/csi-stack.ts), also built only when asked for by
# name: the kubernetes-csi sidecars and snapshot controller, and our own hostpath driver, which
# is built from this repository (test/support/csi-hostpath) and cached by a digest of its
# sources, so an edit rebuilds it. snapshot-controller keeps the snapshot CRDs of its release
# beside it: <cache>/snapshot-controller-<version>.manifests/crds/*.yaml.
CSI_TOOLS=(csi-provisioner csi-snapshotter snapshot-controller csi-hostpath)
CSI_HOSTPATH_SOURCE="$HACK_DIR/../test/support/csi-hostpath"

log() { echo "[tools] $*" >&2; }
die() {
  echo "[tools] error: $*" >&2
  exit 1
}

version_of() {
  case "$1" in
    kube-apiserver | kubectl | kube-controller-manager | kubelet | kube-proxy | kube-scheduler) echo "$KUBERNETES_VERSION" ;;
    etcd) echo "$ETCD_VERSION" ;;
    helm) echo "$HELM_VERSION" ;;
    kueue) echo "$KUEUE_VERSION" ;;
    csi-provisioner) echo "$CSI_PROVISIONER_VERSION" ;;
    csi-snapshotter | snapshot-controller) echo "$EXTERNAL_SNAPSHOTTER_VERSION" ;;
    csi-hostpath) csi_hostpath_digest ;;
    *) die "unknown tool '$1' (known: ${TOOLS[*]} ${NODE_TOOLS[*]} ${EXTRA_TOOLS[*]} ${CSI_TOOLS[*]})" ;;
  esac
}

# The driver's "version": a digest of its sources, so that the cache follows every edit.
csi_hostpath_digest() {
  [[ -f "$CSI_HOSTPATH_SOURCE/go.mod" ]] || die "no driver sources in $CSI_HOSTPATH_SOURCE"
  (cd "$CSI_HOSTPATH_SOURCE" && cat go.mod go.sum ./*.go) | sha256sum | cut -c1-16
}

# kube-apiserver -> KUBE_APISERVER
env_name_of() { echo "$1" | tr 'a-z-' 'A-Z_'; }

require_go() {
  command -v go >/dev/null 2>&1 ||
    die "cannot build $1: 'go' is not on PATH. Install Go (>= 1.26), or point TEST_ASSET_$(env_name_of "$1") or KUBEBUILDER_ASSETS at a prebuilt $1."
}

# If the module about to be built asks for a newer Go than the installed one, switch to the
# pinned fallback toolchain (fetched by the go command from the module proxy).
choose_toolchain() {
  local gomod="$1" wanted have
  wanted="$(awk '$1 == "go" { print $2; exit }' "$gomod")"
  have="$(go env GOVERSION)"
  have="${have#go}"
  if [[ -n "$wanted" && "$(printf '%s\n%s\n' "$have" "$wanted" | sort -V | tail -n1)" != "$have" ]]; then
    log "module wants Go $wanted, installed is $have: using GOTOOLCHAIN=$FALLBACK_GOTOOLCHAIN"
    export GOTOOLCHAIN="$FALLBACK_GOTOOLCHAIN"
  fi
}

# go build into a temporary name, then rename: a half-written binary never sits in the cache.
# -v names each package as it is built, into a log the heartbeat reads; a failure prints the
# log without those names (what is left is go's own messages).
go_build() {
  local out="$1" pkg="$2" ldflags="$3" log
  log="$PWD/$(basename "$out").go-build.log"
  progress_step "go build" "$log" go "$pkg"
  if ! CGO_ENABLED=0 go build -v -mod=mod -trimpath -ldflags="-s -w $ldflags" -o "$out.partial" "$pkg" 2>"$log"; then
    grep -Ev '^[A-Za-z0-9._~/-]+$' "$log" >&2 || true
    return 1
  fi
  mv -f "$out.partial" "$out"
}

# A throwaway module that requires k8s.io/kubernetes and pins every staging module
# (k8s.io/api, k8s.io/client-go, …) to the matching v0.<minor>.<patch> tag. The release's own
# `replace => ./staging/...` lines are ignored for a dependency, so they are regenerated here.
prepare_kubernetes_module() {
  local version="$1" dir="$2" gomod staging_version
  staging_version="v0.${version#v1.}"
  progress_step "downloading the module k8s.io/kubernetes@$version"
  gomod="$(go mod download -json "k8s.io/kubernetes@$version" | awk -F'"' '$2 == "GoMod" { print $4 }')"
  [[ -f "$gomod" ]] || die "could not download k8s.io/kubernetes@$version from the module proxy"
  choose_toolchain "$gomod"
  mkdir -p "$dir"
  {
    echo "module lorenz.local/kubernetes-build"
    echo
    awk '$1 == "go" { print; exit }' "$gomod"
    echo
    echo "require k8s.io/kubernetes $version"
    echo
    awk -v v="$staging_version" '
      $2 == "=>" && $3 ~ /^\.\/staging\/src\// { print "replace " $1 " => " $1 " " v }
    ' "$gomod"
  } >"$dir/go.mod"
  progress_step "downloading the modules k8s.io/kubernetes@$version needs"
  (cd "$dir" && go mod download k8s.io/kubernetes >/dev/null)
}

# A throwaway module that just requires one Go module, to build a command from it.
prepare_wrapper_module() {
  local module="$1" version="$2" dir="$3" gomod
  progress_step "downloading the module $module@$version"
  gomod="$(go mod download -json "$module@$version" | awk -F'"' '$2 == "GoMod" { print $4 }')"
  [[ -f "$gomod" ]] || die "could not download $module@$version from the module proxy"
  choose_toolchain "$gomod"
  mkdir -p "$dir"
  if [[ ! -f "$dir/go.mod" ]]; then
    (cd "$dir" && go mod init "lorenz.local/$(basename "$dir")" >/dev/null 2>&1)
  fi
  progress_step "downloading the modules $module@$version needs (go get)"
  (cd "$dir" && go get "$module@$version" >/dev/null 2>&1) ||
    (cd "$dir" && go get "$module@$version")
}

kube_version_ldflags() {
  local version="$1" minor
  minor="${version#v1.}"
  minor="${minor%%.*}"
  local pkg
  for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    printf -- '-X %s.gitVersion=%s -X %s.gitMajor=1 -X %s.gitMinor=%s -X %s.gitTreeState=clean ' \
      "$pkg" "$version" "$pkg" "$pkg" "$minor" "$pkg"
  done
}

# A writable copy of a downloaded module, to build as the main module: its own go.mod's
# `replace` lines then apply (go install <module>@<version> refuses a go.mod that has any).
prepare_module_copy() {
  local module="$1" version="$2" dir="$3" src
  progress_step "downloading the module $module@$version"
  src="$(go mod download -json "$module@$version" | awk -F'"' '$2 == "Dir" { print $4 }')"
  [[ -d "$src" ]] || die "could not download $module@$version from the module proxy"
  choose_toolchain "$src/go.mod"
  rm -rf "$dir"
  mkdir -p "$(dirname "$dir")"
  cp -r "$src" "$dir"
  chmod -R u+w "$dir"
}

# external-snapshotter's go.mod replaces its client module with ./client, a module of its own
# that the parent's zip leaves out: the client of the same release is put there.
add_snapshotter_client() {
  local version="$1" dir="$2" src
  progress_step "downloading the module github.com/kubernetes-csi/external-snapshotter/client/v8@$version"
  src="$(go mod download -json "github.com/kubernetes-csi/external-snapshotter/client/v8@$version" |
    awk -F'"' '$2 == "Dir" { print $4 }')"
  [[ -d "$src" ]] || die "could not download the snapshot client v8 $version"
  cp -r "$src" "$dir/client"
  chmod -R u+w "$dir/client"
}

# The snapshot CRDs (VolumeSnapshot, VolumeSnapshotContent, VolumeSnapshotClass) of a release.
copy_snapshot_crds() {
  local client_dir="$1" dest="$2"
  rm -rf "$dest.partial"
  mkdir -p "$dest.partial/crds"
  cp "$client_dir"/config/crd/snapshot.storage.k8s.io_*.yaml "$dest.partial/crds/"
  chmod -R u+w "$dest.partial"
  rm -rf "$dest"
  mv "$dest.partial" "$dest"
}

# The CRDs and the webhook configurations of a Kueue release, from its module's config/.
copy_kueue_manifests() {
  local module_dir="$1" dest="$2"
  [[ -d "$module_dir/config/components/crd/bases" ]] || die "no Kueue CRDs under $module_dir"
  rm -rf "$dest.partial"
  mkdir -p "$dest.partial/crds"
  cp "$module_dir"/config/components/crd/bases/*.yaml "$dest.partial/crds/"
  cp "$module_dir/config/components/webhook/manifests.yaml" "$dest.partial/webhook.yaml"
  chmod -R u+w "$dest.partial"
  rm -rf "$dest"
  mv "$dest.partial" "$dest"
}

# The steps of one build (run in the background by build_tool, which reports on them).
build_steps() {
  local tool="$1" version="$2" out="$3" work="$4"
  case "$tool" in
    kube-apiserver | kubectl | kube-controller-manager | kubelet | kube-proxy | kube-scheduler)
      prepare_kubernetes_module "$version" "$work"
      cd "$work"
      go_build "$out" "k8s.io/kubernetes/cmd/$tool" "$(kube_version_ldflags "$version")"
      ;;
    etcd)
      # The server module has relative replaces of its sibling modules: build it from a
      # wrapper that resolves them as ordinary dependencies.
      prepare_wrapper_module go.etcd.io/etcd/server/v3 "$version" "$work"
      cd "$work"
      go_build "$out" go.etcd.io/etcd/server/v3 ""
      ;;
    helm)
      prepare_wrapper_module helm.sh/helm/v3 "$version" "$work"
      cd "$work"
      go_build "$out" helm.sh/helm/v3/cmd/helm "-X helm.sh/helm/v3/internal/version.version=$version"
      ;;
    kueue)
      prepare_wrapper_module sigs.k8s.io/kueue "$version" "$work"
      cd "$work"
      copy_kueue_manifests "$(go list -m -f '{{.Dir}}' sigs.k8s.io/kueue)" "$out.manifests"
      go_build "$out" sigs.k8s.io/kueue/cmd/kueue ""
      ;;
    csi-provisioner)
      prepare_module_copy github.com/kubernetes-csi/external-provisioner/v6 "$version" "$work"
      cd "$work"
      go_build "$out" ./cmd/csi-provisioner "-X main.version=$version"
      ;;
    csi-snapshotter | snapshot-controller)
      prepare_module_copy github.com/kubernetes-csi/external-snapshotter/v8 "$version" "$work"
      add_snapshotter_client "$version" "$work"
      cd "$work"
      if [[ "$tool" == snapshot-controller ]]; then
        copy_snapshot_crds "$work/client" "$out.manifests"
      fi
      go_build "$out" "./cmd/$tool" "-X main.version=$version"
      ;;
    csi-hostpath)
      # Built from a copy, so that the build's log stays out of the repository.
      rm -rf "$work"
      cp -r "$CSI_HOSTPATH_SOURCE" "$work"
      cd "$work"
      choose_toolchain go.mod
      go_build "$out" . ""
      ;;
  esac
}

build_tool() {
  local tool="$1" version="$2" out="$3" work last
  require_go "$tool"
  case "$tool" in
    kube-apiserver | kubectl | kube-controller-manager | kubelet | kube-proxy | kube-scheduler) work="$CACHE_DIR/build/kubernetes-$version" ;;
    csi-snapshotter | snapshot-controller) work="$CACHE_DIR/build/external-snapshotter-$version" ;;
    *) work="$CACHE_DIR/build/$tool-$version" ;;
  esac
  last="$(progress_last_time "$DURATIONS" "$tool")"
  log "building $tool $version (${last:-no earlier build in this cache: a cold build takes minutes}; progress every $PROGRESS_INTERVAL s)…"
  local started=$SECONDS
  # The build's own stdout is not the answer: it goes to stderr with the progress.
  progress_run "building $tool $version" "$last" build_steps "$tool" "$version" "$out" "$work" >&2 ||
    die "building $tool $version failed (work dir: $work)"
  local took=$((SECONDS - started))
  progress_record "$DURATIONS" "$tool" "$version" "$took"
  log "built $tool $version in $(progress_elapsed "$took") -> $out"
}

# Prints the path of one tool, building it when no prebuilt copy is found.
resolve_tool() {
  local tool="$1" version env_var override cached
  version="$(version_of "$tool")"
  env_var="TEST_ASSET_$(env_name_of "$tool")"
  override="${!env_var:-}"
  if [[ -n "$override" ]]; then
    [[ -x "$override" ]] || die "$env_var=$override is not an executable file"
    echo "$override"
    return
  fi
  if [[ -n "${KUBEBUILDER_ASSETS:-}" && -x "$KUBEBUILDER_ASSETS/$tool" ]]; then
    echo "$KUBEBUILDER_ASSETS/$tool"
    return
  fi
  cached="$CACHE_DIR/$tool-$version"
  if [[ ! -x "$cached" ]]; then
    mkdir -p "$CACHE_DIR"
    # One builder at a time per cache: tests and a dev cluster may ask at once.
    exec {lock_fd}>"$CACHE_DIR/.build.lock"
    if ! flock -n "$lock_fd"; then
      log "waiting for another hack/tools.sh to finish building…"
      flock "$lock_fd"
    fi
    [[ -x "$cached" ]] || build_tool "$tool" "$version" "$cached"
    exec {lock_fd}>&-
  fi
  echo "$cached"
}

# A directory of symlinks named after the tools, to put on PATH. Keyed by the resolved paths
# so that differently configured callers never overwrite each other's links.
link_bin_dir() {
  local key dir tmp tool
  key="$(printf '%s\n' "$@" | sha256sum | cut -c1-12)"
  dir="$CACHE_DIR/bin/$key"
  if [[ ! -d "$dir" ]]; then
    tmp="$(mktemp -d "$CACHE_DIR/bin/.tmp.XXXXXX")"
    chmod 755 "$tmp"
    local i=0
    for tool in "${TOOLS[@]}"; do
      i=$((i + 1))
      ln -s "${!i}" "$tmp/$tool"
    done
    mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp" # lost a race: the winner made the same links
  fi
  echo "$dir"
}

print_env() {
  local tool paths=() path
  for tool in "${TOOLS[@]}"; do
    path="$(resolve_tool "$tool")"
    paths+=("$path")
  done
  mkdir -p "$CACHE_DIR/bin"
  local bin_dir
  bin_dir="$(link_bin_dir "${paths[@]}")"
  local i=0
  for tool in "${TOOLS[@]}"; do
    printf '%s=%q\n' "$(env_name_of "$tool")" "${paths[$i]}"
    i=$((i + 1))
  done
  printf 'BIN_DIR=%q\n' "$bin_dir"
}

case "${1:---print-env}" in
  --print-env) print_env ;;
  path)
    [[ $# -eq 2 ]] || die "usage: hack/tools.sh path <tool>   (tools: ${TOOLS[*]} ${NODE_TOOLS[*]} ${EXTRA_TOOLS[*]} ${CSI_TOOLS[*]})"
    resolve_tool "$2"
    ;;
  -h | --help) sed -n '2,/^set -euo pipefail$/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' ;;
  *) die "unknown argument '$1' (usage: hack/tools.sh [--print-env] | path <tool>)" ;;
esac
