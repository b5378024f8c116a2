#!/usr/bin/env bash
# `t0fs fsck` on a 3-node cluster (real processes on loopback):
#  - a node is killed and repair replaces its replicas elsewhere: the old
#    copies wait in the garbage queue until the node is back. That is
#    expected state, so fsck exits 0, noting them as "pending removal" (and
#    warning that the down node was not checked); once the node is back and
#    has removed them, the notes are gone;
#  - data below its replica objective is never "clean" (exit 1, "below
#    objective"), and `objective set replicas=N` warns when fewer than N
#    nodes are up;
#  - orphans (chunk files in no layout) are reported, removed on request
#    (--remove-orphans; the nodes' own sweep is off until then), and a node
#    started with --orphan-sweep has its orphans removed by itself.
source "$(dirname "$0")/../lib/cluster.sh"
PROBE=${T0FS_TEST_BIN:?}/t0fs_probe

# Short timers so that a test sees down and repair within seconds.
META_FLAGS=(--suspect-after 1s --node-timeout 2s --repair-grace 3s --repair-interval 300ms --heartbeat 200ms)
NODE_FLAGS=(--orphan-sweep 0)  # the orphans below stay until fsck removes them
multi_start 3 1M

probe_on() {
  local node=$1 cmd=$2
  shift 2
  "$PROBE" "$cmd" "$META_ADDR" "$CLUSTER_DIR/secret" "$node" "$@"
}
# layout_ok PATH EXPR: EXPR (Python) holds for PATH's layout, where `chunks`
# is a list of [(node, state), ...] per chunk.
layout_ok() {
  admin layout "t0fs:$1" --json | python3 -c '
import json, sys
l = json.load(sys.stdin)
chunks = [[(r["node"], r["state"]) for r in c["replicas"]] for c in l["chunks"]]
def nodes(c): return [n for n, s in c]
def healthy(c): return [n for n, s in c if s == "healthy"]
sys.exit(0 if (len(chunks) > 0 and eval(sys.argv[1])) else 1)' "$2"
}
replicas_on() {  # replicas_on NODE: the replicas status counts on NODE
  admin status --json | python3 -c '
import json, sys
print([n["replicas"] for n in json.load(sys.stdin)["nodes"] if n["node"] == int(sys.argv[1])][0])' "$1"
}

log "== replicas=2 files, then a node holding copies of them is killed"
probe_on 1 mkdir /r2
admin objective set t0fs:/r2 replicas=2 >/dev/null
files=()
for i in 1 2 3 4 5 6; do
  probe_on 1 write "/r2/f$i" $((2 << 20)) $((40 + i))
  files+=("/r2/f$i")
done
fsck_clean
# 6 files of 2 chunks: the second copies (12) are on nodes 2 and 3.
second_copies_counted() { (($(replicas_on 2) + $(replicas_on 3) >= 12)); }
wait_until 20 "replica counts in status" second_copies_counted
victim=2
(($(replicas_on 3) > $(replicas_on 2))) && victim=3
log "node $victim holds $(replicas_on $victim) replica(s); killing it"
kill9 "${NODE_PIDS[$victim]}"
wait_until 20 "node $victim down" node_is "$victim" down
repaired() {
  local f
  for f in "${files[@]}"; do
    layout_ok "$f" "all(len(set(healthy(c))) == 2 and $victim not in nodes(c) for c in chunks)" || return 1
  done
}
wait_until 90 "every chunk at 2 healthy replicas on the survivors" repaired

log "== fsck while the replaced copies await removal on the down node"
rc=0
admin fsck >"$CLUSTER_DIR/fsck.out" 2>&1 || rc=$?
cat "$CLUSTER_DIR/fsck.out" >&2
((rc == 0)) || fail "fsck exit $rc while replaced copies await removal"
grep -q "both in a layout and in the garbage queue" "$CLUSTER_DIR/fsck.out" && fail "expected state reported as a problem"
grep -q "^note: pending removal: chunk .* was replaced on node $victim (down)" "$CLUSTER_DIR/fsck.out" ||
  fail "no pending-removal note"
grep -q "^warning: node $victim .* is down" "$CLUSTER_DIR/fsck.out" || fail "no warning about the down node"
grep -q "^fsck: clean" "$CLUSTER_DIR/fsck.out" || fail "not clean"

log "== the node comes back and removes its old copies: no more notes"
node_start "$victim"
no_pending() { ! admin fsck | grep -q "pending removal"; }
wait_until 60 "the old copies removed" no_pending
fsck_clean

log "== below the objective is never clean"
probe_on 1 mkdir /r4
admin objective set t0fs:/r4 replicas=4 >/dev/null 2>"$CLUSTER_DIR/err" || fail "objective set replicas=4"
grep -q "warning: replicas=4 but only 3 data node(s) are up" "$CLUSTER_DIR/err" ||
  fail "no warning for replicas=4 on 3 nodes: $(cat "$CLUSTER_DIR/err")"
