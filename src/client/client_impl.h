// ClientImpl: the implementation of t0fs::client::Client (see t0fs/client.h).
//
// Ties libt0fs's rooms together; each has its own header, contract and
// unit tests:
// - MetaClient (meta_client.h): the session and one typed call per meta
//   request; DataClient (data_client.h): data-node RPCs and local opens.
// - LayoutCache (layout_cache.h): chunks, capabilities, allocation.
// - ReplicaIo (replica_io.h): replica choice, local bypass, failover reads,
//   replicated writes, fsync of replicas.
// - CommitTruncate (commit_truncate.h) with OpenFiles (open_files.h): commits,
//   truncation, the open inodes and their attribute overlay.
// - Passthrough (passthrough.h): chunk files handed to the kernel.
// Namespace calls go to MetaClient with the overlay applied; Files
// (file_impl.h) use the rooms through the accessors below.
//
// Lock order (every room keeps to it): InodeState::passthrough_mu, then
// commit_mu, then InodeState::mu; OpenFiles' table lock before any
// InodeState::mu. None is held across an RPC except passthrough_mu and
// commit_mu (held across a truncation or a commit on purpose).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <unordered_map>

#include "client/chunk_pool.h"
#include "client/commit_truncate.h"
#include "client/data_client.h"
#include "client/inode_state.h"
#include "client/io_stats.h"
#include "client/known_dirs.h"
#include "client/layout_cache.h"
#include "client/meta_client.h"
#include "client/open_files.h"
#include "client/open_handles.h"
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
  Result<ChangeBatch> PollChanges(std::chrono::milliseconds wait) override;
  void InterruptPollChanges() override { meta_.InterruptPollChanges(); }
  Result<std::unique_ptr<BatchIo>> OpenBatchIo(const BatchIoOptions& options) override;

  // ---- used by FileImpl (client_data.cc) ----
  // The layout room: chunks, capabilities, allocation.
  LayoutCache& layouts() { return layouts_; }
  // The replica room: reads, writes and fsync of replicas.
  ReplicaIo& replicas() { return replicas_; }
  // The commit and truncation room.
  CommitTruncate& commits() { return commits_; }
  // The open inodes and their attribute overlay.
  OpenFiles& open_files() { return open_; }
  // At the last close of an inode here (`st` no longer found): the unnamed
  // chunk files this client used for it that stayed empty (a new file
  // closed without data) go back to the chunk pool for a later create.
  void RecycleChunkFiles(const std::shared_ptr<InodeState>& st);
  // Every open File's meta handle (registered again when the session is replaced).
  OpenHandles& handles() { return handles_; }
  Status ReleaseHandle(HandleId handle);
  // The passthrough room.
  Passthrough& passthrough() { return passthrough_; }
  // ---- used by BatchIo (batch_io.cc), which routes read pieces itself ----
  DataClient& data() { return data_; }
  IoStats& stats() { return stats_; }

 private:
  // `result` of a change of ours in `dirs`: a failed one may or may not
  // have happened (a lost reply), so they are known directories no more.
  template <class R, class... Dirs>
  R KnownAfter(R result, Dirs... dirs) {
    if (!result.ok()) (known_.Forget(dirs), ...);
    return result;
  }
  // meta_.MakeNode (mknod, mkdir, symlink), noting the directory's new attributes.
  Result<Attr> MakeNode(const NewNode& node);
  Result<std::unique_ptr<File>> OpenWith(const OpenReply& opened, int flags);
  // Meta replaced our expired session: every open File's handle is
  // registered again under the new one (OpenHandles::Renew).
  void RenewHandles();
  // After a create that named `prepared`: its files become chunk 0's local
  // replica, or go back to the pool if meta did not use the id.
  void UsePrepared(const OpenReply& opened, PreparedChunk prepared);
  Result<std::pair<Attr, std::string>> ResolveParent(std::string_view path);

  ClientOptions options_;
  MetaClient meta_;
  DataClient data_;
  LayoutCache layouts_;
  IoStats stats_;
  ReplicaIo replicas_;
  Passthrough passthrough_;
  OpenFiles open_;
  CommitTruncate commits_;
  ChunkPool prepared_;  // new files' chunk 0, prepared on this node ahead of the creates
  OpenHandles handles_;
  KnownDirs known_;  // directories whose every name we know (lookups of others' names: no meta call)


};

}  // namespace t0fs::client
