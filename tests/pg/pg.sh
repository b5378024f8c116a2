#!/usr/bin/env bash
# The libpq wrapper (src/pg) against real PostgreSQL 15 servers: a primary
# and a streaming standby (tests/lib/postgres.sh), then the primary killed
# and the standby promoted; a two-host connection string with
# target_session_attrs=read-write must reach the new primary.
set -euo pipefail
source "$(dirname "$0")/../lib/postgres.sh"
PG_TEST=${T0FS_TEST_BIN:?}/pg/pg_test
if ! pg_usable; then echo "SKIP: needs root and Debian's postgresql-15"; exit 77; fi
trap pg_stop_all EXIT
trap 'exit 130' INT TERM
pg_start primary
pg_start_standby standby primary
T0FS_PG_URL=$(pg_url primary) T0FS_PG_STANDBY_URL=$(pg_url standby) "$PG_TEST" --gtest_brief=1
two="postgresql://t0fs@127.0.0.1:${PG_PORT[primary]},127.0.0.1:${PG_PORT[standby]}/t0fs?target_session_attrs=read-write"
wait_until 10 "the standby to replay the test tables" bash -c \
  "[[ \$(runuser -u postgres -- $PG_BIN/psql -qAt -h 127.0.0.1 -p ${PG_PORT[standby]} -U t0fs -d t0fs -c 'SELECT count(*) FROM t_types') == 2 ]]"
pg_kill primary
pg_promote standby
T0FS_PG_FAILOVER_URL=$two "$PG_TEST" --gtest_filter='PgFailover.*' --gtest_brief=1
log "PASS"
