#!/usr/bin/env bash
# The durability ladder on a 2-node cluster (real processes on loopback),
# through a mount on node 1 (the writer's node):
#  - `objective set replicas=1 protect=replicas:2 within=1h`: a file is
#    written with one local copy; after its last close repair adds the second
#    copy in the background (`t0fs layout` says protected);
#  - a file kept open for writing waits (within=1h): `t0fs status` and
#    meta's /metrics count it; fsck is clean (not past its deadline); one
#    kept open under within=1s is protected once that has passed;
#  - a copy that takes longer than --copy-timeout (a 16 MiB chunk at a
#    4 MiB/s copy rate, timeout 3 s) finishes while it makes progress;
#  - node 1 is killed: the protected file reads back byte for byte from
#    node 2; fsck names the open file, lost before it was protected;
#  - bad objective settings are refused with a clear error.
source "$(dirname "$0")/../lib/cluster.sh"

METRICS="127.0.0.1:$(free_port)"
META_FLAGS=(--suspect-after 1s --node-timeout 2s --repair-grace 3s --repair-interval 300ms --heartbeat 200ms
  --metrics-listen "$METRICS" --copy-timeout 3s)
NODE_FLAGS=(--copy-rate 4M)
multi_start 2 1M
MNT="$CLUSTER_DIR/mnt"
mkdir -p "$MNT"
mount_start --node-id 1
HOLDERS=()
# The writers holding files open are stopped before the cluster (their mount).
trap 'for pid in "${HOLDERS[@]}"; do kill9 "$pid"; done; cluster_stop' EXIT

# hold_open PATH MIB: writes MIB MiB of random data to PATH, fsyncs, and
# keeps it open for writing (in the background, until the test ends).
hold_open() {
  local ready="$CLUSTER_DIR/ready.$RANDOM"
  python3 -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, os.urandom(int(sys.argv[2]) << 20))
os.fsync(fd)
open(sys.argv[3], "w").close()
time.sleep(3600)' "$1" "$2" "$ready" &
  HOLDERS+=($!)
  wait_until 20 "the writer of $1" test -e "$ready"
}

# protection_is PATH STATE: `t0fs layout` reports STATE (none, waiting, protected).
protection_is() {
  [[ "$(admin layout "t0fs:$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["protection"]["state"])')" == "$2" ]]
}
status_field() {  # status_field KEY: protection.KEY of `t0fs status --json`
  admin status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["protection"][sys.argv[1]])' "$1"
}
refused() {  # refused NEEDLE SETTINGS...: objective set fails and says NEEDLE
  local needle=$1 out
  shift
  if out=$(admin objective set t0fs:/p "$@" 2>&1); then fail "objective set $* was accepted: $out"; fi
  grep -qF -- "$needle" <<<"$out" || fail "objective set $*: expected '$needle' in: $out"
}

log "== the goal is set and shown"
mkdir "$MNT/p"
admin objective set t0fs:/p replicas=1 protect=replicas:2 within=1h >/dev/null
got=$(admin objective get t0fs:/p)
grep -qF "replicas=1 placement=local protect=replicas:2 within=60m" <<<"$got" || fail "objective get: $got"
refused "must be 2..16" protect=replicas:1
refused "must ask for more copies than replicas=2" replicas=2
refused "K+M at most 32" protect=ec:30+3
refused "needs an object tier: start meta with --object-endpoint" protect=object
refused "protect must be" protect=mirror
refused "not a duration" within=soon
mkdir "$MNT/q"
if out=$(admin objective set t0fs:/q within=5m 2>&1); then fail "within= without protect= was accepted"; fi
grep -qF "need a protect= goal" <<<"$out" || fail "within= without protect=: $out"
admin objective get t0fs:/p | grep -qF "protect=replicas:2" || fail "a refused setting changed the objective"

log "== a file kept open for writing waits; a closed one is protected in the background"
hold_open "$MNT/p/open" 3
dd if=/dev/urandom of="$CLUSTER_DIR/src" bs=1M count=8 status=none
cp "$CLUSTER_DIR/src" "$MNT/p/closed"
wait_until 30 "p/closed protected" protection_is /p/closed protected
admin layout t0fs:/p/closed | grep -q "node 2" || fail "p/closed has no copy on node 2: $(admin layout t0fs:/p/closed)"
log "p/closed: $(admin layout t0fs:/p/closed | grep protection)"
sleep 2  # several repair passes
protection_is /p/open waiting || fail "p/open (open for writing, within=1h) did not wait: $(admin layout t0fs:/p/open)"
files=$(status_field waiting_files)
((files == 1)) || fail "status counts $files file(s) waiting, expected 1"
(($(status_field waiting_bytes) == 3 << 20)) || fail "status counts $(status_field waiting_bytes) bytes waiting"
(($(status_field overdue_files) == 0)) || fail "a file within its deadline counted as overdue"
admin status | grep -q "protection: 1 file(s), 3 MiB waiting" || fail "status: $(admin status | grep protection)"
# Read whole first: grep -q leaving early would kill curl with SIGPIPE, and
# pipefail would call that a failure.
metrics=$(curl -sf "http://$METRICS/metrics") || fail "meta /metrics does not answer"
grep -Eq '^t0fs_meta_protect_waiting_files(\{\})? 1$' <<<"$metrics" ||
  fail "meta /metrics: $(grep "^t0fs_meta_protect" <<<"$metrics")"
fsck_clean

log "== a file kept open past its within= is protected all the same"
mkdir "$MNT/w"
admin objective set t0fs:/w replicas=1 protect=replicas:2 within=1s >/dev/null
hold_open "$MNT/w/log" 2
wait_until 30 "w/log protected while open" protection_is /w/log protected
protection_is /p/open waiting || fail "p/open was protected before its deadline"

log "== a copy longer than --copy-timeout finishes while it progresses"
mkdir "$MNT/big"
admin objective set t0fs:/big replicas=1 protect=replicas:2 chunk-size=16M >/dev/null
dd if=/dev/urandom of="$CLUSTER_DIR/big.src" bs=1M count=16 status=none
cp "$CLUSTER_DIR/big.src" "$MNT/big/f"
wait_until 60 "big/f (one 16 MiB chunk, 4 s to copy) protected" protection_is /big/f protected

log "== node 1 (the writer's) is lost"
kill9 "${NODE_PIDS[1]}"
NODE_PIDS[1]=""
wait_until 20 "node 1 down" node_is 1 down
timeout 60 cmp "$CLUSTER_DIR/src" "$MNT/p/closed" || fail "the protected file does not read back"
timeout 60 cmp "$CLUSTER_DIR/big.src" "$MNT/big/f" || fail "big/f does not read back"
if out=$(admin fsck 2>&1); then fail "fsck is clean with an unprotected file lost: $out"; fi
grep -q "/p/open chunk #0 .*lost before it was protected" <<<"$out" || fail "fsck does not name p/open: $out"
! grep -q "/p/closed" <<<"$out" || fail "fsck names the protected file: $out"
log "fsck: $(grep /p/open <<<"$out" | head -1)"
log "PASS"
