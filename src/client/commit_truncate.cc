#include <sys/stat.h>

#include <algorithm>

#include <fmt/format.h>

#include "client/commit_truncate.h"
#include "common/logging.h"
#include "rpc/channel.h"

namespace t0fs::client {

namespace {

constexpr uint64_t kNoLandings = ~uint64_t{0};  // a dirty chunk without InodeState::landed_writes

// NameLocalFiles' answer for a commit or a truncation: unnamed local files
// whose chunk left this node before they got a name (kStale) lost their
// writes, reported as EIO (`lost` set).
// (`lost`, when given: set when the files are gone.)
Status NamedOrLost(const Status& named, bool* lost = nullptr) {
  const bool gone = named.code() == StatusCode::kStale;
  if (lost != nullptr) *lost = gone;
  if (gone) return Status(StatusCode::kIoError, named.message());
  return named;
}

}  // namespace

Status CommitTruncate::Commit(InodeState& st, HandleId handle, bool durable, uint64_t* seen) {
  std::lock_guard commit(st.commit_mu);
  Status done = CommitLocked(st, handle, durable);
  if (seen == nullptr) return done;
  std::lock_guard lock(st.mu);
  if (*seen == st.lost_commits) return done;
  *seen = st.lost_commits;
  return done.ok() ? st.lost_error : done;
}

void CommitTruncate::ForgetChunk(InodeState& st, ChunkId chunk) {
  st.landed_writes.erase(chunk);
  st.written_nodes.erase(chunk);
  st.unsynced.erase(chunk);
  st.local_files.erase(std::make_pair(chunk.value(), false));
  st.local_files.erase(std::make_pair(chunk.value(), true));
}

void CommitTruncate::DropRefused(InodeState& st,
                                 const std::vector<std::pair<ChunkId, uint64_t>>& versions,
                                 uint64_t generation, const Status& refused) {
  std::lock_guard lock(st.mu);
  for (const auto& [chunk, version] : versions) {
    if (auto it = st.dirty_versions.find(chunk);
        it != st.dirty_versions.end() && it->second == version)
      st.dirty_versions.erase(it);
    ForgetChunk(st, chunk);
    std::erase_if(st.layout, [&](const auto& entry) {
      const auto& replicas = entry.second.info.replicas;
      return !replicas.empty() && replicas.front().chunk == chunk;
    });
  }
  st.layout_known_below = 0;  // the dropped entries are fetched again, not taken for holes
  if (st.write_generation == generation) {
    st.committed_generation = generation;
    st.size = st.committed_size;
  }
  st.meta_attr.reset();
  st.lost_commits++;
  st.lost_error = refused;
}

Status CommitTruncate::CommitLocked(InodeState& st, HandleId handle, bool durable) {
  CommitRequest req;
  uint64_t generation;
  std::vector<std::pair<ChunkId, uint64_t>> versions;
  std::vector<uint64_t> landings;  // landed_writes of each of `versions` (none: no entry)
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
      auto landed = st.landed_writes.find(chunk);
      if (landed != st.landed_writes.end() && landed->second == 0) continue;  // writes on their way
      landings.push_back(landed != st.landed_writes.end() ? landed->second : kNoLandings);
      WrittenChunk w{chunk, version, {}};
      auto nodes = st.written_nodes.find(chunk);
      if (nodes != st.written_nodes.end()) w.nodes = nodes->second;
      req.written.push_back(std::move(w));
      versions.emplace_back(chunk, version);
    }
  }
  req.durable = durable;
  bool lost = false;
  if (Status named = NamedOrLost(replicas_.NameLocalFiles(st, req.written), &lost); !named.ok()) {
    if (!lost) return named;
    // Lost as writes meta refuses (below): dropped, reported once (EIO).
    LOG_WARN("inode {}: {}; its writes are lost", st.ino, named.message());
    DropRefused(st, versions, generation, named);
    return named;
  }
  Result<Attr> answer = meta_.Commit(req);
  if (answer.status().code() == StatusCode::kStale) {
    LOG_WARN("inode {}: meta refused a commit, its writes are lost: {}", st.ino,
             answer.status().ToString());
    DropRefused(st, versions, generation, answer.status());
  }
  ASSIGN_OR_RETURN(Attr committed, std::move(answer));
  OpenFiles::NoteMetaAttr(st, committed);
  std::lock_guard lock(st.mu);
  st.committed_size = committed.size;
  st.size = std::max(st.size, st.committed_size);
  if (st.write_generation == generation) st.committed_generation = generation;
  st.needs_durable = !durable;
  for (size_t idx = 0; idx < versions.size(); ++idx) {
    const auto& [chunk, version] = versions[idx];
    auto it = st.dirty_versions.find(chunk);
    auto landed = st.landed_writes.find(chunk);
    // Settled: no write to the chunk landed since the commit named its nodes.
    bool settled =
        it != st.dirty_versions.end() && it->second == version &&
        (landed != st.landed_writes.end() ? landed->second : kNoLandings) == landings[idx];
    if (settled) {
      st.dirty_versions.erase(it);
      if (landed != st.landed_writes.end()) st.landed_writes.erase(landed);
    }
    std::vector<NodeId> nodes;  // empty: every replica took the writes
    if (auto it = st.written_nodes.find(chunk); it != st.written_nodes.end()) nodes = it->second;
    if (settled) st.written_nodes.erase(chunk);
    LayoutCache::NoteCommitted(st, chunk, version, nodes);
  }
  return Status::Ok();
}

