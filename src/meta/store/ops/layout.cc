// GetLayout, Allocate, ReserveChunkIds and Commit: a file's chunks, their replicas and versions.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {
namespace {

// Bounds one Allocate call (one transaction).
constexpr size_t kMaxAllocate = 1 << 16;
constexpr uint32_t kMaxReserveChunks = 256;

Status RequireFile(const InodeAttr& attr) {
  if (internal::IsReg(attr.mode)) return Status::Ok();
  if (internal::IsDir(attr.mode)) {
    return Status(StatusCode::kIsDirectory, fmt::format("inode {} is a directory", attr.ino));
  }
  return Status(StatusCode::kInvalidArgument, fmt::format("inode {} is not a file", attr.ino));
}

}  // namespace

Result<std::vector<ChunkLayout>> PosixStore::GetLayout(InodeId ino, uint64_t first,
                                                       uint64_t count) {
  std::vector<ChunkLayout> out;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    out.clear();
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, ino));
    RETURN_IF_ERROR(RequireFile(row.attr));
    if (count == 0 || first > internal::kMaxFileSize) return Status::Ok();
    uint64_t end =
        std::min(internal::kMaxFileSize, first + std::min(count, internal::kMaxFileSize));
    ASSIGN_OR_RETURN(out, internal::LoadLayoutRange(txn, ino, first, end));
    return Status::Ok();
  }));
  return out;
}

Result<std::vector<ChunkId>> PosixStore::ReserveChunkIds(uint32_t count) {
  if (count == 0 || count > kMaxReserveChunks) {
    return Status(StatusCode::kInvalidArgument, fmt::format("reserve 1..{} chunk ids per call", kMaxReserveChunks));
  }
  std::vector<ChunkId> ids;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    ids.clear();  // a retried transaction starts over
    for (uint32_t i = 0; i < count; ++i) {
      ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kChunk));
      ids.push_back(ChunkId(id));
    }
    return Status::Ok();
  }));
  return ids;
}

Result<std::vector<ChunkLayout>> PosixStore::Allocate(const OpToken& token, InodeId ino,
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
  auto body = [&](WriteTxn& txn, Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, ino));
    RETURN_IF_ERROR(RequireFile(row.attr));
    out.ino = ino;
    bool targets_checked = false;
    result.clear();  // a retried transaction starts over
    for (uint64_t idx : sorted) {
      if (idx > internal::kMaxFileSize / row.attr.chunk_size) {
        return Status(StatusCode::kFileTooBig, fmt::format("chunk index {}", idx));
      }
      // The answer is what LoadLayouts would read back: the chunks found,
      // and the ones added here, without a second read of each.
      ASSIGN_OR_RETURN(std::vector<ChunkWithReplicas> existing, txn.ListChunksOf(ino, idx, idx + 1));
      if (!existing.empty()) {
        for (const ChunkWithReplicas& c : existing) {
          if (!c.replicas.empty()) result.push_back(internal::LayoutOf(c));
        }
        continue;
      }
      if (!targets_checked) {
        RETURN_IF_ERROR(internal::CheckTargets(txn, targets));
        targets_checked = true;
      }
      ASSIGN_OR_RETURN(ChunkWithReplicas added, internal::AddChunk(txn, ino, idx, targets));
      result.push_back(internal::LayoutOf(added));
    }
    return Status::Ok();
  };
  auto replay = [&](ReadTxn& txn, const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(result, internal::LoadLayouts(txn, out.ino, sorted));
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay));
  return result;
}

namespace {

// Versions only grow; a healthy replica that did not take the writes (not
// in `w.nodes`) missed data: it becomes stale and keeps its version, so that
// it is neither read nor counted until repaired.
//
// Writes that went only to nodes holding no live replica of the chunk any
// more (offloaded, or gone from the layout, since the writer's layout: a
// client cut off past its session lease, whose file was offloaded
// meanwhile) are in files those nodes removed: the commit is refused
// (kStale), never recorded as if the bytes were kept.
Status CommitVersions(WriteTxn& txn, const ChunkWithReplicas& chunk, const WrittenChunk& w) {
  const auto named = [&](NodeId node) {
    return w.nodes.empty() || std::find(w.nodes.begin(), w.nodes.end(), node) != w.nodes.end();
  };
  const bool kept = std::any_of(
      chunk.replicas.begin(), chunk.replicas.end(),
      [&](const ReplicaRow& r) { return r.state != ReplicaState::kOffloaded && named(r.node); });
  if (!kept) {
    return Status(
        StatusCode::kStale,
        fmt::format("chunk {}: its writes went to node(s) {} which hold no replica of it any more "
                    "(offloaded or moved since the writer's layout): not committed",
                    chunk.chunk.id, fmt::join(w.nodes, ",")));
  }
  for (ReplicaRow r : chunk.replicas) {
    if (r.state == ReplicaState::kOffloaded) continue;  // left as it is: repair drops it
    const bool took = w.nodes.empty() ||
                      std::find(w.nodes.begin(), w.nodes.end(), r.node) != w.nodes.end();
    if (r.version >= w.version) continue;
    if (took) {
      r.version = w.version;
    } else if (r.state == ReplicaState::kHealthy) {
      r.state = ReplicaState::kStale;
    } else {
      continue;
    }
    RETURN_IF_ERROR(txn.PutReplica(r));
  }
  return Status::Ok();
}

}  // namespace

Result<InodeAttr> PosixStore::Commit(const OpToken& token, const CommitArgs& args, bool durable,
                                     Timespec now) {
  if (args.size > internal::kMaxFileSize) {
    return Status(StatusCode::kFileTooBig, fmt::format("size {}", args.size));
  }
  InodeAttr result;
  auto body = [&](WriteTxn& txn, Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, args.ino));
    if (!internal::IsReg(row.attr.mode)) {
      return Status(StatusCode::kInvalidArgument, fmt::format("commit to non-file {}", args.ino));
    }
    out.ino = row.attr.ino;
    if (args.handle.valid()) {
      // A handle that is gone (its session expired) does not stop the commit:
      // the data is written and the inode still exists. A handle of another
      // inode is a client bug.
      ASSIGN_OR_RETURN(std::optional<HandleRow> owner, txn.GetHandle(args.handle));
      if (owner && owner->ino != args.ino) {
        return Status(StatusCode::kBadHandle,
                      fmt::format("handle {} is not open on inode {}", args.handle, args.ino));
      }
    }
    bool changed = false;
    if (args.size > row.attr.size) {
      row.attr.size = args.size;
      changed = true;
    }
    if (args.mtime) {
      row.attr.mtime = *args.mtime;
      row.attr.ctime = now;
      changed = true;
    }
    if (changed) RETURN_IF_ERROR(txn.PutInode(row));
    // A chunk that is no longer part of this file (truncated away meanwhile)
    // is skipped.
    for (const WrittenChunk& w : args.written) {
      ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> chunk, txn.GetChunk(w.chunk));
      if (!chunk || chunk->chunk.ino != args.ino) continue;
      RETURN_IF_ERROR(CommitVersions(txn, *chunk, w));
    }
    result = row.attr;
    return Status::Ok();
  };
  auto replay = [&](ReadTxn& txn, const Outcome& out) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, out.ino));
    result = std::move(row.attr);
    return Status::Ok();
  };
  RETURN_IF_ERROR(Mutate(token, body, replay, durable));
  return result;
}

}  // namespace t0fs::meta
