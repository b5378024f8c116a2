#!/usr/bin/env bash
# A hung data node on the client's own host (SIGSTOP) is waited for once:
# later reads of replicated files go to the other replica without waiting,
# and a background probe finds the node when it continues; a hung node
# holding the other replica holds an fsync or a write 10 s at most (the
# local replica took it), and its replica is repaired after. Losing the data
# node on the client's own host: reads of replicated files
# fail over to the other replica at once (not after a minute of retries per
# chunk), writes go on to the surviving replica, and once the local node is
# back the client reads its local copies again. Through a mount on node 1.
source "$(dirname "$0")/../lib/cluster.sh"

META_FLAGS=(--suspect-after 1s --node-timeout 2s --repair-grace 60s --heartbeat 200ms)
multi_start 2 1M
MNT="$CLUSTER_DIR/mnt"
mkdir -p "$MNT"
PORT=$(free_port)
mount_start --node-id 1 --metrics-listen "127.0.0.1:$PORT"

metric() { curl -sf "127.0.0.1:$PORT/metrics" | { grep -F "$1" || true; } | awk '{ s += $NF } END { print s + 0 }'; }
local_read_bytes() { metric 't0fs_client_bytes_total{op="read",path="local"}'; }

mkdir "$MNT/r2"
admin objective set t0fs:/r2 replicas=2 >/dev/null
dd if=/dev/urandom of="$CLUSTER_DIR/src" bs=1M count=16 status=none
cp "$CLUSTER_DIR/src" "$MNT/r2/f"
admin layout t0fs:/r2/f --node-id 1 | grep -q "node 2" || fail "the file has no replica on node 2"

log "the data node on the mount's host hangs (SIGSTOP): waited for once, not per read"
kill -STOP "${NODE_PIDS[1]}"
sync
echo 3 >/proc/sys/vm/drop_caches
for _ in 1 2 3; do
  timeout 120 cmp "$CLUSTER_DIR/src" "$MNT/r2/f" || { kill -CONT "${NODE_PIDS[1]}"; fail "reading with the local node hung failed"; }
  echo 3 >/proc/sys/vm/drop_caches
done
waits=$(grep -c "no reply within the i/o timeout" "$CLUSTER_DIR/mount.log" || true)
((waits == 1)) || { kill -CONT "${NODE_PIDS[1]}"; fail "the hung node was waited for $waits times (expected once): $(grep timeout "$CLUSTER_DIR/mount.log")"; }
grep -q "data node 1 does not answer" "$CLUSTER_DIR/mount.log" || fail "the mount did not say node 1 does not answer"
out=$(admin fsck 2>&1) || true
grep -q "(1 node(s) not listed: their chunk files were not checked)" <<<"$out" ||
  { kill -CONT "${NODE_PIDS[1]}"; fail "fsck with node 1 hung did not say it was not listed: $out"; }
kill -CONT "${NODE_PIDS[1]}"
deadline=$((SECONDS + 60))
until grep -q "data node 1 answers again" "$CLUSTER_DIR/mount.log"; do
  ((SECONDS < deadline)) || fail "the mount's probe did not find node 1 again after SIGCONT"
  sleep 0.5
done
log "node 1 continues: the mount's background probe found it"

log "the other replica's node hangs (SIGSTOP node 2): an fsync and a write go on once the local replica took them"
# Both files get their chunk (a replica on each node) before node 2 stops.
python3 - "$MNT/r2" "$CLUSTER_DIR/src" "${NODE_PIDS[2]}" <<'PY' || { kill -CONT "${NODE_PIDS[2]}"; fail "fsync or write with node 2 hung failed"; }
import os, signal, sys
d, src, pid = sys.argv[1], open(sys.argv[2], "rb").read(), int(sys.argv[3])
s = os.open(d + "/s", os.O_WRONLY | os.O_CREAT, 0o644)
h = os.open(d + "/h", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(s, src)
os.write(h, src[:4096])
os.fsync(h)
os.kill(pid, signal.SIGSTOP)
os.fsync(s)
os.pwrite(h, src, 0)
os.close(s)
os.close(h)
PY
kill -CONT "${NODE_PIDS[2]}"
grep -q "fsync reached 1 of 2 replica(s)" "$CLUSTER_DIR/mount.log" ||
  fail "the fsync did not leave the hung node behind: $(grep -i "node 2" "$CLUSTER_DIR/mount.log" | tail -n 3)"
grep -q "on node 2 missed a write" "$CLUSTER_DIR/mount.log" ||
  fail "the write did not leave the hung node behind: $(grep -i "node 2" "$CLUSTER_DIR/mount.log" | tail -n 3)"
timeout 60 cmp "$CLUSTER_DIR/src" "$MNT/r2/h" || fail "the file written with node 2 hung differs"
timeout 60 cmp "$CLUSTER_DIR/src" "$MNT/r2/s" || fail "the file fsynced with node 2 hung differs"
fsck_clean() { admin fsck 2>&1 | grep -q "fsck: clean"; }
wait_until 60 "the replica that missed the write is repaired (fsck clean)" fsck_clean

log "kill -9 of the data node on the mount's host (node 1)"
kill9 "${NODE_PIDS[1]}"
NODE_PIDS[1]=""
start=$SECONDS
# 16 chunks: with a minute of retries per chunk this would take 16 minutes.
timeout 60 cmp "$CLUSTER_DIR/src" "$MNT/r2/f" || fail "reading with the local node down failed or stalled"
log "read 16 MiB from the other replica in about $((SECONDS - start)) s"
(($(metric t0fs_client_replica_failovers_total) > 0)) || fail "no failover counted"

log "a write with the local node down goes to the surviving replica"
timeout 60 cp "$CLUSTER_DIR/src" "$MNT/r2/g" || fail "writing with the local node down failed or stalled"
timeout 60 cmp "$CLUSTER_DIR/src" "$MNT/r2/g" || fail "the file written with the local node down differs"

log "node 1 comes back: the client reads its local copy again"
node_start 1
before=$(local_read_bytes)
deadline=$((SECONDS + 30))
until cmp -s "$CLUSTER_DIR/src" "$MNT/r2/f" && (($(local_read_bytes) > before)); do
  ((SECONDS < deadline)) || fail "reads did not come back to the local replica (local read bytes $before -> $(local_read_bytes))"
  sleep 0.5
done
log "local reads again: $before -> $(local_read_bytes) bytes"
log "PASS"
