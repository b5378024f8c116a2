#!/usr/bin/env bash
# SIGINT and SIGTERM during `t0fs bench`: bench_stop_test.sh CASE /path/to/t0fs
# Each case starts a bench that would run for a minute or more on a temp dir,
# waits until it is working, sends the signal, and checks: the process ends
# (bounded wait: 20 s, a hang detector, not a timing assertion: each run
# would go on for a minute or more; the stop also removes what the run made,
# which took over 5 s once in CI on a busy disk), exit 130 for
# SIGINT / 143 for SIGTERM, the partial result printed and written with the
# stopped-early flag, and nothing left behind in the directory it worked in.
# Cases: io sigterm ai sweep meta training datagen checkpoint kvcache
set -euo pipefail
case_name=$1
T0FS=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/t0fs-bench-stop.XXXXXX")
D=$WORK/data
R=$WORK/results
mkdir -p "$D"
BENCH_PID=""
cleanup() {
  local rc=$?
  set +e
  if [[ -n "$BENCH_PID" ]] && kill -0 "$BENCH_PID" 2>/dev/null; then
    kill -9 "$BENCH_PID"
    wait "$BENCH_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
  return $rc
}
trap cleanup EXIT

fail() {
  echo "FAIL [$case_name]: $*" >&2
  for f in "$WORK"/out.txt "$WORK"/err.txt; do [[ -f $f ]] && { echo "--- $f" >&2; tail -n 30 "$f" >&2; }; done
  exit 1
}
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" \
         || fail "$1: expected $2"; }

# start ARGS...: runs `t0fs bench ARGS` in the background.
start() {
  "$T0FS" bench "$@" >"$WORK/out.txt" 2>"$WORK/err.txt" &
  BENCH_PID=$!
}
# wait_for DESCRIPTION COMMAND...: until COMMAND holds (60 s at most), then
# $SETTLE seconds (default 1) more work before the signal.
wait_for() {
  local what=$1 deadline=$((SECONDS + 60))
  shift
  until "$@" >/dev/null 2>&1; do
    kill -0 "$BENCH_PID" 2>/dev/null || fail "the bench ended before $what"
    ((SECONDS < deadline)) || fail "timed out waiting for $what"
    sleep 0.1
  done
  sleep "${SETTLE:-1}"
  kill -0 "$BENCH_PID" 2>/dev/null || fail "the bench ended by itself: the test needs a longer run"
}
# stop SIGNAL WANT_RC: sends the signal, waits up to 20 s, checks the exit code.
stop() {
  local sig=$1 want=$2 waited=0
  kill -s "$sig" "$BENCH_PID"
  while kill -0 "$BENCH_PID" 2>/dev/null; do
    ((waited < 200)) || fail "still running 20 s after $sig"
    sleep 0.1
    waited=$((waited + 1))
  done
  local rc=0
  wait "$BENCH_PID" || rc=$?
  BENCH_PID=""
  [[ $rc -eq $want ]] || fail "exit $rc after $sig, wanted $want"
}
nothing_left() {  # nothing_left DIR: the directory is empty
  [[ -z "$(ls -A "$1")" ]] || fail "left behind in $1: $(ls -A "$1" | head -5)"
}
stopped_json() {  # stopped_json FILE SIGNAL_NAME
  json "$1" "r['stopped_early'] is True and r['stop_signal']=='$2'"
}

case $case_name in
io)
  start io "$D" --rw read --bs 64K --size 4M --threads 2 --runtime 120s --drop-caches fadvise \
    --json "$WORK/r.json"
  wait_for "the dataset" test -f "$D/t0fs-bench.1.0"
  stop INT 130
  stopped_json "$WORK/r.json" SIGINT
  json "$WORK/r.json" "r['runs'][0]['stopped_early'] and r['runs'][0]['phases'][0]['last_done']['bytes']>0"
  grep -q "STOPPED EARLY by SIGINT" "$WORK/out.txt" || fail "no stop line in the table"
  grep -q "FIRST DONE" "$WORK/out.txt" || fail "no partial table"
  nothing_left "$D"
  ;;
sigterm)
  # A write run, repeated: the stop ends the run and skips the repeats.
  start io "$D" --rw randwrite --bs 4K --size 64M --threads 2 --runtime 120s --repeat 3 \
    --json "$WORK/r.json" --csv "$WORK/r.csv"
  wait_for "the files" test -f "$D/t0fs-bench.1.0"
  stop TERM 143
  stopped_json "$WORK/r.json" SIGTERM
  json "$WORK/r.json" "len(r['runs'])==1 and r['runs'][0]['phases'][0]['name']=='write'"
  [[ -s $WORK/r.csv ]] || fail "no CSV written"
  nothing_left "$D"
  ;;
