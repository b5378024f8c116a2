# A real one-node Ceph cluster with an S3 gateway (Debian's ceph-mon,
# ceph-osd, radosgw, ceph-common) for tests: one monitor, one bluestore OSD
# on a sparse file, radosgw (beast) on 127.0.0.1, all in one temp directory
# with its own fsid and ceph.conf (never /etc/ceph), stopped and removed on
# every exit path. Source after cluster.sh (uses log, fail, free_port,
# wait_until) or on its own (defines them if missing).
#
#   ceph_usable    root and the packages present (else the caller skips, 77)
#   ceph_start     starts everything, creates an S3 user; sets CEPH_S3_ENDPOINT
#                  (http://127.0.0.1:PORT), CEPH_S3_ACCESS_KEY, CEPH_S3_SECRET_KEY,
#                  CEPH_S3_CREDENTIALS (a 0600 file: access_key = / secret_key =),
#                  CEPH_DIR (logs under $CEPH_DIR/log)
#   ceph_s3cfg F   writes an s3cmd config for the gateway to F (0600)
#   ceph_stop      helpers still running, radosgw, then the OSD, then the monitor (radosgw hangs if
#                  the OSD goes first); removes the directory. Idempotent.
#
# Speed: `paxos propose interval = 0.05` and small pools (8 PGs) make the
# cluster ready for the first PUT in seconds; no manager daemon is needed.

CEPH_DIR=""
CEPH_CONF=""
declare -A CEPH_PID=()

source "$(dirname "${BASH_SOURCE[0]}")/util.sh"

CEPH_TOOLS=(ceph-mon ceph-osd radosgw radosgw-admin ceph ceph-authtool monmaptool s3cmd)

ceph_usable() {
  ((EUID == 0)) || return 1
  local tool
  for tool in "${CEPH_TOOLS[@]}"; do command -v "$tool" >/dev/null || return 1; done
}

