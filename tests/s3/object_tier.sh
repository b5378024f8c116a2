#!/usr/bin/env bash
# protect=object on a 2-node cluster (real processes on loopback) with a real
# one-node Ceph RGW as the object tier, through a mount on node 1:
#  - a file under `replicas=1 protect=object within=1s` is copied to the
#    bucket after its last close, one object per chunk named
#    <prefix>chunks/<chunk>.<version>, byte for byte what was written
#    (checked from outside with s3cmd); status has nothing waiting;
#  - a rewritten chunk is uploaded again at its new version and the old
#    object is deleted;
#  - node 1 (the only node holding the file) is killed: at once, before
#    meta even notices, the file reads back byte for byte through the mount
#    from the bucket (node 2 reads the objects for the client: ObjectRead),
#    also through a descriptor opened before the file's upload (its layout
#    knew no object: the client asks meta again); a file whose object was
#    replaced in the bucket (other bytes, same length) fails to read (EIO)
#    instead of returning them, and is not recalled (the `.crc` object next
#    to each chunk object holds its block checksums);
#    then repair recalls the chunks from the bucket to node 2 and the file
#    reads back from there;
#  - bad keys in the credentials file: uploads fail (counted, logged), the
#    data stays and reads back; the file fixed, uploads resume with nothing
#    restarted (every daemon reads the file again when it changes);
#  - the bucket's manifest (<prefix>manifest.jsonl) lists the file with
#    its chunk keys at their current versions, and the file rebuilt from
#    the bucket alone with s3cmd, dd and truncate is what was written;
#  - a removed file's objects are deleted, and the manifest no longer lists it;
#  - with a repair-grace no write outlasts (300s), the only node holding a
#    protected file is killed and the file is written in the middle and
#    appended to at once: the writes wait only for meta to stage the chunks
#    back from the bucket to the other node (a writer asked, the node misses
#    heartbeats), then succeed; the file reads back byte for byte (O_DIRECT,
#    and after dropping the page cache), before and after the killed node
#    comes back with its older replicas; an untouched chunk is not recalled;
#  - keep-local=drop: once in the bucket and closed (by readers too), the
#    file's chunk files leave the node (layout: offloaded; fsck clean); it
#    reads back from the bucket; a
#    write and a truncation stage the chunks they touch back, and the new
#    version is offloaded again once uploaded;
#  - keep-newest=1 on a checkpoint directory: the newest checkpoint keeps
#    its copy, the older one is offloaded (and reads back); refused on a file;
#  - keep-local=pressure: with node 3's volume (a 64 MiB tmpfs) over the
#    high watermark, the least recently used files' copies are offloaded
#    until it is below the low one, the newest file and a keep file stay;
#    reading an offloaded file stages it back (recall on read), the others
#    stay offloaded;
#  - without a tier, or with bad tier settings, meta refuses clearly.
set -euo pipefail
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/ceph.sh"
if ! ceph_usable; then echo "SKIP: needs root and Debian's ceph-mon ceph-osd radosgw ceph-common s3cmd"; exit 77; fi
trap ceph_stop EXIT
trap 'exit 130' INT TERM
ceph_start
BUCKET=t0fs-tier
S3CFG=$(mktemp /tmp/t0fs-s3cfg.XXXXXX)
rm_s3cfg_and_ceph() {
  rm -f "$S3CFG"
  ceph_stop
}
trap rm_s3cfg_and_ceph EXIT
ceph_s3cfg "$S3CFG"
s3() { s3cmd -c "$S3CFG" --no-progress "$@"; }
s3 mb "s3://$BUCKET" >/dev/null

log "== meta refuses bad tier settings"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$CEPH_DIR/secret"
chmod 600 "$CEPH_DIR/secret"
if out=$(timeout 20 "$T0FS" meta --listen "127.0.0.1:$(free_port)" --store "sqlite:///$CEPH_DIR/bad.db" \
  --secret-file "$CEPH_DIR/secret" \
  --object-endpoint "$CEPH_S3_ENDPOINT" --object-bucket "$BUCKET" \
  --object-credentials /nonexistent/credentials 2>&1); then
  fail "meta started with a missing credentials file"
fi
grep -q "object tier.*credentials" <<<"$out" || fail "missing credentials file: $out"
if out=$(timeout 20 "$T0FS" meta --listen "127.0.0.1:$(free_port)" --store "sqlite:///$CEPH_DIR/bad.db" \
  --secret-file "$CEPH_DIR/secret" \
  --object-endpoint "$CEPH_S3_ENDPOINT" --object-credentials "$CEPH_S3_CREDENTIALS" 2>&1); then
  fail "meta started with an endpoint and no bucket"
fi
grep -q "object-bucket" <<<"$out" || fail "no bucket: $out"

METRICS="127.0.0.1:$(free_port)"
meta_flags() {  # meta_flags REPAIR_GRACE: META_FLAGS for this cluster
  META_FLAGS=(--suspect-after 1s --node-timeout 2s --repair-grace "$1" --repair-interval 300ms --heartbeat 200ms
    --metrics-listen "$METRICS" --object-endpoint "$CEPH_S3_ENDPOINT" --object-bucket "$BUCKET"
    --object-credentials "$CEPH_S3_CREDENTIALS" --object-manifest-interval 1s
    --tier-high-watermark 60 --tier-low-watermark 40)
}
meta_flags 3s
CLUSTER_STOP_ALSO=rm_s3cfg_and_ceph
multi_start 2 1M
MNT="$CLUSTER_DIR/mnt"
mkdir -p "$MNT"
MOUNT_METRICS="127.0.0.1:$(free_port)"
mount_start --node-id 1 --metrics-listen "$MOUNT_METRICS"

