// PgTxn: chunks, their replicas, the garbage queue.
#include <algorithm>
#include <limits>

#include "meta/store/pg/pg_txn.h"

namespace t0fs::meta {

using pgrows::Id64;
using pgrows::Limit;
using pgrows::Stmt;
using pgrows::U;

namespace {

// The replicas of chunk alias c, as alias r.
#define T0FS_PG_REPLICAS_OF_CHUNK T0FS_PG_LOOKUP_JOIN("replicas", "chunk_id = c.id", "r")
#define T0FS_PG_CHUNK_COLUMNS                                                               \
  "SELECT c.id, c.ino, c.idx, c.object_version, c.ec, r.pos, r.node, r.volume, r.version, " \
  "r.state "
// A chunk joined with its replicas: one result row per replica (one row with
// NULL replica columns for a chunk without any), in chunk order, then pos.
#define T0FS_PG_CHUNK_JOIN T0FS_PG_CHUNK_COLUMNS "FROM chunks c" T0FS_PG_REPLICAS_OF_CHUNK
#define T0FS_PG_GARBAGE_COLUMNS "id, chunk_id, ino, idx, node, volume, version"

constexpr Stmt kGetChunk{"get_chunk", T0FS_PG_CHUNK_JOIN "WHERE c.id = $1 ORDER BY r.pos"};
constexpr Stmt kListChunksOf{
    "list_chunks_of",
    T0FS_PG_CHUNK_JOIN "WHERE c.ino = $1 AND c.idx >= $2 AND c.idx < $3 ORDER BY c.idx, r.pos"};
// The chunks of the inode entry ($1, $2) names, as kListChunksOf, with that
// inode last: no row when there is no such entry, one with NULL chunk
// columns when it has no chunk.
constexpr Stmt kChunksOfEntry{
    "chunks_of_entry",
    "SELECT c.id, c.ino, c.idx, c.object_version, c.ec, r.pos, r.node, r.volume, r.version, "
    "r.state, e.ino FROM dentries e" T0FS_PG_LOOKUP_JOIN("chunks", "ino = e.ino", "c")
        T0FS_PG_REPLICAS_OF_CHUNK "WHERE e.parent = $1 AND e.name = $2 ORDER BY c.idx, r.pos"};
// The chunks past the end (index >= the chunks its size covers) of the
// inode of handle $1 when it opened for writing, as kListChunksOf, with
// that inode and that first index last: no row when there is no such
// handle, NULL index and chunk columns for a reader's, NULL chunk columns
// when it has no such chunk. (The reader's condition is in the select list:
// in a WHERE it would be a filter on the handle's lookup.)
constexpr Stmt kTailChunksOfHandle{
    "tail_chunks_of_handle", T0FS_PG_CHUNK_COLUMNS
    ", t.ino, t.first FROM (SELECT h.ino, CASE WHEN (h.flags & 3) <> 0 "
    "AND i.chunk_size > 0 THEN (i.size + i.chunk_size - 1) / i.chunk_size END AS first "
    "FROM handles h" T0FS_PG_LOOKUP_JOIN(
        "inodes", "ino = h.ino",
        "i") "WHERE h.id = $1) t" T0FS_PG_LOOKUP_JOIN("chunks", "ino = t.ino AND idx >= t.first",
                                                      "c") T0FS_PG_REPLICAS_OF_CHUNK
    "ORDER BY c.idx, r.pos"};
constexpr Stmt kScanChunks{
    "scan_chunks", T0FS_PG_CHUNK_COLUMNS
    "FROM (SELECT * FROM chunks WHERE id > $1 ORDER BY id LIMIT $2) c" T0FS_PG_REPLICAS_OF_CHUNK
    "ORDER BY c.id, r.pos"};
constexpr Stmt kScanReplicas{"scan_replicas",
                             "SELECT chunk_id, pos, node, volume, version, state FROM replicas "
                             "WHERE (chunk_id, pos) > ($1, $2) ORDER BY chunk_id, pos LIMIT $3"};
constexpr Stmt kPutChunk{
    "put_chunk",
    "INSERT INTO chunks (id, ino, idx, object_version, ec) VALUES ($1, $2, $3, $4, $5) "
    "ON CONFLICT (id) DO UPDATE SET ino = excluded.ino, idx = excluded.idx, "
    "object_version = excluded.object_version, ec = excluded.ec"};
// ON CONFLICT checks the key with a dirty snapshot, which takes no
// serializable read lock (a SELECT by key would lock the index page).
constexpr Stmt kInsertChunkIfFree{
    "insert_chunk_if_free",
    "INSERT INTO chunks (id, ino, idx, object_version, ec) "
    "VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO NOTHING RETURNING id"};
// InsertChunkIfFree's insert, queued like a write: a taken id fails the
// transaction (23505: kTryAgain), and the retry asks with the one above.
// (A plain INSERT checks the key as ON CONFLICT does: no serializable read
// lock either.)
constexpr Stmt kInsertChunk{
    "insert_chunk",
    "INSERT INTO chunks (id, ino, idx, object_version, ec) VALUES ($1, $2, $3, $4, $5)"};
// One statement for the chunk row and its replica rows.
constexpr Stmt kDeleteChunk{"delete_chunk",
                            "WITH gone AS (DELETE FROM replicas WHERE chunk_id = $1) "
                            "DELETE FROM chunks WHERE id = $1"};
constexpr Stmt kPutReplica{
    "put_replica",
    "INSERT INTO replicas (chunk_id, pos, node, volume, version, state) "
    "VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (chunk_id, pos) DO UPDATE SET "
    "node = excluded.node, volume = excluded.volume, version = excluded.version, "
    "state = excluded.state"};
constexpr Stmt kDeleteReplica{"delete_replica",
                              "DELETE FROM replicas WHERE chunk_id = $1 AND pos = $2"};

constexpr Stmt kGarbageOfNode{"garbage_of_node",
                              "SELECT " T0FS_PG_GARBAGE_COLUMNS
                              " FROM garbage WHERE node = $1 ORDER BY id LIMIT $2"};
constexpr Stmt kGarbageOfChunk{"garbage_of_chunk", "SELECT " T0FS_PG_GARBAGE_COLUMNS
                                                   " FROM garbage WHERE chunk_id = $1 ORDER BY id"};
constexpr Stmt kGarbageChunks{
    "garbage_chunks",
    "SELECT DISTINCT chunk_id FROM garbage WHERE chunk_id > $1 ORDER BY chunk_id LIMIT $2"};
constexpr Stmt kScanGarbage{"scan_garbage", "SELECT " T0FS_PG_GARBAGE_COLUMNS
                                            " FROM garbage WHERE id > $1 ORDER BY id LIMIT $2"};
constexpr Stmt kPutGarbage{
    "put_garbage", "INSERT INTO garbage (" T0FS_PG_GARBAGE_COLUMNS
                   ") VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (id) DO UPDATE SET "
                   "chunk_id = excluded.chunk_id, ino = excluded.ino, idx = excluded.idx, "
                   "node = excluded.node, volume = excluded.volume, version = excluded.version"};
constexpr Stmt kDeleteGarbage{"delete_garbage", "DELETE FROM garbage WHERE id = $1"};

std::vector<ChunkWithReplicas> ChunksOfRows(const pg::Rows& q) {
  std::vector<ChunkWithReplicas> out;
  for (int r = 0; r < q.size(); ++r) {
    if (q.IsNull(r, 0)) continue;  // kChunksOfEntry's row of an inode without chunks
    ChunkId id(q.UInt(r, 0));
    if (out.empty() || out.back().chunk.id != id) {
      out.push_back(ChunkWithReplicas{ChunkRow{id, InodeId(q.UInt(r, 1)), q.UInt(r, 2),
                                               q.UInt(r, 3), std::string(q.Text(r, 4))},
                                      {}});
    }
    if (q.IsNull(r, 5)) continue;
    out.back().replicas.push_back(ReplicaRow{id, static_cast<uint32_t>(q.Int(r, 5)),
                                             NodeId(q.UInt(r, 6)), VolumeId(q.UInt(r, 7)),
                                             q.UInt(r, 8), static_cast<ReplicaState>(q.Int(r, 9))});
  }
  return out;
}

ReplicaRow ReplicaOfRow(const pg::Rows& q, int r) {
  return ReplicaRow{ChunkId(q.UInt(r, 0)), static_cast<uint32_t>(q.Int(r, 1)),
                    NodeId(q.UInt(r, 2)),  VolumeId(q.UInt(r, 3)),
                    q.UInt(r, 4),          static_cast<ReplicaState>(q.Int(r, 5))};
}
std::vector<pg::Param> ReplicaKey(const ReplicaRow& row) {
  return {Id64(row.chunk), U(row.pos)};
}

GarbageRow GarbageOfRow(const pg::Rows& q, int r) {
  return GarbageRow{q.UInt(r, 0), ChunkId(q.UInt(r, 1)), InodeId(q.UInt(r, 2)),
                    q.UInt(r, 3), NodeId(q.UInt(r, 4)),  VolumeId(q.UInt(r, 5)),
                    q.UInt(r, 6)};
}
std::vector<pg::Param> GarbageKey(const GarbageRow& row) {
  return {U(row.id)};
}

std::vector<GarbageRow> GarbageOfRows(const pg::Rows& q) {
  std::vector<GarbageRow> out;
  for (int r = 0; r < q.size(); ++r) out.push_back(GarbageOfRow(q, r));
  return out;
}

}  // namespace

// ---- chunks and replicas ----

Result<std::optional<ChunkWithReplicas>> PgTxn::GetChunk(ChunkId chunk) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGetChunk, {Id64(chunk)}));
  std::vector<ChunkWithReplicas> chunks = ChunksOfRows(rows);
  if (chunks.empty()) return std::optional<ChunkWithReplicas>();
  return std::optional<ChunkWithReplicas>(std::move(chunks.front()));
}

