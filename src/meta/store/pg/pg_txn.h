// PgTxn: one transaction of PgEngine, read or write, on a connection of the
// engine's pool that it owns from begin to end. Every call is one prepared
// statement (full scans: one per page of pgrows::kScanPage rows), sent in
// pipeline mode (src/pg/pg.h):
//  - BEGIN is queued ahead of the first statement, not a round trip.
//  - Writes (Put*, Delete*, ReserveId) are queued and return Ok at once
//    (at most kMaxQueued wait; then they are sent and checked). An inode
//    row's writes wait until the next read or COMMIT, and only its last
//    state is sent (in ascending ino order): an operation often writes a
//    row twice (a rmdir its directory's mtime, then its link count; the
//    removed directory's row, then its deletion).
//  - A read sends what is queued with it and waits: one round trip. A
//    failed queued write makes it fail with that write's status.
//  - Commit() queues COMMIT and waits once. So a transaction with N reads
//    costs N+1 round trips, a read transaction N.
//  - Inode rows read or written are kept for the transaction (one
//    snapshot: reading them again would give the same), and GetDentry
//    reads its entry's inode with it: a lookup's next GetInode is free.
//    PrefetchEntry reads a directory, one of its entries and that entry's
//    inode in one statement: a namespace operation's first three reads.
//    PrefetchRemoval reads what a removal reads next of that inode, by the
//    entry's name (its handles, and its chunks or its first entry);
//    PrefetchRelease what a release reads, by the handle's id (the handle,
//    its inode, the inode's handles, a writer's chunks past the end).
//    Handles and chunks read ahead are kept up to date by the
//    transaction's own writes of them, so that a batch of releases reads
//    nothing after its prefetches.
//  - Prefetches (PrefetchEntry, PrefetchVolume, PrefetchRemoval,
//    PrefetchRelease) are queued,
//    not waited for: their rows come back with the next read's (the replay
//    slot a mutation reads first), so a create reads everything in one
//    round trip. A read they may answer sends them first if still queued.
//    A write queued after a prefetch wins over its (older) rows.
//  - The end of a transaction not committed (every read transaction) queues
//    ROLLBACK and does not wait: the connection reads that result at its
//    next use, before anything of the next transaction.
// The first failure kills the transaction: later calls and Commit() return
// it. If the connection turns out lost in the transaction's first batch
// (before any COMMIT was sent: it died idle in the pool, or the server
// restarted), the batch is sent again once on a fresh connection. A read
// transaction is handed out as a ReadTxn only. The methods live in
// pg_*_rows.cc by row kind.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "meta/store/engine.h"
#include "pg/pg.h"

namespace t0fs::meta {

class PgEngine;

namespace pgrows {

// Rows a full scan reads per statement.
inline constexpr int kScanPage = 1000;

// In a statement's text: the rows of `table` matching `where` (which names
// the outer row), LEFT JOINed as `alias`. A LATERAL subquery that OFFSET 0
// keeps from being merged into the join, so it is planned on its own, as a
// lookup by key, whatever the statistics say: with a plain join the planner
// chose, and after statistics taken on an emptied table (every scan costed
// at one row) it read the whole inner table once per outer row.
#define T0FS_PG_LOOKUP_JOIN(table, where, alias) \
  " LEFT JOIN LATERAL (SELECT * FROM " table " WHERE " where " OFFSET 0) " alias " ON true "

// The columns of an inode row, in InodeAt's order, of table alias `t`
// ("" for the table itself, "i." or "p." in joins).
#define T0FS_PG_INODE_COLUMNS_OF(t)                                                           \
  t "ino, " t "mode, " t "uid, " t "gid, " t "size, " t "nlink, " t "rdev, " t "atime_s, " t  \
    "atime_ns, " t "mtime_s, " t "mtime_ns, " t "ctime_s, " t "ctime_ns, " t "chunk_size, " t \
    "generation, " t "replicas, " t "placement, " t "placement_nodes, " t "target, " t        \
    "parent, " t "entry_seq, " t "protect, " t "protect_within"
inline constexpr int kInodeColumnCount = 23;

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

// The inode row in columns c.. of row r (T0FS_PG_INODE_COLUMNS_OF's order).
InodeRow InodeAt(const pg::Rows& q, int r, int c);

}  // namespace pgrows

class PgTxn final : public WriteTxn {
 public:
  // `begin`: the statements that open the transaction (BEGIN ..., SET LOCAL ...).
  PgTxn(PgEngine& engine, std::unique_ptr<pg::Connection> conn, std::vector<std::string> begin);
  ~PgTxn() override;