Result<Attr> CommitTruncate::Truncate(InodeId ino, InodeState* st, uint64_t size, bool setup_locked) {
  std::unique_lock<std::mutex> setup;
  if (st != nullptr && !setup_locked) setup = std::unique_lock(st->passthrough_mu);
  // Our pending writes first (the kernel's through passthrough included), so
  // that meta's size includes them.
  std::shared_ptr<ChunkFile> held;
  std::unique_lock<std::mutex> commit;
  if (st != nullptr) {
    RETURN_IF_ERROR(passthrough_.NoteWrites(*st));
    commit = std::unique_lock(st->commit_mu);
    RETURN_IF_ERROR(CommitLocked(*st, HandleId(), false));
    held = Passthrough::Held(*st);
    if (held) {
      ASSIGN_OR_RETURN(held, Passthrough::Writable(std::move(held)));
    }
  }
  ASSIGN_OR_RETURN(Attr before, open_.GetAttr(ino));
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
    for (CachedChunk& chunk : layout) {
      if (chunk.info.index != index) continue;
      if (Offloaded(chunk.info)) {
        // Offloaded (keep-local=drop|pressure): staged back to be cut.
        ASSIGN_OR_RETURN(chunk,
                         replicas_.Recall(ino, chunk, [&]() -> Result<std::optional<CachedChunk>> {
                           ASSIGN_OR_RETURN(std::vector<CachedChunk> fresh,
                                            meta_.GetLayout(ino, index, 1, true));
                           for (CachedChunk& c : fresh) {
                             if (c.info.index == index)
                               return std::optional<CachedChunk>(std::move(c));
                           }
                           return std::optional<CachedChunk>();
                         }));
      }
      uint64_t version = CommittedVersion(chunk.info) + 1;
      WrittenChunk w;
      const bool single = chunk.info.replicas.size() == 1;
      for (const ReplicaInfo& r : chunk.info.replicas) {
        if (!Healthy(r)) continue;
        Status done;
        if (replicas_.IsLocal(r) && held && index == 0 && held->chunk() == r.chunk) {
          // The held chunk file is the whole file: it takes the new size.
          // (Another chunk 0 by now — truncated away by another client and
          // allocated again — is resized as any chunk below.)
          done = resize([&](uint64_t len) { return held->Truncate(len, version); }, size);
          held_done = true;
        } else if (replicas_.IsLocal(r)) {
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
        if (done.code() == StatusCode::kStale) {
          // No file at the layout's version on that node (DataClient::Write).
          Status reported = meta_.ReportReplica(r, ReplicaProblem::kStale, done);
          if (!reported.ok())
            LOG_WARN("reporting chunk {} on node {}: {}", r.chunk, r.node, reported.ToString());
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
  // (Files gone: the truncate fails; its pieces were never dirty writes.)
  if (st != nullptr) RETURN_IF_ERROR(NamedOrLost(replicas_.NameLocalFiles(*st, versions.written)));
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
        ForgetChunk(*st, r.chunk);
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
      st->landed_writes.erase(w.chunk);
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
  if (st != nullptr) OpenFiles::NoteMetaAttr(*st, attr);
  return attr;
}

}  // namespace t0fs::client
