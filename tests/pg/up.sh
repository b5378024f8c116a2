#!/usr/bin/env bash
# `t0fs up --store postgresql://… --meta-servers 2`: a cluster of this machine
# with two meta servers over one PostgreSQL 15 store. The mount spreads its
# requests over both (each serves some); kill -9 of one meta server: I/O goes
# on through the other, `up` restarts it; Ctrl-C stops everything. With
# three data nodes, the meta server running the repair planner is killed
# for good and then a data node holding replicas: the survivor takes over
# and repairs every chunk to its objective on the other nodes. Bad
# input is one clear line and a non-zero exit, with nothing started or
# written: for `up`, an unreachable store, a malformed URL, two meta servers
# on SQLite, another store for an established cluster; for `t0fs meta`, an
# unreachable server, a database that does not exist, the store of another
# cluster (another secret) and a schema from a newer t0fs.
source "$(dirname "$0")/../cli/lib.sh"
source "$(dirname "$0")/../lib/postgres.sh"
if ! pg_usable; then echo "SKIP: needs root and Debian's postgresql-15"; exit 77; fi
CLI_CLEANUP_HOOK=pg_stop_all

pg_start store
STORE=$(pg_url store)
base=$(free_port 6)  # 2 meta servers, then up to 3 data nodes
args=(--dir "$WORK/data" --mount "$WORK/mnt" --meta-listen "127.0.0.1:$base"
  --data-listen "127.0.0.1:$((base + 2))")
M="$WORK/mnt"
child() { pgrep -P "$UP_PID" -f -- "$1"; }
says() { grep -q -- "$2" "$WORK/$1.out"; }
requests_of() { # requests_of META_LOG: the meta server's metrics address, then its request count
  local url
  url=$(sed -n 's/.*metrics on \(http[^ ]*\).*/\1/p' "$1" | tail -n 1)
  curl -s "$url" | awk '/^t0fs_rpc_server_requests_total/ {s += $2} END {print s + 0}'
}

log "bad input: nothing is started, one clear line"
out=$("$T0FS" up "${args[@]}" --meta-servers 2 2>&1) && fail "two meta servers on SQLite were accepted"
grep -q "need a store they can share" <<<"$out" || fail "unclear: $out"
[[ $(wc -l <<<"$out") == 1 ]] || fail "more than one line: $out"
[[ -e "$WORK/data" ]] && fail "a cluster directory was created for a refused start"
out=$("$T0FS" up "${args[@]}" --store "mysql://x" 2>&1) && fail "a mysql:// store was accepted"
grep -q -- "--store" <<<"$out" || fail "unclear: $out"
[[ -e "$WORK/data" ]] && fail "a cluster directory was created for a malformed --store"
dead=$(free_port)
out=$(timeout 60 "$T0FS" up "${args[@]}" --store "postgresql://t0fs@127.0.0.1:$dead/t0fs" 2>&1) &&
  fail "an unreachable store was accepted"
grep -q "127.0.0.1:$dead" <<<"$out" || fail "the unreachable store is not named: $out"
is_mounted "$M" && fail "mounted over an unreachable store"

log "two meta servers over $STORE"
up_start up1 "${args[@]}" --store "$STORE" --meta-servers 2
up_wait up1
says up1 "2 meta servers on 127.0.0.1:$base,127.0.0.1:$((base + 1))" || fail "up does not name its meta servers"
grep -q 'store = "postgresql://' "$WORK/data/t0fs.toml" || fail "t0fs.toml does not record the store"
head -c $((2 << 20)) /dev/urandom >"$WORK/ref"
mkdir "$M/d"
for i in $(seq 1 30); do cp "$WORK/ref" "$M/d/f$i"; done
a=$(requests_of "$WORK/data/logs/meta1.log")
b=$(requests_of "$WORK/data/logs/meta2.log")
log "requests served: meta1 $a, meta2 $b"
((a > 30 && b > 30)) || fail "the mount did not spread its requests (meta1 $a, meta2 $b)"
"$T0FS" status --dir "$WORK/data" >/dev/null || fail "status over two meta servers"

log "kill -9 of meta server 1: I/O goes on, up restarts it"
kill -9 "$(child "--listen 127.0.0.1:$base")"
for i in $(seq 31 40); do cp "$WORK/ref" "$M/d/f$i"; done
for i in $(seq 1 40); do cmp -s "$WORK/ref" "$M/d/f$i" || fail "f$i differs after the kill"; done
wait_until 30 "meta1 restarted" says up1 "restarted meta1"
wait_until 30 "meta1 answering" "$T0FS" status --meta "127.0.0.1:$base" --secret-file "$WORK/data/secret"
"$T0FS" fsck --dir "$WORK/data" | grep -q clean || fail "fsck is not clean"
up_stop "$UP_PID" INT || fail "up exited non-zero"
is_mounted "$M" && fail "still mounted after Ctrl-C"

log "a restart without --store uses the recorded one"
up_start up2 "${args[@]}"
up_wait up2
for i in $(seq 1 40); do cmp -s "$WORK/ref" "$M/d/f$i" || fail "f$i differs after the restart"; done
up_stop "$UP_PID" INT || fail "up exited non-zero"
log "repair after a data node loss goes on when the meta server running it dies"
sed -i 's|^\[meta\]$|[meta]\nsuspect-after = "1s"\nnode-timeout = "2s"\nrepair-grace = "2s"\nrepair-interval = "300ms"\nheartbeat = "200ms"|' \
  "$WORK/data/t0fs.toml"
