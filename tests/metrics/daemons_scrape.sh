#!/usr/bin/env bash
# Every daemon of a running single-node t0fs serves /metrics, and the
# counters move by the I/O this test does:
#   - a mount with the local bypass writes and reads 8 MiB: the client's
#     bypass bytes, the FUSE op counts and latencies, the data node's handed-out
#     descriptors and meta's commits all move;
#   - a second mount without the bypass writes and reads 8 MiB: the data
#     node's TCP bytes and that client's remote bytes move;
#   - `t0fs status --watch --json` runs meanwhile: frames keep coming, rates
#     appear from the second frame on, and it exits 130 on SIGINT (stopped by the user);
#   - promtool accepts each exposition.
# Only deltas and ≥ comparisons: no timing thresholds.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../lib/cluster.sh"
source "$here/lib/prometheus.sh"
source "$here/lib/endpoints.sh"

MiB=$((1 << 20))
watch_pid=""
cleanup() {
  local rc=$?
  set +e
  if [[ -n "$watch_pid" ]]; then kill "$watch_pid" 2>/dev/null; wait "$watch_pid" 2>/dev/null; fi
  extra_mount_stop
  (exit $rc)
  cluster_stop
}

# The mount's own data path (the local bypass), whose byte counters this
# checks: with passthrough the kernel would serve the file and they would
# not move (tests/posix/passthrough.sh checks that).
cluster_start 1M --passthrough false
trap cleanup EXIT

meta_url=$(meta_metrics_url)
data_url=$(data_metrics_url)
mount_url=$(mount_metrics_url "$CLUSTER_DIR/mount.log")
log "metrics: meta $meta_url, data $data_url, mount $mount_url"

# Each endpoint: the families an operator relies on, and a clean lint.
expect_names() { # expect_names URL NAME...
  local url=$1 name text
  shift
  text=$(prom_py get "$url")
  for name in "$@"; do
    grep -q "^$name[{ ]" <<<"$text" || fail "$url has no $name"
  done
  if command -v promtool >/dev/null 2>&1; then
    promtool check metrics <<<"$text" || fail "promtool rejects $url"
  fi
}
common=(process_cpu_seconds_total process_resident_memory_bytes process_open_fds t0fs_build_info)
rpc=(t0fs_rpc_server_requests_total t0fs_rpc_server_request_duration_seconds_bucket
     t0fs_rpc_server_requests_in_flight t0fs_rpc_server_connections t0fs_rpc_server_bytes_total)
expect_names "$meta_url" "${common[@]}" "${rpc[@]}" t0fs_meta_node_state t0fs_meta_nodes \
  t0fs_meta_node_heartbeat_age_seconds t0fs_meta_volume_capacity_bytes t0fs_meta_volume_chunks \
  t0fs_meta_chunks_below_objective t0fs_meta_repair_copies_total t0fs_meta_repair_bytes_total t0fs_meta_sessions
expect_names "$data_url" "${common[@]}" "${rpc[@]}" t0fs_data_bytes_total t0fs_data_local_opens_total \
  t0fs_data_volume_chunks t0fs_data_volume_capacity_bytes t0fs_data_volume_available_bytes t0fs_data_node_info
expect_names "$mount_url" "${common[@]}" t0fs_client_bytes_total t0fs_client_reads_total \
  t0fs_fuse_ops_total t0fs_fuse_op_duration_seconds_bucket t0fs_fuse_requests_in_flight t0fs_fuse_open_files

[[ $(metric "$meta_url" t0fs_meta_node_state node=1 state=up) == 1 ]] || fail "meta does not show node 1 up"
[[ $(metric "$data_url" t0fs_data_node_info node=1) == 1 ]] || fail "data does not know it is node 1"

# `status --watch` in the background for the rest of the test.
"$T0FS" status --watch --json --interval 200ms --meta "$META_ADDR" --secret-file "$CLUSTER_DIR/secret" \
  >"$CLUSTER_DIR/watch.out" 2>"$CLUSTER_DIR/watch.err" &
watch_pid=$!

# --- 1. through the local bypass
before() { metric "$@"; }
b_local_w=$(before "$mount_url" t0fs_client_bytes_total op=write path=local)
b_local_r=$(before "$mount_url" t0fs_client_bytes_total op=read path=local)
b_fuse_w=$(before "$mount_url" t0fs_fuse_ops_total op=write result=ok)
b_fuse_w=${b_fuse_w:-0}
b_opens=$(before "$data_url" t0fs_data_local_opens_total)
b_open_rpc=$(before "$data_url" t0fs_rpc_server_requests_total method=open_local result=ok)
b_open_rpc=${b_open_rpc:-0}
b_commits=$(before "$meta_url" t0fs_rpc_server_requests_total method=commit result=ok)
b_commits=${b_commits:-0}

dd if=/dev/urandom of="$CLUSTER_DIR/src" bs=1M count=8 status=none
cp "$CLUSTER_DIR/src" "$MNT/local.bin"
sync "$MNT/local.bin"
# O_DIRECT reads reach the daemon whatever the page cache holds.
dd if="$MNT/local.bin" of="$CLUSTER_DIR/back" bs=1M iflag=direct status=none
cmp "$CLUSTER_DIR/src" "$CLUSTER_DIR/back" || fail "read back differs"

