// GetLayout, Allocate and Commit: a file's chunks, their replicas and versions.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "meta/store/sqlite_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

// Bounds one Allocate call (one transaction).
constexpr size_t kMaxAllocate = 1 << 16;

Status RequireFile(const InodeAttr& attr) {
  if (internal::IsReg(attr.mode)) return Status::Ok();
  if (internal::IsDir(attr.mode)) {
    return Status(StatusCode::kIsDirectory, fmt::format("inode {} is a directory", attr.ino));
  }
  return Status(StatusCode::kInvalidArgument, fmt::format("inode {} is not a file", attr.ino));
}

}  // namespace

Result<std::vector<ChunkLayout>> SqliteStore::GetLayout(InodeId ino, uint64_t first,
                                                        uint64_t count) {
  std::vector<ChunkLayout> out;
  RETURN_IF_ERROR(Read([&]() -> Status {
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(ino));
    RETURN_IF_ERROR(RequireFile(attr));
    if (count == 0 || first > internal::kMaxFileSize) return Status::Ok();
    uint64_t end =
        std::min(internal::kMaxFileSize, first + std::min(count, internal::kMaxFileSize));
    ASSIGN_OR_RETURN(
        auto q,
        db_.Query(
            "SELECT c.idx, r.chunk_id, r.node, r.volume, r.version, r.state FROM chunks c "
            "JOIN replicas r ON r.chunk_id = c.id WHERE c.ino = ? AND c.idx >= ? AND c.idx < ? "
            "ORDER BY c.idx, r.pos",
            ino, first, end));
    for (;;) {
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return Status::Ok();
      uint64_t idx = q->U64(0);
      if (out.empty() || out.back().index != idx) out.push_back(ChunkLayout{idx, {}});
      out.back().replicas.push_back(Replica{NodeId(q->U64(2)), VolumeId(q->U64(3)),
                                            ChunkId(q->U64(1)), q->U64(4),
                                            static_cast<ReplicaState>(q->U32(5))});
    }
  }));
  return out;
}

Result<std::vector<ChunkLayout>> SqliteStore::Allocate(const OpToken& token, InodeId ino,
                                                       const std::vector<uint64_t>& indices,
                                                       const std::vector<ReplicaTarget>& targets) {
  if (indices.size() > kMaxAllocate) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("allocate of {} chunks (limit {})", indices.size(), kMaxAllocate));
  }
  std::set<std::pair<uint64_t, uint64_t>> distinct;
  for (const ReplicaTarget& t : targets) {
    if (!distinct.emplace(t.node.value(), t.volume.value()).second) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("volume {} of node {} targeted twice", t.volume, t.node));
    }
  }
  std::vector<uint64_t> sorted(indices);
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());

  std::vector<ChunkLayout> result;
  auto body = [&](Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(ino));
    RETURN_IF_ERROR(RequireFile(attr));
    out.ino = ino;
    bool targets_checked = false;
    for (uint64_t idx : sorted) {
      if (idx > internal::kMaxFileSize / attr.chunk_size) {
        return Status(StatusCode::kFileTooBig, fmt::format("chunk index {}", idx));
      }
      ASSIGN_OR_RETURN(auto existing,
                       db_.QueryInt("SELECT id FROM chunks WHERE ino = ? AND idx = ?", ino, idx));
      if (existing) continue;
      if (!targets_checked) {
        if (targets.empty()) return Status(StatusCode::kInvalidArgument, "no replica targets");
        for (const ReplicaTarget& t : targets) {
          ASSIGN_OR_RETURN(auto node, db_.QueryInt("SELECT 1 FROM nodes WHERE id = ?", t.node));
          if (!node) return Status(StatusCode::kMetaNoNode, fmt::format("node {}", t.node));
          ASSIGN_OR_RETURN(auto vol, db_.QueryInt("SELECT 1 FROM volumes WHERE id = ? AND node = ?",
                                                  t.volume, t.node));
          if (!vol) {
            return Status(StatusCode::kInvalidArgument,
                          fmt::format("volume {} is not a volume of node {}", t.volume, t.node));
          }
        }
        targets_checked = true;
      }
      ASSIGN_OR_RETURN(
          auto q, db_.Query("INSERT INTO chunks (ino, idx) VALUES (?, ?) RETURNING id", ino, idx));
      ASSIGN_OR_RETURN(bool row, q->Step());
      if (!row) return Status(StatusCode::kInternal, "insert chunk returned no id");
      ChunkId chunk(q->U64(0));
      RETURN_IF_ERROR(q->Run());
      for (size_t pos = 0; pos < targets.size(); ++pos) {
        RETURN_IF_ERROR(
            db_.Run("INSERT INTO replicas (chunk_id, pos, node, volume, version, "
                    "state) VALUES (?, ?, ?, ?, 0, ?)",
                    chunk, pos, targets[pos].node, targets[pos].volume, ReplicaState::kHealthy));
      }
    }
    ASSIGN_OR_RETURN(result, LoadLayouts(ino, sorted));
    return Status::Ok();
  };
  auto replay = [&](const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(result, LoadLayouts(out.ino, sorted));
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay));
  return result;
}

