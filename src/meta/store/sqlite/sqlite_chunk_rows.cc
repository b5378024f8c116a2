// Row codecs of the SQLite engine: chunks, their replicas, the garbage queue.
#include <fmt/format.h>

#include "meta/store/sqlite/sqlite_rows.h"

namespace t0fs::meta::sqlite {
namespace {

// A chunk joined with its replicas: one result row per replica (one row with
// NULL replica columns for a chunk without any), in chunk order, then pos.
constexpr const char* kChunkJoin =
    "SELECT c.id, c.ino, c.idx, c.object_version, c.ec, r.pos, r.node, r.volume, r.version, "
    "r.state FROM chunks c LEFT JOIN replicas r ON r.chunk_id = c.id";

Result<std::vector<ChunkWithReplicas>> CollectChunks(StatementLease& q) {
  std::vector<ChunkWithReplicas> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return out;
    ChunkId id(q->U64(0));
    if (out.empty() || out.back().chunk.id != id) {
      out.push_back(ChunkWithReplicas{
          ChunkRow{id, InodeId(q->U64(1)), q->U64(2), q->U64(3), q->Bytes(4)}, {}});
    }
    if (q->IsNull(5)) continue;
    out.back().replicas.push_back(ReplicaRow{id, q->U32(5), NodeId(q->U64(6)), VolumeId(q->U64(7)),
                                             q->U64(8), static_cast<ReplicaState>(q->U32(9))});
  }
}

GarbageRow GarbageFromRow(const Statement& q) {
  return GarbageRow{q.U64(0),         ChunkId(q.U64(1)),  InodeId(q.U64(2)), q.U64(3),
                    NodeId(q.U64(4)), VolumeId(q.U64(5)), q.U64(6)};
}

constexpr const char* kGarbageColumns = "id, chunk_id, ino, idx, node, volume, version";

Result<std::vector<GarbageRow>> CollectGarbage(StatementLease& q) {
  std::vector<GarbageRow> out;
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return out;
    out.push_back(GarbageFromRow(*q));
  }
}

}  // namespace

// ---- chunks and replicas ----

Result<std::optional<ChunkWithReplicas>> GetChunk(Db& db, ChunkId chunk) {
  static const std::string sql = fmt::format("{} WHERE c.id = ? ORDER BY r.pos", kChunkJoin);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, chunk));
  ASSIGN_OR_RETURN(auto chunks, CollectChunks(q));
  if (chunks.empty()) return std::optional<ChunkWithReplicas>();
  return std::optional<ChunkWithReplicas>(std::move(chunks.front()));
}

Result<std::vector<ChunkWithReplicas>> ListChunksOf(Db& db, InodeId ino, uint64_t first,
                                                    uint64_t end) {
  static const std::string sql = fmt::format(
      "{} WHERE c.ino = ? AND c.idx >= ? AND c.idx < ? ORDER BY c.idx, r.pos", kChunkJoin);
  if (first >= end) return std::vector<ChunkWithReplicas>();
  // Indices are stored as SQLite's signed 64-bit integers.
  constexpr uint64_t kMaxIndex = static_cast<uint64_t>(INT64_MAX);
  if (first > kMaxIndex) return std::vector<ChunkWithReplicas>();
  ASSIGN_OR_RETURN(auto q, db.Query(sql, ino, first, std::min(end, kMaxIndex)));
  return CollectChunks(q);
}

Result<std::vector<ChunkWithReplicas>> ScanChunks(Db& db, ChunkId after, size_t limit) {
  static const std::string sql = fmt::format(
      "{} WHERE c.id IN (SELECT id FROM chunks WHERE id > ? ORDER BY id LIMIT ?) "
      "ORDER BY c.id, r.pos",
      kChunkJoin);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, after, limit));
  return CollectChunks(q);
}

