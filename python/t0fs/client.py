"""t0fs.Client: a session with a t0fs cluster, with os-like functions."""

import io
import os
import posixpath
import stat as _stat

from . import _t0fs
from .batch import Batch
from .connect import locate
from .file import File, parse_mode


def _umask():
    """This process's umask, read without changing it (Linux 4.7+)."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except OSError:
        pass
    return 0o022


def _abs(path):
    """A normalised absolute t0fs path; relative paths start at the root."""
    path = os.fsdecode(os.fspath(path))
    path = posixpath.normpath("/" + path.lstrip("/"))
    return "/" if path == "//" else path


def connect(meta=None, *, cluster_dir=None, secret_file=None, secret=None, name=None,
            retry_timeout=60.0, rpc_timeout=60.0, local_bypass=True):
    """Connects to a t0fs cluster and returns a Client.

    meta: "host:port" of the meta service. cluster_dir: a `t0fs up` cluster
    directory (meta address and secret read from it); with neither,
    ./t0fs-data. secret_file / secret: the cluster secret (a cluster_dir
    provides it). name: shown in `t0fs status`. retry_timeout: seconds an
    operation keeps retrying an unreachable meta or data service (a restart)
    before failing with EIO. local_bypass: read and write chunk files on this
    host directly (False forces TCP, for comparisons).
    """
    meta, secret_file, secret = locate(meta, cluster_dir, secret_file, secret)
    options = dict(meta=meta, secret=secret, secret_file=secret_file,
                   name=name or f"python pid {os.getpid()}", retry_timeout=float(retry_timeout),
                   rpc_timeout=float(rpc_timeout), local_bypass=bool(local_bypass))
    return Client(_t0fs.Client.connect(**options), options)


class DirEntry:
    """One entry of Client.scandir(), like os.DirEntry (attributes come with the listing)."""

    __slots__ = ("name", "path", "_ino", "_mode", "_stat")

    def __init__(self, dir_path, name, ino, mode, stat_tuple):
        self.name = name
        self.path = posixpath.join(dir_path, name)
        self._ino = ino
        self._mode = mode
        self._stat = os.stat_result(stat_tuple) if stat_tuple is not None else None

    def inode(self):
        return self._ino

    def is_dir(self, *, follow_symlinks=False):
        return _stat.S_ISDIR(self._mode)

    def is_file(self, *, follow_symlinks=False):
        return _stat.S_ISREG(self._mode)

    def is_symlink(self):
        return _stat.S_ISLNK(self._mode)

    def stat(self, *, follow_symlinks=False):
        return self._stat

    def __fspath__(self):
        return self.path

    def __repr__(self):
        return f"<t0fs.DirEntry {self.name!r}>"


class Client:
    """A session with a t0fs cluster (from t0fs.connect).

    Paths are absolute paths inside t0fs ("/data/x"); a relative path starts
    at the root. Symbolic links are not followed. Methods mirror os and
    builtins.open and raise the same OSError subclasses, with the path.
    Safe to use from several threads; every call releases the GIL.

    A Client belongs to the process that connected: after a fork (DataLoader
    workers) the child must call reconnect() (t0fs.pytorch.FileDataset does).
    """

    def __init__(self, native, options):
        self._native = native
        self._options = options

    def __repr__(self):
        return f"<t0fs.Client meta={self._options['meta']}>"

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self):
        """Ends this session once the files opened through it are closed."""
        self._native.close()

    @property
    def options(self):
        """The connect() arguments (for reconnect in another process)."""
        return dict(self._options)

    def reconnect(self):
        """A new session with the same cluster and options (e.g. in a forked worker)."""
        return Client(_t0fs.Client.connect(**self._options), self._options)

    # ---- files ----
    def open(self, path, mode="rb", buffering=None, encoding=None, errors=None, newline=None,
             perm=0o666):
        """Opens a file like builtins.open; mode "rb", "wb", "r+b", "ab", "xb", "w+b", ...

        Binary modes return a t0fs.File, an io.RawIOBase (unbuffered unless
        asked: buffering=-1 or a size returns an io.BufferedReader,
        BufferedWriter or BufferedRandom over it); text modes ("r", "w", ...)
        return an io.TextIOWrapper. New files get perm & ~umask.
        """
        flags, readable, writable, append, text = parse_mode(mode)
        if buffering is None:
            buffering = -1 if text else 0
        if text and buffering == 0:
            raise ValueError("can't have unbuffered text I/O")
        perm = perm & ~_umask() & 0o7777
        native = self._native.open(_abs(path), flags, perm)
        raw = File(native, os.fspath(path), mode, readable, writable, append)
        if buffering == 0:
            return raw
        size = io.DEFAULT_BUFFER_SIZE if buffering in (-1, 1) else buffering
        try:
            if readable and writable:
                buffered = io.BufferedRandom(raw, size)
            elif writable:
                buffered = io.BufferedWriter(raw, size)
            else:
                buffered = io.BufferedReader(raw, size)
            if not text:
                return buffered
            return io.TextIOWrapper(buffered, encoding, errors, newline, line_buffering=buffering == 1)
        except BaseException:
            raw.close()
            raise

    def read_bytes(self, path):
        """The whole content of a file."""
        with self.open(path, "rb") as f:
            return f.readall()

    def write_bytes(self, path, data, fsync=False):
        """Creates or replaces a file's content; with fsync, durably."""
        with self.open(path, "wb") as f:
            f.write(data)
            if fsync:
                f.fsync()

    def batch(self, depth=64, *, workers=4, node_depth=8):
        """A Batch: many reads and writes in flight from one thread (libt0fs
        BatchIo), completed in any order; see t0fs.batch. depth: requests
        in flight at most. workers: threads for local chunk files, writes and
        fail-over. node_depth: requests in flight per remote data node."""
        return Batch(self, self._native.batch(workers=workers, node_depth=node_depth), depth)

    def read_many(self, requests, *, depth=64, errors="raise"):
        """Reads many (file, offset, length) ranges at once (file: a path or a
        t0fs.File) and returns their bytes in the order given (short at end
        of file). errors="raise" raises the first failed request's OSError
        once all are done; errors="return" puts the OSError in its place."""
        if errors not in ("raise", "return"):
            raise ValueError("errors must be 'raise' or 'return'")
        out = [None] * len(requests)
        with self.batch(depth=depth) as b:
            for idx, (file, offset, length) in enumerate(requests):
                b.read(file, offset, length, tag=idx)
            for c in b.wait_all():
                out[c.tag] = c.error if c.error is not None else c.data
        if errors == "raise":
            for item in out:
                if isinstance(item, OSError):
                    raise item
        return out

    def truncate(self, path, length):
        self._native.truncate(_abs(path), length)

    # ---- names ----
    def stat(self, path):
        """os.stat_result of path (st_dev is 0; times with nanoseconds)."""
        return os.stat_result(self._native.stat(_abs(path)))

    lstat = stat  # symlinks are never followed

    def exists(self, path):
        try:
            self._native.stat(_abs(path))
            return True
        except FileNotFoundError:
            return False

    def isdir(self, path):
        try:
            return _stat.S_ISDIR(self.stat(path).st_mode)
        except FileNotFoundError:
            return False

    def isfile(self, path):
        try:
            return _stat.S_ISREG(self.stat(path).st_mode)
        except FileNotFoundError:
            return False

    def listdir(self, path="/"):
        """Names in a directory (no "." and ".."), in t0fs order."""
        return [entry[0] for entry in self._native.readdir(_abs(path), False)]

    def scandir(self, path="/"):
        """An iterator of DirEntry, each with its stat() already fetched."""
        base = _abs(path)
        return iter([DirEntry(base, *entry) for entry in self._native.readdir(base, True)])

    def walk(self, top="/"):
        """Like os.walk (top-down): (dirpath, dirnames, filenames) tuples."""
        dirs, files = [], []
        for entry in self.scandir(top):
            (dirs if entry.is_dir() else files).append(entry.name)
        top = _abs(top)
        yield top, dirs, files
        for name in dirs:
            yield from self.walk(posixpath.join(top, name))

    def mkdir(self, path, mode=0o777):
        self._native.mkdir(_abs(path), mode & ~_umask() & 0o7777)

    def makedirs(self, path, mode=0o777, exist_ok=False):
        """mkdir -p; FileExistsError if path exists and exist_ok is false."""
        path = _abs(path)
        if not exist_ok and self.exists(path):
            raise FileExistsError(17, os.strerror(17), path)
        self._native.makedirs(path, mode & ~_umask() & 0o7777)

    def remove(self, path):
        self._native.unlink(_abs(path))

    unlink = remove

    def rmdir(self, path):
        self._native.rmdir(_abs(path))

    def rename(self, src, dst):
        """Renames, replacing dst if it exists (rename(2), as os.rename on Linux)."""
        self._native.rename(_abs(src), _abs(dst), 0)

    replace = rename

    def chmod(self, path, mode):
        self._native.chmod(_abs(path), mode)

    def symlink(self, target, path):
        """Creates a symbolic link `path` pointing to `target` (os.symlink order)."""
        self._native.symlink(os.fsdecode(target), _abs(path))

    def readlink(self, path):
        return self._native.readlink(_abs(path))

    def link(self, src, dst):
        """A hard link `dst` of the file `src`."""
        self._native.link(_abs(src), _abs(dst))

    # ---- extended attributes (names with their namespace: "user.tag") ----
    def getxattr(self, path, attribute):
        """The attribute's value as bytes; OSError ENODATA when absent."""
        return self._native.getxattr(_abs(path), attribute)

    def setxattr(self, path, attribute, value, flags=0):
        """flags: os.XATTR_CREATE (must not exist) or os.XATTR_REPLACE (must exist)."""
        self._native.setxattr(_abs(path), attribute, bytes(value), flags)

    def listxattr(self, path):
        return list(self._native.listxattr(_abs(path)))

    def removexattr(self, path, attribute):
        self._native.removexattr(_abs(path), attribute)

    # ---- t0fs ----
    def layout(self, path):
        """Where a file's data lives: {"size", "chunk_size", "chunks": [{"index",
        "offset", "replicas": [{"node", "volume", "chunk", "version", "local",
        "state"}]}], "passthrough", "passthrough_reason"}."""
        return self._native.layout(_abs(path))

    def objective(self, path):
        """The objective of a file or directory, as `t0fs objective get` prints
        it: "replicas=1 placement=local protect=object within=30m"."""
        return self._native.objective(_abs(path))

    def set_objective(self, path, settings, recursive=True):
        """Sets objective settings ("replicas=2", "protect=ec:4+2 within=10m",
        "keep-local=…": as `t0fs objective set` takes them, space-separated)
        over the current objective of path and, recursive, of everything below
        a directory. Returns (the objective recorded, inodes changed); existing
        data converges in the background. Bad settings raise OSError(EINVAL)
        before anything is changed."""
        return tuple(self._native.set_objective(_abs(path), settings, bool(recursive)))

    def statfs(self):
        """{"total_bytes", "free_bytes", "files", "block_size", "max_name"}."""
        return self._native.statfs()

    def counters(self):
        """Byte and operation counters of this session (local bypass vs TCP)."""
        return self._native.counters()

    @property
    def cluster_id(self):
        return self._native.cluster_id

    @property
    def local_node(self):
        """The data node on this host (0 when there is none)."""
        return self._native.local_node
