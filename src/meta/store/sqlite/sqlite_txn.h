// SqliteTxn: one transaction of SqliteEngine, read or write. It holds the
// engine's lock from begin to end, so the connection is its alone; every call
// is one of the row codecs of sqlite_rows.h. Dropped without Commit(), it
// rolls back. A read transaction is handed out as a ReadTxn only.
#pragma once

#include <mutex>
#include <optional>

#include "meta/store/engine.h"
#include "meta/store/sqlite/sqlite_db.h"

namespace t0fs::meta {

class SqliteEngine;

class SqliteTxn final : public WriteTxn {
 public:
  // `restore_sync`: the transaction raised synchronous to FULL (a durable
  // write); it is set back to NORMAL when the transaction ends.
  SqliteTxn(SqliteEngine& engine, std::unique_lock<std::mutex> lock, sqlite::Transaction txn,
            bool restore_sync);
  ~SqliteTxn() override;

  Result<std::optional<InodeRow>> GetInode(InodeId ino) override;
  Status ScanInodes(const RowVisitor<InodeRow>& visit) override;
  Result<std::optional<DentryRow>> GetDentry(InodeId parent, std::string_view name) override;
  Result<std::vector<DirItem>> ListDir(InodeId parent, uint64_t after_seq, size_t limit,
                                       bool with_inodes) override;
  Status ScanDentries(const RowVisitor<DentryRow>& visit) override;
  Result<std::optional<std::string>> GetXattr(InodeId ino, std::string_view name) override;
  Result<std::vector<std::string>> ListXattrNames(InodeId ino) override;
  Status ScanXattrs(const RowVisitor<XattrRow>& visit) override;
  Result<std::optional<ChunkWithReplicas>> GetChunk(ChunkId chunk) override;
  Result<std::vector<ChunkWithReplicas>> ListChunksOf(InodeId ino, uint64_t first,
                                                      uint64_t end) override;
  Result<std::vector<ChunkWithReplicas>> ScanChunks(ChunkId after, size_t limit) override;
  Status ScanReplicas(const RowVisitor<ReplicaRow>& visit) override;
  Result<std::vector<GarbageRow>> ListGarbageOfNode(NodeId node, size_t limit) override;
  Result<std::vector<GarbageRow>> ListGarbageOfChunk(ChunkId chunk) override;
  Result<std::vector<ChunkId>> ListGarbageChunks(ChunkId after, size_t limit) override;
  Status ScanGarbage(const RowVisitor<GarbageRow>& visit) override;
  Result<std::optional<SessionRecord>> GetSession(SessionId session) override;
  Result<std::vector<SessionRecord>> ListSessions() override;
  Result<std::optional<HandleRow>> GetHandle(HandleId handle) override;
  Result<std::vector<HandleRow>> ListHandlesOf(InodeId ino) override;
  Result<std::vector<HandleRow>> ListHandlesOfSession(SessionId session) override;
  Status ScanHandles(const RowVisitor<HandleRow>& visit) override;
  Result<std::optional<ReplayRow>> GetReplay(SessionId session, uint32_t slot) override;
  Status ScanReplays(const RowVisitor<ReplayRow>& visit) override;
  Result<std::optional<NodeRow>> GetNode(NodeId node) override;
  Result<std::vector<NodeRow>> ListNodes() override;
  Result<std::optional<VolumeRecord>> GetVolume(VolumeId volume) override;
  Result<std::vector<VolumeRecord>> ListVolumes() override;
  Result<std::optional<std::string>> GetProperty(std::string_view key) override;
  Result<RowTotals> Totals() override;

  Status PutInode(const InodeRow& row) override;
  Status DeleteInode(InodeId ino) override;
  Status PutDentry(const DentryRow& row) override;
  Status DeleteDentry(InodeId parent, std::string_view name) override;
  Status PutXattr(InodeId ino, std::string_view name, std::string_view value) override;
  Status DeleteXattr(InodeId ino, std::string_view name) override;
  Status PutChunk(const ChunkRow& row) override;
  Status DeleteChunk(ChunkId chunk) override;
  Status PutReplica(const ReplicaRow& row) override;
  Status DeleteReplica(ChunkId chunk, uint32_t pos) override;
  Status PutGarbage(const GarbageRow& row) override;
  Status DeleteGarbage(uint64_t id) override;
  Status PutSession(const SessionRecord& row) override;
  Status DeleteSession(SessionId session) override;
  Status PutHandle(const HandleRow& row) override;
  Status DeleteHandle(HandleId handle) override;
  Status PutReplay(const ReplayRow& row) override;
  Status DeleteReplaysOf(SessionId session) override;
  Status PutNode(const NodeRow& row) override;
  Status PutVolume(const VolumeRecord& row) override;
  Status PutProperty(std::string_view key, std::string_view value) override;
  Result<uint64_t> NextId(Counter counter) override;
  Status ReserveId(Counter counter, uint64_t id) override;
  Status Commit() override;

 private:
  // Counts a row write that succeeded.
  Status Wrote(Status st);

  SqliteEngine& engine_;
  sqlite::Db& db_;
  std::unique_lock<std::mutex> lock_;       // the engine's mu_, released last
  std::optional<sqlite::Transaction> txn_;  // empty once committed
  const bool restore_sync_;
  uint64_t writes_ = 0;
};

}  // namespace t0fs::meta
