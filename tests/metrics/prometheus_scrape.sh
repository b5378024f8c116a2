#!/usr/bin/env bash
# Debian's Prometheus server scrapes metrics_demo (a t0fs_metrics registry
# behind MetricsServer) every second; its HTTP API must return the series with
# the values the demo exported, label escaping intact.
# Env: METRICS_DEMO = path of the metrics_demo binary. Exit 77 = skipped.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/lib/prometheus.sh"

if ! prom_available; then
  echo "SKIP: the prometheus binary is not installed (Debian package 'prometheus'; scripts/install-deps)"
  exit 77
fi
demo=${METRICS_DEMO:?set METRICS_DEMO to the metrics_demo binary}

# ctest kills the test at 60 s (and would leave the servers running): fail
# on our own well before.
PROM_DEADLINE=$((SECONDS + 40))
tmp=$(mktemp -d /tmp/t0fs-metrics-test.XXXXXX)
demo_pid=""
cleanup() {
  prom_stop
  if [[ -n "$demo_pid" ]]; then
    kill "$demo_pid" 2>/dev/null || true
    wait "$demo_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

"$demo" 127.0.0.1:0 >"$tmp/demo.out" 2>"$tmp/demo.err" &
demo_pid=$!
url=""
for _ in $(seq 1 50); do
  url=$(sed -n 's/^metrics: //p' "$tmp/demo.out")
  [[ -n "$url" ]] && break
  kill -0 "$demo_pid" 2>/dev/null || { echo "metrics_demo exited:"; cat "$tmp/demo.err"; exit 1; }
  sleep 0.1
done
[[ -n "$url" ]] || { echo "metrics_demo printed no URL"; exit 1; }
target=${url#http://}
target=${target%/metrics}
echo "metrics_demo serves $url"

# The exposition passes Prometheus' own linter.
prom_py get "$url" >"$tmp/scrape.txt"
if command -v promtool >/dev/null 2>&1; then
  promtool check metrics <"$tmp/scrape.txt"
  echo "promtool check metrics: ok"
fi

prom_start "$tmp/prom" "$target"
echo "prometheus at $PROM_URL"

fail() { echo "FAIL: $*"; exit 1; }
prom_wait 20 "up{job=\"t0fs\"}" 1 || fail "target never came up"
prom_wait 10 't0fs_demo_events_total{kind="fixed"}' 42 || fail "counter value"
prom_wait 10 't0fs_demo_latency_seconds_count{op="read"}' 3 || fail "histogram count"
prom_wait 10 't0fs_demo_latency_seconds_bucket{op="read",le="0.01"}' 2 || fail "cumulative bucket"
# The median of {1 ms, 10 ms, 100 ms} interpolates inside the (5 ms, 10 ms] bucket.
median=$(prom_value 'histogram_quantile(0.5, t0fs_demo_latency_seconds_bucket)')
python3 -c "import sys; sys.exit(0 if 0.005 < float('$median') <= 0.01 else 1)" ||
  fail "histogram_quantile(0.5) = '$median', want within (0.005, 0.01]"
prom_wait 10 'sum(t0fs_demo_volume_chunks)' 8 || fail "callback gauge"
prom_wait 10 'count(t0fs_build_info{component="metrics_demo"})' 1 || fail "build info"
rss=$(prom_value 'process_resident_memory_bytes{job="t0fs"}')
python3 -c "import sys; sys.exit(0 if float('$rss') > 0 else 1)" || fail "process rss '$rss'"

# Escaped label values round-trip: the series' path label is the raw string.
labels=$(prom_query 't0fs_demo_path_info' | cut -f1)
python3 - "$labels" <<'PY' || fail "label value after escaping: $labels"
import json, sys
sys.exit(0 if json.loads(sys.argv[1])["path"] == 'a "quoted" \\ back\nslash' else 1)
PY

# A counter that moves is seen moving (two scrapes at least a second apart).
first=$(prom_value 't0fs_demo_ticks_total')
[[ -n "$first" ]] || fail "no ticks series"
moved=0
for _ in $(seq 1 50); do
  now=$(prom_value 't0fs_demo_ticks_total')
  if [[ -n "$now" ]] && (( now > first )); then moved=1; break; fi
  ((SECONDS >= PROM_DEADLINE)) && break
  sleep 0.2
done
(( moved )) || fail "t0fs_demo_ticks_total stayed at $first"
echo "PASS: prometheus scraped and queried every t0fs_demo series (ticks $first -> $now)"
