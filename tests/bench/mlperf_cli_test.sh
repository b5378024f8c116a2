#!/usr/bin/env bash
# Integration tests of `t0fs bench mlperf`: mlperf_cli_test.sh CASE /path/to/t0fs
# Scaled-down datasets on a temporary directory; never asserts a timing
# (AU checks use margins of tens of points: compute 25x the I/O, or reads
# throttled by the test hook to many times the compute).
set -euo pipefail
case_name=$1
T0FS=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/t0fs-mlperf-it.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
D=$WORK/data
R=$WORK/results
mkdir -p "$D"

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" \
         || fail "$1: expected $2"; }
# fadvise only: a test must not drop the whole machine's page cache (drop_caches).
mlperf() { "$T0FS" bench mlperf "$@" --results-dir "$R" -q --drop-caches fadvise; }
# Sum of the sizes of the files matching a glob.
bytes_of() { python3 -c "import glob,os,sys; print(sum(os.path.getsize(p) for p in glob.glob(sys.argv[1])))" "$1"; }

# train WORKLOAD ACCEL FILES EXT [extra datagen/run args...]: datagen, checks names, then a
# fast run (compute dwarfs I/O) and a throttled run (test hook).
train() {
  local w=$1 g=$2 n=$3 ext=$4; shift 4
  mlperf training datagen -w $w -g $g --num-files $n --data-dir "$D" "$@" >"$WORK/gen.txt" \
    || fail "datagen $w: $(cat "$WORK/gen.txt")"
  local count; count=$(ls "$D/$w/train" | wc -l)
  [[ $count -eq $n ]] || fail "$w: $count files, wanted $n"
  local last=$((n - 1)) pad=${#n}
  [[ -f $D/$w/train/$(printf "img_%0${pad}d_of_%d.%s" 0 $n $ext) ]] || fail "$w: first name: $(ls "$D/$w/train" | head -2)"
  [[ -f $D/$w/train/$(printf "img_%0${pad}d_of_%d.%s" $last $n $ext) ]] || fail "$w: last name"
  [[ -d $D/$w/valid ]] || fail "$w: no valid/"
  local total; total=$(bytes_of "$D/$w/train/*.$ext")
  mlperf training run -w $w -g $g -n 2 --data-dir "$D" --num-files $n --epochs 2 --runs 1 \
    --warmup-runs 0 --json "$WORK/fast.json" "$@" >"$WORK/fast.txt" || fail "run $w: $(cat "$WORK/fast.txt")"
  grep -q "epoch 2/2" "$WORK/fast.txt" || fail "$w: no per-epoch lines"
  grep -q "\[METRIC\] Training Accelerator Utilization" "$WORK/fast.txt" || fail "$w: no METRIC block"
  grep -q "page cache dropped" "$WORK/fast.txt" || fail "$w: no cache note"
  json "$WORK/fast.json" "r['kind']=='mlperf-training' and len(r['runs'])==1"
  local summary; summary=$(ls "$R"/training/$w/run/*/run1/summary.json | tail -1)
  json "$summary" "r['num_accelerators']==2 and r['num_files_train']==$n and len(r['metric']['train_au_percentage'])==2 and r['metric']['train_au_meet_expectation'] in ('success','fail')"
  json "$summary" "all(k in r for k in ('start','end','num_hosts','hostname','num_samples_per_file','host_memory_GB','epochs','data_size_per_host_GB'))"
  echo "$total"
}

fig() {  # fig FILE NAME -> value of figure NAME of run 0 phase 0
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print([f['value'] for f in r['runs'][0]['phases'][0]['figures'] if f['name']==sys.argv[2]][0])" "$1" "$2"
}

case $case_name in
datasize)
  out=$("$T0FS" bench mlperf training datasize -w unet3d -g h100 -n 8 --client-host-memory-gb 128 \
        --num-client-hosts 2)
  grep -q "files by memory  *9375" <<<"$out" || fail "memory: $out"
  grep -q "files by steps  *28000" <<<"$out" || fail "steps: $out"
  grep -q "required  *28000" <<<"$out" || fail "required: $out"
  grep -q "training datagen --workload unet3d --accelerator h100 --num-files 28000 --subfolders 3" <<<"$out" \
    || fail "no datagen command: $out"
  out=$("$T0FS" bench mlperf training datasize -w resnet50 -g a100 -n 16 --client-host-memory-gb 64 --edition 2.0)
  # 500 x 16 x 400 // 1251 = 2557 files by steps; 5 x 64 GiB / (1251 x 114660.07 B) = 2395 by memory.
  grep -q "files by steps  *2557" <<<"$out" || fail "resnet50 steps: $out"
  grep -q "required  *2557" <<<"$out" || fail "resnet50: $out"
  ;;
unet3d)
  # 12 files of ~256 KiB (DLIO's size draw, stdev 64 KiB), npz.
  total=$(train unet3d h100 12 npz --record-length 262144 --record-length-stdev 65536 --batch-size 2 \
          --computation-time 0.05 | tail -1)
  # 2 ranks x 3 steps x batch 2 = all 12 files, twice.
  json "$WORK/fast.json" "r['runs'][0]['phases'][0]['last_done']['bytes']==2*$total and r['runs'][0]['phases'][0]['last_done']['ops']==24"
  au=$(fig "$WORK/fast.json" x_au)
  python3 -c "import sys; sys.exit(0 if $au > 80 else 1)" || fail "AU $au with compute >> I/O"
  # npz content: a zip with x.npy and y.npy, CRCs valid.
  python3 - "$D"/unet3d/train/img_00_of_12.npz <<'PY' || fail "npz structure"
import sys, zipfile
z = zipfile.ZipFile(sys.argv[1]); assert z.namelist() == ["x.npy", "y.npy"], z.namelist()
assert z.testzip() is None
x = z.open("x.npy").read(200); assert x.startswith(b"\x93NUMPY") and b"'descr': '|u1'" in x
PY
  # Throttled reads (test hook): AU far below 90 %, run reported as failing. One fetcher
  # per rank, so the prefetch cannot hide the throttle behind the excluded first step.
  mlperf training run -w unet3d -g h100 -n 2 --data-dir "$D" --num-files 12 --epochs 2 --runs 1 \
    --warmup-runs 0 --record-length 262144 --batch-size 2 --computation-time 0.002 --read-threads 1 \
    --test-read-delay 40ms --json "$WORK/slow.json" >"$WORK/slow.txt"
  au=$(fig "$WORK/slow.json" x_au)
  python3 -c "import sys; sys.exit(0 if $au < 50 else 1)" || fail "AU $au with throttled reads"
  grep -q "train_au_meet_expectation: fail" "$WORK/slow.txt" || fail "no fail verdict"
  grep -q "TEST HOOK" "$WORK/slow.txt" || fail "test hook not announced"
  # Editions and shardings run; --runs gives per-run lines, mean and CV.
  mlperf training run -w unet3d -g h100 -n 3 --data-dir "$D" --num-files 12 --epochs 1 --runs 2 \
    --warmup-runs 1 --record-length 262144 --batch-size 2 --computation-time 0.001 --edition 1.0 \
    --engine io_uring --iodepth 4 --transfer-size 64K --json "$WORK/e1.json" >"$WORK/e1.txt"
  json "$WORK/e1.json" "len(r['runs'])==2 and r['params']['sharding']=='v1' and r['params']['edition']=='1.0'"
  grep -q "CV      AU" "$WORK/e1.txt" || fail "no CV line"
  ls "$R"/training/unet3d/run/*/warmup1/summary.json >/dev/null || fail "no warm-up leaf"
  ;;
resnet50)
  total=$(train resnet50 a100 6 tfrecord --record-length 10000 --samples-per-file 20 --batch-size 10 \
          --computation-time 0.02 --edition 2.0 | tail -1)
  [[ $(ls "$D/resnet50/index/train" | wc -l) -eq 6 ]] || fail "index files"
  [[ $(wc -l <"$D/resnet50/index/train/img_0_of_6.tfrecord.idx") -eq 20 ]] || fail "index lines"
  # 2 ranks: files 0,2,4 and 1,3,5 = 60 records each, 6 steps of 10 per epoch.
  json "$WORK/fast.json" "r['runs'][0]['phases'][0]['last_done']['ops']>=2*2*6*10"
  ;;
cosmoflow)
  total=$(train cosmoflow h100 8 tfrecord --record-length 40000 --record-length-stdev 2000 \
          --computation-time 0.02 --edition 2.0 | tail -1)
  json "$WORK/fast.json" "r['runs'][0]['phases'][0]['last_done']['bytes']>0"
  ;;
retinanet)
  total=$(train retinanet b200 8 jpeg --record-length 4096 --batch-size 2 --computation-time 0.02 | tail -1)
  [[ $total -eq $((8 * 4096)) ]] || fail "raw files: $total bytes"   # 64 x 64 random bytes each
  json "$WORK/fast.json" "r['runs'][0]['phases'][0]['last_done']['bytes']==2*$total"
  ;;