Status ScanReplicas(Db& db, const RowVisitor<ReplicaRow>& visit) {
  ASSIGN_OR_RETURN(auto q, db.Query("SELECT chunk_id, pos, node, volume, version, state "
                                    "FROM replicas ORDER BY chunk_id, pos"));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status::Ok();
    RETURN_IF_ERROR(
        visit(ReplicaRow{ChunkId(q->U64(0)), q->U32(1), NodeId(q->U64(2)), VolumeId(q->U64(3)),
                         q->U64(4), static_cast<ReplicaState>(q->U32(5))}));
  }
}

Status PutChunk(Db& db, const ChunkRow& row) {
  return db.Run(
      "INSERT INTO chunks (id, ino, idx, object_version, ec) VALUES (?, ?, ?, ?, ?) "
      "ON CONFLICT (id) DO UPDATE SET ino = excluded.ino, idx = excluded.idx, "
      "object_version = excluded.object_version, ec = excluded.ec",
      row.id, row.ino, row.index, row.object_version, row.ec);
}

Status DeleteChunk(Db& db, ChunkId chunk) {
  RETURN_IF_ERROR(db.Run("DELETE FROM replicas WHERE chunk_id = ?", chunk));
  return db.Run("DELETE FROM chunks WHERE id = ?", chunk);
}

Status PutReplica(Db& db, const ReplicaRow& row) {
  return db.Run(
      "INSERT INTO replicas (chunk_id, pos, node, volume, version, state) "
      "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (chunk_id, pos) DO UPDATE SET "
      "node = excluded.node, volume = excluded.volume, version = excluded.version, "
      "state = excluded.state",
      row.chunk, row.pos, row.node, row.volume, row.version, row.state);
}

Status DeleteReplica(Db& db, ChunkId chunk, uint32_t pos) {
  return db.Run("DELETE FROM replicas WHERE chunk_id = ? AND pos = ?", chunk, pos);
}

// ---- garbage ----

Result<std::vector<GarbageRow>> ListGarbageOfNode(Db& db, NodeId node, size_t limit) {
  static const std::string sql =
      fmt::format("SELECT {} FROM garbage WHERE node = ? ORDER BY id LIMIT ?", kGarbageColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, node, limit));
  return CollectGarbage(q);
}

Result<std::vector<GarbageRow>> ListGarbageOfChunk(Db& db, ChunkId chunk) {
  static const std::string sql =
      fmt::format("SELECT {} FROM garbage WHERE chunk_id = ? ORDER BY id", kGarbageColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql, chunk));
  return CollectGarbage(q);
}

Result<std::vector<ChunkId>> ListGarbageChunks(Db& db, ChunkId after, size_t limit) {
  std::vector<ChunkId> out;
  ASSIGN_OR_RETURN(auto q, db.Query("SELECT DISTINCT chunk_id FROM garbage WHERE chunk_id > ? "
                                    "ORDER BY chunk_id LIMIT ?",
                                    after, limit));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return out;
    out.push_back(ChunkId(q->U64(0)));
  }
}

Status ScanGarbage(Db& db, const RowVisitor<GarbageRow>& visit) {
  static const std::string sql = fmt::format("SELECT {} FROM garbage ORDER BY id", kGarbageColumns);
  ASSIGN_OR_RETURN(auto q, db.Query(sql));
  for (;;) {
    ASSIGN_OR_RETURN(bool row, q->Step());
    if (!row) return Status::Ok();
    RETURN_IF_ERROR(visit(GarbageFromRow(*q)));
  }
}

Status PutGarbage(Db& db, const GarbageRow& row) {
  return db.Run(
      "INSERT INTO garbage (id, chunk_id, ino, idx, node, volume, version) "
      "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO UPDATE SET chunk_id = excluded.chunk_id, "
      "ino = excluded.ino, idx = excluded.idx, node = excluded.node, volume = excluded.volume, "
      "version = excluded.version",
      row.id, row.chunk, row.ino, row.index, row.node, row.volume, row.version);
}

Status DeleteGarbage(Db& db, uint64_t id) {
  return db.Run("DELETE FROM garbage WHERE id = ?", id);
}

}  // namespace t0fs::meta::sqlite
