#!/usr/bin/env bash
# The only data node gone for longer than repair-grace: a write that needs a
# new chunk fails at once with EIO and a log line that says the nodes are
# lost, not with ENOSPC ("No space left on device" sent users looking for a
# full disk); the node back, writes go on.
source "$(dirname "$0")/../lib/cluster.sh"

META_FLAGS=(--suspect-after 1s --node-timeout 2s --repair-grace 3s)
cluster_start 1M
echo before >"$MNT/before"
kill -9 "$DATA_PID"
wait "$DATA_PID" 2>/dev/null || true
node_down() { admin status --json | grep -q '"state": "down"'; }
wait_until 20 "the data node to be down" node_down
sleep 4  # past repair-grace: lost

log "a new file's first write with every data node lost"
err="$CLUSTER_DIR/write.err"
if timeout 60 bash -c "echo x >'$MNT/new'" 2>"$err"; then fail "a write with no data node succeeded"; fi
grep -q "Input/output error" "$err" || fail "the write failed with: $(cat "$err")"
grep -q "data nodes lost" "$CLUSTER_DIR/mount.log" || fail "the mount log does not say the nodes are lost"
log "failed with EIO: $(grep "data nodes lost" "$CLUSTER_DIR/mount.log" | tail -1 | sed 's/.*failed: //')"

log "the node back: writes go on"
data_start
wait_until 30 "a write to succeed" bash -c "echo x >'$MNT/new'"
[[ "$(cat "$MNT/before")" == before ]] || fail "the file written before reads '$(cat "$MNT/before")'"
fsck_clean
log "PASS"
