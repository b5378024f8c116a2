#!/usr/bin/env bash
# Metadata round trips per operation, counted by meta itself
# (t0fs_rpc_server_requests_total by method), and what a second mount sees
# of the first one's changes.
#   1. N empty creates (open O_CREAT|O_WRONLY, close) through the mount:
#      meta serves N make_node and no open, allocate or commit: a create is
#      one meta RPC (the kernel's LOOKUP of the new name is its own FUSE op);
#      closes reach meta in batches (release <= N); the directory's GETATTR
#      the kernel sends after each change is answered by the mount from the
#      create's answer, not by meta.
#   2. N creates with a 100-byte write each: N make_node, N commits, still no
#      open or allocate; the files read back.
#   3. N unlinks: N unlink RPCs, the directory's GETATTR answered by the
#      mount from the unlink's answer.
#   4. Two mounts: a name created on one is seen by the other at once (no
#      cached negative entry), a rename and a removal within the documented
#      1 s of the kernel's entry cache, a chmod within its 1 s attribute cache.
# Counts, not timings: every assertion holds on a slow machine.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/cluster.sh"
source "$here/lib/prometheus.sh"
source "$here/lib/endpoints.sh"

N=200
cleanup() {
  local rc=$?
  set +e
  extra_mount_stop
  (exit $rc)
  cluster_stop
}
cluster_start 1M
trap cleanup EXIT
meta_url=$(meta_metrics_url)

rpcs() { # rpcs METHOD: meta's answered requests of METHOD so far
  local v
  v=$(metric "$meta_url" t0fs_rpc_server_requests_total method="$1")
  echo "${v:-0}"
}
methods=(make_node open allocate commit release get_attr lookup unlink)
declare -A before
snapshot() { local m; for m in "${methods[@]}"; do before[$m]=$(rpcs "$m"); done; }
delta() { echo $(( $(rpcs "$1") - ${before[$1]} )); }
report() { local m out=""; for m in "${methods[@]}"; do out+=" $m=$(delta "$m")"; done; log "$1:$out"; }

mkdir "$MNT/d"
# --- 1. empty creates
snapshot
python3 - "$MNT/d" "$N" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    os.close(os.open(f"{d}/e{i}", os.O_CREAT | os.O_WRONLY, 0o644))
PY
released() { (( $(delta release) >= 1 )); }
wait_until 20 "the closes to reach meta (sent in the background)" released
report "$N empty creates"
(( $(delta make_node) == N )) || fail "expected $N make_node, got $(delta make_node)"
for m in open allocate commit; do
  (( $(delta $m) == 0 )) || fail "an empty create cost $m RPCs: $(delta $m) for $N creates"
done
(( $(delta release) >= 1 && $(delta release) <= N )) || fail "release RPCs: $(delta release)"
(( $(delta get_attr) <= N / 2 )) || fail "the directory's GETATTR reached meta $(delta get_attr) times in $N creates"

# --- 2. creates with data
snapshot
python3 - "$MNT/d" "$N" <<'PY'
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    fd = os.open(f"{d}/w{i}", os.O_CREAT | os.O_WRONLY, 0o644)
    os.write(fd, bytes([i % 251]) * 100)
    os.close(fd)
PY
report "$N creates with 100 bytes"
(( $(delta make_node) == N )) || fail "expected $N make_node, got $(delta make_node)"
(( $(delta commit) == N )) || fail "expected $N commits (one per written file), got $(delta commit)"
for m in open allocate; do
  (( $(delta $m) == 0 )) || fail "a create that writes cost $m RPCs: $(delta $m) for $N creates"
done
python3 - "$MNT/d" "$N" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(f"{d}/w{i}", "rb") as f:
        assert f.read() == bytes([i % 251]) * 100, f"w{i} reads back wrong"
PY

# --- 3. unlinks
snapshot
for i in $(seq 0 $((N - 1))); do rm "$MNT/d/e$i"; done
report "$N unlinks"
(( $(delta unlink) == N )) || fail "expected $N unlink RPCs, got $(delta unlink)"
(( $(delta get_attr) <= N / 2 )) || fail "the directory's GETATTR reached meta $(delta get_attr) times in $N unlinks"

# --- 4. a second mount
other="$CLUSTER_DIR/other"
extra_mount_start "$other" "$CLUSTER_DIR/other.log"
[[ ! -e "$other/d/new" ]] || fail "new exists before it was created"
echo hello >"$MNT/d/new"
[[ "$(cat "$other/d/new")" == hello ]] || fail "the other mount does not see a name created on the first at once"
stat "$other/d/new" >/dev/null
mv "$MNT/d/new" "$MNT/d/moved"
wait_until 5 "the other mount to see the rename" test -e "$other/d/moved"
wait_until 5 "the other mount to lose the old name" bash -c "! test -e '$other/d/new'"
chmod 600 "$MNT/d/moved"
wait_until 5 "the other mount to see the chmod" bash -c "[[ \$(stat -c %a '$other/d/moved') == 600 ]]"
rm "$MNT/d/moved"
wait_until 5 "the other mount to see the removal" bash -c "! test -e '$other/d/moved'"
log "PASS"
