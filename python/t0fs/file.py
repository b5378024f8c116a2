"""t0fs.File: an open t0fs file as a real io.RawIOBase."""

import io
import os

# open(2) flags for each mode letter, as builtins.open understands them.
_MODES = {
    "r": os.O_RDONLY,
    "w": os.O_WRONLY | os.O_CREAT | os.O_TRUNC,
    "x": os.O_WRONLY | os.O_CREAT | os.O_EXCL,
    "a": os.O_WRONLY | os.O_CREAT | os.O_APPEND,
}


def parse_mode(mode):
    """Returns (open flags, readable, writable, append, text) for a builtins.open-style mode."""
    if not isinstance(mode, str):
        raise TypeError(f"mode must be a str as for builtins.open ('rb', 'wb', 'r+b', 'ab', 'xb', ...), "
                        f"not {type(mode).__name__} {mode!r} (os.open flags are not taken)")
    chars = set(mode)
    if len(chars) != len(mode) or not chars <= set("rwxab+t") or ("b" in chars and "t" in chars):
        raise ValueError(f"invalid mode: {mode!r}")
    kinds = chars & set("rwxa")
    if len(kinds) != 1:
        raise ValueError(f"mode must have exactly one of r, w, x, a: {mode!r}")
    kind = kinds.pop()
    flags = _MODES[kind]
    plus = "+" in chars
    if plus:
        flags = (flags & ~(os.O_RDONLY | os.O_WRONLY)) | os.O_RDWR
    readable = kind == "r" or plus
    writable = kind != "r" or plus
    return flags, readable, writable, kind == "a", "b" not in chars


class File(io.RawIOBase):
    """An open t0fs file: unbuffered, seekable, with positional I/O.

    Returned by Client.open(..., buffering=0) (the default for binary modes);
    wrap it in io.BufferedReader/BufferedWriter for many small reads or
    writes (Client.open does with buffering != 0). Every call runs in libt0fs
    with the GIL released.

    Beyond RawIOBase: pread(n, offset), preadinto(buffer, offset),
    pwrite(data, offset) (positional, do not move the file position, safe from
    several threads), fsync(datasync=False), stat(), size.

    flush() commits size and mtime to meta, so a new open anywhere (the mount
    too) sees the data (close-to-open consistency); close() does the same.
    There is no file descriptor: fileno() raises io.UnsupportedOperation.
    """

    def __init__(self, native, name, mode, readable, writable, append):
        super().__init__()
        self._native = native
        self.name = name
        self.mode = mode
        self._readable = readable
        self._writable = writable
        self._append = append
        self._pos = native.size if append else 0

    def __repr__(self):
        state = "closed" if self.closed else f"pos={self._pos}"
        return f"<t0fs.File name={self.name!r} mode={self.mode!r} {state}>"

    # ---- io.RawIOBase ----
    def readable(self):
        self._checkClosed()
        return self._readable

    def writable(self):
        self._checkClosed()
        return self._writable

    def seekable(self):
        self._checkClosed()
        return True

    def _check_readable(self):
        self._checkClosed()
        if not self._readable:
            raise io.UnsupportedOperation("File not open for reading")

    def _check_writable(self):
        self._checkClosed()
        if not self._writable:
            raise io.UnsupportedOperation("File not open for writing")

    def readinto(self, buffer):
        """Reads into a writable buffer (bytearray, memoryview, numpy array) without a copy."""
        self._check_readable()
        n = self._native.preadinto(buffer, self._pos)
        self._pos += n
        return n

    def read(self, size=-1):
        self._check_readable()
        if size is None or size < 0:
            return self.readall()
        data = self._native.pread(size, self._pos)
        self._pos += len(data)
        return data

    def readall(self):
        self._check_readable()
        # One read of what the size says is left (close-to-open: the size
        # this client sees is the file's); a file found longer reads on.
        chunks = []
        while True:
            want = max(self._native.size - self._pos, 0) or 1 << 20
            data = self._native.pread(want, self._pos)
            self._pos += len(data)
            chunks.append(data)
            if len(data) < want or self._pos >= self._native.size:
                break
        return chunks[0] if len(chunks) == 1 else b"".join(chunks)

    def write(self, data):
        self._check_writable()
        if self._append:
            self._pos = self._native.size
        n = self._native.pwrite(data, self._pos)
        self._pos = self._native.size if self._append else self._pos + n
        return n

    def seek(self, offset, whence=io.SEEK_SET):
        self._checkClosed()
        if whence == io.SEEK_SET:
            pos = offset
        elif whence == io.SEEK_CUR:
            pos = self._pos + offset
        elif whence == io.SEEK_END:
            pos = self._native.size + offset
        else:
            raise ValueError(f"invalid whence ({whence})")
        if pos < 0:
            raise OSError(22, "Invalid argument: negative seek position", self.name)
        self._pos = pos
        return pos

    def tell(self):
        self._checkClosed()
        return self._pos

    def truncate(self, size=None):
        self._check_writable()
        if size is None:
            size = self._pos
        self._native.truncate(size)
        return size

    def flush(self):
        """Commits size and mtime to meta (no durability: see fsync)."""
        if self.closed or self._native.closed:
            return
        if self._writable:
            self._native.flush()

    def close(self):
        """Commits and releases the file; idempotent."""
        if self.closed:
            return
        try:
            self._native.close()
        finally:
            super().close()

    # ---- t0fs extras ----
    def fsync(self, datasync=False):
        """Makes the written data and its commit durable (fsync/fdatasync)."""
        self._checkClosed()
        self._native.fsync(datasync)

    def pread(self, size, offset):
        self._check_readable()
        return self._native.pread(size, offset)

    def preadinto(self, buffer, offset):
        self._check_readable()
        return self._native.preadinto(buffer, offset)

    def pwrite(self, data, offset):
        self._check_writable()
        return self._native.pwrite(data, offset)

    def stat(self):
        """os.stat_result of the open file (size as this client sees it)."""
        self._checkClosed()
        return os.stat_result(self._native.stat())

    @property
    def size(self):
        self._checkClosed()
        return self._native.size
