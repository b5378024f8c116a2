#!/usr/bin/env bash
# Integration tests of `t0fs bench`: bench_cli_test.sh CASE /path/to/t0fs
# Tiny sizes only; never asserts a timing. Needs python3 for JSON checks.
# Reads drop only their own files' cache (--drop-caches fadvise), never the
# whole host's (auto, as root, would write drop_caches).
set -euo pipefail
case_name=$1
T0FS=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/t0fs-bench-it.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
D=$WORK/data
mkdir -p "$D"

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
# json FILE EXPR: evaluates a Python expression on the parsed file as `r`.
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" \
         || fail "$1: expected $2"; }
no_files_left() { [[ -z "$(ls -A "$D")" ]] || fail "files left behind: $(ls -A "$D")"; }

case $case_name in
io)
  # Byte and op counts for each mode (fio semantics: each thread moves --size).
  for rw in read write randread randwrite; do
    "$T0FS" bench io --drop-caches fadvise "$D" --rw $rw --bs 4K --threads 2 --size 256K --json "$WORK/$rw.json" \
      --csv "$WORK/$rw.csv" >"$WORK/out.txt" 2>"$WORK/err.txt" || fail "$rw run: $(cat "$WORK/err.txt")"
    phase=$([[ $rw == *read ]] && echo read || echo write)
    json "$WORK/$rw.json" "r['runs'][0]['phases'][0]['name']=='$phase' and r['runs'][0]['phases'][0]['last_done']['bytes']==2*256*1024 and r['runs'][0]['phases'][0]['last_done']['ops']==128"
    json "$WORK/$rw.json" "r['runs'][0]['phases'][0]['latency_ns']['count']==128 and r['runs'][0]['phases'][0]['fio']['total_ios']==128"
    head -1 "$WORK/$rw.csv" | grep -qx 'label,kind,workload,run,phase,figure,value,unit,better' || fail "csv header"
    grep -q "FIRST DONE" "$WORK/out.txt" || fail "no table on stdout"
    # Not a terminal: no progress line (no carriage returns on stderr).
    ! grep -q $'\r' "$WORK/err.txt" || fail "progress line written to a non-terminal"
    no_files_left
  done
  # elbencho split: --size is the dataset, one shared file, io_uring.
  "$T0FS" bench io --drop-caches fadvise "$D" --rw randrw --rwmixread 75 --bs 4K --threads 3 --size 300K --split shared \
    --layout shared --engine io_uring --iodepth 8 --json "$WORK/rw.json" -q >/dev/null
  json "$WORK/rw.json" "sum(p['last_done']['ops'] for p in r['runs'][0]['phases'])==75"
  no_files_left
  # Time-based with ramp and --repeat: median and CV in the summary.
  "$T0FS" bench io --drop-caches fadvise "$D" --rw read --bs 64K --size 1M --runtime 1s --ramp 200ms --repeat 2 \
    --json "$WORK/t.json" -q >"$WORK/out.txt"
  json "$WORK/t.json" "len(r['runs'])==2 and any(s['name']=='bw' and 'cv_pct' in s for s in r['summary'])"
  grep -q MEDIAN "$WORK/out.txt" || fail "no median table"
  no_files_left
  # --keep keeps the dataset.
  "$T0FS" bench io --drop-caches fadvise "$D" --rw write --bs 4K --size 64K --keep -q >/dev/null
  [[ -f $D/t0fs-bench.0.0 ]] || fail "--keep did not keep"
  ;;
verify)
  "$T0FS" bench io --drop-caches fadvise "$D" --rw write --bs 4K --threads 2 --size 256K --verify --keep -q >/dev/null
  "$T0FS" bench io --drop-caches fadvise "$D" --rw randread --bs 4K --threads 2 --size 256K --verify --keep -q >/dev/null \
    || fail "clean data failed to verify"
  # Flip one byte in the middle of thread 1's file.
  python3 - "$D/t0fs-bench.1.0" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(123457); b = f.read(1); f.seek(123457); f.write(bytes([b[0] ^ 0x10]))
