#!/usr/bin/env bash
# The daemons speak systemd's notify protocol (Type=notify units): with
# NOTIFY_SOCKET set, meta, data and mount send READY=1 once they serve,
# WATCHDOG=1 pings when WATCHDOG_USEC asks for them, and STOPPING=1 on
# SIGTERM. A Python listener plays systemd (no systemd needed as PID 1).
set -euo pipefail
source "$(dirname "$0")/../lib/cluster.sh"
cluster_start 1M

listen() { # listen SOCKET OUT: record datagrams until killed
  python3 -u - "$1" "$2" <<'PY' &
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
with open(sys.argv[2], "a", buffering=1) as out:
    while True:
        out.write(s.recv(4096).decode().replace("\n", " ") + "\n")
PY
  LISTENER=$!
  wait_until 5 "listener" test -S "$1"
}

check_daemon() { # check_daemon NAME READY-PATTERN command...
  local name=$1 pattern=$2
  shift 2
  local sock="$CLUSTER_DIR/notify-$name.sock" out="$CLUSTER_DIR/notify-$name.txt"
  listen "$sock" "$out"
  NOTIFY_SOCKET="$sock" WATCHDOG_USEC=200000 "$@" >>"$CLUSTER_DIR/$name-notify.log" 2>&1 &
  local pid=$!
  wait_until 20 "$name READY=1" grep -q "READY=1.*$pattern" "$out"
  wait_until 5 "$name watchdog pings" bash -c "(( \$(grep -c WATCHDOG=1 '$out') >= 3 ))"
  stop_pid "$pid"
  grep -q "STOPPING=1" "$out" || fail "$name sent no STOPPING=1: $(cat "$out")"
  kill "$LISTENER"; wait "$LISTENER" 2>/dev/null || true
  log "$name: $(grep -c . "$out") notifications ($(grep -m1 READY "$out"))"
}

port=$(free_port)
check_daemon meta "meta serving" "$T0FS" meta --listen "127.0.0.1:$port" --db "$CLUSTER_DIR/meta2.db" \
  --secret-file "$CLUSTER_DIR/secret"
mkdir -p "$CLUSTER_DIR/vol2"
check_daemon data "data serving" "$T0FS" data --meta "$META_ADDR" --listen "127.0.0.1:$(free_port)" \
  --volumes "$CLUSTER_DIR/vol2" --secret-file "$CLUSTER_DIR/secret"
mkdir -p "$CLUSTER_DIR/mnt2"
check_daemon mount "mounted at" "$T0FS" mount "$META_ADDR" "$CLUSTER_DIR/mnt2" --secret-file "$CLUSTER_DIR/secret"
! is_mounted "$CLUSTER_DIR/mnt2" || fail "the mount stayed after SIGTERM"
# Without NOTIFY_SOCKET nothing changes (every other test runs that way).
log "notify protocol ok"
