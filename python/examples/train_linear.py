#!/usr/bin/python3
"""Train a small model on samples stored in t0fs, checkpointing into t0fs.

No mount needed: samples are read and checkpoints written by the t0fs module
(libt0fs inside this process). With a `make up` cluster running:

    PYTHONPATH=build/python python/examples/train_linear.py --dir t0fs-data

Each sample is one file: 16 float32 features and one float32 target, made
here from a known linear function so the loss visibly falls. A second run
resumes from the newest checkpoint.
"""

import argparse
import posixpath
import re
import struct

import torch
import torch.utils.data

import t0fs
import t0fs.pytorch

FEATURES = 16
SAMPLE = struct.Struct(f"<{FEATURES + 1}f")


def decode(data):
    """A sample file's bytes -> (features, target) tensors."""
    values = torch.tensor(SAMPLE.unpack(data))
    return values[:FEATURES], values[FEATURES:]


def write_samples(fs, root, count, seed):
    """`count` sample files under `root` (skipped when they are there)."""
    fs.makedirs(root, exist_ok=True)
    if len(fs.listdir(root)) >= count:
        return
    gen = torch.Generator().manual_seed(seed)
    weights = torch.randn(FEATURES, generator=gen)
    for i in range(count):
        x = torch.randn(FEATURES, generator=gen)
        y = float(x @ weights)
        fs.write_bytes(posixpath.join(root, f"{i:06d}.sample"), SAMPLE.pack(*x.tolist(), y))


def latest_checkpoint(fs, ckpt_dir):
    steps = [int(m.group(1)) for name in fs.listdir(ckpt_dir)
             if (m := re.fullmatch(r"epoch(\d+)\.pt", name))]
    return max(steps) if steps else None


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dir", help="a `t0fs up` cluster directory (default: ./t0fs-data)")
    parser.add_argument("--meta", help="meta host:port (with --secret-file)")
    parser.add_argument("--secret-file")
    parser.add_argument("--root", default="/examples/linear", help="t0fs directory of the example")
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--workers", type=int, default=2, help="DataLoader worker processes")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)

    fs = t0fs.connect(args.meta, cluster_dir=args.dir, secret_file=args.secret_file)
    data_dir, ckpt_dir = f"{args.root}/samples", f"{args.root}/checkpoints"
    write_samples(fs, data_dir, args.samples, args.seed)
    fs.makedirs(ckpt_dir, exist_ok=True)

    torch.manual_seed(args.seed)
    model = torch.nn.Linear(FEATURES, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    first = 0
    if (last := latest_checkpoint(fs, ckpt_dir)) is not None:
        state = t0fs.pytorch.load_checkpoint(f"{ckpt_dir}/epoch{last}.pt", client=fs)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        first = last + 1
        print(f"resumed from {ckpt_dir}/epoch{last}.pt")

    # With batch_size set, the DataLoader fetches a batch at once through
    # FileDataset.__getitems__, which reads its 32 files together
    # (Client.read_many, the batched API) instead of one after the other.
    dataset = t0fs.pytorch.FileDataset(fs, data_dir, suffix=".sample", transform=decode, depth=32)
    loader = torch.utils.data.DataLoader(dataset, batch_size=32, shuffle=True, num_workers=args.workers)
    losses = []
    for epoch in range(first, first + args.epochs):
        total = 0.0
        for x, y in loader:
            optimizer.zero_grad()
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(x)
        losses.append(total / len(dataset))
        path = f"{ckpt_dir}/epoch{epoch}.pt"
        t0fs.pytorch.save_checkpoint({"model": model.state_dict(), "optimizer": optimizer.state_dict()},
                                     path, client=fs)
        print(f"epoch {epoch}: loss {losses[-1]:.4f}, checkpoint {path}")
    fs.close()
    return losses


if __name__ == "__main__":
    main()
