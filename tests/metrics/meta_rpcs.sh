#!/usr/bin/env bash
# Metadata round trips per operation, counted by meta itself
# (t0fs_rpc_server_requests_total by method), and what a second mount sees
# of the first one's changes.
#   1. N empty creates (open O_CREAT|O_WRONLY, close) through the mount:
#      meta serves N make_node and no open, allocate or commit: a create is
#      one meta RPC. The kernel's LOOKUP of each new name is answered by the
#      mount, which made the directory and knows all its names (no lookup);
#      closes reach meta in batches (release <= N); the directory's GETATTR
#      the kernel sends after each change is answered by the mount from the
#      create's answer, not by meta.
#      The data node is not called per create either: the mount prepared
#      new chunks' files ahead (reserve_chunks at meta, prepare_local at the
#      data node, one each per 16 creates), and no open_local. The files of
#      the files closed empty went back to the mount's pool and later
#      batches took them under new ids (t0fs_data_reused_chunk_files_total).
#   2. N creates with a 100-byte write each: N make_node, N commits, still no
#      open or allocate; at the data node no open_local, N adopt_local (the
#      prepared files get their names at the commit); the files read back.
#      At the mount, each of those N closes sent a FLUSH (a writer commits at
#      close); reading the files back (N read-only open, read, close) sends
#      none: a read-only open carries FOPEN_NOFLUSH.
#   3. N unlinks: N unlink RPCs, the directory's GETATTR answered by the
#      mount from the unlink's answer.
#   4. Two mounts, names and attributes cached for 30 s (the default
#      cache-timeout), kept true by meta's change feed: a name created on
#      one is seen by the other although it had cached its absence; a
#      rename, an append, a chmod and a removal are seen long before the
#      30 s (the waits below give up at 10 s); repeated stats of a cached
#      name reach meta at most a few times; the second mount counts the
#      invalidations the kernel took. Both mounts' change polls wait in
#      meta (long polls) while nothing changes.
#   5. meta killed and started again: the second mount's poll fails, then
#      it hears the new meta's feed again, and a name created on the first
#      mount whose absence the second had cached is seen there again.
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
data_url=$(data_metrics_url)

rpcs() { # rpcs METHOD: meta's (or, for the data node's methods, its) answered requests of METHOD so far
  local v url=$meta_url
  case $1 in open_local | prepare_local | adopt_local) url=$data_url ;; esac
  v=$(metric "$url" t0fs_rpc_server_requests_total method="$1")
  echo "${v:-0}"
}
methods=(make_node open allocate commit release get_attr lookup unlink reserve_chunks open_local prepare_local adopt_local)
declare -A before
snapshot() { local m; for m in "${methods[@]}"; do before[$m]=$(rpcs "$m"); done; }
delta() { echo $(( $(rpcs "$1") - ${before[$1]} )); }
report() { local m out=""; for m in "${methods[@]}"; do out+=" $m=$(delta "$m")"; done; log "$1:$out"; }

mount_url=$(mount_metrics_url "$CLUSTER_DIR/mount.log")
fuse_ops() { # fuse_ops OP: requests OP the mount has answered so far
  local v
  v=$(metric "$mount_url" t0fs_fuse_ops_total op="$1")
  echo "${v:-0}"
}

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
(( $(delta lookup) <= N / 2 )) || fail "the lookups of new names in a directory this mount made reached meta $(delta lookup) times"
(( $(delta get_attr) <= N / 2 )) || fail "the directory's GETATTR reached meta $(delta get_attr) times in $N creates"
(( $(delta open_local) == 0 )) || fail "$N empty creates opened chunk files at the data node $(delta open_local) times"
# A refill runs in the background: one may be between its two calls.
refills_whole() { (( $(delta reserve_chunks) == $(delta prepare_local) )); }
wait_until 20 "reserve_chunks ($(delta reserve_chunks)) = prepare_local ($(delta prepare_local))" refills_whole
# (up to two batches are held ahead: one call more than N / 16 at most)
(( $(delta prepare_local) >= 1 && $(delta prepare_local) <= N / 16 + 2 )) ||
  fail "$N creates prepared chunk files in $(delta prepare_local) calls (16 per call expected)"
reused=$(metric "$data_url" t0fs_data_reused_chunk_files_total)
(( ${reused:-0} >= 1 )) || fail "$N empty creates: no later batch took the files of the ones closed empty (reused=${reused:-none})"
log "chunk files reused by later creates: $reused"

# --- 2. creates with data
snapshot
flush0=$(fuse_ops flush)
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
for m in open allocate open_local; do
  (( $(delta $m) == 0 )) || fail "a create that writes cost $m RPCs: $(delta $m) for $N creates"
done
(( $(delta adopt_local) == N )) || fail "expected $N adopt_local (the prepared files named), got $(delta adopt_local)"
writer_flushes() { (( $(fuse_ops flush) - flush0 >= N )); }
wait_until 10 "a FLUSH from each writer's close ($(( $(fuse_ops flush) - flush0 )) of $N)" writer_flushes
flush0=$(fuse_ops flush) open0=$(fuse_ops open)
python3 - "$MNT/d" "$N" <<'PY'
import sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(f"{d}/w{i}", "rb") as f:
        assert f.read() == bytes([i % 251]) * 100, f"w{i} reads back wrong"
