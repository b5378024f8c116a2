#include "cli/admin_path.h"

#include <fmt/format.h>

#include "common/mount_probe.h"
#include "common/mountinfo.h"

namespace t0fs::cli {
namespace {

// The inode of a path on a t0fs mount: its st_ino (no meta needed). The
// device check (against the mount table, so no other mount is touched)
// keeps a path on another file system from naming a random inode.
Result<uint64_t> MountedInode(const std::string& path) {
  ASSIGN_OR_RETURN(struct stat st, StatWithTimeout(path));
  for (const MountEntry& m : ReadMounts()) {
    if (m.is_t0fs() && m.dev == st.st_dev) return static_cast<uint64_t>(st.st_ino);
  }
  return Status(
      StatusCode::kInvalidArgument,
      fmt::format("{} is not on a t0fs mount (for a path inside t0fs, write t0fs:/path)", path));
}

}  // namespace

bool IsInnerPath(const std::string& path) {
  return path.rfind("t0fs:", 0) == 0;
}

Status PrecheckPath(const std::string& path) {
  if (IsInnerPath(path)) return Status::Ok();
  return MountedInode(path).status();
}

std::string LocatingPath(const std::string& path) {
  return IsInnerPath(path) ? "" : path;
}

Result<uint64_t> ResolveInode(client::AdminClient& admin, const std::string& path) {
  if (!IsInnerPath(path)) return MountedInode(path);
  auto ino = admin.Resolve(std::string_view(path).substr(5));
  if (!ino.ok()) return ino.status().WithContext(path);
  return ino->value();
}

}  // namespace t0fs::cli
