// PosixStore: the MetaStore written once, over any Engine (engine.h).
//
// Every POSIX rule of the metadata store lives here and in ops/ (one
// operation family per file): rename cases, link counts, unlink-while-open,
// the garbage queue, op-token replay, Check(). Each public method is one
// transaction of the engine (SetObjective on a tree: a bounded series of
// them); the rows it reads and writes are the typed rows of rows.h. No SQL
// and no policy above the engine: defaults and ranges are the meta service's
// (meta/policy.h).
//
// Transactions and retries: a mutation runs its body in a write transaction
// together with the op-token check and the record of its outcome, so
// `kill -9` anywhere leaves all of it or none. A body that fails with a
// POSIX error (kNotFound, kExists, ...) leaves no change: its transaction is
// dropped and the outcome alone is recorded in a second one. An engine
// conflict (kTryAgain) runs the whole operation again in a new transaction,
// with a growing, jittered pause, up to PosixStoreOptions::max_attempts.
//
// Thread safety: safe for concurrent use, as the engine is; a thread holds
// at most one transaction at a time.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "meta/store/engine.h"
#include "meta/store/meta_store.h"

namespace t0fs::meta {

struct PosixStoreOptions {
  // A recursive SetObjective writes at most this many inodes per
  // transaction (not a user setting; tests make it small).
  size_t objective_batch = 1000;
  // Attempts of one operation when the engine reports a conflict (about 3 s
  // of pauses in all before kTryAgain reaches the caller).
  int max_attempts = 40;
};

class PosixStore final : public MetaStore {
 public:
  // Opens the store on `engine`, creating the root directory and the cluster
  // id when the engine holds none (a new database).
  static Result<std::unique_ptr<PosixStore>> Open(std::unique_ptr<Engine> engine,
                                                  const PosixStoreOptions& opts = {});
  ~PosixStore() override;

  Result<InodeAttr> GetAttr(InodeId ino) override;
  Result<InodeAttr> Lookup(InodeId parent, std::string_view name) override;
  Result<std::string> ReadLink(InodeId ino) override;
  Result<std::vector<DirEntry>> ReadDir(InodeId dir, uint64_t cookie, size_t max, bool with_attrs,
                                        bool* eof) override;
  Result<std::string> GetXattr(InodeId ino, std::string_view name) override;
  Result<std::vector<std::string>> ListXattr(InodeId ino) override;

  Result<MakeNodeResult> MakeNode(const OpToken& token, const MakeNodeArgs& args,
                                  Timespec now) override;
  Status Unlink(const OpToken& token, InodeId parent, std::string_view name, Timespec now,
                InodeAttr* dir_after = nullptr, InodeId* unlinked = nullptr) override;
  Status Rmdir(const OpToken& token, InodeId parent, std::string_view name, Timespec now,
               InodeAttr* dir_after = nullptr) override;
  Status Rename(const OpToken& token, InodeId old_parent, std::string_view old_name,
                InodeId new_parent, std::string_view new_name, uint32_t flags, Timespec now,
                std::vector<InodeId>* changed = nullptr) override;
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
  Status ReleaseMany(const OpToken& token, const std::vector<HandleId>& handles) override;
  Result<std::vector<ChunkLayout>> GetLayout(InodeId ino, uint64_t first, uint64_t count) override;
  Result<std::vector<ChunkLayout>> Allocate(const OpToken& token, InodeId ino,
                                            const std::vector<uint64_t>& indices,
                                            const std::vector<ReplicaTarget>& targets) override;
  Result<std::vector<ChunkId>> ReserveChunkIds(uint32_t count) override;
  Result<InodeAttr> Commit(const OpToken& token, const CommitArgs& args, bool durable,
                           Timespec now) override;

  Result<SessionId> OpenSession(std::string_view client_name, std::string_view host_id,
                                Timespec now) override;
  Status RenewSession(SessionId session, Timespec now) override;
  Status CloseSession(SessionId session) override;
  Result<size_t> ExpireSessions(Timespec cutoff) override;

  Result<NodeRecord> RegisterNode(const NodeRecord& node) override;
  Status UpdateVolumes(NodeId node, const std::vector<VolumeRecord>& volumes,
                       Timespec now) override;
  Result<std::vector<NodeRecord>> ListNodes() override;
  Result<std::vector<GarbageChunk>> TakeGarbage(NodeId node, size_t max) override;
  Status AckGarbage(const std::vector<uint64_t>& ids) override;
  Result<size_t> QueueOrphans(NodeId node, const std::vector<OrphanFile>& files) override;

