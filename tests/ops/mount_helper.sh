#!/usr/bin/env bash
# mount(8) and fstab mount t0fs: `mount -t fuse.t0fs META:/ DIR -o …` runs
# mount.fuse.t0fs (a link to the t0fs binary), which starts the mount in the
# background and returns once it is mounted. Checked in a private mount
# namespace whose /usr/sbin (= /sbin) also holds the link (an overlay), so
# nothing is installed on the host: data written through the helper's mount
# is seen by the cluster's own mount and back; `t0fs umount` and umount(8)
# stop it (its process exits); `ro` gives EROFS; an fstab line (mount -T)
# works; a bad address, a subdirectory and a wrong secret fail with a message.
set -euo pipefail
source "$(dirname "$0")/../lib/cluster.sh"

if [[ "${1:-}" != inner ]]; then
  cluster_start 1M
  OUTER_DIR=$CLUSTER_DIR OUTER_MNT=$MNT OUTER_META=$META_ADDR unshare -m --propagation private bash "$0" inner
  log "mount helper ok"
  exit 0
fi

# --- inside the private mount namespace ------------------------------------
CLUSTER_DIR=${OUTER_DIR:?} MNT=${OUTER_MNT:?} META_ADDR=${OUTER_META:?}
[[ "$CLUSTER_DIR" == /tmp/t0fs-test.* && -d "$CLUSTER_DIR" ]] || fail "no cluster directory: '$CLUSTER_DIR'"
MNT2="$CLUSTER_DIR/mnt2"
# /usr/sbin becomes a tmpfs of links to the real one (kept at $CLUSTER_DIR/sbin)
# plus mount.fuse.t0fs; the host's /usr/sbin is not touched.
mkdir -p "$MNT2" "$CLUSTER_DIR/sbin"
mount --bind /usr/sbin "$CLUSTER_DIR/sbin"
mount -t tmpfs -o size=1m t0fs-test-sbin /usr/sbin
for f in "$CLUSTER_DIR"/sbin/*; do ln -s "$f" "/usr/sbin/${f##*/}"; done
ln -s "$T0FS" /usr/sbin/mount.fuse.t0fs
helper_pid() { pgrep -f "^t0fs mount $META_ADDR $MNT2( |$)" || true; }
inner_stop() {
  local rc=$? pid
  set +e
  for pid in $(helper_pid); do kill "$pid"; done
  for _ in $(seq 50); do [[ -z "$(helper_pid)" ]] && break; sleep 0.1; done
  for pid in $(helper_pid); do kill -9 "$pid"; done
  if is_mounted "$MNT2"; then umount -l "$MNT2"; fi
  umount /usr/sbin "$CLUSTER_DIR/sbin"
  ((rc == 0)) || { log "--- helper log"; tail -n 20 "$CLUSTER_DIR/helper.log" >&2; }
  return $rc
}
trap inner_stop EXIT
opts="secret_file=$CLUSTER_DIR/secret,log=$CLUSTER_DIR/helper.log"

mount -t fuse.t0fs "$META_ADDR:/" "$MNT2" -o "rw,_netdev,nofail,x-systemd.requires=network.target,$opts"
is_mounted "$MNT2" || fail "mount(8) returned but $MNT2 is not mounted"
[[ -n "$(helper_pid)" ]] || fail "no t0fs mount process for $MNT2"
echo "through the helper" >"$MNT2/from-helper"
[[ "$(cat "$MNT/from-helper")" == "through the helper" ]] || fail "the cluster's mount does not see the write"
echo "through the cluster mount" >"$MNT/from-cluster"
[[ "$(cat "$MNT2/from-cluster")" == "through the cluster mount" ]] || fail "the helper's mount does not see the write"
"$T0FS" umount "$MNT2"
! is_mounted "$MNT2" || fail "t0fs umount left $MNT2 mounted"
[[ -z "$(helper_pid)" ]] || fail "t0fs umount left the mount process running"
log "mount -t fuse.t0fs / t0fs umount ok"

mount -t fuse.t0fs "t0fs://$META_ADDR" "$MNT2" -o "ro,noexec,$opts"
grep " $MNT2 fuse.t0fs " /proc/mounts | grep -q "[ ,]ro[ ,]" || fail "ro is not a mount flag"
if err=$(touch "$MNT2/new" 2>&1); then fail "touch on a read-only mount succeeded"; fi
grep -q "Read-only file system" <<<"$err" || fail "expected EROFS, got: $err"
[[ "$(cat "$MNT2/from-helper")" == "through the helper" ]] || fail "ro mount cannot read"
umount "$MNT2"
for _ in $(seq 100); do [[ -z "$(helper_pid)" ]] && break; sleep 0.1; done
[[ -z "$(helper_pid)" ]] || fail "umount(8) left the mount process running"
log "ro,noexec and umount(8) ok"

printf '%s:/ %s fuse.t0fs %s 0 0\n' "$META_ADDR" "$MNT2" "_netdev,$opts" >"$CLUSTER_DIR/fstab"
mount -T "$CLUSTER_DIR/fstab" "$MNT2"
is_mounted "$MNT2" || fail "fstab line did not mount"
[[ -f "$MNT2/from-cluster" ]] || fail "fstab mount does not see the file"
"$T0FS" umount "$MNT2"
log "fstab ok"

expect_fail() { # expect_fail MESSAGE-PATTERN mount-args...
  local pattern=$1 out
  shift
  if out=$(mount "$@" 2>&1); then fail "mount $* succeeded"; fi
  grep -qE "$pattern" <<<"$out" || fail "mount $*: expected /$pattern/, got: $out"
  ! is_mounted "$MNT2" || fail "a failed mount left $MNT2 mounted"
}
expect_fail "not a meta address" -t fuse.t0fs nohost "$MNT2" -o "$opts"
expect_fail "subdirectory" -t fuse.t0fs "$META_ADDR:/data" "$MNT2" -o "$opts"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$CLUSTER_DIR/wrong-secret"
chmod 600 "$CLUSTER_DIR/wrong-secret"
expect_fail "secret" -t fuse.t0fs "$META_ADDR:/" "$MNT2" \
  -o "secret_file=$CLUSTER_DIR/wrong-secret,log=$CLUSTER_DIR/helper.log,retry_timeout=2s"
log "bad input refused with messages"
