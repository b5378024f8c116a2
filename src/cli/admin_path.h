// PATH arguments of admin commands (objective, layout): a path on a t0fs
// mount — its inode is its st_ino, and the mount tells which cluster
// (admin.h) — or, with the "t0fs:" prefix, a path inside the file system
// (t0fs:/ckpt/run1), resolved by meta.
//
// A stat of a path on a mount runs in a child with a timeout
// (mount_probe.h): a hung mount makes the command fail, not hang.
#pragma once

#include <cstdint>
#include <string>

#include "cli/admin.h"
#include "common/status.h"
#include "t0fs/admin.h"

namespace t0fs::cli {

bool IsInnerPath(const std::string& path);

// What can be said about PATH without meta: a local path must be on a t0fs
// mount. Checked before connecting, so that the error is about the path.
Status PrecheckPath(const std::string& path);

// The path ConnectAdmin locates the cluster by: PATH itself, or none for an
// inner path.
std::string LocatingPath(const std::string& path);

// The inode PATH names.
Result<uint64_t> ResolveInode(client::AdminClient& admin, const std::string& path);

}  // namespace t0fs::cli
