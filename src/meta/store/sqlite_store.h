// SqliteStore: the MetaStore on one SQLite database (the embedded default).
//
// A file path gives a durable store (WAL journal); ":memory:" gives a private
// in-memory twin with identical behaviour, for fast tests elsewhere.
//
// Every public method is one SQLite transaction on one connection. Mutations
// take the write lock at BEGIN (BEGIN IMMEDIATE), run the operation inside a
// savepoint and record the OpToken outcome in the same transaction, so a
// `kill -9` anywhere leaves either all of an operation or none of it.
// Schema and invariants: docs/formats/meta-schema.md. One operation (family)
// per file under ops/.
//
// Thread safety: safe for concurrent use. One mutex (mu_) serialises every
// public method, reads included, because they share the single connection and
// its statement cache. No other lock is taken while mu_ is held, and mu_ is
// held across the SQLite I/O of the transaction (there is nothing to gain from
// releasing it: the database allows one writer anyway).
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "common/config.h"
#include "meta/store/meta_store.h"
#include "meta/store/sqlite/sqlite_db.h"
#include "meta/store/sqlite/sqlite_engine.h"

namespace t0fs::meta {

// The engine's options (sync, cache size, busy timeout; SqliteOptions) and
// the store's own.
struct SqliteStoreOptions : SqliteOptions {
  // A recursive SetObjective writes at most this many inodes per
  // transaction (not a user setting; tests make it small).
  size_t objective_batch = 1000;
};

class SqliteStore final : public MetaStore {
 public:
  // Opens the store at `path`, creating the schema, the root directory and
  // the cluster id when the database is new. kMetaSchema when the database
  // has a schema version this build does not know.
  static Result<std::unique_ptr<SqliteStore>> Open(const std::string& path,
                                                   const SqliteStoreOptions& opts = {});
  ~SqliteStore() override;

  Result<InodeAttr> GetAttr(InodeId ino) override;
  Result<InodeAttr> Lookup(InodeId parent, std::string_view name) override;
  Result<std::string> ReadLink(InodeId ino) override;
  Result<std::vector<DirEntry>> ReadDir(InodeId dir, uint64_t cookie, size_t max, bool with_attrs,
                                        bool* eof) override;
  Result<std::string> GetXattr(InodeId ino, std::string_view name) override;
  Result<std::vector<std::string>> ListXattr(InodeId ino) override;

  Result<MakeNodeResult> MakeNode(const OpToken& token, const MakeNodeArgs& args,
                                  Timespec now) override;
  Status Unlink(const OpToken& token, InodeId parent, std::string_view name, Timespec now) override;
  Status Rmdir(const OpToken& token, InodeId parent, std::string_view name, Timespec now) override;
  Status Rename(const OpToken& token, InodeId old_parent, std::string_view old_name,
                InodeId new_parent, std::string_view new_name, uint32_t flags,
                Timespec now) override;
  Result<InodeAttr> Link(const OpToken& token, InodeId ino, InodeId new_parent,
                         std::string_view new_name, Timespec now) override;
  Result<InodeAttr> SetAttr(const OpToken& token, const SetAttrArgs& args, Timespec now) override;
  Status SetXattr(const OpToken& token, InodeId ino, std::string_view name, std::string_view value,
                  uint32_t flags, Timespec now) override;
  Status RemoveXattr(const OpToken& token, InodeId ino, std::string_view name,
                     Timespec now) override;

  Result<OpenResult> Open(const OpToken& token, SessionId session, InodeId ino, uint32_t flags,
                          Timespec now) override;
  Status Release(const OpToken& token, HandleId handle) override;
  Result<std::vector<ChunkLayout>> GetLayout(InodeId ino, uint64_t first, uint64_t count) override;
  Result<std::vector<ChunkLayout>> Allocate(const OpToken& token, InodeId ino,
                                            const std::vector<uint64_t>& indices,
                                            const std::vector<ReplicaTarget>& targets) override;
  Result<InodeAttr> Commit(const OpToken& token, const CommitArgs& args, bool durable,
                           Timespec now) override;

  Result<SessionId> OpenSession(std::string_view client_name, std::string_view host_id,
                                Timespec now) override;
  Status RenewSession(SessionId session, Timespec now) override;
  Status CloseSession(SessionId session) override;
  Result<size_t> ExpireSessions(Timespec cutoff) override;

  Result<NodeRecord> RegisterNode(const NodeRecord& node, Timespec now) override;
  Status UpdateVolumes(NodeId node, const std::vector<VolumeRecord>& volumes,
                       Timespec now) override;
  Result<std::vector<NodeRecord>> ListNodes() override;
  Result<std::vector<GarbageChunk>> TakeGarbage(NodeId node, size_t max) override;
  Status AckGarbage(const std::vector<uint64_t>& ids) override;

