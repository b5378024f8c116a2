// Objectives and replication: what the repair planner reads and changes, and
// the administrative state of nodes.
#include <fcntl.h>
#include <fmt/format.h>

#include <algorithm>
#include <deque>
#include <map>
#include <sstream>
#include <tuple>
#include <utility>

#include "common/secret.h"
#include "ec/cells.h"
#include "meta/store/posix_store.h"
#include "meta/store/store_util.h"

namespace t0fs::meta {

namespace {

Objective ObjectiveOf(const InodeAttr& attr) {
  Objective out;
  out.replicas = attr.replicas;
  out.placement = attr.placement;
  out.nodes = attr.placement_nodes;
  out.chunk_size = attr.chunk_size;
  out.protect = attr.protect;
  return out;
}

bool Writes(const HandleRow& h) {
  return (h.flags & O_ACCMODE) != O_RDONLY;
}

// The keep-newest rules (Objective::keep_newest): a property of lines
// "DIR N", one per directory that has one.
constexpr std::string_view kKeepNewestKey = "keep_newest";

std::map<InodeId, uint32_t> ParseKeepNewest(const std::optional<std::string>& text) {
  std::map<InodeId, uint32_t> rules;
  if (!text) return rules;
  std::istringstream in(*text);
  uint64_t dir = 0;
  uint32_t n = 0;
  while (in >> dir >> n) {
    if (dir != 0 && n != 0) rules[InodeId(dir)] = n;
  }
  return rules;
}

std::string FormatKeepNewest(const std::map<InodeId, uint32_t>& rules) {
  std::string out;
  for (const auto& [dir, n] : rules) out += fmt::format("{} {}\n", dir.value(), n);
  return out;
}

Result<uint32_t> KeepNewestOf(ReadTxn& txn, InodeId ino) {
  ASSIGN_OR_RETURN(std::optional<std::string> text, txn.GetProperty(kKeepNewestKey));
  const std::map<InodeId, uint32_t> rules = ParseKeepNewest(text);
  auto it = rules.find(ino);
  return it == rules.end() ? 0 : it->second;
}

}  // namespace

Result<Objective> PosixStore::GetObjective(InodeId ino) {
  Objective out;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, ino));
    out = ObjectiveOf(row.attr);
    if (internal::IsDir(row.attr.mode)) {
      ASSIGN_OR_RETURN(out.keep_newest, KeepNewestOf(txn, ino));
    }
    return Status::Ok();
  }));
  return out;
}

