#!/usr/bin/env bash
# protect=ec:K+M on a 6-node cluster (real processes on loopback), through a
# mount on node 1 (files written there keep their one replica on node 1):
#  - files under `replicas=1 protect=ec:2+1 within=1s` and `ec:4+2` are cut
#    into K+M cells on K+M distinct nodes after their last close; each data
#    cell's file on its node holds the chunk's units round robin
#    (docs/formats/ec.md), checked from outside; layout says protected,
#    status has nothing waiting, fsck is clean;
#  - a cell damaged on disk is found by its node's scrubber, dropped and
#    made again;
#  - a parity cell whose checksums are right but whose bytes are not the
#    code of the data (another cell's, made consistent) is found by meta's
#    parity check, dropped and made again; later checks find nothing;
#  - a rewrite is encoded again at the chunk's new version;
#  - keep-local=drop: once a file's cells are placed its replica files go
#    (layout: offloaded; fsck clean), it reads back decoded from the cells,
#    a write rebuilds the chunk it touches from the cells first, and the
#    new version is encoded and offloaded again; with no replica, a parity
#    cell that is not the code of the data cells is found and made again;
#  - node 1 (the only replica of both files, and one cell of each chunk) is
#    killed: a client on no node reads both files at once, decoded from the
#    cells (degraded reads, counted); repair rebuilds every chunk from K of its cells onto another
#    node and both files read back byte for byte; the 2+1 file's lost cells
#    are made again on the nodes left;
#  - node 2 is killed too: the 4+2 file has lost M = 2 of its cells (and
#    maybe its rebuilt replica) and still reads back;
#  - a goal changed to one without cells clears the file's cells;
#  - a removed file's cell files are deleted from the nodes still up;
#  - bad goals are refused (protect.sh checks the forms; here: too few nodes
#    for the cells waits with a warning).
set -euo pipefail
source "$(dirname "$0")/../lib/cluster.sh"

METRICS="127.0.0.1:$(free_port)"
META_FLAGS=(--suspect-after 1s --node-timeout 2s --repair-grace 5s --repair-interval 300ms --heartbeat 200ms
  --ec-verify-interval 1s --metrics-listen "$METRICS")
NODE_FLAGS=(--scrub-rate 256M --scrub-pause 1s)
multi_start 6 1M
MNT="$CLUSTER_DIR/mnt"
mkdir -p "$MNT"
mount_start --node-id 1

