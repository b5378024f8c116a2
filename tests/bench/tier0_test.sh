#!/usr/bin/env bash
# Integration tests of `t0fs bench tier0-vs-networked`: tier0_test.sh CASE /path/to/t0fs
#   netns   a reduced run (--quick: 2 GPU nodes, 1 storage node, 1gbit) in namespaces
#   sigint  SIGINT in the middle of a run: exit 130, nothing left behind
#   hosts   --hosts against a loopback cluster (no namespaces) with a local mount
#   errors  bad input: one line, non-zero exit, nothing created
# Asserts structure only, never a timing: both placements exercised and
# proven by t0fs layout, every figure numeric and > 0, data verified, and no
# namespace, mount, process or temp dir of the run left. Exit 77 (skip) when
# not root or network namespaces are unusable.
set -euo pipefail
case_name=$1
export T0FS=$2
WORK=$(mktemp -d "${TMPDIR:-/tmp}/t0fs-tier0-it.XXXXXX")
RUN_PID=""

fail() { echo "FAIL [$case_name]: $*" >&2; exit 1; }
skip() { echo "SKIP [$case_name]: $*" >&2; exit 77; }

# leftovers PID: what a run with that pid would have left (empty when clean).
leftovers() {
  local pid=$1
  ip netns list 2>/dev/null | awk '{print $1}' | grep "^t0x-$pid-" || true
  grep " /tmp/t0x-$pid-" /proc/mounts || true
  ps -eo pid=,args= | grep "/tmp/t0x-$pid-" | grep -v grep || true
  ls -d /tmp/t0x-"$pid"-* 2>/dev/null || true
}
assert_clean() {
  local left; left=$(leftovers "$1")
  [[ -z "$left" ]] || fail "left behind by run $1: $left"
}
cleanup() {
  local rc=$?
  set +eu
  if [[ -n "$RUN_PID" ]] && kill -0 "$RUN_PID" 2>/dev/null; then
    kill -INT "$RUN_PID"; wait "$RUN_PID" 2>/dev/null
  fi
  rm -rf "$WORK"
  return $rc
}

# check_results DIR GPU_NODES STORAGE_IDS(comma) MODE: the structure of a finished run.
check_results() {
  python3 - "$@" <<'PY' || fail "result structure: see above"
import json, math, os, sys
out, gpus, storage, mode = sys.argv[1], int(sys.argv[2]), [int(x) for x in sys.argv[3].split(",")], sys.argv[4]
r = json.load(open(os.path.join(out, "tier0-vs-networked.json")))
def need(cond, what):
    if not cond:
        print("FAIL:", what, file=sys.stderr); sys.exit(1)
need(r["format"] == "t0fs-tier0-vs-networked" and r["mode"] == mode, "format/mode")
# Both placements, proven by t0fs layout: Tier 0 data on the reading GPU node, networked on storage.
proofs = r["placement_proofs"]
for p in proofs:
    need(p["ok"], f"placement {p}")
    if p["placement"] == "tier0":
        need(p["replica_nodes"] == [p["gpu_node"]], f"tier0 replicas {p}")
    else:
        need(set(p["replica_nodes"]) <= set(storage) and p["replica_nodes"], f"networked replicas {p}")
need(sorted((p["placement"], p["gpu_node"]) for p in proofs) ==
     sorted((pl, g["gpu_node"]) for pl in ("networked", "tier0") for g in proofs if g["placement"] == "tier0"),
     "a proof per GPU node and placement")
need(len([p for p in proofs if p["placement"] == "tier0"]) == gpus, "tier0 proofs per GPU node")
# Every test has a numeric figure > 0 on both placements.
tests = [row["test"] for row in r["rows"]]
for want in ("Seq read 1 MiB, 1 client", "Random read 4 KiB, 1 client", "Seq write 1 MiB, 1 client",
             "Write latency 1 MiB (mean), 1 client", "Random sampling 128 KiB", "Sharded training 1 MiB",
             "Model load", "Checkpoint save", "MLPerf 3D U-Net H100: throughput at that count"):
    need(want in tests, f"row {want!r} missing from {tests}")
if gpus > 1:
    need(f"Seq read 1 MiB, {gpus} clients" in tests, "all-clients row")
for row in r["rows"]:
    for pl in ("tier0", "networked"):
        v = row[pl]["value"]
        need(isinstance(v, (int, float)) and math.isfinite(v) and v > 0, f"{row['test']} {pl} = {v}")
        cpu = row[pl]["client_cpu_pct"]
        # (0 is a figure: reads the kernel serves through passthrough may
        # cost the mount no CPU in a short phase)
        need(isinstance(cpu, (int, float)) and math.isfinite(cpu) and cpu >= 0,
             f"{row['test']} {pl} client CPU = {cpu}")
        need(row[pl]["limit_estimate"].split()[0] in ("disk", "link", "CPU"), "limit estimate")
# Scaling curves: 1..N clients.
for c in r["curves"]:
    need([p["clients"] for p in c["points"]] == list(range(1, gpus + 1)), f"curve {c['name']}")
    need(all(p["tier0"] > 0 and p["networked"] > 0 for p in c["points"]), f"curve values {c['name']}")
# Data read back and verified on every node and placement.
need(len(r["verified"]) == 2 * gpus and all(v["bytes"] > 0 and v["errors"] == 0 for v in r["verified"]),
     f"verified {r['verified']}")
need(r["facts"]["disk_read_bytes_per_s"] > 0 and r["facts"]["cores"] > 0, "facts")
# Outputs: the table, the report's inputs (bench result sets), the HTML page, raw results.
for name in ("table.txt", "tier0.json", "networked.json", "report.html"):
    need(os.path.getsize(os.path.join(out, name)) > 0, name)
for name in ("tier0.json", "networked.json"):
    s = json.load(open(os.path.join(out, name)))
    need(s["format"] == "t0fs-bench-result" and len(s["runs"][0]["phases"]) >= len(r["rows"]), name)
html = open(os.path.join(out, "report.html")).read()
need("Tier 0" in html and "networked" in html, "report mentions both sets")
need(len(os.listdir(os.path.join(out, "raw"))) > 10, "raw results")
PY
  grep -q "O_DIRECT" "$1/table.txt" || fail "table does not say the tests use O_DIRECT"
}

