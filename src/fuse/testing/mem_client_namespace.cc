// MemClient's namespace operations (mem_client.h): lookup and attributes,
// mknod/mkdir/symlink, unlink/rmdir, rename (NOREPLACE, EXCHANGE), link,
// readlink, readdir with stable cookies, statfs.
#include <sys/stat.h>

#include <algorithm>
#include <string>
#include <utility>

#include "common/clock.h"
#include "fuse/testing/mem_client.h"
#include "fuse/testing/mem_inode.h"

namespace t0fs::fuse::testing {

using client::Attr;

Result<Attr> MemClient::Lookup(InodeId parent, std::string_view name) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * dir, FindDir(parent));
  if (name.size() > kMaxName) return Status(StatusCode::kNameTooLong, std::string(name));
  if (name == ".") return dir->attr;
  if (name == "..") {
    Inode* up = Find(dir->parent);
    return up != nullptr ? up->attr : dir->attr;
  }
  auto it = dir->names.find(name);
  if (it == dir->names.end() || hidden_.count(name) != 0) {
    return Status(StatusCode::kNotFound, std::string(name));
  }
  Inode* child = Find(dir->entries.at(it->second).second);
  if (child == nullptr) return Status(StatusCode::kInternal, "dangling entry");
  return child->attr;
}

Result<Attr> MemClient::GetAttr(InodeId ino) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  return inode->attr;
}

Result<Attr> MemClient::SetAttr(InodeId ino, const client::SetAttrArgs& args) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  Timespec now = WallNow();
  if (args.mask & client::kSetMode) {
    inode->attr.mode = (inode->attr.mode & S_IFMT) | (args.mode & 07777);
  }
  if (args.mask & client::kSetUid) inode->attr.uid = args.uid;
  if (args.mask & client::kSetGid) inode->attr.gid = args.gid;
  if (args.mask & client::kSetSize) {
    if (inode->is_dir()) return Status(StatusCode::kIsDirectory, "truncate a directory");
    if (!S_ISREG(inode->attr.mode)) return Status(StatusCode::kInvalidArgument, "not a file");
    if (args.size > kMaxFileSize) return Status(StatusCode::kFileTooBig, "MemClient limit");
    inode->data.resize(args.size);
    inode->attr.size = args.size;
    inode->attr.mtime = now;
  }
  if (args.mask & client::kSetAtime) inode->attr.atime = args.atime;
  if (args.mask & client::kSetAtimeNow) inode->attr.atime = now;
  if (args.mask & client::kSetMtime) inode->attr.mtime = args.mtime;
  if (args.mask & client::kSetMtimeNow) inode->attr.mtime = now;
  inode->attr.ctime = (args.mask & client::kSetCtime) ? args.ctime : now;
  return inode->attr;
}

Result<Attr> MemClient::Mknod(InodeId parent, std::string_view name, uint32_t mode, uint32_t rdev,
                              const client::Caller& caller) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * dir, FindDir(parent));
  if ((mode & S_IFMT) == 0) mode |= S_IFREG;
  if (S_ISDIR(mode) || S_ISLNK(mode)) return Status(StatusCode::kInvalidArgument, "mknod type");
  ASSIGN_OR_RETURN(Inode * node, NewChild(dir, name, mode, caller));
  node->attr.rdev = rdev;
  return node->attr;
}

Result<Attr> MemClient::Mkdir(InodeId parent, std::string_view name, uint32_t mode,
                              const client::Caller& caller) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * dir, FindDir(parent));
  ASSIGN_OR_RETURN(Inode * node, NewChild(dir, name, S_IFDIR | (mode & 07777), caller));
  return node->attr;
}

Result<Attr> MemClient::Symlink(InodeId parent, std::string_view name, std::string_view target,
                                const client::Caller& caller) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * dir, FindDir(parent));
  ASSIGN_OR_RETURN(Inode * node, NewChild(dir, name, S_IFLNK | 0777, caller));
  node->target = std::string(target);
  node->attr.size = target.size();
  return node->attr;
}

Status MemClient::Unlink(InodeId parent, std::string_view name) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * dir, FindDir(parent));
  auto it = dir->names.find(name);
  if (it == dir->names.end()) return Status(StatusCode::kNotFound, std::string(name));
  Inode* child = Find(dir->entries.at(it->second).second);
  if (child != nullptr && child->is_dir()) return Status(StatusCode::kIsDirectory, "unlink dir");
  RemoveEntry(dir, name);
  if (child != nullptr) DropLink(child);
  return Status::Ok();
}

Status MemClient::Rmdir(InodeId parent, std::string_view name) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * dir, FindDir(parent));
  if (name == ".") return Status(StatusCode::kInvalidArgument, "rmdir .");
  auto it = dir->names.find(name);
  if (it == dir->names.end()) return Status(StatusCode::kNotFound, std::string(name));
  Inode* child = Find(dir->entries.at(it->second).second);
  if (child == nullptr || !child->is_dir()) return Status(StatusCode::kNotDirectory, "rmdir");
  if (!child->names.empty()) return Status(StatusCode::kNotEmpty, std::string(name));
  RemoveEntry(dir, name);
  dir->attr.nlink--;
  DropLink(child);
  return Status::Ok();
}

