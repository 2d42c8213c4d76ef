#!/usr/bin/env bash
# A real node for the local control plane: kubelet (built by hack/tools.sh from the same
# Kubernetes module as kube-apiserver), Debian's containerd and runc, Debian's CNI plugins
# (bridge + host-local), and kube-scheduler (the control plane has none: the process node
# binds Pods itself). Images come from hack/images.sh and are imported into containerd
# directly: there is no registry.
#
#   hack/real-node.sh up <dir> <kubeconfig> <ca.crt> <ca.key>   start; idempotent
#   hack/real-node.sh down <dir>                                 stop what up started
#
# <kubeconfig> is the cluster's admin kubeconfig (for the scheduler and to wait for the
# Node); the CA signs the kubelet's client certificate (system:node:<name>) and its serving
# certificate (the apiserver checks it with --kubelet-certificate-authority).
#
# Network rules of this machine: Pods get addresses on a bridge that exists only here
# (LORENZ_BRIDGE lorenz0, LORENZ_POD_CIDR 10.88.0.0/24), no masquerade and no default route,
# so nothing is routed off the machine. Needs root (containerd, kubelet). Two nodes on one
# machine need their own LORENZ_NODE_NAME, LORENZ_NODE_IP, LORENZ_KUBELET_PORT, LORENZ_BRIDGE
# and LORENZ_POD_CIDR. One node of a name at a time (hack/lib/node-lock.sh): a second `up`
# of a name in use waits for the first's `down` (at most LORENZ_NODE_LOCK_WAIT seconds); the
# lock's owner is LORENZ_NODE_OWNER_PID, by default the process that ran `up`.
# shellcheck source-path=SCRIPTDIR
set -euo pipefail
shopt -s globstar nullglob

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# shellcheck source=lib/node-lock.sh
source "$ROOT/hack/lib/node-lock.sh"
NODE_NAME="${LORENZ_NODE_NAME:-lorenz-real-node}"
POD_CIDR="${LORENZ_POD_CIDR:-10.88.0.0/24}"
KUBELET_PORT="${LORENZ_KUBELET_PORT:-10250}"
# The kubelet refuses a loopback node IP, and this machine has no dummy links: the node's
# address is a /32 on lo, local to this machine, routed nowhere.
NODE_IP="${LORENZ_NODE_IP:-10.89.0.1}"
BRIDGE="${LORENZ_BRIDGE:-lorenz0}"
CNI_BIN_DIR="/usr/lib/cni"
SAMPLE_AGENT_IMAGE="node:24.21.0-bookworm-slim"
# LORENZ_KUBE_PROXY=1: kube-proxy too (iptables mode), for Pods that talk to Services (the
# chart's controller to `kubernetes`). Its rules are this machine's: one such node at a time.
KUBE_PROXY="${LORENZ_KUBE_PROXY:-0}"
SERVICE_CIDR="${LORENZ_SERVICE_CIDR:-10.0.0.0/24}"

say() { echo "[real-node] $*" >&2; }
die() {
  echo "[real-node] error: $*" >&2
  exit 1
}

usage() {
  sed -n '2,/^# shellcheck/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
}

