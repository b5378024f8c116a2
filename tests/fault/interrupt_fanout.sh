#!/usr/bin/env bash
# A writer killed while the mount waits for the replies of several replicas
# (a write sent to every replica at once, DataClient::WriteMany) ends at
# once: the wait for the replies of two stopped data nodes is given up for a
# caller being killed, as interrupt.sh checks for the single-replica and
# meta paths. Before the change, the wait for several replies ran its whole
# reply timeout (60 s) whatever became of the caller.
#
# The mount has no data node of its own (every replica is remote) and
# retries for 60 s; the writer gets SIGTERM 2 s after it started and must be
# gone within 45 s (util.sh killed_in).
source "$(dirname "$0")/../lib/cluster.sh"

multi_start 2 1M
MNT="$CLUSTER_DIR/mnt"
mkdir -p "$MNT"
mount_start --node-id 3
# Stopped nodes are resumed before the cluster stops, whatever the exit path.
trap 'kill -CONT "${NODE_PIDS[@]}" 2>/dev/null || true; cluster_stop' EXIT

admin objective set t0fs:/ replicas=2 >/dev/null
head -c 4M /dev/urandom >"$CLUSTER_DIR/want"
cp "$CLUSTER_DIR/want" "$MNT/f"
sync "$MNT/f"
layout=$(admin layout t0fs:/f)
grep -q "node 1" <<<"$layout" && grep -q "node 2" <<<"$layout" ||
  fail "the file is not on both nodes: $layout"

kill -STOP "${NODE_PIDS[1]}" "${NODE_PIDS[2]}"
killed_in "an O_DIRECT write to two stopped replicas" \
  dd if=/dev/zero of="$MNT/f" bs=1M count=2 oflag=direct conv=notrunc status=none
grep -q "the wait for replies was given up: its caller was interrupted" "$CLUSTER_DIR/mount.log" ||
  fail "the mount did not log the wait for replies it gave up"
kill -CONT "${NODE_PIDS[1]}" "${NODE_PIDS[2]}"
# KNOWN BUG (stop 59 note): the given-up write's requests are still queued
# on the resumed nodes and carry the chunk's version the next write uses
# too; landing after that write, they overwrite it unnoticed. They land as
# soon as the nodes run again: let them before writing again, so that this
# test checks what it is about (the killed writer is not held; the mount
# works after), not that race, which needs a version fence to be fixed.
sleep 3

# The mount writes and reads again once the nodes do (nothing left stuck);
# the killed write may or may not have reached the nodes, so the file is
# written whole again before it is compared.
dd if="$CLUSTER_DIR/want" of="$MNT/f" bs=1M oflag=direct conv=notrunc status=none ||
  fail "the mount does not write after the nodes came back"
cmp "$CLUSTER_DIR/want" <(dd if="$MNT/f" bs=1M iflag=direct status=none) ||
  fail "the mount reads other bytes after the nodes came back"
log PASS
