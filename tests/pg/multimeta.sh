#!/usr/bin/env bash
# Several meta servers on one PostgreSQL store: two `t0fs meta` serve one
# PostgreSQL 15 database; a data node and a mount know both (--meta A,B):
# the mount spreads its requests over both, the data node uses A until it
# fails. A second mount that knows only B races the first in one directory.
# Then meta A is stopped (SIGSTOP) while a writer creates files: the mount
# and the data node go to B after a second without a reply, and B is not
# held up by A's open transaction (PostgreSQL ends it). Then meta A is
# killed with -9: the mount leaves A out and the data node
# moves to B by themselves, I/O goes on with nothing lost, B takes over
# the housekeeping lease, fsck is clean; A restarted serves the same
# namespace to a mount that knows only A. Last, the database fails over:
# its primary is killed and the streaming standby promoted; the meta servers
# reach the new primary by themselves (a two-host URL with
# target_session_attrs=read-write) and I/O goes on with nothing lost.
set -euo pipefail
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/postgres.sh"
if ! pg_usable; then echo "SKIP: needs root and Debian's postgresql-15"; exit 77; fi

META2_PID="" MOUNT2_PID="" MNT2="" MOUNT3_PID="" MNT3=""
cleanup() {
  local rc=$?
  set +e
  stop_pid "$MOUNT2_PID"
  if [[ -n "$MNT2" ]] && is_mounted "$MNT2"; then umount -l "$MNT2"; fi
  stop_pid "$MOUNT3_PID"
  if [[ -n "$MNT3" ]] && is_mounted "$MNT3"; then umount -l "$MNT3"; fi
  stop_pid "$META2_PID"
  (exit "$rc")
  cluster_stop
  pg_stop_all
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

pg_start store
pg_start_standby standby store
# Nothing acknowledged may be lost in the failover: every commit waits for
# the standby (synchronous replication, as docs/operations.md advises).
pg_sql store "ALTER SYSTEM SET synchronous_standby_names = '*'" >/dev/null
pg_sql store "SELECT pg_reload_conf()" >/dev/null
STORE="postgresql://t0fs@127.0.0.1:${PG_PORT[store]},127.0.0.1:${PG_PORT[standby]}/t0fs?target_session_attrs=read-write"
CHUNK_SIZE=1M
CLUSTER_DIR=$(mktemp -d /tmp/t0fs-test.XXXXXX)
MNT="$CLUSTER_DIR/mnt"
MNT2="$CLUSTER_DIR/mnt2"
MNT3="$CLUSTER_DIR/mnt3"
mkdir -p "$MNT" "$MNT2" "$MNT3" "$CLUSTER_DIR/vol" "$CLUSTER_DIR/ref"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$CLUSTER_DIR/secret"
chmod 600 "$CLUSTER_DIR/secret"
A="127.0.0.1:$(free_port)"
B="127.0.0.1:$(free_port)"

# start_meta ADDR LOG: a meta server on the shared store; prints its pid.
start_meta() {
  "$T0FS" meta --listen "$1" --store "$STORE" --secret-file "$CLUSTER_DIR/secret" \
    --chunk-size 1M --local-chunk-size 1M --session-lease 20s --repair-interval 500ms \
    --pg-idle-txn-timeout 3s >>"$CLUSTER_DIR/$2" 2>&1 &
  echo $!
}
# A bad PostgreSQL setting is refused at start, naming the flag.
if out=$(timeout 20 "$T0FS" meta --listen "127.0.0.1:$(free_port)" --store "$STORE" \
  --secret-file "$CLUSTER_DIR/secret" --pg-synchronous-commit sometimes 2>&1); then
  fail "meta started with --pg-synchronous-commit sometimes"
fi
grep -q "pg-synchronous-commit must be" <<<"$out" || fail "no clear error for a bad pg setting: $out"
status_of() { "$T0FS" status --meta "$1" --secret-file "$CLUSTER_DIR/secret" >/dev/null; }
META_PID=$(start_meta "$A" meta.log)
META2_PID=$(start_meta "$B" meta2.log)
wait_until 30 "meta A" status_of "$A"
wait_until 30 "meta B" status_of "$B"
id_a=$(grep -o 'cluster [0-9a-f-]*' "$CLUSTER_DIR/meta.log" | head -n 1)
id_b=$(grep -o 'cluster [0-9a-f-]*' "$CLUSTER_DIR/meta2.log" | head -n 1)
[[ -n "$id_a" && "$id_a" == "$id_b" ]] || fail "the two meta servers serve different clusters: '$id_a' '$id_b'"
! grep -q "s3cret\|password" "$CLUSTER_DIR/meta.log" || fail "a secret in the log"

META_ADDR="$A,$B"  # data node, mount and admin commands know both
DATA_ADDR="127.0.0.1:$(free_port)"
data_start
mount_start
log "two meta servers ($A, $B) on $STORE; data $DATA_ADDR; mount $MNT"
wait_until 20 "one meta server to take the housekeeping lease" bash -c "[[ \$(grep -l 'now runs the repair planner' $CLUSTER_DIR/meta.log $CLUSTER_DIR/meta2.log | wc -l) -ge 1 ]]"

# write_batch FROM TO: files FROM..TO of random sizes, through the mount
# and into the reference directory.
SEED=${SEED:-$RANDOM}
log "seed $SEED"
RANDOM=$SEED
write_batch() {
  local i
  for ((i = $1; i <= $2; i++)); do
    head -c $((RANDOM * 97 + i)) /dev/urandom >"$CLUSTER_DIR/ref/f$i"
    cp "$CLUSTER_DIR/ref/f$i" "$MNT/d/f$i"
  done
}
compare_all() { # compare_all DIR: every reference file, byte for byte
  local f
  for f in "$CLUSTER_DIR"/ref/*; do cmp -s "$f" "$1/d/${f##*/}" || fail "${f##*/} differs in $1"; done
  [[ $(ls "$1/d" | wc -l) == $(ls "$CLUSTER_DIR/ref" | wc -l) ]] || fail "$1/d lists the wrong number of files"
}
mkdir "$MNT/d"
write_batch 1 20
compare_all "$MNT"

log "two clients through different meta servers race in one directory"
"$T0FS" mount "$B" "$MNT3" --secret-file "$CLUSTER_DIR/secret" --retry-timeout 60s \
  >>"$CLUSTER_DIR/mount3.log" 2>&1 &
MOUNT3_PID=$!
wait_until 20 "mount via B" is_mounted "$MNT3"
mkdir "$MNT/race"
race() { # race MOUNT TAG: creates, renames over a shared name, renames away
  local i
  for ((i = 1; i <= 40; i++)); do
    echo "$2 $i" >"$1/race/$2.tmp$i"
    mv "$1/race/$2.tmp$i" "$1/race/$2.$i"
    echo "$2 $i" >"$1/race/$2.s$i" && mv -f "$1/race/$2.s$i" "$1/race/shared"
  done
}
race "$MNT" a &
race_a=$!
race "$MNT3" b &
race_b=$!
wait "$race_a" || fail "the client via A failed in the race"
wait "$race_b" || fail "the client via B failed in the race"
listing=$(ls "$MNT/race" | sort)
expected=$( (for i in $(seq 1 40); do echo "a.$i"; echo "b.$i"; done; echo shared) | sort)
[[ "$listing" == "$expected" ]] || fail "the raced directory lists $(wc -l <<<"$listing") names, not the 81 expected: $(diff <(echo "$expected") <(echo "$listing") | head)"
[[ "$(ls "$MNT3/race" | sort)" == "$expected" ]] || fail "the two clients list the raced directory differently"
for i in $(seq 1 40); do
  [[ "$(cat "$MNT3/race/a.$i")" == "a $i" && "$(cat "$MNT/race/b.$i")" == "b $i" ]] || fail "race file $i has wrong contents"
done
grep -qE '^(a|b) [0-9]+$' "$MNT/race/shared" || fail "the shared name holds neither client's file"
fsck_clean
stop_pid "$MOUNT3_PID"
MOUNT3_PID=""

log "meta A stopped (SIGSTOP), not dead: creates go on through B"
# A stopped server's connections stay open: requests sent to it get no
# reply, a transaction it had begun keeps its row locks, and the data node's
# heartbeats to it go unanswered. A writer in one directory must go on
# without an error, through the node-timeout (10 s) and past it.
mkdir "$MNT/h"
writer() { # until $CLUSTER_DIR/stop-writer: a file per loop; failures noted
  local i=0
  while [[ ! -e "$CLUSTER_DIR/stop-writer" ]]; do
    i=$((i + 1))
    echo "$i" >"$MNT/h/f$i" || echo "f$i" >>"$CLUSTER_DIR/writer-failed"
    # (renamed into place: a reader never sees the file half written)
    echo "$i" >"$CLUSTER_DIR/writer-done.new" && mv "$CLUSTER_DIR/writer-done.new" "$CLUSTER_DIR/writer-done"
  done
}
writer &
writer_pid=$!
wait_until 20 "the writer to start" test -s "$CLUSTER_DIR/writer-done"
kill -STOP "$META_PID"
before=$(cat "$CLUSTER_DIR/writer-done")
sleep 12
during=$(cat "$CLUSTER_DIR/writer-done")
# An admin command that names the stopped server first goes on to B.
timeout 30 "$T0FS" status --meta "$A,$B" --secret-file "$CLUSTER_DIR/secret" --json |
  grep -q '"state": "up"' || fail "the data node is not up while meta A is stopped"
touch "$CLUSTER_DIR/stop-writer"
wait_until 60 "the writer to end" bash -c "! kill -0 $writer_pid"
kill -CONT "$META_PID"
log "writer: $before files before the stop, $during 12 s later"
((during > before)) || fail "no file was created while meta A was stopped"
[[ ! -s "$CLUSTER_DIR/writer-failed" ]] || fail "creates failed while meta A was stopped: $(head -c 300 "$CLUSTER_DIR/writer-failed")"
for i in 1 "$before" "$during"; do
  [[ "$(cat "$MNT/h/f$i")" == "$i" ]] || fail "h/f$i has wrong contents"
done
[[ $(ls "$MNT/h" | wc -l) -ge $during ]] || fail "h lists fewer files than were created"
wait_until 30 "meta A to answer again" status_of "$A"
rm -r "$MNT/h"

log "kill -9 meta A ($A)"
kill9 "$META_PID"
META_PID=""
write_batch 21 40
mv "$MNT/d/f1" "$MNT/d/f1.moved" && mv "$CLUSTER_DIR/ref/f1" "$CLUSTER_DIR/ref/f1.moved"
rm "$MNT/d/f2" "$CLUSTER_DIR/ref/f2"
compare_all "$MNT"
grep -q "$A: .*sending to the other servers" "$CLUSTER_DIR/mount.log" || fail "the mount did not say it left out $A"
wait_until 30 "meta B to take over the housekeeping" grep -q "now runs the repair planner" "$CLUSTER_DIR/meta2.log"
wait_until 30 "the data node up through meta B" node_up
fsck_clean

log "restart meta A; a mount that knows only A sees the same files"
META_PID=$(start_meta "$A" meta.log)
wait_until 30 "meta A again" status_of "$A"
"$T0FS" mount "$A" "$MNT2" --secret-file "$CLUSTER_DIR/secret" --retry-timeout 60s \
  >>"$CLUSTER_DIR/mount2.log" 2>&1 &
MOUNT2_PID=$!
wait_until 20 "mount via A" is_mounted "$MNT2"
compare_all "$MNT2"
echo "written via A" >"$MNT2/d/from-a"
[[ "$(cat "$MNT/d/from-a")" == "written via A" ]] || fail "a file written via A is not seen via B"
rm "$MNT2/d/from-a"
fsck_clean

log "the database fails over: kill -9 of the primary, the standby promoted"
pg_kill store
pg_promote standby
write_batch 41 50
compare_all "$MNT"
compare_all "$MNT2"
fsck_clean
log "PASS"
