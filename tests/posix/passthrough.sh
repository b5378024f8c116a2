#!/usr/bin/env bash
# FUSE passthrough end to end: files whose data is one local chunk are served
# by the kernel (the mount's counters prove reads and writes never reached
# it), checksums hold on the TCP path afterwards, files that do not qualify
# (several chunks, replica on another node) still work, two clients on
# different nodes see each other's data, bytes written past a chunk's end
# move to the next chunks, a writer killed mid-write leaves checksums the
# scrubber rebuilds, new files nobody writes to cost the data node no chunk
# files (nor a data node call: their files are prepared ahead), a new file
# written by a TCP client while a passthrough writer holds it keeps both
# writers' bytes, and a data node restart while a new file is written loses
# nothing.
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/passthrough.sh"
PROBE=${T0FS_TEST_BIN:?}/t0fs_probe
PORT=$(free_port)
PASSTHROUGH=on pt_cluster_start --metrics-listen "127.0.0.1:$PORT"
[[ "$(mount_state passthrough)" == on ]] || { log "kernel passthrough unavailable here; skipping"; exit 77; }

# Requests of one FUSE opcode the mount answered so far.
fuse_ops() { curl -sf "127.0.0.1:$PORT/metrics" | { grep "^t0fs_fuse_ops_total{op=\"$1\"," || true; } |
  awk '{ s += $NF } END { print s + 0 }'; }
client_bytes() { curl -sf "127.0.0.1:$PORT/metrics" | { grep -F "t0fs_client_bytes_total{op=\"$1\",path=\"$2\"}" || true; } |
  awk '{ s += $NF } END { print s + 0 }'; }
tcp_cat() { "$PROBE" cat "$META_ADDR" "$CLUSTER_DIR/secret" "$1" "$2"; }

if [[ "${FUSE_URING:-}" == on ]]; then
  # The requests this test makes (opens, lookups, the cached path) come
  # through the io_uring queues, not only the INIT-time /dev/fuse reads.
  ls -la "$MNT" >/dev/null
  uring_requests=$(curl -sf "127.0.0.1:$PORT/metrics" | awk '/^t0fs_fuse_io_uring_requests_total/ { print $NF }')
  [[ "${uring_requests:-0}" != 0 ]] || fail "FUSE_URING=on but no request came through io_uring"
  log "FUSE over io_uring: $uring_requests requests through the queues so far"
fi

src="$CLUSTER_DIR/src.bin"
dd if=/dev/urandom of="$src" bs=1M count=24 status=none

