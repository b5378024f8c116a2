#!/usr/bin/env bash
# kill -9 of meta (CRASH_TARGET=meta) or of the data service (=data) while a
# loop writes, fsyncs and closes files through the mount; then restart it.
# Every file whose write+fsync+close succeeded before, during or after the
# crash must read back identical (also after a remount), and fsck is clean.
source "$(dirname "$0")/../lib/cluster.sh"
target=${CRASH_TARGET:-meta}
cluster_start 1M
manifest="$CLUSTER_DIR/manifest"
: >"$manifest"

writer() {
  local i=0 name tmp
  while [[ ! -f "$CLUSTER_DIR/stop" ]]; do
    i=$((i + 1))
    name="f$i"
    tmp="$CLUSTER_DIR/tmp.$i"
    head -c $(((RANDOM % 2500 + 1) * 1024)) /dev/urandom >"$tmp"
    # dd conv=fsync: write, fsync, close; only a success is recorded.
    if dd if="$tmp" of="$MNT/$name" bs=64K conv=fsync status=none 2>>"$CLUSTER_DIR/writer.err"; then
      echo "$name $(sha256sum <"$tmp" | cut -d' ' -f1)" >>"$manifest"
    fi
    rm -f "$tmp"
  done
}

writer &
writer_pid=$!
sleep 3
before=$(wc -l <"$manifest")
log "kill -9 $target after $before files"
if [[ "$target" == meta ]]; then
  kill9 "$META_PID"
  sleep 1
  meta_start
else
  kill9 "$DATA_PID"
  sleep 1
  data_start
fi
log "$target restarted"
sleep 4
touch "$CLUSTER_DIR/stop"
wait "$writer_pid"
total=$(wc -l <"$manifest")
log "$total files written ($before before the crash)"
((before > 0)) || fail "no file was written before the crash"
((total > before)) || fail "no file was written after the restart"

verify() {
  local bad=0 name sum
  while read -r name sum; do
    [[ "$(sha256sum <"$MNT/$name" | cut -d' ' -f1)" == "$sum" ]] || { log "differs: $name"; bad=$((bad + 1)); }
  done <"$manifest"
  ((bad == 0)) || fail "$bad of $total files differ"
}
verify
log "remount and verify again"
stop_pid "$MOUNT_PID"
mount_start
verify
fsck_clean
