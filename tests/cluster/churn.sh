#!/usr/bin/env bash
# Two mounts churning the same few files at once (churn.py): threads write,
# read and truncate them through both, across chunk boundaries. Whatever
# the interleaving, no replica may be marked stale on a client's word (meta
# recording a version before its writes reached the node, a commit of a
# chunk that is no longer the file's), no block's checksum may disagree
# with its data, no call may fail with an error the mode does not allow
# (EACCES: a capability for a chunk that is gone, or without write rights;
# ESTALE, EBADF), and both mounts must read every file alike afterwards.
#
#   churn.sh              mount A on node 1 with passthrough, mount B with no
#                         local node (every byte over TCP). A passthrough
#                         writer whose chunk 0 another client truncates away
#                         loses its later writes (EIO at its next flush, or
#                         EBUSY for an open that must join it: docs/fuse.md),
#                         so those two are allowed here.
#   PASSTHROUGH=off       both through the page cache: no error but ENOENT
#                         (a file before its first create).
# Both modes end with fsck clean.
#   CHURN_SEED, CHURN_SECONDS (default 15), CHURN_THREADS (default 8)
source "$(dirname "$0")/../lib/cluster.sh"

SEED=${CHURN_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000000))}
pt=()
allowed="EIO,EBUSY"
if [[ "${PASSTHROUGH:-on}" == off ]]; then
  pt=(--passthrough false)
  allowed=""
fi
cluster_start 1M "${pt[@]}"
second_mount_start

log "churn: seed $SEED (CHURN_SEED=$SEED replays the same choices; threads interleave anew)"
timeout 300 python3 "$(dirname "$0")/churn.py" "$MNT" "$SECOND_MNT" "${CHURN_SECONDS:-15}" \
  "${CHURN_THREADS:-8}" "$SEED" "$allowed" || fail "churn failed (seed $SEED)"

# Meta marks a replica stale on a client's report only while it records
# the version the client expected; with one data node nothing is stale.
if grep -E "reports the replica of chunk [0-9]+ on node [0-9]+ stale .*it will be repaired" "$CLUSTER_DIR/meta.log"; then
  fail "a client's report marked a replica stale (seed $SEED)"
fi
# Every byte the kernel wrote through passthrough gets its checksums
# rebuilt at the last writer's close, also when its commit failed.
if grep -E "checksum mismatch" "$CLUSTER_DIR"/data.log "$CLUSTER_DIR"/meta.log; then
  fail "a chunk file's data and checksums disagreed (seed $SEED)"
fi
# No chunk file in no layout: a writer whose layout still had a chunk
# another client truncated away must not create it again on the node.
fsck_clean
log PASS