_ceph_fail() {
  log "ceph logs: $CEPH_DIR/log"
  local f
  for f in "$CEPH_DIR"/log/*.log; do
    [[ -s "$f" ]] || continue
    log "--- tail of $f"
    tail -n 15 "$f" >&2
  done
  fail "$*"
}

_ceph_conf() { # _ceph_conf MON_PORT RGW_PORT OSD_PORT_MIN
  local fsid
  fsid=$(uuidgen)
  cat >"$CEPH_CONF" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$1
public addr = 127.0.0.1
ms bind msgr1 = false
ms bind port min = $3
ms bind port max = $(($3 + 99))
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $CEPH_DIR/keyring
run dir = $CEPH_DIR/run
admin socket = $CEPH_DIR/run/\$name.asok
log file = $CEPH_DIR/log/\$name.log
log to stderr = false
err to stderr = true
pid file =
crash dir = $CEPH_DIR/crash
mon data = $CEPH_DIR/mon
osd data = $CEPH_DIR/osd
mon cluster log file = $CEPH_DIR/log/cluster.log
paxos propose interval = 0.05
mon allow pool size one = true
mon warn on pool no redundancy = false
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 1
osd pool default pgp num = 1
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
osd objectstore = bluestore
bluestore block path = $CEPH_DIR/block
bluestore block create = true
bluestore block size = 10737418240
bluestore fsck on mount = false
bluestore fsck on mkfs = false
bluestore fsck on umount = false
osd memory target = 1073741824
bluestore cache autotune = false
bluestore cache size = 134217728
rgw frontends = beast endpoint=127.0.0.1:$2
rgw data = $CEPH_DIR/rgw
rgw dns name = 127.0.0.1
rgw enable gc threads = false
rgw enable lc threads = false
rgw enable quota threads = false
rgw dynamic resharding = false
EOF
}

_ceph_launch() { # _ceph_launch NAME COMMAND...: a daemon in the foreground, in the background
  local name=$1
  shift
  "$@" -f -c "$CEPH_CONF" >"$CEPH_DIR/log/$name.out" 2>&1 &
  CEPH_PID[$name]=$!
}

ceph_start() {
  local start_ns mon_port rgw_port osd_port osd_uuid keys
  start_ns=$(date +%s%N)
  CEPH_DIR=$(mktemp -d /tmp/t0fs-ceph.XXXXXX)
  CEPH_CONF=$CEPH_DIR/ceph.conf
  mkdir -p "$CEPH_DIR"/{log,run,crash,mon,osd,rgw}
  mon_port=$(free_port)
  rgw_port=$(free_port)
  osd_port=$((40000 + RANDOM % 20000))
  _ceph_conf "$mon_port" "$rgw_port" "$osd_port"

  local kr=$CEPH_DIR/keyring
  ceph-authtool --create-keyring "$kr" --gen-key -n mon. --cap mon 'allow *' >/dev/null &&
    ceph-authtool "$kr" --gen-key -n client.admin --cap mon 'allow *' --cap osd 'allow *' \
      --cap mgr 'allow *' --cap mds 'allow *' >/dev/null &&
    ceph-authtool "$kr" --gen-key -n osd.0 --cap mon 'allow profile osd' --cap osd 'allow *' \
      --cap mgr 'allow profile osd' >/dev/null &&
    ceph-authtool "$kr" --gen-key -n client.rgw.t0fs --cap mon 'allow rw' --cap osd 'allow rwx' \
      --cap mgr 'allow rw' >/dev/null || _ceph_fail "ceph-authtool"
  monmaptool --create --fsid "$(sed -n 's/^fsid = //p' "$CEPH_CONF")" --addv a "[v2:127.0.0.1:$mon_port]" \
    "$CEPH_DIR/monmap" >/dev/null || _ceph_fail "monmaptool"
  ceph-mon -c "$CEPH_CONF" --mkfs -i a --monmap "$CEPH_DIR/monmap" --keyring "$kr" \
    >"$CEPH_DIR/log/mon-mkfs.out" 2>&1 || _ceph_fail "ceph-mon --mkfs"
  _ceph_launch mon ceph-mon -i a
  osd_uuid=$(uuidgen)
  # `ceph osd new` (a slow Python CLI) runs while the OSD formats its store;
  # the block file lives beside (not inside) the OSD data folder.
  timeout 30 ceph -c "$CEPH_CONF" -n client.admin osd new "$osd_uuid" >"$CEPH_DIR/osd-id" \
    2>>"$CEPH_DIR/log/ceph-cli.out" &
  CEPH_PID[osd-new]=$!
  ceph-osd -c "$CEPH_CONF" -i 0 --mkfs --osd-uuid "$osd_uuid" >"$CEPH_DIR/log/osd-mkfs.out" 2>&1 ||
    _ceph_fail "ceph-osd --mkfs"
  wait "${CEPH_PID[osd-new]}" || _ceph_fail "ceph osd new"
  unset "CEPH_PID[osd-new]"
  [[ "$(cat "$CEPH_DIR/osd-id")" == 0 ]] || _ceph_fail "ceph osd new gave id '$(cat "$CEPH_DIR/osd-id")', not 0"
  _ceph_launch osd ceph-osd -i 0
  _ceph_launch rgw radosgw -n client.rgw.t0fs
  # The S3 user is made while radosgw starts (both wait for the same pools).
  timeout 60 radosgw-admin -c "$CEPH_CONF" -n client.admin user create --uid=t0fs --display-name=t0fs \
    >"$CEPH_DIR/user.json" 2>>"$CEPH_DIR/log/ceph-cli.out" &
  CEPH_PID[user-create]=$!
  CEPH_S3_ENDPOINT="http://127.0.0.1:$rgw_port"
  local deadline=$((SECONDS + 120))
  until [[ "$(curl -s -o /dev/null -w '%{http_code}' "$CEPH_S3_ENDPOINT/" 2>/dev/null)" == 200 ]]; do
    ((SECONDS < deadline)) || _ceph_fail "radosgw did not answer on $CEPH_S3_ENDPOINT"
    local name
    for name in mon osd rgw; do
      kill -0 "${CEPH_PID[$name]}" 2>/dev/null || _ceph_fail "ceph $name exited during the start"
    done
    sleep 0.1
  done
  wait "${CEPH_PID[user-create]}" || _ceph_fail "radosgw-admin user create"
  unset "CEPH_PID[user-create]"
  keys=$(cat "$CEPH_DIR/user.json")
  # radosgw-admin prints one "name": "value" per line (no python3 start-up: slow on a busy machine).
  CEPH_S3_ACCESS_KEY=$(sed -n 's/^ *"access_key": "\([^"]*\)".*/\1/p' <<<"$keys" | head -n 1)
  CEPH_S3_SECRET_KEY=$(sed -n 's/^ *"secret_key": "\([^"]*\)".*/\1/p' <<<"$keys" | head -n 1)
  [[ -n "$CEPH_S3_ACCESS_KEY" && -n "$CEPH_S3_SECRET_KEY" ]] || _ceph_fail "no S3 keys in radosgw-admin's answer"
  CEPH_S3_CREDENTIALS=$CEPH_DIR/s3.credentials
  (umask 077 && printf 'access_key = %s\nsecret_key = %s\n' "$CEPH_S3_ACCESS_KEY" "$CEPH_S3_SECRET_KEY" \
    >"$CEPH_S3_CREDENTIALS")
  export CEPH_S3_ENDPOINT CEPH_S3_ACCESS_KEY CEPH_S3_SECRET_KEY CEPH_S3_CREDENTIALS
  CEPH_START_MS=$((($(date +%s%N) - start_ns) / 1000000))
  log "ceph: mon v2:127.0.0.1:$mon_port, rgw $CEPH_S3_ENDPOINT, started in ${CEPH_START_MS} ms ($CEPH_DIR)"
}

ceph_s3cfg() {
  (umask 077 && cat >"$1" <<EOF
[default]
access_key = $CEPH_S3_ACCESS_KEY
secret_key = $CEPH_S3_SECRET_KEY
host_base = ${CEPH_S3_ENDPOINT#http://}
host_bucket = ${CEPH_S3_ENDPOINT#http://}
use_https = False
signature_v2 = False
check_ssl_certificate = False
EOF
  )
}

_ceph_stop_one() { # _ceph_stop_one NAME: TERM, then KILL after 15 s
  local pid=${CEPH_PID[$1]:-}
  [[ -n "$pid" ]] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  local deadline=$((SECONDS + 15))
  while kill -0 "$pid" 2>/dev/null && ((SECONDS < deadline)); do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    log "ceph $1 (pid $pid) did not stop; killing it"
    kill -KILL "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  unset "CEPH_PID[$1]"
}

ceph_stop() {
  local start_ns
  start_ns=$(date +%s%N)
  _ceph_stop_one osd-new
  _ceph_stop_one user-create
  _ceph_stop_one rgw
  _ceph_stop_one osd
  _ceph_stop_one mon
  [[ -z "$CEPH_DIR" ]] || { rm -rf "$CEPH_DIR"; log "ceph: stopped and removed in $((($(date +%s%N) - start_ns) / 1000000)) ms"; }
  CEPH_DIR=""
}