# objects: the keys of this cluster's chunk objects, sorted.
objects() {
  local out
  out=$(s3 ls -r "s3://$BUCKET/") || fail "s3cmd ls failed"
  grep -o 's3://[^ ]*/chunks/[0-9a-f]*\.[0-9]*$' <<<"$out" | sort || true
}
object_count_is() { (($(objects | wc -l) == $1)); }
# expected_keys PATH: the object key (after the bucket) of every chunk of
# PATH in index order, from `t0fs layout --json` (chunk id and version).
expected_keys() {
  admin layout "t0fs:$1" --json | python3 -c '
import json, sys
for c in sorted(json.load(sys.stdin)["chunks"], key=lambda c: c["index"]):
    r = c["replicas"][0]
    print("chunks/%016x.%d" % (r["chunk"], r["version"]))'
}
# objects_match PATH SRC: the file's chunk objects, in index order, are SRC.
objects_match() {
  local keys key all
  keys=$(expected_keys "$1")
  all=$(objects)
  : >"$CLUSTER_DIR/joined"
  for key in $keys; do
    local url
    url=$(grep -F "/$key" <<<"$all") || return 1
    s3 get --force "$url" "$CLUSTER_DIR/piece" >/dev/null || return 1
    cat "$CLUSTER_DIR/piece" >>"$CLUSTER_DIR/joined"
  done
  cmp -s "$2" "$CLUSTER_DIR/joined"
}
protection_is() {  # protection_is PATH STATE: `t0fs layout` reports STATE
  [[ "$(admin layout "t0fs:$1" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["protection"]["state"])')" == "$2" ]]
}
status_field() {  # status_field KEY: protection.KEY of `t0fs status --json`
  admin status --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["protection"][sys.argv[1]])' "$1"
}

log "== protect=object needs the goal's form"
mkdir "$MNT/o"
if out=$(admin objective set t0fs:/o protect=object:2 2>&1); then fail "protect=object:2 was accepted"; fi
admin objective set t0fs:/o replicas=1 protect=object within=1s >/dev/null
admin objective get t0fs:/o | grep -qF "protect=object" || fail "objective get: $(admin objective get t0fs:/o)"

log "== a closed file is copied to the bucket, one object per chunk"
# 4.5 MiB: four whole 1 MiB chunks and a half one.
head -c $((9 << 19)) /dev/urandom >"$CLUSTER_DIR/src"
cp "$CLUSTER_DIR/src" "$MNT/o/f"
wait_until 60 "o/f's 5 chunks in the bucket" object_count_is 5
objects_match /o/f "$CLUSTER_DIR/src" || fail "the objects are not the file's bytes: $(objects)"
sums_objects() { s3 ls -r "s3://$BUCKET/" | grep -c '/chunks/[0-9a-f]*\.[0-9]*\.crc$' || true; }
(($(sums_objects) == 5)) || fail "expected 5 checksum objects, found $(sums_objects)"
log "objects: $(objects | head -n 2 | tr '\n' ' ')..."
wait_until 20 "o/f protected" protection_is /o/f protected
admin layout t0fs:/o/f | grep -q "object v1" || fail "layout shows no object copy: $(admin layout t0fs:/o/f)"
(($(status_field waiting_files) == 0)) || fail "status counts $(status_field waiting_files) file(s) waiting"
fsck_clean

log "== a rewritten chunk is uploaded at its new version; the old object goes"
old_key=$(expected_keys /o/f | sed -n 1p)
printf 'rewritten' | dd of="$CLUSTER_DIR/src" bs=1 seek=100 conv=notrunc status=none
printf 'rewritten' | dd of="$MNT/o/f" bs=1 seek=100 conv=notrunc status=none
new_key=$(expected_keys /o/f | sed -n 1p)
[[ "$new_key" != "$old_key" ]] || fail "the rewrite did not change chunk 0's version ($old_key)"
wait_until 60 "chunk 0 uploaded at its new version" objects_match /o/f "$CLUSTER_DIR/src"
wait_until 20 "o/f protected again" protection_is /o/f protected
wait_until 30 "the old version deleted" object_count_is 5
! objects | grep -qF "/$old_key" || fail "the old version $old_key is still in the bucket"

log "== the bucket's manifest names the file's objects; the file is rebuilt from the bucket alone"
manifest() {  # the manifest's text
  local url
  url=$(s3 ls -r "s3://$BUCKET/" | grep -o 's3://[^ ]*/manifest\.jsonl$') || return 1
  s3 get --force "$url" "$CLUSTER_DIR/manifest.jsonl" >/dev/null || return 1
  cat "$CLUSTER_DIR/manifest.jsonl"
}
# manifest_keys PATH: PATH's current chunk keys (after the prefix's
# cluster part, as expected_keys prints them) when the manifest lists it
# complete.
manifest_keys() {
  manifest | python3 -c '
import json, sys
lines = [json.loads(l) for l in sys.stdin]
assert lines[0]["t0fs_object_manifest"] == 1 and lines[0]["files"] == len(lines) - 1
for f in lines[1:]:
    if f["path"] == sys.argv[1] and f["complete"]:
        for c in f["chunks"]:
            assert c["current"] and c["key"].startswith(lines[0]["prefix"])
            print(c["key"][len(lines[0]["prefix"]):])' "$1"
}
manifest_is_current() { [[ "$(manifest_keys /o/f)" == "$(expected_keys /o/f)" ]]; }
wait_until 30 "the manifest lists o/f at its new version" manifest_is_current
meta_metric() { curl -sf "http://$METRICS/metrics" | sed -n "s/^$1 \([0-9.e+]*\)\$/\1/p"; }
[[ "$(meta_metric 't0fs_meta_object_manifest_files')" == 1 ]] ||
  fail "the manifest files gauge: $(curl -sf "http://$METRICS/metrics" | grep manifest)"
