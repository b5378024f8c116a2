#!/usr/bin/env python3
"""Two clients of one namespace, model-checked: seeded random operations on
two mounts of one cluster, each operation on one of them, every result
compared with a model of what the files hold.

  two_mounts.py MNT_A MNT_B SEED OPS

What must hold (docs/fuse.md, "Consistency and caching"):
- File data is close-to-open: once a writer closed a file on one mount
  (write(2), O_DIRECT or a shared mapping), an open on the other reads
  exactly the bytes the model holds, at once (read(2), O_DIRECT, or a
  mapping of the length fstat gives).
- Names and attributes changed on one mount reach the other within the
  invalidation time: after each change of a name, both mounts are polled
  until they list what the model lists (a bounded liveness wait, not a
  timing assertion); sizes, modes, link counts, mtimes set by utime and
  symlink targets are polled the same way after the operations that change
  them.
Every mismatch is a failure with the seed and the operation's number; the
last operations are printed for replay.
"""
import faulthandler
import mmap
import os
import random
import stat
import sys
import time

VERBOSE = os.environ.get("TWO_MOUNTS_VERBOSE") == "1"  # every operation as it starts
CONVERGE_S = 20  # the bound of a liveness wait (the documented time is about 1 s)
NAMES = [f"f{i}" for i in range(8)]
DIRS = ["", "d0", "d1"]
MAX_SIZE = 3 << 20  # the cluster's chunk size is 1 MiB: files span chunks
MODES = [0o600, 0o640, 0o644, 0o700, 0o755, 0o444]


def aligned(data):
    """`data` in a page-aligned buffer of whole pages (for O_DIRECT)."""
    buf = mmap.mmap(-1, (len(data) + 4095) & ~4095)
    buf[:len(data)] = data
    return memoryview(buf)[:len(data)]


class Failure(Exception):
    pass


class Node:
    """One file the model holds: hard links share it."""

    def __init__(self):
        self.data = bytearray()
        self.mode = 0o644
        self.mtime = None  # set by utime; None once the file system chooses it (a write)