search)
  mlperf training datagen -w unet3d -g h100 --num-files 8 --data-dir "$D" --record-length 65536 \
    --record-length-stdev 0 >/dev/null
  mlperf training search -w unet3d -g h100 --data-dir "$D" --num-files 8 --record-length 65536 \
    --batch-size 1 --epochs 1 --computation-time 0.01 --max 4 --json "$WORK/s.json" >"$WORK/s.txt"
  grep -q "probe    1 accelerators" "$WORK/s.txt" || fail "no probe lines: $(cat "$WORK/s.txt")"
  grep -q "^result: " "$WORK/s.txt" || fail "no result line"
  json "$WORK/s.json" "r['kind']=='mlperf-training-search' and 0 <= [f for f in r['runs'][0]['phases'][0]['figures'] if f['name']=='x_max_accelerators'][0]['value'] <= 4"
  # 8 files in batches of 4 give 2 accelerators 1 step per epoch: nothing to measure, not a failure.
  mlperf training search -w unet3d -g h100 --data-dir "$D" --num-files 8 --record-length 65536 \
    --batch-size 4 --epochs 1 --computation-time 0.01 --min 2 --max 2 >"$WORK/s2.txt"
  grep -q "probe    2 accelerators: not run: the dataset gives 1 step" "$WORK/s2.txt" ||
    fail "a probe with 1 step per epoch ran: $(cat "$WORK/s2.txt")"
  ;;