Status PgTxn::PrefetchChunksOfEntry(InodeId dir, std::string_view name) {
  return PrefetchOfEntry<std::vector<ChunkWithReplicas>>(
      kChunksOfEntry, dir, name, chunk_writes_, 10, ChunksOfRows,
      [this](InodeId ino, std::vector<ChunkWithReplicas> chunks) {
        KnowChunks(ino.value(), 0, std::move(chunks));
      });
}

Status PgTxn::PrefetchTailChunksOf(HandleId handle) {
  const uint64_t writes = chunk_writes_;
  return Prefetch(kTailChunksOfHandle, {Id64(handle)}, [this, writes](const pg::Rows& rows) {
    if (rows.size() == 0 || rows.IsNull(0, 11) || chunk_writes_ != writes) return;
    KnowChunks(rows.UInt(0, 10), rows.UInt(0, 11), ChunksOfRows(rows));
  });
}

void PgTxn::KnowChunks(uint64_t ino, uint64_t from, std::vector<ChunkWithReplicas> chunks) {
  auto known = known_chunks_.find(ino);
  if (known == known_chunks_.end()) {
    known_chunks_.emplace(ino, KnownChunks{from, std::move(chunks)});
  } else if (from < known->second.from) {  // both current: keep the longer
    known->second = KnownChunks{from, std::move(chunks)};
  }
}

