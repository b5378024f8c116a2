#!/usr/bin/env python3
"""Concurrent churn of two mounts over a few shared files (churn.sh).

Threads write (plain, O_TRUNC, O_APPEND), read and truncate the same few
files through both mounts at once, with sizes that cross chunk boundaries.
Concurrent writers have no single right outcome, so the check is what must
hold whatever the interleaving: every error is one the mode allows, and
afterwards both mounts read every file byte for byte alike.

usage: churn.py MOUNT_A MOUNT_B SECONDS THREADS SEED ALLOWED
  ALLOWED: comma-separated errno names a call may fail with (ENOENT is
  always allowed: a file before its first create).
"""
import errno
import os
import random
import sys
import threading
import time

a, b = sys.argv[1], sys.argv[2]
seconds, threads, seed = float(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
allowed = {"ENOENT"} | {e for e in sys.argv[6].split(",") if e}
print(f"churn: seed {seed}, {threads} threads, {seconds:.0f} s, allowed {sorted(allowed)}", flush=True)
roots = [os.path.join(m, "churn") for m in (a, b)]
os.makedirs(roots[0], exist_ok=True)
deadline = time.monotonic() + 20
while not os.path.isdir(roots[1]):
    assert time.monotonic() < deadline, "the churn directory never reached the second mount"
    time.sleep(0.02)
names = [f"f{i}" for i in range(3)]
ops, errors, bad = {}, {}, []
lock = threading.Lock()
stop = time.monotonic() + seconds


def count(table, key):
    with lock:
        table[key] = table.get(key, 0) + 1


def worker(index):
    rng = random.Random(seed * 1000 + index)
    while time.monotonic() < stop:
        mount = rng.randrange(2)
        path = os.path.join(roots[mount], rng.choice(names))
        op = rng.choice(("write", "write", "read", "truncate"))
        try:
            if op == "write":
                flags = os.O_CREAT | os.O_RDWR
                kind = rng.random()
                if kind < 0.15:
                    flags |= os.O_TRUNC
                elif kind < 0.25:
                    flags |= os.O_APPEND
                fd = os.open(path, flags, 0o644)
                try:
                    data = rng.randbytes(rng.choice((10, 5000, 300000)))
                    os.pwrite(fd, data, rng.randrange(0, 2 << 20))
                finally:
                    os.close(fd)
            elif op == "read":
                with open(path, "rb") as f:
                    f.read()
            else:
                os.truncate(path, rng.randrange(0, 3 << 20))
            count(ops, op)
        except OSError as e:
            name = errno.errorcode.get(e.errno, str(e.errno))
            count(errors, f"{op}:{name}")
            if name not in allowed:
                with lock:
                    bad.append(f"mount {'AB'[mount]} {op} {path}: {e}")


workers = [threading.Thread(target=worker, args=(i,)) for i in range(threads)]
for t in workers:
    t.start()
for t in workers:
    t.join()
print(f"churn: ops {dict(sorted(ops.items()))}", flush=True)
print(f"churn: errors {dict(sorted(errors.items()))}", flush=True)
if bad:
    print(f"FAIL: {len(bad)} calls failed with an error this mode does not allow (seed {seed}); first:",
          file=sys.stderr)
    for line in bad[:10]:
        print(f"  {line}", file=sys.stderr)
    sys.exit(1)
if not ops.get("write") or not ops.get("truncate"):
    print(f"FAIL: the churn wrote or truncated nothing (seed {seed})", file=sys.stderr)
    sys.exit(1)

# Quiet now: both mounts read every file alike (close-to-open: each open
# after the last close sees the last commit).
for name in names:
    seen = []
    for root in roots:
        try:
            with open(os.path.join(root, name), "rb") as f:
                seen.append(f.read())
        except FileNotFoundError:
            seen.append(None)
    if seen[0] != seen[1]:
        sizes = [None if s is None else len(s) for s in seen]
        first = next((i for i, (x, y) in enumerate(zip(seen[0] or b"", seen[1] or b"")) if x != y), None)
        print(f"FAIL: {name} reads differently on the two mounts after the churn (sizes {sizes}, "
              f"first difference at {first}; seed {seed})", file=sys.stderr)
        sys.exit(1)
print("churn: both mounts read every file alike", flush=True)