Status MemClient::Rename(InodeId old_parent, std::string_view old_name, InodeId new_parent,
                         std::string_view new_name, uint32_t flags) {
  constexpr uint32_t kNoReplace = 1, kExchange = 2;
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * from_dir, FindDir(old_parent));
  ASSIGN_OR_RETURN(Inode * to_dir, FindDir(new_parent));
  if (!ValidName(new_name)) return Status(StatusCode::kInvalidArgument, "bad name");
  if (new_name.size() > kMaxName) return Status(StatusCode::kNameTooLong, std::string(new_name));
  auto from_it = from_dir->names.find(old_name);
  if (from_it == from_dir->names.end()) return Status(StatusCode::kNotFound, std::string(old_name));
  const InodeId moving_id = from_dir->entries.at(from_it->second).second;
  Inode* moving = Find(moving_id);
  auto to_it = to_dir->names.find(new_name);
  Inode* target = to_it == to_dir->names.end() ? nullptr
                                               : Find(to_dir->entries.at(to_it->second).second);
  // A directory may not move below itself.
  if (moving->is_dir()) {
    for (InodeId up = to_dir->attr.ino;; up = Find(up)->parent) {
      if (up == moving_id) return Status(StatusCode::kInvalidArgument, "move into itself");
      if (up == kRootInode) break;
    }
  }
  if (flags & kExchange) {
    if (target == nullptr) return Status(StatusCode::kNotFound, std::string(new_name));
    to_dir->entries[to_it->second].second = moving_id;
    from_dir->entries[from_it->second].second = target->attr.ino;
    if (moving->is_dir() != target->is_dir() && from_dir != to_dir) {
      Inode* dir_side = moving->is_dir() ? to_dir : from_dir;
      Inode* file_side = moving->is_dir() ? from_dir : to_dir;
      dir_side->attr.nlink++;
      file_side->attr.nlink--;
    }
    std::swap(moving->parent, target->parent);
    moving->Touch(false);
    target->Touch(false);
    from_dir->Touch(true);
    to_dir->Touch(true);
    return Status::Ok();
  }
  if (target != nullptr) {
    if (flags & kNoReplace) return Taken(new_name);
    if (target == moving) return Status::Ok();  // two names of one inode: nothing to do
    if (target->is_dir() && !moving->is_dir()) return Status(StatusCode::kIsDirectory, "target");
    if (!target->is_dir() && moving->is_dir()) return Status(StatusCode::kNotDirectory, "target");
    if (target->is_dir() && !target->names.empty()) return Status(StatusCode::kNotEmpty, "target");
    RemoveEntry(to_dir, new_name);
    if (target->is_dir()) to_dir->attr.nlink--;
    DropLink(target);
  }
  std::string name(old_name);
  RemoveEntry(from_dir, name);
  AddEntry(to_dir, new_name, moving_id);
  if (moving->is_dir() && from_dir != to_dir) {
    from_dir->attr.nlink--;
    to_dir->attr.nlink++;
  }
  moving->parent = to_dir->attr.ino;
  moving->Touch(false);
  return Status::Ok();
}

Result<Attr> MemClient::Link(InodeId ino, InodeId new_parent, std::string_view new_name) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  if (inode->is_dir()) return Status(StatusCode::kNotPermitted, "link a directory");
  ASSIGN_OR_RETURN(Inode * dir, FindDir(new_parent));
  if (!ValidName(new_name)) return Status(StatusCode::kInvalidArgument, "bad name");
  if (new_name.size() > kMaxName) return Status(StatusCode::kNameTooLong, std::string(new_name));
  if (dir->names.count(new_name) != 0) return Taken(new_name);
  AddEntry(dir, new_name, ino);
  inode->attr.nlink++;
  inode->Touch(false);
  return inode->attr;
}

Result<std::string> MemClient::ReadLink(InodeId ino) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  if (!S_ISLNK(inode->attr.mode)) return Status(StatusCode::kInvalidArgument, "not a symlink");
  return inode->target;
}

Result<client::DirPage> MemClient::ReadDir(InodeId dir_ino, uint64_t cookie, uint32_t max_entries,
                                           bool with_attrs) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * dir, FindDir(dir_ino));
  client::DirPage page;
  auto emit = [&](std::string name, const Inode* inode, uint64_t at) {
    client::DirEntry e;
    e.name = std::move(name);
    e.ino = inode->attr.ino;
    e.mode = inode->attr.mode;
    e.cookie = at;
    if (with_attrs) e.attr = inode->attr;
    page.entries.push_back(std::move(e));
  };
  if (cookie < kDotCookie && page.entries.size() < max_entries) emit(".", dir, kDotCookie);
  if (cookie < kDotDotCookie && page.entries.size() < max_entries) {
    const Inode* up = Find(dir->parent);
    emit("..", up != nullptr ? up : dir, kDotDotCookie);
  }
  auto it = dir->entries.upper_bound(std::max(cookie, kDotDotCookie));
  for (; it != dir->entries.end() && page.entries.size() < max_entries; ++it) {
    const Inode* child = Find(it->second.second);
    if (child != nullptr) emit(it->second.first, child, it->first);
  }
  page.eof = it == dir->entries.end();
  return page;
}

Result<client::StatFs> MemClient::GetStatFs() {
  std::lock_guard lock(mu_);
  uint64_t used = 0;
  for (const auto& [id, inode] : inodes_) used += inode->data.size();
  client::StatFs fs;
  fs.total_bytes = kCapacity;
  fs.free_bytes = kCapacity - std::min(used, kCapacity);
  fs.files = inodes_.size();
  return fs;
}

}  // namespace t0fs::fuse::testing
