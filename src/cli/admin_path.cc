#include "cli/admin_path.h"

#include <fmt/format.h>

#include "common/mount_probe.h"
#include "common/mountinfo.h"
#include "common/config.h"
#include "rpc/proto/meta.pb.h"

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

Result<uint64_t> ResolveInode(AdminTarget& t, const std::string& path) {
  if (!IsInnerPath(path)) return MountedInode(path);
  std::string inner = path.substr(5);
  if (inner.empty() || inner[0] != '/')
    return Status(StatusCode::kInvalidArgument, "t0fs: paths are absolute");
  uint64_t ino = 1;
  size_t pos = 1;
  while (pos < inner.size()) {
    size_t end = inner.find('/', pos);
    if (end == std::string::npos) end = inner.size();
    std::string part = inner.substr(pos, end - pos);
    pos = end + 1;
    if (part.empty() || part == ".") continue;
    pb::LookupReq req;
    req.set_parent(ino);
    req.set_name(part);
    pb::AttrRsp rsp;
    Status st = t.channel->Call<rpc::Method::kLookup>(req, &rsp);
    if (!st.ok()) return st.WithContext(path);
    ino = rsp.attr().ino();
  }
  return ino;
}

std::string DescribeObjective(const pb::Objective& o) {
  std::string nodes;
  for (uint64_t n : o.nodes()) nodes += (nodes.empty() ? "" : ",") + std::to_string(n);
  return fmt::format("replicas={} placement={}{}{}", o.replicas(),
                     o.placement() == pb::PLACEMENT_LOCAL ? "local" : "spread",
                     nodes.empty() ? "" : " nodes=" + nodes,
                     o.chunk_size() == 0 ? "" : " chunk-size=" + FormatByteSize(o.chunk_size()));
}

}  // namespace t0fs::cli
