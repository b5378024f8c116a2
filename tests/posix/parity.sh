#!/usr/bin/env bash
# POSIX parity: the same syscalls on a t0fs mount and on a plain directory.
source "$(dirname "$0")/../lib/cluster.sh"
cluster_start 1M
plain="$CLUSTER_DIR/plain"
mkdir -p "$plain"
"$T0FS_TEST_BIN/posix_parity" "$MNT" "$plain" $((1 << 20))
fsck_clean