Result<uint64_t> PosixStore::SetObjective(InodeId ino, const Objective& objective,
                                          bool recursive) {
  // The acceptable range is policy (meta/policy.h); the store only refuses
  // what no file can have: no copy at all.
  if (objective.replicas == 0) {
    return Status(StatusCode::kInvalidArgument, "an objective needs at least one replica");
  }
  // Writes the objective to one inode; true when it is a directory.
  auto apply = [&](WriteTxn& txn, InodeId cur) -> Result<bool> {
    ASSIGN_OR_RETURN(InodeRow row, internal::LoadInode(txn, cur));
    const bool dir = internal::IsDir(row.attr.mode);
    row.attr.replicas = objective.replicas;
    row.attr.placement = objective.placement;
    row.attr.placement_nodes = objective.nodes;
    row.attr.protect = objective.protect;
    // Files keep their chunk size; directories record it for new files.
    if (dir) row.attr.chunk_size = objective.chunk_size;
    RETURN_IF_ERROR(txn.PutInode(row));
    return dir;
  };

  uint64_t changed = 0;
  // Directories whose entries are still to be visited, breadth-first; the
  // first one is visited from after entry seq `after`.
  std::deque<InodeId> dirs;
  uint64_t after = 0;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(bool dir, apply(txn, ino));
    if (!dir && objective.keep_newest != 0) {
      return Status(
          StatusCode::kInvalidArgument,
          fmt::format("keep-newest applies to a directory's entries; inode {} is not a directory",
                      ino));
    }
    if (dir) {
      ASSIGN_OR_RETURN(std::optional<std::string> text, txn.GetProperty(kKeepNewestKey));
      std::map<InodeId, uint32_t> rules = ParseKeepNewest(text);
      const uint32_t had = rules.count(ino) != 0 ? rules[ino] : 0;
      if (had != objective.keep_newest) {
        if (objective.keep_newest == 0) {
          rules.erase(ino);
        } else {
          rules[ino] = objective.keep_newest;
        }
        RETURN_IF_ERROR(txn.PutProperty(kKeepNewestKey, FormatKeepNewest(rules)));
      }
    }
    changed = 1;
    dirs.clear();
    if (dir && recursive) dirs.push_back(ino);
    return Status::Ok();
  }));
  // The tree below, in transactions of at most opts_.objective_batch inodes
  // each (directories have one parent, so each inode is visited once;
  // a hard-linked file may be visited twice, which is harmless). A batch
  // retried after a conflict starts again from where the last committed one
  // ended.
  const size_t batch = std::max<size_t>(opts_.objective_batch, 1);
  while (!dirs.empty()) {
    std::deque<InodeId> todo;
    uint64_t todo_after = 0;
    uint64_t todo_changed = 0;
    RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
      todo = dirs;
      todo_after = after;
      todo_changed = changed;
      size_t budget = batch;
      while (budget > 0 && !todo.empty()) {
        const InodeId dir = todo.front();
        ASSIGN_OR_RETURN(std::vector<DirItem> page, txn.ListDir(dir, todo_after, budget, false));
        for (const DirItem& item : page) {
          ASSIGN_OR_RETURN(bool child_dir, apply(txn, item.dentry.ino));
          ++todo_changed;
          if (child_dir) todo.push_back(item.dentry.ino);
          todo_after = item.dentry.seq;
        }
        budget -= page.size();
        if (budget > 0) {  // the page was short: `dir` is done
          todo.pop_front();
          todo_after = 0;
        }
      }
      return Status::Ok();
    }));
    dirs = std::move(todo);
    after = todo_after;
    changed = todo_changed;
  }
  return changed;
}

Result<std::vector<InodeId>> PosixStore::KeptNewest(size_t max, bool* truncated) {
  std::vector<InodeId> kept;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    kept.clear();
    *truncated = false;
    ASSIGN_OR_RETURN(std::optional<std::string> text, txn.GetProperty(kKeepNewestKey));
    constexpr size_t kPage = 1024;
    for (const auto& [dir, n] : ParseKeepNewest(text)) {
      ASSIGN_OR_RETURN(std::optional<InodeRow> row, txn.GetInode(dir));
      if (!row || !internal::IsDir(row->attr.mode)) continue;  // removed since
      // Its entries by age: (mtime, seq), the newest last.
      struct Entry {
        Timespec mtime;
        uint64_t seq = 0;
        InodeId ino;
        bool dir = false;
      };
      std::vector<Entry> entries;
      for (uint64_t after = 0;;) {
        ASSIGN_OR_RETURN(std::vector<DirItem> page, txn.ListDir(dir, after, kPage, true));
        for (const DirItem& item : page) {
          after = item.dentry.seq;
          if (!item.inode) continue;
          entries.push_back({item.inode->attr.mtime, item.dentry.seq, item.dentry.ino,
                             internal::IsDir(item.inode->attr.mode)});
        }
        if (page.size() < kPage) break;
      }
      std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
        return std::tie(a.mtime.sec, a.mtime.nsec, a.seq) <
               std::tie(b.mtime.sec, b.mtime.nsec, b.seq);
      });
      const size_t first = entries.size() > n ? entries.size() - n : 0;
      // The newest entries, and everything below the directories among them.
      std::deque<InodeId> walk;
      for (size_t i = first; i < entries.size(); ++i) {
        if (entries[i].dir) {
          walk.push_back(entries[i].ino);
        } else {
          kept.push_back(entries[i].ino);
        }
      }
      while (!walk.empty() && kept.size() < max) {
        const InodeId below = walk.front();
        walk.pop_front();
        for (uint64_t after = 0;;) {
          ASSIGN_OR_RETURN(std::vector<DirItem> page, txn.ListDir(below, after, kPage, true));
          for (const DirItem& item : page) {
            after = item.dentry.seq;
            if (!item.inode) continue;
            if (internal::IsDir(item.inode->attr.mode)) {
              walk.push_back(item.dentry.ino);
            } else {
              kept.push_back(item.dentry.ino);
            }
          }
          if (page.size() < kPage || kept.size() >= max) break;
        }
      }
      if (kept.size() >= max) {
        *truncated = true;
        kept.resize(max);
        return Status::Ok();
      }
    }
    return Status::Ok();
  }));
  return kept;
}

