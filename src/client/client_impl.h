// ClientImpl: the implementation of t0fs::client::Client (see t0fs/client.h).
//
// Owns the MetaClient (session, retries) and the DataClient (replicas), and
// the table of InodeStates shared by open Files. Files call back into it for
// layout, allocation, data I/O and commits.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "client/data_client.h"
#include "client/inode_state.h"
#include "client/io_stats.h"
#include "client/layout_cache.h"
#include "client/meta_client.h"
#include "client/passthrough.h"
#include "client/replica_io.h"
#include "t0fs/client.h"

namespace t0fs::client {

class ClientImpl final : public Client {
 public:
  ClientImpl(const ClientOptions& options, std::string secret);
  ~ClientImpl() override;
  Status Connect();

  // ---- Client ----
  Result<Attr> Lookup(InodeId parent, std::string_view name) override;
  Result<Attr> GetAttr(InodeId ino) override;
  Result<Attr> SetAttr(InodeId ino, const SetAttrArgs& args) override;
  Result<Attr> Mknod(InodeId parent, std::string_view name, uint32_t mode, uint32_t rdev,
                     const Caller& caller) override;
  Result<Attr> Mkdir(InodeId parent, std::string_view name, uint32_t mode, const Caller& caller) override;
  Result<Attr> Symlink(InodeId parent, std::string_view name, std::string_view target,
                       const Caller& caller) override;
  Status Unlink(InodeId parent, std::string_view name) override;
  Status Rmdir(InodeId parent, std::string_view name) override;
  Status Rename(InodeId old_parent, std::string_view old_name, InodeId new_parent,
                std::string_view new_name, uint32_t flags) override;
  Result<Attr> Link(InodeId ino, InodeId new_parent, std::string_view new_name) override;
  Result<std::string> ReadLink(InodeId ino) override;
  Result<DirPage> ReadDir(InodeId dir, uint64_t cookie, uint32_t max_entries, bool with_attrs) override;
  Result<StatFs> GetStatFs() override;
  Result<std::string> GetXattr(InodeId ino, std::string_view name) override;
  Status SetXattr(InodeId ino, std::string_view name, std::string_view value, uint32_t flags) override;
  Result<std::vector<std::string>> ListXattr(InodeId ino) override;
  Status RemoveXattr(InodeId ino, std::string_view name) override;
  Result<std::unique_ptr<File>> Open(InodeId ino, int flags) override;
  Result<std::unique_ptr<File>> Create(InodeId parent, std::string_view name, uint32_t mode, int flags,
                                       const Caller& caller, bool* created) override;
  Result<LayoutInfo> GetLayout(InodeId ino) override;
  Result<Attr> ResolvePath(std::string_view path) override;
  Result<std::unique_ptr<File>> OpenPath(std::string_view path, int flags) override;
  Result<std::unique_ptr<File>> CreatePath(std::string_view path, uint32_t mode, int flags) override;
  Status MakeDirs(std::string_view path, uint32_t mode) override;
  void LimitRetries(Duration limit) override { meta_.LimitRetries(limit); }
  NodeId local_node() const override { return meta_.local_node(); }
  std::string cluster_id() const override { return meta_.cluster_id(); }
  IoCounters counters() const override;

  // ---- used by FileImpl (client_data.cc) ----
  // The layout room: chunks, capabilities, allocation.
  LayoutCache& layouts() { return layouts_; }
  // The replica room: reads, writes and fsync of replicas.
  ReplicaIo& replicas() { return replicas_; }
  // Commits pending writes of `st` (handle may be 0); CommitLocked with
  // st.commit_mu held.
  Status Commit(InodeState& st, HandleId handle, bool durable);
  Status CommitLocked(InodeState& st, HandleId handle, bool durable);
  // Truncates to `size`: data of the boundary chunk first, then meta.
  // Serialised with passthrough setup and teardown (st->passthrough_mu,
  // unless the caller holds it: `setup_locked`), so that a last writer's
  // final sync cannot bring back data a truncate removed.
  Result<Attr> Truncate(InodeId ino, InodeState* st, uint64_t size, bool setup_locked = false);
  Status ReleaseHandle(HandleId handle);
  // The passthrough room.
  Passthrough& passthrough() { return passthrough_; }
  void Forget(const std::shared_ptr<InodeState>& st);

 private:
  std::shared_ptr<InodeState> StateFor(const Attr& attr, bool writable);
  Result<std::unique_ptr<File>> OpenWith(const OpenReply& opened, int flags);
  Result<std::pair<Attr, std::string>> ResolveParent(std::string_view path);
  // The InodeState of `ino` if a File of this client has it open.
  std::shared_ptr<InodeState> OpenState(InodeId ino);
  // `attr` (from meta) with what this client's open Files changed and did
  // not commit yet: size, mtime, a passthrough writer's chunk file.
  Attr WithOpenState(Attr attr);
  // The attribute cache of open inodes (InodeState::meta_attr).
  void NoteMetaAttr(InodeState& st, const Attr& attr);
  void ForgetMetaAttr(InodeId ino);
  void ForgetMetaAttrs();

  ClientOptions options_;
  MetaClient meta_;
  DataClient data_;
  LayoutCache layouts_;
  IoStats stats_;
  ReplicaIo replicas_;
  Passthrough passthrough_;

  std::mutex inodes_mu_;  // guards inodes_ (taken before any InodeState::mu)
  std::unordered_map<InodeId, std::weak_ptr<InodeState>> inodes_;

};

}  // namespace t0fs::client
