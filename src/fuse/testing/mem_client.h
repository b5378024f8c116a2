// MemClient: an in-memory twin of libt0fs' Client, for tests that mount FUSE
// (or drive the op handlers) without a cluster.
//
// One inode table behind one mutex: directories (with stable readdir cookies:
// "." is 1, ".." is 2, entries from 3 in creation order), regular files,
// symlinks, device/fifo nodes, xattrs, hard links, rename with
// RENAME_NOREPLACE/RENAME_EXCHANGE, and unlink-while-open (an inode with no
// names lives until its last File is closed). Permissions are not checked
// (the kernel does it: default_permissions). Timestamps are wall time.
//
// Thread safety: safe for concurrent use, like the real Client.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "t0fs/client.h"

namespace t0fs::fuse::testing {

class MemFile;

class MemClient : public client::Client {
 public:
  MemClient();
  ~MemClient() override;

  Result<client::Attr> Lookup(InodeId parent, std::string_view name) override;
  Result<client::Attr> GetAttr(InodeId ino) override;
  Result<client::Attr> SetAttr(InodeId ino, const client::SetAttrArgs& args) override;
  Result<client::Attr> Mknod(InodeId parent, std::string_view name, uint32_t mode, uint32_t rdev,
                             const client::Caller& caller) override;
  Result<client::Attr> Mkdir(InodeId parent, std::string_view name, uint32_t mode,
                             const client::Caller& caller) override;
  Result<client::Attr> Symlink(InodeId parent, std::string_view name, std::string_view target,
                               const client::Caller& caller) override;
  Status Unlink(InodeId parent, std::string_view name) override;
  Status Rmdir(InodeId parent, std::string_view name) override;
  Status Rename(InodeId old_parent, std::string_view old_name, InodeId new_parent,
                std::string_view new_name, uint32_t flags) override;
  Result<client::Attr> Link(InodeId ino, InodeId new_parent, std::string_view new_name) override;
  Result<std::string> ReadLink(InodeId ino) override;
  Result<client::DirPage> ReadDir(InodeId dir, uint64_t cookie, uint32_t max_entries,
                                  bool with_attrs) override;
  Result<client::StatFs> GetStatFs() override;
  Result<std::string> GetXattr(InodeId ino, std::string_view name) override;
  Status SetXattr(InodeId ino, std::string_view name, std::string_view value,
                  uint32_t flags) override;
  Result<std::vector<std::string>> ListXattr(InodeId ino) override;
  Status RemoveXattr(InodeId ino, std::string_view name) override;

  Result<std::unique_ptr<client::File>> Open(InodeId ino, int flags) override;
  Result<std::unique_ptr<client::File>> Create(InodeId parent, std::string_view name,
                                               uint32_t mode, int flags,
                                               const client::Caller& caller,
                                               bool* created = nullptr) override;
  Result<client::LayoutInfo> GetLayout(InodeId ino) override;

  Result<client::Attr> ResolvePath(std::string_view path) override;
  Result<std::unique_ptr<client::File>> OpenPath(std::string_view path, int flags) override;
  Result<std::unique_ptr<client::File>> CreatePath(std::string_view path, uint32_t mode,
                                                   int flags = 0) override;
  Status MakeDirs(std::string_view path, uint32_t mode) override;

  void LimitRetries(Duration) override {}
  NodeId local_node() const override { return NodeId(1); }
  std::string cluster_id() const override { return "mem"; }
  client::IoCounters counters() const override { return {}; }

  // ---- test introspection ----
  size_t inode_count() const;
  size_t open_files() const;  // Files not yet closed
  // Called (without the lock) at the start of File::Read ("read"),
  // File::Flush ("flush") and GetXattr ("getxattr:<name>"); tests use it to
  // hold a request in flight or to count calls.
  void SetHook(std::function<void(std::string_view what)> hook);
  // Lookups answer `name` (in any directory) missing, as a client that has
  // not yet heard of another client's create would, until a create,
  // rename or link finds it taken (then the real client forgets its view).
  void HideFromLookup(std::string name);

 private:
  friend class MemFile;
  struct Inode;

  Inode* Find(InodeId ino);                          // requires mu_
  Result<Inode*> FindDir(InodeId ino);               // requires mu_
  Result<Inode*> NewChild(Inode* dir, std::string_view name, uint32_t mode,
                          const client::Caller& caller);  // requires mu_
  void AddEntry(Inode* dir, std::string_view name, InodeId ino);     // requires mu_
  void RemoveEntry(Inode* dir, std::string_view name);               // requires mu_
  void DropLink(Inode* inode);                                       // requires mu_
  void MaybeErase(Inode* inode);                                     // requires mu_
  Result<std::unique_ptr<client::File>> OpenLocked(Inode* inode, int flags);  // requires mu_
  void CloseFile(InodeId ino);
  void RunHook(std::string_view what);
  Result<InodeId> Walk(std::string_view path, bool parent_only, std::string* leaf);  // requires mu_
  Status Taken(std::string_view name);  // kExists for `name`, which lookups see again; requires mu_

  mutable std::mutex mu_;  // guards everything below; never held while calling out
  std::unordered_map<uint64_t, std::unique_ptr<Inode>> inodes_;
  uint64_t next_ino_ = 2;
  size_t open_files_ = 0;
  std::function<void(std::string_view)> hook_;
  std::set<std::string, std::less<>> hidden_;  // HideFromLookup
};

}  // namespace t0fs::fuse::testing
