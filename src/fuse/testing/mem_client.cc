// MemClient (mem_client.h): the inode table (create, link counts, erase when
// unlinked and closed), open/create/close, and the test introspection.
// Names and directories: mem_client_namespace.cc; xattrs: mem_client_xattr.cc;
// paths: mem_client_path.cc; open files: mem_file.cc.
#include "fuse/testing/mem_client.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "common/clock.h"
#include "fuse/testing/mem_file.h"
#include "fuse/testing/mem_inode.h"

namespace t0fs::fuse::testing {

using client::Attr;

MemClient::MemClient() {
  auto root = std::make_unique<Inode>();
  root->attr.ino = kRootInode;
  root->attr.mode = S_IFDIR | 0755;
  root->attr.nlink = 2;
  root->attr.generation = 1;
  root->attr.atime = root->attr.mtime = root->attr.ctime = WallNow();
  root->parent = kRootInode;
  inodes_[kRootInode.value()] = std::move(root);
}

MemClient::~MemClient() = default;

MemClient::Inode* MemClient::Find(InodeId ino) {
  auto it = inodes_.find(ino.value());
  return it == inodes_.end() ? nullptr : it->second.get();
}

Result<MemClient::Inode*> MemClient::FindDir(InodeId ino) {
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such directory");
  if (!inode->is_dir()) return Status(StatusCode::kNotDirectory, "not a directory");
  return inode;
}

Result<MemClient::Inode*> MemClient::NewChild(Inode* dir, std::string_view name, uint32_t mode,
                                              const client::Caller& caller) {
  if (!ValidName(name)) return Status(StatusCode::kInvalidArgument, "bad name");
  if (name.size() > kMaxName) return Status(StatusCode::kNameTooLong, std::string(name));
  if (dir->names.count(name) != 0) return Taken(name);
  auto inode = std::make_unique<Inode>();
  Inode* raw = inode.get();
  raw->attr.ino = InodeId(next_ino_++);
  raw->attr.mode = mode;
  raw->attr.uid = caller.uid;
  raw->attr.gid = caller.gid;
  raw->attr.nlink = S_ISDIR(mode) ? 2 : 1;
  raw->attr.generation = 1;
  raw->attr.atime = raw->attr.mtime = raw->attr.ctime = WallNow();
  raw->parent = dir->attr.ino;
  inodes_[raw->attr.ino.value()] = std::move(inode);
  AddEntry(dir, name, raw->attr.ino);
  if (S_ISDIR(mode)) dir->attr.nlink++;
  return raw;
}

void MemClient::AddEntry(Inode* dir, std::string_view name, InodeId ino) {
  uint64_t cookie = dir->next_cookie++;
  dir->names.emplace(std::string(name), cookie);
  dir->entries.emplace(cookie, std::make_pair(std::string(name), ino));
  dir->Touch(true);
}

void MemClient::RemoveEntry(Inode* dir, std::string_view name) {
  auto it = dir->names.find(name);
  if (it == dir->names.end()) return;
  dir->entries.erase(it->second);
  dir->names.erase(it);
  dir->Touch(true);
}

void MemClient::DropLink(Inode* inode) {
  if (inode->is_dir()) {
    inode->attr.nlink = 0;
  } else if (inode->attr.nlink > 0) {
    inode->attr.nlink--;
  }
  inode->Touch(false);
  MaybeErase(inode);
}

void MemClient::MaybeErase(Inode* inode) {
  if (inode->attr.nlink == 0 && inode->open_count == 0) inodes_.erase(inode->attr.ino.value());
}

Result<std::unique_ptr<client::File>> MemClient::OpenLocked(Inode* inode, int flags) {
  if (inode->is_dir() && (flags & O_ACCMODE) != O_RDONLY) {
    return Status(StatusCode::kIsDirectory, "open a directory for writing");
  }
  if ((flags & O_TRUNC) && S_ISREG(inode->attr.mode) && (flags & O_ACCMODE) != O_RDONLY) {
    inode->data.clear();
    inode->attr.size = 0;
    inode->Touch(true);
  }
  inode->open_count++;
  open_files_++;
  return NewMemFile(this, inode->attr.ino, flags);
}

Result<std::unique_ptr<client::File>> MemClient::Open(InodeId ino, int flags) {
  std::lock_guard lock(mu_);
  Inode* inode = Find(ino);
  if (inode == nullptr) return Status(StatusCode::kNotFound, "no such inode");
  return OpenLocked(inode, flags);
}

Result<std::unique_ptr<client::File>> MemClient::Create(InodeId parent, std::string_view name,
                                                        uint32_t mode, int flags,
                                                        const client::Caller& caller,
                                                        bool* created) {
  std::lock_guard lock(mu_);
  ASSIGN_OR_RETURN(Inode * dir, FindDir(parent));
  if (created != nullptr) *created = false;
  auto it = dir->names.find(name);
  if (it != dir->names.end()) {
    if (flags & O_EXCL) return Taken(name);
    Inode* existing = Find(dir->entries.at(it->second).second);
    if (existing == nullptr) return Status(StatusCode::kInternal, "dangling entry");
    if (existing->is_dir()) return Status(StatusCode::kIsDirectory, std::string(name));
    return OpenLocked(existing, flags);
  }
  ASSIGN_OR_RETURN(Inode * node, NewChild(dir, name, S_IFREG | (mode & 07777), caller));
  if (created != nullptr) *created = true;
  return OpenLocked(node, flags & ~O_TRUNC);
}

void MemClient::CloseFile(InodeId ino) {
  std::lock_guard lock(mu_);
  open_files_--;
  Inode* inode = Find(ino);
  if (inode == nullptr) return;
  inode->open_count--;
  MaybeErase(inode);
}

Result<client::LayoutInfo> MemClient::GetLayout(InodeId) {
  return Status(StatusCode::kUnimplemented, "MemClient has no chunks");
}

size_t MemClient::inode_count() const {
  std::lock_guard lock(mu_);
  return inodes_.size();
}

size_t MemClient::open_files() const {
  std::lock_guard lock(mu_);
  return open_files_;
}

void MemClient::SetHook(std::function<void(std::string_view)> hook) {
  std::lock_guard lock(mu_);
  hook_ = std::move(hook);
}

void MemClient::HideFromLookup(std::string name) {
  std::lock_guard lock(mu_);
  hidden_.insert(std::move(name));
}

Status MemClient::Taken(std::string_view name) {
  if (auto it = hidden_.find(name); it != hidden_.end()) hidden_.erase(it);
  return Status(StatusCode::kExists, std::string(name));
}

void MemClient::RunHook(std::string_view what) {
  std::function<void(std::string_view)> hook;
  {
    std::lock_guard lock(mu_);
    hook = hook_;
  }
  if (hook) hook(what);
}
}  // namespace t0fs::fuse::testing
