# Test cluster on loopback: one meta, one data service, one FUSE mount, as
# real processes. Source this file, then call cluster_start. Everything is
# stopped, unmounted and deleted on exit, whatever the exit path.
#
#   T0FS           the t0fs binary (set by ctest)
#   CLUSTER_DIR    temp directory of this cluster (after cluster_start)
#   MNT            the mount point
#   META_ADDR      host:port of meta

set -euo pipefail
T0FS=${T0FS:?set T0FS to the t0fs binary}
CLUSTER_DIR=""
META_PID="" DATA_PID="" MOUNT_PID=""

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 20000))
    if ! ss -Htln "sport = :$port" | grep -q .; then echo "$port"; return; fi
  done
}

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.1 s.
wait_until() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out waiting for $what"
    sleep 0.1
  done
}

is_mounted() { grep -q " $1 fuse.t0fs " /proc/mounts; }
admin() { "$T0FS" "$@" --meta "$META_ADDR" --secret-file "$CLUSTER_DIR/secret"; }
node_up() { admin status --json | grep -q '"state": "up"'; }

meta_start() {
  "$T0FS" meta --listen "$META_ADDR" --db "$CLUSTER_DIR/meta.db" --secret-file "$CLUSTER_DIR/secret" \
    --chunk-size "$CHUNK_SIZE" --session-lease 20s >>"$CLUSTER_DIR/meta.log" 2>&1 &
  META_PID=$!
  wait_until 20 "meta" admin status
}

data_start() {
  "$T0FS" data --meta "$META_ADDR" --listen "$DATA_ADDR" --volumes "$CLUSTER_DIR/vol" \
    --secret-file "$CLUSTER_DIR/secret" --heartbeat 200ms >>"$CLUSTER_DIR/data.log" 2>&1 &
  DATA_PID=$!
  wait_until 20 "data node registration" node_up
}

mount_start() {
  "$T0FS" mount "$META_ADDR" "$MNT" --secret-file "$CLUSTER_DIR/secret" --retry-timeout 60s \
    "$@" >>"$CLUSTER_DIR/mount.log" 2>&1 &
  MOUNT_PID=$!
  wait_until 20 "mount" is_mounted "$MNT"
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
  set +e
  [[ -n "$CLUSTER_DIR" ]] || return $rc
  stop_pid "$MOUNT_PID"
  if is_mounted "$MNT"; then umount -l "$MNT"; fi
  stop_pid "$DATA_PID"
  stop_pid "$META_PID"
  if ((rc != 0)); then
    for f in meta data mount; do
      [[ -f "$CLUSTER_DIR/$f.log" ]] && { log "--- last lines of $f.log"; tail -n 20 "$CLUSTER_DIR/$f.log" >&2; }
    done
  fi
  rm -rf "$CLUSTER_DIR"
  CLUSTER_DIR=""
  return $rc
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
  META_ADDR="127.0.0.1:$(free_port)"
  DATA_ADDR="127.0.0.1:$(free_port)"
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