PY
  if "$T0FS" bench io --drop-caches fadvise "$D" --rw read --bs 4K --threads 2 --size 256K --verify --keep -q \
      --json "$WORK/v.json" >/dev/null 2>"$WORK/err.txt"; then
    fail "corruption not detected"
  fi
  grep -q "verify failed: .*t0fs-bench.1.0 differs at offset 123457" "$WORK/err.txt" \
    || fail "unexpected message: $(cat "$WORK/err.txt")"
  [[ ! -e $WORK/v.json ]] || fail "a result file was written for a failed run"
  # The sweep verifies too.
  "$T0FS" bench sweep --drop-caches fadvise "$D" --size 8M --record 1M --max-threads 2 --verify -q >/dev/null
  ;;
errors)
  expect_error() {  # expect_error PATTERN ARGS...: non-zero exit, one-line error on stderr
    local pattern=$1; shift
    if "$T0FS" bench "$@" >"$WORK/out.txt" 2>"$WORK/err.txt"; then fail "'$*' succeeded"; fi
    grep -qi -- "$pattern" "$WORK/err.txt" || fail "'$*': wanted '$pattern', got: $(cat "$WORK/err.txt")"
    ! grep -qiE "terminate called|stack|Aborted|core dumped" "$WORK/err.txt" || fail "'$*' crashed"
  }
  expect_error "no such file or directory" io "$WORK/missing/dir" --size 1M
  expect_error "no space left" io /dev/full --rw write --size 1M
  expect_error "rw" io "$D" --rw sideways
  expect_error "threads" io "$D" --threads 0
  expect_error "--bs" io "$D" --bs 12Q
  expect_error "smaller than --bs" io "$D" --size 1K --bs 4K
  expect_error "--ramp needs" io "$D" --ramp 1s
  expect_error "does not exist" io "$D" --size 64K --bs 4K --json "$WORK/nodir/r.json"
  expect_error "native" io "$D" --engine native --size 64K --bs 4K
  expect_error "pattern" ai "$D" --pattern inference
  expect_error "smaller than one record" sweep "$D" --size 1M --record 16M
  expect_error "exclude each other" meta "$D" -F -D
  expect_error "not valid JSON\|not a t0fs bench result" report "$WORK/err.txt" -o "$WORK/r.html"
  [[ $(wc -l <"$WORK/err.txt") -le 2 ]] || fail "error output longer than a line or two"
  no_files_left
  ;;
sizes)
  # Every pattern's size is checked before the first one runs (random-sampling,
  # which fits, would run for 60 s first otherwise): nothing runs,
  # nothing is created, and the error names the size that fits them all.
  rc=0
  timeout 20 "$T0FS" bench ai --drop-caches fadvise "$D" --pattern all --size 64M --runtime 60s --json "$WORK/a.json" \
    >"$WORK/out.txt" 2>"$WORK/err.txt" || rc=$?
  [[ $rc -ne 0 && $rc -ne 124 ]] || fail "exit $rc (124: it ran the patterns)"
  grep -q "too small for --pattern all (.*sharded-training needs 2 GiB.*): the smallest valid size is --size 2G" \
    "$WORK/err.txt" || fail "unexpected message: $(cat "$WORK/err.txt")"
  [[ ! -s $WORK/out.txt && ! -e $WORK/a.json ]] || fail "a pattern ran: $(cat "$WORK/out.txt")"
  no_files_left
  # One pattern, one too-small size: the smallest valid one, as an argument.
  if "$T0FS" bench ai --drop-caches fadvise "$D" --pattern model-load --size 8M >/dev/null 2>"$WORK/err.txt"; then
    fail "model-load with 8M ran"
  fi
  grep -q "model-load: .*smallest valid size is --size 512M" "$WORK/err.txt" || fail "$(cat "$WORK/err.txt")"
  # With overrides the smallest valid size follows them, and then runs.
  small=(--pattern sharded-training --threads 2 --files 2 --bs 1M --buffered -q)
  if "$T0FS" bench ai --drop-caches fadvise "$D" "${small[@]}" --size 3M >/dev/null 2>"$WORK/err.txt"; then fail "3M ran"; fi
  grep -q "smallest valid size is --size 4M" "$WORK/err.txt" || fail "$(cat "$WORK/err.txt")"
  "$T0FS" bench ai --drop-caches fadvise "$D" "${small[@]}" --size 4M >/dev/null 2>"$WORK/err.txt" || fail "4M: $(cat "$WORK/err.txt")"
  no_files_left
  ;;