checkpoint)
  mlperf checkpointing run --model llama3-8b --checkpoint-folder "$D" --scale 0.000001 \
    --time-between 0 --num-checkpoints-write 2 --num-checkpoints-read 2 --keep \
    --json "$WORK/c.json" >"$WORK/c.txt" || fail "checkpoint: $(cat "$WORK/c.txt")"
  [[ $(ls "$D/llama3-8b" | tr '\n' ' ') == "global_epoch1_step1 global_epoch1_step2 " ]] || fail "dirs: $(ls "$D/llama3-8b")"
  [[ $(ls "$D/llama3-8b/global_epoch1_step1" | wc -l) -eq 16 ]] || fail "files per checkpoint"
  [[ -f $D/llama3-8b/global_epoch1_step2/zero_pp_rank_7_mp_rank_0_optim_states.pt ]] || fail "optim name"
  [[ -f $D/llama3-8b/global_epoch1_step2/zero_pp_rank_0_mp_rank_0_model_states.pt ]] || fail "model name"
  written=$(bytes_of "$D/llama3-8b/global_epoch1_step1/*.pt")
  json "$WORK/c.json" "[p['name'] for p in r['runs'][0]['phases']]==['write','read'] and r['runs'][0]['phases'][0]['last_done']['bytes']==2*$written and r['runs'][0]['phases'][1]['last_done']['bytes']==2*$written"
  json "$WORK/c.json" "r['params']['full_bytes']==112425623552"
  grep -q "SCALED" "$WORK/c.txt" || fail "scaling not announced"
  grep -q "client-cache advisory" "$WORK/c.txt" || fail "no advisory"
  grep -q "rank-0 definition" "$WORK/c.txt" && grep -q "slowest-rank definition" "$WORK/c.txt" || fail "metrics"
  summary=$(ls "$R"/checkpointing/llama3-8b/*/run1/summary.json | tail -1)
  json "$summary" "'save_checkpoint_io_mean_GB_per_second' in r['metric'] and 'load_checkpoint_duration_mean_seconds' in r['metric']"
  # 405B subset layout: 8 ranks of stage 0 write layers 0..4 + optimizer each.
  rm -rf "$D/llama3-8b"
  mlperf checkpointing run --model llama3-405b --ranks 8 --subset --checkpoint-folder "$D" \
    --scale 0.0000001 --time-between 0 --num-checkpoints-write 1 --num-checkpoints-read 1 >"$WORK/c2.txt" \
    || fail "405b subset: $(cat "$WORK/c2.txt")"
  [[ ! -e $D/llama3-405b ]] || fail "files not removed"
  ;;
kvcache)
  # Option 1 (no memory tier): every prefill goes to storage.
  mlperf kvcache run --option 1 --cache-dir "$D" --users 6 --duration 1500ms --trials 2 --scale 0.0001 \
    --json "$WORK/k.json" >"$WORK/k.txt" || fail "kvcache: $(cat "$WORK/k.txt")"
  grep -q "\[METRIC\] option 1" "$WORK/k.txt" || fail "no metric line"
  json "$WORK/k.json" "[p['name'] for p in r['runs'][0]['phases']]==['option1 read','option1 write']"
  json "$WORK/k.json" "r['runs'][0]['phases'][1]['last_done']['bytes']>0"
  summary=$(ls "$R"/kvcache/run/*/kvcache_run_summary.json | tail -1)
  json "$summary" "len(r['option1']['trials'])==2 and 'storage_throughput_tokens_per_sec' in r['option1'] and 'avg_throughput_tokens_per_sec' in r['option1']"
  [[ -z "$(ls -A "$D")" ]] || fail "cache files left: $(ls -A "$D")"
  ;;
