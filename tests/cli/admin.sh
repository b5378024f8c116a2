#!/usr/bin/env bash
# The admin commands (status, fsck, layout, objective, node):
#  - find the cluster from a path on a t0fs mount (or the working directory
#    on one), from --dir or --meta, from any working directory; the secret
#    from the cluster directory or --secret-file; when nothing is found the
#    error says what was tried;
#  - `objective set replicas=N` warns when fewer than N data nodes are up;
#    a setting alone that refines the current goal (within=) is checked
#    against it, and refused without one;
#  - `status` only asks mounts of its own cluster, each with a timeout: a
#    hung mount is "not answering", a dead one "dead", another cluster's
#    "not queried", and status never blocks;
#  - `status --watch` stops at once on SIGINT (exit 130) and SIGTERM (143),
#    also while meta does not answer;
#  - while meta does not answer, every admin command gives up after its
#    --timeout with "timed out", and a SIGTERM ends it at once (143), as it
#    does a `t0fs mount` still waiting for meta to start.
source "$(dirname "$0")/lib.sh"
base=$(free_port 2)
up_start a --dir "$WORK/data" --mount "$WORK/mnt" --meta-listen 127.0.0.1:$base \
  --data-listen 127.0.0.1:$((base + 1))
up_wait a
M="$WORK/mnt"
mkdir -p "$M/dir" "$WORK/elsewhere"
echo hello >"$M/dir/f"
in_dir() { local dir=$1; shift; (cd "$dir" && "$T0FS" "$@"); }

log "the cluster found from a path on the mount, from any working directory"
in_dir / objective get "$M/dir" | grep -q "replicas=1" || fail "objective get by mount path"
in_dir / layout "$M/dir/f" | grep -q "#0" || fail "layout by mount path"
in_dir "$M/dir" status | grep -q "^1 .* up " || fail "status from a working directory on the mount"
in_dir "$M" fsck >/dev/null || fail "fsck from a working directory on the mount"
in_dir "$WORK/elsewhere" fsck --mount "$M/dir" >/dev/null || fail "fsck --mount"
in_dir "$WORK/elsewhere" node undrain 1 --mount "$M" >/dev/null || fail "node undrain --mount"
in_dir / status --dir "$WORK/data" >/dev/null || fail "status --dir"
in_dir / status --meta 127.0.0.1:$base --secret-file "$WORK/data/secret" >/dev/null || fail "status --meta"

log "status shows what t0fs stores on each volume"
stored_known() {
  "$T0FS" status --dir "$WORK/data" --json | python3 -c '
import json, sys
vols = [v for n in json.load(sys.stdin)["nodes"] for v in n["volumes"]]
sys.exit(0 if vols and all(isinstance(v["stored_bytes"], int) for v in vols) else 1)'
}
wait_until 20 "stored bytes reported" stored_known
"$T0FS" status --dir "$WORK/data" | grep -Eq "^ +volume 1 .*: t0fs [0-9.]+ [KMGT]?i?B in [0-9]+ chunk file\(s\); .* free" ||
  fail "status volume line: $("$T0FS" status --dir "$WORK/data" | grep volume)"

"$T0FS" status --dir "$WORK/data" | grep -q "^metrics: mount $M http://127.0.0.1:[0-9]*/metrics$" ||
  fail "status does not name the mount's metrics endpoint: $("$T0FS" status --dir "$WORK/data" | grep metrics)"

log "nothing found, or no secret: the error says what was tried"
rc=0
in_dir "$WORK/elsewhere" status 2>"$WORK/err" || rc=$?
((rc == 1)) || fail "status without a cluster: rc $rc"
for tried in "--dir (not given)" "--meta (not given)" "$WORK/elsewhere (not on a t0fs mount)" "./t0fs-data" \
  "--secret-file (not given)"; do
  grep -qF -- "$tried" "$WORK/err" || fail "the error does not say it tried '$tried': $(cat "$WORK/err")"
