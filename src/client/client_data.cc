// The data path of ClientImpl: layouts and capabilities, replica choice,
// replicated writes, failover reads, commits and truncation.
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "client/client_impl.h"
#include "common/logging.h"
#include "rpc/channel.h"

namespace t0fs::client {
namespace {

// Chunks fetched per GetLayout when a read reaches an unknown index.
constexpr uint64_t kLayoutFetch = 256;
// A capability this close to expiry is refreshed before use.
constexpr uint64_t kCapMarginMs = 30000;

bool Damaged(StatusCode code) {
  return code == StatusCode::kDataChecksum || code == StatusCode::kCorruption || code == StatusCode::kStale ||
         code == StatusCode::kDataNoChunk;
}

}  // namespace

void ClientImpl::MergeLayout(InodeState& st, const std::vector<CachedChunk>& layout, uint64_t first,
                             uint64_t count) {
  std::lock_guard lock(st.mu);
  for (CachedChunk fresh : layout) {
    auto it = st.layout.find(fresh.info.index);
    if (it != st.layout.end()) {
      // Keep the versions this session wrote with: meta's are older only
      // until our commit.
      for (ReplicaInfo& r : fresh.info.replicas) {
        for (const ReplicaInfo& old : it->second.info.replicas) {
          if (old.node == r.node && old.chunk == r.chunk) r.version = std::max(r.version, old.version);
        }
      }
    }
    st.layout[fresh.info.index] = std::move(fresh);
  }
  if (first <= st.layout_known_below) st.layout_known_below = std::max(st.layout_known_below, first + count);
}

Status ClientImpl::FetchLayout(InodeState& st, uint64_t first, uint64_t count) {
  bool write;
  {
    std::lock_guard lock(st.mu);
    write = st.writable;
  }
  ASSIGN_OR_RETURN(std::vector<CachedChunk> layout, meta_.GetLayout(st.ino, first, count, write));
  MergeLayout(st, layout, first, count);
  return Status::Ok();
}

Result<std::optional<CachedChunk>> ClientImpl::ChunkFor(InodeState& st, uint64_t index) {
  for (int round = 0; round < 2; ++round) {
    {
      std::lock_guard lock(st.mu);
      auto it = st.layout.find(index);
      if (it != st.layout.end()) {
        // A read-only open's layout may have brought read-only capabilities
        // into an inode that Files also write: those are fetched again.
        const bool rights = !st.writable || (it->second.cap.rights & kCapWrite) != 0;
        if (rights && it->second.cap.expiry_ms > WallMillis() + kCapMarginMs) return std::optional(it->second);
      } else if (index < st.layout_known_below) {
        return std::optional<CachedChunk>();
      }
    }
    if (round == 1) break;
    RETURN_IF_ERROR(FetchLayout(st, index, kLayoutFetch));
  }
  std::lock_guard lock(st.mu);
  auto it = st.layout.find(index);
  if (it == st.layout.end()) return std::optional<CachedChunk>();
  return std::optional(it->second);
}

Result<CachedChunk> ClientImpl::AllocateChunk(InodeState& st, uint64_t index, bool streaming) {
  ASSIGN_OR_RETURN(std::optional<CachedChunk> known, ChunkFor(st, index));
  if (known) return *known;
  std::vector<uint64_t> indices;
  {
    // A writer that runs off the end of a chunk is streaming: allocate the
    // next few chunks in the same call. A small write allocates only its own.
    std::lock_guard lock(st.mu);
    uint64_t count = streaming ? std::max<uint32_t>(1, options_.allocate_ahead) : 1;
    for (uint64_t ahead = 0; ahead < count; ++ahead) {
      if (ahead == 0 || st.layout.count(index + ahead) == 0) indices.push_back(index + ahead);
    }
  }
  ASSIGN_OR_RETURN(std::vector<CachedChunk> allocated, meta_.Allocate(st.ino, indices));
  std::lock_guard lock(st.mu);
  for (const CachedChunk& fresh : allocated) {
    auto [it, inserted] = st.layout.emplace(fresh.info.index, fresh);
    if (!inserted) it->second.cap = fresh.cap;  // keep replicas and versions we had; take the new rights
  }
  auto it = st.layout.find(index);
  if (it == st.layout.end() || it->second.info.replicas.empty()) {
    return Status(StatusCode::kInternal, fmt::format("meta did not allocate chunk {} of inode {}", index, st.ino));
  }
  return it->second;
}

bool ClientImpl::IsLocal(const ReplicaInfo& r) const {
  return options_.local_bypass && r.node.valid() && r.node == meta_.local_node();
}

Result<std::shared_ptr<ChunkFile>> ClientImpl::LocalFile(InodeState& st, const ReplicaInfo& r,
                                                         const Capability& cap, bool for_write, bool direct,
                                                         bool retry) {
  auto key = std::make_pair(r.chunk.value(), direct);
  {
    std::lock_guard lock(st.mu);
    auto it = st.local_files.find(key);
    // A known hole is trusted only while the layout says the chunk was never
    // written (version 0): a writer (another File, or an earlier state of
    // this inode) may have created the file since.
    const bool usable = it != st.local_files.end() && (it->second.writable || !for_write) &&
                        (it->second.file || (!for_write && r.version == 0));
    if (usable) return it->second.file;  // may be null: a known hole
  }
  auto opened = data_.OpenLocal(r, cap, /*create=*/for_write, /*writable=*/for_write, direct, retry);
  std::shared_ptr<ChunkFile> file;
  if (opened.ok()) {
    file = std::move(opened).value();
  } else if (opened.status().code() != StatusCode::kDataNoChunk || for_write) {
    return opened.status();
  }
  std::lock_guard lock(st.mu);
  st.local_files[key] = InodeState::LocalFile{file, for_write};
  if (for_write) {
    // The other access mode's "known hole" is not one any more.
    auto other = st.local_files.find(std::make_pair(r.chunk.value(), !direct));
    if (other != st.local_files.end() && !other->second.file) st.local_files.erase(other);
  }
  return file;
}

void ClientImpl::ReportReplica(const ReplicaInfo& r, ReplicaProblem problem, const Status& why) {
  LOG_WARN("chunk {} on node {}: {}; reading another replica{}", r.chunk, r.node, why.ToString(),
           problem != ReplicaProblem::kUnreachable ? " and reporting this one for repair" : "");
  if (problem == ReplicaProblem::kUnreachable) return;  // meta learns that from heartbeats
  Status st = meta_.ReportReplica(r, problem, why);
  if (!st.ok()) LOG_WARN("reporting chunk {} on node {}: {}", r.chunk, r.node, st.ToString());
}

Result<size_t> ClientImpl::ReadReplica(InodeState& st, const ReplicaInfo& r, const Capability& cap,
                                       uint64_t offset, std::span<std::byte> buf, bool direct, bool last_resort) {
  if (IsLocal(r)) {
    ASSIGN_OR_RETURN(std::shared_ptr<ChunkFile> file, LocalFile(st, r, cap, false, direct, last_resort));
    if (!file) {
      if (r.version == 0) return size_t{0};  // never written: a hole
      return Status(StatusCode::kDataNoChunk, fmt::format("chunk {} at version {} has no local file", r.chunk,
                                                          r.version));
    }
    if (file->version() < r.version) RETURN_IF_ERROR(file->ReadHeader());
    if (file->version() < r.version) {
      return Status(StatusCode::kStale, fmt::format("local chunk {} is at version {}, committed {}", r.chunk,
                                                    file->version(), r.version));
    }
    ASSIGN_OR_RETURN(size_t n, file->Read(offset, buf));
    counters_.local_reads++;
    counters_.local_read_bytes += n;
    return n;
  }
  ASSIGN_OR_RETURN(size_t n, data_.Read(r, cap, offset, buf, /*retry=*/last_resort, direct));
  counters_.remote_reads++;
  counters_.remote_read_bytes += n;
  return n;
}

Result<size_t> ClientImpl::ReadPiece(InodeState& st, uint64_t index, uint64_t offset_in_chunk,
                                     std::span<std::byte> buf, bool direct) {
  ASSIGN_OR_RETURN(std::optional<CachedChunk> chunk, ChunkFor(st, index));
  if (!chunk) return size_t{0};  // unallocated: a hole
  std::vector<ReplicaInfo> order;
  for (const ReplicaInfo& r : chunk->info.replicas) {
    if (Healthy(r)) order.push_back(r);
  }
  if (order.empty()) {
    return Status(StatusCode::kIoError, fmt::format("chunk {} of inode {} has no healthy replica", index, st.ino));
  }
  // The local replica first (drive speed, no network), then the least busy;
  // nodes that just failed a request last (DataClient::Suspect).
  std::stable_sort(order.begin(), order.end(), [&](const ReplicaInfo& a, const ReplicaInfo& b) {
    const bool sa = data_.Suspect(a.node), sb = data_.Suspect(b.node);
    if (sa != sb) return sb;
    if (IsLocal(a) != IsLocal(b)) return IsLocal(a);
    return data_.Load(a.node) < data_.Load(b.node);
  });
  Status last;
  bool refreshed = false;
  for (size_t idx = 0; idx < order.size(); ++idx) {
    const ReplicaInfo& r = order[idx];
    bool last_resort = idx + 1 == order.size();
    Result<size_t> n = ReadReplica(st, r, chunk->cap, offset_in_chunk, buf, direct, last_resort);
    if (n.status().code() == StatusCode::kDataCapabilityExpired && !refreshed) {
      refreshed = true;
      RETURN_IF_ERROR(FetchLayout(st, index, 1));
      ASSIGN_OR_RETURN(chunk, ChunkFor(st, index));
      if (!chunk) return size_t{0};
      n = ReadReplica(st, r, chunk->cap, offset_in_chunk, buf, direct, last_resort);
    }
    if (n.ok()) {
      if (idx > 0) counters_.replica_failovers++;
      data_.Reachable(r.node);
      return n;
    }
    last = n.status();
    if (rpc::IsTransportError(last.code())) data_.Unreachable(r.node);
    if (last.code() == StatusCode::kDataChecksum) counters_.checksum_errors++;
    if (order.size() == 1) break;
    if (Damaged(last.code())) {
      ReportReplica(r, last.code() == StatusCode::kDataChecksum ? ReplicaProblem::kChecksum : ReplicaProblem::kStale,
                    last);
    } else if (rpc::IsTransportError(last.code())) {
      ReportReplica(r, ReplicaProblem::kUnreachable, last);
    } else {
      break;  // e.g. a permission or argument error: another replica would say the same
    }
  }
  if (last.code() == StatusCode::kDataChecksum) {
    LOG_ERROR("inode {} chunk #{}: {}", st.ino, index, last.ToString());
  }
  return last;
}

Status ClientImpl::WritePiece(InodeState& st, const CachedChunk& chunk, uint64_t offset_in_chunk,
                              std::span<const std::byte> data, uint64_t version, bool direct) {
  const ChunkId chunk_id = chunk.info.replicas.front().chunk;
  // The replicas this session writes: the healthy ones at its first write,
  // minus any that failed since.
  std::vector<ReplicaInfo> targets;
  {
    std::lock_guard lock(st.mu);
    auto it = st.written_nodes.find(chunk_id);
    const bool restricted = it != st.written_nodes.end() && !it->second.empty();
    for (const ReplicaInfo& r : chunk.info.replicas) {
      if (!Healthy(r)) continue;
      if (restricted && std::find(it->second.begin(), it->second.end(), r.node) == it->second.end()) continue;
      targets.push_back(r);
    }
  }
  if (targets.empty()) {
    return Status(StatusCode::kIoError, fmt::format("chunk {} of inode {}: no replica can take writes", chunk_id, st.ino));
  }
  std::vector<ReplicaInfo> remote;
  const ReplicaInfo* local = nullptr;
  for (const ReplicaInfo& r : targets) {
    if (IsLocal(r)) {
      local = &r;
    } else {
      remote.push_back(r);
    }
  }
  Status local_status;
  auto write_local = [&] {
    if (local == nullptr) return;
    auto file = LocalFile(st, *local, chunk.cap, true, direct, /*retry=*/targets.size() == 1);
    local_status = file.ok() ? (*file)->Write(offset_in_chunk, data, version) : file.status();
    if (local_status.ok()) counters_.local_write_bytes += data.size();
  };
  std::vector<Status> remote_status;
  if (targets.size() == 1 && local == nullptr) {
    // One replica: nobody to fail over to, so ride out a restart.
    remote_status.push_back(data_.Write(remote.front(), chunk.cap, offset_in_chunk, data, version, /*retry=*/true));
  } else if (remote.empty()) {
    write_local();  // the only replica is this node's: no network at all
  } else {
    // Sends to the remote replicas, writes the local one meanwhile, then waits.
    remote_status = data_.WriteMany(remote, chunk.cap, offset_in_chunk, data, version, write_local);
  }
  std::vector<NodeId> took;
  Status first_error;
  auto account = [&](const ReplicaInfo& r, const Status& s) {
    if (s.ok()) {
      took.push_back(r.node);
      return;
    }
    if (first_error.ok()) first_error = s;
    if (targets.size() > 1) {
      counters_.replica_write_failures++;
      LOG_WARN("chunk {} on node {} missed a write ({}); it will be repaired", r.chunk, r.node, s.ToString());
    }
  };
  if (local != nullptr) account(*local, local_status);
  for (size_t idx = 0; idx < remote.size(); ++idx) {
    if (remote_status[idx].ok()) counters_.remote_write_bytes += data.size();
    account(remote[idx], remote_status[idx]);
  }
  if (took.empty()) return first_error;
  std::lock_guard lock(st.mu);
  st.written_nodes[chunk_id] = took;
  st.unsynced[chunk_id] = chunk.info.index;
  return Status::Ok();
}

Status ClientImpl::SyncReplicas(InodeState& st) {
  std::unordered_map<ChunkId, uint64_t> unsynced;
  {
    std::lock_guard lock(st.mu);
    unsynced.swap(st.unsynced);
  }
  for (auto& [chunk_id, index] : unsynced) {
    auto chunk = ChunkFor(st, index);
    Status result = chunk.status();
    if (result.ok() && *chunk) {
      std::vector<NodeId> nodes;
      {
        std::lock_guard lock(st.mu);
        auto it = st.written_nodes.find(chunk_id);
        if (it != st.written_nodes.end()) nodes = it->second;
      }
      for (const ReplicaInfo& r : (*chunk)->info.replicas) {
        if (!nodes.empty() && std::find(nodes.begin(), nodes.end(), r.node) == nodes.end()) continue;
        if (!Healthy(r)) continue;
        if (IsLocal(r)) {
          for (bool direct : {false, true}) {
            std::shared_ptr<ChunkFile> file;
            {
              std::lock_guard lock(st.mu);
              auto it = st.local_files.find(std::make_pair(r.chunk.value(), direct));
              if (it != st.local_files.end()) file = it->second.file;
            }
            if (file && result.ok()) result = file->Sync();
          }
        } else if (result.ok()) {
          result = data_.Sync(r, (*chunk)->cap);
        }
      }
    }
    if (!result.ok()) {
      std::lock_guard lock(st.mu);
      st.unsynced.emplace(chunk_id, index);  // fsync again next time
      return result;
    }
  }
  return Status::Ok();
}

Status ClientImpl::Commit(InodeState& st, HandleId handle, bool durable) {
  std::lock_guard commit(st.commit_mu);
  return CommitLocked(st, handle, durable);
}

Status ClientImpl::CommitLocked(InodeState& st, HandleId handle, bool durable) {
  CommitRequest req;
  uint64_t generation;
  std::vector<std::pair<ChunkId, uint64_t>> versions;
  {
    std::lock_guard lock(st.mu);
    bool dirty = st.write_generation != st.committed_generation || !st.dirty_versions.empty();
    if (!dirty && !(durable && st.needs_durable)) return Status::Ok();
    generation = st.write_generation;
    req.ino = st.ino;
    req.handle = handle;
    req.size = st.size;
    if (st.write_generation != st.committed_generation) req.mtime = st.last_write;
    for (auto& [chunk, version] : st.dirty_versions) {
      WrittenChunk w{chunk, version, {}};
      auto nodes = st.written_nodes.find(chunk);
      if (nodes != st.written_nodes.end()) w.nodes = nodes->second;
      req.written.push_back(std::move(w));
      versions.emplace_back(chunk, version);
    }
  }
  req.durable = durable;
  ASSIGN_OR_RETURN(Attr committed, meta_.Commit(req));
  NoteMetaAttr(st, committed);
  std::lock_guard lock(st.mu);
  st.committed_size = committed.size;
  st.size = std::max(st.size, st.committed_size);
  if (st.write_generation == generation) st.committed_generation = generation;
  st.needs_durable = !durable;
  for (auto& [chunk, version] : versions) {
    auto it = st.dirty_versions.find(chunk);
    bool settled = it != st.dirty_versions.end() && it->second == version;
    if (settled) st.dirty_versions.erase(it);
    std::vector<NodeId> nodes;  // empty: every replica took the writes
    if (auto it = st.written_nodes.find(chunk); it != st.written_nodes.end()) nodes = it->second;
    if (settled) st.written_nodes.erase(chunk);
    // Later writes of this session build on the committed version; replicas
    // that missed writes are stale now.
    for (auto& [index, cached] : st.layout) {
      for (ReplicaInfo& r : cached.info.replicas) {
        if (r.chunk != chunk) continue;
        bool took = nodes.empty() || std::find(nodes.begin(), nodes.end(), r.node) != nodes.end();
        if (took) {
          r.version = std::max(r.version, version);
        } else if (Healthy(r)) {
          r.state = ReplicaState::kStale;
        }
      }
    }
  }
  return Status::Ok();
}

Result<Attr> ClientImpl::Truncate(InodeId ino, InodeState* st, uint64_t size, bool setup_locked) {
  std::unique_lock<std::mutex> setup;
  if (st != nullptr && !setup_locked) setup = std::unique_lock(st->passthrough_mu);
  // Our pending writes first (the kernel's through passthrough included), so
  // that meta's size includes them.
  std::shared_ptr<ChunkFile> held;
  std::unique_lock<std::mutex> commit;
  if (st != nullptr) {
    RETURN_IF_ERROR(NotePassthroughWrites(*st));
    commit = std::unique_lock(st->commit_mu);
    RETURN_IF_ERROR(CommitLocked(*st, HandleId(), false));
    held = HeldPassthrough(*st);
  }
  ASSIGN_OR_RETURN(Attr before, GetAttr(ino));
  LOG_DEBUG("inode {}: truncate {} -> {}{}", ino, before.size, size, held ? " (held by passthrough)" : "");
  if (!S_ISREG(before.mode)) {
    return Status(S_ISDIR(before.mode) ? StatusCode::kIsDirectory : StatusCode::kInvalidArgument,
                  "truncate needs a regular file");
  }
  const uint64_t cs = before.chunk_size;
  const uint64_t boundary = std::min(before.size, size);
  const uint64_t boundary_index = cs == 0 ? 0 : boundary / cs;
  // The boundary chunk's new version, recorded after the truncation (size 0:
  // sizes only grow through Commit, this records versions only).
  CommitRequest versions;
  versions.ino = ino;
  bool held_done = false;  // the held chunk file was resized with the boundary chunk
  if (cs > 0 && (boundary % cs != 0 || size > before.size)) {
    // The chunk that keeps a prefix loses its tail on every replica first;
    // chunks wholly past the boundary are dropped by meta below. Extending
    // makes that chunk's files reach the new end (or the chunk's end): a
    // chunk file is then byte for byte its part of the file, which the
    // kernel relies on when it reads it directly (passthrough), and bytes
    // past the old size that were never committed read as zeros.
    const uint64_t index = boundary_index;
    const bool extend = size > before.size;
    const uint64_t cut = boundary % cs;  // bytes past it were cut off or never committed
    const uint64_t new_length = extend ? std::min(size, (index + 1) * cs) - index * cs : cut;
    // Cut, then (extending) grow: the new region reads zeros on every path.
    auto resize = [&](auto&& truncate, uint64_t grow_to) -> Status {
      RETURN_IF_ERROR(truncate(cut));
      return grow_to != cut ? truncate(grow_to) : Status::Ok();
    };
    ASSIGN_OR_RETURN(std::vector<CachedChunk> layout, meta_.GetLayout(ino, index, 1, /*write=*/true));
    for (const CachedChunk& chunk : layout) {
      if (chunk.info.index != index) continue;
      uint64_t version = CommittedVersion(chunk.info) + 1;
      WrittenChunk w;
      const bool single = chunk.info.replicas.size() == 1;
      for (const ReplicaInfo& r : chunk.info.replicas) {
        if (!Healthy(r)) continue;
        Status done;
        if (IsLocal(r) && held && index == 0) {
          // The held chunk file is the whole file: it takes the new size.
          done = resize([&](uint64_t len) { return held->Truncate(len, version); }, size);
          held_done = true;
        } else if (IsLocal(r)) {
          // A missing file (a chunk allocated but never written) is created,
          // as the data service does for a remote replica: the new version
          // always has a file behind it.
          auto file = data_.OpenLocal(r, chunk.cap, /*create=*/true, /*writable=*/true, false, /*retry=*/single);
          done = file.ok() ? resize([&](uint64_t len) { return (*file)->Truncate(len, version); }, new_length)
                           : file.status();
        } else {
          done = resize([&](uint64_t len) { return data_.Truncate(r, chunk.cap, len, version, /*retry=*/single); },
                        new_length);
        }
        if (done.ok()) {
          w.nodes.push_back(r.node);
        } else if (single) {
          return done;
        } else {
          LOG_WARN("truncate of chunk {} on node {}: {}; the replica will be repaired", r.chunk, r.node,
                   done.ToString());
        }
      }
      if (w.nodes.empty()) return Status(StatusCode::kIoError, "truncate reached no replica");
      w.chunk = chunk.info.replicas.front().chunk;
      w.version = version;
      versions.written.push_back(std::move(w));
    }
  }
  if (held && !held_done) {
    // Chunk 0 is not the boundary chunk, but its held file is the file: it
    // takes the new size too (cut, then grow: the new region reads zeros).
    // Its other replicas keep their part, which the size already covers.
    RETURN_IF_ERROR(held->Truncate(boundary, 0));
    if (size != boundary) RETURN_IF_ERROR(held->Truncate(size, 0));
  }
  // An extended chunk was zero-filled above: meta keeps it even if it lies
  // wholly past the old end (e.g. chunk 0 of an empty file held open by a
  // passthrough writer). A held chunk 0 stays whatever the new size.
  uint64_t keep = 0;
  if (size > before.size && !versions.written.empty()) keep = boundary_index + 1;
  if (held) keep = std::max<uint64_t>(keep, 1);
  ASSIGN_OR_RETURN(Attr attr, meta_.Truncate(ino, size, keep));
  if (!versions.written.empty()) RETURN_IF_ERROR(meta_.Commit(versions).status());
  if (st != nullptr) {
    std::lock_guard lock(st->mu);
    st->size = size;
    st->committed_size = size;
    uint64_t first_dropped = cs == 0 ? 0 : (boundary + cs - 1) / cs;
    if (held) first_dropped = std::max<uint64_t>(first_dropped, 1);
    for (auto it = st->layout.lower_bound(first_dropped); it != st->layout.end();) {
      for (const ReplicaInfo& r : it->second.info.replicas) {
        st->dirty_versions.erase(r.chunk);
        st->written_nodes.erase(r.chunk);
        st->unsynced.erase(r.chunk);
        st->local_files.erase(std::make_pair(r.chunk.value(), false));
        st->local_files.erase(std::make_pair(r.chunk.value(), true));
      }
      it = st->layout.erase(it);
    }
    // The boundary chunk moved on: forget its cached replicas (refetched).
    for (const WrittenChunk& w : versions.written) {
      for (auto it = st->layout.begin(); it != st->layout.end();) {
        bool match = !it->second.info.replicas.empty() && it->second.info.replicas.front().chunk == w.chunk;
        it = match ? st->layout.erase(it) : std::next(it);
      }
      st->dirty_versions.erase(w.chunk);
      st->written_nodes.erase(w.chunk);
    }
    st->layout_known_below = 0;
    // The held file changed under the kernel's writes: its checksums are
    // rebuilt at the last writer's close.
    if (held && st->passthrough.writers > 0) {
      st->passthrough.needs_rebuild = true;
      st->passthrough.overflow_dirty = true;
    }
  }
  if (st != nullptr) NoteMetaAttr(*st, attr);
  return attr;
}

}  // namespace t0fs::client
