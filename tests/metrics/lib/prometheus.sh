# Starts Debian's Prometheus server on loopback for a test, and queries it.
# Source this file; every function returns non-zero on failure.
#
#   source tests/metrics/lib/prometheus.sh
#   prom_available || { echo "SKIP: ..."; exit 77; }
#   trap 'prom_stop' EXIT                 # (plus the test's own cleanup)
#   prom_start "$tmp/prom" 127.0.0.1:9701 127.0.0.1:9702   # scrapes every 1 s, job "t0fs"
#                                         # (PROM_RULES=FILE: also loads those alert rules)
#   prom_wait 20 'up{job="t0fs"}' 1       # until the query's first value is 1
#   prom_query 'sum(t0fs_data_bytes_total)'   # lines: <labels JSON> TAB <value>
#
# Sets PROM_URL (http://127.0.0.1:<port>) and PROM_PID. Needs python3.

PROM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PROM_BIN=${PROMETHEUS:-prometheus}
PROM_PID=""
PROM_URL=""

prom_available() { command -v "$PROM_BIN" >/dev/null 2>&1; }

prom_py() { python3 "$PROM_LIB_DIR/promql.py" "$@"; }

# prom_start DIR TARGET...: config, data and log under DIR (created).
prom_start() {
  local dir=$1
  shift
  mkdir -p "$dir"
  local targets="" t
  for t in "$@"; do targets+="'$t', "; done
  cat >"$dir/prometheus.yml" <<YML
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
${PROM_RULES:+rule_files: ['$PROM_RULES']}
scrape_configs:
  - job_name: t0fs
    static_configs:
      - targets: [${targets%, }]
YML
  # The port is picked free and then bound by Prometheus: another process
  # may take it in between, so a failed start is retried on a new port.
  local attempt port
  for attempt in 1 2 3; do
    port=$(prom_py free-port) || return 1
    "$PROM_BIN" --config.file="$dir/prometheus.yml" --storage.tsdb.path="$dir/data" \
      --web.listen-address="127.0.0.1:$port" --log.level=warn \
      >>"$dir/prometheus.log" 2>&1 &
    PROM_PID=$!
    PROM_URL="http://127.0.0.1:$port"
    local waited
    for waited in $(seq 1 75); do  # up to 15 s; it is ready in well under 1 s
      if ! kill -0 "$PROM_PID" 2>/dev/null; then break; fi
      if prom_py get "$PROM_URL/-/ready" >/dev/null 2>&1; then return 0; fi
      sleep 0.2
    done
    if kill -0 "$PROM_PID" 2>/dev/null; then  # running but never ready: no retry
      prom_stop
      break
    fi
    prom_stop
  done
  echo "prometheus did not start; its log:" >&2
  cat "$dir/prometheus.log" >&2
  return 1
}

prom_stop() {
  if [[ -n "$PROM_PID" ]]; then
    kill "$PROM_PID" 2>/dev/null || true
    wait "$PROM_PID" 2>/dev/null || true
    PROM_PID=""
  fi
}

# prom_query EXPR: one line per series, "<labels JSON>\t<value>".
prom_query() { prom_py query "$PROM_URL" "$1"; }

# prom_value EXPR: the value of the first series ("" when there is none).
prom_value() { prom_query "$1" 2>/dev/null | head -n1 | cut -f2; }

# prom_wait SECONDS EXPR WANT: polls until EXPR's first value is WANT. Also
# gives up at PROM_DEADLINE (a value of bash's $SECONDS), if the caller set
# one, so that a test fails on its own before an outer timeout kills it.
prom_wait() {
  local seconds=$1 expr=$2 want=$3 got="" tries
  for tries in $(seq 1 $((seconds * 5))); do
    got=$(prom_value "$expr")
    [[ "$got" == "$want" ]] && return 0
    [[ -n "${PROM_DEADLINE:-}" ]] && ((SECONDS >= PROM_DEADLINE)) && break
    sleep 0.2
  done
  echo "prometheus: $expr is '${got}', want '$want' after ${seconds}s" >&2
  return 1
}
