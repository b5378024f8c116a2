#!/usr/bin/env bash
# src/s3 against a real one-node Ceph RGW (tests/lib/ceph.sh): the client's
# operations (s3_rgw_test), then the same objects checked from outside with
# s3cmd, and a throughput comparison of the client with s3cmd put/get of the
# same object (printed, never asserted).
set -euo pipefail
source "$(dirname "$0")/../lib/ceph.sh"
S3_TEST=${T0FS_TEST_BIN:?}/s3/s3_rgw_test
if ! ceph_usable; then echo "SKIP: needs root and Debian's ceph-mon ceph-osd radosgw ceph-common s3cmd"; exit 77; fi
WORK=""
cleanup() {
  ceph_stop
  [[ -z "$WORK" ]] || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
WORK=$(mktemp -d /tmp/t0fs-s3test.XXXXXX)
SEED=${SEED:-$RANDOM}
log "seed $SEED"

ceph_start
export S3_BUCKET=t0fs-test S3_BIG_FILE=$WORK/big.bin S3_DEAD_PORT
S3_DEAD_PORT=$(free_port)
# 40 MiB, uploaded by the client in 8 MiB parts and read back byte for byte.
python3 -c "import random,sys; random.seed($SEED); sys.stdout.buffer.write(random.randbytes(40 << 20))" >"$S3_BIG_FILE"

"$S3_TEST" --gtest_brief=1 | tee "$WORK/test.out"

# From outside: s3cmd with the same endpoint and keys.
ceph_s3cfg "$WORK/s3cfg"
s3() { s3cmd -c "$WORK/s3cfg" --no-progress "$@"; }
s3 ls "s3://$S3_BUCKET/big/" | grep -q "$((40 << 20)) *s3://$S3_BUCKET/big/object" || fail "s3cmd does not list big/object"
s3 get --force "s3://$S3_BUCKET/big/object" "$WORK/via-s3cmd.bin" >/dev/null
cmp "$S3_BIG_FILE" "$WORK/via-s3cmd.bin" || fail "s3cmd reads back other bytes than the client wrote"
s3 multipart "s3://$S3_BUCKET" >"$WORK/multipart.out"
grep -q "abort/me" "$WORK/multipart.out" && fail "s3cmd still sees the aborted multipart upload"

# Throughput, same object, same run: s3cmd put (multipart in 8 MiB chunks) and get.
t0=$(date +%s%N)
s3 put --multipart-chunk-size-mb=8 "$S3_BIG_FILE" "s3://$S3_BUCKET/big/s3cmd" >/dev/null
t1=$(date +%s%N)
s3 get --force "s3://$S3_BUCKET/big/s3cmd" "$WORK/s3cmd-get.bin" >/dev/null
t2=$(date +%s%N)
cmp "$S3_BIG_FILE" "$WORK/s3cmd-get.bin" || fail "s3cmd round trip differs"
awk -v b=$((40 << 20)) -v up=$((t1 - t0)) -v down=$((t2 - t1)) \
  'BEGIN { printf "THROUGHPUT s3cmd put %.1f MiB/s, get %.1f MiB/s\n", b / 1048576 / (up / 1e9), b / 1048576 / (down / 1e9) }'
grep THROUGHPUT "$WORK/test.out" || true
log "ceph start took ${CEPH_START_MS} ms"
log "PASS"