ai)
  for p in random-sampling sharded-training model-load checkpoint-save; do
    "$T0FS" bench ai --drop-caches fadvise "$D" --pattern $p --size 8M --threads 2 --files 2 --bs 256K --runtime 500ms \
      --buffered --json "$WORK/$p.json" -q >/dev/null || fail "ai $p"
    json "$WORK/$p.json" "r['kind']=='ai' and r['params']['pattern']=='$p' and r['runs'][0]['phases'][0]['last_done']['bytes']>0"
    no_files_left
  done
  # Size-based model load: 2 threads share one 8 MiB file exactly once.
  "$T0FS" bench ai --drop-caches fadvise "$D" --pattern model-load --size 8M --threads 2 --bs 1M --buffered \
    --json "$WORK/ml.json" -q >/dev/null
  json "$WORK/ml.json" "r['runs'][0]['phases'][0]['last_done']['bytes']==8*1024*1024"
  no_files_left
  ;;
sweep)
  "$T0FS" bench sweep --drop-caches fadvise "$D" --size 16M --record 1M --max-threads 4 --json "$WORK/s.json" \
    >"$WORK/out.txt" -q
  json "$WORK/s.json" "[c['threads'] for c in r['runs'][0]['extra']['curve']]==[1,2,4]"
  json "$WORK/s.json" "all(c['write_children_see']>0 and c['read_parent_sees']>0 for c in r['runs'][0]['extra']['curve'])"
  json "$WORK/s.json" "'peak_bw' in r['runs'][0]['extra']['write']['children_see']"
  # Without the stonewall every thread writes its whole file: 16 MiB per thread count.
  "$T0FS" bench sweep --drop-caches fadvise "$D" --size 16M --record 1M --threads 1,2 --no-stonewall \
    --json "$WORK/s2.json" -q >/dev/null
  json "$WORK/s2.json" "all(p['last_done']['bytes']==16*1024*1024 for p in r['runs'][0]['phases'])"
  grep -q "children see: peak" "$WORK/out.txt" || fail "no peak line"
  no_files_left
  ;;
meta)
  "$T0FS" bench meta "$D" --threads 2 --items 50 --write-bytes 3901 --json "$WORK/m.json" -q >/dev/null
  json "$WORK/m.json" "[p['name'] for p in r['runs'][0]['phases']]==['dir-create','dir-stat','dir-remove','file-create','dir-list','file-stat','file-read','file-rename','file-remove']"
  json "$WORK/m.json" "all(p['last_done']['ops']==100 for p in r['runs'][0]['phases'])"
  "$T0FS" bench meta "$D" --threads 2 --items 20 --shared-dir --files-only --neighbor \
    --json "$WORK/m2.json" -q >/dev/null
  json "$WORK/m2.json" "[p['name'] for p in r['runs'][0]['phases']]==['file-create','dir-list','file-stat','file-rename','file-remove']"
  json "$WORK/m2.json" "[p['last_done']['ops'] for p in r['runs'][0]['phases'] if p['name']=='dir-list']==[40]"
  "$T0FS" bench meta "$D" --items 5 --files-only --no-list --no-rename --csv "$WORK/m3.csv" -q >/dev/null
  ! grep -qE "dir-list|file-rename" "$WORK/m3.csv" || fail "--no-list/--no-rename ran the phases"
  grep -q "file-remove" "$WORK/m3.csv" || fail "no file-remove row in the CSV"
  no_files_left
  ;;
