# Finds and reads the /metrics endpoints of a running test cluster
# (tests/lib/cluster.sh). Source after cluster.sh and prometheus.sh.
#
#   meta_metrics_url / data_metrics_url / mount_metrics_url LOG
#                        http://host:port/metrics of each daemon: meta and
#                        data as `t0fs status --json` reports them (data
#                        nodes send theirs with the heartbeat), a mount from
#                        the "metrics on" line of its log
#   metric URL NAME [LABEL=VALUE...]
#                        sum of the matching samples now ("" if none)
#   extra_mount_start DIR LOG FLAG...   a second mount of the cluster at DIR
#   extra_mount_stop                    (idempotent; call from cleanup)

EXTRA_MOUNT_PID="" EXTRA_MOUNT_DIR=""

status_field() { # status_field PYTHON-EXPR-ON-d: evaluates it on the status JSON
  admin status --json | python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"
}

meta_metrics_url() { echo "http://$(status_field "d['meta_metrics_address']")/metrics"; }

data_metrics_url() {
  local addr=""
  for _ in $(seq 1 100); do  # the address arrives with the first heartbeat
    addr=$(status_field "d['nodes'][0]['metrics_address']" 2>/dev/null || true)
    [[ -n "$addr" ]] && break
    sleep 0.1
  done
  [[ -n "$addr" ]] || fail "the data node reported no metrics address"
  echo "http://$addr/metrics"
}

mount_metrics_url() {
  local url=""
  for _ in $(seq 1 100); do
    url=$(sed -n 's/.*metrics on \(http[^ ]*\).*/\1/p' "$1" | tail -n 1)
    [[ -n "$url" ]] && break
    sleep 0.1
  done
  [[ -n "$url" ]] || fail "no 'metrics on' line in $1"
  echo "$url"
}

metric() { prom_py sample "$@" || true; }

extra_mount_start() {
  EXTRA_MOUNT_DIR=$1
  local log=$2
  shift 2
  mkdir -p "$EXTRA_MOUNT_DIR"
  "$T0FS" mount "$META_ADDR" "$EXTRA_MOUNT_DIR" --secret-file "$CLUSTER_DIR/secret" "$@" >>"$log" 2>&1 &
  EXTRA_MOUNT_PID=$!
  wait_until 20 "second mount" is_mounted "$EXTRA_MOUNT_DIR"
}

extra_mount_stop() {
  [[ -n "$EXTRA_MOUNT_PID" ]] || return 0
  stop_pid "$EXTRA_MOUNT_PID"
  EXTRA_MOUNT_PID=""
  if is_mounted "$EXTRA_MOUNT_DIR"; then umount -l "$EXTRA_MOUNT_DIR"; fi
}
