"""t0fs: Python access to a t0fs file system, without a mount.

The native client (libt0fs) runs inside the Python process: reads and writes
go straight to the data services (to the chunk files themselves when they are
on this host); only names, layouts and commits go to the meta service.

    import t0fs
    fs = t0fs.connect(cluster_dir="t0fs-data")        # or meta="host:port", secret_file=...
    with fs.open("/data/x.bin", "wb") as f:
        f.write(b"hello")
    print(fs.listdir("/data"), fs.stat("/data/x.bin").st_size)

Files are io.RawIOBase objects (torch.save/torch.load, io.BufferedReader,
readinto into numpy arrays work); errors are OSError subclasses with the
errno and path (FileNotFoundError, FileExistsError, IsADirectoryError, ...).
Client.batch() and Client.read_many() keep many reads and writes in flight
from one thread (libt0fs BatchIo). PyTorch helpers (a Dataset over a directory, checkpoint save/load) are in
t0fs.pytorch, imported on demand. See docs/python.md.
"""

from .batch import Batch, Completion
from .client import Client, DirEntry, connect
from .connect import locate
from .file import File

__all__ = ["Batch", "Client", "Completion", "DirEntry", "File", "connect", "locate"]