  Result<std::optional<InodeRow>> GetInode(InodeId ino) override;
  Status ScanInodes(const RowVisitor<InodeRow>& visit) override;
  Result<std::optional<DentryRow>> GetDentry(InodeId parent, std::string_view name) override;
  Status PrefetchEntry(InodeId dir, std::string_view name) override;
  Status PrefetchVolume(VolumeId volume) override;
  Status PrefetchRemoval(InodeId dir, std::string_view name, bool directory) override;
  Status PrefetchRelease(HandleId handle) override;
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
  Result<bool> InsertChunkIfFree(const ChunkRow& row) override;
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
  // Writes queued before a batch is sent without a read (they are small:
  // their replies never fill the socket buffers while we are still sending).
  static constexpr size_t kMaxQueued = 64;

  // Runs `stmt` with what is queued and waits for its rows, unless the
  // transaction already failed; a failure kills it.
  Result<pg::Rows> Run(const pgrows::Stmt& stmt, const std::vector<pg::Param>& params);
  // Queues `stmt` (a write: its rows are not wanted); Ok unless the
  // transaction already failed. Its own failure shows at the next Run or Commit.
  Status Exec(const pgrows::Stmt& stmt, const std::vector<pg::Param>& params);
  // Queues BEGIN if not yet done, then `stmt` (nullptr: COMMIT); `keep`:
  // a prefetch, whose rows Sync hands to the oldest of pending_.
  Status Queue(const pgrows::Stmt* stmt, const std::vector<pg::Param>& params, bool keep = false);
  // Sends the batch and waits (see the class comment for the resend); the
  // prefetches of the batch take their rows.
  Result<pg::Rows> Sync(bool committing);
  // Queues a prefetch; `take` gets its rows when the batch comes back.
  using Take = std::function<void(const pg::Rows&)>;
  Status Prefetch(const pgrows::Stmt& stmt, const std::vector<pg::Param>& params, Take take);
  // Sends the queued prefetches (with the queued writes) if there are any.
  Status Settle();
  // Queues the last state of each inode row written and not yet queued.
  Status QueueInodeWrites();
  // QueueInodeWrites when `ino`'s deletion (which takes its extended
  // attributes) is among them: an xattr write after it must follow it.
  Status QueueDeleteOf(InodeId ino);
  Status QueueInodeWrite(const InodeRow& row);
  // PrefetchRemoval's and PrefetchRelease's statements, one per row kind
  // (in the file of its rows).
  Status PrefetchHandlesOfEntry(InodeId dir, std::string_view name);
  Status PrefetchChunksOfEntry(InodeId dir, std::string_view name);
  Status PrefetchFirstEntryOfEntry(InodeId dir, std::string_view name);
  Status PrefetchHandleAndInode(HandleId handle);
  Status PrefetchTailChunksOf(HandleId handle);
  // Queues `stmt` ($1 dir, $2 name, the entry's inode in column
  // `ino_column`) for PrefetchRemoval: its rows, decoded, go to `keep`
  // with that inode unless there was no such entry or a write counted by
  // `writes` was queued after it.
  template <typename Rows>
  Status PrefetchOfEntry(const pgrows::Stmt& stmt, InodeId dir, std::string_view name,
                         const uint64_t& writes, int ino_column, Rows (*decode)(const pg::Rows&),
                         std::function<void(InodeId, Rows)> keep) {
    const uint64_t queued_at = writes;
    return Prefetch(
        stmt, {pgrows::Id64(dir), pg::Param::Bytes(name)},
        [&writes, queued_at, ino_column, decode, keep = std::move(keep)](const pg::Rows& rows) {
          if (rows.size() == 0 || writes != queued_at) return;
          keep(InodeId(rows.UInt(0, ino_column)), decode(rows));
        });
  }
  // A chunk or replica row written: the chunks known ahead may be wrong.
  void ChunksWritten() {
    known_chunks_.clear();
    ++chunk_writes_;
  }
  // Rows read ahead: the chunks of inode `ino` with index >= from.
  void KnowChunks(uint64_t ino, uint64_t from, std::vector<ChunkWithReplicas> chunks);
  // Chunk `chunk` and its replicas deleted: it leaves the chunks known.
  void ChunkDeleted(ChunkId chunk);
  // Handle `handle` written (`row`) or deleted (null): the handles known
  // follow.
  void HandleWritten(HandleId handle, const HandleRow* row);
  // Takes `slot`'s rows when they are of `ino` (then the read costs nothing).
  template <typename Rows>
  static std::optional<Rows> TakePrefetched(std::optional<std::pair<InodeId, Rows>>& slot,
                                            InodeId ino) {
    if (!slot || slot->first != ino) return std::nullopt;
    std::optional<Rows> rows(std::move(slot->second));
    slot.reset();
    return rows;
  }
  // Queues the planner's permission to read whole tables for the statements
  // after it (pg_engine.cc: off in every transaction). For those that read
  // a whole table on purpose (Totals) or a sequence (ReserveId): planned
  // without it they took 60-200 ms.
  Status AllowSeqScan(bool allow);