ec)
  # Every phase over the rows of --size, each rebuilt row checked (no verify error).
  "$T0FS" bench ec -k 4 -m 2 --unit 64K --size 2M --threads 2 --json "$WORK/e.json" -q >/dev/null
  json "$WORK/e.json" "[p['name'] for p in r['runs'][0]['phases']]==['encode','rebuild-1','rebuild-2']"
  json "$WORK/e.json" "all(p['last_done']['ops']==8 and p['last_done']['bytes']==2*1024*1024 and p['verify_errors']==0 for p in r['runs'][0]['phases'])"
  "$T0FS" bench ec -k 2 -m 1 --unit 64K --size 1M --json "$WORK/e1.json" -q >/dev/null
  json "$WORK/e1.json" "[p['name'] for p in r['runs'][0]['phases']]==['encode','rebuild-1']"
  # Bad input: one line on stderr, exit 1, no result file.
  for bad in "-k 0" "-k 30 -m 5" "--unit 100" "--size 1K" "--unit 1Q"; do
    if "$T0FS" bench ec $bad --json "$WORK/bad.json" -q >/dev/null 2>"$WORK/err.txt"; then fail "ec $bad accepted"; fi
    [[ $(wc -l <"$WORK/err.txt") -eq 1 ]] && grep -q "^t0fs bench: error: " "$WORK/err.txt" || fail "ec $bad: $(cat "$WORK/err.txt")"
    [[ ! -e "$WORK/bad.json" ]] || fail "ec $bad wrote a result"
  done
  ;;
report)
  "$T0FS" bench io --drop-caches fadvise "$D" --rw read --bs 64K --size 1M --repeat 2 --label baseline --json "$WORK/a.json" -q >/dev/null
  "$T0FS" bench io --drop-caches fadvise "$D" --rw read --bs 64K --size 1M --repeat 2 --label candidate --json "$WORK/b.json" -q >/dev/null
  "$T0FS" bench sweep --drop-caches fadvise "$D" --size 4M --record 1M --max-threads 2 --json "$WORK/s.json" -q >/dev/null
  "$T0FS" bench report "$WORK/a.json" "$WORK/b.json" "$WORK/s.json" -o "$WORK/r.html" >/dev/null
  ! grep -qE "https?://" "$WORK/r.html" || fail "report references the network"
  ! grep -qE "<script|<link|<img" "$WORK/r.html" || fail "report is not self-contained"
  python3 - "$WORK/r.html" "$WORK/a.json" <<'PY' || fail "report structure"
import json, sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()          # well-formed
svgs = [e for e in root.iter("svg")]
charts = [e for e in svgs if e.get("class") == "figure-chart"]
a = json.load(open(sys.argv[2]))
io_figures = {(s["phase"], s["name"]) for s in a["summary"]}
# one chart per io figure + 4 sweep figures (peaks; plateaus only when reached)
assert len(charts) >= len(io_figures) + 4, (len(charts), len(io_figures))
assert any(e.get("class") == "curve-chart" for e in svgs)
assert "Comparison against baseline" in open(sys.argv[1]).read()
PY
  no_files_left
  ;;
help)
  for sub in io ai sweep meta ec report; do
    "$T0FS" bench $sub --help >"$WORK/help.txt" || fail "$sub --help"
    grep -q "Usage" "$WORK/help.txt" || fail "$sub --help has no usage"
  done
  "$T0FS" bench io --help | grep -q -- "--bs TEXT=1M" || fail "defaults not shown"
  ;;
*) fail "unknown case" ;;
esac
echo "ok [$case_name]"