probe_on 1 write /r4/f $((1 << 20)) 77
rc=0
admin fsck >"$CLUSTER_DIR/fsck.out" 2>&1 || rc=$?
cat "$CLUSTER_DIR/fsck.out" >&2
((rc == 1)) || fail "fsck exit $rc with a file below its objective"
grep -q "^below objective: file .* chunk #0 has 3 healthy replica(s), its objective wants 4" "$CLUSTER_DIR/fsck.out" ||
  fail "no below-objective line"
grep -q "^fsck: clean" "$CLUSTER_DIR/fsck.out" && fail "reported clean"
admin objective set t0fs:/r4 replicas=3 >/dev/null 2>"$CLUSTER_DIR/err" || fail "objective set replicas=3"
[[ ! -s "$CLUSTER_DIR/err" ]] || fail "a warning with 3 nodes up: $(cat "$CLUSTER_DIR/err")"
fsck_clean

log "== orphans (chunk files in no layout) are removed with --remove-orphans"
# Two kinds: files under a chunk id meta never gave out (as a chunk
# truncated away while its node was not told, e.g. across a host crash),
# and a live chunk's files on a node its layout does not name (as a writer
# with an old layout leaves them). Both made by copying a live chunk's files.
src="" elsewhere=""
for f in $(find "$CLUSTER_DIR/vol1" -name '*.dat'); do
  for n in 2 3; do
    if [[ ! -e "$CLUSTER_DIR/vol$n/${f#"$CLUSTER_DIR/vol1/"}" ]]; then
      src=$f elsewhere=$n
      break 2
    fi
  done
done
[[ -n "$src" ]] || fail "no chunk of node 1 that another node lacks"
orphan=$((0xfff000))
odir="$(dirname "$(dirname "$src")")/$(printf '%02x' $((orphan & 0xff)))"
mkdir -p "$odir"
ofile="$odir/$(printf '%016x' "$orphan")"
cp "$src" "$ofile.dat"
cp "${src%.dat}.crc" "$ofile.crc"
copy="$CLUSTER_DIR/vol$elsewhere/${src#"$CLUSTER_DIR/vol1/"}"
mkdir -p "$(dirname "$copy")"
cp "$src" "$copy"
cp "${src%.dat}.crc" "${copy%.dat}.crc"
live=$((16#$(basename "$src" .dat)))
rc=0
admin fsck >"$CLUSTER_DIR/fsck.out" 2>&1 || rc=$?
((rc == 1)) || fail "fsck exit $rc with orphans: $(cat "$CLUSTER_DIR/fsck.out")"
grep -q "^orphan: chunk file $orphan on node 1 " "$CLUSTER_DIR/fsck.out" ||
  fail "no orphan line for the unknown id: $(cat "$CLUSTER_DIR/fsck.out")"
grep -q "^orphan: chunk file $live on node $elsewhere " "$CLUSTER_DIR/fsck.out" ||
  fail "no orphan line for the live chunk on node $elsewhere: $(cat "$CLUSTER_DIR/fsck.out")"
rc=0
admin fsck --remove-orphans >"$CLUSTER_DIR/fsck.out" 2>&1 || rc=$?
cat "$CLUSTER_DIR/fsck.out" >&2
((rc == 1)) || fail "fsck --remove-orphans exit $rc (the orphans were still there when it looked)"
grep -q "^note: 2 of 2 orphan chunk file(s) queued for removal" "$CLUSTER_DIR/fsck.out" ||
  fail "no note of the queued orphans"
wait_until 30 "the unknown id's files removed by node 1" test ! -e "$ofile.dat"
wait_until 30 "the live chunk's copy removed by node $elsewhere" test ! -e "$copy"
[[ ! -e "$ofile.crc" && ! -e "${copy%.dat}.crc" ]] || fail "an orphan's checksum file is left"
[[ -e "$src" ]] || fail "the live chunk's own file went too"
fsck_clean

log "== a node's own orphan sweep removes them without fsck"
# Node 1 again with an orphan under an unknown id, restarted with a sweep
# every second: the files go, the live chunk's stay, fsck is clean.
no_garbage() { admin status --json | grep -q '"garbage_chunks": 0'; }
wait_until 30 "the removals acknowledged" no_garbage  # (else node 1 redoes one after its restart)
cp "$src" "$ofile.dat"
cp "${src%.dat}.crc" "$ofile.crc"
kill "${NODE_PIDS[1]}"
wait "${NODE_PIDS[1]}" 2>/dev/null || true
NODE_FLAGS=(--orphan-sweep 1s)
node_start 1
wait_until 30 "node 1's sweep removed the orphan" test ! -e "$ofile.dat"
[[ ! -e "$ofile.crc" ]] || fail "the swept orphan's checksum file is left"
[[ -e "$src" ]] || fail "the sweep removed a live chunk's file"
# (Logged once the volume's sweep is over: maybe after the removal.)
wait_until 10 "node 1's sweep logged" grep -q \
  "orphan sweep of volume .*: 1 of its .* chunk file(s) are in no layout" "$CLUSTER_DIR/data1.log"
fsck_clean
log "PASS fsck_repair"
