// The row steps shared by several PosixStore operations (store_util.h).
#include <fmt/format.h>

#include <algorithm>

#include "common/logging.h"
#include "ec/cells.h"
#include "meta/store/chunk_math.h"
#include "meta/store/store_util.h"

namespace t0fs::meta::internal {

Status CheckName(std::string_view name) {
  if (name.empty() || name == "." || name == "..") {
    return Status(StatusCode::kInvalidArgument, fmt::format("invalid name '{}'", name));
  }
  if (name.find('/') != std::string_view::npos || name.find('\0') != std::string_view::npos) {
    return Status(StatusCode::kInvalidArgument, "name contains '/' or NUL");
  }
  if (name.size() > kMaxNameLength) {
    return Status(StatusCode::kNameTooLong,
                  fmt::format("name of {} bytes (limit {})", name.size(), kMaxNameLength));
  }
  return Status::Ok();
}

Result<InodeRow> LoadInode(ReadTxn& txn, InodeId ino) {
  ASSIGN_OR_RETURN(std::optional<InodeRow> row, txn.GetInode(ino));
  if (!row) return Status(StatusCode::kNotFound, fmt::format("inode {}", ino));
  return std::move(*row);
}

Result<InodeRow> LoadDir(ReadTxn& txn, InodeId dir) {
  ASSIGN_OR_RETURN(InodeRow row, LoadInode(txn, dir));
  if (!IsDir(row.attr.mode)) {
    return Status(StatusCode::kNotDirectory, fmt::format("inode {} is not a directory", dir));
  }
  if (row.attr.nlink == 0) {
    return Status(StatusCode::kNotFound, fmt::format("directory {} was removed", dir));
  }
  return row;
}

Result<DirAndEntry> LoadDirEntry(ReadTxn& txn, InodeId dir, std::string_view name) {
  RETURN_IF_ERROR(txn.PrefetchEntry(dir, name));
  DirAndEntry out;
  ASSIGN_OR_RETURN(out.dir, LoadDir(txn, dir));
  ASSIGN_OR_RETURN(out.entry, txn.GetDentry(dir, name));
  return out;
}

Result<InodeId> ParentOf(ReadTxn& txn, InodeId dir) {
  if (dir == kRootInode) return dir;
  ASSIGN_OR_RETURN(std::optional<InodeRow> row, txn.GetInode(dir));
  if (!row || !row->parent.valid()) return dir;
  return row->parent;
}

Result<bool> IsWithin(ReadTxn& txn, InodeId dir, InodeId ancestor) {
  // Walks up from `dir`. The step bound only guards against a corrupt
  // (cyclic) tree; a real tree is never that deep.
  InodeId cur = dir;
  for (int steps = 0; steps < 1000000; ++steps) {
    if (cur == ancestor) return true;
    if (cur == kRootInode) return false;
    ASSIGN_OR_RETURN(InodeId up, ParentOf(txn, cur));
    if (up == cur) return false;
    cur = up;
  }
  return Status(StatusCode::kCorruption, fmt::format("directory {} has no path to the root", dir));
}

Result<bool> HasEntries(ReadTxn& txn, InodeId dir) {
  ASSIGN_OR_RETURN(std::vector<DirItem> first, txn.ListDir(dir, 0, 1, false));
  return !first.empty();
}

Replica ReplicaOf(const ReplicaRow& row) {
  return Replica{row.node, row.volume, row.chunk, row.version, row.state};
}

ChunkLayout LayoutOf(const ChunkWithReplicas& chunk) {
  ChunkLayout layout{chunk.chunk.index, {}, chunk.chunk.object_version, chunk.chunk.ec};
  layout.replicas.reserve(chunk.replicas.size());
  for (const ReplicaRow& r : chunk.replicas) layout.replicas.push_back(ReplicaOf(r));
  return layout;
}

Result<std::vector<ChunkLayout>> LoadLayouts(ReadTxn& txn, InodeId ino,
                                             const std::vector<uint64_t>& indices) {
  std::vector<ChunkLayout> out;
  out.reserve(indices.size());
  for (uint64_t idx : indices) {
    ASSIGN_OR_RETURN(std::vector<ChunkWithReplicas> chunks, txn.ListChunksOf(ino, idx, idx + 1));
    for (const ChunkWithReplicas& c : chunks) {
      if (!c.replicas.empty()) out.push_back(LayoutOf(c));
    }
  }
  return out;
}

Result<std::vector<ChunkLayout>> LoadLayoutRange(ReadTxn& txn, InodeId ino, uint64_t first, uint64_t end) {
  ASSIGN_OR_RETURN(std::vector<ChunkWithReplicas> chunks, txn.ListChunksOf(ino, first, end));
  std::vector<ChunkLayout> out;
  out.reserve(chunks.size());
  for (const ChunkWithReplicas& c : chunks) {
    if (!c.replicas.empty()) out.push_back(LayoutOf(c));
  }
  return out;
}

Status CheckTargets(ReadTxn& txn, const std::vector<ReplicaTarget>& targets) {
  if (targets.empty()) return Status(StatusCode::kInvalidArgument, "no replica targets");
  // The volume row alone proves both: a volume is registered only by its
  // registered node, and neither row is ever deleted. Only a bad target
  // reads the node, to say which of the two is wrong.
  for (const ReplicaTarget& t : targets) {
    ASSIGN_OR_RETURN(std::optional<VolumeRecord> vol, txn.GetVolume(t.volume));
    if (vol && vol->node == t.node) continue;
    ASSIGN_OR_RETURN(std::optional<NodeRow> node, txn.GetNode(t.node));
    if (!node) return Status(StatusCode::kMetaNoNode, fmt::format("node {}", t.node));
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("volume {} is not a volume of node {}", t.volume, t.node));
  }
  return Status::Ok();
}

