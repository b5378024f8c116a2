#!/usr/bin/env bash
# Debian's Prometheus, started on loopback with a generated config, scrapes a
# running single-node t0fs (meta, data, mount); queries through its HTTP API
# return the t0fs series with the values the daemons export.
# Exit 77 = skipped (no prometheus binary).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/prometheus.sh"
if ! prom_available; then
  echo "SKIP: the prometheus binary is not installed (Debian package 'prometheus'; scripts/install-deps)"
  exit 77
fi
source "$here/../lib/cluster.sh"
source "$here/lib/endpoints.sh"

cleanup() {
  local rc=$?
  set +e
  prom_stop
  (exit $rc)
  cluster_stop
}

# The mount's own data path (the local bypass), whose byte counters this
# checks: with passthrough the kernel would serve the file and they would
# not move (tests/posix/passthrough.sh checks that).
cluster_start 1M --passthrough false
trap cleanup EXIT
PROM_DEADLINE=$((SECONDS + 60))

targets=()
for url in "$(meta_metrics_url)" "$(data_metrics_url)" "$(mount_metrics_url "$CLUSTER_DIR/mount.log")"; do
  url=${url#http://}
  targets+=("${url%/metrics}")
done
dd if=/dev/zero of="$MNT/f" bs=1M count=4 conv=fsync status=none

# With the shipped alert rules (deploy/prometheus), checked below.
DEPLOY="$here/../../deploy"
PROM_RULES="$DEPLOY/prometheus/t0fs-alerts.yml" prom_start "$CLUSTER_DIR/prom" "${targets[@]}"
log "prometheus at $PROM_URL scraping ${targets[*]}"
prom_wait 30 'count(up{job="t0fs"} == 1)' 3 || fail "not every daemon is up in prometheus"
prom_wait 10 'count(count by (instance) (t0fs_build_info))' 3 || fail "build info of the three daemons"
prom_wait 10 't0fs_meta_node_state{node="1",state="up"}' 1 || fail "node state"
prom_wait 10 'sum(t0fs_meta_nodes{state="up"})' 1 || fail "node counts"
prom_wait 10 't0fs_client_bytes_total{op="write",path="local"} >= bool 4194304' 1 || fail "client bypass bytes"
prom_wait 10 'sum(t0fs_data_volume_chunks) >= bool 4' 1 || fail "chunks per volume"
prom_wait 10 'sum(t0fs_fuse_ops_total{op="write"}) >= bool 4' 1 || fail "FUSE op counts"
prom_wait 10 'count(histogram_quantile(0.99, sum by (le) (t0fs_fuse_op_duration_seconds_bucket{op="write"})) >= 0)' 1 ||
  fail "FUSE latency histogram"
prom_wait 10 'count(t0fs_rpc_server_requests_total{method="open_local",result="ok"})' 1 || fail "data RPC counts"
prom_wait 10 'sum(t0fs_meta_chunks_below_objective)' 0 || fail "repair backlog"
prom_wait 10 'count(process_resident_memory_bytes{job="t0fs"})' 3 || fail "process metrics"

log "the shipped alert rules load and evaluate; every dashboard query runs on real series"
python3 - "$PROM_URL" "$DEPLOY" <<'PY'
import json, re, sys, time, urllib.parse, urllib.request
url, deploy = sys.argv[1], sys.argv[2]
def api(path, **params):
    with urllib.request.urlopen(url + path + ("?" + urllib.parse.urlencode(params) if params else ""), timeout=10) as r:
        body = json.load(r)
    assert body["status"] == "success", body
    return body["data"]
deadline = time.time() + 20
while True:
    rules = [r for g in api("/api/v1/rules")["groups"] for r in g["rules"]]
    if rules and all(r.get("health") == "ok" for r in rules): break
    assert time.time() < deadline, [(r["name"], r.get("health"), r.get("lastError")) for r in rules]
    time.sleep(0.5)
assert len(rules) == 16, len(rules)
firing = [r["name"] for r in rules if r.get("state") == "firing"]
assert firing == [], f"alerts firing on a healthy cluster: {firing}"
names = set(api("/api/v1/label/__name__/values"))
dash = json.load(open(deploy + "/grafana/t0fs-cluster.json"))
queried = 0
for panel in dash["panels"]:
    for t in panel["targets"]:
        expr = t["expr"].replace("$__rate_interval", "1m")
        api("/api/v1/query", query=expr)  # parses and evaluates
        for name in set(re.findall(r"(t0fs_[a-z_]+)", expr)):
            assert name in names or name + "_bucket" in names or name.endswith("_bucket") and name in names,                 f"panel '{panel['title']}': no series {name} (names: {sorted(n for n in names if n.startswith('t0fs_'))})"
        queried += 1
print(f"{len(rules)} rules ok, {queried} dashboard queries ok")
PY
log "PASS"
