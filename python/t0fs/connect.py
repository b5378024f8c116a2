"""Where a cluster is: the meta address and the secret.

The same places the `t0fs` admin commands look (src/cli/admin.h), minus the
mount table: an explicit meta address; a `t0fs up` cluster directory (its
t0fs.toml names meta's address, its `secret` file authenticates); else
./t0fs-data, the directory `make up` and `t0fs up` use by default.
"""

import os
import tomllib

DEFAULT_CLUSTER_DIR = "t0fs-data"


def _connect_address(listen):
    """The address to connect to for a listen address (a wildcard host means this host)."""
    host, sep, port = listen.rpartition(":")
    if not sep:
        raise ValueError(f"meta address {listen!r} is not host:port")
    if host in ("", "0.0.0.0", "*"):
        host = "127.0.0.1"
    elif host in ("[::]", "::"):
        host = "[::1]"
    return f"{host}:{port}"


def _read_cluster_dir(path):
    config = os.path.join(path, "t0fs.toml")
    try:
        with open(config, "rb") as f:
            table = tomllib.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(
            2, f"not a t0fs cluster directory (no t0fs.toml); run `t0fs up --dir {path}`", config
        ) from None
    listen = table.get("meta", {}).get("listen", "127.0.0.1:7700")
    return _connect_address(listen), os.path.join(path, "secret")


def locate(meta=None, cluster_dir=None, secret_file=None, secret=None):
    """Returns (meta address, secret file, secret) for connect().

    meta: "host:port" of the meta service; else the cluster directory's.
    cluster_dir: a `t0fs up` directory (t0fs.toml and secret inside); else
      ./t0fs-data when it exists and no meta address was given.
    secret_file / secret: the cluster secret; else the cluster directory's.
    Raises FileNotFoundError listing what was tried when nothing fits.
    """
    tried = []
    if cluster_dir is None and meta is None:
        if os.path.isfile(os.path.join(DEFAULT_CLUSTER_DIR, "t0fs.toml")):
            cluster_dir = DEFAULT_CLUSTER_DIR
        else:
            tried.append(f"./{DEFAULT_CLUSTER_DIR} (no t0fs.toml)")
    dir_secret = None
    if cluster_dir is not None:
        dir_meta, dir_secret = _read_cluster_dir(os.fspath(cluster_dir))
        if meta is None:
            meta = dir_meta
    if meta is None:
        raise FileNotFoundError(
            2, "no t0fs cluster found: pass meta='host:port' and secret_file=..., or cluster_dir=... "
            f"(tried {', '.join(tried)})")
    if not secret and secret_file is None:
        secret_file = dir_secret
    if not secret and secret_file is None:
        raise ValueError(f"no secret for the cluster at {meta}: pass secret_file=... or cluster_dir=...")
    return meta, (os.fspath(secret_file) if secret_file is not None else ""), secret or ""
