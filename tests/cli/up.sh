#!/usr/bin/env bash
# `t0fs up`: first run creates the cluster and mounts; a second run reuses the
# data; a second instance on the same directory fails clearly. Ctrl-C as a
# terminal sends it (SIGINT to the whole foreground process group) reaches
# `up` alone — its children run in groups of their own — and `up` stops them
# in order, mount first, then data, then meta, promptly even with files open
# on the mount. A kill -9 of `up` still stops the children (and they unmount).
# `t0fs up --stop --dir` stops a running up the same way and returns once
# it has; with nothing running it says so and succeeds.
source "$(dirname "$0")/lib.sh"
mp=$(free_port) dp=$(free_port)
args=(--dir "$WORK/data" --mount "$WORK/mnt" --meta-listen 127.0.0.1:$mp --data-listen 127.0.0.1:$dp)
M="$WORK/mnt"

up_start up1 "${args[@]}"
up_wait up1
first=$UP_PID
grep -q "created a new cluster" "$WORK/up1.out" || fail "first run did not create"
[[ $(stat -c %a "$WORK/data/secret") == 600 ]] || fail "secret is not mode 0600"
echo persistent >"$M/file"
for child in $(pgrep -P "$first"); do
  [[ $(ps -o pgid= -p "$child" | tr -d ' ') == "$child" ]] || fail "child $child is not in a process group of its own"
done

log "a second instance on the same directory fails clearly and leaves the first alone"
if "$T0FS" up --dir "$WORK/data" --mount "$WORK/mnt2" >"$WORK/dup.out" 2>&1; then fail "second instance started"; fi
grep -q "in use by another process" "$WORK/dup.out" || fail "no clear error for a second instance"
if "$T0FS" meta --db "$WORK/data/meta.db" --secret-file "$WORK/data/secret" --listen 127.0.0.1:$(free_port) \
  >"$WORK/dupmeta.out" 2>&1; then fail "second meta started"; fi
grep -q "in use by another process" "$WORK/dupmeta.out" || fail "no clear error for a second meta"
[[ "$(cat "$M/file")" == persistent ]] || fail "first instance disturbed"

log "Ctrl-C to the process group with files open on the mount: ordered stop"
exec {held}<"$M/file"
exec {writing}>"$M/open-for-write"
echo partial >&$writing
start=$SECONDS
up_stop "$first" INT || fail "up exited non-zero on Ctrl-C"
elapsed=$((SECONDS - start))
exec {held}<&- {writing}>&-
log "stopped in about ${elapsed}s"
# The issue's bound is 3 s; checked generously (no timing assertion beyond it).
((elapsed <= 5)) || fail "the stop took ${elapsed}s"
grep -q "unmounted" "$WORK/up1.out" || fail "no unmount message"
is_mounted "$M" && fail "still mounted after Ctrl-C"
for pid in "${CHILD_PIDS[@]}"; do alive "$pid" && fail "daemon $pid left running"; done
logs="$WORK/data/logs"
grep -q "unmounting (signal 15)" "$logs/mount.log" || fail "the mount was not stopped by up (SIGTERM): $(grep unmounting "$logs/mount.log")"
grep -q "stopping (signal 15)" "$logs/meta.log" || fail "meta was not stopped by up (SIGTERM)"
grep -q "retrying" "$logs/mount.log" && fail "the mount waited for meta: $(grep retrying "$logs/mount.log")"
# The order, from the daemons' own log times (same clock, same format).
t_mount=$(grep "unmounting (signal" "$logs/mount.log" | tail -n 1 | cut -c1-23)
t_data=$(grep "stopping (signal" "$logs/data.log" | tail -n 1 | cut -c1-23)
t_meta=$(grep "stopping (signal" "$logs/meta.log" | tail -n 1 | cut -c1-23)
[[ ! "$t_data" < "$t_mount" && ! "$t_meta" < "$t_data" ]] ||
  fail "stop order: mount $t_mount, data $t_data, meta $t_meta"

log "a second run reuses the data"
up_start up2 "${args[@]}"
up_wait up2
second=$UP_PID
grep -q "reusing the cluster" "$WORK/up2.out" || fail "second run did not reuse"
[[ "$(cat "$M/file")" == persistent ]] || fail "data lost across restart"
[[ "$(cat "$M/open-for-write")" == partial ]] || fail "the file written while stopping lost its data"
"$T0FS" status --dir "$WORK/data" | grep -q "^1 .* up " || fail "status does not show node 1 up"
"$T0FS" fsck --dir "$WORK/data" >/dev/null || fail "fsck not clean"

log "kill -9 of up alone: the children stop and unmount"
children=$(pgrep -P "$second")
kill -9 "$second"
wait "$second" 2>/dev/null || true
wait_until 10 "the mount gone after SIGKILL of up" bash -c "! grep -q ' $M fuse' /proc/mounts"
for pid in $children; do wait_until 10 "daemon $pid gone after SIGKILL of up" bash -c "! kill -0 $pid"; done

log "t0fs up --stop: the running up stops as on Ctrl-C, the command returns once it has"
up_start up3 "${args[@]}"
up_wait up3
third=$UP_PID
children=$(pgrep -P "$third")
"$T0FS" up --stop --dir "$WORK/data" >"$WORK/stop.out" 2>&1 || fail "up --stop failed: $(cat "$WORK/stop.out")"
grep -q "stopped in" "$WORK/stop.out" || fail "up --stop said: $(cat "$WORK/stop.out")"
# Returned only once up had exited (its lock free): nothing left to wait for.
alive "$third" && ! grep -q "^State:.*zombie" "/proc/$third/status" && fail "up --stop returned while up ran"
wait "$third" || fail "up exited non-zero on up --stop"
is_mounted "$M" && fail "still mounted after up --stop"
for pid in $children; do alive "$pid" && fail "daemon $pid left running after up --stop"; done
grep -q "unmounted" "$WORK/up3.out" || fail "no unmount message"
"$T0FS" up --stop --dir "$WORK/data" >"$WORK/stop.out" 2>&1 || fail "up --stop with nothing running failed"
grep -q "no t0fs up runs on" "$WORK/stop.out" || fail "up --stop with nothing running said: $(cat "$WORK/stop.out")"
echo "up lifecycle: ok"
