// MemClient's extended attributes (mem_client.h): get (with the test hook),
// set (XATTR_CREATE / XATTR_REPLACE), list, remove.
#include <string>
#include <vector>

#include "fuse/testing/mem_client.h"
#include "fuse/testing/mem_inode.h"

namespace t0fs::fuse::testing {

Result<std::string> MemClient::GetXattr(InodeId ino, std::string_view name) {
  RunHook("getxattr:" + std::string(name));
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  auto it = inode->xattrs.find(name);
  if (it == inode->xattrs.end()) return Status(StatusCode::kNoData, std::string(name));
  return it->second;
}

Status MemClient::SetXattr(InodeId ino, std::string_view name, std::string_view value,
                           uint32_t flags) {
  constexpr uint32_t kCreate = 1, kReplace = 2;
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  auto it = inode->xattrs.find(name);
  if ((flags & kCreate) && it != inode->xattrs.end()) return Status(StatusCode::kExists, "xattr");
  if ((flags & kReplace) && it == inode->xattrs.end()) return Status(StatusCode::kNoData, "xattr");
  inode->xattrs[std::string(name)] = std::string(value);
  inode->Touch(false);
  return Status::Ok();
}

Result<std::vector<std::string>> MemClient::ListXattr(InodeId ino) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  std::vector<std::string> names;
  for (const auto& [name, value] : inode->xattrs) names.push_back(name);
  return names;
}

Status MemClient::RemoveXattr(InodeId ino, std::string_view name) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  auto it = inode->xattrs.find(name);
  if (it == inode->xattrs.end()) return Status(StatusCode::kNoData, std::string(name));
  inode->xattrs.erase(it);
  inode->Touch(false);
  return Status::Ok();
}

}  // namespace t0fs::fuse::testing