Result<InodeAttr> SqliteStore::Commit(const OpToken& token, const CommitArgs& args, bool durable,
                                      Timespec now) {
  if (args.size > internal::kMaxFileSize) {
    return Status(StatusCode::kFileTooBig, fmt::format("size {}", args.size));
  }
  InodeAttr result;
  auto body = [&](Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeAttr attr, LoadAttr(args.ino));
    if (!internal::IsReg(attr.mode)) {
      return Status(StatusCode::kInvalidArgument, fmt::format("commit to non-file {}", args.ino));
    }
    out.ino = attr.ino;
    if (args.handle.valid()) {
      // A handle that is gone (its session expired) does not stop the commit:
      // the data is written and the inode still exists. A handle of another
      // inode is a client bug.
      ASSIGN_OR_RETURN(auto owner,
                       db_.QueryInt("SELECT ino FROM handles WHERE id = ?", args.handle));
      if (owner && static_cast<uint64_t>(*owner) != args.ino.value()) {
        return Status(StatusCode::kBadHandle,
                      fmt::format("handle {} is not open on inode {}", args.handle, args.ino));
      }
    }
    if (args.size > attr.size) {
      RETURN_IF_ERROR(db_.Run("UPDATE inodes SET size = ? WHERE ino = ?", args.size, args.ino));
    }
    if (args.mtime) {
      RETURN_IF_ERROR(
          db_.Run("UPDATE inodes SET mtime_s = ?, mtime_ns = ?, ctime_s = ?, "
                  "ctime_ns = ? WHERE ino = ?",
                  args.mtime->sec, args.mtime->nsec, now.sec, now.nsec, args.ino));
    }
    // Versions only grow; a chunk that is no longer part of this file
    // (truncated away meanwhile) is skipped. A healthy replica that did not
    // take the writes (not listed) missed data: it becomes stale and keeps
    // its version, so that it is neither read nor counted until repaired.
    for (const WrittenChunk& w : args.written) {
      ASSIGN_OR_RETURN(auto owned, db_.QueryInt("SELECT 1 FROM chunks WHERE id = ? AND ino = ?",
                                                w.chunk, args.ino));
      if (!owned) continue;
      if (w.nodes.empty()) {
        RETURN_IF_ERROR(db_.Run("UPDATE replicas SET version = ? WHERE chunk_id = ? AND version < ?",
                                w.version, w.chunk, w.version));
        continue;
      }
      std::string nodes = internal::FormatNodeList(w.nodes);
      RETURN_IF_ERROR(db_.Run(
          "UPDATE replicas SET version = ? WHERE chunk_id = ? AND version < ? AND "
          "instr(',' || ? || ',', ',' || node || ',') > 0",
          w.version, w.chunk, w.version, nodes));
      RETURN_IF_ERROR(db_.Run(
          "UPDATE replicas SET state = ? WHERE chunk_id = ? AND state = ? AND version < ? AND "
          "instr(',' || ? || ',', ',' || node || ',') = 0",
          ReplicaState::kStale, w.chunk, ReplicaState::kHealthy, w.version, nodes));
    }
    ASSIGN_OR_RETURN(result, LoadAttr(args.ino));
    return Status::Ok();
  };
  auto replay = [&](const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(result, LoadAttr(out.ino));
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay, durable));
  return result;
}

}  // namespace t0fs::meta