void PgTxn::ChunkDeleted(ChunkId chunk) {
  ++chunk_writes_;
  for (auto& [ino, known] : known_chunks_) {
    std::erase_if(known.chunks,
                  [chunk](const ChunkWithReplicas& c) { return c.chunk.id == chunk; });
  }
}

Result<std::vector<ChunkWithReplicas>> PgTxn::ListChunksOf(InodeId ino, uint64_t first,
                                                           uint64_t end) {
  RETURN_IF_ERROR(Settle());
  if (!failed_.ok()) return failed_;
  if (auto known = known_chunks_.find(ino.value());
      known != known_chunks_.end() && known->second.from <= first) {
    std::vector<ChunkWithReplicas> chunks;
    for (const ChunkWithReplicas& c : known->second.chunks) {
      if (c.chunk.index >= first && c.chunk.index < end) chunks.push_back(c);
    }
    return chunks;
  }
  // Indices are stored as signed 64-bit integers.
  constexpr uint64_t kMaxIndex = static_cast<uint64_t>(INT64_MAX);
  if (first >= end || first > kMaxIndex) return std::vector<ChunkWithReplicas>();
  ASSIGN_OR_RETURN(pg::Rows rows,
                   Run(kListChunksOf, {Id64(ino), U(first), U(std::min(end, kMaxIndex))}));
  return ChunksOfRows(rows);
}