class Fuzz:
    def __init__(self, mounts, seed, ops):
        self.roots = [os.path.join(m, "fz") for m in mounts]
        self.rng = random.Random(seed)
        self.seed, self.ops = seed, ops
        self.files = {}  # relative path -> Node (hard links: one Node, several paths)
        self.links = {}  # relative path -> symlink target
        self.dirs = {""}
        self.trail = []
        self.stale_stats = 0
        self.max_lag = 0.0  # the longest a change took to show on the other mount
        self.counts = {}

    # ---- helpers ----
    def path(self, side, rel):
        return os.path.join(self.roots[side], rel) if rel else self.roots[side]

    def note(self, text):
        if VERBOSE:
            print(text, file=sys.stderr, flush=True)
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

    def nlink(self, node):
        return sum(1 for v in self.files.values() if v is node)

    def names(self):
        return list(self.files) + list(self.links) + list(self.dirs)

    def listing(self, side, d):
        try:
            return sorted(os.listdir(self.path(side, d)))
        except FileNotFoundError:
            return None

    def model_listing(self, d):
        if d not in self.dirs:
            return None
        prefix = d + "/" if d else ""
        names = [p[len(prefix):] for p in self.names() if p and p.startswith(prefix)]
        return sorted(n for n in names if "/" not in n)

    def lookup(self, side, rel):
        try:
            return os.lstat(self.path(side, rel)).st_ino
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
        start = time.monotonic()
        for d in dirs:
            while (wrong := self.view(d)) is not None:
                if time.monotonic() > start + CONVERGE_S:
                    self.fail(n, f"{wrong} ({CONVERGE_S} s after the change)")
                time.sleep(0.02)
        self.max_lag = max(self.max_lag, time.monotonic() - start)

    def attrs_wrong(self, side, rel):
        """What is wrong with the attributes a stat of `rel` shows on mount
        `side` (None: nothing). An mtime the file system chose (a write) is
        not compared between the mounts: the writing mount can keep one a
        little off meta's for its cache time (a known gap)."""
        st = os.lstat(self.path(side, rel))
        if rel in self.links:
            target = os.readlink(self.path(side, rel))
            if not stat.S_ISLNK(st.st_mode) or target != self.links[rel]:
                return f"{rel} is {oct(st.st_mode)} -> {target!r}, the model a symlink to {self.links[rel]!r}"
            return None
        node = self.files[rel]
        got = (stat.S_IMODE(st.st_mode), st.st_nlink, st.st_size)
        want = (node.mode, self.nlink(node), len(node.data))
        if got != want or not stat.S_ISREG(st.st_mode):
            return f"{rel} has (mode, links, size) {(oct(got[0]), got[1], got[2])}, the model {(oct(want[0]), want[1], want[2])}"
        if node.mtime is not None and st.st_mtime_ns != node.mtime:
            return f"{rel} has mtime {st.st_mtime_ns} ns, the model {node.mtime}"
        return None

    def check_attrs(self, n, rels):
        """Polls both mounts until a stat of each of `rels` shows what the model
        holds (another mount's change arrives within the invalidation time)."""
        start = time.monotonic()
        for rel in rels:
            for side in (0, 1):
                first = True
                while (wrong := self.attrs_wrong(side, rel)) is not None:
                    if first:
                        self.stale_stats += 1
                        first = False
                    if time.monotonic() > start + CONVERGE_S:
                        self.fail(n, f"{'AB'[side]}: {wrong} ({CONVERGE_S} s after)")
                    time.sleep(0.02)
        self.max_lag = max(self.max_lag, time.monotonic() - start)

    def pick_file(self):
        d = self.rng.choice(sorted(self.dirs))
        return os.path.join(d, self.rng.choice(NAMES)) if d else self.rng.choice(NAMES)

    def pick_existing(self):
        return self.rng.choice(sorted(self.files)) if self.files else None

    def pick_free(self):
        rel = self.pick_file()
        return None if rel in self.files or rel in self.links or rel in self.dirs else rel

    # ---- operations ----
    def op_write(self, n, side):
        rel = self.pick_file()
        if rel in self.dirs or rel in self.links:
            return
        new = rel not in self.files
        trunc = not new and self.rng.random() < 0.1
        append = not new and not trunc and self.rng.random() < 0.15
        direct = not append and self.rng.random() < 0.1  # aligned offsets and sizes
        flags = os.O_RDWR | os.O_CREAT | (os.O_TRUNC if trunc else 0) | (os.O_APPEND if append else 0)
        flags |= os.O_DIRECT if direct else 0
        node = Node() if new else self.files[rel]
        model = bytearray() if new or trunc else bytearray(node.data)
        fd = os.open(self.path(side, rel), flags, 0o644)
        try:
            for _ in range(self.rng.randint(1, 3)):
                size = self.rng.choice([1, 100, 4096, 5000, 65536, 300000, 1 << 20])
                off = len(model) if append else self.rng.randrange(0, MAX_SIZE - size)
                if not append and self.rng.random() < 0.5 and len(model) > 0:
                    off = self.rng.randrange(0, len(model))  # overwrite what is there
                if direct:
                    size, off = max(4096, size & ~4095), off & ~4095
                buf = self.data(size)
                if append:
                    os.write(fd, buf)
                elif direct:
                    os.pwritev(fd, [aligned(buf)], off)
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
        node.data, node.mtime = model, None
        self.files[rel] = node
        how = ("new" if new else "O_TRUNC" if trunc else "O_APPEND" if append else "overwrite") + \
            (", O_DIRECT" if direct else "")
        self.note(f"{n}: {'AB'[side]} write {rel} ({how}) -> {len(model)} bytes")
        if new:
            self.converge(n, [os.path.dirname(rel)])

    def op_mmap(self, n, side):
        """Stores through a shared mapping, unmapped and closed: the other mount
        reads them at its next open (close-to-open, as write(2))."""
        rel = self.pick_existing()
        if rel is None or not self.files[rel].data:
            return
        node = self.files[rel]
        fd = os.open(self.path(side, rel), os.O_RDWR)
        try:
            with mmap.mmap(fd, len(node.data)) as m:
                for _ in range(self.rng.randint(1, 4)):
                    off = self.rng.randrange(len(node.data))
                    buf = self.data(self.rng.randint(1, min(70000, len(node.data) - off)))
                    m[off:off + len(buf)] = buf
                    node.data[off:off + len(buf)] = buf
                if self.rng.random() < 0.5:
                    m.flush()
        finally:
            os.close(fd)
        node.mtime = None
        self.note(f"{n}: {'AB'[side]} mmap-write {rel} ({len(node.data)} bytes)")

    def op_copy(self, n, side):
        """copy_file_range(2) from one file into another (or within one)."""
        src, dst = self.pick_existing(), self.pick_existing()
        if src is None or not self.files[src].data:
            return
        s, d = self.files[src], self.files[dst]
        off_in = self.rng.randrange(len(s.data))
        count = self.rng.randint(1, len(s.data) - off_in)
        off_out = self.rng.randrange(0, len(d.data) + 100000)
        if s is d and abs(off_in - off_out) < count:
            return  # overlapping ranges of one file: EINVAL
        self.note(f"{n}: {'AB'[side]} copy_file_range {src}[{off_in}:+{count}] -> {dst}@{off_out}")
        # Within one file through one descriptor: a second, writing open of a
        # replicated file that this mount serves by passthrough fails with
        # EBUSY (docs/fuse.md, "The kernel's rules").
        fin = os.open(self.path(side, src), os.O_RDWR if s is d else os.O_RDONLY)
        fout = fin if s is d else os.open(self.path(side, dst), os.O_WRONLY)
        try:
            # As cp(1) and shutil do: the kernel bounds a copy by the source
            # size it caches, which an open marks out of date, not refreshes.
            os.fstat(fin)
            done = 0
            while done < count:
                got = os.copy_file_range(fin, fout, count - done, off_in + done, off_out + done)
                if got == 0:
                    break
                done += got
        finally:
            os.close(fin)
            if fout != fin:
                os.close(fout)
        piece = bytes(s.data[off_in:off_in + done])
        if len(d.data) < off_out:
            d.data += bytes(off_out - len(d.data))
        d.data[off_out:off_out + done] = piece
        d.mtime = None
        if done != count:
            self.fail(n, f"{'AB'[side]}: copy_file_range copied {done} of {count} bytes")

    def op_fallocate(self, n, side):
        """posix_fallocate(3): space for a range, the size grown to its end."""
        rel = self.pick_existing()
        if rel is None:
            return
        node = self.files[rel]
        off = self.rng.randrange(0, MAX_SIZE)
        length = self.rng.randint(1, 1 << 20)
        self.note(f"{n}: {'AB'[side]} posix_fallocate {rel} {off}+{length}")
        fd = os.open(self.path(side, rel), os.O_WRONLY)
        try:
            os.posix_fallocate(fd, off, length)
        finally:
            os.close(fd)
        if len(node.data) < off + length:
            node.data += bytes(off + length - len(node.data))
            node.mtime = None
        self.check_attrs(n, [rel])

    def op_read(self, n, side):
        rel = self.pick_file()
        if rel in self.dirs:
            return
        if rel in self.links:
            got = os.readlink(self.path(side, rel))
            self.note(f"{n}: {'AB'[side]} readlink {rel}")
            if got != self.links[rel]:
                self.fail(n, f"{'AB'[side]}: readlink {rel} gives {got!r}, the model {self.links[rel]!r}")
            return
        want = self.files[rel].data if rel in self.files else None
        how = self.rng.choices(["", " O_DIRECT", " mmap"], [75, 15, 10])[0]
        direct, mapped = how == " O_DIRECT", how == " mmap"
        self.note(f"{n}: {'AB'[side]} read {rel}{how} "
                  f"(model {None if want is None else len(want)})")
        try:
            fd = os.open(self.path(side, rel), os.O_RDONLY | (os.O_DIRECT if direct else 0))
        except FileNotFoundError:
            if want is not None:
                self.fail(n, f"{'AB'[side]}: open {rel}: no such file, the model holds {len(want)} bytes")
            return
        try:
            if want is None:
                self.fail(n, f"{'AB'[side]}: opened {rel}, which the model does not have")
            got = bytearray()
            if mapped and os.fstat(fd).st_size > 0:  # the size this open sees
                with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as m:
                    got += m[:]
            elif not mapped:
                buf = mmap.mmap(-1, 1 << 20)  # page-aligned, as O_DIRECT wants
                while True:
                    count = os.preadv(fd, [buf], len(got))
                    if count == 0:
                        break
                    got += buf[:count]
                buf.close()
        finally:
            os.close(fd)
        if got != want:
            first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]),
                         min(len(got), len(want)))
            self.fail(n, f"{'AB'[side]}: {rel} read {len(got)} bytes, the model {len(want)}; "
                         f"first difference at {first} (close-to-open); " + self.afterwards(rel))
        self.check_attrs(n, [rel])

    def afterwards(self, rel):
        """What both mounts say of `rel` at once and a while after a failure (for the report)."""
        out = [f"{'AB'[side]} stat size at once {os.stat(self.path(side, rel)).st_size}" for side in (0, 1)]
        time.sleep(2)
        for side in (0, 1):
            try:
                with open(self.path(side, rel), "rb") as f:
                    data = f.read()
                out.append(f"{'AB'[side]} reads {len(data)} bytes 2 s later "
                           f"({'as the model' if data == self.files[rel].data else 'not the model'}), "
                           f"stat size {os.stat(self.path(side, rel)).st_size}")
            except OSError as e:
                out.append(f"{'AB'[side]}: {e}")
        return "; ".join(out)

    def op_truncate(self, n, side):
        rel = self.pick_existing()
        if rel is None:
            return
        length = self.rng.randrange(0, MAX_SIZE)
        os.truncate(self.path(side, rel), length)
        node = self.files[rel]
        node.data = node.data[:length] + bytes(max(0, length - len(node.data)))
        node.mtime = None
        self.note(f"{n}: {'AB'[side]} truncate {rel} {length}")

    def op_chmod(self, n, side):
        rel = self.pick_existing()
        if rel is None:
            return
        mode = self.rng.choice(MODES)
        os.chmod(self.path(side, rel), mode)
        self.files[rel].mode = mode
        self.note(f"{n}: {'AB'[side]} chmod {rel} {oct(mode)}")
        self.check_attrs(n, [rel])

    def op_utime(self, n, side):
        rel = self.pick_existing()
        if rel is None:
            return
        mtime = self.rng.randrange(10**9, 2 * 10**9) * 10**9 + self.rng.randrange(10**9)
        os.utime(self.path(side, rel), ns=(mtime, mtime))
        self.files[rel].mtime = mtime
        self.note(f"{n}: {'AB'[side]} utime {rel} {mtime}")
        self.check_attrs(n, [rel])

    def op_link(self, n, side):
        src, dst = self.pick_existing(), self.pick_free()
        if src is None or dst is None:
            return
        os.link(self.path(side, src), self.path(side, dst))
        self.files[dst] = self.files[src]
        self.note(f"{n}: {'AB'[side]} link {src} {dst}")
        self.converge(n, [os.path.dirname(dst)])
        self.check_attrs(n, [src, dst])

    def op_symlink(self, n, side):
        dst = self.pick_free()
        if dst is None:
            return
        target = f"t{self.rng.randrange(10**6)}" * self.rng.choice([1, 3, 60])
        os.symlink(target, self.path(side, dst))
        self.links[dst] = target
        self.note(f"{n}: {'AB'[side]} symlink {dst} -> {target[:20]}")
        self.converge(n, [os.path.dirname(dst)])
        self.check_attrs(n, [dst])

    def op_rename(self, n, side):
        src, dst = self.pick_file(), self.pick_file()
        if (src not in self.files and src not in self.links) or dst in self.dirs or src == dst:
            return
        os.rename(self.path(side, src), self.path(side, dst))
        replaced = self.files.get(dst)
        if src in self.files and replaced is self.files[src]:
            pass  # two links of one file: rename(2) does nothing
        else:
            self.files.pop(dst, None)
            self.links.pop(dst, None)
            if src in self.files:
                self.files[dst] = self.files.pop(src)
            else:
                self.links[dst] = self.links.pop(src)
        self.note(f"{n}: {'AB'[side]} rename {src} {dst}")
        self.converge(n, sorted({os.path.dirname(src), os.path.dirname(dst)}))
        touched = {id(self.files.get(dst)), id(replaced)}
        self.check_attrs(n, sorted(r for r, v in self.files.items() if id(v) in touched) +
                         ([dst] if dst in self.links else []))

    def op_unlink(self, n, side):
        rel = self.pick_file()
        if rel not in self.files and rel not in self.links:
            return
        os.unlink(self.path(side, rel))
        node = self.files.pop(rel, None)
        self.links.pop(rel, None)
        self.note(f"{n}: {'AB'[side]} unlink {rel}")
        self.converge(n, [os.path.dirname(rel)])
        self.check_attrs(n, [r for r, v in self.files.items() if v is node])

    def op_dir(self, n, side):
        d = self.rng.choice(DIRS[1:])
        if d in self.dirs:
            if self.model_listing(d):
                return
            os.rmdir(self.path(side, d))
            self.dirs.discard(d)
            self.note(f"{n}: {'AB'[side]} rmdir {d}")
        else:
            if d in self.files or d in self.links:
                return
            os.mkdir(self.path(side, d))
            self.dirs.add(d)
            self.note(f"{n}: {'AB'[side]} mkdir {d}")
        self.converge(n, [""])

    def op_rename_dir(self, n, side):
        """A directory renamed with what it holds (over an empty one, or to a
        free name): its files are found, read and listed under the new name."""
        src, dst = self.rng.sample(DIRS[1:], 2)
        if src not in self.dirs or dst in self.files or dst in self.links or self.model_listing(dst):
            return
        os.rename(self.path(side, src), self.path(side, dst))
        self.dirs.discard(src)
        self.dirs.add(dst)
        for table in (self.files, self.links):
            for rel in [r for r in table if r.startswith(src + "/")]:
                table[dst + rel[len(src):]] = table.pop(rel)
        self.note(f"{n}: {'AB'[side]} rename directory {src} {dst}")
        self.converge(n, ["", src, dst])
        self.check_attrs(n, sorted(r for r in list(self.files) + list(self.links) if r.startswith(dst + "/")))

    def run(self):
        os.umask(0)
        os.mkdir(self.roots[0])
        self.converge(0, [""])
        ops = [(self.op_write, 30), (self.op_read, 30), (self.op_truncate, 5), (self.op_rename, 10),
               (self.op_unlink, 7), (self.op_dir, 5), (self.op_mmap, 5), (self.op_chmod, 4),
               (self.op_utime, 4), (self.op_link, 4), (self.op_symlink, 3), (self.op_rename_dir, 3),
               (self.op_copy, 4), (self.op_fallocate, 3)]
        funcs, weights = zip(*ops)
        for n in range(1, self.ops + 1):
            op = self.rng.choices(funcs, weights)[0]
            side = self.rng.randrange(2)
            try:
                op(n, side)
            except OSError as e:
                self.fail(n, f"{op.__name__} on {'AB'[side]}: {e}")
            self.counts[op.__name__] = self.counts.get(op.__name__, 0) + 1
        # Every file and link, on both mounts, once more.
        for rel in sorted(self.files):
            for side in (0, 1):
                with open(self.path(side, rel), "rb") as f:
                    if f.read() != self.files[rel].data:
                        self.fail(self.ops, f"{'AB'[side]}: {rel} differs from the model at the end")
        self.check_attrs(self.ops, sorted(self.files) + sorted(self.links))


def main():
    faulthandler.enable()  # a SIGBUS in a mapping shows where
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    a, b, seed, ops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    fuzz = Fuzz([a, b], seed, ops)
    try:
        fuzz.run()
    except Failure as f:
        print(f"FAIL: {f}", file=sys.stderr)
        sys.exit(1)
    total = sum(len(v.data) for v in {id(v): v for v in fuzz.files.values()}.values())
    print(f"two mounts: {ops} operations (seed {seed}) {dict(sorted(fuzz.counts.items()))}; "
          f"{len(fuzz.files)} files, {total} bytes at the end; "
          f"{fuzz.stale_stats} stat(s) showed old attributes before the change arrived; "
          f"the longest wait for a change to show on both mounts {fuzz.max_lag:.2f} s")


if __name__ == "__main__":
    main()