protection_is() {  # protection_is PATH STATE: `t0fs layout` reports STATE
  [[ "$(admin layout "t0fs:$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["protection"]["state"])')" == "$2" ]]
}
# equals N CMD..., at_least N CMD...: CMD prints N, at least N (for
# wait_until, which runs them again each time).
equals() { local n=$1; shift; test "$("$@")" -eq "$n"; }
at_least() { local n=$1; shift; test "$("$@")" -ge "$n"; }
status_field() {  # status_field KEY: protection.KEY of `t0fs status --json`
  admin status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["protection"][sys.argv[1]])' "$1"
}
# check_cells PATH SRC: every chunk of PATH has its K+M cells on K+M distinct
# nodes at the chunk's version, and each data cell's file (found in the
# node's volume by its cell id) holds the chunk's units round robin.
check_cells() {
  admin layout "t0fs:$1" --json >"$CLUSTER_DIR/layout.json"
  python3 - "$CLUSTER_DIR" "$2" <<'EOF'
import glob, json, sys
cluster, src = sys.argv[1], sys.argv[2]
layout = json.load(open(cluster + "/layout.json"))
data = open(src, "rb").read()
size = layout["chunk_size"]
for c in layout["chunks"]:
    ec = c["ec"]
    if ec is None:
        sys.exit("chunk #%d has no cells" % c["index"])
    version = max(r["version"] for r in c["replicas"])
    if ec["version"] != version:
        sys.exit("chunk #%d: cells at v%d, chunk at v%d" % (c["index"], ec["version"], version))
    k, unit = ec["k"], ec["unit"]
    nodes = [cell["node"] for cell in ec["cells"]]
    if len(nodes) != k + ec["m"] or len(set(nodes)) != len(nodes) or 0 in nodes:
        sys.exit("chunk #%d: cells on nodes %s" % (c["index"], nodes))
    chunk_id = c["replicas"][0]["chunk"]
    body = data[c["index"] * size:(c["index"] + 1) * size]
    if ec["length"] != len(body):
        sys.exit("chunk #%d: cells of %d bytes, chunk of %d" % (c["index"], ec["length"], len(body)))
    for j in range(k):
        want = b"".join(body[u * unit:(u + 1) * unit] for u in range(j, (len(body) + unit - 1) // unit, k))
        cell_id = chunk_id | (j + 1) << 56
        files = glob.glob("%s/vol%d/**/%016x.dat" % (cluster, nodes[j], cell_id), recursive=True)
        if len(files) != 1:
            sys.exit("chunk #%d cell %d: %d files on node %d" % (c["index"], j, len(files), nodes[j]))
        got = open(files[0], "rb").read()
        if got != want:
            sys.exit("chunk #%d cell %d on node %d: %d bytes differ from the chunk's units (%d)" %
                     (c["index"], j, nodes[j], len(got), len(want)))
EOF
}
# cell_files NODE...: cell files (a chunk id with a top byte) on those nodes' volumes.
cell_files() {
  local i
  for i in "$@"; do find "$CLUSTER_DIR/vol$i" -name '*.dat' ! -name '00*'; done | wc -l
}
# healthy_off PATH NODE...: every chunk of PATH has a healthy replica on a node not listed.
healthy_off() {
  local path=$1
  shift
  admin layout "t0fs:$path" --json | python3 -c '
import json, sys
gone = {int(n) for n in sys.argv[1:]}
chunks = json.load(sys.stdin)["chunks"]
sys.exit(0 if chunks and all(any(r["node"] not in gone and r["state"] == "healthy" for r in c["replicas"]) for c in chunks) else 1)' "$@"
}

log "== the goals are set"
mkdir "$MNT/a" "$MNT/b"
admin objective set t0fs:/a replicas=1 protect=ec:2+1 within=1s >/dev/null
admin objective set t0fs:/b replicas=1 protect=ec:4+2 within=1s >/dev/null
admin objective get t0fs:/a | grep -qF "protect=ec:2+1" || fail "objective get: $(admin objective get t0fs:/a)"

log "== closed files are cut into cells on distinct nodes"
# 4.5 MiB: four whole 1 MiB chunks and a half one (a short last row).
head -c $((9 << 19)) /dev/urandom >"$CLUSTER_DIR/src_a"
head -c $((5 << 20 | 12345)) /dev/urandom >"$CLUSTER_DIR/src_b"
cp "$CLUSTER_DIR/src_a" "$MNT/a/f"
cp "$CLUSTER_DIR/src_b" "$MNT/b/f"
wait_until 60 "a/f protected" protection_is /a/f protected
wait_until 60 "b/f protected" protection_is /b/f protected
check_cells /a/f "$CLUSTER_DIR/src_a" || fail "a/f's cells"
check_cells /b/f "$CLUSTER_DIR/src_b" || fail "b/f's cells"
admin layout t0fs:/a/f | grep -q "ec 2+1 v1:" || fail "layout shows no cells: $(admin layout t0fs:/a/f)"
wait_until 10 "nothing waiting in status" equals 0 status_field waiting_files
fsck_clean

log "== a cell the scrubber finds damaged is made again"
# Cell 0 of a/f's chunk #1 (524,288 bytes): two bytes flipped on its node.
read -r chunk1 node1 < <(admin layout t0fs:/a/f --json | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["chunks"] if c["index"] == 1][0]
print(c["replicas"][0]["chunk"] | 1 << 56, c["ec"]["cells"][0]["node"])')
cell_file=$(find "$CLUSTER_DIR/vol$node1" -name "$(printf '%016x' "$chunk1").dat")
python3 - "$cell_file" <<'EOF2'
import sys
with open(sys.argv[1], "r+b") as f:
    for off in (4096 * 3 + 17, 500000):
        f.seek(off); b = f.read(1); f.seek(off); f.write(bytes([b[0] ^ 0xFF]))
EOF2
wait_until 60 "meta hearing of the damaged cell" grep -q "reports cell 0 of chunk" "$CLUSTER_DIR/meta.log"
cells_current() { check_cells /a/f "$CLUSTER_DIR/src_a" 2>/dev/null; }
wait_until 60 "the damaged cell made again" cells_current
wait_until 20 "a/f protected again" protection_is /a/f protected

log "== a parity cell that is not the code of its data is found and made again"
metric() {  # metric NAME{LABELS}: its value on meta's /metrics (0 when absent)
  curl -sf "http://$METRICS/metrics" | awk -v m="$1" '$1 == m {print int($2); found=1} END {if (!found) print 0}'
}
clean_checks() { metric 't0fs_meta_ec_verifies_total{result="clean"}'; }
wait_until 30 "parity checks of the healthy cells" at_least 5 clean_checks
# (the cell damaged above may have been found by a parity check before its scrubber)
bad_before=$(metric t0fs_meta_ec_bad_cells_total)
# a/f's chunk #2: its parity cell gets its data cell 0 (parity_gets_data).
read -r chunk2 data_node parity_node < <(admin layout t0fs:/a/f --json | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["chunks"] if c["index"] == 2][0]
print(c["replicas"][0]["chunk"], c["ec"]["cells"][0]["node"], c["ec"]["cells"][2]["node"])')
cell_path() {  # cell_path CHUNK NODE CELL EXT
  find "$CLUSTER_DIR/vol$2" -name "$(printf '%016x' $(($1 | ($3 + 1) << 56))).$4"
}
# parity_gets_data CHUNK DATA_NODE PARITY_NODE: the chunk's parity cell 2
# (of a 2+1 stripe) gets cell 0's bytes and checksums, its header naming the
# parity cell: every checksum agrees, so no scrubber sees it.
parity_gets_data() {
  python3 - "$(cell_path "$1" "$2" 0 dat)" "$(cell_path "$1" "$2" 0 crc)" \
    "$(cell_path "$1" "$3" 2 dat)" "$(cell_path "$1" "$3" 2 crc)" $(($1 | 3 << 56)) <<'EOF2'
import struct, sys
data, crc, parity_data, parity_crc, parity_id = sys.argv[1:6]
header = bytearray(open(crc, "rb").read())
header[16:24] = struct.pack("<Q", int(parity_id))
for path, body in ((parity_data, open(data, "rb").read()), (parity_crc, bytes(header))):
    with open(path, "r+b") as f:  # in place: the node's open descriptors see it
        f.write(body)
        f.truncate()
EOF2
}
parity_gets_data "$chunk2" "$data_node" "$parity_node"
wait_until 60 "the parity check finding the cell" grep -q "cell 2 of chunk $chunk2 version .* is not the code" \
  "$CLUSTER_DIR/meta.log"
wait_until 60 "the bad cell made again" protection_is /a/f protected
test "$(metric t0fs_meta_ec_bad_cells_total)" = $((bad_before + 1)) ||
  fail "bad cells: $(metric t0fs_meta_ec_bad_cells_total), $bad_before before"
mismatches=$(metric 't0fs_meta_ec_verifies_total{result="mismatch"}')
clean=$(clean_checks)
wait_until 60 "two more rounds of parity checks" at_least $((clean + 22)) clean_checks
test "$(metric 't0fs_meta_ec_verifies_total{result="mismatch"}')" = "$mismatches" ||
  fail "parity checks still find bad cells: $(grep 'is not the code' "$CLUSTER_DIR/meta.log")"
timeout 60 cmp "$CLUSTER_DIR/src_a" "$MNT/a/f" || fail "a/f does not read back"

log "== a rewrite is encoded again at the new version"
printf 'rewritten' | dd of="$CLUSTER_DIR/src_a" bs=1 seek=100 conv=notrunc status=none
printf 'rewritten' | dd of="$MNT/a/f" bs=1 seek=100 conv=notrunc status=none
wait_until 60 "a/f's chunk 0 encoded at its new version" cells_current
wait_until 20 "a/f protected again" protection_is /a/f protected
cells_before=$(cell_files 1 2 3 4 5 6)
# 5 chunks x 3 cells + 6 chunks x 6 cells; cells moved to other nodes by the rewrite are garbage.
wait_until 20 "old cells collected" equals 51 cell_files 1 2 3 4 5 6
log "cell files: $cells_before, then $(cell_files 1 2 3 4 5 6)"

log "== keep-local=drop: the replica goes once the cells are placed; reads decode; a write rebuilds"
mkdir "$MNT/c"
admin objective set t0fs:/c replicas=1 protect=ec:2+1 within=1s keep-local=drop >/dev/null
# 2.5 MiB: chunks 0 and 1 whole, chunk 2 half.
head -c $((5 << 19)) /dev/urandom >"$CLUSTER_DIR/src_c"
cp "$CLUSTER_DIR/src_c" "$MNT/c/f"
c_states() {  # each chunk of c/f: "index:state,state"
  admin layout t0fs:/c/f --json | python3 -c '
import json, sys
for c in sorted(json.load(sys.stdin)["chunks"], key=lambda c: c["index"]):
    print("%d:%s" % (c["index"], ",".join(r["state"] for r in c["replicas"])))'
}
c_offloaded() { [[ -n "$(c_states)" && "$(c_states | grep -vc ':offloaded$')" == 0 ]]; }
c_replica_files() {  # replica files (not cells) of c/f's chunks on every volume
  local id n=0
  for id in $(admin layout t0fs:/c/f --json | python3 -c '
import json, sys
for c in json.load(sys.stdin)["chunks"]:
    print("%016x" % c["replicas"][0]["chunk"])'); do
    n=$((n + $(find "$CLUSTER_DIR"/vol* -name "$id.dat" | wc -l)))
  done
  echo "$n"
}
wait_until 60 "c/f's replicas offloaded" c_offloaded
protection_is /c/f protected || fail "c/f not protected: $(admin layout t0fs:/c/f)"
check_cells /c/f "$CLUSTER_DIR/src_c" || fail "c/f's cells"
wait_until 30 "c/f's replica files removed" equals 0 c_replica_files
admin layout t0fs:/c/f | grep -q "local copy: 3 of 3 chunk(s) offloaded (keep-local=drop): read from the erasure-coded cells" ||
  fail "layout does not say c/f is offloaded: $(admin layout t0fs:/c/f)"
fsck_clean
sync
echo 3 >/proc/sys/vm/drop_caches
timeout 60 cmp "$CLUSTER_DIR/src_c" "$MNT/c/f" || fail "c/f does not read back from its cells"
# A write in chunk 1: the chunk is rebuilt from its cells, then takes it.
printf 'rebuilt' | dd of="$CLUSTER_DIR/src_c" bs=1 seek=$((3 << 19)) conv=notrunc status=none
printf 'rebuilt' | timeout 60 dd of="$MNT/c/f" bs=1 seek=$((3 << 19)) conv=notrunc status=none ||
  fail "the write to offloaded c/f failed: $(grep -i 'offloaded\|staged' "$CLUSTER_DIR/mount.log" | tail -n 3)"
c_states | sed -n 2p | grep -q '^1:.*healthy' || fail "c/f's chunk 1 not staged back: $(c_states)"
sync
echo 3 >/proc/sys/vm/drop_caches
timeout 60 cmp "$CLUSTER_DIR/src_c" "$MNT/c/f" || fail "c/f does not read back after the write"
wait_until 90 "c/f offloaded again at its new version" c_offloaded
check_cells /c/f "$CLUSTER_DIR/src_c" || fail "c/f's cells after the write"
timeout 60 cmp "$CLUSTER_DIR/src_c" "$MNT/c/f" || fail "c/f does not read back offloaded again"
# With no replica left, the parity check reads the data cells: a parity
# cell of chunk #0 that is not their code (cell 0's bytes, checksums right)
# is found, dropped, and made again (rebuilt, encoded, offloaded again).
read -r chunk_c data_node_c parity_node_c < <(admin layout t0fs:/c/f --json | python3 -c '
import json, sys
c = [c for c in json.load(sys.stdin)["chunks"] if c["index"] == 0][0]
print(c["replicas"][0]["chunk"], c["ec"]["cells"][0]["node"], c["ec"]["cells"][2]["node"])')
parity_gets_data "$chunk_c" "$data_node_c" "$parity_node_c"
wait_until 60 "the parity check of offloaded c/f finding the cell" \
  grep -q "cell 2 of chunk $chunk_c version .* is not the code" "$CLUSTER_DIR/meta.log"
c_cells_current() { check_cells /c/f "$CLUSTER_DIR/src_c" 2>/dev/null; }
wait_until 90 "c/f's bad parity cell made again" c_cells_current
wait_until 90 "c/f offloaded again after the repair" c_offloaded
timeout 60 cmp "$CLUSTER_DIR/src_c" "$MNT/c/f" || fail "c/f does not read back after the parity repair"
rm "$MNT/c/f"
wait_until 30 "c/f's cells deleted" equals 51 cell_files 1 2 3 4 5 6

log "== node 1 (both files' only replica) dies: a client reads around it, decoding the cells"
# A second mount that is on no node: every read goes over the network.
MNT2="$CLUSTER_DIR/mnt2"
mkdir -p "$MNT2"
"$T0FS" mount "$META_ADDR" "$MNT2" --secret-file "$CLUSTER_DIR/secret" --retry-timeout 60s \
  >>"$CLUSTER_DIR/mount2.log" 2>&1 &
MNT2_PID=$!
stop_mnt2() {
  stop_pid "$MNT2_PID"
  if is_mounted "$MNT2"; then umount -l "$MNT2"; fi
}
CLUSTER_STOP_ALSO=stop_mnt2
wait_until 20 "the second mount" is_mounted "$MNT2"
# Chunks with a data cell on node 1: their rows are decoded whole (and kept
# for the reads that follow), not just the parity ignored.
lost_data_cells=0
for f in a/f b/f; do
  n=$(admin layout "t0fs:/$f" --json | python3 -c '
import json, sys
print(sum(1 for c in json.load(sys.stdin)["chunks"]
          if any(cell["node"] == 1 for cell in c["ec"]["cells"][:c["ec"]["k"]])))')
  lost_data_cells=$((lost_data_cells + n))
done
kill9 "${NODE_PIDS[1]}"
NODE_PIDS[1]=""
# Read at once, long before repair-grace: the replica is still in the layout.
timeout 60 cmp "$CLUSTER_DIR/src_a" "$MNT2/a/f" || fail "a/f does not read back around node 1"
timeout 60 cmp "$CLUSTER_DIR/src_b" "$MNT2/b/f" || fail "b/f does not read back around node 1"
metrics2=$(grep -o 'metrics on http://[^ ]*/metrics' "$CLUSTER_DIR/mount2.log" | head -n 1 | cut -d' ' -f3)
curl -sf "$metrics2" >"$CLUSTER_DIR/metrics2" || fail "the second mount's /metrics ($metrics2) does not answer"
grep -qE '^t0fs_client_degraded_reads_total [1-9]' "$CLUSTER_DIR/metrics2" ||
  fail "no degraded read counted: $(grep degraded "$CLUSTER_DIR/metrics2")"
if ((lost_data_cells > 0)); then
  grep -qE '^t0fs_client_degraded_rows_total [1-9]' "$CLUSTER_DIR/metrics2" ||
    fail "$lost_data_cells chunk(s) lost a data cell, but no row was decoded: $(grep degraded "$CLUSTER_DIR/metrics2")"
fi
log "chunks with a data cell on node 1: $lost_data_cells; $(grep -E '^t0fs_client_degraded_(reads|rows|row_hits)_total' "$CLUSTER_DIR/metrics2" | tr '\n' ' ')"

log "== node 1 is lost: chunks rebuilt from their cells"
wait_until 20 "node 1 down" node_is 1 down
node_lost() {
  admin status --json | python3 -c '
import json, sys
sys.exit(0 if any(n["node"] == 1 and n["lost"] for n in json.load(sys.stdin)["nodes"]) else 1)'
}
wait_until 30 "node 1 lost (down past repair-grace)" node_lost
wait_until 90 "a/f rebuilt off node 1" healthy_off /a/f 1
wait_until 90 "b/f rebuilt off node 1" healthy_off /b/f 1
timeout 60 cmp "$CLUSTER_DIR/src_a" "$MNT/a/f" || fail "a/f does not read back after the rebuild"
timeout 60 cmp "$CLUSTER_DIR/src_b" "$MNT/b/f" || fail "b/f does not read back after the rebuild"
# The 2+1 file's cells on node 1 are made again on the five nodes left;
# the 4+2 file cannot have six cells on five nodes and waits.
wait_until 60 "a/f protected without node 1" protection_is /a/f protected
check_cells /a/f "$CLUSTER_DIR/src_a" || fail "a/f's cells after node 1's loss"
protection_is /b/f waiting || fail "b/f is $(admin layout t0fs:/b/f --json | grep -o '"state": "[a-z]*"' | head -n 1) with 5 nodes for 6 cells"
wait_until 20 "meta saying why b/f waits" grep -q "needs 1 more node(s) for its ec:4+2 cells" "$CLUSTER_DIR/meta.log"

log "== node 2 is lost too: the 4+2 file has lost M = 2 cells and still reads back"
kill9 "${NODE_PIDS[2]}"
NODE_PIDS[2]=""
wait_until 20 "node 2 down" node_is 2 down
wait_until 90 "b/f readable off nodes 1 and 2" healthy_off /b/f 1 2
wait_until 90 "a/f readable off nodes 1 and 2" healthy_off /a/f 1 2
timeout 60 cmp "$CLUSTER_DIR/src_b" "$MNT/b/f" || fail "b/f does not read back after losing 2 nodes"
timeout 60 cmp "$CLUSTER_DIR/src_a" "$MNT/a/f" || fail "a/f does not read back after losing 2 nodes"
curl -sf "http://$METRICS/metrics" >"$CLUSTER_DIR/metrics" || fail "meta /metrics does not answer"
grep -qE '^t0fs_meta_ec_rebuilds_total [1-9]' "$CLUSTER_DIR/metrics" || fail "no rebuild counted"
grep -E '^t0fs_meta_ec_' "$CLUSTER_DIR/metrics" | tr '\n' ' ' >&2 || true
echo >&2

log "== a goal without cells: a/f's cells are cleared"
admin objective set t0fs:/a sync >/dev/null
no_cells() {
  admin layout t0fs:/a/f --json | python3 -c '
import json, sys
sys.exit(0 if all(c["ec"] is None for c in json.load(sys.stdin)["chunks"]) else 1)'
}
wait_until 30 "a/f's cells cleared" no_cells

log "== removed files' cells are deleted"
rm "$MNT/a/f" "$MNT/b/f"
deadline=$((SECONDS + 30))
until (($(cell_files 3 4 5 6) == 0)) || ((SECONDS > deadline)); do sleep 0.2; done
if (($(cell_files 3 4 5 6) != 0)); then
  find "$CLUSTER_DIR"/vol[3-6] -name '*.dat' >&2
  admin fsck >&2 || true
  fail "cell files are left"
fi
log "ok"