Result<std::vector<ChunkWithReplicas>> PgTxn::ScanChunks(ChunkId after, size_t limit) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kScanChunks, {Id64(after), Limit(limit)}));
  return ChunksOfRows(rows);
}

Status PgTxn::ScanReplicas(const RowVisitor<ReplicaRow>& visit) {
  return ScanPaged<ReplicaRow>(kScanReplicas, {pg::Param(INT64_MIN), pg::Param(INT64_MIN)},
                               ReplicaOfRow, ReplicaKey, visit);
}

Status PgTxn::PutChunk(const ChunkRow& row) {
  ChunksWritten();
  return Exec(kPutChunk, {Id64(row.id), Id64(row.ino), U(row.index), U(row.object_version),
                          pg::Param(std::string_view(row.ec))});
}

Result<bool> PgTxn::InsertChunkIfFree(const ChunkRow& row) {
  ChunksWritten();
  std::vector<pg::Param> params{Id64(row.id), Id64(row.ino), U(row.index), U(row.object_version),
                                pg::Param(std::string_view(row.ec))};
  // The ids offered are ones reserved for the caller (a create's chunk 0):
  // practically always free. So the insert is queued and the answer not
  // waited for (a create's round trip less); if the id was taken after all,
  // the transaction fails, and the retry asks for these ids and waits.
  if (std::find(deferred_chunks_.begin(), deferred_chunks_.end(), row.id) !=
      deferred_chunks_.end()) {
    return false;  // this transaction's own
  }
  if (!engine_.MaybeTakenChunk(row.id)) {
    // Noted first: a full queue sends it at once, and a failure then names it.
    deferred_chunks_.push_back(row.id);
    RETURN_IF_ERROR(Exec(kInsertChunk, params));
    return true;
  }
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kInsertChunkIfFree, params));
  return rows.size() == 1;
}

Status PgTxn::DeleteChunk(ChunkId chunk) {
  ChunkDeleted(chunk);
  return Exec(kDeleteChunk, {Id64(chunk)});
}

Status PgTxn::PutReplica(const ReplicaRow& row) {
  ChunksWritten();
  return Exec(kPutReplica, {Id64(row.chunk), U(row.pos), Id64(row.node), Id64(row.volume),
                            U(row.version), U(static_cast<uint32_t>(row.state))});
}

Status PgTxn::DeleteReplica(ChunkId chunk, uint32_t pos) {
  ChunksWritten();
  return Exec(kDeleteReplica, {Id64(chunk), U(pos)});
}

// ---- garbage ----

Result<std::vector<GarbageRow>> PgTxn::ListGarbageOfNode(NodeId node, size_t limit) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGarbageOfNode, {Id64(node), Limit(limit)}));
  return GarbageOfRows(rows);
}

Result<std::vector<GarbageRow>> PgTxn::ListGarbageOfChunk(ChunkId chunk) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGarbageOfChunk, {Id64(chunk)}));
  return GarbageOfRows(rows);
}

Result<std::vector<ChunkId>> PgTxn::ListGarbageChunks(ChunkId after, size_t limit) {
  ASSIGN_OR_RETURN(pg::Rows rows, Run(kGarbageChunks, {Id64(after), Limit(limit)}));
  std::vector<ChunkId> out;
  for (int r = 0; r < rows.size(); ++r) out.push_back(ChunkId(rows.UInt(r, 0)));
  return out;
}

Status PgTxn::ScanGarbage(const RowVisitor<GarbageRow>& visit) {
  return ScanPaged<GarbageRow>(kScanGarbage, {pg::Param(INT64_MIN)}, GarbageOfRow, GarbageKey,
                               visit);
}

Status PgTxn::PutGarbage(const GarbageRow& row) {
  return Exec(kPutGarbage, {U(row.id), Id64(row.chunk), Id64(row.ino), U(row.index), Id64(row.node),
                            Id64(row.volume), U(row.version)});
}

Status PgTxn::DeleteGarbage(uint64_t id) {
  return Exec(kDeleteGarbage, {U(id)});
}

}  // namespace t0fs::meta
