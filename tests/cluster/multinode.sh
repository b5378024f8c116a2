#!/usr/bin/env bash
# Many nodes as one namespace, as real processes: placement, per-path reads,
# replicated writes through a node crash, repair, reconciliation of a node
# that comes back, corrupt replicas, objective changes, drain, capabilities.
#
#   multinode.sh            four nodes on loopback
#   NETNS=1 multinode.sh    the same, every node in its own network namespace
#                           (skipped, exit 77, where namespaces cannot be made)
#
# Waits are bounded liveness checks (the cluster must get there), never
# timing assertions.
source "$(dirname "$0")/../lib/cluster.sh"
PROBE=${T0FS_TEST_BIN:?}/t0fs_probe

if [[ "${NETNS:-0}" == 1 ]] && ! netns_usable; then
  echo "SKIP: network namespaces need root and veth/bridge support (running as uid $EUID)"
  exit 77
fi

# Short timers so that a test sees suspect, down, repair within seconds.
META_FLAGS=(--suspect-after 1s --node-timeout 2s --repair-grace 3s --repair-interval 300ms --heartbeat 200ms)
multi_start 4 1M

# probe_on NODE write|read PATH ...: libt0fs on node NODE's network, as that node's client.
probe_on() {
  local node=$1 cmd=$2
  shift 2
  in_node "$node" "$PROBE" "$cmd" "$META_ADDR" "$CLUSTER_DIR/secret" "$node" "$@"
}

# layout_ok PATH EXPR: EXPR (Python) holds for the layout of PATH, where
# `chunks` is a list of [(node, state), ...] per chunk and `size` the file size.
layout_ok() {
  admin layout "t0fs:$1" --json | python3 -c '
import json, sys
l = json.load(sys.stdin)
chunks = [[(r["node"], r["state"]) for r in c["replicas"]] for c in l["chunks"]]
size = l["size"]
def nodes(c): return [n for n, s in c]
def healthy(c): return [n for n, s in c if s == "healthy"]
sys.exit(0 if (len(chunks) > 0 and eval(sys.argv[1])) else 1)' "$2"
}
expect_layout() { layout_ok "$1" "$2" || { admin layout "t0fs:$1" >&2; fail "$1: layout does not satisfy: $2"; }; }
# flip_bytes FILE: damages two bytes of a chunk data file.
flip_bytes() {
  [[ -f "$1" ]] || fail "no chunk file $1"
  python3 - "$1" <<'EOF'
import sys
with open(sys.argv[1], "r+b") as f:
    for off in (4096 * 3 + 17, 500000):
        f.seek(off); b = f.read(1); f.seek(off); f.write(bytes([b[0] ^ 0xFF]))
EOF
}
# field LINE NAME: NAME=value out of a probe read line.
field() { sed -E "s/.*\\b$2=([0-9]+).*/\\1/" <<<"$1"; }

log "== placement follows the objective"
probe_on 1 write /local1 $((3 << 20)) 11
expect_layout /local1 "all(nodes(c) == [1] for c in chunks) and len(chunks) == 3"
probe_on 2 write /local2 $((2 << 20)) 12
expect_layout /local2 "all(nodes(c) == [2] for c in chunks)"
probe_on 1 mkdir /r2
admin objective set t0fs:/r2 replicas=2 >/dev/null
probe_on 3 write /r2/b $((3 << 20)) 13
expect_layout /r2/b "all(len(c) == 2 and nodes(c)[0] == 3 and len(set(nodes(c))) == 2 for c in chunks)"
probe_on 1 mkdir /s3
admin objective set t0fs:/s3 replicas=3 placement=spread >/dev/null
probe_on 1 write /s3/c $((2 << 20)) 14
expect_layout /s3/c "all(len(set(healthy(c))) == 3 for c in chunks)"
probe_on 1 mkdir /only24
admin objective set t0fs:/only24 replicas=2 placement=spread nodes=2,4 >/dev/null
probe_on 1 write /only24/d $((2 << 20)) 15
expect_layout /only24/d "all(sorted(nodes(c)) == [2, 4] for c in chunks)"
admin objective get t0fs:/only24/d | grep -q "replicas=2 placement=spread" || fail "objective not inherited"
admin layout t0fs:/local1 --node-id 1 | grep -q "node 1 .*\\[local\\]" || fail "layout marks the caller's replica"

