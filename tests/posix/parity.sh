#!/usr/bin/env bash
# POSIX parity: the same syscalls on a t0fs mount and on a plain directory.
# PASSTHROUGH=on|off (tests/lib/passthrough.sh): both modes run in make test.
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/passthrough.sh"
pt_cluster_start
plain="$CLUSTER_DIR/plain"
mkdir -p "$plain"
"$T0FS_TEST_BIN/posix_parity" "$MNT" "$plain" $((1 << 20))
pt_check_used
fsck_clean
