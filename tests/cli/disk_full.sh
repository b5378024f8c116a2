#!/usr/bin/env bash
# A full disk does not wedge a single-host cluster. `t0fs up` keeps its
# metadata database on the file system of its data volume; here that is a
# tmpfs of its own, filled to the last block by another program. Before,
# every metadata write failed from then on — `rm` answered EIO, so nothing
# could free the space. Now meta releases the space it keeps in reserve
# (meta.db.reserve) at the first write that finds the disk full: removals,
# mkdirs and small writes go on, and the reserve is taken again once the
# space is back. Nothing hangs (every command under a timeout).
source "$(dirname "$0")/lib.sh"
DISK="$WORK/disk"
mkdir -p "$DISK"
mount -t tmpfs -o size=512M t0fs-test-disk "$DISK"
base=$(free_port 2)
up_start a --dir "$DISK/c" --mount "$WORK/mnt" --meta-listen 127.0.0.1:$base \
  --data-listen 127.0.0.1:$((base + 1))
up_wait a
M="$WORK/mnt"
reserve="$DISK/c/meta.db.reserve"
[[ $(stat -c %s "$reserve") -eq $((64 << 20)) ]] || fail "no 64 MiB reserve next to the database"
# A chunk needs min(chunk size, 1 GiB) free at placement: small chunks here.
"$T0FS" objective set "$M" chunk-size=4M >/dev/null
head -c $((16 << 20)) /dev/urandom >"$WORK/a.ref"
timeout 60 cp "$WORK/a.ref" "$M/a" || fail "writing a"
timeout 60 cp "$WORK/a.ref" "$M/keep" || fail "writing keep"

log "another program fills the disk"
dd if=/dev/zero of="$DISK/filler" bs=1M status=none 2>/dev/null || true
[[ $(stat -f -c %a "$DISK") -eq 0 ]] || fail "the disk is not full"

log "metadata writes go on: rm, mkdir, a small file"
timeout 60 rm "$M/a" || fail "rm on a full disk"
wait_until 30 "meta released its reserve" grep -q "its disk is full; released" "$DISK/c/logs/meta.log"
[[ ! -e "$reserve" ]] || fail "the reserve is still there"
timeout 60 mkdir "$M/d" || fail "mkdir on a full disk"
timeout 60 sh -c "echo small >'$M/d/f'" || fail "a small write after the release"
[[ $(timeout 10 cat "$M/d/f") == small ]] || fail "the small file reads back wrong"
cmp "$WORK/a.ref" "$M/keep" || fail "keep changed"

log "space back: the reserve is taken again, everything reads back, fsck clean"
rm -f "$DISK/filler"
wait_until 60 "the reserve taken again" test -e "$reserve"
timeout 60 cp "$WORK/a.ref" "$M/b" || fail "writing b"
echo 3 >/proc/sys/vm/drop_caches
cmp "$WORK/a.ref" "$M/b" || fail "b reads back wrong"
cmp "$WORK/a.ref" "$M/keep" || fail "keep reads back wrong"
timeout 60 "$T0FS" fsck --dir "$DISK/c" >"$WORK/fsck.out" 2>&1 || { cat "$WORK/fsck.out" >&2; fail "fsck"; }
grep -q "fsck: clean" "$WORK/fsck.out" || fail "fsck not clean: $(tail -3 "$WORK/fsck.out")"
up_stop "$UP_PID" || fail "up did not stop cleanly"
log "ok"
