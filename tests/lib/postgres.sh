# Real PostgreSQL 15 servers for tests (Debian's postgresql-15), each in a
# temp directory of its own, listening on a free loopback port, stopped and
# removed on every exit path. Source after cluster.sh (uses log, fail,
# free_port, wait_until) or on its own (defines them if missing).
#
#   pg_start NAME            initdb + start a primary; sets PG_PORT[NAME], PG_DIR[NAME]
#   pg_start_standby NAME PRIMARY   a streaming standby of PRIMARY (pg_basebackup -R)
#   pg_url NAME [DB]         postgresql://t0fs@127.0.0.1:PORT/DB (DB: t0fs)
#   pg_promote NAME          pg_ctl promote, waits until it accepts writes
#   pg_kill NAME             kill -9 of the postmaster (a crash, not a shutdown)
#   pg_stop NAME             fast shutdown
#   pg_stop_all              stops every server started here and removes its files
#
# initdb refuses root: the servers run as the `postgres` user, in
# directories owned by it. Trust authentication on 127.0.0.1 only; the
# cluster secret protects t0fs, the database is reached only from this host.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}
declare -A PG_PORT=() PG_DIR=()
PG_ROOT=""

source "$(dirname "${BASH_SOURCE[0]}")/util.sh"

pg_usable() { [[ -x "$PG_BIN/initdb" ]] && id postgres >/dev/null 2>&1 && ((EUID == 0)); }

as_postgres() { runuser -u postgres -- "$@"; }

_pg_root() {
  if [[ -z "$PG_ROOT" ]]; then
    PG_ROOT=$(mktemp -d /tmp/t0fs-pg.XXXXXX)
    chown postgres: "$PG_ROOT"
    chmod 700 "$PG_ROOT"
  fi
}

_pg_conf() { # _pg_conf DIR PORT
  cat >>"$1/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
port = $2
unix_socket_directories = '$1'
max_connections = 100
shared_buffers = 32MB
# Commits reach the OS (synchronous_commit stays on) but are not flushed to
# the disk: a killed server loses nothing, only a machine crash would, and
# the tests do not crash the machine. Flushes would make every metadata
# operation wait for the shared disk.
fsync = off
wal_level = replica
max_wal_senders = 4
hot_standby = on
logging_collector = off
EOF
  cat >"$1/pg_hba.conf" <<EOF
local all all trust
host all all 127.0.0.1/32 trust
host replication all 127.0.0.1/32 trust
EOF
}

_pg_ready() { as_postgres "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$1"; }

_pg_launch() { # _pg_launch NAME
  local name=$1
  as_postgres "$PG_BIN/pg_ctl" -D "${PG_DIR[$name]}" -l "${PG_DIR[$name]}.log" -w -t 60 start >/dev/null ||
    { tail -n 20 "${PG_DIR[$name]}.log" >&2; fail "postgres $name did not start"; }
  wait_until 30 "postgres $name" _pg_ready "${PG_PORT[$name]}"
}

pg_start() {
  local name=$1 dir port
  _pg_root
  dir="$PG_ROOT/$name"
  port=$(free_port)
  PG_DIR[$name]=$dir
  PG_PORT[$name]=$port
  as_postgres "$PG_BIN/initdb" -D "$dir" -U postgres -A trust --no-sync -E UTF8 >"$dir.initdb.log" 2>&1 ||
    { cat "$dir.initdb.log" >&2; fail "initdb $name"; }
  _pg_conf "$dir" "$port"
  _pg_launch "$name"
  as_postgres "$PG_BIN/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -c "CREATE ROLE t0fs LOGIN SUPERUSER" -c "CREATE DATABASE t0fs OWNER t0fs" >/dev/null ||
    fail "create the t0fs role and database on $name"
  log "postgres $name: 127.0.0.1:$port ($dir)"
}

pg_start_standby() {
  local name=$1 primary=$2 dir port
  _pg_root
  dir="$PG_ROOT/$name"
  port=$(free_port)
  PG_DIR[$name]=$dir
  PG_PORT[$name]=$port
  as_postgres "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "${PG_PORT[$primary]}" -U postgres -D "$dir" -R \
    -X stream -c fast --no-sync >"$dir.basebackup.log" 2>&1 || { cat "$dir.basebackup.log" >&2; fail "pg_basebackup $name"; }
  sed -i "s/^port = .*/port = $port/; s|^unix_socket_directories = .*|unix_socket_directories = '$dir'|" \
    "$dir/postgresql.conf"
  _pg_launch "$name"
  log "postgres $name: standby of $primary on 127.0.0.1:$port"
}

pg_url() { echo "postgresql://t0fs@127.0.0.1:${PG_PORT[$1]}/${2:-t0fs}"; }

pg_sql() { # pg_sql NAME SQL: runs SQL on the t0fs database, prints rows
  as_postgres "$PG_BIN/psql" -qAt -h 127.0.0.1 -p "${PG_PORT[$1]}" -U t0fs -d t0fs -c "$2"
}

_pg_writable() { [[ "$(pg_sql "$1" 'SELECT NOT pg_is_in_recovery()')" == t ]]; }

pg_promote() {
  local name=$1
  as_postgres "$PG_BIN/pg_ctl" -D "${PG_DIR[$name]}" -w -t 60 promote >/dev/null || fail "promote $name"
  wait_until 30 "postgres $name to accept writes" _pg_writable "$name"
  log "postgres $name: promoted"
}

_pg_pid() { head -n 1 "${PG_DIR[$1]}/postmaster.pid" 2>/dev/null; }

pg_kill() {
  local name=$1 pid
  pid=$(_pg_pid "$name")
  [[ -n "$pid" ]] || return 0
  kill -9 "$pid" 2>/dev/null || true
  # The backends follow their postmaster.
  local deadline=$((SECONDS + 10))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  pkill -9 -f -- "-D ${PG_DIR[$name]}" 2>/dev/null || true
  log "postgres $name: killed"
}

pg_stop() {
  local name=$1 pid
  [[ -n "${PG_DIR[$name]:-}" ]] || return 0
  pid=$(_pg_pid "$name")
  [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
  as_postgres "$PG_BIN/pg_ctl" -D "${PG_DIR[$name]}" -m immediate -w -t 20 stop >/dev/null 2>&1 || pg_kill "$name"
}

pg_stop_all() {
  local name
  for name in "${!PG_DIR[@]}"; do pg_stop "$name"; done
  [[ -z "$PG_ROOT" ]] || rm -rf "$PG_ROOT"
  PG_ROOT=""
  PG_DIR=()
  PG_PORT=()
}