  Result<Objective> GetObjective(InodeId ino) override;
  Result<uint64_t> SetObjective(InodeId ino, const Objective& objective, bool recursive) override;
  Result<std::vector<ChunkReplicas>> ScanReplicas(ChunkId after, size_t max, bool* eof) override;
  Status SetReplicaState(ChunkId chunk, NodeId node, ReplicaState state) override;
  Status AddPendingReplica(ChunkId chunk, NodeId node, VolumeId volume) override;
  Status CompleteReplica(ChunkId chunk, NodeId node, uint64_t version) override;
  Status DropReplica(ChunkId chunk, NodeId node) override;
  Status SetNodeAdminState(NodeId node, NodeAdminState state) override;
  Result<std::string> CapabilityKey() override;
  Result<bool> HasWriteHandle(SessionId session, InodeId ino) override;

  Result<StoreCounts> Counts() override;
  Result<std::vector<ChunkRecord>> ListChunks(ChunkId after, size_t max, bool* eof) override;
  Result<std::vector<std::string>> Check() override;
  std::string cluster_id() const override { return cluster_id_; }

 private:
  // What a mutating operation records for replay besides its status: enough
  // ids to rebuild its result from the current state.
  struct Outcome {
    InodeId ino;
    HandleId handle;
    bool flag = false;  // MakeNode: created
  };
  using Body = std::function<Status(Outcome&)>;
  using Replay = std::function<Status(const Outcome&)>;
  struct Dentry {
    uint64_t seq = 0;  // listing position in its directory
    InodeId ino;
  };

  SqliteStore(sqlite::Db db, SqliteStoreOptions opts, std::string cluster_id);

  // Runs `body` as one write transaction with the OpToken protocol: a token
  // whose (session, slot) already recorded `seq` returns the recorded status
  // (and, when that was ok, whatever `replay` rebuilds) without running
  // `body`; otherwise `body` runs inside a savepoint (undone if it fails) and
  // its outcome is recorded before COMMIT. Database errors roll everything
  // back and record nothing. `durable`: sync the WAL at COMMIT.
  Status Mutate(const OpToken& token, const Body& body, const Replay& replay = nullptr,
                bool durable = false);
  Status MutateLocked(const OpToken& token, const Body& body, const Replay& replay);
  // Runs `body` in a read transaction (one consistent snapshot).
  Status Read(const std::function<Status()>& body);

  // Helpers. All of them require mu_ held and a transaction open.
  Result<InodeAttr> LoadAttr(InodeId ino);
  // A live directory: kNotFound if missing or already removed, kNotDirectory.
  Result<InodeAttr> LoadDir(InodeId dir);
  Result<std::optional<Dentry>> FindDentry(InodeId parent, std::string_view name);
  // The directory containing `dir` (the root contains itself; a removed
  // directory is its own parent): its inode's `parent`.
  Result<InodeId> ParentOf(InodeId dir);
  // True when `dir` is `ancestor` or lies below it.
  Result<bool> IsWithin(InodeId dir, InodeId ancestor);
  // A new entry, last in its directory's listing order.
  Status InsertDentry(InodeId parent, std::string_view name, InodeId ino);
  Status DeleteDentry(InodeId parent, std::string_view name);
  // Points the existing entry (parent, name) at `ino`; it keeps its place.
  Status RepointDentry(InodeId parent, std::string_view name, InodeId ino);
  // Records `parent` as the directory containing directory `dir`.
  Status SetParent(InodeId dir, InodeId parent);
  Status TouchDir(InodeId dir, Timespec now);  // mtime and ctime
  Status TouchCtime(InodeId ino, Timespec now);
  Status AddNlink(InodeId ino, int64_t delta);
  // Drops one link of a non-directory (ctime = now), freeing it when it was
  // the last link and no handle is open.
  Status DropLink(InodeId ino, Timespec now);
  // Marks a directory removed from `parent` (nlink 0, parent loses a link).
  Status RemoveDir(InodeId dir, InodeId parent, Timespec now);
  // Frees `ino` if it has no link and no open handle.
  Status FreeIfOrphan(InodeId ino);
  // Deletes the inode, its xattrs and layout; its replicas go to garbage.
  Status FreeInode(InodeId ino);
  // Moves chunks with index >= first_idx to the garbage queue.
  Status DropChunksFrom(InodeId ino, uint64_t first_idx);
  Status DropUnwrittenTail(InodeId ino);
  // Truncation of a regular file to `new_size`: drops the chunks wholly past
  // min(old, new size), sets size, mtime and ctime.
  // `keep_chunks`: chunks below it were resized by the client (kept, up to the new size; chunk 0 always).
  Status Truncate(const InodeAttr& attr, uint64_t new_size, Timespec now, uint64_t keep_chunks = 0);
  Result<std::vector<ChunkLayout>> LoadLayouts(InodeId ino, const std::vector<uint64_t>& indices);
  Status RequireSession(SessionId session);
  Status CloseSessionLocked(SessionId session);

  std::mutex mu_;  // guards db_ (the connection and its statement cache)
  sqlite::Db db_;
  const SqliteStoreOptions opts_;
  const std::string cluster_id_;
};

}  // namespace t0fs::meta
