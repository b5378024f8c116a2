#!/usr/bin/env bash
# A process killed while the mount retries an unreachable service ends at
# once, not at the end of the retry timeout: the kernel cannot let a caller
# of an O_DIRECT read or of a request already sent to the mount die before
# the mount answers, so the mount must stop retrying for it (its caller
# being killed, or gone, or an INTERRUPT: common/cancel.h).
#
# The second mount (no local data node: every byte over TCP) retries for
# 10 minutes here (and waits 1 minute for a reply); each caller gets
# SIGTERM 2 s after it started and must be gone well before that (within
# 45 s). (A write is given up only for a caller being killed.) Before the change, the O_DIRECT reader lived out the whole retry
# timeout (and a buffered reader's readahead held the mount's workers), a
# create sent to a stopped meta the whole reply timeout.
source "$(dirname "$0")/../lib/cluster.sh"

cluster_start 1M
second_mount_start --retry-timeout 10m
# Stopped processes are resumed before the cluster stops, whatever the exit path.
trap 'kill -CONT "$DATA_PID" "$META_PID" 2>/dev/null || true; cluster_stop' EXIT

head -c 8M /dev/urandom >"$MNT/f"
sync "$MNT/f"
wait_until 20 "the file on the second mount" test -s "$SECOND_MNT/f"

kill -STOP "$DATA_PID"
killed_in "an O_DIRECT read from a stopped data node" \
  dd if="$SECOND_MNT/f" of=/dev/null bs=1M iflag=direct status=none
killed_in "a buffered read from a stopped data node" cat "$SECOND_MNT/f"
killed_in "an O_DIRECT write to a stopped data node" \
  dd if=/dev/zero of="$SECOND_MNT/w" bs=1M count=4 oflag=direct status=none
grep -q "not retried: the caller was interrupted" "$CLUSTER_DIR/mount2.log" ||
  fail "the mount did not log the reads it stopped retrying"
kill -CONT "$DATA_PID"

# The mount serves again once the node does (nothing was left stuck).
cmp "$MNT/f" <(dd if="$SECOND_MNT/f" bs=1M iflag=direct status=none) ||
  fail "the second mount reads other bytes after the node came back"

kill -STOP "$META_PID"
killed_in "a create while meta is stopped" touch "$SECOND_MNT/new"
killed_in "a stat of a new name while meta is stopped" stat "$SECOND_MNT/other"
kill -CONT "$META_PID"
touch "$SECOND_MNT/after" || fail "the second mount does not create after meta came back"
test -e "$MNT/after" || wait_until 10 "the create seen on the first mount" test -e "$MNT/after"
log PASS
