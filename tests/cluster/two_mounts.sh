#!/usr/bin/env bash
# Two clients of one namespace, model-checked (two_mounts.py): seeded random
# writes (plain, O_DIRECT, mapped), reads, truncates, chmod, utimes, links,
# symlinks, renames of files and directories, unlinks and directory changes,
# each on one of two mounts of one cluster; close-to-open data exact at
# once, names and attributes on the other mount within the invalidation time.
#
#   two_mounts.sh                 mount A on node 1 (passthrough), mount B
#                                 with no local node (every byte over TCP)
#   PASSTHROUGH=off               mount A without passthrough too (both through
#                                 the page cache)
#   TWO_NODES=1                   two data nodes, A on node 1 and B on node 2,
#                                 files with REPLICAS (default 2) copies: each
#                                 mount has a local replica (with REPLICAS=1,
#                                 the other mount's new files are remote)
#   TWO_MOUNTS_SEED, TWO_MOUNTS_OPS   replay a run (the seed is printed)
#   TWO_MOUNTS_TRAIL              operations listed with a failure (default 12)
#   TWO_MOUNTS_MOUNT_FLAGS        more flags for both mounts (e.g. --debug)
#   TWO_MOUNTS_VERBOSE=1          print each operation as it starts (a crash, e.g. SIGBUS)
source "$(dirname "$0")/../lib/cluster.sh"

SEED=${TWO_MOUNTS_SEED:-$(((RANDOM << 15 | RANDOM) % 1000000000))}
OPS=${TWO_MOUNTS_OPS:-1000}
# shellcheck disable=SC2206 # a list of flags
extra=(${TWO_MOUNTS_MOUNT_FLAGS:-})
pt=()
[[ "${PASSTHROUGH:-on}" == off ]] && pt=(--passthrough false)
if [[ "${TWO_NODES:-0}" == 1 ]]; then
  # Two data nodes, a mount on each, every file with REPLICAS copies.
  multi_start 2 1M
  wait_until 20 "both data nodes up" eval 'node_is 1 up && node_is 2 up'
  MNT="$CLUSTER_DIR/mnt"
  mkdir -p "$MNT"
  mount_start --node-id 1 "${pt[@]}" "${extra[@]}"
  second_mount_start "${pt[@]}" "${extra[@]}"
  admin objective set t0fs:/ "replicas=${REPLICAS:-2}" >/dev/null
else
  cluster_start 1M "${pt[@]}" "${extra[@]}"
  second_mount_start "${extra[@]}"
fi
MNT2=$SECOND_MNT

log "close-to-open across the mounts: a file grown and closed on one is read whole on the other at once"
python3 - "$MNT" "$MNT2" <<'PY'
import mmap, os, sys, time
a, b = sys.argv[1], sys.argv[2]
def seen(path):  # a new name reaches the other mount within the change poll (a bounded wait)
    deadline = time.monotonic() + 20
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} not seen 20 s after its create"
        time.sleep(0.02)
os.mkdir(f"{a}/c2o")
for i in range(3):
    for w, r, wn, rn in ((a, b, "A", "B"), (b, a, "B", "A")):
        name = f"c2o/f{i}{wn}"
        with open(f"{w}/{name}", "wb") as f: f.write(b"x" * 1000)
        seen(f"{r}/{name}")
        assert os.stat(f"{r}/{name}").st_size == 1000  # the reader's kernel caches size 1000
        with open(f"{w}/{name}", "ab") as f: f.write(b"y" * 1000)  # grown and closed
        with open(f"{r}/{name}", "rb") as f: got = f.read()
        assert got == b"x" * 1000 + b"y" * 1000, f"written on {wn}, read {len(got)} of 2000 bytes on {rn}"
        fd = os.open(f"{r}/{name}", os.O_RDWR | os.O_APPEND)  # and appended to at the new end
        os.write(fd, b"z" * 10)
        back = os.pread(fd, 4096, 0)
        os.close(fd)
        want = b"x" * 1000 + b"y" * 1000 + b"z" * 10
        assert back == want, f"{rn} appended and read back {len(back)} bytes"
        with open(f"{w}/{name}", "rb") as f: assert f.read() == want, f"{wn} reads {rn}'s append wrong"