[[ -n "$(meta_metric 't0fs_meta_object_manifest_writes_total{result="ok"}')" ]] ||
  fail "no manifest writes counted: $(curl -sf "http://$METRICS/metrics" | grep manifest)"
# What an operator without meta does (docs/operations.md): a script of
# truncate, then each object fetched and written at its offset with dd.
rebuild() {  # rebuild PATH OUT
  manifest >/dev/null || return 1
  python3 - "$1" "$2" "$CLUSTER_DIR/manifest.jsonl" >"$CLUSTER_DIR/rebuild.sh" <<'PY'
import json, sys
for l in open(sys.argv[3]):
    f = json.loads(l)
    if f.get("path") == sys.argv[1]:
        print("truncate -s %d %s" % (f["size"], sys.argv[2]))
        for c in f["chunks"]:
            print("s3 get --force s3://$BUCKET/%s $CLUSTER_DIR/piece >/dev/null && dd if=$CLUSTER_DIR/piece of=%s "
                  "bs=1M oflag=seek_bytes seek=%d conv=notrunc status=none || exit 1" % (c["key"], sys.argv[2], c["offset"]))
PY
  grep -q '^truncate' "$CLUSTER_DIR/rebuild.sh" || return 1
  rm -f "$2"
  (source "$CLUSTER_DIR/rebuild.sh")  # (each line exits the subshell when it fails)
}
rebuild /o/f "$CLUSTER_DIR/rebuilt" || fail "rebuilding o/f from the manifest failed"
cmp "$CLUSTER_DIR/src" "$CLUSTER_DIR/rebuilt" || fail "o/f rebuilt from the bucket differs from what was written"

object_reads() {  # the mount's count of reads served from the object tier
  curl -sf "http://$MOUNT_METRICS/metrics" | sed -n 's/^t0fs_client_object_reads_total \([0-9]*\).*/\1/p'
}
node_metric() {  # node_metric I NAME: the value of counter NAME on data node I
  local url
  url=$(grep -o 'metrics on http://[^ ]*' "$CLUSTER_DIR/data$1.log" | tail -n 1 | cut -d' ' -f3)
  [[ -n "$url" ]] || fail "data node $1 logged no metrics address"
  curl -sf "$url" | sed -n "s/^$2 \([0-9]*\).*/\1/p"
}
# held_reader PATH SRC GO [warm]: opens PATH (O_DIRECT; with warm it also
# reads its first MiB, so that its layout and local file are cached),
# creates GO.ready, and once GO exists reads PATH whole and compares it with
# SRC. Run in the background; its exit status says.
held_reader() {
  /usr/bin/python3 -c '
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
buf = mmap.mmap(-1, 1 << 20)
if len(sys.argv) > 4:
    os.preadv(fd, [buf], 0)
open(sys.argv[3] + ".ready", "w").close()
deadline = time.time() + 120
while not os.path.exists(sys.argv[3]):
    if time.time() > deadline:
        sys.exit("held reader: never told to read")
    time.sleep(0.05)
want = open(sys.argv[2], "rb").read()
got = bytearray()
while len(got) < len(want):
    n = os.preadv(fd, [buf], len(got))
    if n <= 0:
        break
    got += buf[:n]
if got != want:
    sys.exit("held reader: %d bytes read, %s" % (len(got), "equal" if got == want[:len(got)] else "different"))
' "$@"
}
log "== the only node holding the file is lost: read from the bucket at once, then recalled"
# o/h is opened (O_DIRECT) before its upload and read after the loss.
head -c $((2 << 20)) /dev/urandom >"$CLUSTER_DIR/src3"
cp "$CLUSTER_DIR/src3" "$MNT/o/h"
held_reader "$MNT/o/h" "$CLUSTER_DIR/src3" "$CLUSTER_DIR/go" &
HELD_PID=$!
wait_until 20 "the held reader opened o/h" test -e "$CLUSTER_DIR/go.ready"
wait_until 60 "o/h uploaded" protection_is /o/h protected
# o/k's object is replaced in the bucket by other bytes of its length.
head -c $((1 << 20)) /dev/urandom >"$CLUSTER_DIR/src4"
cp "$CLUSTER_DIR/src4" "$MNT/o/k"
wait_until 60 "o/k uploaded" protection_is /o/k protected
k_key=$(expected_keys /o/k)
head -c $((1 << 20)) /dev/urandom >"$CLUSTER_DIR/other"
s3 put "$CLUSTER_DIR/other" "$(objects | grep -F "/$k_key")" >/dev/null || fail "s3cmd put over o/k's object"
reads_before=$(object_reads)
[[ -n "$reads_before" ]] || fail "the mount's /metrics has no t0fs_client_object_reads_total"
kill9 "${NODE_PIDS[1]}"
NODE_PIDS[1]=""
# O_DIRECT: past the page cache, every byte from a data path. Meta has not
# noticed the loss yet (node-timeout 2s): the layout still names node 1.
# Reads of 128 KiB in order: node 2 reads each chunk's object ahead.
timeout 30 dd if="$MNT/o/f" iflag=direct bs=128k status=none | cmp - "$CLUSTER_DIR/src" ||
  fail "o/f does not read back from the object tier right after its node was lost"
