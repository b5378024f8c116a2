#include "meta/store/sqlite/sqlite_txn.h"

#include "common/logging.h"
#include "meta/store/sqlite/sqlite_engine.h"
#include "meta/store/sqlite/sqlite_rows.h"

namespace t0fs::meta {

SqliteTxn::SqliteTxn(SqliteEngine& engine, std::unique_lock<std::mutex> lock,
                     sqlite::Transaction txn, bool restore_sync)
    : engine_(engine),
      db_(engine.db_),
      lock_(std::move(lock)),
      txn_(std::move(txn)),
      restore_sync_(restore_sync) {}

SqliteTxn::~SqliteTxn() {
  txn_.reset();  // rolls back unless committed
  if (restore_sync_) {
    Status st = db_.Exec("PRAGMA synchronous = NORMAL");
    if (!st.ok()) LOG_WARN("metadata store: restoring synchronous: {}", st.ToString());
  }
}

Status SqliteTxn::Wrote(Status st) {
  if (st.ok()) ++writes_;
  return st;
}

Status SqliteTxn::Commit() {
  if (!txn_) return Status(StatusCode::kInternal, "transaction already committed");
  Status st = txn_->Commit();
  txn_.reset();
  if (st.ok()) engine_.RecordWrite(writes_);
  if (st.code() == StatusCode::kNoSpace && engine_.ReleaseReserve()) {
    return Status(StatusCode::kTryAgain,
                  "the metadata disk was full; its reserve released: " + st.message());
  }
  return st;
}

Result<std::optional<InodeRow>> SqliteTxn::GetInode(InodeId ino) {
  return sqlite::GetInode(db_, ino);
}

Status SqliteTxn::ScanInodes(const RowVisitor<InodeRow>& visit) {
  return sqlite::ScanInodes(db_, visit);
}

Result<std::optional<DentryRow>> SqliteTxn::GetDentry(InodeId parent, std::string_view name) {
  return sqlite::GetDentry(db_, parent, name);
}

Result<std::vector<DirItem>> SqliteTxn::ListDir(InodeId parent, uint64_t after_seq, size_t limit,
                                                bool with_inodes) {
  return sqlite::ListDir(db_, parent, after_seq, limit, with_inodes);
}

Status SqliteTxn::ScanDentries(const RowVisitor<DentryRow>& visit) {
  return sqlite::ScanDentries(db_, visit);
}

Result<std::optional<std::string>> SqliteTxn::GetXattr(InodeId ino, std::string_view name) {
  return sqlite::GetXattr(db_, ino, name);
}

Result<std::vector<std::string>> SqliteTxn::ListXattrNames(InodeId ino) {
  return sqlite::ListXattrNames(db_, ino);
}

Status SqliteTxn::ScanXattrs(const RowVisitor<XattrRow>& visit) {
  return sqlite::ScanXattrs(db_, visit);
}

Result<std::optional<ChunkWithReplicas>> SqliteTxn::GetChunk(ChunkId chunk) {
  return sqlite::GetChunk(db_, chunk);
}

Result<std::vector<ChunkWithReplicas>> SqliteTxn::ListChunksOf(InodeId ino, uint64_t first,
                                                               uint64_t end) {
  return sqlite::ListChunksOf(db_, ino, first, end);
}

Result<std::vector<ChunkWithReplicas>> SqliteTxn::ScanChunks(ChunkId after, size_t limit) {
  return sqlite::ScanChunks(db_, after, limit);
}

Status SqliteTxn::ScanReplicas(const RowVisitor<ReplicaRow>& visit) {
  return sqlite::ScanReplicas(db_, visit);
}

Result<std::vector<GarbageRow>> SqliteTxn::ListGarbageOfNode(NodeId node, size_t limit) {
  return sqlite::ListGarbageOfNode(db_, node, limit);
}

Result<std::vector<GarbageRow>> SqliteTxn::ListGarbageOfChunk(ChunkId chunk) {
  return sqlite::ListGarbageOfChunk(db_, chunk);
}

Result<std::vector<ChunkId>> SqliteTxn::ListGarbageChunks(ChunkId after, size_t limit) {
  return sqlite::ListGarbageChunks(db_, after, limit);
}

Status SqliteTxn::ScanGarbage(const RowVisitor<GarbageRow>& visit) {
  return sqlite::ScanGarbage(db_, visit);
}

Result<std::optional<SessionRecord>> SqliteTxn::GetSession(SessionId session) {
  return sqlite::GetSession(db_, session);
}

Result<std::vector<SessionRecord>> SqliteTxn::ListSessions() {
  return sqlite::ListSessions(db_);
}

Result<std::optional<HandleRow>> SqliteTxn::GetHandle(HandleId handle) {
  return sqlite::GetHandle(db_, handle);
}

Result<std::vector<HandleRow>> SqliteTxn::ListHandlesOf(InodeId ino) {
  return sqlite::ListHandlesOf(db_, ino);
}

Result<std::vector<HandleRow>> SqliteTxn::ListHandlesOfSession(SessionId session) {
  return sqlite::ListHandlesOfSession(db_, session);
}

Status SqliteTxn::ScanHandles(const RowVisitor<HandleRow>& visit) {
  return sqlite::ScanHandles(db_, visit);
}

Result<std::optional<ReplayRow>> SqliteTxn::GetReplay(SessionId session, uint32_t slot) {
  return sqlite::GetReplay(db_, session, slot);
}

Status SqliteTxn::ScanReplays(const RowVisitor<ReplayRow>& visit) {
  return sqlite::ScanReplays(db_, visit);
}

Result<std::optional<NodeRow>> SqliteTxn::GetNode(NodeId node) {
  return sqlite::GetNode(db_, node);
}

Result<std::vector<NodeRow>> SqliteTxn::ListNodes() {
  return sqlite::ListNodes(db_);
}

Result<std::optional<VolumeRecord>> SqliteTxn::GetVolume(VolumeId volume) {
  return sqlite::GetVolume(db_, volume);
}

Result<std::vector<VolumeRecord>> SqliteTxn::ListVolumes() {
  return sqlite::ListVolumes(db_);
}

Result<std::optional<std::string>> SqliteTxn::GetProperty(std::string_view key) {
  return sqlite::GetProperty(db_, key);
}

Result<RowTotals> SqliteTxn::Totals() {
  return sqlite::Totals(db_);
}

Status SqliteTxn::PutInode(const InodeRow& row) {
  return Wrote(sqlite::PutInode(db_, row));
}

Status SqliteTxn::DeleteInode(InodeId ino) {
  return Wrote(sqlite::DeleteInode(db_, ino));
}

Status SqliteTxn::PutDentry(const DentryRow& row) {
  return Wrote(sqlite::PutDentry(db_, row));
}

Status SqliteTxn::DeleteDentry(InodeId parent, std::string_view name) {
  return Wrote(sqlite::DeleteDentry(db_, parent, name));
}

Status SqliteTxn::PutXattr(InodeId ino, std::string_view name, std::string_view value) {
  return Wrote(sqlite::PutXattr(db_, ino, name, value));
}

Status SqliteTxn::DeleteXattr(InodeId ino, std::string_view name) {
  return Wrote(sqlite::DeleteXattr(db_, ino, name));
}

Status SqliteTxn::PutChunk(const ChunkRow& row) {
  return Wrote(sqlite::PutChunk(db_, row));
}

Status SqliteTxn::DeleteChunk(ChunkId chunk) {
  return Wrote(sqlite::DeleteChunk(db_, chunk));
}

Status SqliteTxn::PutReplica(const ReplicaRow& row) {
  return Wrote(sqlite::PutReplica(db_, row));
}

Status SqliteTxn::DeleteReplica(ChunkId chunk, uint32_t pos) {
  return Wrote(sqlite::DeleteReplica(db_, chunk, pos));
}

Status SqliteTxn::PutGarbage(const GarbageRow& row) {
  return Wrote(sqlite::PutGarbage(db_, row));
}

Status SqliteTxn::DeleteGarbage(uint64_t id) {
  return Wrote(sqlite::DeleteGarbage(db_, id));
}

Status SqliteTxn::PutSession(const SessionRecord& row) {
  return Wrote(sqlite::PutSession(db_, row));
}

Status SqliteTxn::DeleteSession(SessionId session) {
  return Wrote(sqlite::DeleteSession(db_, session));
}

Status SqliteTxn::PutHandle(const HandleRow& row) {
  return Wrote(sqlite::PutHandle(db_, row));
}

Status SqliteTxn::DeleteHandle(HandleId handle) {
  return Wrote(sqlite::DeleteHandle(db_, handle));
}

Status SqliteTxn::PutReplay(const ReplayRow& row) {
  return Wrote(sqlite::PutReplay(db_, row));
}

Status SqliteTxn::DeleteReplaysOf(SessionId session) {
  return Wrote(sqlite::DeleteReplaysOf(db_, session));
}

Status SqliteTxn::PutNode(const NodeRow& row) {
  return Wrote(sqlite::PutNode(db_, row));
}

Status SqliteTxn::PutVolume(const VolumeRecord& row) {
  return Wrote(sqlite::PutVolume(db_, row));
}

Status SqliteTxn::PutProperty(std::string_view key, std::string_view value) {
  return Wrote(sqlite::PutProperty(db_, key, value));
}

Result<uint64_t> SqliteTxn::NextId(Counter counter) {
  return sqlite::NextId(db_, counter);
}

Status SqliteTxn::ReserveId(Counter counter, uint64_t id) {
  return sqlite::ReserveId(db_, counter, id);
}

}  // namespace t0fs::meta