# Shrunk on one mount: an open on the other sees the new size at once in
# fstat, served by passthrough or not (a mapping of the old length faults).
for w, r, wn, rn in ((a, b, "A", "B"), (b, a, "B", "A")):
    name = f"c2o/s{wn}"
    with open(f"{w}/{name}", "wb") as f: f.write(b"s" * 300000)
    seen(f"{r}/{name}")
    assert os.stat(f"{r}/{name}").st_size == 300000  # the reader's kernel caches it
    os.truncate(f"{w}/{name}", 1000)
    with open(f"{r}/{name}", "rb") as f:
        size = os.fstat(f.fileno()).st_size
        assert size == 1000, f"shrunk on {wn} to 1000 bytes: fstat after an open on {rn} shows {size}"
        with mmap.mmap(f.fileno(), 0, prot=mmap.PROT_READ) as m: assert m[:] == b"s" * 1000
# Removed on one mount while the other's kernel still caches the name (and
# the removed inode lives on, held by a handle): an open there fails ENOENT
# at once, and open(O_CREAT) makes a new file under the name, not a write
# into the removed one.
for i in range(3):
    for w, r, wn, rn in ((a, b, "A", "B"), (b, a, "B", "A")):
        name = f"c2o/u{i}{wn}"
        with open(f"{w}/{name}", "wb") as f: f.write(b"old")
        seen(f"{r}/{name}")
        with open(f"{r}/{name}", "rb") as f: f.read()  # the name and the inode cached
        held = os.open(f"{w}/{name}", os.O_RDONLY)     # and the inode kept alive
        os.unlink(f"{w}/{name}")
        try:
            os.close(os.open(f"{r}/{name}", os.O_RDONLY))
            raise AssertionError(f"removed on {wn}: an open on {rn} of the name it cached succeeded")
        except FileNotFoundError:
            pass
        fd = os.open(f"{r}/{name}", os.O_RDWR | os.O_CREAT, 0o644)
        os.write(fd, b"new")
        os.close(fd)
        os.close(held)
        links = os.stat(f"{r}/{name}").st_nlink
        assert links == 1, f"removed on {wn}, made again on {rn}: it has {links} links there"
        seen(f"{w}/{name}")
        with open(f"{w}/{name}", "rb") as f: got = f.read()
        assert got == b"new", f"removed on {wn}, made again on {rn}: {wn} reads {got!r}"
PY
# Mount B told its kernel at each open.
url=$(grep -o 'metrics on http://[^ ]*' "$CLUSTER_DIR/mount2.log" | head -1 | cut -d' ' -f3)
told=$(curl -s "$url" | awk '$1 == "t0fs_fuse_open_attr_invalidations_total" {print $2}')
[[ -n "$told" ]] && (( ${told%.*} >= 6 )) || fail "mount B's opens told the kernel ${told:-nothing} times"
log "mount B's opens told its kernel $told times that the size it cached was out of date"

# B reads A's files through the page cache unless it has a replica of its own.
if [[ "${TWO_NODES:-0}" != 1 || "${PASSTHROUGH:-on}" == off || "${REPLICAS:-2}" == 1 ]]; then
  log "a change to a file open on B reaches B's kernel at its last close, not while B reads it"
  metric_b() { curl -s "$url" | awk -v m="$1" '$1 == m {print $2}'; }
  held_since() { local n; n=$(metric_b t0fs_fuse_changes_held_back_total); (( ${n%.*} > $1 )); }
  held0=$(metric_b t0fs_fuse_changes_held_back_total)
  exec {reader}<"$MNT2/c2o/f0A"                 # B holds the file open through the page cache
  echo more >>"$MNT/c2o/f0A"                     # A grows it and closes
  wait_until 20 "B's watcher to hold the change back" held_since "${held0%.*}"
  exec {reader}<&-                              # B's last close passes it on
  grown=$((2010 + 5))
  wait_until 20 "B's stat to show the size A left" test "$(stat -c %s "$MNT2/c2o/f0A")" -eq "$grown"
  [[ "$(tail -c 5 "$MNT2/c2o/f0A")" == more ]] || fail "B reads '$(tail -c 5 "$MNT2/c2o/f0A")' at the end"
fi

log "two mounts: seed $SEED, $OPS operations; replay: TWO_MOUNTS_SEED=$SEED TWO_MOUNTS_OPS=$OPS bash $0"
python3 "$(dirname "$0")/two_mounts.py" "$MNT" "$MNT2" "$SEED" "$OPS" ||
  fail "two mounts disagree with the model (replay: TWO_MOUNTS_SEED=$SEED TWO_MOUNTS_OPS=$OPS bash $0)"
fsck_clean
log "PASS"