log "== bad objective input: one clear line, nothing changed"
err="$CLUSTER_DIR/err"
! "$T0FS" objective set "$CLUSTER_DIR" replicas=2 2>"$err" || fail "a path outside t0fs was accepted"
grep -q "is not on a t0fs mount" "$err" || fail "unclear error: $(cat "$err")"
for bad in replicas=0 replicas=abc placement=near nodes=1,x colour=red; do
  ! admin objective set t0fs:/r2 "$bad" 2>"$err" || fail "objective $bad was accepted"
  [[ $(wc -l <"$err") -eq 1 ]] || fail "objective $bad: not one line: $(cat "$err")"
done
admin objective get t0fs:/r2 | grep -q "replicas=2 placement=local" || fail "a refused objective changed /r2"

log "== a client reads its own node's replicas through the bypass, the others over TCP"
out=$(probe_on 1 read /local1 11)
log "node 1 reads /local1: $out"
[[ $(field "$out" local) -ge $((3 << 20)) && $(field "$out" remote) -eq 0 ]] || fail "local read went over TCP: $out"
out=$(probe_on 1 read /local2 12)
log "node 1 reads /local2: $out"
[[ $(field "$out" remote) -ge $((2 << 20)) && $(field "$out" local) -eq 0 ]] || fail "remote read used the bypass: $out"

log "== request without a valid capability"
in_node 1 "$PROBE" nocap "${NODE_ADDRS[1]}" "unix:$CLUSTER_DIR/vol1/data.sock" "$CLUSTER_DIR/secret" >&2 ||
  fail "chunk I/O without a valid capability was served"

log "== kill -9 of a data node during write + fsync + close with replicas=2"
done_list="$CLUSTER_DIR/completed"
: >"$done_list"
(
  for i in $(seq 1 24); do
    if probe_on 1 write "/r2/k$i" $((1536 << 10)) $((100 + i)) 2>>"$CLUSTER_DIR/writer.err"; then
      echo "$i" >>"$done_list"
    fi
  done
) &
writer=$!
files_done_at_least() { (($(wc -l <"$done_list") >= $1)); }
wait_until 60 "a few files written before the kill" files_done_at_least 6
before=$(wc -l <"$done_list")
kill9 "${NODE_PIDS[2]}"
log "killed node 2 after $before files"
wait "$writer" || true
completed=$(wc -l <"$done_list")
log "writer finished: $completed of 24 files completed ($(wc -l <"$CLUSTER_DIR/writer.err") error lines)"
((completed >= before)) || fail "completed files disappeared"
for i in $(head -n "$before" "$done_list"); do
  probe_on 4 read "/r2/k$i" $((100 + i)) >/dev/null || fail "/r2/k$i (completed before the kill) does not read back"
done
wait_until 20 "node 2 down" node_is 2 down
check_repaired() {
  local i
  for i in $(cat "$done_list"); do
    layout_ok "/r2/k$i" "all(len(set(healthy(c))) == 2 and 2 not in healthy(c) for c in chunks)" || return 1
  done
  layout_ok /r2/b "all(len(set(healthy(c))) == 2 and 2 not in healthy(c) for c in chunks)"
}
wait_until 90 "2 healthy replicas of every chunk on the survivors" check_repaired
admin status | grep -q "repair:" || fail "status shows no repair line"
for i in $(cat "$done_list"); do probe_on 3 read "/r2/k$i" $((100 + i)) >/dev/null || fail "/r2/k$i after repair"; done

