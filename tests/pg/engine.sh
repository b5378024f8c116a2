#!/usr/bin/env bash
# The metadata store's engines against a real PostgreSQL 15 server
# (tests/lib/postgres.sh): the engine contract suite, the PostgreSQL
# engine's own tests and the engine-to-engine copy, each test binary given
# as an argument and run with T0FS_PG_URL naming the server's database.
set -euo pipefail
source "$(dirname "$0")/../lib/postgres.sh"
if ! pg_usable; then echo "SKIP: needs root and Debian's postgresql-15"; exit 77; fi
(($# > 0)) || fail "usage: engine.sh TEST_BINARY..."
trap pg_stop_all EXIT
trap 'exit 130' INT TERM
pg_start engines
export T0FS_PG_URL
T0FS_PG_URL=$(pg_url engines)
for test_bin in "$@"; do
  log "$(basename "$test_bin") against $T0FS_PG_URL"
  "$test_bin" --gtest_brief=1
done
log "PASS"