Result<std::vector<ChunkReplicas>> PosixStore::ScanReplicas(ChunkId after, size_t max, bool* eof) {
  if (max == 0) return Status(StatusCode::kInvalidArgument, "max must be positive");
  std::vector<ChunkReplicas> out;
  bool at_end = true;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    out.clear();
    // As a join: a chunk without replicas or without its inode (a damaged
    // store, reported by Check) is not listed; the scan goes on past it.
    ChunkId cursor = after;
    std::optional<InodeRow> file;  // the file of the previous chunk
    // Whether it has a write handle, or any handle (asked only with a
    // protection goal).
    bool writer_open = false, open = false;
    for (;;) {
      // One chunk more than fits, to know whether the scan is complete.
      const size_t want = max - out.size() + 1;
      ASSIGN_OR_RETURN(std::vector<ChunkWithReplicas> chunks, txn.ScanChunks(cursor, want));
      for (const ChunkWithReplicas& c : chunks) {
        if (out.size() == max) {
          at_end = false;
          return Status::Ok();
        }
        cursor = c.chunk.id;
        if (c.replicas.empty()) continue;
        // Consecutive chunks mostly belong to one file: read it once.
        if (!file || file->attr.ino != c.chunk.ino) {
          ASSIGN_OR_RETURN(file, txn.GetInode(c.chunk.ino));
          writer_open = open = false;
          if (file && file->attr.protect.kind != ProtectKind::kNone) {
            ASSIGN_OR_RETURN(std::vector<HandleRow> handles, txn.ListHandlesOf(c.chunk.ino));
            writer_open = std::any_of(handles.begin(), handles.end(), Writes);
            open = !handles.empty();
          }
        }
        if (!file) continue;
        ChunkReplicas r;
        r.chunk = c.chunk.id;
        r.ino = c.chunk.ino;
        r.index = c.chunk.index;
        r.chunk_size = file->attr.chunk_size;
        r.objective = ObjectiveOf(file->attr);
        r.file_size = file->attr.size;
        r.ctime = file->attr.ctime;
        r.atime = file->attr.atime;
        r.writer_open = writer_open;
        r.open = open;
        r.object_version = c.chunk.object_version;
        r.ec = c.chunk.ec;
        for (const ReplicaRow& row : c.replicas) r.replicas.push_back(internal::ReplicaOf(row));
        out.push_back(std::move(r));
      }
      if (chunks.size() < want) {
        at_end = true;
        return Status::Ok();
      }
    }
  }));
  *eof = at_end;
  return out;
}

namespace {

// The replica row of `chunk` on `node` (kNotFound when there is none).
Result<ReplicaRow> ReplicaOn(ReadTxn& txn, ChunkId chunk, NodeId node) {
  ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
  if (c) {
    for (const ReplicaRow& r : c->replicas) {
      if (r.node == node) return r;
    }
  }
  return Status(StatusCode::kNotFound, fmt::format("no replica of chunk {} on node {}", chunk, node));
}

}  // namespace