# Debian's packages for what the node runs: containerd, runc, the CNI plugins.
ensure_packages() {
  local missing=()
  command -v containerd >/dev/null 2>&1 || missing+=(containerd)
  command -v runc >/dev/null 2>&1 || missing+=(runc)
  [[ -x "$CNI_BIN_DIR/bridge" && -x "$CNI_BIN_DIR/host-local" ]] || missing+=(containernetworking-plugins)
  ((${#missing[@]} == 0)) && return
  say "installing Debian's ${missing[*]}…"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1; } ||
    die "apt-get install -y ${missing[*]} failed"
}

running() { [[ -f "$1" ]] && kill -0 "$(cat "$1")" 2>/dev/null; }

# setsid: each daemon outlives this script; its pid goes to <dir>/<name>.pid.
start_daemon() {
  local dir="$1" name="$2"
  shift 2
  running "$dir/$name.pid" && return
  setsid "$@" >>"$dir/logs/$name.log" 2>&1 </dev/null &
  echo $! >"$dir/$name.pid"
}

# A certificate signed by the cluster CA: <out>.crt and <out>.key.
sign() {
  local out="$1" subject="$2" san="$3" ca_cert="$4" ca_key="$5"
  [[ -f "$out.crt" ]] && return
  openssl req -new -newkey rsa:2048 -nodes -keyout "$out.key" -subj "$subject" \
    -out "$out.csr" 2>/dev/null
  openssl x509 -req -in "$out.csr" -CA "$ca_cert" -CAkey "$ca_key" -CAcreateserial \
    -days 365 -out "$out.crt" -extfile <(printf '%s\n' "$san") 2>/dev/null ||
    die "signing $out.crt with $ca_cert failed"
  rm -f "$out.csr"
}

# With kube-proxy (LORENZ_KUBE_PROXY=1), Pods get one more route: the Service range, through
# the bridge to this machine, where kube-proxy's rules send it on. Still no default route.
service_route() {
  [[ "$KUBE_PROXY" == 1 ]] && printf ', "routes": [{ "dst": "%s" }]' "$SERVICE_CIDR"
  return 0
}

write_containerd_config() {
  local dir="$1" pause="$2"
  cat >"$dir/containerd/config.toml" <<TOML
# Its own containerd (not Docker's): own root, state and socket.
version = 2
root = "$dir/containerd/root"
state = "$dir/containerd/state"
[grpc]
  address = "$dir/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  # Built here (hack/pause) and imported: registry.k8s.io is out of reach.
  sandbox_image = "$pause"
  # This machine withholds CAP_SYS_RESOURCE even from root, so no process may lower its
  # oom_score_adj (the kubelet asks -998 for sandboxes: runc init fails "Permission denied").
  # Scores below containerd's own are raised to it instead.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        # The kubelet's cgroupDriver below: cgroupfs (no systemd in this machine's init).
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$dir/cni/net.d"
TOML
  # bridge + host-local: addresses from POD_CIDR on a bridge of this machine only. No
  # ipMasq and no routes: a Pod reaches the host's bridge address and nothing beyond it.
  cat >"$dir/cni/net.d/10-lorenz.conflist" <<JSON
{
  "cniVersion": "1.0.0",
  "name": "lorenz",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "ipam": { "type": "host-local", "ranges": [[{ "subnet": "$POD_CIDR" }]]$(service_route) }
    }
  ]
}
JSON
}