Result<HandleId> AddHandle(WriteTxn& txn, SessionId session, InodeId ino, uint32_t flags) {
  ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kHandle));
  RETURN_IF_ERROR(txn.PutHandle(HandleRow{HandleId(id), session, ino, flags}));
  return HandleId(id);
}

Result<ChunkWithReplicas> AddChunk(WriteTxn& txn, InodeId ino, uint64_t index,
                                   const std::vector<ReplicaTarget>& targets, ChunkId wanted) {
  bool inserted = false;
  if (wanted.valid()) {
    ASSIGN_OR_RETURN(inserted, txn.InsertChunkIfFree(ChunkRow{wanted, ino, index}));
  }
  ChunkId chunk = wanted;
  if (!inserted) {
    ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kChunk));
    chunk = ChunkId(id);
  }
  ChunkWithReplicas added{ChunkRow{chunk, ino, index}, {}};
  if (!inserted) RETURN_IF_ERROR(txn.PutChunk(added.chunk));
  added.replicas.reserve(targets.size());
  for (size_t pos = 0; pos < targets.size(); ++pos) {
    added.replicas.push_back(ReplicaRow{chunk, static_cast<uint32_t>(pos), targets[pos].node,
                                        targets[pos].volume, 0, ReplicaState::kHealthy});
    RETURN_IF_ERROR(txn.PutReplica(added.replicas.back()));
  }
  return added;
}

Status RequireSession(ReadTxn& txn, SessionId session) {
  ASSIGN_OR_RETURN(std::optional<SessionRecord> found, txn.GetSession(session));
  if (!found) return Status(StatusCode::kMetaNoSession, fmt::format("session {}", session));
  return Status::Ok();
}

Status RequireSession(ReadTxn& txn, SessionId session, const OpToken& token) {
  if (token.session.valid() && token.session == session) return Status::Ok();
  return RequireSession(txn, session);
}

Status UpdateInode(WriteTxn& txn, InodeId ino, const std::function<void(InodeRow&)>& change) {
  ASSIGN_OR_RETURN(InodeRow row, LoadInode(txn, ino));
  change(row);
  return txn.PutInode(row);
}

Status AddEntry(WriteTxn& txn, InodeRow& parent, std::string_view name, InodeId ino) {
  parent.entry_seq += 1;
  return txn.PutDentry(DentryRow{parent.attr.ino, std::string(name), ino, parent.entry_seq});
}

Status DropLink(WriteTxn& txn, InodeRow file, Timespec now) {
  if (file.attr.nlink > 0) {
    file.attr.nlink -= 1;
    file.attr.ctime = now;
  }
  if (file.attr.nlink == 0) {
    ASSIGN_OR_RETURN(std::vector<HandleRow> handles, txn.ListHandlesOf(file.attr.ino));
    if (handles.empty()) return FreeInode(txn, file.attr);  // no write of a row that goes
  }
  return txn.PutInode(file);
}

Status RemoveDir(WriteTxn& txn, InodeId dir, InodeId parent, Timespec now) {
  // A removed directory is its own parent ("..": itself).
  RETURN_IF_ERROR(UpdateInode(txn, dir, [&](InodeRow& row) {
    row.attr.nlink = 0;
    row.parent = dir;
    row.attr.ctime = now;
  }));
  RETURN_IF_ERROR(UpdateInode(txn, parent, [](InodeRow& row) { row.attr.nlink -= 1; }));
  return FreeIfOrphan(txn, dir);
}

Status FreeIfOrphan(WriteTxn& txn, InodeId ino) {
  ASSIGN_OR_RETURN(std::optional<InodeRow> row, txn.GetInode(ino));
  if (!row || row->attr.nlink != 0) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<HandleRow> handles, txn.ListHandlesOf(ino));
  if (!handles.empty()) return Status::Ok();
  return FreeInode(txn, row->attr);
}

Status FreeInode(WriteTxn& txn, const InodeAttr& attr) {
  // Only regular files have chunks: no lookup for the others.
  if (IsReg(attr.mode)) RETURN_IF_ERROR(DropChunksFrom(txn, attr.ino, 0));
  return txn.DeleteInode(attr.ino);  // its extended attributes too
}