log "== the killed node comes back and is reconciled by chunk versions"
node_start 2
# Its old replicas were replaced: none may come back as healthy copies of
# those chunks, and its chunk files that no layout names are collected.
ALL_FILES=(/local1 /local2 /r2/b /s3/c /only24/d)
for i in $(seq 1 24); do ALL_FILES+=("/r2/k$i"); done
orphans_gone() {
  local keep f name
  # chunk ids (hex) of healthy node-2 replicas in any layout
  keep=" $(for f in "${ALL_FILES[@]}"; do admin layout "t0fs:$f" --json 2>/dev/null || true; done | python3 -c '
import json, sys
text = sys.stdin.read()
dec, pos, ids = json.JSONDecoder(), 0, []
while pos < len(text):
    while pos < len(text) and text[pos].isspace(): pos += 1
    if pos >= len(text): break
    obj, pos = dec.raw_decode(text, pos)
    ids += ["%016x" % r["chunk"] for c in obj["chunks"] for r in c["replicas"] if r["node"] == 2 and r["state"] == "healthy"]
print(" ".join(ids))') "
  for f in "$CLUSTER_DIR"/vol2/chunks/*/*.dat; do
    [[ -e "$f" ]] || continue
    name=$(basename "$f" .dat)
    [[ "$keep" == *" $name "* ]] || return 1
  done
}
wait_until 60 "node 2's stale chunk files removed" orphans_gone
for i in $(cat "$done_list"); do
  expect_layout "/r2/k$i" "all(len(set(healthy(c))) == 2 for c in chunks)"
  probe_on 2 read "/r2/k$i" $((100 + i)) >/dev/null || fail "/r2/k$i from node 2 after it came back"
done
probe_on 2 read /local2 12 >/dev/null || fail "/local2 (only on node 2) after restart"

log "== bytes flipped in one replica: correct reads, then repair"
probe_on 1 write /r2/flip $((2 << 20)) 21
expect_layout /r2/flip "all(nodes(c)[0] == 1 and len(set(healthy(c))) == 2 for c in chunks)"
chunk=$(admin layout t0fs:/r2/flip --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["chunks"][0]["replicas"][0]["chunk"])')
flip_bytes "$(printf '%s/vol1/chunks/%02x/%016x.dat' "$CLUSTER_DIR" $((chunk & 255)) "$chunk")"
out=$(probe_on 1 read /r2/flip 21) || fail "read of a file with a corrupt local replica failed"
log "node 1 reads /r2/flip with its replica corrupt: $out"
(($(field "$out" failovers) >= 1)) || fail "no failover counted: $out"
wait_until 60 "the corrupt replica repaired" layout_ok /r2/flip "all(len(set(healthy(c))) == 2 for c in chunks)"
repaired_clean() { out=$(probe_on 1 read /r2/flip 21) && [[ $(field "$out" failovers) -eq 0 ]]; }
wait_until 60 "reads without failover after repair" repaired_clean

log "== the scrubber finds a corrupt replica nobody reads, and repair replaces it"
probe_on 4 write /r2/scrub $((1 << 20)) 31
expect_layout /r2/scrub "all(nodes(c)[0] == 4 and len(set(healthy(c))) == 2 for c in chunks)"
stop_pid "${NODE_PIDS[4]}"
chunk=$(admin layout t0fs:/r2/scrub --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["chunks"][0]["replicas"][0]["chunk"])')
flip_bytes "$(printf '%s/vol4/chunks/%02x/%016x.dat' "$CLUSTER_DIR" $((chunk & 255)) "$chunk")"
node_start 4 --scrub-rate 256M --scrub-pause 1s
scrub_repaired() {
  grep -q "scrub: chunk $chunk " "$CLUSTER_DIR/data4.log" &&
    layout_ok /r2/scrub "all(len(set(healthy(c))) == 2 for c in chunks)" &&
    out=$(probe_on 4 read /r2/scrub 31) && [[ $(field "$out" failovers) -eq 0 ]]
}
wait_until 60 "the scrubber's find repaired" scrub_repaired

log "== objective 1 -> 2 replicas converges"
admin objective set t0fs:/local1 replicas=2 >/dev/null
wait_until 60 "/local1 at 2 replicas" layout_ok /local1 "all(len(set(healthy(c))) == 2 and len(c) == 2 for c in chunks)"
probe_on 3 read /local1 11 >/dev/null || fail "/local1 after convergence"

log "== draining a node empties it"
admin node drain 3 >/dev/null
wait_until 10 "node 3 draining" node_is 3 draining
node3_empty() {
  admin status --json | python3 -c '
import json, sys
n = [n for n in json.load(sys.stdin)["nodes"] if n["node"] == 3][0]
sys.exit(0 if n["replicas"] == 0 else 1)'
}
wait_until 90 "node 3 emptied" node3_empty
for f in /r2/b /s3/c /local1; do expect_layout "$f" "all(3 not in nodes(c) and len(set(healthy(c))) == len(c) for c in chunks)"; done
for f in local1:11 local2:12 r2/b:13 s3/c:14 only24/d:15 r2/flip:21; do
  probe_on 1 read "/${f%%:*}" "${f##*:}" >/dev/null || fail "/${f%%:*} after drain"
done
fsck_clean
log "PASS multinode${NS_TAG:+ (network namespaces)}"
