"""The t0fs Python module against a live cluster and its mount (python_api.sh).

Every check compares the module with the mount (the kernel's view through
`t0fs mount`) or with an expected value; contents are random from --seed.
"""

import argparse
import contextlib
import errno
import importlib.util
import io
import os
import random
import stat
import sys
import threading
import time

import numpy as np
import torch
import torch.utils.data

import t0fs
import t0fs.pytorch

MIB = 1 << 20


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def eventually(cond, what, timeout=10.0):
    """cond() must become true: the mount sees another client's change (this
    module is one) once it heard of it from meta, within about one
    change-interval (docs/fuse.md, "Consistency and caching")."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} (not within {timeout:.0f} s)")
        time.sleep(0.05)


def expect_oserror(err, path, fn, *args):
    """fn(*args) must raise OSError with errno `err` naming `path`."""
    try:
        fn(*args)
    except OSError as e:
        check(e.errno == err, f"{fn.__name__}{args}: errno {e.errno} ({e}), want {errno.errorcode[err]}")
        check(e.filename == path, f"{fn.__name__}{args}: filename {e.filename!r}, want {path!r}")
        return e
    raise AssertionError(f"{fn.__name__}{args} did not raise {errno.errorcode[err]}")


def test_connect(args):
    by_dir = t0fs.connect(cluster_dir=args.cluster_dir)
    check(by_dir.stat("/").st_ino == 1, "root inode via cluster_dir")
    by_dir.close()
    fs = t0fs.connect(args.meta, secret_file=args.secret_file, name="python_api test")
    check(fs.local_node != 0, "a data node on this host")
    try:
        t0fs.connect(args.meta, secret="00" * 32, retry_timeout=2)
        raise AssertionError("a wrong secret was accepted")
    except PermissionError as e:
        log(f"wrong secret refused: {e}")
    return fs


def test_files(fs, rng, mnt):
    fs.makedirs("/py/a/b", exist_ok=True)
    check(os.path.isdir(f"{mnt}/py/a/b"), "makedirs shows on the mount")

    # Module writes, mount reads: 2.5 chunks, in odd-sized writes.
    data = rng.randbytes(2 * MIB + MIB // 2 + 123)
    with fs.open("/py/a/one.bin", "wb") as f:
        check(isinstance(f, io.RawIOBase), "open returns an io.RawIOBase")
        pos = 0
        while pos < len(data):
            n = rng.randint(1, 300_000)
            check(f.write(data[pos:pos + n]) == len(data[pos:pos + n]), "short write")
            pos += n
        f.fsync()
    with open(f"{mnt}/py/a/one.bin", "rb") as f:
        check(f.read() == data, "module write != mount read")
    st, mst = fs.stat("/py/a/one.bin"), os.stat(f"{mnt}/py/a/one.bin")
    for field in ("st_ino", "st_mode", "st_size", "st_nlink", "st_uid", "st_gid", "st_mtime_ns"):
        check(getattr(st, field) == getattr(mst, field),
              f"stat {field}: module {getattr(st, field)} mount {getattr(mst, field)}")
    check(stat.S_ISREG(st.st_mode) and st.st_size == len(data), "stat of a file")

    layout = fs.layout("/py/a/one.bin")
    check(layout["chunk_size"] == MIB and len(layout["chunks"]) == 3, f"layout: {layout}")
    check(all(r["local"] and r["state"] == "healthy" for c in layout["chunks"] for r in c["replicas"]),
          f"replicas local and healthy: {layout}")

    # Objectives, as `t0fs objective get/set` show and set them.
    before = fs.objective("/py/a")
    check(before.startswith("replicas=1"), f"objective: {before}")
    recorded, changed = fs.set_objective("/py/a", "replicas=1 protect=replicas:2 within=1h")
    check("protect=replicas:2" in recorded and "within=" in recorded and changed >= 2,
          f"set_objective: {recorded}, {changed} changed")
    check("protect=replicas:2" in fs.objective("/py/a/one.bin"),
          f"recursive: the file below took the objective: {fs.objective('/py/a/one.bin')} vs {recorded}")
    for bad in ("replicas=banana", "", "colour=blue"):
        try:
            fs.set_objective("/py/a", bad)
            check(False, f"set_objective {bad!r} accepted")
        except OSError as e:
            check(e.errno == errno.EINVAL, f"set_objective {bad!r}: {e}")
    check(fs.objective("/py/a") == recorded, "a refused setting changed nothing")
    recorded, _ = fs.set_objective("/py/a", "sync")
    check(recorded == before, f"sync goes back: {recorded} vs {before}")

    # Mount writes, module reads (whole, buffered, zero-copy into numpy, pread).
    data2 = rng.randbytes(MIB + 777)
    with open(f"{mnt}/py/a/two.bin", "wb") as f:
        f.write(data2)
    check(fs.read_bytes("/py/a/two.bin") == data2, "mount write != module read")
    with fs.open("/py/a/two.bin", "rb", buffering=-1) as f:
        check(isinstance(f, io.BufferedReader), "buffering=-1 gives a BufferedReader")
        check(f.read(10) + f.read(5000) + f.read() == data2, "buffered reads")
    arr = np.zeros(len(data2) + 10, dtype=np.uint8)
    with fs.open("/py/a/two.bin") as f:
        check(f.readinto(memoryview(arr)[5:]) == len(data2), "readinto count")
        check(arr[5:-5].tobytes() == data2 and not arr[:5].any() and not arr[-5:].any(), "readinto numpy")
        check(f.readinto(bytearray(10)) == 0, "readinto at EOF")
        floats = np.empty(1000, dtype=np.float32)
        check(f.preadinto(floats, 8) == 4000, "preadinto a float32 array")
        check(floats.tobytes() == data2[8:4008], "preadinto a float32 array: content")
        check(f.pread(100, MIB) == data2[MIB:MIB + 100], "pread")
        check(f.seek(-7, io.SEEK_END) == len(data2) - 7 and f.read() == data2[-7:], "seek from end")
        f.seek(MIB - 3)
        check(f.read(10) == data2[MIB - 3:MIB + 7], "read across a chunk boundary")
        try:
            f.write(b"x")
            raise AssertionError("write on a read-only file")
        except io.UnsupportedOperation:
            pass

    # r+b, pwrite, append, truncate; seen through the mount.
    with fs.open("/py/a/two.bin", "r+b") as f:
        f.pwrite(b"HEAD", 0)
        f.seek(10)
        f.write(b"MID")
        f.truncate(MIB + 100)
    with fs.open("/py/a/two.bin", "ab") as f:
        check(f.tell() == MIB + 100, "append starts at the end")
        f.write(b"TAIL")
    want = b"HEAD" + data2[4:10] + b"MID" + data2[13:MIB + 100] + b"TAIL"
    with open(f"{mnt}/py/a/two.bin", "rb") as f:
        check(f.read() == want, "r+b/append/truncate through the mount")
    fs.write_bytes("/py/a/over.bin", rng.randbytes(5000))
    fs.write_bytes("/py/a/over.bin", b"short")  # "wb" truncates
    with open(f"{mnt}/py/a/over.bin", "rb") as f:
        check(f.read() == b"short", "wb over a longer file")
    with fs.open("/py/a/new.log", "ab") as f:  # "ab" creates
        f.write(b"1")
    with fs.open("/py/a/new.log", "ab") as f:
        f.write(b"2")
    check(fs.read_bytes("/py/a/new.log") == b"12", "ab creates, then appends")
    fs.remove("/py/a/over.bin")
    fs.remove("/py/a/new.log")
    fs.truncate("/py/a/two.bin", 5)
    eventually(lambda: os.path.getsize(f"{mnt}/py/a/two.bin") == 5, "Client.truncate")
    fs.chmod("/py/a/two.bin", 0o604)
    eventually(lambda: stat.S_IMODE(os.stat(f"{mnt}/py/a/two.bin").st_mode) == 0o604, "Client.chmod")
    check(stat.S_ISREG(fs.stat("/py/a/two.bin").st_mode), "chmod keeps the file type")

    # Text mode, x mode.
    with fs.open("/py/a/note.txt", "x", encoding="utf-8") as f:
        f.write("grüße\n")
    with open(f"{mnt}/py/a/note.txt", encoding="utf-8") as f:
        check(f.read() == "grüße\n", "text mode")

    # listdir/scandir vs the mount, both ways.
    with open(f"{mnt}/py/a/from_mount", "wb"):
        pass
    names = sorted(fs.listdir("/py/a"))
    check(names == sorted(os.listdir(f"{mnt}/py/a")), f"listdir {names} vs mount")
    check(names == ["b", "from_mount", "note.txt", "one.bin", "two.bin"], f"listdir {names}")
    entries = {e.name: e for e in fs.scandir("/py/a")}
    check(entries["b"].is_dir() and entries["one.bin"].is_file(), "scandir types")
    check(entries["one.bin"].stat().st_size == len(data), "scandir stat")
    check(entries["one.bin"].path == "/py/a/one.bin", "scandir path")

    # Symlinks, hard links, xattrs: both ways.
    fs.symlink("one.bin", "/py/a/sym")
    check(os.readlink(f"{mnt}/py/a/sym") == "one.bin", "symlink seen on the mount")
    check(stat.S_ISLNK(fs.stat("/py/a/sym").st_mode), "stat does not follow symlinks")
    os.symlink("../x", f"{mnt}/py/a/sym2")
    check(fs.readlink("/py/a/sym2") == "../x", "mount symlink read by the module")
    fs.link("/py/a/one.bin", "/py/a/hard")
    check(os.stat(f"{mnt}/py/a/hard").st_ino == fs.stat("/py/a/one.bin").st_ino, "hard link")
    check(fs.stat("/py/a/one.bin").st_nlink == 2, "nlink after link")
    fs.setxattr("/py/a/one.bin", "user.origin", b"python")
    check(os.getxattr(f"{mnt}/py/a/one.bin", "user.origin") == b"python", "xattr seen on the mount")
    os.setxattr(f"{mnt}/py/a/one.bin", "user.by", b"mount")
    check(fs.getxattr("/py/a/one.bin", "user.by") == b"mount", "mount xattr read by the module")
    check(sorted(fs.listxattr("/py/a/one.bin")) == ["user.by", "user.origin"], "listxattr")
    expect_oserror(errno.EEXIST, "/py/a/one.bin", fs.setxattr, "/py/a/one.bin", "user.by", b"x",
                   os.XATTR_CREATE)
    fs.removexattr("/py/a/one.bin", "user.by")
    expect_oserror(errno.ENODATA, "/py/a/one.bin", fs.getxattr, "/py/a/one.bin", "user.by")
    for name in ("sym", "sym2", "hard"):
        fs.remove(f"/py/a/{name}")

    # rename/remove through the module, seen through the mount and back.
    fs.rename("/py/a/one.bin", "/py/a/b/moved.bin")
    eventually(lambda: not os.path.exists(f"{mnt}/py/a/one.bin"), "renamed away on the mount")
    with open(f"{mnt}/py/a/b/moved.bin", "rb") as f:
        check(f.read() == data, "renamed content on the mount")
    fs.rename("/py/a/two.bin", "/py/a/b/moved.bin")  # replaces, as rename(2)
    eventually(lambda: os.path.getsize(f"{mnt}/py/a/b/moved.bin") == 5, "rename replaces")
    os.rename(f"{mnt}/py/a/from_mount", f"{mnt}/py/a/b/m2")
    check(fs.exists("/py/a/b/m2") and not fs.exists("/py/a/from_mount"), "mount rename seen by module")
    fs.remove("/py/a/b/m2")
    eventually(lambda: not os.path.exists(f"{mnt}/py/a/b/m2"), "remove seen on the mount")
    os.remove(f"{mnt}/py/a/note.txt")
    check(not fs.exists("/py/a/note.txt"), "mount remove seen by module")
    check(sorted(fs.listdir("/py/a/b")) == sorted(os.listdir(f"{mnt}/py/a/b")) == ["moved.bin"],
          "final listdir")
    fs.remove("/py/a/b/moved.bin")
    fs.rmdir("/py/a/b")
    eventually(lambda: not os.path.exists(f"{mnt}/py/a/b"), "rmdir seen on the mount")
    log("files: write/read/stat/listdir/rename/remove agree with the mount")


def test_errors(fs, mnt):
    fs.makedirs("/err/full", exist_ok=True)
    fs.write_bytes("/err/full/f", b"x")
    e = expect_oserror(errno.ENOENT, "/err/nope", fs.stat, "/err/nope")
    check(isinstance(e, FileNotFoundError), "ENOENT is FileNotFoundError")
    expect_oserror(errno.ENOENT, "/err/nope", fs.open, "/err/nope", "rb")
    expect_oserror(errno.ENOENT, "/err/nope/x", fs.open, "/err/nope/x", "wb")
    expect_oserror(errno.ENOENT, "/err/nope", fs.remove, "/err/nope")
    expect_oserror(errno.ENOENT, "/err/nope", fs.listdir, "/err/nope")
    e = expect_oserror(errno.EEXIST, "/err/full", fs.mkdir, "/err/full")
    check(isinstance(e, FileExistsError), "EEXIST is FileExistsError")
    expect_oserror(errno.EEXIST, "/err/full/f", fs.open, "/err/full/f", "xb")
    expect_oserror(errno.EEXIST, "/err/full", fs.makedirs, "/err/full")
    e = expect_oserror(errno.EISDIR, "/err/full", fs.open, "/err/full", "rb")
    check(isinstance(e, IsADirectoryError), "EISDIR is IsADirectoryError")
    expect_oserror(errno.EISDIR, "/err/full", fs.open, "/err/full", "wb")
    expect_oserror(errno.EISDIR, "/err/full", fs.remove, "/err/full")
    e = expect_oserror(errno.ENOTEMPTY, "/err/full", fs.rmdir, "/err/full")
    check(isinstance(e, OSError) and e.strerror.startswith(os.strerror(errno.ENOTEMPTY)), f"strerror: {e}")
    expect_oserror(errno.ENOTDIR, "/err/full/f", fs.listdir, "/err/full/f")
    expect_oserror(errno.ENOTDIR, "/err/full/f", fs.rmdir, "/err/full/f")
    expect_oserror(errno.ENOENT, "/err/nope", fs.rename, "/err/nope", "/err/other")
    # The same errnos as the kernel gives on the mount.
    for kernel_fn, module_fn, path in ((os.stat, fs.stat, "nope"), (os.rmdir, fs.rmdir, "full"),
                                       (os.mkdir, fs.mkdir, "full"), (os.listdir, fs.listdir, "full/f"),
                                       (os.remove, fs.remove, "full")):
        try:
            kernel_fn(f"{mnt}/err/{path}")
            raise AssertionError(f"{kernel_fn.__name__} {path} succeeded on the mount")
        except OSError as kernel:
            expect_oserror(kernel.errno, f"/err/{path}", module_fn, f"/err/{path}")
    fs.remove("/err/full/f")
    fs.rmdir("/err/full")
    fs.rmdir("/err")
    log("errors: ENOENT, EEXIST, EISDIR, ENOTEMPTY, ENOTDIR as OSError subclasses with the path")


def model_equal(a, b):
    check(a.keys() == b.keys(), f"state keys {a.keys()} vs {b.keys()}")
    for k in a:
        check(torch.equal(a[k], b[k]), f"tensor {k} differs")


def test_checkpoints(fs, mnt, seed):
    torch.manual_seed(seed)
    fs.makedirs("/ckpt", exist_ok=True)
    model = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    # Module save, mount load.
    t0fs.pytorch.save_checkpoint(model, "/ckpt/a.pt", client=fs)
    check(fs.listdir("/ckpt") == ["a.pt"], f"no temporary left: {fs.listdir('/ckpt')}")
    with open(f"{mnt}/ckpt/a.pt", "rb") as f:
        model_equal(model.state_dict(), torch.load(f))
    # Plain torch.save/torch.load on raw module files.
    with fs.open("/ckpt/raw.pt", "wb") as f:
        torch.save({"w": model[0].weight}, f)
    with fs.open("/ckpt/raw.pt", "rb") as f:
        check(torch.equal(torch.load(f)["w"], model[0].weight), "torch.load on a raw t0fs.File")
    # Mount save, module load into a fresh model.
    other = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    torch.save(other.state_dict(), f"{mnt}/ckpt/b.pt")
    fresh = torch.nn.Sequential(torch.nn.Linear(64, 32), torch.nn.ReLU(), torch.nn.Linear(32, 4))
    t0fs.pytorch.load_checkpoint("/ckpt/b.pt", client=fs, model=fresh)
    model_equal(other.state_dict(), fresh.state_dict())
    x = torch.randn(5, 64)
    check(torch.equal(other(x), fresh(x)), "loaded model computes the same")
    # Overwrite: the new checkpoint replaces the old one whole.
    t0fs.pytorch.save_checkpoint(other, "/ckpt/a.pt", client=fs)
    model_equal(other.state_dict(), t0fs.pytorch.load_checkpoint("/ckpt/a.pt", client=fs))
    for name in fs.listdir("/ckpt"):
        fs.remove(f"/ckpt/{name}")
    log("checkpoints: module <-> mount, torch.equal")


SAMPLE = 4096 + 17  # not a multiple of the block size


def test_dataset(fs, rng):
    fs.makedirs("/train/sub", exist_ok=True)
    expected = {}
    for i in range(24):
        content = i.to_bytes(4, "little") + rng.randbytes(SAMPLE - 4)
        path = f"/train/{i:03d}.bin" if i % 3 else f"/train/sub/{i:03d}.bin"
        fs.write_bytes(path, content)
        expected[i] = content
    fs.write_bytes("/train/README", b"not a sample")
    fs.symlink("../001.bin", "/train/sub/link.bin")  # not a regular file: not a sample

    def decode(data):
        return torch.frombuffer(bytearray(data), dtype=torch.uint8)

    flat = t0fs.pytorch.FileDataset(fs, "/train", suffix=".bin", transform=decode)
    check(len(flat) == 16, f"flat dataset has {len(flat)} samples")
    ds = t0fs.pytorch.FileDataset(fs, "/train", suffix=".bin", recursive=True, transform=decode)
    check(len(ds) == 24, f"recursive dataset has {len(ds)} samples")
    for workers in (0, 2):
        loader = torch.utils.data.DataLoader(ds, batch_size=5, shuffle=True, num_workers=workers,
                                             generator=torch.Generator().manual_seed(rng.randrange(1 << 30)))
        seen = set()
        for batch in loader:
            check(batch.dtype == torch.uint8 and batch.shape[1] == SAMPLE, f"batch shape {batch.shape}")
            for row in batch:
                data = row.numpy().tobytes()
                i = int.from_bytes(data[:4], "little")
                check(data == expected[i], f"sample {i} content (num_workers={workers})")
                check(i not in seen, f"sample {i} twice")
                seen.add(i)
        check(seen == set(expected), f"num_workers={workers}: saw {len(seen)} of {len(expected)}")
        log(f"dataset: DataLoader num_workers={workers}, {len(seen)} samples checked")


def test_threads_and_fork(fs, rng):
    data = rng.randbytes(3 * MIB)
    fs.write_bytes("/threads.bin", data)
    errors = []

    def reader(offset):
        try:
            with fs.open("/threads.bin") as f:
                for _ in range(20):
                    if f.pread(65536, offset) != data[offset:offset + 65536]:
                        errors.append(f"offset {offset}")
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(repr(e))

    threads = [threading.Thread(target=reader, args=(i * 700_000,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    check(not errors, f"threaded preads: {errors}")

    # A forked child must not use the parent's session or files (it says
    # so), and closing them there leaves the parent's alone.
    f = fs.open("/threads.bin")

    def child():
        for call in (lambda: fs.stat("/"), lambda: f.pread(10, 0)):
            try:
                call()
                return 10  # must raise
            except RuntimeError:
                pass
        f.close()  # forgets the parent's file, quietly
        with fs.reconnect() as own:  # a session of its own works
            return 0 if own.read_bytes("/threads.bin") == data else 11

    pid = os.fork()
    if pid == 0:
        try:
            code = child()
        except BaseException as e:  # noqa: BLE001 - the exit code says it
            print(f"forked child: {e!r}", flush=True)
            code = 12
        os._exit(code)
    _, status = os.waitpid(pid, 0)
    check(os.waitstatus_to_exitcode(status) == 0, f"forked child: exit {os.waitstatus_to_exitcode(status)}")
    check(f.pread(10, 5) == data[5:15], "the parent's file after the child closed its copy")
    f.close()
    fs.remove("/threads.bin")
    counters = fs.counters()
    check(counters["local_read_bytes"] > 0 and counters["checksum_errors"] == 0, f"counters {counters}")
    log(f"threads and fork: ok; counters {counters}")


def test_batch(fs, rng, seed):
    """Client.batch() and read_many(): results byte for byte what was written,
    in the order asked; a bad request fails alone; buffers reused."""
    top = "/batch"
    fs.makedirs(top, exist_ok=True)
    blobs = {}
    for idx, size in enumerate([0, 1, 4095, MIB, 3 * MIB + 12345]):  # 1 MiB chunks
        path = f"{top}/f{idx}"
        blobs[path] = rng.randbytes(size)
        fs.write_bytes(path, blobs[path])

    # read_many: the order given, short at end of file, paths and Files mixed.
    big = f"{top}/f4"
    with fs.open(big, "rb") as f:
        reqs = [(big, 0, 100), (f, MIB - 10, 20), (f"{top}/f2", 0, 4095), (big, 3 * MIB, 1 << 20),
                (f"{top}/f0", 0, 10), (f, 5, 0)]
        got = fs.read_many(reqs)
    want = [blobs[p if isinstance(p, str) else big][o:o + n] for p, o, n in reqs]
    check(got == want, "read_many: bytes and order as asked")

    # A bad request fails alone: a closed file (EBADF), a write to a file
    # open read-only (EBADF); past the end reads 0 bytes, as pread does.
    try:
        fs.open(big, os.O_RDONLY)
        raise AssertionError("os.open flags were taken for a mode")
    except TypeError as e:
        check("mode must be a str" in str(e), f"open with os.open flags says what a mode is ({e})")
    closed = fs.open(big, "rb")
    closed.close()
    with fs.open(big, "rb") as ro, fs.batch(depth=4) as b:
        b.read(big, 0, MIB, tag="good0")
        b.read(closed, 0, 100, tag="closed")
        b.write(ro, 0, b"x", tag="readonly")
        b.read(big, 10 * MIB, 100, tag="past-eof")
        b.read(ro, MIB // 2, MIB, tag="good1")
        done = {c.tag: c for c in b.wait_all()}
        check(len(b) == 0 and sorted(done) == ["closed", "good0", "good1", "past-eof", "readonly"],
              f"batch: every request completes once ({sorted(done)})")
    check(done["closed"].error is not None and done["closed"].error.errno == errno.EBADF,
          f"batch: a closed file gives EBADF ({done['closed']})")
    check(done["closed"].error.filename == big, f"batch: the error names the file ({done['closed'].error})")
    check(done["readonly"].error is not None and done["readonly"].error.errno == errno.EBADF,
          f"batch: a write to a read-only file gives EBADF ({done['readonly']})")
    check(done["past-eof"].ok and done["past-eof"].result == 0 and done["past-eof"].data == b"",
          f"batch: past the end reads 0 bytes ({done['past-eof']})")
    check(done["good0"].data == blobs[big][:MIB], "batch: good read beside bad ones")
    check(done["good1"].data == blobs[big][MIB // 2:MIB // 2 + MIB], "batch: good read beside bad ones")
    try:
        fs.read_many([(big, 0, 10), (closed, 0, 10)])
        raise AssertionError("read_many with a closed file did not raise")
    except OSError as e:
        check(e.errno == errno.EBADF, f"read_many raises the failed request's error ({e})")
    got = fs.read_many([(big, 0, 10), (closed, 0, 10)], errors="return")
    check(got[0] == blobs[big][:10] and isinstance(got[1], OSError), f"read_many errors='return' ({got})")
    expect_oserror(errno.ENOENT, f"{top}/missing", fs.read_many, [(f"{top}/missing", 0, 1)])
    with fs.batch() as b:
        try:
            b.read(big, 0, 10, into=bytearray(5))
            raise AssertionError("a length past the buffer was accepted")
        except ValueError:
            pass
        try:
            b.read(big, 0, into=b"read-only")
            raise AssertionError("a read into bytes was accepted")
        except (TypeError, BufferError):
            pass
        check(len(b) == 0, "refused requests are not outstanding")


    # Writes through a batch, then reads into one reused numpy array (slots at
    # odd offsets, so no buffer starts on a page boundary).
    out = f"{top}/written"
    content = rng.randbytes(2 * MIB + 333)
    with fs.open(out, "wb") as f, fs.batch(depth=3) as b:
        view = memoryview(content)
        for off in range(0, len(content), 256 * 1024 + 7):
            b.write(f, off, view[off:off + 256 * 1024 + 7])
        results = b.wait_all()
        check(all(c.ok and c.op == "write" for c in results), f"batch writes: {results[:3]}")
    check(fs.read_bytes(out) == content, "batch writes: the file is what was written")
    slot = 64 * 1024 + 1
    arena = np.zeros(8 * slot + 3, dtype=np.uint8)
    with fs.open(out, "rb") as f, fs.batch(depth=8) as b:
        for round_idx in range(4):
            offs = [rng.randrange(0, len(content)) for _ in range(8)]
            for slot_idx, off in enumerate(offs):
                b.read(f, off, into=arena[3 + slot_idx * slot:3 + (slot_idx + 1) * slot], tag=slot_idx)
            for c in b.wait_all():
                off = offs[c.tag]
                want = content[off:off + slot]
                got = arena[3 + c.tag * slot:3 + c.tag * slot + c.result].tobytes()
                check(c.ok and c.result == len(want) and got == want,
                      f"batch reads into a reused array: round {round_idx} slot {c.tag}")

    # Seeded random shapes: many files, ranges crossing chunks, zero lengths,
    # past the end, into slices of one bytearray; more requests than depth.
    shapes = random.Random(seed ^ 0xBA7C)
    log(f"batch shapes: seed {seed ^ 0xBA7C} (from --seed {seed})")
    files = list(blobs)
    for round_idx in range(3):
        depth = shapes.choice([1, 2, 7, 32])
        reqs = []
        for _ in range(shapes.randrange(1, 60)):
            path = shapes.choice(files)
            size = len(blobs[path])
            off = shapes.choice([0, shapes.randrange(0, size + 1), size, size + shapes.randrange(1, MIB),
                                 (size // MIB) * MIB])
            reqs.append((path, off, shapes.choice([0, 1, 4096, shapes.randrange(1, 2 * MIB)])))
        total = sum(n for _, _, n in reqs)
        arena = bytearray(total + shapes.randrange(0, 4096))
        starts, pos = [], shapes.randrange(0, len(arena) - total + 1)
        with fs.batch(depth=depth) as b:
            for idx, (path, off, n) in enumerate(reqs):
                starts.append(pos)
                b.read(path, off, into=memoryview(arena)[pos:pos + n], tag=idx)
                pos += n
            done = b.wait_all()
        check(sorted(c.tag for c in done) == list(range(len(reqs))), "batch shapes: each request completes once")
        for c in done:
            path, off, n = reqs[c.tag]
            want = blobs[path][off:off + n]
            check(c.ok and arena[starts[c.tag]:starts[c.tag] + c.result] == want,
                  f"batch shapes round {round_idx} (depth {depth}): {path} [{off}, +{n}) -> {c}")
        check(fs.read_many(reqs, depth=depth) == [blobs[p][o:o + n] for p, o, n in reqs],
              f"batch shapes round {round_idx}: read_many")

    # The Dataset reads a DataLoader batch through the batched API.
    dataset = t0fs.pytorch.FileDataset(fs, top, depth=4)
    items = dataset.__getitems__(list(range(len(dataset))))
    check(items == [fs.read_bytes(p) for p in dataset.paths], "FileDataset.__getitems__")
    for path in list(blobs) + [out]:
        fs.remove(path)
    fs.rmdir(top)
    log("batch: read_many order, bad requests alone, writes, reused buffers, 3 random shape rounds")


def test_example(fs, args):
    """python/examples/train_linear.py, in this process: trains, checkpoints, resumes."""
    spec = importlib.util.spec_from_file_location("train_linear", f"{args.examples}/train_linear.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    common = ["--meta", args.meta, "--secret-file", args.secret_file, "--root", "/ex", "--samples", "64"]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        losses = example.main(common + ["--epochs", "2", "--workers", "0"])
        example.main(common + ["--epochs", "1", "--workers", "2"])
    check(losses[1] < losses[0], f"example: loss did not fall: {losses}")
    check("resumed from /ex/checkpoints/epoch1.pt" in out.getvalue(), f"example output: {out.getvalue()}")
    check(sorted(fs.listdir("/ex/checkpoints")) == ["epoch0.pt", "epoch1.pt", "epoch2.pt"],
          f"example checkpoints: {fs.listdir('/ex/checkpoints')}")
    for top, dirs, files in reversed(list(fs.walk("/ex"))):
        for name in files:
            fs.remove(f"{top}/{name}")
        fs.rmdir(top)
    log(f"example train_linear.py: losses {[round(x, 4) for x in losses]}, resumed, 3 checkpoints")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--meta", required=True)
    parser.add_argument("--secret-file", required=True)
    parser.add_argument("--cluster-dir", required=True)
    parser.add_argument("--mount", required=True)
    parser.add_argument("--seed", type=int, required=True)
    parser.add_argument("--examples", required=True, help="python/examples")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    log(f"python {sys.version.split()[0]}, torch {torch.__version__}, seed {args.seed}")
    fs = test_connect(args)
    fsinfo, vfs = fs.statfs(), os.statvfs(args.mount)
    check(fsinfo["total_bytes"] == vfs.f_blocks * vfs.f_frsize, f"statfs {fsinfo} vs mount {vfs}")
    test_files(fs, rng, args.mount)
    test_errors(fs, args.mount)
    test_checkpoints(fs, args.mount, args.seed)
    test_dataset(fs, rng)
    test_threads_and_fork(fs, rng)
    test_batch(fs, rng, args.seed)
    test_example(fs, args)
    fs.close()
    log("all python API checks passed")


if __name__ == "__main__":
    main()
