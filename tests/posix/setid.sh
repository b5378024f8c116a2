#!/usr/bin/env bash
# Security and everyday writes, with passthrough on (PASSTHROUGH=on, the
# default) and off, compared with what ext4 does in a plain directory:
#  - a write by a user who is not the owner (no CAP_FSETID) clears setuid
#    and setgid (with group execute) also when the kernel serves the write
#    by passthrough; root's writes keep them;
#  - open r+b, truncate(0), write, close (Python's way) keeps the new data
#    and close succeeds; with another reader open meanwhile too.
source "$(dirname "$0")/../lib/cluster.sh"
source "$(dirname "$0")/../lib/passthrough.sh"
pt_cluster_start --allow-other true
chmod 755 "$CLUSTER_DIR"  # the unprivileged writer must reach the mount
REF="$CLUSTER_DIR/ref"
mkdir -p "$REF"
chmod 777 "$MNT" "$REF"

run_case() { # run_case DIR: prints one line per check
  python3 - "$1" <<'PY'
import os, sys
d = sys.argv[1]
out = []
for name, mode in [("suid", 0o4777), ("sgid", 0o2777), ("sgid-noexec", 0o2767)]:
    p = os.path.join(d, name)
    with open(p, "wb") as f:
        f.write(b"0123456789")
    os.chmod(p, mode)
    pid = os.fork()
    if pid == 0:
        os.setgid(1000); os.setuid(1000)
        fd = os.open(p, os.O_WRONLY)
        os.pwrite(fd, b"x", 3)
        os.close(fd)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 0, f"unprivileged writer of {p} failed ({status})"
    out.append(f"{name}: after another user's write {os.stat(p).st_mode & 0o7777:o}")
    # root (CAP_FSETID) keeps the bits
    os.chmod(p, mode)
    fd = os.open(p, os.O_WRONLY); os.pwrite(fd, b"y", 4); os.close(fd)
    out.append(f"{name}: after root's write {os.stat(p).st_mode & 0o7777:o}")
p = os.path.join(d, "py")
with open(p, "wb") as f:
    f.write(b"old contents " * 1000)
reader = open(p, "rb")
with open(p, "r+b") as f:
    f.truncate(0)
    f.write(b"new")
out.append(f"truncate(0)+write: {open(p, 'rb').read()!r}")
reader.close()
with open(p, "r+b") as f:
    f.truncate(0)
    f.write(b"again")
out.append(f"truncate(0)+write alone: {open(p, 'rb').read()!r}")
print("\n".join(out))
PY
}

run_case "$REF" >"$CLUSTER_DIR/want.txt"
run_case "$MNT" >"$CLUSTER_DIR/got.txt"
cat "$CLUSTER_DIR/got.txt" >&2
diff -u "$CLUSTER_DIR/want.txt" "$CLUSTER_DIR/got.txt" || fail "t0fs differs from the local file system"
pt_check_used
log "PASS"
