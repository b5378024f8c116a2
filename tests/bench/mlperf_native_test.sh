#!/usr/bin/env bash
# `t0fs bench mlperf training run --engine native` against a real single-node
# cluster (tests/lib/cluster.sh): the Torch loader reads each batch's files
# together through libt0fs's BatchIo (SampleReader::ReadFiles), the TF loader
# its streams. Every sample is read once per epoch, byte counts match the
# files and a run through the mount (psync), and AU is reported.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
T0FS=${T0FS:-${2:-}}
export T0FS
source "$here/../lib/cluster.sh"

fail() { echo "FAIL: $*" >&2; exit 1; }
json() { python3 -c "import json,sys; r=json.load(open(sys.argv[1])); sys.exit(0 if ($2) else 1)" "$1" \
  || fail "$1: not ($2): $(head -c 600 "$1")"; }

cluster_start 1M
D="$MNT/data"
R="$CLUSTER_DIR/results"
mkdir -p "$D" "$R"
mlperf() { "$T0FS" bench mlperf "$@" --results-dir "$R" -q --drop-caches fadvise; }

# train WORKLOAD FILES EXTRA...: datagen through the mount, then a native run
# and a psync run through the mount; both must read every sample twice.
train() {
  local w=$1 n=$2 spf=${SPF:-1}; shift 2
  mlperf training datagen -w $w -g h100 --num-files $n --data-dir "$D" "$@" >"$CLUSTER_DIR/gen.txt" \
    || fail "datagen $w: $(cat "$CLUSTER_DIR/gen.txt")"
  local total
  total=$(python3 -c "import glob,os,sys; print(sum(os.path.getsize(p) for p in glob.glob(sys.argv[1])))" "$D/$w/train/*")
  local common=(training run -w $w -g h100 -n 2 --data-dir "$D" --num-files $n --epochs 2 --runs 1
                --warmup-runs 0 "$@")
  mlperf "${common[@]}" --engine native --meta "$META_ADDR" --secret-file "$CLUSTER_DIR/secret" \
    --iodepth 8 --json "$CLUSTER_DIR/native.json" >"$CLUSTER_DIR/native.txt" \
    || fail "native run $w: $(cat "$CLUSTER_DIR/native.txt")"
  grep -q "engine     native" "$CLUSTER_DIR/native.txt" || fail "$w: not the native engine: $(head -5 "$CLUSTER_DIR/native.txt")"
  grep -q "\[METRIC\] Training Accelerator Utilization" "$CLUSTER_DIR/native.txt" || fail "$w: no AU"
  local summary; summary=$(ls -t "$R"/training/$w/run/*/run1/summary.json | head -1)
  json "$summary" "len(r['metric']['train_au_percentage'])==2 and r['t0fs']['samples_read']==2*$n*$spf and r['t0fs']['bytes_read']==2*$total"
  cp "$summary" "$CLUSTER_DIR/native_summary.json"
  mlperf "${common[@]}" --engine psync --json "$CLUSTER_DIR/psync.json" >"$CLUSTER_DIR/psync.txt" \
    || fail "psync run $w: $(cat "$CLUSTER_DIR/psync.txt")"
  summary=$(ls -t "$R"/training/$w/run/*/run1/summary.json | head -1)
  json "$summary" "r['t0fs']['samples_read']==2*$n*$spf and r['t0fs']['bytes_read']==2*$total"
  log "$w: native and psync read all $n files ($((n * spf)) samples, $total bytes) per epoch; AU reported"
}

# unet3d (Torch loader): 16 files of 64 KiB (smaller than a transfer, so only
# reading a batch's files together puts several requests in flight), and one
# of a few chunks per file.
train unet3d 16 --record-length 65536 --record-length-stdev 0 --batch-size 4 --computation-time 0.001
rm -rf "${D:?}/unet3d"
train unet3d 4 --record-length $((3 << 20)) --record-length-stdev 0 --batch-size 2 --read-threads 0 --computation-time 0.001
rm -rf "${D:?}/unet3d"
# resnet50 (TF loader): interleaved streams through the native engine.
SPF=4 train resnet50 4 --record-length 65536 --record-length-stdev 0 --samples-per-file 4 --batch-size 4 --computation-time 0.001
fsck_clean
log "PASS"