  Status Fail(Status st) {
    if (failed_.ok()) {
      failed_ = st;
      if (!deferred_chunks_.empty()) engine_.NoteMaybeTakenChunks(deferred_chunks_);
    }
    return st;
  }
  // A full scan by key, page by page: `stmt` takes the key after which to
  // go on (`start` first, then `key_of` the last row seen) and a limit last.
  template <typename Row>
  Status ScanPaged(const pgrows::Stmt& stmt, std::vector<pg::Param> start,
                   Row (*decode)(const pg::Rows&, int),
                   std::vector<pg::Param> (*key_of)(const Row&), const RowVisitor<Row>& visit);

  PgEngine& engine_;
  std::unique_ptr<pg::Connection> conn_;  // returned to the engine's pool at the end
  const std::vector<std::string> begin_;  // queued ahead of the first statement
  Status failed_;                         // the first failure, once there was one
  bool open_ = true;                      // neither committed nor rolled back
  bool begun_ = false;                    // BEGIN queued on conn_
  bool synced_ = false;                   // a batch came back: the connection was alive
  // Chunk rows InsertChunkIfFree queued without waiting (a taken id fails
  // the transaction: the engine then remembers them, see Fail).
  std::vector<ChunkId> deferred_chunks_;
  // Every inode row this transaction read (GetInode, and the inode of
  // GetDentry's entry) or wrote, by ino; nullopt: none. One snapshot for the
  // whole transaction, so a second read would give the same.
  std::unordered_map<uint64_t, std::optional<InodeRow>> inodes_;
  // The inodes whose rows in inodes_ were written and not yet queued.
  std::set<uint64_t> unqueued_inodes_;
  // The entries PrefetchEntry read, each for the next GetDentry of it;
  // dropped by that GetDentry and by any write of an entry.
  struct PrefetchedEntry {
    InodeId parent;
    std::string name;
    std::optional<DentryRow> entry;
  };
  std::vector<PrefetchedEntry> prefetched_;
  // Prefetches queued and not yet back, oldest first.
  std::vector<Take> pending_;
  // Rows of PrefetchVolume, until a volume is written. Writes are counted:
  // a prefetch's rows older than a write of their kind are dropped.
  std::unordered_map<uint64_t, std::optional<VolumeRecord>> volumes_;
  // The first entry PrefetchRemoval read of the directory the entry
  // named, for the next read of it (TakePrefetched); dropped by any write
  // of an entry, and not kept when one was queued after the prefetch (the
  // counters).
  std::optional<std::pair<InodeId, std::optional<DentryRow>>> prefetched_first_entry_;
  // Handles and chunks PrefetchRemoval and PrefetchRelease read, for every
  // later read they answer: not kept when a write of their kind was queued
  // after the prefetch (the counters), then kept up to date by this
  // transaction's writes (HandleWritten, ChunkDeleted; other chunk writes
  // drop them). A handle's row by id (nullopt: no such handle), the
  // handles of an inode by ino, and an inode's chunks with index >= from.
  std::unordered_map<uint64_t, std::optional<HandleRow>> known_handles_;
  std::unordered_map<uint64_t, std::vector<HandleRow>> known_handle_lists_;
  struct KnownChunks {
    uint64_t from = 0;
    std::vector<ChunkWithReplicas> chunks;
  };
  std::unordered_map<uint64_t, KnownChunks> known_chunks_;
  uint64_t entry_writes_ = 0, volume_writes_ = 0, handle_writes_ = 0, chunk_writes_ = 0;
  // The statements of the first batch, kept for its one resend.
  struct Queued {
    pgrows::Stmt stmt;
    std::vector<pg::Param> params;
    bool keep;
  };
  std::vector<Queued> first_batch_;
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
