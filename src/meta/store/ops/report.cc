// Counts and ListChunks: what `t0fs status` and fsck read.
#include <fmt/format.h>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

Result<StoreCounts> SqliteStore::Counts() {
  StoreCounts c;
  // Type bits in SQL: S_IFMT 0170000 = 61440, S_IFDIR 0040000 = 16384,
  // S_IFREG 0100000 = 32768.
  RETURN_IF_ERROR(Read([&]() -> Status {
    auto count = [&](std::string_view sql, uint64_t* field) -> Status {
      ASSIGN_OR_RETURN(auto v, db_.QueryInt(sql));
      *field = static_cast<uint64_t>(v.value_or(0));
      return Status::Ok();
    };
    RETURN_IF_ERROR(count("SELECT COUNT(*) FROM inodes WHERE (mode & 61440) <> 16384", &c.files));
    RETURN_IF_ERROR(
        count("SELECT COUNT(*) FROM inodes WHERE (mode & 61440) = 16384", &c.directories));
    RETURN_IF_ERROR(count("SELECT COUNT(*) FROM chunks", &c.chunks));
    RETURN_IF_ERROR(count("SELECT COALESCE(SUM(size), 0) FROM inodes WHERE (mode & 61440) = 32768",
                          &c.logical_bytes));
    RETURN_IF_ERROR(count("SELECT COUNT(*) FROM sessions", &c.sessions));
    RETURN_IF_ERROR(count("SELECT COUNT(*) FROM handles", &c.open_handles));
    return count("SELECT COUNT(*) FROM garbage", &c.garbage_chunks);
  }));
  return c;
}

Result<std::vector<ChunkRecord>> SqliteStore::ListChunks(ChunkId after, size_t max, bool* eof) {
  std::vector<ChunkRecord> out;
  bool at_end = true;
  if (max == 0) return Status(StatusCode::kInvalidArgument, "list of 0 chunks");
  RETURN_IF_ERROR(Read([&]() -> Status {
    // The next chunk ids first (one more than can fit, to detect the end),
    // then each chunk's rows: a page never splits a chunk's replicas, since
    // the next page starts after the last chunk id returned.
    std::vector<uint64_t> ids;
    {
      ASSIGN_OR_RETURN(
          auto q,
          db_.Query("SELECT chunk_id FROM (SELECT chunk_id FROM replicas WHERE chunk_id > ? "
                    "UNION SELECT chunk_id FROM garbage WHERE chunk_id > ?) AS c ORDER BY chunk_id "
                    "LIMIT ?",
                    after, after, max + 1));
      for (;;) {
        ASSIGN_OR_RETURN(bool row, q->Step());
        if (!row) break;
        ids.push_back(q->U64(0));
      }
    }
    for (size_t i = 0; i < ids.size(); ++i) {
      std::vector<ChunkRecord> rows;
      {
        ASSIGN_OR_RETURN(
            auto q,
            db_.Query("SELECT c.ino, c.idx, r.node, r.volume, r.version, r.state, 0, r.pos "
                      "FROM replicas r LEFT JOIN chunks c ON c.id = r.chunk_id "
                      "WHERE r.chunk_id = ? "
                      "UNION ALL SELECT ino, idx, node, volume, version, 0, 1, id FROM garbage "
                      "WHERE chunk_id = ? ORDER BY 7, 8",
                      ids[i], ids[i]));
        for (;;) {
          ASSIGN_OR_RETURN(bool row, q->Step());
          if (!row) break;
          ChunkId chunk(ids[i]);
          rows.push_back(ChunkRecord{chunk, InodeId(q->U64(0)), q->U64(1),
                                     Replica{NodeId(q->U64(2)), VolumeId(q->U64(3)), chunk,
                                             q->U64(4), static_cast<ReplicaState>(q->U32(5))},
                                     q->Int(6) != 0});
        }
      }
      // A chunk with more rows than `max` still goes out whole, alone.
      if (!out.empty() && out.size() + rows.size() > max) {
        at_end = false;
        return Status::Ok();
      }
      out.insert(out.end(), rows.begin(), rows.end());
      if (out.size() >= max && i + 1 < ids.size()) {
        at_end = false;
        return Status::Ok();
      }
    }
    return Status::Ok();
  }));
  if (eof != nullptr) *eof = at_end;
  return out;
}

}  // namespace t0fs::meta
