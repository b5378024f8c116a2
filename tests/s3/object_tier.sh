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
#  - a removed file's objects are deleted;
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
META_FLAGS=(--suspect-after 1s --node-timeout 2s --repair-grace 3s --repair-interval 300ms --heartbeat 200ms
  --metrics-listen "$METRICS" --object-endpoint "$CEPH_S3_ENDPOINT" --object-bucket "$BUCKET"
  --object-credentials "$CEPH_S3_CREDENTIALS")
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

object_reads() {  # the mount's count of reads served from the object tier
  curl -sf "http://$MOUNT_METRICS/metrics" | sed -n 's/^t0fs_client_object_reads_total \([0-9]*\).*/\1/p'
}
log "== the only node holding the file is lost: read from the bucket at once, then recalled"
# o/h is opened (O_DIRECT) before its upload and read after the loss.
head -c $((2 << 20)) /dev/urandom >"$CLUSTER_DIR/src3"
cp "$CLUSTER_DIR/src3" "$MNT/o/h"
/usr/bin/python3 -c '
import mmap, os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
open(sys.argv[3] + ".ready", "w").close()
deadline = time.time() + 120
while not os.path.exists(sys.argv[3]):
    if time.time() > deadline:
        sys.exit("held reader: never told to read")
    time.sleep(0.05)
want = open(sys.argv[2], "rb").read()
buf = mmap.mmap(-1, len(want))
n = os.preadv(fd, [buf], 0)
if n != len(want) or buf[:n] != want:
    sys.exit("held reader: %d bytes read, %s" % (n, "equal" if buf[:n] == want[:n] else "different"))
' "$MNT/o/h" "$CLUSTER_DIR/src3" "$CLUSTER_DIR/go" &
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
timeout 30 dd if="$MNT/o/f" iflag=direct bs=1M status=none | cmp - "$CLUSTER_DIR/src" ||
  fail "o/f does not read back from the object tier right after its node was lost"
reads_after=$(object_reads)
((reads_after > reads_before)) || fail "no read was served from the object tier ($reads_before -> $reads_after)"
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
log "PASS"
