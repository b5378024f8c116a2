#!/usr/bin/env bash
# The t0fs Python module (python/, docs/python.md) against a real single-node
# cluster with a mount: python_api_test.py checks the module against what the
# mount shows and the reverse, errno mapping, torch checkpoints both ways and
# the Dataset under a DataLoader. One Python process (importing torch takes
# seconds). Skips (77) only when the module was not built.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ -z "${T0FS_PYTHON_PATH:-}" || ! -d "${T0FS_PYTHON_PATH}/t0fs" ]]; then
  echo "SKIP: the t0fs Python module was not built (needs python3-dev and python3-pybind11;" \
    "scripts/install-deps installs them, then reconfigure the build)" >&2
  exit 77
fi
source "$here/../lib/cluster.sh"

SEED=${SEED:-$RANDOM}
log "seed $SEED (rerun with SEED=$SEED)"
# Names and attributes uncached in the kernel: the mount sees the module's
# changes at once (the module is another client; close-to-open either way).
cluster_start 1M --entry-timeout 0 --attr-timeout 0

# A `t0fs up`-style cluster directory naming this cluster, for connect(cluster_dir=...).
mkdir -p "$CLUSTER_DIR/updir"
printf '[meta]\nlisten = "%s"\n' "$META_ADDR" >"$CLUSTER_DIR/updir/t0fs.toml"
cp "$CLUSTER_DIR/secret" "$CLUSTER_DIR/updir/secret"

PYTHONPATH="$T0FS_PYTHON_PATH" PYTHONDONTWRITEBYTECODE=1 /usr/bin/python3 "$here/python_api_test.py" \
  --meta "$META_ADDR" --secret-file "$CLUSTER_DIR/secret" --cluster-dir "$CLUSTER_DIR/updir" \
  --mount "$MNT" --seed "$SEED" --examples "$here/../../python/examples"
fsck_clean
log "PASS"
