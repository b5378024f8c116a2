#!/usr/bin/env bash
# The files under deploy/ are valid: the alert rules pass `promtool check
# rules`, the Grafana dashboard is what deploy/grafana/make_dashboard.py
# writes and has the shape Grafana imports (ids, grid, targets, the
# datasource variable). tests/metrics/prometheus_cluster.sh loads both
# against a real Prometheus scraping a running cluster.
set -euo pipefail
deploy=$(cd "$(dirname "$0")/../../deploy" && pwd)
command -v promtool >/dev/null || { echo "SKIP: promtool (Debian package prometheus) is not installed"; exit 77; }
promtool check rules "$deploy/prometheus/t0fs-alerts.yml"
python3 "$deploy/grafana/make_dashboard.py" --check
python3 - "$deploy/grafana/t0fs-cluster.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for key in ("title", "uid", "panels", "templating", "schemaVersion"):
    assert key in d, f"dashboard without {key}"
variables = {v["name"] for v in d["templating"]["list"]}
ids = [p["id"] for p in d["panels"]]
assert len(ids) == len(set(ids)), "panel ids repeat"
for p in d["panels"]:
    g = p["gridPos"]
    assert 0 <= g["x"] and g["x"] + g["w"] <= 24 and g["h"] > 0, f"panel {p['title']} off the grid"
    assert p["datasource"]["uid"].strip("${}") in variables, f"panel {p['title']}: unknown datasource"
    refs = [t["refId"] for t in p["targets"]]
    assert p["targets"] and len(refs) == len(set(refs)), f"panel {p['title']}: targets"
    assert all(t["expr"].strip() for t in p["targets"]), f"panel {p['title']}: empty query"
print(f"dashboard '{d['title']}': {len(d['panels'])} panels ok")
PY
echo "deploy files ok"