write_kubelet_config() {
  local dir="$1" ca_cert="$2"
  cat >"$dir/kubelet/config.yaml" <<YAML
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: $KUBELET_PORT
readOnlyPort: 0
authentication:
  anonymous: { enabled: false }
  webhook: { enabled: true }
  x509: { clientCAFile: "$ca_cert" }
authorization: { mode: Webhook }
tlsCertFile: "$dir/pki/kubelet-serving.crt"
tlsPrivateKeyFile: "$dir/pki/kubelet-serving.key"
containerRuntimeEndpoint: "unix://$dir/containerd/containerd.sock"
cgroupDriver: cgroupfs
# Its own cgroup root: a kubelet removes the Pod cgroups it does not know under its root, so
# two nodes on one machine (a dev cluster and a test) must not share /kubepods.
cgroupRoot: "/$NODE_NAME"
# Off: the default port (10248) would clash with a second node on this machine.
healthzPort: 0
# This machine runs cgroup v1. The kubelet refuses to start on v1 since v1.35 unless told
# so here; v1 is all there is on this machine.
failCgroupV1: false
failSwapOn: false
# The machine is shared with other test runs: evict only when it is really out of room.
evictionHard: { memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%" }
imageGCHighThresholdPercent: 100
# No DNS server in this cluster; Pods get no resolver rather than the host's.
resolvConf: ""
staticPodPath: ""
YAML
  cat >"$dir/kubelet/kubeconfig" <<KUBECONFIG
apiVersion: v1
kind: Config
clusters:
  - name: local
    cluster: { server: "$SERVER", certificate-authority: "$ca_cert" }
users:
  - name: $NODE_NAME
    user:
      client-certificate: "$dir/pki/kubelet-client.crt"
      client-key: "$dir/pki/kubelet-client.key"
contexts:
  - name: local
    context: { cluster: local, user: $NODE_NAME }
current-context: local
KUBECONFIG
}

import_images() {
  local dir="$1"
  shift
  local image ref missing=()
  local present
  present="$(ctr --address "$dir/containerd/containerd.sock" -n k8s.io images ls -q)"
  for image in "$@"; do
    # containerd's names: one-part repositories (lorenz-base) are under library/.
    [[ "$image" == */* ]] && ref="docker.io/$image" || ref="docker.io/library/$image"
    grep -qxF "$ref" <<<"$present" || missing+=("$image")
  done
  ((${#missing[@]} == 0)) && return
  say "importing ${missing[*]} into containerd"
  docker save "${missing[@]}" |
    ctr --address "$dir/containerd/containerd.sock" -n k8s.io images import - >/dev/null ||
    die "ctr images import failed"
}

up() {
  [[ $# -eq 4 ]] || {
    usage
    exit 2
  }
  local dir="$1" kubeconfig="$2" ca_cert="$3" ca_key="$4" images kubelet scheduler kubectl
  [[ "$(id -u)" == 0 ]] || die "the real node needs root (containerd, kubelet, network namespaces)"
  [[ -f "$kubeconfig" && -f "$ca_cert" && -f "$ca_key" ]] ||
    die "missing $kubeconfig, $ca_cert or $ca_key"
  SERVER="$(awk '/server:/ { print $2; exit }' "$kubeconfig")"
  ensure_packages
  mkdir -p "$dir"/{logs,pki,containerd,cni/net.d,kubelet/root}
  dir="$(cd "$dir" && pwd)"
  node_lock_acquire "$NODE_NAME" "$dir" "${LORENZ_NODE_OWNER_PID:-$PPID}" "$ROOT" ||
    die "node/$NODE_NAME is in use (above); give this node another LORENZ_NODE_NAME, LORENZ_NODE_IP, LORENZ_KUBELET_PORT, LORENZ_BRIDGE and LORENZ_POD_CIDR, or wait"
  say "images (hack/images.sh)…"
  images="$("$ROOT/hack/images.sh" --print-env)" || die "hack/images.sh failed"
  local pause operator agent base
  base="$(sed -n 's/^BASE_IMAGE=//p' <<<"$images")"
  pause="$(sed -n 's/^PAUSE_IMAGE=//p' <<<"$images")"
  operator="$(sed -n 's/^OPERATOR_IMAGE=//p' <<<"$images")"
  agent="$(sed -n 's/^AGENT_IMAGE=//p' <<<"$images")"
  say "kubelet and kube-scheduler (hack/tools.sh; a cold build takes minutes)…"
  kubelet="$("$ROOT/hack/tools.sh" path kubelet)"
  scheduler="$("$ROOT/hack/tools.sh" path kube-scheduler)"
  kubectl="$("$ROOT/hack/tools.sh" path kubectl)"

  sign "$dir/pki/kubelet-client" "/O=system:nodes/CN=system:node:$NODE_NAME" \
    "extendedKeyUsage=clientAuth" "$ca_cert" "$ca_key"
  sign "$dir/pki/kubelet-serving" "/CN=$NODE_NAME" \
    "$(printf 'extendedKeyUsage=serverAuth\nsubjectAltName=IP:%s,DNS:%s' "$NODE_IP" "$NODE_NAME")" \
    "$ca_cert" "$ca_key"

  ip -4 addr show dev lo | grep -qF " $NODE_IP/32 " || ip addr add "$NODE_IP/32" dev lo ||
    die "could not add the node address $NODE_IP/32 to lo"
  write_containerd_config "$dir" "docker.io/$pause"
  start_daemon "$dir" containerd containerd --config "$dir/containerd/config.toml"
  local waited=0
  until ctr --address "$dir/containerd/containerd.sock" version >/dev/null 2>&1; do
    running "$dir/containerd.pid" || die "containerd exited; see $dir/logs/containerd.log"
    sleep 0.2
    waited=$((waited + 1))
    ((waited < 150)) || die "containerd did not answer in 30 s; see $dir/logs/containerd.log"
  done
  import_images "$dir" "$pause" "$operator" "$agent" "$base"
  # The samples' agent image is the public node:24.21.0-bookworm-slim; the base built here is
  # that Node on that Debian (plus git), so it answers to that name on this node only.
  ctr --address "$dir/containerd/containerd.sock" -n k8s.io images tag --force \
    "docker.io/library/$base" "docker.io/library/$SAMPLE_AGENT_IMAGE" >/dev/null ||
    die "could not tag $base as $SAMPLE_AGENT_IMAGE in containerd"

  write_kubelet_config "$dir" "$ca_cert"
  local hierarchy
  for hierarchy in /sys/fs/cgroup/*/; do
    [[ -f "$hierarchy/cgroup.procs" ]] && mkdir -p "$hierarchy$NODE_NAME"
  done
  start_daemon "$dir" kubelet "$kubelet" --config "$dir/kubelet/config.yaml" \
    --kubeconfig "$dir/kubelet/kubeconfig" --root-dir "$dir/kubelet/root" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP"
  start_daemon "$dir" kube-scheduler "$scheduler" --kubeconfig "$kubeconfig" \
    --authentication-kubeconfig "$kubeconfig" --authorization-kubeconfig "$kubeconfig" \
    --leader-elect=false --bind-address 127.0.0.1 --secure-port 0

  if [[ "$KUBE_PROXY" == 1 ]]; then
    local proxy
    proxy="$("$ROOT/hack/tools.sh" path kube-proxy)"
    # No sysctl it would change for the whole machine: conntrack sizes and timeouts, and
    # route_localnet (localhost NodePorts) are left as they are. Its ports follow the
    # kubelet's, so that they are this node's.
    start_daemon "$dir" kube-proxy "$proxy" --kubeconfig "$kubeconfig" \
      --hostname-override "$NODE_NAME" --proxy-mode iptables --cluster-cidr "$POD_CIDR" \
      --conntrack-max-per-core 0 --conntrack-tcp-timeout-established 0 \
      --conntrack-tcp-timeout-close-wait 0 --iptables-localhost-nodeports=false \
      --metrics-bind-address "127.0.0.1:$((KUBELET_PORT + 1000))" \
      --healthz-bind-address "127.0.0.1:$((KUBELET_PORT + 1001))"
    touch "$dir/kube-proxy.started"
  fi
  say "waiting for node/$NODE_NAME to be Ready…"
  waited=0
  until "$kubectl" --kubeconfig "$kubeconfig" wait --for=condition=Ready "node/$NODE_NAME" \
    --timeout=5s >/dev/null 2>&1; do
    running "$dir/kubelet.pid" || die "kubelet exited; $dir/logs/kubelet.log ends with: $(tail -n 5 "$dir/logs/kubelet.log")"
    waited=$((waited + 1))
    ((waited < 24)) || die "node/$NODE_NAME not Ready in 2 minutes; see $dir/logs/kubelet.log"
  done
  # The node lifecycle controller, which lifts this taint on a real cluster, is not among
  # the control plane's lean controllers (hack/cluster): the node lifts it, as the process
  # node does.
  "$kubectl" --kubeconfig "$kubeconfig" taint node "$NODE_NAME" \
    node.kubernetes.io/not-ready:NoSchedule- >/dev/null 2>&1 || true
  say "node/$NODE_NAME Ready (images: $operator, $agent)"
  echo "OPERATOR_IMAGE=$operator"
  echo "AGENT_IMAGE=$agent"
  echo "SAMPLE_AGENT_IMAGE=$SAMPLE_AGENT_IMAGE"
}

down() {
  [[ $# -eq 1 ]] || {
    usage
    exit 2
  }
  local dir="$1" whole=1
  [[ -d "$dir" ]] && dir="$(cd "$dir" && pwd)"
  # Another live owner's node of this name: its cgroup root, bridge and address stay.
  if node_lock_held_by_other "$NODE_NAME" "$dir"; then
    say "node/$NODE_NAME is held by pid $LOCK_PID (state $LOCK_DIR): stopping only what $dir started"
    whole=0
  fi
  stop_node "$dir" "$whole"
  if ((whole)); then node_lock_release "$NODE_NAME" "$dir"; fi
  say "down"
}

# A stale lock's node (hack/lib/node-lock.sh): the owner is gone, what it started goes.
node_lock_on_stale() { stop_node "$1" 1; }

# stop_node <dir> <whole>: the daemons <dir> started and their mounts; with <whole> 1, what
# belongs to the node's identity too (its cgroup root, bridge, address, kube-proxy's rules).
stop_node() {
  local dir="$1" whole="$2" name pid
  for name in kube-proxy kube-scheduler kubelet containerd; do
    if running "$dir/$name.pid"; then
      pid="$(cat "$dir/$name.pid")"
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -KILL "$pid" 2>/dev/null || true
    fi
    rm -f "$dir/$name.pid"
  done
  # The containers' shims outlive containerd; they belong to this node's socket only.
  pkill_shims "$dir"
  if ((whole)); then stop_identity "$dir"; fi
  # The kubelet's volume mounts (projected, emptyDir on tmpfs) and containerd's rootfs
  # mounts, deepest first, so the state directory can be removed.
  # (No mount left is no failure: under pipefail grep's 1 would end `down` here.)
  findmnt -rn -o TARGET | { grep -F "$dir/" || true; } | sort -r | while read -r target; do
    umount "$target" 2>/dev/null || umount -l "$target" 2>/dev/null || true
  done
}

stop_identity() {
  local dir="$1" pid
  # A stopped kubelet leaves its Pods running: every process in this node's cgroup root is
  # one of its containers (the root is the node's own, see cgroupRoot), and nothing else.
  local procs
  for procs in /sys/fs/cgroup/memory/"$NODE_NAME"/**/cgroup.procs; do
    [[ -f "$procs" ]] || continue
    while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done <"$procs"
  done
  if [[ -f "$dir/kube-proxy.started" ]]; then
    # Its KUBE-* chains outlive it; --cleanup removes them.
    "$("$ROOT/hack/tools.sh" path kube-proxy)" --cleanup >/dev/null 2>&1 || true
    rm -f "$dir/kube-proxy.started"
  fi
  ip link delete "$BRIDGE" 2>/dev/null || true
  # The node's cgroup root (cgroupRoot), emptied by the kubelet: removed deepest first.
  local hierarchy
  for hierarchy in /sys/fs/cgroup/*/; do
    if [[ -d "$hierarchy$NODE_NAME" ]]; then
      find "$hierarchy$NODE_NAME" -depth -type d -exec rmdir {} + 2>/dev/null || true
    fi
  done
  ip addr del "$NODE_IP/32" dev lo 2>/dev/null || true
}

# Only shims started for this node's containerd (their command line names its socket).
pkill_shims() {
  local dir="$1" pid
  for pid in $(pgrep -f containerd-shim-runc-v2 || true); do
    if tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF "$dir/containerd/containerd.sock"; then
      kill -KILL "$pid" 2>/dev/null || true
    fi
  done
}

case "${1-}" in
  up)
    shift
    up "$@"
    ;;
  down)
    shift
    down "$@"
    ;;
  -h | --help) usage ;;
  *)
    usage
    exit 2
    ;;
esac