log "write and read a Tier 0 file: nothing but open/flush/release reaches the mount"
reads0=$(fuse_ops read) writes0=$(fuse_ops write) local0=$(client_bytes read local)
dd if="$src" of="$MNT/shard" bs=1M status=none
dd if="$src" of="$MNT/shard-direct" bs=1M oflag=direct status=none
cmp "$src" "$MNT/shard"
dd if="$MNT/shard-direct" of="$CLUSTER_DIR/back.bin" bs=1M iflag=direct status=none
cmp "$src" "$CLUSTER_DIR/back.bin"
python3 - "$MNT/shard" "$src" <<'PY'
import mmap, os, sys, threading
# mmap and concurrent readers, also through the kernel
a, b = open(sys.argv[1], "rb"), open(sys.argv[2], "rb").read()
m = mmap.mmap(a.fileno(), 0, prot=mmap.PROT_READ)
assert m[:] == b, "mmap differs"
errors = []
def reader(seed):
    fd = os.open(sys.argv[1], os.O_RDONLY)
    for i in range(64):
        off = ((seed * 7919 + i * 104729) % (len(b) // 4096)) * 4096
        if os.pread(fd, 4096, off) != b[off:off + 4096]: errors.append(off)
    os.close(fd)
threads = [threading.Thread(target=reader, args=(s,)) for s in range(4)]
[t.start() for t in threads]; [t.join() for t in threads]
assert not errors, errors
PY
reads1=$(fuse_ops read) writes1=$(fuse_ops write) local1=$(client_bytes read local)
log "FUSE READ $reads0 -> $reads1, WRITE $writes0 -> $writes1, mount-read local bytes $local0 -> $local1"
[[ "$reads1" == "$reads0" && "$writes1" == "$writes0" ]] || fail "passthrough I/O reached the daemon"
[[ "$local1" == "$local0" ]] || fail "the mount read chunk data itself"
admin layout t0fs:/shard --node-id 1 | tee "$CLUSTER_DIR/layout.txt" >&2
grep -q "passthrough: eligible on node 1: reads and writes" "$CLUSTER_DIR/layout.txt" || fail "layout does not say eligible"

log "the data written by the kernel reads back over TCP, verified against rebuilt checksums"
tcp_cat 99 /shard >"$CLUSTER_DIR/tcp.bin" 2>"$CLUSTER_DIR/tcp.err"
cmp "$src" "$CLUSTER_DIR/tcp.bin"
grep -q "local=0 remote=$((24 << 20)) checksum_errors=0" "$CLUSTER_DIR/tcp.err" || fail "TCP read: $(cat "$CLUSTER_DIR/tcp.err")"

log "append, truncate, extend, overwrite through passthrough, as on a plain file"
plain="$CLUSTER_DIR/plain"
mkdir -p "$plain"
for d in "$MNT" "$plain"; do
  python3 - "$d/edit" <<'PY'
import os, sys
p = sys.argv[1]
fd = os.open(p, os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"a" * 10000)
os.ftruncate(fd, 3000)
os.pwrite(fd, b"b" * 5000, 100000)
os.ftruncate(fd, 200000)
os.close(fd)
with open(p, "ab") as f: f.write(b"appended")
fd = os.open(p, os.O_RDWR)
os.pwrite(fd, b"c" * 4096, 4096)
assert os.fstat(fd).st_size == 200008
os.close(fd)
PY
done
cmp "$plain/edit" "$MNT/edit"

log "unlink while open: still readable and writable through the kernel"
python3 - "$MNT/gone" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"x" * 65536)
os.unlink(sys.argv[1])
os.pwrite(fd, b"y" * 10, 65536)
assert os.pread(fd, 65546, 0) == b"x" * 65536 + b"y" * 10
os.close(fd)
assert not os.path.exists(sys.argv[1])
PY

log "new files nobody writes to cost the data node no chunk files; written ones get theirs at close"
# Chunk files that appeared since the list in $1 (removals of older ones may go on meanwhile).
new_chunk_files() { find "$CLUSTER_DIR/vol/chunks" -name '*.dat' | sort | comm -13 "$1" - | wc -l; }
find "$CLUSTER_DIR/vol/chunks" -name '*.dat' | sort >"$CLUSTER_DIR/chunks-before"
for i in $(seq 1 40); do : >"$MNT/empty-$i"; done
[[ -f "$MNT/empty-40" && ! -s "$MNT/empty-40" ]] || fail "empty files"
made=$(new_chunk_files "$CLUSTER_DIR/chunks-before")
[[ $made == 0 ]] || fail "40 empty files made $made chunk files"
rm -f "$MNT"/empty-*
printf 'hello' >"$MNT/small-new"
made=$(new_chunk_files "$CLUSTER_DIR/chunks-before")
[[ $made == 1 ]] || fail "a written new file has $made chunk files after its close (1 expected)"
tcp_cat 99 /small-new 2>/dev/null | cmp - <(printf 'hello')

log "the data node restarts while a new file is written through passthrough: nothing is lost"
python3 - "$MNT/across-restart" "$CLUSTER_DIR/restart-go" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"r" * (1 << 20))
open(sys.argv[2] + ".written", "w").close()
while not os.path.exists(sys.argv[2]): time.sleep(0.05)
os.write(fd, b"s" * 4096)
os.close(fd)
PY
writer=$!
wait_until 10 "the first write" test -e "$CLUSTER_DIR/restart-go.written"
stop_pid "$DATA_PID"
data_start
touch "$CLUSTER_DIR/restart-go"
wait "$writer" || fail "the writer failed across the data node's restart"
cmp "$MNT/across-restart" <(head -c $((1 << 20)) /dev/zero | tr '\0' r; head -c 4096 /dev/zero | tr '\0' s)
tcp_cat 99 /across-restart 2>/dev/null | cmp - "$MNT/across-restart"

