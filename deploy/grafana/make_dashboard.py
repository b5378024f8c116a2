#!/usr/bin/env python3
"""Writes deploy/grafana/t0fs-cluster.json, the Grafana dashboard of a t0fs
cluster, from the panel list below (the JSON is generated, not hand-edited:
change this file and run it). Every expression is checked against a real
Prometheus scraping a running cluster in `make test`."""
import json
import os
import sys

DS = {"type": "prometheus", "uid": "${datasource}"}

# (title, unit, kind, [(expr, legend)], width)
PANELS = [
    ("Capacity", "bytes", "timeseries", [
        ("sum(t0fs_meta_volume_capacity_bytes)", "capacity"),
        ("sum(t0fs_meta_volume_available_bytes)", "available"),
        ("t0fs_meta_logical_bytes", "file data (logical)"),
    ], 8),
    ("Data nodes by state", "short", "timeseries", [
        ("sum by (state) (t0fs_meta_node_state)", "{{state}}"),
    ], 8),
    ("Chunks and redundancy", "short", "timeseries", [
        ("t0fs_meta_chunks", "chunks"),
        ("t0fs_meta_chunks_below_objective", "below objective"),
        ("t0fs_meta_chunks_unavailable", "unavailable"),
        ("t0fs_meta_stale_replicas", "stale replicas"),
    ], 8),
    ("Client throughput: local (bypass) vs network", "Bps", "timeseries", [
        ("sum by (op, path) (rate(t0fs_client_bytes_total[$__rate_interval]))", "{{op}} {{path}}"),
    ], 12),
    ("Data node bytes by transport", "Bps", "timeseries", [
        ("sum by (instance, op, transport) (rate(t0fs_data_bytes_total[$__rate_interval]))",
         "{{instance}} {{op}} {{transport}}"),
    ], 12),
    ("Repair", "short", "timeseries", [
        ("t0fs_meta_repair_copies_running", "copies running"),
        ("sum by (result) (rate(t0fs_meta_repair_copies_total[$__rate_interval]))", "copies/s {{result}}"),
        ("rate(t0fs_meta_repair_bytes_total[$__rate_interval])", "bytes/s copied"),
    ], 12),
    ("Protection in the background (protect=)", "short", "timeseries", [
        ("t0fs_meta_protect_waiting_files", "files waiting"),
        ("t0fs_meta_protect_overdue_files", "past their deadline"),
        ("t0fs_meta_protect_oldest_age_seconds", "oldest wait (s)"),
    ], 12),
    ("FUSE p99 latency by op", "s", "timeseries", [
        ("histogram_quantile(0.99, sum by (op, le) (rate(t0fs_fuse_op_duration_seconds_bucket[$__rate_interval])))",
         "{{op}}"),
    ], 12),
    ("Meta p99 latency by method", "s", "timeseries", [
        ("histogram_quantile(0.99, sum by (method, le) (rate(t0fs_rpc_server_request_duration_seconds_bucket"
         "{method!~\"chunk_.*|heartbeat|open_local\"}[$__rate_interval])))", "{{method}}"),
    ], 12),
    ("FUSE opens by how they are served", "short", "timeseries", [
        ("sum by (mode) (rate(t0fs_fuse_opens_total[$__rate_interval]))", "{{mode}}"),
    ], 12),
    ("Errors and failovers", "short", "timeseries", [
        ("sum(increase(t0fs_client_checksum_errors_total[$__rate_interval]))", "checksum errors"),
        ("sum(increase(t0fs_client_replica_failovers_total[$__rate_interval]))", "read failovers"),
        ("sum(increase(t0fs_client_replica_write_failures_total[$__rate_interval]))", "replica write failures"),
    ], 12),
    ("Volume free space", "percentunit", "timeseries", [
        ("t0fs_data_volume_available_bytes / t0fs_data_volume_capacity_bytes", "{{instance}} volume {{volume}}"),
    ], 12),
]


def build():
    panels, x, y, row_h = [], 0, 0, 8
    for idx, (title, unit, kind, targets, width) in enumerate(PANELS, start=1):
        if x + width > 24:
            x, y = 0, y + row_h
        panels.append({
            "id": idx,
            "type": kind,
            "title": title,
            "datasource": DS,
            "gridPos": {"x": x, "y": y, "w": width, "h": row_h},
            "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
            "options": {"legend": {"displayMode": "list", "placement": "bottom"}},
            "targets": [{"datasource": DS, "expr": expr, "legendFormat": legend, "refId": chr(ord("A") + i)}
                        for i, (expr, legend) in enumerate(targets)],
        })
        x += width
    return {
        "title": "t0fs cluster",
        "uid": "t0fs-cluster",
        "tags": ["t0fs", "storage"],
        "timezone": "browser",
        "schemaVersion": 38,
        "version": 1,
        "refresh": "30s",
        "time": {"from": "now-6h", "to": "now"},
        "templating": {"list": [{
            "name": "datasource", "label": "Prometheus", "type": "datasource", "query": "prometheus",
            "current": {}, "hide": 0,
        }]},
        "annotations": {"list": []},
        "panels": panels,
    }


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "t0fs-cluster.json")
    text = json.dumps(build(), indent=2) + "\n"
    if len(sys.argv) > 1 and sys.argv[1] == "--check":
        with open(out) as f:
            sys.exit(0 if f.read() == text else "t0fs-cluster.json is not what make_dashboard.py writes")
    with open(out, "w") as f:
        f.write(text)