reads_after=$(object_reads)
((reads_after > reads_before)) || fail "no read was served from the object tier ($reads_before -> $reads_after)"
gets=$(node_metric 2 t0fs_data_object_read_gets_total)
hits=$(node_metric 2 t0fs_data_object_read_ahead_hits_total)
((hits > 0)) || fail "node 2 read nothing ahead for a reader in order ($gets GETs, $hits hits)"
log "o/f in 128 KiB reads through the tier: $((reads_after - reads_before)) read(s), $gets GET(s), $hits from bytes read ahead"
touch "$CLUSTER_DIR/go"
wait "$HELD_PID" || fail "o/h does not read back through a descriptor opened before its upload"
reads_held=$(object_reads)
((reads_held > reads_after)) || fail "the held descriptor's read was not served from the object tier"
log "read through the object tier: $((reads_after - reads_before)) read(s), then $((reads_held - reads_after)) through the held descriptor"
if timeout 30 dd if="$MNT/o/k" iflag=direct bs=1M of="$CLUSTER_DIR/got" status=none; then
  cmp -s "$CLUSTER_DIR/got" "$CLUSTER_DIR/other" && fail "o/k read the bytes that replaced its object"
  fail "o/k read back although its only replica is gone and its object was replaced"
fi
grep -q "object tier's copy of chunk .* does not match its checksum" "$CLUSTER_DIR"/data*.log ||
  fail "no node logged the damaged object"
wait_until 20 "node 1 down" node_is 1 down
on_node2() {  # every chunk of o/f has a healthy replica on node 2
  admin layout t0fs:/o/f --json | python3 -c '
import json, sys
chunks = json.load(sys.stdin)["chunks"]
sys.exit(0 if chunks and all(any(r["node"] == 2 and r["state"] == "healthy" for r in c["replicas"]) for c in chunks) else 1)'
}
wait_until 90 "o/f recalled to node 2" on_node2
recall_refused() { grep -q "recall: .*the object tier's copy of chunk .* does not match its checksum" "$CLUSTER_DIR"/data*.log; }
wait_until 30 "the recall of o/k's replaced object refused" recall_refused
# ... and tried again after growing pauses, not at every repair pass.
recall_paused() { grep -q "repair: recall of chunk .* failed: .* next attempt in [0-9]* s" "$CLUSTER_DIR/meta.log"; }
wait_until 30 "meta pausing o/k's recalls" recall_paused
log "recalled: $(admin layout t0fs:/o/f | grep -c 'node 2') chunk(s) on node 2"
timeout 60 cmp "$CLUSTER_DIR/src" "$MNT/o/f" || fail "o/f does not read back after the recall"
curl -sf "http://$METRICS/metrics" >"$CLUSTER_DIR/metrics" || fail "meta /metrics does not answer"
grep -E '^t0fs_meta_object_(uploads|recalls)' "$CLUSTER_DIR/metrics" | tr '\n' ' ' >&2 || true
echo >&2

log "== bad keys: uploads fail, data stays; the file fixed, uploads resume with no restart"
# The credentials file gets a wrong secret: meta and every node read it
# again at their next request (node 1 also starts with it).
cp -p "$CEPH_S3_CREDENTIALS" "$CLUSTER_DIR/good.credentials"
sed -i 's/^secret_key = .*/secret_key = not-the-key/' "$CEPH_S3_CREDENTIALS"
node_start 1
head -c $((3 << 20)) /dev/urandom >"$CLUSTER_DIR/src2"
cp "$CLUSTER_DIR/src2" "$MNT/o/g"
uploads_failed() {  # the failed-upload count in meta's /metrics
  local m
  m=$(curl -sf "http://$METRICS/metrics") || return 1
  sed -n 's/^t0fs_meta_object_uploads_total{result="failed"} \([0-9]*\).*/\1/p' <<<"$m"
}
some_uploads_failed() { (($(uploads_failed) > 0)); }
wait_until 60 "uploads with bad keys failed" some_uploads_failed
grep -q "upload of chunk .* failed: .*SignatureDoesNotMatch" "$CLUSTER_DIR/meta.log" ||
  fail "meta did not log why the upload failed: $(grep 'upload of chunk' "$CLUSTER_DIR/meta.log" | tail -n 2)"
log "meta: $(grep -o 'upload of chunk .* failed: .\{0,80\}' "$CLUSTER_DIR/meta.log" | head -n 1)"
protection_is /o/g waiting || fail "o/g not waiting: $(admin layout t0fs:/o/g)"
cmp "$CLUSTER_DIR/src2" "$MNT/o/g" || fail "o/g does not read back while its uploads fail"
object_count_is 8 || fail "objects changed while uploads failed: $(objects)"
cat "$CLUSTER_DIR/good.credentials" >"$CEPH_S3_CREDENTIALS"
wait_until 120 "o/g uploaded with the keys fixed" protection_is /o/g protected
objects_match /o/g "$CLUSTER_DIR/src2" || fail "o/g's objects are not its bytes"
grep -q "credentials read again from" "$CLUSTER_DIR"/data*.log ||
  fail "no node said it read the credentials again"

