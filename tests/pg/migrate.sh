#!/usr/bin/env bash
# `t0fs meta migrate`: a running cluster on SQLite moves its metadata to
# PostgreSQL. Refused while meta runs (the store would change under the
# copy); after meta stops, the copy is made and verified; meta restarted on
# the PostgreSQL store at the same address serves the same files to the
# mount and data node that never stopped; a second migrate into the same,
# no longer empty, target is refused.
set -euo pipefail
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/postgres.sh"
if ! pg_usable; then echo "SKIP: needs root and Debian's postgresql-15"; exit 77; fi
cleanup() {
  local rc=$?
  set +e
  (exit "$rc")
  cluster_stop
  pg_stop_all
  exit "$rc"
}
pg_start store
STORE=$(pg_url store)
cluster_start 1M
trap cleanup EXIT
SQLITE="sqlite://$CLUSTER_DIR/meta.db"

SEED=${SEED:-$RANDOM}
log "seed $SEED"
RANDOM=$SEED
mkdir -p "$CLUSTER_DIR/ref" "$MNT/d"
for i in $(seq 1 30); do
  head -c $((RANDOM * 61 + i)) /dev/urandom >"$CLUSTER_DIR/ref/f$i"
  cp "$CLUSTER_DIR/ref/f$i" "$MNT/d/f$i"
done
ln -s f1 "$MNT/d/link"
python3 -c "import os, sys; os.setxattr(sys.argv[1], 'user.t0fs', b'kept')" "$MNT/d/f2"
compare_all() {
  local f
  for f in "$CLUSTER_DIR"/ref/*; do cmp -s "$f" "$MNT/d/${f##*/}" || fail "${f##*/} differs"; done
  [[ "$(readlink "$MNT/d/link")" == f1 ]] || fail "the symlink changed"
  [[ "$(python3 -c "import os, sys; print(os.getxattr(sys.argv[1], 'user.t0fs').decode())" "$MNT/d/f2")" == kept ]] ||
    fail "the xattr changed"
}
compare_all
sync

if out=$("$T0FS" meta migrate --from "$SQLITE" --to "$STORE" 2>&1); then
  fail "migrate ran while meta was serving the store: $out"
fi
grep -q "in use by a running meta server" <<<"$out" || fail "unclear refusal: $out"

log "stop meta, migrate $SQLITE -> $STORE"
stop_pid "$META_PID"
META_PID=""
"$T0FS" meta migrate --from "$SQLITE" --to "$STORE" | tee "$CLUSTER_DIR/migrate.out"
grep -q "every row kind compared equal" "$CLUSTER_DIR/migrate.out" || fail "no verification line"

log "meta on PostgreSQL at $META_ADDR; the mount and the data node carry on"
"$T0FS" meta --listen "$META_ADDR" --store "$STORE" --secret-file "$CLUSTER_DIR/secret" \
  --chunk-size 1M --local-chunk-size 1M --session-lease 20s >>"$CLUSTER_DIR/meta.log" 2>&1 &
META_PID=$!
wait_until 30 "meta on PostgreSQL" admin status
wait_until 30 "the data node up again" node_up
compare_all
head -c 100000 /dev/urandom >"$CLUSTER_DIR/ref/after"
cp "$CLUSTER_DIR/ref/after" "$MNT/d/after"
compare_all
fsck_clean

if out=$("$T0FS" meta migrate --from "$SQLITE" --to "$STORE" 2>&1); then
  fail "migrate into a store that is not new succeeded: $out"
fi
grep -qi "not new\|in use" <<<"$out" || fail "unclear refusal: $out"
log "PASS"
