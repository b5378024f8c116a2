# Test clusters as real processes. Source this file, then call
# cluster_start (one meta, one data service, one FUSE mount on loopback) or
# multi_start N (one meta, data nodes 1..N, no mount; with NETNS=1 every node
# and meta live in network namespaces this file creates). Everything is
# stopped, unmounted and deleted on exit, namespaces included, whatever the
# exit path.
#
#   T0FS           the t0fs binary (set by ctest)
#   CLUSTER_DIR    temp directory of this cluster (after cluster_start)
#   MNT            the mount point
#   META_ADDR      host:port of meta
#   CLUSTER_STOP_ALSO  a command cluster_stop runs last (e.g. ceph_stop of
#                  a server the test started before the cluster)
#   META_FLAGS     extra flags for `t0fs meta` (array; set before starting)
#   NODE_FLAGS     extra flags for every `t0fs data` of multi_start (array)
#   NODE_ADDRS[i]  host:port of data node i (multi_start)
#   LOCAL_CHUNK_SIZE  chunk size under placement=local (default: the cluster's
#                  chunk size, so tests see small chunks; 64G = the product's)
#   META_STORE     postgres: meta keeps its store in a PostgreSQL 15 server of
#                  its own (tests/lib/postgres.sh), started with the cluster
#                  and removed with it (skip (77) without postgresql-15);
#                  unset: SQLite in CLUSTER_DIR
#   FUSE_URING     on: mounts take requests through FUSE over io_uring (the
#                  fuse module's enable_uring is turned on for the mount's
#                  INIT and restored right after; skip (77) where the kernel
#                  lacks it); off: /dev/fuse reads only; unset: as configured

set -euo pipefail
T0FS=${T0FS:?set T0FS to the t0fs binary}
CLUSTER_DIR=""
CLUSTER_STOP_ALSO=""
META_PID="" DATA_PID="" MOUNT_PID=""
declare -a META_FLAGS=() NODE_FLAGS=() NODE_PIDS=() NODE_ADDRS=()
NS_TAG=""  # set by multi_start with NETNS=1: namespaces t0h-TAG (meta, bridge) and t0n-TAG-i

source "$(dirname "${BASH_SOURCE[0]}")/util.sh"
META_PG_URL=""
case "${META_STORE:-}" in
  "") ;;
  postgres) source "$(dirname "${BASH_SOURCE[0]}")/postgres.sh" ;;
  *) fail "META_STORE must be postgres or unset" ;;
esac

# meta_store_start: the PostgreSQL server of META_STORE=postgres (after the
# EXIT trap is set: cluster_stop removes it).
meta_store_start() {
  [[ "${META_STORE:-}" == postgres ]] || return 0
  [[ -z "$NS_TAG" ]] || fail "META_STORE=postgres is not supported with NETNS=1"
  if ! pg_usable; then
    log "SKIP: META_STORE=postgres needs root and Debian's postgresql-15"
    exit 77
  fi
  pg_start meta_store
  META_PG_URL=$(pg_url meta_store)
}

is_mounted() { grep -q " $1 fuse.t0fs " /proc/mounts; }
# mount_attr: the fields of the mount's user.t0fs.mount attribute, one key=value a line.
mount_attr() {
  timeout 10 python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.t0fs.mount").decode())' "$MNT" |
    tr ' ' '\n'
}
# mount_attr_has FIELD: that attribute has FIELD (key=value).
mount_attr_has() { mount_attr | grep -qx "$1"; }
# in_hub CMD...: run where meta is (the hub namespace under NETNS=1).
in_hub() { if [[ -n "$NS_TAG" ]]; then ip netns exec "t0h-$NS_TAG" "$@"; else "$@"; fi; }
# in_node I CMD...: run on data node I's network (its namespace under NETNS=1).
in_node() { local i=$1; shift; if [[ -n "$NS_TAG" ]]; then ip netns exec "t0n-$NS_TAG-$i" "$@"; else "$@"; fi; }
admin() { in_hub "$T0FS" "$@" --meta "$META_ADDR" --secret-file "$CLUSTER_DIR/secret"; }
node_up() { admin status --json | grep -q '"state": "up"'; }

meta_start() {
  # Not through the in_hub function: `$!` must be the daemon, not a subshell.
  local pre=()
  [[ -z "$NS_TAG" ]] || pre=(ip netns exec "t0h-$NS_TAG")
  local store=(--db "$CLUSTER_DIR/meta.db")
  [[ -z "$META_PG_URL" ]] || store=(--store "$META_PG_URL")
  "${pre[@]}" "$T0FS" meta --listen "$META_ADDR" "${store[@]}" --secret-file "$CLUSTER_DIR/secret" \
    --chunk-size "$CHUNK_SIZE" --local-chunk-size "${LOCAL_CHUNK_SIZE:-$CHUNK_SIZE}" --session-lease 20s \
    "${META_FLAGS[@]}" >>"$CLUSTER_DIR/meta.log" 2>&1 &
  META_PID=$!
  wait_until 20 "meta" admin status
}