log "not eligible: several chunks (a 1 MiB chunk directory) still works through the mount"
mkdir "$MNT/small"
admin objective set t0fs:/small chunk-size=1M >/dev/null
reads0=$(fuse_ops read)
dd if="$src" of="$MNT/small/multi" bs=1M count=3 status=none
cmp <(head -c $((3 << 20)) "$src") "$MNT/small/multi"
(($(fuse_ops read) > reads0)) || fail "a multi-chunk file was not read through the mount"
admin layout t0fs:/small/multi --node-id 1 | grep -q "not eligible: the data spans 3 chunks" || fail "layout of multi"
# Its first write went through passthrough (empty file, one chunk): the 2 MiB
# past the chunk's end moved to chunks 1 and 2 at close.
tcp_cat 99 /small/multi 2>/dev/null | cmp - <(head -c $((3 << 20)) "$src")

log "not eligible: a mount on another node reads the replica over TCP; two clients see each other's writes"
second_mount_start
MNT2=$SECOND_MNT
cmp "$src" "$MNT2/shard"
admin layout t0fs:/shard --node-id 2 | grep -q "not eligible: no replica on node 2" || fail "layout for node 2"
python3 - "$MNT/shared" "$MNT2/shared" <<'PY'
import os, sys
a, b = sys.argv[1], sys.argv[2]
fd = os.open(a, os.O_CREAT | os.O_RDWR, 0o644)   # node 1: passthrough writer
os.write(fd, b"1" * 100000)
os.close(fd)                                      # close-to-open
with open(b, "rb") as f: assert f.read() == b"1" * 100000, "node 2 does not see node 1's data"
with open(b, "r+b") as f: f.seek(50000); f.write(b"2" * 1000)   # node 2 writes over TCP
with open(a, "rb") as f: d = f.read()             # node 1 reads through the kernel again
assert d == b"1" * 50000 + b"2" * 1000 + b"1" * 49000, "node 1 does not see node 2's write"
# A new file (its chunk files prepared ahead and still unnamed) written by
# node 2 over TCP while node 1's passthrough writer has it open: both write
# the same files, nothing is lost at either close.
fd = os.open(a + "-new", os.O_CREAT | os.O_RDWR, 0o644)
os.pwrite(fd, b"a" * 4096, 0)
with open(b + "-new", "r+b") as f: f.seek(8192); f.write(b"b" * 4096)
os.pwrite(fd, b"c" * 100, 4096)
os.close(fd)
want = b"a" * 4096 + b"c" * 100 + b"\0" * 3996 + b"b" * 4096
for path in (a + "-new", b + "-new"):
    with open(path, "rb") as f: assert f.read() == want, f"{path} lost a concurrent writer's bytes"
PY
tcp_cat 99 /shared-new 2>/dev/null | cmp - "$MNT/shared-new"

log "a passthrough writer killed mid-write: the scrubber rebuilds the checksums it left pending"
python3 - "$MNT/crash" <<'PY' &
import os, sys, time
fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR, 0o644)
os.write(fd, b"z" * (1 << 20))
os.fsync(fd)
os.write(fd, b"w" * (1 << 20))
time.sleep(60)
PY
writer=$!
wait_until 10 "the writer's data" test -s "$MNT/crash"
sleep 1
kill9 "$MOUNT_PID"
kill9 "$writer"
umount -l "$MNT"
stop_pid "$DATA_PID"
"$T0FS" data --meta "$META_ADDR" --listen "$DATA_ADDR" --volumes "$CLUSTER_DIR/vol" \
  --secret-file "$CLUSTER_DIR/secret" --heartbeat 200ms --scrub-rate 1G --scrub-pause 1s >>"$CLUSTER_DIR/data.log" 2>&1 &
DATA_PID=$!
wait_until 30 "the scrubber's rebuild" grep -q "checksums rebuilt after a passthrough writer went away" \
  "$CLUSTER_DIR/data.log"
# Committed (fsync'd) bytes read back over TCP with checksums verified.
tcp_cat 99 /crash >"$CLUSTER_DIR/crash.bin" 2>"$CLUSTER_DIR/crash.err" || fail "$(cat "$CLUSTER_DIR/crash.err")"
cmp <(head -c $((1 << 20)) "$CLUSTER_DIR/crash.bin") <(head -c $((1 << 20)) /dev/zero | tr '\0' z)
fsck_clean
