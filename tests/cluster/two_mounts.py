#!/usr/bin/env python3
"""Two clients of one namespace, model-checked: seeded random operations on
two mounts of one cluster, each operation on one of them, every result
compared with a model of what the files hold.

  two_mounts.py MNT_A MNT_B SEED OPS

What must hold (docs/fuse.md, "Kernel caches"):
- File data is close-to-open: once a writer closed a file on one mount, an
  open on the other reads exactly the bytes the model holds, at once.
- Names and attributes changed on one mount reach the other within the
  invalidation time: after each change of a name, both mounts are polled
  until they list what the model lists (a bounded liveness wait, not a
  timing assertion); a stat whose size is still the old one is polled the
  same way.
Every mismatch is a failure with the seed and the operation's number; the
last operations are printed for replay.
"""
import os
import random
import sys
import time

CONVERGE_S = 20  # the bound of a liveness wait (the documented time is about 1 s)
NAMES = [f"f{i}" for i in range(8)]
DIRS = ["", "d0", "d1"]
MAX_SIZE = 3 << 20  # the cluster's chunk size is 1 MiB: files span chunks


class Failure(Exception):
    pass


class Fuzz:
    def __init__(self, mounts, seed, ops):
        self.roots = [os.path.join(m, "fz") for m in mounts]
        self.rng = random.Random(seed)
        self.seed, self.ops = seed, ops
        self.files = {}  # relative path -> bytearray
        self.dirs = {""}
        self.trail = []
        self.stale_stats = 0
        self.counts = {}

    # ---- helpers ----
    def path(self, side, rel):
        return os.path.join(self.roots[side], rel) if rel else self.roots[side]

    def note(self, text):
        self.trail.append(text)
        del self.trail[:-int(os.environ.get("TWO_MOUNTS_TRAIL", "12"))]

    def fail(self, n, text):
        raise Failure(f"op {n} (seed {self.seed}): {text}\nlast operations:\n  " + "\n  ".join(self.trail))

    def data(self, size):
        # Random runs of a byte: cheap to make, and a misplaced block shows.
        out = bytearray()
        while len(out) < size:
            run = min(size - len(out), self.rng.choice([1, 7, 512, 4096, 65536]))
            out += bytes([self.rng.randrange(256)]) * run
        return out

    def listing(self, side, d):
        try:
            return sorted(os.listdir(self.path(side, d)))
        except FileNotFoundError:
            return None

    def model_listing(self, d):
        if d not in self.dirs:
            return None
        prefix = d + "/" if d else ""
        names = [p[len(prefix):] for p in list(self.files) + list(self.dirs) if p and p.startswith(prefix)]
        return sorted(n for n in names if "/" not in n)

    def lookup(self, side, rel):
        try:
            return os.stat(self.path(side, rel)).st_ino
        except FileNotFoundError:
            return None

    def view(self, d):
        """What is wrong with the mounts' view of directory `d` (None: nothing):
        their listings, and what a lookup of each name the model may hold there
        finds (a name the kernel cached answers a lookup without asking, and
        an open(O_CREAT) of a stale name would open another file)."""
        want = self.model_listing(d)
        for side in (0, 1):
            got = self.listing(side, d)
            if got != want:
                return f"mount {'AB'[side]} lists {d or '/'} as {got}, the model {want}"
        if want is None:
            return None
        for name in NAMES + DIRS[1:]:
            rel = os.path.join(d, name) if d else name
            a, b = self.lookup(0, rel), self.lookup(1, rel)
            if (a is not None, b is not None) != (name in want, name in want) or a != b:
                return f"a lookup of {rel} finds inode {a} on A, {b} on B; the model {'has' if name in want else 'has no'} {rel}"
        return None

    def converge(self, n, dirs):
        """Polls both mounts until each directory in `dirs` looks as the model says."""
        deadline = time.monotonic() + CONVERGE_S
        for d in dirs:
            while (wrong := self.view(d)) is not None:
                if time.monotonic() > deadline:
                    self.fail(n, f"{wrong} ({CONVERGE_S} s after the change)")
                time.sleep(0.02)

    def pick_file(self):
        d = self.rng.choice(sorted(self.dirs))
        return os.path.join(d, self.rng.choice(NAMES)) if d else self.rng.choice(NAMES)

    # ---- operations ----
    def op_write(self, n, side):
        rel = self.pick_file()
        if rel in self.dirs:
            return
        new = rel not in self.files
        trunc = not new and self.rng.random() < 0.1
        append = not new and not trunc and self.rng.random() < 0.15
        flags = os.O_RDWR | os.O_CREAT | (os.O_TRUNC if trunc else 0) | (os.O_APPEND if append else 0)
        model = bytearray() if new or trunc else bytearray(self.files[rel])
        fd = os.open(self.path(side, rel), flags, 0o644)
        try:
            for _ in range(self.rng.randint(1, 3)):
                size = self.rng.choice([1, 100, 4096, 5000, 65536, 300000, 1 << 20])
                off = len(model) if append else self.rng.randrange(0, MAX_SIZE - size)
                if not append and self.rng.random() < 0.5 and len(model) > 0:
                    off = self.rng.randrange(0, len(model))  # overwrite what is there
                buf = self.data(size)
                if append:
                    os.write(fd, buf)
                else:
                    os.pwrite(fd, buf, off)
                if len(model) < off:
                    model += bytes(off - len(model))
                model[off:off + size] = buf
            if not append and self.rng.random() < 0.15:
                length = self.rng.randrange(0, MAX_SIZE)
                os.ftruncate(fd, length)
                model = model[:length] + bytes(max(0, length - len(model)))
            if self.rng.random() < 0.2:
                os.fsync(fd)
        finally:
            os.close(fd)
        self.files[rel] = model
        how = "new" if new else "O_TRUNC" if trunc else "O_APPEND" if append else "overwrite"
        self.note(f"{n}: {'AB'[side]} write {rel} ({how}) -> {len(model)} bytes")
        if new:
            self.converge(n, [os.path.dirname(rel)])

    def op_read(self, n, side):
        rel = self.pick_file()
        if rel in self.dirs:
            return
        want = self.files.get(rel)
        self.note(f"{n}: {'AB'[side]} read {rel} (model {None if want is None else len(want)})")
        try:
            fd = os.open(self.path(side, rel), os.O_RDONLY)
        except FileNotFoundError:
            if want is not None:
                self.fail(n, f"{'AB'[side]}: open {rel}: no such file, the model holds {len(want)} bytes")
            return
        try:
            if want is None:
                self.fail(n, f"{'AB'[side]}: opened {rel}, which the model does not have")
            got = bytearray()
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                got += chunk
        finally:
            os.close(fd)
        if got != want:
            first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                         min(len(got), len(want)))
            self.fail(n, f"{'AB'[side]}: {rel} read {len(got)} bytes, the model {len(want)}; "
                         f"first difference at {first} (close-to-open); " + self.afterwards(rel))
        self.check_size(n, side, rel)

    def afterwards(self, rel):
        """What both mounts say of `rel` at once and a while after a failure (for the report)."""
        out = [f"{'AB'[side]} stat size at once {os.stat(self.path(side, rel)).st_size}" for side in (0, 1)]
        time.sleep(2)
        for side in (0, 1):
            try:
                with open(self.path(side, rel), "rb") as f:
                    data = f.read()
                out.append(f"{'AB'[side]} reads {len(data)} bytes 2 s later "
                           f"({'as the model' if data == self.files.get(rel) else 'not the model'}), "
                           f"stat size {os.stat(self.path(side, rel)).st_size}")
            except OSError as e:
                out.append(f"{'AB'[side]}: {e}")
        return "; ".join(out)

    def check_size(self, n, side, rel):
        want = len(self.files[rel])
        deadline = time.monotonic() + CONVERGE_S
        first = True
        while os.stat(self.path(side, rel)).st_size != want:
            if first:
                self.stale_stats += 1
                first = False
            if time.monotonic() > deadline:
                self.fail(n, f"{'AB'[side]}: stat {rel} size {os.stat(self.path(side, rel)).st_size}, "
                             f"the model {want} ({CONVERGE_S} s after)")
            time.sleep(0.02)

    def op_truncate(self, n, side):
        rel = self.pick_file()
        if rel not in self.files:
            return
        length = self.rng.randrange(0, MAX_SIZE)
        os.truncate(self.path(side, rel), length)
        m = self.files[rel]
        self.files[rel] = m[:length] + bytes(max(0, length - len(m)))
        self.note(f"{n}: {'AB'[side]} truncate {rel} {length}")

    def op_rename(self, n, side):
        src, dst = self.pick_file(), self.pick_file()
        if src not in self.files or dst in self.dirs or src == dst:
            return
        os.rename(self.path(side, src), self.path(side, dst))
        self.files[dst] = self.files.pop(src)
        self.note(f"{n}: {'AB'[side]} rename {src} {dst}")
        self.converge(n, sorted({os.path.dirname(src), os.path.dirname(dst)}))

    def op_unlink(self, n, side):
        rel = self.pick_file()
        if rel not in self.files:
            return
        os.unlink(self.path(side, rel))
        del self.files[rel]
        self.note(f"{n}: {'AB'[side]} unlink {rel}")
        self.converge(n, [os.path.dirname(rel)])

    def op_dir(self, n, side):
        d = self.rng.choice(DIRS[1:])
        if d in self.dirs:
            if self.model_listing(d):
                return
            os.rmdir(self.path(side, d))
            self.dirs.discard(d)
            self.note(f"{n}: {'AB'[side]} rmdir {d}")
        else:
            if d in self.files:
                return
            os.mkdir(self.path(side, d))
            self.dirs.add(d)
            self.note(f"{n}: {'AB'[side]} mkdir {d}")
        self.converge(n, [""])

    def run(self):
        os.mkdir(self.roots[0])
        self.converge(0, [""])
        ops = [(self.op_write, 30), (self.op_read, 30), (self.op_truncate, 6), (self.op_rename, 12),
               (self.op_unlink, 8), (self.op_dir, 6)]
        funcs, weights = zip(*ops)
        for n in range(1, self.ops + 1):
            op = self.rng.choices(funcs, weights)[0]
            side = self.rng.randrange(2)
            try:
                op(n, side)
            except OSError as e:
                self.fail(n, f"{op.__name__} on {'AB'[side]}: {e}")
            self.counts[op.__name__] = self.counts.get(op.__name__, 0) + 1
        # Every file, on both mounts, once more.
        for rel in sorted(self.files):
            for side in (0, 1):
                with open(self.path(side, rel), "rb") as f:
                    if f.read() != self.files[rel]:
                        self.fail(self.ops, f"{'AB'[side]}: {rel} differs from the model at the end")


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    a, b, seed, ops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    fuzz = Fuzz([a, b], seed, ops)
    try:
        fuzz.run()
    except Failure as f:
        print(f"FAIL: {f}", file=sys.stderr)
        sys.exit(1)
    total = sum(len(v) for v in fuzz.files.values())
    print(f"two mounts: {ops} operations (seed {seed}) {dict(sorted(fuzz.counts.items()))}; "
          f"{len(fuzz.files)} files, {total} bytes at the end; "
          f"{fuzz.stale_stats} stat(s) showed an old size before the change arrived")


if __name__ == "__main__":
    main()