up_start up3 "${args[@]}" --nodes 3 --restart never
up_wait up3
status_json() { "$T0FS" status --dir "$WORK/data" --json; }
node_field() { # node_field EXPR: EXPR (Python) over `nodes`, the status's node list
  status_json | python3 -c 'import json, sys; nodes = json.load(sys.stdin)["nodes"]; print(eval(sys.argv[1]))' "$1"
}
nodes_up() { [[ $(node_field 'sum(n["state"] == "up" for n in nodes)') == "$1" ]]; }
wait_until 30 "3 nodes up" nodes_up 3
mkdir "$M/r2"
"$T0FS" objective set "$M/r2" replicas=2 >/dev/null || fail "objective set"
for i in 1 2 3 4; do cp "$WORK/ref" "$M/r2/f$i"; done
# The holder of the housekeeping lease: the meta server that took it last.
holder=$(grep -H "now runs the repair planner" "$WORK/data/logs/meta1.log" "$WORK/data/logs/meta2.log" |
  sed 's|^.*/\(meta[12]\)\.log:\(.*\)$|\2 \1|' | sort | tail -n 1 | awk '{print $NF}')
[[ -n "$holder" ]] || fail "no meta server runs the repair planner"
survivor=meta1
[[ "$holder" == meta1 ]] && survivor=meta2
log "kill -9 of $holder (it runs the repair planner; --restart never)"
kill -9 "$(child "--listen 127.0.0.1:$((base + ${holder#meta} - 1))")"
takes_over() { [[ $(grep -c "now runs the repair planner" "$WORK/data/logs/$survivor.log") -ge 1 ]]; }
wait_until 30 "$survivor to take over the repair planner" takes_over
# The node (2 or 3) with the most second copies goes.
victim=$(node_field 'max((n for n in nodes if n["node"] != min(m["node"] for m in nodes)), key=lambda n: n["replicas"])["address"]')
victim_id=$(node_field "[n['node'] for n in nodes if n['address'] == '$victim'][0]")
log "kill -9 of the data node $victim_id ($victim)"
kill -9 "$(child "--listen $victim")"
repaired() {
  local f
  for f in 1 2 3 4; do
    "$T0FS" layout "$M/r2/f$f" --json | python3 -c '
import json, sys
chunks = json.load(sys.stdin)["chunks"]
ok = chunks and all(len({r["node"] for r in c["replicas"] if r["state"] == "healthy"}) == 2 and
                    int(sys.argv[1]) not in [r["node"] for r in c["replicas"]] for c in chunks)
sys.exit(0 if ok else 1)' "$victim_id" || return 1
  done
}
wait_until 90 "every chunk at 2 healthy replicas on the survivors" repaired
for i in 1 2 3 4; do cmp -s "$WORK/ref" "$M/r2/f$i" || fail "r2/f$i differs after the repair"; done
up_stop "$UP_PID" INT || fail "up exited non-zero"

log "the established cluster keeps its store"
out=$("$T0FS" up "${args[@]}" --store "sqlite://$WORK/other.db" 2>&1) && fail "another store was accepted"
grep -q "t0fs meta migrate" <<<"$out" || fail "unclear: $out"
# meta_refuses WHAT EXPECTED ARGS...: `t0fs meta ARGS` exits non-zero with
# one line that contains EXPECTED.
meta_refuses() {
  local what=$1 expected=$2 out
  shift 2
  out=$(timeout 60 "$T0FS" meta --listen "127.0.0.1:$(free_port)" "$@" 2>&1) &&
    fail "t0fs meta accepted $what"
  grep -q -- "$expected" <<<"$out" || fail "$what: unclear: $out"
  [[ $(wc -l <<<"$out") == 1 ]] || fail "$what: more than one line: $out"
}
# dump NAME: the store's rows (pg_dump, less its random \restrict token),
# kept in $WORK/dump.NAME; prints their checksum.
dump() {
  as_postgres "$PG_BIN/pg_dump" --data-only -h 127.0.0.1 -p "${PG_PORT[store]}" t0fs |
    grep -v '^\\\(un\)\?restrict ' | tee "$WORK/dump.$1" | md5sum
}
log "t0fs meta: bad stores are refused in one line, nothing written"
meta_refuses "an unreachable server" "127.0.0.1:$dead" --secret-file "$WORK/data/secret" \
  --store "postgresql://t0fs@127.0.0.1:$dead/t0fs"
meta_refuses "a missing database" 'database "nosuch" does not exist' --secret-file "$WORK/data/secret" \
  --store "$(pg_url store nosuch)"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$WORK/other-secret"
chmod 600 "$WORK/other-secret"
before=$(dump a)
grep -q "^COPY " "$WORK/dump.a" || fail "pg_dump read no rows of the store"
meta_refuses "another cluster's store" "holds the metadata of cluster" \
  --secret-file "$WORK/other-secret" --store "$STORE"
[[ "$(dump b)" == "$before" ]] || fail "a refused meta server wrote to the store: $(diff "$WORK/dump.a" "$WORK/dump.b" | head -20)"
pg_sql store "INSERT INTO t0fs_schema (version) VALUES (99)" >/dev/null
before=$(dump c)
meta_refuses "a newer schema" "version 99 is newer than this build" \
  --secret-file "$WORK/data/secret" --store "$STORE"
[[ "$(dump d)" == "$before" ]] || fail "a refused meta server wrote to a newer store: $(diff "$WORK/dump.c" "$WORK/dump.d" | head -20)"
log "PASS"