PY
reader_opens() { (( $(fuse_ops open) - open0 >= N )); }
wait_until 10 "the mount to count $N read-only opens ($(( $(fuse_ops open) - open0 )))" reader_opens
(( $(fuse_ops flush) == flush0 )) ||
  fail "$N read-only open+close sent $(( $(fuse_ops flush) - flush0 )) FLUSH requests (FOPEN_NOFLUSH expected)"

# --- 3. unlinks
snapshot
for i in $(seq 0 $((N - 1))); do rm "$MNT/d/e$i"; done
report "$N unlinks"
(( $(delta unlink) == N )) || fail "expected $N unlink RPCs, got $(delta unlink)"
(( $(delta get_attr) <= N / 2 )) || fail "the directory's GETATTR reached meta $(delta get_attr) times in $N unlinks"

# --- 4. a second mount
other="$CLUSTER_DIR/other"
extra_mount_start "$other" "$CLUSTER_DIR/other.log"
other_url=$(grep -o 'metrics on http://[^ ]*' "$CLUSTER_DIR/other.log" | head -1 | cut -d' ' -f3)
wait_until 10 "the second mount to hear the change feed" grep -q "hearing other clients' changes" "$CLUSTER_DIR/other.log"
# Both mounts keep a long poll parked in meta while nothing changes.
polls_waiting() { (( $(metric "$meta_url" t0fs_meta_change_polls_waiting) >= 2 )); }
wait_until 10 "both mounts' change polls to wait in meta ($(metric "$meta_url" t0fs_meta_change_polls_waiting))" polls_waiting
[[ ! -e "$other/d/new" ]] || fail "new exists before it was created"  # its absence is now cached (30 s)
echo hello >"$MNT/d/new"
wait_until 10 "the other mount to see a name created on the first (its absence was cached)" test -e "$other/d/new"
[[ "$(cat "$other/d/new")" == hello ]] || fail "the other mount reads '$(cat "$other/d/new")' from new"
snapshot
for i in $(seq 1 100); do stat "$other/d/new" >/dev/null; done
(( $(delta lookup) + $(delta get_attr) <= 5 )) ||
  fail "100 stats of a cached name reached meta $(( $(delta lookup) + $(delta get_attr) )) times"
mv "$MNT/d/new" "$MNT/d/moved"
wait_until 10 "the other mount to see the rename" test -e "$other/d/moved"
wait_until 10 "the other mount to lose the old name" bash -c "! test -e '$other/d/new'"
stat "$other/d/moved" >/dev/null
echo more >>"$MNT/d/moved"
wait_until 10 "the other mount to see the append" bash -c "[[ \$(stat -c %s '$other/d/moved') == 11 ]]"
[[ "$(cat "$other/d/moved")" == $'hello\nmore' ]] || fail "the other mount reads '$(cat "$other/d/moved")' after the append"
chmod 600 "$MNT/d/moved"
wait_until 10 "the other mount to see the chmod" bash -c "[[ \$(stat -c %a '$other/d/moved') == 600 ]]"
rm "$MNT/d/moved"
wait_until 10 "the other mount to see the removal" bash -c "! test -e '$other/d/moved'"
# A directory this mount made, whose names it answers for, learns of a
# name the other mount creates in it.
mkdir "$MNT/k"
touch "$MNT/k/mine"
[[ ! -e "$MNT/k/theirs" ]] || fail "k/theirs exists before it was created"
wait_until 10 "the other mount to see k/mine" test -e "$other/k/mine"
echo x >"$other/k/theirs"
wait_until 10 "the first mount to see a name the other created in a directory it made" test -e "$MNT/k/theirs"
[[ "$(cat "$MNT/k/theirs")" == x ]] || fail "k/theirs reads '$(cat "$MNT/k/theirs")'"
if [[ -n "$other_url" ]]; then
  inval=$(metric "$other_url" t0fs_fuse_invalidations_total)
  log "the second mount's kernel took ${inval:-0} invalidations"
  (( ${inval:-0} >= 4 )) || fail "the second mount counted ${inval:-0} invalidations"
fi

# --- 5. meta restarted under both mounts' waiting polls
heard=$(grep -c "hearing other clients' changes" "$CLUSTER_DIR/other.log")
kill -9 "$META_PID"
wait "$META_PID" 2>/dev/null || true
wait_until 10 "the second mount to notice meta gone" grep -q "other clients' changes may be missed" "$CLUSTER_DIR/other.log"
meta_start
hears_again() { (( $(grep -c "hearing other clients' changes" "$CLUSTER_DIR/other.log") > heard )); }
wait_until 30 "the second mount to hear the restarted meta's changes" hears_again
[[ ! -e "$other/k/after-restart" ]] || fail "k/after-restart exists before it was created"  # absence cached again
echo z >"$MNT/k/after-restart"
wait_until 10 "the other mount to see a name created after the meta restart" test -e "$other/k/after-restart"
log "PASS"
