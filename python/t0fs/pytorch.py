"""PyTorch over t0fs without a mount: a Dataset of files and checkpoint helpers.

    import t0fs, t0fs.pytorch
    fs = t0fs.connect(cluster_dir="t0fs-data")
    ds = t0fs.pytorch.FileDataset(fs, "/data/train", transform=decode)
    loader = torch.utils.data.DataLoader(ds, batch_size=32, num_workers=4)

    t0fs.pytorch.save_checkpoint(model, "/ckpt/step100.pt", client=fs)
    state = t0fs.pytorch.load_checkpoint("/ckpt/step100.pt", client=fs, model=model)
"""

import io
import multiprocessing.util
import os

import torch
import torch.utils.data

_CHECKPOINT_BUFFER = 8 << 20  # torch.save writes many small records; batch them


class FileDataset(torch.utils.data.Dataset):
    """One sample per regular file under `root`, read through t0fs.

    client: a t0fs.Client (its connection options are reused in DataLoader
      worker processes, which connect on first use: a session cannot cross a
      fork).
    root: a t0fs directory; files listed once, at construction, sorted by path.
    suffix: only names ending with it. recursive: descend into subdirectories.
    transform: called with the file's bytes (and nothing else); its result is
      the sample. Without one, the sample is the bytes.
    depth: reads in flight when a DataLoader fetches a whole batch
      (__getitems__): the batch's files are read together through
      Client.batch(), so one worker keeps `depth` reads going instead of one.
    """

    def __init__(self, client, root, *, suffix="", recursive=False, transform=None, depth=32):
        self._options = client.options
        self._client = client
        self._pid = os.getpid()
        self.root = root
        self.transform = transform
        self.depth = depth
        self.paths = sorted(p for p in _regular_files(client, root, recursive) if p.endswith(suffix))

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, index):
        with self.client().open(self.paths[index], "rb") as f:
            data = f.readall()
        return self.transform(data) if self.transform is not None else data

    def __getitems__(self, indices):
        """The samples of `indices`, their files read in one batch (the
        DataLoader calls this for a whole batch when it exists)."""
        client = self.client()
        files = [client.open(self.paths[index], "rb") for index in indices]
        try:
            datas = client.read_many([(f, 0, f.size) for f in files], depth=self.depth)
        finally:
            for f in files:
                f.close()
        if self.transform is None:
            return datas
        return [self.transform(data) for data in datas]

    def client(self):
        """This process's session (a forked or spawned worker connects its own)."""
        if self._client is None or self._pid != os.getpid():
            from .client import Client
            from . import _t0fs

            # The inherited session belongs to the parent: drop it unused.
            self._client = Client(_t0fs.Client.connect(**self._options), self._options)
            self._pid = os.getpid()
            # Workers leave through os._exit: end the session with meta
            # first (multiprocessing runs these finalizers just before).
            multiprocessing.util.Finalize(self, self._client.close, exitpriority=10)
        return self._client

    def __getstate__(self):  # spawn/forkserver workers: pickle without the session
        state = dict(self.__dict__)
        state["_client"] = None
        return state


def _regular_files(client, top, recursive):
    for entry in client.scandir(top):
        if entry.is_file():
            yield entry.path
        elif recursive and entry.is_dir():
            yield from _regular_files(client, entry.path, True)


def save_checkpoint(obj, path, *, client, fsync=True):
    """torch.save of `obj` (an nn.Module saves its state_dict) to a t0fs path.

    Written to a temporary name beside `path`, made durable (fsync), then
    renamed over `path`: a reader sees the old checkpoint or the new one,
    never half of one, even if this process dies mid-write.
    """
    if isinstance(obj, torch.nn.Module):
        obj = obj.state_dict()
    tmp = f"{path}.tmp-{os.getpid()}"
    try:
        with client.open(tmp, "wb") as raw, io.BufferedWriter(raw, _CHECKPOINT_BUFFER) as f:
            torch.save(obj, f)
            f.flush()
            if fsync:
                raw.fsync()
        client.rename(tmp, path)
    except BaseException:
        try:
            client.remove(tmp)
        except OSError:
            pass
        raise


def load_checkpoint(path, *, client, model=None, map_location="cpu"):
    """torch.load of a t0fs path; with `model`, also model.load_state_dict(it).

    Returns what was saved (the state dict for a model).
    """
    with client.open(path, "rb", buffering=_CHECKPOINT_BUFFER) as f:
        state = torch.load(f, map_location=map_location)
    if model is not None:
        model.load_state_dict(state)
    return state
