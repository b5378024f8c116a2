# Shared by the tests of `t0fs up` and the admin commands. Source it: it
# makes a work directory and, on any exit, stops every `t0fs up` started with
# up_start (and its children, by pid), unmounts whatever is mounted below the
# work directory (test mounts only: dead, fake or left behind by a failure),
# calls CLI_CLEANUP_HOOK if set, and removes the directory. Do not replace
# its EXIT trap: set CLI_CLEANUP_HOOK for more cleanup.
#
#   WORK             the work directory
#   up_start NAME ARGS...   `t0fs up ARGS` as a terminal runs it: its own
#                    process group (setsid); output in $WORK/NAME.out; sets UP_PID
#   up_wait NAME     until NAME.out says "mounted at"; records the children
#   up_stop PID      Ctrl-C as a terminal sends it (SIGINT to the whole
#                    process group), then waits for the exit; returns its code
#   fake_mount DIR SOURCE   a FUSE mount of type fuse.t0fs at DIR whose
#                    "daemon" never answers (a hung mount); FAKE_FD is its
#                    /dev/fuse descriptor: closing it makes the mount dead
set -euo pipefail
T0FS=${T0FS:?set T0FS to the t0fs binary}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/t0fs-cli.XXXXXX")
declare -a UP_PIDS=() CHILD_PIDS=() FAKE_FDS=()
UP_PID=""
CLI_CLEANUP_HOOK=""  # a function cli_cleanup calls after stopping every `up`

# free_port, wait_until (and log, fail, redefined below: timestamps in ms,
# the daemons' output on failure).
source "$(dirname "${BASH_SOURCE[0]}")/../lib/util.sh"
log() { printf '[%s] %s\n' "$(date +%T.%N | cut -c1-12)" "$*" >&2; }
fail() {
  log "FAIL: $*"
  local f
  for f in "$WORK"/*.out; do [[ -f "$f" ]] && { log "--- ${f##*/}"; tail -n 30 "$f" >&2; }; done
  for f in "$WORK"/*/logs/*.log; do [[ -f "$f" ]] && { log "--- $f"; tail -n 15 "$f" >&2; }; done
  exit 1
}


is_mounted() { grep -q " $1 fuse" /proc/mounts; }
alive() { kill -0 "$1" 2>/dev/null; }

up_start() {
  local name=$1
  shift
  setsid "$T0FS" up "$@" >"$WORK/$name.out" 2>&1 &
  UP_PID=$!
  UP_PIDS+=("$UP_PID")
}

up_wait() {
  wait_until 60 "$1: mounted" grep -q "mounted at" "$WORK/$1.out"
  CHILD_PIDS+=($(pgrep -P "$UP_PID" || true))
}

# up_stop PID [SIGNAL]: the signal (default INT) to the process group of
# `up`, as a terminal's Ctrl-C; waits (bounded) for `up` to exit.
up_stop() {
  local pid=$1 sig=${2:-INT} deadline=$((SECONDS + 20)) rc=0
  kill -"$sig" -- "-$pid" 2>/dev/null || true
  while alive "$pid" && ((SECONDS < deadline)); do sleep 0.05; done
  alive "$pid" && fail "up (pid $pid) did not exit after SIG$sig"
  wait "$pid" || rc=$?
  return $rc
}

fake_mount() {
  local dir=$1 source=$2 fd
  mkdir -p "$dir"
  exec {fd}<>/dev/fuse
  mount -i -t fuse.t0fs -o "fd=$fd,rootmode=40000,user_id=0,group_id=0" "$source" "$dir"
  FAKE_FD=$fd
  FAKE_FDS+=("$fd")
}

cli_cleanup() {
  local rc=$?
  set +eu
  local pid m fd
  for pid in "${UP_PIDS[@]}"; do alive "$pid" && kill -INT "$pid"; done
  for pid in "${UP_PIDS[@]}"; do
    for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
  done
  for pid in "${UP_PIDS[@]}" "${CHILD_PIDS[@]}"; do alive "$pid" && kill -9 "$pid"; done
  for fd in "${FAKE_FDS[@]}"; do eval "exec $fd>&-"; done
  for m in $(awk -v w="$WORK/" 'index($5, w) == 1 {print $5}' /proc/self/mountinfo | sort -r); do
    umount -l "$m"
  done
  # What a script started besides (e.g. pg_stop_all), once the clusters are down.
  [[ -n "$CLI_CLEANUP_HOOK" ]] && "$CLI_CLEANUP_HOOK"
  rm -rf "$WORK"
  exit $rc
}
trap cli_cleanup EXIT
trap 'exit 130' INT TERM
