#!/usr/bin/env bash
# The safety of `t0fs up`'s setup:
#  - a --mount directory that is already a live mount (another cluster's, any
#    file system, or a FUSE mount that does not answer) is refused before
#    anything is created or started, naming what is mounted there, and
#    without ever advising `umount -l`;
#  - a dead FUSE mount there (its daemon gone: ENOTCONN) is detached with a
#    note, and `up` proceeds;
#  - a new cluster takes free ports when the defaults (7700, 7701) are busy,
#    and says which;
#  - a cluster directory left unfinished by a failed first start can be
#    started again.
source "$(dirname "$0")/lib.sh"

# hold_port PORT: keeps PORT busy (a listening socket) until the test ends;
# false when it is not free (someone else holds it: busy all the same).
hold_port() {
  python3 -c '
import socket, sys, time
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
try:
    s.bind(("127.0.0.1", int(sys.argv[1])))
except OSError:
    sys.exit(1)
s.listen(1)
print("held", flush=True)
time.sleep(3600)' "$1" >"$WORK/hold.$1" 2>&1 &
  local pid=$!
  disown "$pid"  # killed by pid at the end, without a job notice
  CHILD_PIDS+=("$pid")
  for _ in $(seq 50); do
    grep -q held "$WORK/hold.$1" && return 0
    alive "$pid" || return 1
    sleep 0.1
  done
  return 1
}
refuses() {  # refuses NAME WHAT ARGS...: `up ARGS` fails at once, saying WHAT
  local name=$1 what=$2 rc=0
  shift 2
  timeout 10 "$T0FS" up "$@" >"$WORK/$name.out" 2>&1 || rc=$?
  ((rc != 124)) || fail "$name: up hung"
  ((rc != 0)) || fail "$name: up started"
  grep -q -- "$what" "$WORK/$name.out" || fail "$name: no '$what' in: $(cat "$WORK/$name.out")"
  grep -q "umount -l" "$WORK/$name.out" && fail "$name: advises umount -l: $(cat "$WORK/$name.out")"
  return 0
}

base=$(free_port 2)
up_start a --dir "$WORK/a" --mount "$WORK/ma" --meta-listen 127.0.0.1:$base --data-listen 127.0.0.1:$((base + 1))
up_wait a
echo a >"$WORK/ma/file"

log "a live t0fs mount of another cluster is refused; nothing is created"
refuses live "already mounted and answering: fuse.t0fs" --dir "$WORK/b" --mount "$WORK/ma" \
  --meta-listen 127.0.0.1:$(free_port) --data-listen 127.0.0.1:$(free_port)
[[ ! -e "$WORK/b" ]] || fail "the refused up created its cluster directory"
[[ "$(cat "$WORK/ma/file")" == a ]] || fail "the live mount was disturbed"

log "any other file system mounted there is refused"
mkdir -p "$WORK/tm"
mount -t tmpfs t0fs-test-tmpfs "$WORK/tm"
refuses tmpfs "already a mount point (tmpfs from t0fs-test-tmpfs)" --dir "$WORK/b" --mount "$WORK/tm"
umount "$WORK/tm"

log "a FUSE mount that does not answer is refused without hanging"
fake_mount "$WORK/hung" "t0fs:some-other-cluster"
refuses hung "does not answer: fuse.t0fs from t0fs:some-other-cluster" --dir "$WORK/b" --mount "$WORK/hung"

log "a dead FUSE mount (its daemon gone) is detached and up proceeds"
eval "exec $FAKE_FD>&-"  # the "daemon" dies: the mount is dead
err=$(timeout 5 ls "$WORK/hung" 2>&1) && fail "the fake mount is not dead"
[[ "$err" == *"not connected"* ]] || fail "the fake mount is not dead: $err"
up_start b --dir "$WORK/b" --mount "$WORK/hung" --meta-listen 127.0.0.1:$(free_port) \
  --data-listen 127.0.0.1:$(free_port)
up_wait b
grep -q "was a dead mount .*detached it" "$WORK/b.out" || fail "no note about the dead mount"
echo b >"$WORK/hung/file" && [[ "$(cat "$WORK/hung/file")" == b ]] || fail "the new mount does not work"
up_stop "$UP_PID" || fail "up b exited non-zero"

log "busy default ports: a new cluster takes free ones and says which"
hold_port 7700 || log "7700 is already in use"
hold_port 7701 || log "7701 is already in use"
up_start c --dir "$WORK/c" --mount "$WORK/mc"
up_wait c
grep -q "port 7700 is in use: meta listens on" "$WORK/c.out" || fail "no note about the meta port"
grep -q "port 7701 is in use: data listens on" "$WORK/c.out" || fail "no note about the data port"
meta=$(sed -n 's/^  meta \([^,]*\),.*/\1/p' "$WORK/c.out")
[[ -n "$meta" && "$meta" != *:7700 ]] || fail "meta is on '$meta'"
grep -q "\"$meta\"" "$WORK/c/t0fs.toml" || fail "the chosen address is not in t0fs.toml"
echo c >"$WORK/mc/file"
up_stop "$UP_PID" || fail "up c exited non-zero"

log "an unfinished cluster directory (the first start failed) starts again"
busy=$(free_port)
hold_port "$busy" || fail "cannot hold port $busy"
rc=0
timeout 60 "$T0FS" up --dir "$WORK/d" --mount "$WORK/md" --meta-listen 127.0.0.1:$busy \
  --data-listen 127.0.0.1:$(free_port) >"$WORK/d1.out" 2>&1 || rc=$?
((rc != 0 && rc != 124)) || fail "the first start on a busy port did not fail (rc $rc)"
[[ -f "$WORK/d/secret" ]] || fail "the failed start left no secret behind (nothing to complete)"
up_start d2 --dir "$WORK/d" --mount "$WORK/md"
up_wait d2
grep -Eq "completed the unfinished cluster|created a new cluster" "$WORK/d2.out" || fail "no word about the directory"
echo d >"$WORK/md/file" && [[ "$(cat "$WORK/md/file")" == d ]] || fail "the completed cluster does not work"
up_stop "$UP_PID" || fail "up d exited non-zero"
up_stop "${UP_PIDS[0]}" || fail "up a exited non-zero"
echo "up setup: ok"