data_start() {
  "$T0FS" data --meta "$META_ADDR" --listen "$DATA_ADDR" --volumes "$CLUSTER_DIR/vol" \
    --secret-file "$CLUSTER_DIR/secret" --heartbeat 200ms >>"$CLUSTER_DIR/data.log" 2>&1 &
  DATA_PID=$!
  wait_until 20 "data node registration" node_up
}

URING_PARAM=/sys/module/fuse/parameters/enable_uring
mount_start() {
  local uring=() saved=""
  case "${FUSE_URING:-}" in
    "") ;;
    off) uring=(--io-uring false) ;;
    on)
      if [[ ! -w "$URING_PARAM" ]]; then
        log "SKIP: this kernel has no FUSE over io_uring ($URING_PARAM)"
        exit 77
      fi
      saved=$(cat "$URING_PARAM")
      echo 1 >"$URING_PARAM"
      uring=(--io-uring true)
      ;;
    *) fail "FUSE_URING must be on or off" ;;
  esac
  "$T0FS" mount "$META_ADDR" "$MNT" --secret-file "$CLUSTER_DIR/secret" --retry-timeout 60s \
    "${uring[@]}" "$@" >>"$CLUSTER_DIR/mount.log" 2>&1 &
  MOUNT_PID=$!
  wait_until 20 "mount" is_mounted "$MNT"
  # The kernel reads the parameter at INIT, so it is kept until this mount
  # answers and says which path it took (a dead mount still listed at $MNT
  # makes is_mounted true before the new one has even sent INIT), then put
  # back: the next mounts are not affected.
  local want="" missed=""
  [[ -z "${FUSE_URING:-}" ]] || want="io_uring=$FUSE_URING"
  local deadline=$((SECONDS + 20))
  until [[ -z "$want" ]] || mount_attr_has "$want" 2>/dev/null; do
    ((SECONDS < deadline)) || { missed=yes; break; }
    sleep 0.1
  done
  [[ -z "$saved" ]] || echo "$saved" >"$URING_PARAM"
  [[ -z "$missed" ]] ||
    fail "FUSE_URING=$FUSE_URING but the mount says: $(mount_attr 2>&1 | grep -i uring) (log: $(grep -i uring "$CLUSTER_DIR/mount.log" | tail -1))"
}

kill9() { # kill9 PID: SIGKILL and reap
  kill -9 "$1" 2>/dev/null || true
  wait "$1" 2>/dev/null || true
}

stop_pid() { # stop_pid PID: SIGTERM, wait up to 15 s, then SIGKILL
  local pid=$1 deadline=$((SECONDS + 15))
  [[ -n "$pid" ]] || return 0
  kill "$pid" 2>/dev/null || return 0
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cluster_stop() {
  local rc=$?
  set +eu  # clean up whatever state the failure left
  [[ -n "$CLUSTER_DIR" ]] || return $rc
  stop_pid "${SECOND_MOUNT_PID:-}"
  if [[ -n "${SECOND_MNT:-}" ]] && is_mounted "$SECOND_MNT"; then umount -l "$SECOND_MNT"; fi
  stop_pid "$MOUNT_PID"
  if [[ -n "${MNT:-}" ]] && is_mounted "$MNT"; then umount -l "$MNT"; fi
  stop_pid "$DATA_PID"
  local pid
  for pid in "${NODE_PIDS[@]}"; do stop_pid "$pid"; done
  stop_pid "$META_PID"
  if ((rc != 0)); then
    for f in "$CLUSTER_DIR"/*.log; do
      [[ -f "$f" ]] && { log "--- last lines of ${f##*/}"; tail -n 20 "$f" >&2; }
    done
  fi
  netns_remove
  [[ -z "$META_PG_URL" ]] || pg_stop_all
  [[ -z "$CLUSTER_STOP_ALSO" ]] || "$CLUSTER_STOP_ALSO"
  rm -rf "$CLUSTER_DIR"
  CLUSTER_DIR=""
  return $rc
}

# second_mount_start [FLAGS...]: a second client of the cluster, mounted at
# $SECOND_MNT ($CLUSTER_DIR/mnt2) as node 2's host (--node-id 2: no local
# replica unless there is a node 2), logging to mount2.log; cluster_stop
# stops it.
second_mount_start() {
  SECOND_MNT="$CLUSTER_DIR/mnt2"
  mkdir -p "$SECOND_MNT"
  "$T0FS" mount "$META_ADDR" "$SECOND_MNT" --secret-file "$CLUSTER_DIR/secret" --node-id 2 "$@" \
    >>"$CLUSTER_DIR/mount2.log" 2>&1 &
  SECOND_MOUNT_PID=$!
  wait_until 20 "second mount" is_mounted "$SECOND_MNT"
}

