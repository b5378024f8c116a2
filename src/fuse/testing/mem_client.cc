#include "fuse/testing/mem_client.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstring>

#include "common/clock.h"

namespace t0fs::fuse::testing {

using client::Attr;

namespace {
constexpr size_t kMaxName = 255;
constexpr uint64_t kCapacity = uint64_t(1) << 40;  // what statfs reports
// Files live in memory: larger sizes are EFBIG (not an allocation failure).
constexpr uint64_t kMaxFileSize = uint64_t(256) << 20;
constexpr uint64_t kDotCookie = 1;
constexpr uint64_t kDotDotCookie = 2;
constexpr uint64_t kFirstEntryCookie = 3;

bool ValidName(std::string_view name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string_view::npos;
}
}  // namespace

struct MemClient::Inode {
  Attr attr;
  std::vector<std::byte> data;                 // regular files
  std::string target;                          // symlinks
  std::map<std::string, std::string, std::less<>> xattrs;
  // Directories: name -> cookie and cookie -> (name, inode), so a listing
  // resumes after any cookie even while entries come and go.
  std::map<std::string, uint64_t, std::less<>> names;
  std::map<uint64_t, std::pair<std::string, InodeId>> entries;
  uint64_t next_cookie = kFirstEntryCookie;
  InodeId parent;
  uint32_t open_count = 0;

  bool is_dir() const { return S_ISDIR(attr.mode); }
  void Touch(bool content) {
    Timespec now = WallNow();
    attr.ctime = now;
    if (content) attr.mtime = now;
  }
};

class MemFile : public client::File {
 public:
  MemFile(MemClient* owner, InodeId ino, int flags) : owner_(owner), ino_(ino), flags_(flags) {}
  ~MemFile() override { (void)Close(); }

  Result<size_t> Read(uint64_t offset, std::span<std::byte> buf) override {
    owner_->RunHook("read");
    std::lock_guard lock(owner_->mu_);
    if (closed_) return Status(StatusCode::kBadHandle, "read after close");
    MemClient::Inode* inode = owner_->Find(ino_);
    if (inode == nullptr) return Status(StatusCode::kStale, "inode gone");
    if (offset >= inode->data.size()) return size_t(0);
    size_t n = std::min<uint64_t>(buf.size(), inode->data.size() - offset);
    std::memcpy(buf.data(), inode->data.data() + offset, n);
    return n;
  }

  Result<size_t> Write(uint64_t offset, std::span<const std::byte> data) override {
    std::lock_guard lock(owner_->mu_);
    if (closed_) return Status(StatusCode::kBadHandle, "write after close");
    if ((flags_ & O_ACCMODE) == O_RDONLY) return Status(StatusCode::kBadHandle, "read-only");
    MemClient::Inode* inode = owner_->Find(ino_);
    if (inode == nullptr) return Status(StatusCode::kStale, "inode gone");
    if (flags_ & O_APPEND) offset = inode->data.size();
    if (offset > kMaxFileSize || data.size() > kMaxFileSize - offset) {
      return Status(StatusCode::kFileTooBig, "MemClient file size limit");
    }
    if (offset + data.size() > inode->data.size()) inode->data.resize(offset + data.size());
    std::memcpy(inode->data.data() + offset, data.data(), data.size());
    inode->attr.size = inode->data.size();
    inode->Touch(true);
    return data.size();
  }

  Status Flush() override { return closed_ ? Status(StatusCode::kBadHandle) : Status::Ok(); }
  Status Fsync(bool) override { return Flush(); }

  Status Truncate(uint64_t size) override {
    std::lock_guard lock(owner_->mu_);
    MemClient::Inode* inode = owner_->Find(ino_);
    if (inode == nullptr) return Status(StatusCode::kStale, "inode gone");
    if (size > kMaxFileSize) return Status(StatusCode::kFileTooBig, "MemClient file size limit");
    inode->data.resize(size);
    inode->attr.size = size;
    inode->Touch(true);
    return Status::Ok();
  }

  // As client::File documents it: mode 0 extends, KEEP_SIZE does nothing
  // visible, PUNCH_HOLE|KEEP_SIZE and ZERO_RANGE zero the range.
  Status Fallocate(int mode, uint64_t offset, uint64_t length) override {
    const bool keep = (mode & FALLOC_FL_KEEP_SIZE) != 0;
    const int kind = mode & ~FALLOC_FL_KEEP_SIZE;
    if (kind != 0 && kind != FALLOC_FL_PUNCH_HOLE && kind != FALLOC_FL_ZERO_RANGE) {
      return Status(StatusCode::kNotSupported, "fallocate mode");
    }
    if (kind == FALLOC_FL_PUNCH_HOLE && !keep) return Status(StatusCode::kNotSupported, "punch without keep size");
    std::lock_guard lock(owner_->mu_);
    MemClient::Inode* inode = owner_->Find(ino_);
    if (inode == nullptr) return Status(StatusCode::kStale, "inode gone");
    const uint64_t end = offset + length;
    if (end < offset || end > kMaxFileSize) return Status(StatusCode::kFileTooBig, "MemClient file size limit");
    if (kind != 0 && offset < inode->data.size()) {
      std::memset(inode->data.data() + offset, 0, std::min<uint64_t>(end, inode->data.size()) - offset);
    }
    if (!keep && end > inode->data.size()) inode->data.resize(end);
    inode->attr.size = inode->data.size();
    inode->Touch(true);
    return Status::Ok();
  }

  // In memory: nothing the kernel could use as a backing file.
  Result<client::PassthroughFile> OpenPassthrough(bool, bool) override {
    return Status(StatusCode::kNotSupported, "in-memory file");
  }
  void AbandonPassthrough() override {}

  Status Close() override {
    if (closed_.exchange(true)) return Status::Ok();
    owner_->CloseFile(ino_);
    return Status::Ok();
  }

  InodeId ino() const override { return ino_; }
  uint64_t size() const override { return attr().size; }
  Attr attr() const override {
    std::lock_guard lock(owner_->mu_);
    MemClient::Inode* inode = owner_->Find(ino_);
    return inode != nullptr ? inode->attr : Attr{};
  }

 private:
  MemClient* owner_;
  const InodeId ino_;
  const int flags_;
  std::atomic<bool> closed_{false};
};

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
  if (dir->names.count(name) != 0) return Status(StatusCode::kExists, std::string(name));
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
  if (it == dir->names.end()) return Status(StatusCode::kNotFound, std::string(name));
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
    if (flags & kNoReplace) return Status(StatusCode::kExists, std::string(new_name));
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
  if (dir->names.count(new_name) != 0) return Status(StatusCode::kExists, std::string(new_name));
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
  return std::unique_ptr<client::File>(new MemFile(this, inode->attr.ino, flags));
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
    if (flags & O_EXCL) return Status(StatusCode::kExists, std::string(name));
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

void MemClient::RunHook(std::string_view what) {
  std::function<void(std::string_view)> hook;
  {
    std::lock_guard lock(mu_);
    hook = hook_;
  }
  if (hook) hook(what);
}

}  // namespace t0fs::fuse::testing