  Result<Objective> GetObjective(InodeId ino) override;
  Result<uint64_t> SetObjective(InodeId ino, const Objective& objective, bool recursive) override;
  Result<std::vector<InodeId>> KeptNewest(size_t max, bool* truncated) override;
  Result<std::vector<ChunkReplicas>> ScanReplicas(ChunkId after, size_t max, bool* eof) override;
  Status SetReplicaState(ChunkId chunk, NodeId node, ReplicaState state) override;
  Status ReportReplicaStale(ChunkId chunk, NodeId node, uint64_t seen_version) override;
  Status AddPendingReplica(ChunkId chunk, NodeId node, VolumeId volume) override;
  Status CompleteReplica(ChunkId chunk, NodeId node, uint64_t version) override;
  Status DropReplica(ChunkId chunk, NodeId node, bool unless_writer = false) override;
  Status OffloadReplica(ChunkId chunk, NodeId node, uint64_t version) override;
  Status SetObjectVersion(ChunkId chunk, uint64_t version) override;
  Status RecordEcCells(ChunkId chunk, const ec::EcStripe& made, bool ok) override;
  Status DropEcCell(ChunkId chunk, uint32_t cell, NodeId node, uint64_t version) override;
  Status ClearEcCells(ChunkId chunk) override;
  Status WithdrawEcGarbage(ChunkId chunk, const ec::EcStripe& made) override;
  Status SetNodeAdminState(NodeId node, NodeAdminState state) override;
  Result<std::string> CapabilityKey() override;
  Status ClaimSecret(std::string_view fingerprint) override;
  Result<bool> HasWriteHandle(SessionId session, InodeId ino) override;
  Result<bool> AcquireLease(std::string_view name, std::string_view holder, Timespec now,
                            std::chrono::milliseconds ttl) override;
  Result<bool> MarkUrgent(ChunkId chunk, Timespec until, Timespec now, size_t max) override;
  Result<std::vector<ChunkId>> UrgentChunks(Timespec now) override;

  Result<StoreCounts> Counts() override;
  Result<std::vector<ChunkRecord>> ListChunks(ChunkId after, size_t max, bool* eof) override;
  using MetaStore::Check;
  Result<std::vector<std::string>> Check(const std::set<NodeId>& unreadable) override;
  std::string cluster_id() const override { return cluster_id_; }

  Engine& engine() { return *engine_; }

 private:
  // What a mutating operation records for replay besides its status: enough
  // ids to rebuild its result from the current state.
  struct Outcome {
    InodeId ino;
    HandleId handle;
    bool flag = false;  // MakeNode: created
  };
  using Body = std::function<Status(WriteTxn&, Outcome&)>;
  using Replay = std::function<Status(ReadTxn&, const Outcome&)>;
  // The prefetch hints (engine.h) of what `body` reads first, given before
  // the token's replay slot is read: an engine may read them all together.
  using Prefetch = std::function<Status(ReadTxn&)>;

  PosixStore(std::unique_ptr<Engine> engine, PosixStoreOptions opts, std::string cluster_id);

  // Runs `body` with the OpToken protocol: a token whose (session, slot)
  // already recorded `seq` returns the recorded status (and, when that was
  // ok, whatever `replay` rebuilds) without running `body`; otherwise `body`
  // runs and its outcome is recorded in the same transaction (a failed body:
  // in a transaction of its own, its changes dropped). A zero token records
  // nothing. `durable`: the commit reaches stable storage.
  Status Mutate(const OpToken& token, const Body& body, const Replay& replay = nullptr,
                bool durable = false, const Prefetch& prefetch = nullptr);
  // One attempt of Mutate; kTryAgain when the engine asks for another.
  Status MutateOnce(const OpToken& token, const Body& body, const Replay& replay, bool durable,
                    const Prefetch& prefetch);
  // A write transaction without a token (cluster and repair bookkeeping).
  Status Write(const std::function<Status(WriteTxn&)>& body);
  // Runs `body` in a read transaction (one consistent snapshot).
  Status Read(const std::function<Status(ReadTxn&)>& body);
  // Runs `attempt` until it returns something other than kTryAgain, at most
  // opts_.max_attempts times.
  Status Retry(const std::function<Status()>& attempt);

  std::unique_ptr<Engine> engine_;
  const PosixStoreOptions opts_;
  const std::string cluster_id_;
};

}  // namespace t0fs::meta
