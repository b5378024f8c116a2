#!/usr/bin/env bash
# Real tools on the mount: cp -a + diff -r, tar, sqlite3, git, dd + cmp.
# PASSTHROUGH=on|off (tests/lib/passthrough.sh): both modes run in make test.
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/passthrough.sh"
pt_cluster_start
src=$(cd "$(dirname "$0")/../.." && pwd)

log "cp -a of the source tree, then diff -r"
cp -a "$src/src" "$MNT/src-copy"
diff -r "$src/src" "$MNT/src-copy"

log "tar create and extract"
tar -C "$src" -cf "$MNT/src.tar" src docs
mkdir "$MNT/untar"
tar -C "$MNT/untar" -xf "$MNT/src.tar"
diff -r "$src/src" "$MNT/untar/src"
tar -tf "$MNT/src.tar" >/dev/null

log "sqlite3"
sqlite3 "$MNT/test.db" "create table t(k integer primary key, v text);"
for i in $(seq 1 200); do echo "insert into t(v) values ('row $i');"; done | sqlite3 "$MNT/test.db"
count=$(sqlite3 "$MNT/test.db" "select count(*) from t where v like 'row %';")
[[ "$count" == 200 ]] || fail "sqlite3 counted $count rows"
sqlite3 "$MNT/test.db" "pragma integrity_check;" | grep -qx ok || fail "sqlite integrity_check"

log "git init, add, commit, log"
git init -q "$MNT/repo"
cp -a "$src/src/common" "$MNT/repo/"
git -C "$MNT/repo" add -A
git -C "$MNT/repo" -c user.name=t -c user.email=t@t commit -qm "first commit on t0fs"
echo change >>"$MNT/repo/common/status.h"
git -C "$MNT/repo" -c user.name=t -c user.email=t@t commit -qam "second"
[[ $(git -C "$MNT/repo" log --oneline | wc -l) == 2 ]] || fail "git log"
git -C "$MNT/repo" fsck --no-progress 2>/dev/null

log "dd of a random multi-chunk file, then cmp"
dd if=/dev/urandom of="$CLUSTER_DIR/random.bin" bs=1M count=7 status=none
dd if="$CLUSTER_DIR/random.bin" of="$MNT/random.bin" bs=256K status=none
cmp "$CLUSTER_DIR/random.bin" "$MNT/random.bin"
dd if="$CLUSTER_DIR/random.bin" of="$MNT/random-direct.bin" bs=1M oflag=direct status=none
dd if="$MNT/random-direct.bin" of="$CLUSTER_DIR/back.bin" bs=1M iflag=direct status=none
cmp "$CLUSTER_DIR/random.bin" "$CLUSTER_DIR/back.bin"
if [[ "${PASSTHROUGH:-on}" == on ]]; then
  log "files the kernel wrote through passthrough read back over TCP, checksums verified"
  for f in random.bin random-direct.bin src.tar; do
    "$T0FS_TEST_BIN/t0fs_probe" cat "$META_ADDR" "$CLUSTER_DIR/secret" 99 "/$f" 2>"$CLUSTER_DIR/tcp.err" |
      cmp - "$MNT/$f" || fail "/$f over TCP: $(cat "$CLUSTER_DIR/tcp.err")"
  done
fi
pt_check_used

log "remove everything, then fsck"
rm -rf "$MNT"/*
[[ -z "$(ls -A "$MNT")" ]] || fail "mount not empty after rm -rf"
fsck_clean
