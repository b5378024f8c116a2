// PgTxn: one transaction of PgEngine, read or write, on a connection of the
// engine's pool that it owns from begin to end. Every call is one prepared
// statement (full scans: one per page of PgEngine::kScanPage rows). The
// first failure kills the transaction: later calls and Commit() return it.
// Dropped without Commit(), it rolls back. A read transaction is handed out
// as a ReadTxn only. The methods live in pg_*_rows.cc by row kind.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "meta/store/engine.h"
#include "pg/pg.h"

namespace t0fs::meta {

class PgEngine;

namespace pgrows {

// Rows a full scan reads per statement.
inline constexpr int kScanPage = 1000;

// A statement of the engine: prepared once per connection under `name`.
struct Stmt {
  const char* name;
  const char* sql;
};

// Unsigned 64-bit values travel as bigint, their two's complement.
inline pg::Param U(uint64_t v) {
  return pg::Param(static_cast<int64_t>(v));
}
template <typename Id>
pg::Param Id64(Id id) {
  return U(id.value());
}
// A limit (size_t) as bigint, capped.
inline pg::Param Limit(size_t n) {
  return pg::Param(static_cast<int64_t>(std::min<uint64_t>(n, INT64_MAX)));
}

}  // namespace pgrows

class PgTxn final : public WriteTxn {
 public:
  PgTxn(PgEngine& engine, std::unique_ptr<pg::Connection> conn);
  ~PgTxn() override;

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
  Status DeleteXattrsOf(InodeId ino) override;
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
  // Runs `stmt` unless the transaction already failed; a failure kills it.
  Result<pg::Rows> Run(const pgrows::Stmt& stmt, const std::vector<pg::Param>& params);
  Status Exec(const pgrows::Stmt& stmt, const std::vector<pg::Param>& params) {
    return Run(stmt, params).status();
  }
  // A full scan by key, page by page: `stmt` takes the key after which to
  // go on (`start` first, then `key_of` the last row seen) and a limit last.
  template <typename Row>
  Status ScanPaged(const pgrows::Stmt& stmt, std::vector<pg::Param> start,
                   Row (*decode)(const pg::Rows&, int),
                   std::vector<pg::Param> (*key_of)(const Row&), const RowVisitor<Row>& visit);

  PgEngine& engine_;
  std::unique_ptr<pg::Connection> conn_;  // returned to the engine's pool at the end
  Status failed_;                         // the first failure, once there was one
  bool open_ = true;                      // BEGIN done, neither committed nor rolled back
};

template <typename Row>
Status PgTxn::ScanPaged(const pgrows::Stmt& stmt, std::vector<pg::Param> start,
                        Row (*decode)(const pg::Rows&, int),
                        std::vector<pg::Param> (*key_of)(const Row&),
                        const RowVisitor<Row>& visit) {
  std::vector<pg::Param> params = std::move(start);
  for (;;) {
    params.push_back(pg::Param(int64_t{pgrows::kScanPage}));
    ASSIGN_OR_RETURN(pg::Rows rows, Run(stmt, params));
    std::optional<Row> last;
    for (int r = 0; r < rows.size(); ++r) {
      last = decode(rows, r);
      RETURN_IF_ERROR(visit(*last));
    }
    if (rows.size() < pgrows::kScanPage) return Status::Ok();
    params = key_of(*last);
  }
}

}  // namespace t0fs::meta