report)
  mlperf training datagen -w unet3d -g h100 --num-files 4 --data-dir "$D" --record-length 65536 \
    --record-length-stdev 0 >/dev/null
  mlperf training run -w unet3d -g h100 -n 1 --data-dir "$D" --num-files 4 --record-length 65536 \
    --batch-size 1 --epochs 1 --computation-time 0.001 --runs 2 --warmup-runs 0 --json "$WORK/t.json" >/dev/null
  mlperf checkpointing run --model llama3-8b --checkpoint-folder "$D" --scale 0.000001 --time-between 0 \
    --num-checkpoints-write 1 --num-checkpoints-read 1 --json "$WORK/c.json" >/dev/null
  "$T0FS" bench report "$WORK/t.json" "$WORK/c.json" -o "$WORK/r.html" >/dev/null || fail "report"
  grep -q "Accelerator utilisation" "$WORK/r.html" || fail "AU not in the report"
  ;;
errors)
  expect_error() {
    local pattern=$1; shift
    if "$T0FS" bench mlperf "$@" >"$WORK/out.txt" 2>"$WORK/err.txt"; then fail "'$*' succeeded"; fi
    grep -qi -- "$pattern" "$WORK/err.txt" || fail "'$*': wanted '$pattern', got: $(cat "$WORK/err.txt")"
    ! grep -qiE "terminate called|Aborted|core dumped" "$WORK/err.txt" || fail "'$*' crashed"
    [[ $(wc -l <"$WORK/err.txt") -le 2 ]] || fail "'$*': long error output"
  }
  expect_error "no MLPerf parameters for resnet50 on b200" training datasize -w resnet50 -g b200
  expect_error "run datagen first" training run -w unet3d -g h100 --data-dir "$D" --results-dir "$WORK/r"
  expect_error "multiple of TP" checkpointing run --model llama3-70b --ranks 12 --checkpoint-folder "$D"
  expect_error "--scale" checkpointing run --model llama3-8b --scale 2 --checkpoint-folder "$D"
  expect_error "native" training run -w unet3d -g h100 --data-dir "$D" --engine native
  expect_error "option" kvcache run --option 4 --cache-dir "$D"
  ;;
help)
  for sub in "mlperf" "mlperf training" "mlperf training datasize" "mlperf training datagen" \
             "mlperf training run" "mlperf training search" "mlperf checkpointing run" "mlperf kvcache run"; do
    "$T0FS" bench $sub --help >"$WORK/help.txt" || fail "$sub --help"
    grep -q "Usage" "$WORK/help.txt" || fail "$sub --help has no usage"
  done
  "$T0FS" bench mlperf training run --help | grep -q -- "--test-read-delay" || fail "test hook not documented"
  ;;
*) fail "unknown case" ;;
esac
echo "ok [$case_name]"
