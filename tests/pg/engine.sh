#!/usr/bin/env bash
# The metadata store's engines against a real PostgreSQL 15 server
# (tests/lib/postgres.sh): the engine contract suite, the PostgreSQL
# engine's own tests, the engine-to-engine copy and the POSIX store suite
# (PosixStore over PostgreSQL), each test binary given
# as an argument and run with T0FS_PG_URL naming the server's database;
# then the PostgreSQL engine across a failover to a streaming standby.
set -euo pipefail
source "$(dirname "$0")/../lib/postgres.sh"
if ! pg_usable; then echo "SKIP: needs root and Debian's postgresql-15"; exit 77; fi
(($# > 0)) || fail "usage: engine.sh TEST_BINARY..."
trap pg_stop_all EXIT
trap 'exit 130' INT TERM
pg_start engines
export T0FS_PG_URL
T0FS_PG_URL=$(pg_url engines)
pg_start_standby standby engines
for test_bin in "$@"; do
  log "$(basename "$test_bin") against $T0FS_PG_URL"
  "$test_bin" --gtest_brief=1
done

# The PostgreSQL engine across a failover: the test kills the primary and
# promotes the standby when its engine has committed (T0FS_PG_FAILOVER_CMD).
primary_pid=$(head -n 1 "${PG_DIR[engines]}/postmaster.pid")
export T0FS_PG_FAILOVER_URL T0FS_PG_FAILOVER_CMD
T0FS_PG_FAILOVER_URL="postgresql://t0fs@127.0.0.1:${PG_PORT[engines]},127.0.0.1:${PG_PORT[standby]}/t0fs?target_session_attrs=read-write"
T0FS_PG_FAILOVER_CMD="kill -9 $primary_pid && runuser -u postgres -- $PG_BIN/pg_ctl -D ${PG_DIR[standby]} -w -t 60 promote >/dev/null"
for test_bin in "$@"; do
  [[ "$(basename "$test_bin")" == pg_engine_test ]] || continue
  log "$(basename "$test_bin"): failover"
  "$test_bin" --gtest_brief=1 --gtest_filter='PgEngineFailover.*'
done
log "PASS"