done
in_dir / status --meta 127.0.0.1:$base 2>"$WORK/err" && fail "status without any secret succeeded"
grep -q "no cluster secret" "$WORK/err" || fail "unclear error without a secret: $(cat "$WORK/err")"
in_dir / status --mount "$M" --secret-file "$WORK/no-such-secret" 2>"$WORK/err" && fail "a missing --secret-file was ignored"
grep -q "no-such-secret" "$WORK/err" || fail "the error does not name the secret file: $(cat "$WORK/err")"
in_dir / objective get "$WORK/elsewhere" 2>"$WORK/err" && fail "a path outside t0fs was accepted"
grep -q "is not on a t0fs mount" "$WORK/err" || fail "unclear error: $(cat "$WORK/err")"

log "objective set replicas=N warns when fewer than N data nodes are up"
"$T0FS" objective set "$M/dir" replicas=2 >/dev/null 2>"$WORK/err" || fail "objective set replicas=2"
grep -q "warning: replicas=2 but only 1 data node(s) are up" "$WORK/err" || fail "no warning: $(cat "$WORK/err")"
"$T0FS" objective set "$M/dir" replicas=1 >/dev/null 2>"$WORK/err" || fail "objective set replicas=1"
[[ ! -s "$WORK/err" ]] || fail "a warning with enough nodes: $(cat "$WORK/err")"

log "a setting alone that refines the current goal is checked against it"
"$T0FS" objective set "$M/dir" protect=replicas:2 within=5m >/dev/null 2>"$WORK/err" ||
  fail "objective set protect=replicas:2: $(cat "$WORK/err")"
"$T0FS" objective set "$M/dir" within=1m >/dev/null 2>"$WORK/err" ||
  fail "within= alone under a goal was refused: $(cat "$WORK/err")"
"$T0FS" objective get "$M/dir" | grep -q "protect=replicas:2 within=1m" ||
  fail "objective get: $("$T0FS" objective get "$M/dir")"
"$T0FS" objective set "$M/dir" sync >/dev/null 2>&1 || fail "objective set sync"
"$T0FS" objective set "$M/dir" within=1m >/dev/null 2>"$WORK/err" && fail "within= without a goal was accepted"
grep -q "need a protect= goal" "$WORK/err" || fail "unclear error: $(cat "$WORK/err")"

log "status asks only its own cluster's mounts, each with a timeout"
cid=$("$T0FS" status --dir "$WORK/data" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["cluster_id"])')
[[ -n "$cid" ]] || fail "no cluster id"
fake_mount "$WORK/hung" "t0fs:$cid"
fake_mount "$WORK/other" "t0fs:another-cluster"
fake_mount "$WORK/dead" "t0fs:$cid"
eval "exec $FAKE_FD>&-"  # its daemon is gone
rc=0
timeout 10 "$T0FS" status --dir "$WORK/data" >"$WORK/status.out" 2>&1 || rc=$?
((rc != 124)) || fail "status blocked on a mount"
((rc == 0)) || fail "status failed: $(cat "$WORK/status.out")"
grep -q "^mount $WORK/hung: not answering" "$WORK/status.out" || fail "hung mount: $(grep mount "$WORK/status.out")"
grep -q "^mount $WORK/other: not queried (a mount of cluster another-cluster)" "$WORK/status.out" ||
  fail "other cluster's mount: $(grep mount "$WORK/status.out")"
grep -q "^mount $WORK/dead: dead" "$WORK/status.out" || fail "dead mount: $(grep mount "$WORK/status.out")"
# Until the mount daemon names its cluster in its source, our own mount is
# of an unknown cluster ("not queried"); after, it is asked and answers.
grep -Eq "^mount $M: (not queried \(its source 't0fs' names no cluster\)|node )" "$WORK/status.out" ||
  fail "the mount of up: $(grep mount "$WORK/status.out")"
timeout 10 "$T0FS" status --dir "$WORK/data" --json | python3 -c '
import json, sys
mounts = {m["path"]: m["answer"] for m in json.load(sys.stdin)["mounts_here"]}
want = {sys.argv[1]: "not answering", sys.argv[2]: "not queried", sys.argv[3]: "dead"}
bad = {p: (mounts.get(p), a) for p, a in want.items() if mounts.get(p) != a}
sys.exit("json mounts_here: %s" % bad if bad else 0)' "$WORK/hung" "$WORK/other" "$WORK/dead" ||
  fail "status --json mounts"