# cluster_start [CHUNK_SIZE] [mount flags...]
cluster_start() {
  CHUNK_SIZE=${1:-1M}
  shift || true
  CLUSTER_DIR=$(mktemp -d /tmp/t0fs-test.XXXXXX)
  trap cluster_stop EXIT
  trap 'exit 130' INT TERM
  MNT="$CLUSTER_DIR/mnt"
  mkdir -p "$MNT" "$CLUSTER_DIR/vol"
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$CLUSTER_DIR/secret"
  chmod 600 "$CLUSTER_DIR/secret"
  # One run of free ports for both: two separate picks, neither bound yet,
  # may pick the same port.
  local port
  port=$(free_port 2)
  META_ADDR="127.0.0.1:$port"
  DATA_ADDR="127.0.0.1:$((port + 1))"
  meta_store_start
  meta_start
  data_start
  mount_start "$@"
  log "cluster up: meta $META_ADDR, data $DATA_ADDR, mount $MNT"
}

fsck_clean() {
  local out
  out=$(admin fsck) || { echo "$out" >&2; fail "fsck found problems"; }
  log "fsck: $(echo "$out" | tail -n 1)"
}

# --- many nodes ------------------------------------------------------------

# node_state I: the state of node I in `t0fs status` (empty if unknown).
node_state() {
  admin status --json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["node"] == int(sys.argv[1]): print(n["state"])' "$1"
}
node_is() { [[ "$(node_state "$1")" == "$2" ]]; }

# node_start I [FLAGS...]: starts data node I (node id I, volume vol<I>,
# NODE_ADDRS[I]) with NODE_FLAGS and FLAGS.
node_start() {
  local i=$1
  shift
  mkdir -p "$CLUSTER_DIR/vol$i"
  local pre=()
  [[ -z "$NS_TAG" ]] || pre=(ip netns exec "t0n-$NS_TAG-$i")
  "${pre[@]}" "$T0FS" data --meta "$META_ADDR" --listen "${NODE_ADDRS[$i]}" --node-id "$i" \
    --volumes "$CLUSTER_DIR/vol$i" --secret-file "$CLUSTER_DIR/secret" --heartbeat 200ms \
    "${NODE_FLAGS[@]}" "$@" >>"$CLUSTER_DIR/data$i.log" 2>&1 &
  NODE_PIDS[$i]=$!
  wait_until 20 "data node $i registration" node_is "$i" up
}

# Network namespaces: a hub (meta, and a bridge) and one per node, joined by
# veth pairs on 10.77.0.0/24. Only called as root.
netns_setup() {
  local n=$1 i hub
  NS_TAG="$$"
  hub="t0h-$NS_TAG"
  ip netns add "$hub"
  ip -n "$hub" link set lo up
  ip -n "$hub" link add br0 type bridge
  ip -n "$hub" addr add 10.77.0.1/24 dev br0
  ip -n "$hub" link set br0 up
  for ((i = 1; i <= n; i++)); do
    ip netns add "t0n-$NS_TAG-$i"
    ip -n "t0n-$NS_TAG-$i" link set lo up
    ip -n "$hub" link add "v$i" type veth peer name eth0 netns "t0n-$NS_TAG-$i"
    ip -n "$hub" link set "v$i" master br0 up
    ip -n "t0n-$NS_TAG-$i" addr add "10.77.0.$((10 + i))/24" dev eth0
    ip -n "t0n-$NS_TAG-$i" link set eth0 up
  done
}

netns_remove() {
  [[ -n "$NS_TAG" ]] || return 0
  local ns
  for ns in $(ip netns list | awk '{print $1}' | grep -E "^t0[hn]-$NS_TAG(-|$)"); do
    ip netns del "$ns" 2>/dev/null || true
  done
  NS_TAG=""
}

# netns_usable: root and able to create a namespace with a veth pair.
netns_usable() {
  ((EUID == 0)) || return 1
  local probe="t0probe-$$"
  ip netns add "$probe" 2>/dev/null || return 1
  local ok=0
  ip -n "$probe" link add t0a type veth peer name t0b 2>/dev/null && ip -n "$probe" link add br0 type bridge 2>/dev/null || ok=1
  ip netns del "$probe"
  return $ok
}

# multi_start N [CHUNK_SIZE]: meta and data nodes 1..N, no mount. With
# NETNS=1 each node gets its own namespace and address.
multi_start() {
  local n=$1 i
  CHUNK_SIZE=${2:-1M}
  CLUSTER_DIR=$(mktemp -d /tmp/t0fs-test.XXXXXX)
  trap cluster_stop EXIT
  trap 'exit 130' INT TERM
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$CLUSTER_DIR/secret"
  chmod 600 "$CLUSTER_DIR/secret"
  if [[ "${NETNS:-0}" == 1 ]]; then
    netns_setup "$n"
    META_ADDR="10.77.0.1:7700"
    for ((i = 1; i <= n; i++)); do NODE_ADDRS[$i]="10.77.0.$((10 + i)):7701"; done
  else
    local port
    port=$(free_port $((n + 1)))  # one run: separate picks may repeat a port
    META_ADDR="127.0.0.1:$port"
    for ((i = 1; i <= n; i++)); do NODE_ADDRS[$i]="127.0.0.1:$((port + i))"; done
  fi
  meta_store_start
  meta_start
  for ((i = 1; i <= n; i++)); do node_start "$i"; done
  log "cluster up: meta $META_ADDR, $n data nodes${NS_TAG:+ in namespaces t0n-$NS_TAG-*}"
}