Status DropEcCells(WriteTxn& txn, const ChunkRow& chunk, std::string_view old_text,
                   std::string_view kept_text) {
  if (old_text.empty()) return Status::Ok();
  auto old = ec::ParseStripe(old_text);
  auto kept = ec::ParseStripe(kept_text);
  if (!old.ok() || !kept.ok()) {
    LOG_WARN("chunk {}: {}; its cell files are not collected", chunk.id,
             (old.ok() ? kept.status() : old.status()).ToString());
    return Status::Ok();
  }
  for (uint32_t i = 0; i < old->cells.size(); ++i) {
    const ec::CellPlace& cell = old->cells[i];
    if (cell.node.value() == 0) continue;
    if (i < kept->cells.size() && kept->cells[i].node == cell.node) continue;
    ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kGarbage));
    RETURN_IF_ERROR(txn.PutGarbage(GarbageRow{id, ec::CellChunkId(chunk.id, i), chunk.ino,
                                              chunk.index, cell.node, cell.volume, old->version}));
  }
  return Status::Ok();
}

Status WithdrawGarbage(WriteTxn& txn, ChunkId file, NodeId node) {
  ASSIGN_OR_RETURN(std::vector<GarbageRow> rows, txn.ListGarbageOfChunk(file));
  for (const GarbageRow& g : rows) {
    if (g.node == node) RETURN_IF_ERROR(txn.DeleteGarbage(g.id));
  }
  return Status::Ok();
}

Status DropChunks(WriteTxn& txn, std::vector<ChunkWithReplicas> chunks) {
  std::sort(chunks.begin(), chunks.end(), [](const auto& a, const auto& b) {
    return a.chunk.id.value() < b.chunk.id.value();
  });
  for (const ChunkWithReplicas& c : chunks) {
    for (const ReplicaRow& r : c.replicas) {
      if (r.state == ReplicaState::kOffloaded) continue;  // no file behind it
      ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kGarbage));
      RETURN_IF_ERROR(txn.PutGarbage(
          GarbageRow{id, c.chunk.id, c.chunk.ino, c.chunk.index, r.node, r.volume, r.version}));
    }
    if (c.chunk.object_version != 0) {
      ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kGarbage));
      RETURN_IF_ERROR(
          txn.PutGarbage(GarbageRow{id, c.chunk.id, c.chunk.ino, c.chunk.index, kObjectTierNode,
                                    VolumeId(0), c.chunk.object_version}));
    }
    RETURN_IF_ERROR(DropEcCells(txn, c.chunk, c.chunk.ec, ""));
    RETURN_IF_ERROR(txn.DeleteChunk(c.chunk.id));
  }
  return Status::Ok();
}

Status DropChunksFrom(WriteTxn& txn, InodeId ino, uint64_t first) {
  if (first > kMaxFileSize) return Status::Ok();  // no index can be that large
  ASSIGN_OR_RETURN(std::vector<ChunkWithReplicas> chunks,
                   txn.ListChunksOf(ino, first, std::numeric_limits<uint64_t>::max()));
  return DropChunks(txn, std::move(chunks));
}

Status DropUnwrittenTail(WriteTxn& txn, InodeId ino) {
  ASSIGN_OR_RETURN(std::optional<InodeRow> row, txn.GetInode(ino));
  if (!row) return Status::Ok();  // nothing of it is left
  // Chunks wholly past the end of which no replica ever took a write
  // (version 0).
  const uint64_t first = ChunksCovering(row->attr.size, row->attr.chunk_size);
  if (row->attr.chunk_size == 0 || first > kMaxFileSize) return Status::Ok();
  ASSIGN_OR_RETURN(std::vector<ChunkWithReplicas> chunks,
                   txn.ListChunksOf(ino, first, std::numeric_limits<uint64_t>::max()));
  std::erase_if(chunks, [](const ChunkWithReplicas& c) {
    return std::any_of(c.replicas.begin(), c.replicas.end(),
                       [](const ReplicaRow& r) { return r.version > 0; });
  });
  return DropChunks(txn, std::move(chunks));
}

Status Truncate(WriteTxn& txn, InodeRow& file, uint64_t new_size, Timespec now,
                uint64_t keep_chunks) {
  if (new_size > kMaxFileSize) {
    return Status(StatusCode::kFileTooBig, fmt::format("size {}", new_size));
  }
  RETURN_IF_ERROR(DropChunksFrom(
      txn, file.attr.ino,
      ChunksKeptByTruncate(file.attr.size, new_size, file.attr.chunk_size, keep_chunks)));
  file.attr.size = new_size;
  file.attr.mtime = now;
  file.attr.ctime = now;
  return Status::Ok();
}

Status CloseSession(WriteTxn& txn, SessionId session) {
  ASSIGN_OR_RETURN(std::vector<HandleRow> handles, txn.ListHandlesOfSession(session));
  std::vector<InodeId> inodes;
  for (const HandleRow& h : handles) {
    RETURN_IF_ERROR(txn.DeleteHandle(h.id));
    if (std::find(inodes.begin(), inodes.end(), h.ino) == inodes.end()) inodes.push_back(h.ino);
  }
  for (InodeId ino : inodes) RETURN_IF_ERROR(FreeIfOrphan(txn, ino));
  RETURN_IF_ERROR(txn.DeleteReplaysOf(session));
  return txn.DeleteSession(session);
}

}  // namespace t0fs::meta::internal