log "== a removed file's objects are deleted"
rm "$MNT/o/f" "$MNT/o/g" "$MNT/o/h" "$MNT/o/k"
wait_until 60 "the files' objects deleted" object_count_is 0
no_sums_objects() { (($(sums_objects) == 0)); }
wait_until 20 "their checksum objects deleted" no_sums_objects
manifest_lists_none() { manifest | python3 -c 'import json, sys; assert json.loads(sys.stdin.readline())["files"] == 0'; }
wait_until 30 "the manifest lists no file" manifest_lists_none

log "== keep-local=drop: the local copy goes once in the bucket; reads from it; a write stages back"
mkdir "$MNT/d"
if out=$(admin objective set t0fs:/d replicas=1 protect=replicas:2 keep-local=drop 2>&1); then
  fail "keep-local=drop with protect=replicas was accepted"
fi
admin objective set t0fs:/d replicas=1 protect=object within=1s keep-local=drop >/dev/null
# 2.5 MiB: chunks 0 and 1 whole, chunk 2 half.
head -c $((5 << 19)) /dev/urandom >"$CLUSTER_DIR/dsrc"
cp "$CLUSTER_DIR/dsrc" "$MNT/d/f"
# A reader holds d/f open: its copy stays until the reader closes (a mount
# may serve a reader from that very chunk file).
held_reader "$MNT/d/f" "$CLUSTER_DIR/dsrc" "$CLUSTER_DIR/dgo" warm &
DHELD_PID=$!
wait_until 20 "the held reader opened d/f" test -e "$CLUSTER_DIR/dgo.ready"
states_of() {  # states_of PATH: each chunk's replica states, "index:state,state" per line
  admin layout "t0fs:$1" --json | python3 -c '
import json, sys
for c in sorted(json.load(sys.stdin)["chunks"], key=lambda c: c["index"]):
    print("%d:%s" % (c["index"], ",".join(r["state"] for r in c["replicas"])))'
}
all_offloaded() { [[ "$(states_of /d/f | grep -vc ':offloaded$')" == 0 ]]; }
wait_until 60 "d/f protected" protection_is /d/f protected
sleep 2  # passes every 300 ms
[[ "$(states_of /d/f | grep -vc ':healthy$')" == 0 ]] || fail "d/f offloaded while open: $(states_of /d/f)"
touch "$CLUSTER_DIR/dgo"
wait "$DHELD_PID" || fail "the reader holding d/f read wrong bytes"
wait_until 60 "d/f's local copies offloaded" all_offloaded
protection_is /d/f protected || fail "d/f not protected: $(admin layout t0fs:/d/f)"
admin layout t0fs:/d/f | grep -q "local copy: 3 of 3 chunk(s) offloaded (keep-local=drop)" ||
  fail "layout does not say d/f is offloaded: $(admin layout t0fs:/d/f)"
