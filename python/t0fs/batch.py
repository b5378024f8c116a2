"""t0fs.Batch: many reads and writes in flight from one thread (libt0fs BatchIo).

    with fs.batch(depth=32) as b:
        for i, (path, off, n) in enumerate(wanted):
            b.read(path, off, n, tag=i)
        for c in b.wait_all():
            if c.error: print(c.tag, c.error)
            else: use(c.tag, c.data)

Requests complete in any order; each completion names its request by `tag`
(default: the request id read() and write() return). A request that fails
(offset past the end reads 0 bytes, like pread; a closed file gives EBADF)
completes with its OSError; the others are not affected.
"""

import errno as _errno
import os

from .file import File


class Completion:
    """One finished request: tag, op ("read" or "write"), result (bytes moved,
    short at end of file, or None), error (OSError or None), buffer (the
    caller's buffer, or the bytearray read() allocated)."""

    __slots__ = ("id", "tag", "op", "result", "error", "buffer")

    def __init__(self, req_id, tag, op, result, error, buffer):
        self.id = req_id
        self.tag = tag
        self.op = op
        self.result = result
        self.error = error
        self.buffer = buffer

    @property
    def ok(self):
        return self.error is None

    @property
    def data(self):
        """The bytes a read returned (a copy of buffer[:result]); raises its error."""
        if self.error is not None:
            raise self.error
        return bytes(memoryview(self.buffer).cast("B")[:self.result])

    def __repr__(self):
        state = f"error={self.error!r}" if self.error else f"result={self.result}"
        return f"<t0fs.Completion {self.op} tag={self.tag!r} {state}>"


class Batch:
    """Reads and writes submitted together and completed in any order.

    depth bounds the requests in flight: read() and write() first wait for a
    completion (kept for the next wait()) when depth are outstanding. A file
    may be a t0fs.File (open for reading or writing as the request needs) or
    a path, opened once per batch and closed with it. Buffers are used in
    place and kept alive until the request's completion is returned; do not
    change or reuse a buffer before that. Waiting releases the GIL. One batch
    may be used from several threads. close() (or the with block's end)
    waits for everything in flight.
    """

    def __init__(self, client, native, depth):
        if depth < 1:
            raise ValueError("depth must be at least 1")
        self._client = client
        self._native = native
        self.depth = depth
        self._requests = {}  # id -> (tag, op, buffer, path): submitted, not returned
        self._ready = []  # completions reaped to make room, returned by the next wait()
        self._files = {}  # path -> File this batch opened

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __len__(self):
        """Requests submitted and not yet returned by wait()."""
        return len(self._requests) + len(self._ready)

    @property
    def closed(self):
        return self._native.closed

    def read(self, file, offset, length=None, *, into=None, tag=None):
        """Reads `length` bytes at `offset` into `into` (a writable contiguous
        buffer: bytearray, memoryview, numpy array; its size is the length)
        or, without it, into a new bytearray of `length`. Returns the id."""
        if into is None:
            if length is None:
                raise TypeError("read() needs a length or a buffer (into=)")
            into = bytearray(length)
        elif length is not None and length != memoryview(into).nbytes:
            view = memoryview(into).cast("B")
            if length > view.nbytes:
                raise ValueError(f"length {length} is more than the buffer's {view.nbytes} bytes")
            into = view[:length]
        return self._submit(file, False, offset, into, tag, "read")

    def write(self, file, offset, data, *, tag=None):
        """Writes all of `data` (a contiguous buffer) at `offset`. Returns the id."""
        return self._submit(file, True, offset, data, tag, "write")

    def wait(self, min=1, timeout=None):
        """Completions of finished requests, waiting until at least `min`
        (capped at what is outstanding) are there or `timeout` seconds
        passed; [] when nothing is outstanding."""
        out, self._ready = self._ready, []
        want = min - len(out)
        if self._requests and (want > 0 or not out):
            got = self._native.wait(max(want, 0), len(self._requests),
                                    -1.0 if timeout is None else float(timeout))
            out.extend(self._complete(got))
        return out

    def wait_all(self):
        """Completions of everything outstanding (waits for all of it)."""
        out = []
        while len(self):
            out.extend(self.wait(len(self)))
        return out

    def close(self):
        """Waits for the requests in flight, then closes the files this batch opened."""
        try:
            self._native.close()
        finally:
            self._requests.clear()
            files, self._files = self._files, {}
            for f in files.values():
                f.close()

    # ---- internals ----
    def _file(self, file, write):
        if isinstance(file, File):
            return file._native, file.name
        key = (os.fsdecode(os.fspath(file)), write)
        f = self._files.get(key)
        if f is None:
            f = self._client.open(key[0], "r+b" if write else "rb", buffering=0)
            self._files[key] = f
        return f._native, f.name

    def _submit(self, file, write, offset, buffer, tag, op):
        native_file, path = self._file(file, write)
        while len(self._requests) >= self.depth:
            self._ready.extend(self._complete(self._native.wait(1, len(self._requests), -1.0)))
        req_id = self._native.submit(native_file, write, offset, buffer)
        self._requests[req_id] = (req_id if tag is None else tag, op, buffer, path)
        return req_id

    def _complete(self, reaped):
        out = []
        for req_id, result in reaped:
            tag, op, buffer, path = self._requests.pop(req_id)
            error = None
            if result < 0:
                err = -result
                error = OSError(err, os.strerror(err) if err in _errno.errorcode else "I/O error", path)
                result = None
            out.append(Completion(req_id, tag, op, result, error, buffer))
        return out