# Every case needs root and usable namespaces (hosts too: it needs a
# root-only cleanup check and runs with the same binary).
netns_ok() {
  ((EUID == 0)) || return 1
  local probe="t0x-probe-$$"
  ip netns add "$probe" 2>/dev/null || return 1
  local ok=0
  ip -n "$probe" link add t0a type veth peer name t0b 2>/dev/null &&
    ip -n "$probe" link add br0 type bridge 2>/dev/null || ok=1
  ip netns del "$probe"
  return $ok
}

case $case_name in
errors)
  trap cleanup EXIT
  expect_error() { # expect_error TEXT ARGS...: fails with one line naming TEXT
    local text=$1; shift
    if "$T0FS" bench tier0-vs-networked "$@" >"$WORK/out" 2>"$WORK/err"; then fail "accepted: $*"; fi
    grep -q -- "$text" "$WORK/err" || fail "error for '$*' does not mention '$text': $(cat "$WORK/err")"
    [[ $(wc -l <"$WORK/err") -eq 1 ]] || fail "more than one error line for '$*': $(cat "$WORK/err")"
  }
  expect_error "--link" --link fast --out "$WORK/o"
  expect_error "--gpu-nodes" --gpu-nodes 0 --out "$WORK/o"
  expect_error "size" --size 12Q --out "$WORK/o"
  expect_error "--hosts needs" --hosts --out "$WORK/o"
  expect_error "--gpu-mounts" --hosts --meta 127.0.0.1:1 --secret-file x --gpu-mounts 1=local --storage-node-ids 2
  "$T0FS" bench tier0-vs-networked --help | grep -q "Example" || fail "--help has no example"
  if ((EUID != 0)); then
    rc=0; "$T0FS" bench tier0-vs-networked --quick --out "$WORK/o" 2>"$WORK/err" || rc=$?
    [[ $rc -eq 2 ]] && grep -q root "$WORK/err" || fail "not root: exit $rc, $(cat "$WORK/err")"
  fi
  ;;
netns)
  trap cleanup EXIT
  netns_ok || skip "needs root and network namespaces"
  "$T0FS" bench tier0-vs-networked --quick --gpu-nodes 2 --storage-nodes 1 --link 1gbit \
    --out "$WORK/out" >"$WORK/log" 2>&1 &
  RUN_PID=$!
  wait "$RUN_PID" || { cat "$WORK/log" >&2; fail "run failed"; }
  pid=$RUN_PID; RUN_PID=""
  grep -q "laying out" "$WORK/log" && grep -q "Tier 0" "$WORK/log" || fail "no progress or table"
  check_results "$WORK/out" 2 3 namespaces
  assert_clean "$pid"
  ;;
sigint)
  trap cleanup EXIT
  netns_ok || skip "needs root and network namespaces"
  "$T0FS" bench tier0-vs-networked --quick --link 1gbit --out "$WORK/out" >"$WORK/log" 2>&1 &
  RUN_PID=$!
  deadline=$((SECONDS + 60))
  until grep -q "seq read 1 MiB" "$WORK/log"; do
    ((SECONDS < deadline)) || { cat "$WORK/log" >&2; fail "the run never reached the read tests"; }
    kill -0 "$RUN_PID" 2>/dev/null || { cat "$WORK/log" >&2; fail "the run ended early"; }
    sleep 0.1
  done
  [[ -n "$(leftovers "$RUN_PID")" ]] || fail "nothing seen running before the signal (check is blind)"
  kill -INT "$RUN_PID"
  rc=0; wait "$RUN_PID" || rc=$?
  pid=$RUN_PID; RUN_PID=""
  [[ $rc -eq 130 ]] || { cat "$WORK/log" >&2; fail "exit $rc after SIGINT, wanted 130"; }
  grep -q "everything created was removed" "$WORK/log" || fail "no stop message"
  assert_clean "$pid"
  ;;
hosts)
  netns_ok || skip "needs root"
  source "$(dirname "$0")/../lib/cluster.sh"
  trap 'rm -rf "$WORK"' EXIT
  multi_start 2 64M  # sets its own EXIT trap (cluster_stop): ours again after it
  trap 'cluster_stop; rm -rf "$WORK"' EXIT
  MNT="$CLUSTER_DIR/mnt"
  mkdir -p "$MNT"
  mount_start --node-id 1
  "$T0FS" bench tier0-vs-networked --hosts --quick --meta "$META_ADDR" --secret-file "$CLUSTER_DIR/secret" \
    --gpu-mounts "1=local:$MNT" --storage-node-ids 2 --link 1gbit --out "$WORK/out" >"$WORK/log" 2>&1 ||
    { cat "$WORK/log" >&2; fail "hosts run failed"; }
  check_results "$WORK/out" 1 2 hosts
  # The experiment's tree is removed from the file system (no --keep).
  [[ -z "$(ls "$MNT")" ]] || fail "left in the file system: $(ls "$MNT")"
  ;;
*) fail "unknown case" ;;
esac
echo "PASS [$case_name]"