ai)
  start ai "$D" --pattern all --size 8M --threads 2 --files 2 --bs 256K --runtime 120s --buffered \
    --drop-caches fadvise --json "$WORK/r.json"
  wait_for "the shard files" test -f "$D/t0fs-bench.shared.1"
  stop INT 130
  stopped_json "$WORK/r.json" SIGINT
  # The first pattern was cut; the others never started.
  json "$WORK/r.json" "[p['name'] for p in r['runs'][0]['phases']]==['random-sampling read']"
  nothing_left "$D"
  ;;
sweep)
  # Buffered writes of up to 8 GiB: the stop comes long before.
  start sweep "$D" --size 8G --record 1M --threads 1,2 --drop-caches fadvise --json "$WORK/r.json"
  wait_for "the first file" test -f "$D/t0fs-sweep.r0.0"
  stop INT 130
  stopped_json "$WORK/r.json" SIGINT
  json "$WORK/r.json" "r['runs'][0]['phases'][0]['name']=='write t=1' and r['runs'][0]['extra']['curve']==[]"
  nothing_left "$D"
  ;;
meta)
  # The stop removes every directory created so far, as fast as the file
  # system allows: little work before the signal keeps that short.
  start meta "$D" --threads 2 --items 10000000 --json "$WORK/r.json"
  SETTLE=0.3 wait_for "the run directory" compgen -G "$D/t0fs-meta.*"
  stop INT 130
  stopped_json "$WORK/r.json" SIGINT
  json "$WORK/r.json" "r['runs'][0]['phases'][0]['name']=='dir-create' and r['runs'][0]['phases'][0]['last_done']['ops']>0"
  nothing_left "$D"
  ;;
training)
  "$T0FS" bench mlperf training datagen -w unet3d -g h100 --num-files 8 --data-dir "$D" \
    --record-length 65536 --record-length-stdev 0 -q --results-dir "$R" >/dev/null
  before=$(find "$D" | sort | md5sum)
  start mlperf training run -w unet3d -g h100 -n 2 --data-dir "$D" --num-files 8 --batch-size 1 \
    --epochs 100000 --computation-time 0.05 --runs 2 --warmup-runs 0 --drop-caches fadvise -q \
    --results-dir "$R" --json "$WORK/r.json"
  wait_for "a finished epoch" grep -q "epoch 1/100000" "$WORK/out.txt"
  stop INT 130
  stopped_json "$WORK/r.json" SIGINT
  json "$WORK/r.json" "len(r['runs'])==1 and r['runs'][0]['stopped_early'] and r['extra']['pass'] is False"
  grep -q "STOPPED EARLY by SIGINT" "$WORK/out.txt" || fail "no stop line"
  [[ "$(find "$D" | sort | md5sum)" == "$before" ]] || fail "the dataset changed"
  ;;
datagen)
  # unet3d's real records (~140 MB each): 64 files take far longer than a second.
  start mlperf training datagen -w unet3d -g h100 --num-files 64 --data-dir "$D" -t 2 -q \
    --results-dir "$R" --json "$WORK/r.json"
  wait_for "the first file" compgen -G "$D/unet3d/train/img_*"
  stop INT 130
  stopped_json "$WORK/r.json" SIGINT
  grep -q "STOPPED EARLY" "$WORK/out.txt" || fail "no stop line"
  nothing_left "$D"
  ;;
checkpoint)
  # llama3-8b at 1/100: 1 GiB per checkpoint, fsynced, 10 of them, then 10 reads.
  start mlperf checkpointing run --model llama3-8b --checkpoint-folder "$D" --scale 0.01 \
    --time-between 0 --drop-caches fadvise -q --results-dir "$R" --json "$WORK/r.json"
  wait_for "the first checkpoint" test -d "$D/llama3-8b/global_epoch1_step1"
  stop INT 130
  stopped_json "$WORK/r.json" SIGINT
  grep -q "STOPPED EARLY" "$WORK/out.txt" || fail "no stop line"
  nothing_left "$D"
  ;;
kvcache)
  start mlperf kvcache run --option 1 --cache-dir "$D" --users 6 --duration 120s --trials 3 \
    --scale 0.0001 -q --results-dir "$R" --json "$WORK/r.json"
  wait_for "the cache directory" test -d "$D/rank_0"
  stop TERM 143
  stopped_json "$WORK/r.json" SIGTERM
  json "$WORK/r.json" "r['runs'][0]['stopped_early'] and len(r['runs'][0]['phases'])==2"
  nothing_left "$D"
  ;;
*) fail "unknown case" ;;
esac
echo "ok [$case_name]"