Status PosixStore::SetReplicaState(ChunkId chunk, NodeId node, ReplicaState state) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(ReplicaRow r, ReplicaOn(txn, chunk, node));
    if (r.state == ReplicaState::kOffloaded && state == ReplicaState::kStale) return Status::Ok();
    r.state = state;
    return txn.PutReplica(r);
  });
}

Status PosixStore::ReportReplicaStale(ChunkId chunk, NodeId node, uint64_t seen_version) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(ReplicaRow r, ReplicaOn(txn, chunk, node));
    if (r.state == ReplicaState::kOffloaded || r.state == ReplicaState::kStale) return Status::Ok();
    if (r.version < seen_version) {
      return Status(StatusCode::kStale,
                    fmt::format("chunk {} on node {} is at version {} here, the report expected {}",
                                chunk, node, r.version, seen_version));
    }
    r.state = ReplicaState::kStale;
    return txn.PutReplica(r);
  });
}

Status PosixStore::AddPendingReplica(ChunkId chunk, NodeId node, VolumeId volume) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
    if (!c) return Status(StatusCode::kNotFound, fmt::format("chunk {}", chunk));
    ASSIGN_OR_RETURN(std::optional<VolumeRecord> vol, txn.GetVolume(volume));
    if (!vol || vol->node != node) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("volume {} is not on node {}", volume, node));
    }
    RETURN_IF_ERROR(internal::WithdrawGarbage(txn, chunk, node));
    uint32_t next_pos = 0;
    for (ReplicaRow r : c->replicas) {
      if (r.node == node) {
        // The node's copy is stale or corrupt: it is overwritten in place.
        r.state = ReplicaState::kPending;
        r.volume = volume;
        return txn.PutReplica(r);
      }
      next_pos = std::max(next_pos, r.pos + 1);
    }
    return txn.PutReplica(ReplicaRow{chunk, next_pos, node, volume, 0, ReplicaState::kPending});
  });
}

Status PosixStore::CompleteReplica(ChunkId chunk, NodeId node, uint64_t version) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
    std::optional<ReplicaRow> mine;
    uint64_t committed = 0;
    for (const ReplicaRow& r : c ? c->replicas : std::vector<ReplicaRow>{}) {
      if (r.node == node) {
        mine = r;
      } else if (r.state == ReplicaState::kHealthy) {
        committed = std::max(committed, r.version);
      }
    }
    if (!mine) {
      return Status(StatusCode::kNotFound,
                    fmt::format("no replica of chunk {} on node {}", chunk, node));
    }
    if (committed > version) {
      return Status(StatusCode::kStale,
                    fmt::format("chunk {} moved to version {} during the copy (copied {})", chunk,
                                committed, version));
    }
    mine->state = ReplicaState::kHealthy;
    mine->version = version;
    return txn.PutReplica(*mine);
  });
}

Status PosixStore::DropReplica(ChunkId chunk, NodeId node, bool unless_writer) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
    if (!c) return Status::Ok();
    if (unless_writer) {
      ASSIGN_OR_RETURN(std::vector<HandleRow> handles, txn.ListHandlesOf(c->chunk.ino));
      if (std::any_of(handles.begin(), handles.end(), Writes)) {
        return Status(StatusCode::kBusy,
                      fmt::format("file inode {} is open for writing", c->chunk.ino));
      }
    }
    for (const ReplicaRow& r : c->replicas) {
      if (r.node != node) continue;
      if (r.state != ReplicaState::kOffloaded) {  // an offloaded one's file went already
        ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kGarbage));
        RETURN_IF_ERROR(txn.PutGarbage(
            GarbageRow{id, chunk, c->chunk.ino, c->chunk.index, r.node, r.volume, r.version}));
      }
      RETURN_IF_ERROR(txn.DeleteReplica(chunk, r.pos));
    }
    return Status::Ok();
  });
}

