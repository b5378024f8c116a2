// MemClient's path operations (mem_client.h): walking an absolute path from
// the root, and resolve/open/create/mkdir -p by path.
#include <sys/stat.h>

#include <fcntl.h>

#include <string>
#include <vector>

#include "fuse/testing/mem_client.h"
#include "fuse/testing/mem_inode.h"

namespace t0fs::fuse::testing {

using client::Attr;

Result<InodeId> MemClient::Walk(std::string_view path, bool parent_only, std::string* leaf) {
  if (path.empty() || path[0] != '/') return Status(StatusCode::kInvalidArgument, "relative path");
  InodeId at = kRootInode;
  std::vector<std::string_view> parts;
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) parts.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  if (parent_only) {
    if (parts.empty()) return Status(StatusCode::kInvalidArgument, "no name");
    *leaf = std::string(parts.back());
    parts.pop_back();
  }
  for (std::string_view part : parts) {
    ASSIGN_OR_RETURN(Inode * dir, FindDir(at));
    auto it = dir->names.find(part);
    if (it == dir->names.end()) return Status(StatusCode::kNotFound, std::string(path));
    at = dir->entries.at(it->second).second;
  }
  return at;
}

Result<Attr> MemClient::ResolvePath(std::string_view path) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(InodeId ino, Walk(path, false, nullptr));
  return Find(ino)->attr;
}

Result<std::unique_ptr<client::File>> MemClient::OpenPath(std::string_view path, int flags) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(InodeId ino, Walk(path, false, nullptr));
  return OpenLocked(Find(ino), flags);
}

Result<std::unique_ptr<client::File>> MemClient::CreatePath(std::string_view path, uint32_t mode,
                                                            int flags) {
  std::string leaf;
  InodeId parent;
  {
    std::lock_guard lock(mu_);
    ASSIGN_OR_RETURN(parent, Walk(path, true, &leaf));
  }
  return Create(parent, leaf, mode, flags | O_RDWR, client::Caller{});
}

Status MemClient::MakeDirs(std::string_view path, uint32_t mode) {
  std::lock_guard lock(mu_);
  InodeId at = kRootInode;
  size_t pos = 1;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    std::string_view part = path.substr(pos, slash - pos);
    pos = slash + 1;
    if (part.empty()) continue;
    ASSIGN_OR_RETURN(Inode * dir, FindDir(at));
    auto it = dir->names.find(part);
    if (it != dir->names.end()) {
      at = dir->entries.at(it->second).second;
      continue;
    }
    ASSIGN_OR_RETURN(Inode * made, NewChild(dir, part, S_IFDIR | (mode & 07777), {}));
    at = made->attr.ino;
  }
  return Status::Ok();
}

}  // namespace t0fs::fuse::testing