delta() { # delta NOW BEFORE
  echo $(( ${1:-0} - ${2:-0} ))
}
d=$(delta "$(metric "$mount_url" t0fs_client_bytes_total op=write path=local)" "$b_local_w")
((d >= 8 * MiB)) || fail "client local write bytes grew by $d, want >= $((8 * MiB))"
d=$(delta "$(metric "$mount_url" t0fs_client_bytes_total op=read path=local)" "$b_local_r")
((d >= 8 * MiB)) || fail "client local read bytes grew by $d, want >= $((8 * MiB))"
d=$(delta "$(metric "$mount_url" t0fs_fuse_ops_total op=write result=ok)" "$b_fuse_w")
((d >= 8)) || fail "FUSE write ops grew by $d, want >= 8 (1 MiB max_write)"
n=$(metric "$mount_url" t0fs_fuse_op_duration_seconds_count op=write)
((n >= d)) || fail "FUSE write latency count $n < ops $d"
d=$(delta "$(metric "$data_url" t0fs_data_local_opens_total)" "$b_opens")
((d >= 1)) || fail "data handed out no descriptors for bypass I/O"
d=$(delta "$(metric "$data_url" t0fs_rpc_server_requests_total method=open_local result=ok)" "$b_open_rpc")
((d >= 1)) || fail "data RPC counter open_local did not move"
d=$(delta "$(metric "$meta_url" t0fs_rpc_server_requests_total method=commit result=ok)" "$b_commits")
((d >= 1)) || fail "meta commit counter did not move"
n=$(metric "$data_url" t0fs_data_volume_chunks)
((n >= 8)) || fail "data volume reports $n chunks, want >= 8 (8 MiB in 1 MiB chunks)"
log "bypass: client, FUSE, data and meta counters moved"

# --- 2. over TCP (a second mount with the bypass off)
extra_mount_start "$CLUSTER_DIR/mnt2" "$CLUSTER_DIR/mount2.log" --local-bypass false
mount2_url=$(mount_metrics_url "$CLUSTER_DIR/mount2.log")
b_tcp_w=$(metric "$data_url" t0fs_data_bytes_total op=write transport=tcp)
b_tcp_r=$(metric "$data_url" t0fs_data_bytes_total op=read transport=tcp)
b_rpc_in=$(metric "$data_url" t0fs_rpc_server_bytes_total direction=in)
cp "$CLUSTER_DIR/src" "$CLUSTER_DIR/mnt2/remote.bin"
sync "$CLUSTER_DIR/mnt2/remote.bin"
dd if="$CLUSTER_DIR/mnt2/remote.bin" of="$CLUSTER_DIR/back2" bs=1M iflag=direct status=none
cmp "$CLUSTER_DIR/src" "$CLUSTER_DIR/back2" || fail "read back over TCP differs"
d=$(delta "$(metric "$data_url" t0fs_data_bytes_total op=write transport=tcp)" "$b_tcp_w")
((d >= 8 * MiB)) || fail "data TCP write bytes grew by $d, want >= $((8 * MiB))"
d=$(delta "$(metric "$data_url" t0fs_data_bytes_total op=read transport=tcp)" "$b_tcp_r")
((d >= 8 * MiB)) || fail "data TCP read bytes grew by $d, want >= $((8 * MiB))"
d=$(delta "$(metric "$data_url" t0fs_rpc_server_bytes_total direction=in)" "$b_rpc_in")
((d >= 8 * MiB)) || fail "data RPC bytes in grew by $d, want >= $((8 * MiB))"
d=$(metric "$mount2_url" t0fs_client_bytes_total op=write path=remote)
((d >= 8 * MiB)) || fail "second client's remote write bytes are $d, want >= $((8 * MiB))"
d=$(metric "$mount2_url" t0fs_client_bytes_total op=write path=local)
((d == 0)) || fail "second client (bypass off) counted $d local bytes"
log "TCP: data and client counters moved"

# --- 3. the watch saw it: its counters reached what the data node served
want=$(metric "$data_url" t0fs_data_bytes_total op=write transport=tcp)
seen() {
  python3 - "$CLUSTER_DIR/watch.out" "$want" <<'PY'
import json, sys
want = int(sys.argv[2])
frames = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
ok = any(f.get("nodes") and f["nodes"][0]["traffic"]["tcp_write_bytes"] >= want
         and f["nodes"][0]["rates"] is not None for f in frames)
sys.exit(0 if ok else 1)
PY
}
wait_until 20 "status --watch to report the TCP bytes" seen
kill -INT "$watch_pid"
rc=0
wait "$watch_pid" || rc=$?
watch_pid=""
((rc == 130)) || { cat "$CLUSTER_DIR/watch.err" >&2; fail "status --watch exited $rc on SIGINT"; }
frames=$(grep -c '"nodes"' "$CLUSTER_DIR/watch.out")
((frames >= 2)) || fail "status --watch printed $frames frame(s)"
python3 - "$CLUSTER_DIR/watch.out" <<'PY' || fail "status --watch frames are malformed"
import json, sys
frames = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
assert frames[0]["nodes"][0]["rates"] is None, "the first frame cannot have rates"
last = frames[-1]
assert last["nodes"][0]["state"] == "up"
assert "copy_bps" in last["repair"] and last["meta_metrics_address"]
PY
# The text form without a TTY: frames follow each other.
rc=0
timeout --preserve-status -s INT 2 "$T0FS" status --watch --interval 200ms --meta "$META_ADDR" \
  --secret-file "$CLUSTER_DIR/secret" >"$CLUSTER_DIR/watch.txt" || rc=$?
((rc == 130)) || fail "text watch exited $rc on SIGINT (want 130)"
grep -q "NET READ" "$CLUSTER_DIR/watch.txt" || fail "text watch printed no table"
grep -q "^repair:" "$CLUSTER_DIR/watch.txt" || fail "text watch printed no repair line"
log "status --watch: $frames JSON frames, exits 130 on SIGINT"

fsck_clean
log "PASS"