Status PosixStore::OffloadReplica(ChunkId chunk, NodeId node, uint64_t version) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
    if (!c) return Status(StatusCode::kStale, fmt::format("chunk {} is gone", chunk));
    // Not while the file is open at all: a mount whose kernel reads it
    // from this very chunk file (passthrough) would let a later writer
    // join that file once it is gone from the layout.
    ASSIGN_OR_RETURN(std::vector<HandleRow> handles, txn.ListHandlesOf(c->chunk.ino));
    if (!handles.empty()) {
      return Status(StatusCode::kBusy, fmt::format("file inode {} is open", c->chunk.ino));
    }
    uint64_t committed = 0;  // the chunk's version now: the one the tier must hold
    for (const ReplicaRow& r : c->replicas) {
      if (r.state == ReplicaState::kHealthy || r.state == ReplicaState::kOffloaded) {
        committed = std::max(committed, r.version);
      }
    }
    if (committed != version) {
      return Status(StatusCode::kStale,
                    fmt::format("chunk {} is at version {}, not {}", chunk, committed, version));
    }
    bool held = version != 0 && c->chunk.object_version == version;
    if (!held && !c->chunk.ec.empty()) {
      auto stripe = ec::ParseStripe(c->chunk.ec);
      held = stripe.ok() && stripe->version == version && stripe->placed() == stripe->cells.size();
    }
    if (!held) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("neither the object tier nor erasure-coded cells hold version {} "
                                "of chunk {}",
                                version, chunk));
    }
    for (ReplicaRow r : c->replicas) {
      if (r.node != node) continue;
      if (r.state != ReplicaState::kHealthy || r.version != version) break;
      ASSIGN_OR_RETURN(uint64_t id, txn.NextId(Counter::kGarbage));
      RETURN_IF_ERROR(txn.PutGarbage(
          GarbageRow{id, chunk, c->chunk.ino, c->chunk.index, r.node, r.volume, r.version}));
      r.state = ReplicaState::kOffloaded;
      return txn.PutReplica(r);
    }
    return Status(StatusCode::kStale, fmt::format("chunk {} has no healthy replica at version {} "
                                                  "on node {}",
                                                  chunk, version, node));
  });
}

Status PosixStore::SetObjectVersion(ChunkId chunk, uint64_t version) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
    GarbageRow gone{0, chunk, InodeId(0), 0, kObjectTierNode, VolumeId(0), version};
    if (c) {
      gone.ino = c->chunk.ino;
      gone.index = c->chunk.index;
      if (version == c->chunk.object_version) return Status::Ok();
      if (version > c->chunk.object_version) {
        std::swap(gone.version, c->chunk.object_version);
        RETURN_IF_ERROR(txn.PutChunk(c->chunk));
      }
    }
    if (gone.version == 0) return Status::Ok();
    ASSIGN_OR_RETURN(gone.id, txn.NextId(Counter::kGarbage));
    return txn.PutGarbage(gone);
  });
}

Status PosixStore::RecordEcCells(ChunkId chunk, const ec::EcStripe& made, bool ok) {
  const std::string made_text = ec::FormatStripe(made);
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
    if (!c) {
      // The chunk is gone: every cell written for it is garbage.
      ChunkRow gone;
      gone.id = chunk;
      return internal::DropEcCells(txn, gone, made_text, "");
    }
    ChunkRow& row = c->chunk;
    if (!ok) return internal::DropEcCells(txn, row, made_text, row.ec);
    ASSIGN_OR_RETURN(ec::EcStripe stripe, ec::ParseStripe(row.ec));
    if (stripe.k != made.k || stripe.m != made.m || stripe.unit != made.unit ||
        stripe.version != made.version || stripe.cells.size() != made.cells.size()) {
      stripe = made;  // another code or version: the recorded cells are dropped
    } else {
      for (size_t i = 0; i < made.cells.size(); ++i) {
        if (made.cells[i].node.value() != 0) stripe.cells[i] = made.cells[i];
      }
      stripe.length = made.length;
    }
    std::string text = ec::FormatStripe(stripe);
    RETURN_IF_ERROR(internal::DropEcCells(txn, row, row.ec, text));
    row.ec = std::move(text);
    return txn.PutChunk(row);
  });
}

