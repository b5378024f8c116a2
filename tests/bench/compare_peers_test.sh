#!/usr/bin/env bash
# Smoke test of bench/compare-peers (a benchmark; nothing here checks a
# rate): a tiny run prints a ratio line for every phase and leaves no mount,
# no process and no directory behind. Skipped (77) without root or MooseFS.
#   compare_peers_test.sh /path/to/t0fs
set -euo pipefail
T0FS=$1
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }
[[ $(id -u) -eq 0 ]] || { echo "SKIP: needs root" >&2; exit 77; }
for tool in mfsmaster mfschunkserver mfsmount; do
  command -v "$tool" >/dev/null || { echo "SKIP: MooseFS not installed (no $tool)" >&2; exit 77; }
done
out=$(mktemp "${TMPDIR:-/tmp}/compare-peers-test.XXXXXX")
trap 'rm -f "$out"' EXIT
"$here/../../bench/compare-peers" --t0fs "$T0FS" --threads 2 --items 50 --reps 1 \
  --list-items 200 >"$out" 2>&1 || { cat "$out" >&2; fail "compare-peers exited non-zero"; }
cat "$out"
for phase in dir-create dir-stat dir-remove file-create dir-list file-stat file-rename file-remove \
  "ls -l shared"; do
  # name, three cells "median (min..max)", then the two ratios
  grep -qE "^$phase +.*\) +[0-9]+\.[0-9]+ +[0-9]+\.[0-9]+$" "$out" || fail "no ratio line for $phase"
done
work=$(sed -n 's/.*work directory: //p' "$out")
[[ -n "$work" ]] || fail "no work directory in the output"
# Stopped processes may take a moment to be reaped.
for _ in $(seq 50); do
  pgrep -f -- "$work" >/dev/null || break
  sleep 0.1
done
if pgrep -f -- "$work" >/dev/null; then fail "processes left: $(pgrep -af -- "$work")"; fi
! grep -qF " $work" /proc/mounts || fail "mounts left: $(grep -F " $work" /proc/mounts)"
[[ ! -e "$work" ]] || fail "$work left behind"
echo "compare-peers smoke test: ok"