chunk_files() {  # chunk_files PATH: chunk files of PATH's chunks left on the nodes' volumes
  local id n=0
  for id in $(admin layout "t0fs:$1" --json | python3 -c '
import json, sys
for c in json.load(sys.stdin)["chunks"]:
    print("%016x" % c["replicas"][0]["chunk"])'); do
    n=$((n + $(find "$CLUSTER_DIR"/vol* -name "$id.dat" | wc -l)))
  done
  echo "$n"
}
no_chunk_files() { [[ "$(chunk_files /d/f)" == 0 ]]; }
wait_until 30 "d/f's chunk files removed from the nodes" no_chunk_files
three_offloaded() { [[ "$(status_field offloaded_chunks)" == 3 ]]; }
wait_until 10 "status counting 3 offloaded chunks" three_offloaded
admin status | grep -q "3 chunk(s), 2.5 MiB, offloaded" || fail "status: $(admin status | grep protection)"
admin fsck >"$CLUSTER_DIR/fsck.out" 2>&1 || fail "fsck with d/f offloaded: $(cat "$CLUSTER_DIR/fsck.out")"
reads_before=$(object_reads)
sync
echo 3 >/proc/sys/vm/drop_caches
timeout 60 cmp "$CLUSTER_DIR/dsrc" "$MNT/d/f" || fail "d/f does not read back from the bucket"
(($(object_reads) > reads_before)) || fail "d/f was not read through the object tier"
# A write in chunk 1 stages that chunk back (and only it), then lands.
printf 'staged back' | dd of="$CLUSTER_DIR/dsrc" bs=1 seek=$((3 << 19)) conv=notrunc status=none
printf 'staged back' | timeout 60 dd of="$MNT/d/f" bs=1 seek=$((3 << 19)) conv=notrunc status=none ||
  fail "the write to offloaded d/f failed: $(grep -i 'offloaded\|staged' "$CLUSTER_DIR/mount.log" | tail -n 3)"
states_of /d/f | sed -n 2p | grep -q "^1:.*healthy" || fail "chunk 1 not staged back: $(states_of /d/f)"
[[ "$(states_of /d/f | sed -n 1p)" == "0:offloaded" ]] || fail "chunk 0 staged back too: $(states_of /d/f)"
recalls=$(curl -sf "http://$MOUNT_METRICS/metrics" | sed -n 's/^t0fs_client_recall_requests_total \([0-9]*\).*/\1/p')
((recalls >= 1)) || fail "the mount counted no recall request ($recalls)"
sync
echo 3 >/proc/sys/vm/drop_caches
timeout 60 cmp "$CLUSTER_DIR/dsrc" "$MNT/d/f" || fail "d/f does not read back after the staged-back write"
# Truncating into an offloaded chunk stages it back too; the cut lands.
truncate -s $((1 << 19)) "$CLUSTER_DIR/dsrc"
timeout 60 truncate -s $((1 << 19)) "$MNT/d/f" || fail "truncating offloaded d/f failed"
timeout 60 cmp "$CLUSTER_DIR/dsrc" "$MNT/d/f" || fail "d/f does not read back after the truncation"
# Its new version is uploaded, then the local copy goes again.
wait_until 90 "d/f offloaded again at its new version" all_offloaded
protection_is /d/f protected || fail "d/f not protected after the rewrite: $(admin layout t0fs:/d/f)"
sync
echo 3 >/proc/sys/vm/drop_caches
timeout 60 cmp "$CLUSTER_DIR/dsrc" "$MNT/d/f" || fail "d/f does not read back offloaded again"
curl -sf "http://$METRICS/metrics" | grep -E '^t0fs_meta_offload' >&2 || fail "no offload metrics"
rm "$MNT/d/f"
wait_until 60 "d/f's objects deleted" object_count_is 0

log "== keep-newest=1: a checkpoint directory keeps its newest entry local, the older ones go"
mkdir "$MNT/ck"
admin objective set t0fs:/ck replicas=1 protect=object within=1s keep-local=drop keep-newest=1 >/dev/null
admin objective get t0fs:/ck | grep -qF "keep-newest=1" || fail "objective get: $(admin objective get t0fs:/ck)"
for i in 1 2; do
  mkdir "$MNT/ck/step$i"
  head -c $((3 << 19)) /dev/urandom >"$CLUSTER_DIR/ck$i"
  cp "$CLUSTER_DIR/ck$i" "$MNT/ck/step$i/model"
  wait_until 60 "ck/step$i uploaded" protection_is "/ck/step$i/model" protected
  sleep 1.1  # one mtime second apart
done
if out=$(admin objective set t0fs:/ck/step2/model keep-newest=1 2>&1); then
  fail "keep-newest on a file was accepted"
fi
grep -q "not a directory" <<<"$out" || fail "keep-newest on a file: '$out'"
all_offloaded_at() { [[ "$(states_of "$1" | grep -vc ':offloaded$')" == 0 ]]; }
wait_until 30 "ck/step1 offloaded" all_offloaded_at /ck/step1/model
sleep 2  # a few passes more: the newest stays
[[ "$(states_of /ck/step2/model | grep -vc ':healthy$')" == 0 ]] ||
  fail "ck/step2 (the newest) offloaded: $(states_of /ck/step2/model)"
# `t0fs layout` names the rule (it is the directory's, not the file's).
admin layout "$MNT/ck/step2/model" | grep -q "its entry in $MNT/ck is among the 1 newest there (keep-newest=1)" ||
  fail "layout does not name the keep-newest rule: $(admin layout "$MNT/ck/step2/model")"
admin layout t0fs:/ck/step1/model | grep -q "its entry in t0fs:/ck is among the 1 newest" ||
  fail "layout t0fs:/ck/step1/model: $(admin layout t0fs:/ck/step1/model)"
rules=$(admin layout "$MNT/ck/step2/model" --json |
  python3 -c 'import json, sys; print(json.dumps(json.load(sys.stdin)["keep_newest_above"]))')
[[ "$rules" == "[{\"dir\": \"$MNT/ck\", \"keep_newest\": 1}]" ]] || fail "layout --json keep_newest_above: $rules"
timeout 60 cmp "$CLUSTER_DIR/ck1" "$MNT/ck/step1/model" || fail "ck/step1 does not read back"
rm -r "$MNT/ck"
wait_until 60 "ck's objects deleted" object_count_is 0

log "== keep-local=pressure: a volume over the high watermark sheds the least recently used copies; a read recalls"
# Node 3's volume is a 64 MiB tmpfs; meta's watermarks are 60% and 40%.
VOL3="$CLUSTER_DIR/vol3"
mkdir -p "$VOL3"
mount -t tmpfs -o size=64m t0fs-test-vol3 "$VOL3"
stop_vol3_and_ceph() {
  stop_pid "${NODE_PIDS[3]:-}"
  if mountpoint -q "$VOL3"; then umount -l "$VOL3"; fi
  rm_s3cfg_and_ceph
}
CLUSTER_STOP_ALSO=stop_vol3_and_ceph
NODE_ADDRS[3]="127.0.0.1:$(free_port)"
node_start 3
mkdir "$MNT/ballast" "$MNT/p"
admin objective set t0fs:/ballast replicas=1 placement=spread nodes=3 >/dev/null
admin objective set t0fs:/p replicas=1 placement=spread nodes=3 protect=object within=1s keep-local=pressure >/dev/null
head -c $((16 << 20)) /dev/urandom >"$MNT/ballast/b"
for i in 1 2 3; do
  head -c $((8 << 20)) /dev/urandom >"$CLUSTER_DIR/p$i"
  cp "$CLUSTER_DIR/p$i" "$MNT/p/$i"
  wait_until 60 "p/$i uploaded" protection_is "/p/$i" protected
  sleep 1.1  # one ctime second apart: the order is the files' age
  if ((i < 3)); then
    # 37.5% and 50% full: below the high watermark, every copy stays.
    [[ "$(states_of "/p/$i" | grep -vc ':healthy$')" == 0 ]] || fail "p/$i offloaded at $i: $(states_of "/p/$i")"
  fi
done
# 62.5% full: 14.4 MiB must go to reach 40%: p/1 and p/2 (the oldest), not p/3.
offloaded_p() { [[ "$(states_of "/p/$1" | grep -vc ':offloaded$')" == 0 ]]; }
wait_until 30 "p/1 offloaded" offloaded_p 1
wait_until 30 "p/2 offloaded" offloaded_p 2
sleep 2  # a few passes more: nothing else goes
[[ "$(states_of /p/3 | grep -vc ':healthy$')" == 0 ]] || fail "p/3 offloaded too: $(states_of /p/3)"
[[ "$(states_of /ballast/b | grep -vc ':healthy$')" == 0 ]] || fail "the ballast (keep) was offloaded"
pressure_offloads=$(meta_metric 't0fs_meta_offloads_total{rule="pressure"}')
[[ "$pressure_offloads" == 16 ]] || fail "pressure offloads: '$pressure_offloads', not 16 chunks"
vol3_used() { df --output=pcent "$VOL3" | tail -n 1 | tr -dc 0-9; }
below_40() { (($(vol3_used) < 40)); }
wait_until 30 "node 3's volume below 40%" below_40
log "node 3's volume: $(vol3_used)% used after the offload"
# Recall on read: reading p/1 (from the bucket) asks meta to stage it back,
# and with room under the high watermark (50% with it) its copy stays;
# p/2, not read, stays offloaded.
read_recalls() {
  curl -sf "http://$MOUNT_METRICS/metrics" | sed -n 's/^t0fs_client_read_recall_requests_total \([0-9]*\).*/\1/p'
}
before=$(read_recalls)
timeout 60 cmp "$CLUSTER_DIR/p1" "$MNT/p/1" || fail "p/1 does not read back offloaded"
(($(read_recalls) > before)) || fail "reading offloaded p/1 asked for no recall ($before -> $(read_recalls))"
healthy_p() { [[ "$(states_of "/p/$1" | grep -vc ':healthy$')" == 0 ]]; }
wait_until 30 "p/1 staged back after its read" healthy_p 1
sleep 2  # a few passes more: it stays, and p/2 was not recalled
healthy_p 1 || fail "p/1 offloaded again: $(states_of /p/1)"
offloaded_p 2 || fail "p/2 recalled without a read: $(states_of /p/2)"
echo 3 >/proc/sys/vm/drop_caches
timeout 60 cmp "$CLUSTER_DIR/p1" "$MNT/p/1" || fail "p/1 does not read back staged back"
# p/3 reads locally. (p/2 is not read: its recall would take the volume
# over the watermark again, and the rest of this test must not race with
# the copies that follow.)
timeout 60 cmp "$CLUSTER_DIR/p3" "$MNT/p/3" || fail "p/3 does not read back"
rm -r "$MNT/p" "$MNT/ballast"
vol3_empty() { [[ "$(find "$VOL3" -name '*.dat' | wc -l)" == 0 ]]; }
wait_until 30 "node 3's chunk files deleted" vol3_empty
wait_until 60 "p's objects deleted" object_count_is 0
sleep 1  # node 3's last removals acknowledged
stop_pid "${NODE_PIDS[3]}"
NODE_PIDS[3]=""
umount -l "$VOL3"

log "== writes to chunks whose only node is lost: staged back from the bucket at once (repair-grace 300s)"
# Meta again, with a repair-grace no write outlasts: only the recall that a
# waiting writer asks for can let the writes succeed.
stop_pid "$META_PID"
meta_flags 300s
meta_start
wait_until 20 "node 1 up" node_is 1 up
wait_until 20 "node 2 up" node_is 2 up
mkdir "$MNT/s"
admin objective set t0fs:/s replicas=1 protect=object within=1s >/dev/null
# 3.5 MiB: chunks 0-2 whole, chunk 3 half (the append stays in it: a new
# chunk could be placed on the lost node, still suspect, with nothing in the
# bucket to stage back).
head -c $((7 << 19)) /dev/urandom >"$CLUSTER_DIR/model"
cp "$CLUSTER_DIR/model" "$MNT/s/f"
holders() {  # holders PATH INDEX: the nodes of chunk INDEX's healthy replicas
  admin layout "t0fs:$1" --json | python3 -c '
import json, sys
for c in json.load(sys.stdin)["chunks"]:
    if c["index"] == int(sys.argv[1]):
        print(" ".join(str(r["node"]) for r in c["replicas"] if r["state"] == "healthy"))' "$2"
}
lost=$(holders /s/f 0)
[[ "$lost" == 1 || "$lost" == 2 ]] || fail "s/f's chunk 0 is not on one node: '$lost'"
other=$((3 - lost))
for idx in 1 2 3; do
  [[ "$(holders /s/f "$idx")" == "$lost" ]] || fail "s/f's chunk $idx is not on node $lost only"
done
stage_backs() {  # the mount's count of writes that waited for a chunk staged back
  curl -sf "http://$MOUNT_METRICS/metrics" | sed -n 's/^t0fs_client_stage_back_requests_total \([0-9]*\).*/\1/p'
}
urgent_recalls() {  # meta's count of recalls a waiting writer asked for
  curl -sf "http://$METRICS/metrics" | sed -n 's/^t0fs_meta_object_urgent_recalls_total \([0-9]*\).*/\1/p'
}
stage_before=$(stage_backs)
[[ -n "$stage_before" ]] || fail "the mount's /metrics has no t0fs_client_stage_back_requests_total"
[[ "$(urgent_recalls)" == 0 ]] || fail "meta's /metrics: t0fs_meta_object_urgent_recalls_total '$(urgent_recalls)', not 0"
# pwrite_at FILE OFFSET|append PIECE [GO]: one write of PIECE's bytes and an
# fsync; prints the seconds it took. With GO: FILE is opened at once, GO.ready
# made, and the write waits until GO exists.
cat >"$CLUSTER_DIR/pwrite_at.py" <<'PY'
import os, sys, time
data = open(sys.argv[3], "rb").read()
append = sys.argv[2] == "append"
fd = os.open(sys.argv[1], os.O_WRONLY | (os.O_APPEND if append else 0))
if len(sys.argv) > 4:
    open(sys.argv[4] + ".ready", "w").close()
    deadline = time.time() + 120
    while not os.path.exists(sys.argv[4]):
        if time.time() > deadline:
            sys.exit("held writer: never told to write")
        time.sleep(0.05)
start = time.monotonic()
n = os.write(fd, data) if append else os.pwrite(fd, data, int(sys.argv[2]))
if n != len(data):
    sys.exit("short write: %d of %d bytes" % (n, len(data)))
os.fsync(fd)
os.close(fd)
print("%.1f" % (time.monotonic() - start))
PY
pwrite_at() { /usr/bin/python3 "$CLUSTER_DIR/pwrite_at.py" "$@"; }
pwrite_at_within() { local limit=$1; shift; timeout "$limit" /usr/bin/python3 "$CLUSTER_DIR/pwrite_at.py" "$@"; }
# The middle write spans chunks 1 and 2 and starts and ends inside 4 KiB
# blocks (the recalled replicas' bytes around it must stay). It goes
# through a descriptor opened before the upload (its layout knows no copy
# in the bucket: the client asks meta again).
head -c 3000 /dev/urandom >"$CLUSTER_DIR/piece"
head -c $((300 << 10)) /dev/urandom >"$CLUSTER_DIR/tail"
mid=$(((2 << 20) - 1000))
pwrite_at "$CLUSTER_DIR/model" "$mid" "$CLUSTER_DIR/piece" >/dev/null
pwrite_at "$CLUSTER_DIR/model" append "$CLUSTER_DIR/tail" >/dev/null
pwrite_at_within 180 "$MNT/s/f" "$mid" "$CLUSTER_DIR/piece" "$CLUSTER_DIR/wgo" >"$CLUSTER_DIR/took" &
WRITER_PID=$!
wait_until 20 "the held writer opened s/f" test -e "$CLUSTER_DIR/wgo.ready"
wait_until 60 "s/f uploaded" protection_is /s/f protected
kill9 "${NODE_PIDS[$lost]}"
NODE_PIDS[$lost]=""
# Well under the mount's retry timeout (60s): waiting for the node would fail.
touch "$CLUSTER_DIR/wgo"
wait_until 40 "the held writer's write into s/f with node $lost lost" test -s "$CLUSTER_DIR/took"
wait "$WRITER_PID" || fail "the held writer's write into s/f failed"
took=$(cat "$CLUSTER_DIR/took")
took_append=$(pwrite_at_within 40 "$MNT/s/f" append "$CLUSTER_DIR/tail") ||
  fail "the append to s/f did not succeed with node $lost lost"
log "node $lost killed: the middle write took ${took}s, the append ${took_append}s"
# staged_back_reads WHEN: s/f is the model (O_DIRECT, then from a cold page
# cache) and chunks 1-3 are healthy on the other node only.
staged_back_reads() {
  timeout 30 dd if="$MNT/s/f" iflag=direct bs=1M status=none | cmp - "$CLUSTER_DIR/model" ||
    fail "s/f does not read back (O_DIRECT) $1"
  echo 3 >/proc/sys/vm/drop_caches
  timeout 30 cmp "$CLUSTER_DIR/model" "$MNT/s/f" || fail "s/f does not read back from a cold page cache $1"
  local idx
  for idx in 1 2 3; do
    [[ "$(holders /s/f "$idx")" == "$other" ]] ||
      fail "s/f's chunk $idx $1: healthy on '$(holders /s/f "$idx")', not node $other only"
  done
}
staged_back_reads "after the writes"
stage_after=$(stage_backs)
((stage_after > stage_before)) || fail "no write counted as staged back ($stage_before -> $stage_after)"
(($(urgent_recalls) >= 3)) || fail "meta counts $(urgent_recalls) urgent recall(s), not one per written chunk (3)"
grep -q "waits to write chunk .* recalling it from the object tier now" "$CLUSTER_DIR/meta.log" ||
  fail "meta did not log the writer's request"
# The chunk nobody wrote waits for repair-grace: the writes were not saved
# by the ordinary repair.
[[ "$(holders /s/f 0)" == "$lost" ]] || fail "s/f's chunk 0 moved: '$(holders /s/f 0)'"
log "staged back: $((stage_after - stage_before)) write(s) waited, $(urgent_recalls) urgent recall(s)"
node_start "$lost"
# Its replicas of chunks 1-3 are older than the writes: never read again
# (the mount is on node 1 and would read a local replica first).
staged_back_reads "after node $lost came back"
fsck_clean
log "PASS"
