#!/usr/bin/env bash
# Random bytes, truncated and oversized frames to the meta and data ports:
# each gets an error or a closed connection, and both services keep serving.
source "$(dirname "$0")/../lib/cluster.sh"
cluster_start 1M
echo before >"$MNT/before"
"$T0FS_TEST_BIN/bad_input" "$META_ADDR" "$DATA_ADDR" "$CLUSTER_DIR/secret"
kill -0 "$META_PID" || fail "meta died"
kill -0 "$DATA_PID" || fail "data died"
echo after >"$MNT/after"
[[ "$(cat "$MNT/before" "$MNT/after")" == $'before\nafter' ]] || fail "mount no longer works"
fsck_clean