Status PosixStore::ClearEcCells(ChunkId chunk) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
    if (!c || c->chunk.ec.empty()) return Status::Ok();
    RETURN_IF_ERROR(internal::DropEcCells(txn, c->chunk, c->chunk.ec, ""));
    c->chunk.ec.clear();
    return txn.PutChunk(c->chunk);
  });
}

Status PosixStore::WithdrawEcGarbage(ChunkId chunk, const ec::EcStripe& made) {
  return Write([&](WriteTxn& txn) -> Status {
    for (uint32_t cell = 0; cell < made.cells.size(); ++cell) {
      if (made.cells[cell].node.value() == 0) continue;
      RETURN_IF_ERROR(
          internal::WithdrawGarbage(txn, ec::CellChunkId(chunk, cell), made.cells[cell].node));
    }
    return Status::Ok();
  });
}

Status PosixStore::DropEcCell(ChunkId chunk, uint32_t cell, NodeId node, uint64_t version) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<ChunkWithReplicas> c, txn.GetChunk(chunk));
    if (!c) return Status::Ok();
    ChunkRow& row = c->chunk;
    ASSIGN_OR_RETURN(ec::EcStripe stripe, ec::ParseStripe(row.ec));
    if (cell >= stripe.cells.size() || stripe.cells[cell].node != node ||
        (version != 0 && stripe.version != version)) {
      return Status::Ok();
    }
    stripe.cells[cell] = ec::CellPlace{};
    std::string text = ec::FormatStripe(stripe);
    RETURN_IF_ERROR(internal::DropEcCells(txn, row, row.ec, text));
    row.ec = std::move(text);
    return txn.PutChunk(row);
  });
}

Status PosixStore::SetNodeAdminState(NodeId node, NodeAdminState state) {
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<NodeRow> row, txn.GetNode(node));
    if (!row) return Status(StatusCode::kMetaNoNode, fmt::format("node {}", node));
    row->admin_state = state;
    return txn.PutNode(*row);
  });
}

Result<std::string> PosixStore::CapabilityKey() {
  constexpr std::string_view kKey = "capability_key";
  std::string key;
  RETURN_IF_ERROR(Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<std::string> found, txn.GetProperty(kKey));
    if (found) {
      key = std::move(*found);
      return Status::Ok();
    }
    key = HexEncode(RandomBytes(32));
    return txn.PutProperty(kKey, key);
  }));
  return key;
}

Status PosixStore::ClaimSecret(std::string_view fingerprint) {
  constexpr std::string_view kKey = "secret_fingerprint";
  return Write([&](WriteTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::optional<std::string> found, txn.GetProperty(kKey));
    if (!found) return txn.PutProperty(kKey, fingerprint);
    if (*found == fingerprint) return Status::Ok();
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("the store holds the metadata of cluster {}, which has another "
                              "secret: give that cluster's secret file, or a store of this cluster",
                              cluster_id()));
  });
}

Result<bool> PosixStore::HasWriteHandle(SessionId session, InodeId ino) {
  bool found = false;
  RETURN_IF_ERROR(Read([&](ReadTxn& txn) -> Status {
    ASSIGN_OR_RETURN(std::vector<HandleRow> handles, txn.ListHandlesOf(ino));
    found = std::any_of(handles.begin(), handles.end(), [&](const HandleRow& h) {
      return h.session == session && internal::OpensForWrite(h.flags);
    });
    return Status::Ok();
  }));
  return found;
}

}  // namespace t0fs::meta
