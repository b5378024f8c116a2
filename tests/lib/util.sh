# Helpers every test library shares (cluster.sh, postgres.sh, ceph.sh,
# cli/lib.sh):
# log lines, failure, a free loopback port, polling with a deadline.
# Functions only: sourcing it changes no shell option.

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

# free_port [COUNT]: the first of COUNT consecutive free loopback ports.
# Chosen below the kernel's ephemeral range (ip_local_port_range, 32768 up by
# default): a port from that range can be taken between the check and the
# bind by any outgoing connection, e.g. a meta server's to PostgreSQL.
free_port() {
  local count=${1:-1} port i ok low
  low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  while :; do
    port=$((10000 + RANDOM % (low - 10000 - count)))
    ok=1
    for ((i = 0; i < count; i++)); do
      if ss -Htan "sport = :$((port + i))" | grep -q .; then ok=0; break; fi
    done
    ((ok)) && { echo "$port"; return; }
  done
}

# wait_until SECONDS DESCRIPTION COMMAND...: polls COMMAND every 0.1 s.
wait_until() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "timed out waiting for $what"
    sleep 0.1
  done
}

# killed_in DESCRIPTION COMMAND...: runs COMMAND in the background (its own
# process group: a non-interactive shell would start it with SIGINT
# ignored), sends SIGTERM after 2 s, and fails unless it ends within 45 s.
killed_in() {
  local what=$1 pid start
  shift
  start=$SECONDS
  setsid "$@" &
  pid=$!
  sleep 2
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 450); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$pid" 2>/dev/null; then
    fail "$what: still waiting for the mount 45 s after SIGTERM"
  fi
  wait "$pid" 2>/dev/null || true
  log "$what: ended $((SECONDS - start)) s after it started"
}