log "status --watch stops at once on SIGINT and SIGTERM"
watch_stops() {  # watch_stops SIGNAL EXPECTED_RC [WAIT_FOR_FRAME]
  local sig=$1 want=$2 frame=${3:-1} pid rc=0
  "$T0FS" status --dir "$WORK/data" --watch --interval 1s >"$WORK/watch.out" 2>&1 &
  pid=$!
  if ((frame)); then
    wait_until 20 "a --watch frame" grep -q "^NODE" "$WORK/watch.out"
  else
    sleep 1.5
  fi
  kill -"$sig" "$pid"
  # The bound the issue states is 1 s; checked generously.
  for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && { kill -9 "$pid"; fail "status --watch still runs 5 s after SIG$sig"; }
  wait "$pid" || rc=$?
  ((rc == want)) || fail "status --watch after SIG$sig: rc $rc, expected $want"
}
watch_stops INT 130
watch_stops TERM 143
meta=$(pgrep -P "$UP_PID" -f "t0fs meta")
kill -STOP "$meta"
watch_stops INT 130 0  # meta does not answer: the frame never comes
log "while meta does not answer: every admin command gives up after --timeout, and stops at once on a signal"
# term_ends PID WHAT OUT: SIGTERM ends the background command PID (exit
# 143) within 10 s (a bound against a hang, not a timing); OUT is its output.
term_ends() {
  local pid=$1 what=$2 out=$3 rc=0
  kill -TERM "$pid"
  for _ in $(seq 100); do alive "$pid" || break; sleep 0.1; done
  alive "$pid" && { kill -9 "$pid"; fail "$what still runs 10 s after SIGTERM while meta does not answer"; }
  wait "$pid" || rc=$?
  ((rc == 143)) || fail "$what after SIGTERM: rc $rc, expected 143: $(cat "$out")"
}
for cmd in "status" "fsck" "layout $M/dir/f" "objective get $M/dir" "node undrain 1"; do
  # The outer timeout only keeps a hang from stalling the test.
  rc=0
  timeout 60 "$T0FS" $cmd --dir "$WORK/data" --timeout 1s >"$WORK/to.out" 2>&1 || rc=$?
  ((rc != 0 && rc != 124)) || fail "$cmd with meta stopped and --timeout 1s: rc $rc: $(cat "$WORK/to.out")"
  grep -q "timed out" "$WORK/to.out" || fail "$cmd with meta stopped said: $(cat "$WORK/to.out")"
  "$T0FS" $cmd --dir "$WORK/data" >"$WORK/to.out" 2>&1 &
  sleep 0.5
  term_ends $! "$cmd" "$WORK/to.out"
done
# A mount starting meanwhile waits for meta; a stop signal ends it at once
# (nothing is mounted yet).
mkdir -p "$WORK/mnt2"
"$T0FS" mount 127.0.0.1:$base "$WORK/mnt2" --secret-file "$WORK/data/secret" >"$WORK/mount2.out" 2>&1 &
sleep 1
term_ends $! "a starting mount" "$WORK/mount2.out"
is_mounted "$WORK/mnt2" && fail "$WORK/mnt2 mounted"
# A meta server starting on a store that does not answer (the stopped meta's
# port takes the connection and says nothing): a stop signal ends it at once.
"$T0FS" meta --store "postgresql://t0fs@127.0.0.1:$base/t0fs" --listen 127.0.0.1:0 \
  --secret-file "$WORK/data/secret" >"$WORK/meta2.out" 2>&1 &
sleep 1
term_ends $! "a starting meta" "$WORK/meta2.out"
if "$T0FS" status --dir "$WORK/data" --timeout soon >"$WORK/to.out" 2>&1; then fail "--timeout soon was taken"; fi
grep -q "not a positive duration" "$WORK/to.out" || fail "--timeout soon said: $(cat "$WORK/to.out")"
kill -CONT "$meta"
in_dir / status --dir "$WORK/data" >/dev/null || fail "status after meta resumed"
up_stop "$UP_PID" || fail "up exited non-zero"
echo "admin commands: ok"
