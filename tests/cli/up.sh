#!/usr/bin/env bash
# `t0fs up`: first run creates the cluster and mounts; Ctrl-C (SIGINT) stops
# everything and unmounts; a second run reuses the data; a second instance
# on the same ports fails clearly; killing `up` with SIGKILL still stops
# the children (and they unmount).
set -euo pipefail
T0FS=${T0FS:?}
work=$(mktemp -d /tmp/t0fs-up.XXXXXX)
pids=()
cleanup() {
  local rc=$?
  set +e
  for p in "${pids[@]}"; do kill -INT "$p" 2>/dev/null; done
  sleep 1
  grep -q " $work/mnt fuse" /proc/mounts && umount -l "$work/mnt"
  pkill -f "$work/" 2>/dev/null
  rm -rf "$work"
  exit $rc
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; cat "$work"/*.out >&2 || true; exit 1; }
port() { while :; do p=$((20000 + RANDOM % 20000)); ss -Htln "sport = :$p" | grep -q . || { echo $p; return; }; done; }
mp=$(port) dp=$(port)
args=(--dir "$work/data" --mount "$work/mnt" --meta-listen 127.0.0.1:$mp --data-listen 127.0.0.1:$dp)

wait_for() { for _ in $(seq 1 300); do grep -q "$2" "$1" 2>/dev/null && return 0; sleep 0.1; done; fail "no '$2' in $1"; }

"$T0FS" up "${args[@]}" >"$work/up1.out" 2>&1 &
pids+=($!)
wait_for "$work/up1.out" "mounted at"
grep -q "created a new cluster" "$work/up1.out" || fail "first run did not create"
[[ $(stat -c %a "$work/data/secret") == 600 ]] || fail "secret is not mode 0600"
echo persistent >"$work/mnt/file"

# A second instance on the same directory fails with a clear message and
# leaves the first alone; so does a meta on another port over the same database.
if "$T0FS" up --dir "$work/data" --mount "$work/mnt2" >"$work/dup.out" 2>&1; then fail "second instance started"; fi
grep -q "in use by another process" "$work/dup.out" || fail "no clear error for a second instance"
if "$T0FS" meta --db "$work/data/meta.db" --secret-file "$work/data/secret" --listen 127.0.0.1:$(port) \
  >"$work/dupmeta.out" 2>&1; then fail "second meta started"; fi
grep -q "in use by another process" "$work/dupmeta.out" || fail "no clear error for a second meta"
[[ "$(cat "$work/mnt/file")" == persistent ]] || fail "first instance disturbed"

kill -INT "${pids[0]}"
wait "${pids[0]}" || fail "up exited non-zero on Ctrl-C"
grep -q "unmounted" "$work/up1.out" || fail "no unmount message"
grep -q " $work/mnt fuse" /proc/mounts && fail "still mounted after Ctrl-C"
pgrep -f "$work/data" >/dev/null && fail "daemons left running"

"$T0FS" up "${args[@]}" >"$work/up2.out" 2>&1 &
pids+=($!)
wait_for "$work/up2.out" "mounted at"
grep -q "reusing the cluster" "$work/up2.out" || fail "second run did not reuse"
[[ "$(cat "$work/mnt/file")" == persistent ]] || fail "data lost across restart"
"$T0FS" status --dir "$work/data" | grep -q "^1 .* up " || fail "status does not show node 1 up"
"$T0FS" fsck --dir "$work/data" >/dev/null || fail "fsck not clean"

kill -9 "${pids[1]}"
for _ in $(seq 1 100); do grep -q " $work/mnt fuse" /proc/mounts || break; sleep 0.1; done
grep -q " $work/mnt fuse" /proc/mounts && fail "mount left behind after SIGKILL of up"
for _ in $(seq 1 100); do pgrep -f "$work/data" >/dev/null || break; sleep 0.1; done
pgrep -f "$work/data" >/dev/null && fail "daemons left running after SIGKILL of up"
echo "up lifecycle: ok"
