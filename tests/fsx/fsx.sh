#!/usr/bin/env bash
# t0fs_fsx (README.md here) in its four modes, one file per mode in a
# directory of its own:
#   fsx.sh local        a temp directory on the local disk: proves the model
#   fsx.sh single       a single-node cluster, PASSTHROUGH=on|off (tests/lib/passthrough.sh)
#   fsx.sh replicated   three data nodes, the mount on node 1, files in a replicas=2 directory
#   fsx.sh remote       two data nodes, the mount on node 1, every chunk's one replica on
#                       node 2: every read and write over TCP (the remote read path)
#
#   FSX            the t0fs_fsx binary (set by ctest)
#   FSX_SEED       seed of every mode (default: random, printed)
#   FSX_OPS        ops per mode (default FSX_DEFAULT_OPS, else 100000; local 20000)
#   FSX_DEFAULT_OPS the default of a case (ctest sets 50000 for no_passthrough, replicated)
#   FSX_MODES      modes to run (default "buffered nommap direct uring")
#   FSX_ARGS       more t0fs_fsx options (e.g. "--max-size 1048576")
#   FSX_PARALLEL   1 (default): the modes run at the same time; 0: one after the other
#   FSX_CHUNK      chunk size of the fsx directories on a cluster without
#                  passthrough (objective chunk-size; default 64K, so files
#                  cross chunk boundaries; "" keeps the cluster's 1M)
# Every mode runs even after one failed; the test fails if any did, and
# prints each failure with its replay command.
FSX=${FSX:?set FSX to the t0fs_fsx binary}
case_name=${1:?usage: fsx.sh local|single|replicated|remote}
MODES=${FSX_MODES:-buffered nommap direct uring}
SEED=${FSX_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000000))}
FSX_CHUNK=${FSX_CHUNK-64K}

# stop_runs: ends the t0fs_fsx runs still going (an interrupted test).
declare -a pids=()
stop_runs() {
  local pid
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
}

case "$case_name" in
local)
  set -euo pipefail
  OPS=${FSX_OPS:-20000}
  ROOT=$(mktemp -d /tmp/t0fs-fsx.XXXXXX)
  trap 'stop_runs; rm -rf "$ROOT"' EXIT
  trap 'exit 130' INT TERM
  log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
  ;;
single)
  source "$(dirname "$0")/../lib/cluster.sh"
  source "$(dirname "$0")/../lib/passthrough.sh"
  OPS=${FSX_OPS:-${FSX_DEFAULT_OPS:-100000}}
  pt_cluster_start
  trap 'rc=$?; set +e; stop_runs; (exit $rc); cluster_stop' EXIT
  ROOT=$MNT
  ;;
replicated | remote)
  # replicated: 3 nodes, replicas=2; remote: 2 nodes, the one replica on node 2.
  source "$(dirname "$0")/../lib/cluster.sh"
  OPS=${FSX_OPS:-${FSX_DEFAULT_OPS:-100000}}
  nodes=3 dir=r2 objective="replicas=2"
  [[ "$case_name" == remote ]] && nodes=2 dir=remote objective="replicas=1 placement=spread nodes=2"
  multi_start "$nodes" 1M
  trap 'rc=$?; set +e; stop_runs; (exit $rc); cluster_stop' EXIT
  MNT="$CLUSTER_DIR/mnt"
  mkdir -p "$MNT"
  mount_start --node-id 1
  mkdir "$MNT/$dir"
  # shellcheck disable=SC2086 # a list of settings
  admin objective set "t0fs:/$dir" $objective >/dev/null
  ROOT=$MNT/$dir
  ;;
*)
  echo "usage: fsx.sh local|single|replicated|remote" >&2
  exit 2
  ;;
esac

log "fsx $case_name: seed $SEED, $OPS ops per mode, modes: $MODES${PASSTHROUGH:+, PASSTHROUGH=$PASSTHROUGH}"
log "replay: FSX_SEED=$SEED FSX_OPS=$OPS${PASSTHROUGH:+ PASSTHROUGH=$PASSTHROUGH} bash $0 $case_name"
OUT=$ROOT
[[ "$case_name" == local ]] || OUT=$CLUSTER_DIR

for mode in $MODES; do
  mkdir "$ROOT/fsx-$mode"
  # Small chunks where the file is not meant to be one passthrough chunk.
  if [[ "$case_name" != local && "${PASSTHROUGH:-on}-$case_name" != on-single && -n "$FSX_CHUNK" ]]; then
    admin objective set "t0fs:${ROOT#"$MNT"}/fsx-$mode" chunk-size="$FSX_CHUNK" >/dev/null
  fi
done
# The modes run at the same time (FSX_PARALLEL=0: one after the other). Each
# step waits on the file system far more than on the CPU, so this halves the
# wall time; a replay of one mode runs it alone (FSX_MODES=...).
start=$SECONDS
declare -A rc_of=() pid_of=()
for mode in $MODES; do
  # shellcheck disable=SC2086 # FSX_ARGS is a list of options
  "$FSX" "$ROOT/fsx-$mode/file" --seed "$SEED" --mode "$mode" --ops "$OPS" --quiet ${FSX_ARGS:-} \
    >"$OUT/fsx-$mode.out" 2>&1 &
  pid_of[$mode]=$!
  pids+=($!)
  if [[ "${FSX_PARALLEL:-1}" != 1 ]]; then
    rc_of[$mode]=0
    wait "${pid_of[$mode]}" || rc_of[$mode]=$?
  fi
done
failed=()
for mode in $MODES; do
  if [[ -z "${rc_of[$mode]:-}" ]]; then
    rc_of[$mode]=0
    wait "${pid_of[$mode]}" || rc_of[$mode]=$?
  fi
  if ((rc_of[$mode] == 0)); then
    log "fsx $mode: $(tail -n 1 "$OUT/fsx-$mode.out")"
  else
    log "fsx $mode: FAILED (exit ${rc_of[$mode]}):"
    cat "$OUT/fsx-$mode.out" >&2
    failed+=("$mode")
  fi
done
pids=()
log "fsx $case_name: the modes took $((SECONDS - start)) s"

if [[ "$case_name" == single ]]; then
  pt_check_used
fi
if [[ "$case_name" != local ]] && ((${#failed[@]} == 0)); then
  fsck_clean
fi
((${#failed[@]} == 0)) || { log "FAIL: fsx $case_name: modes ${failed[*]} failed (seed $SEED)"; exit 1; }
log "PASS: fsx $case_name"
