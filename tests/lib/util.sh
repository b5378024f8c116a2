# Helpers every test library shares (cluster.sh, postgres.sh, ceph.sh):
# log lines, failure, a free loopback port, polling with a deadline.
# Functions only: sourcing it changes no shell option.

log() { printf '[%s] %s\n' "$(date +%T)" "$*" >&2; }
fail() { log "FAIL: $*"; exit 1; }

free_port() {
  local port
  while :; do
    port=$((20000 + RANDOM % 20000))
    if ! ss -Htln "sport = :$port" | grep -q .; then echo "$port"; return; fi
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
