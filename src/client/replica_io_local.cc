// The local files of an inode in ReplicaIo (replica_io.h): chunk files on
// this host opened straight (local bypass), known holes, prepared files of
// the chunk pool, and the naming of unnamed files (lazy passthrough opens,
// prepared chunks) when their writes are committed.
#include <fmt/format.h>

#include "client/replica_io.h"

namespace t0fs::client {

bool KnownHoleHolds(const InodeState::LocalFile& cached, bool for_write, uint64_t version) {
  // A known hole is trusted only while the layout says the chunk was never
  // written (version 0): a writer (another File, or an earlier state of
  // this inode) may have created the file since.
  return (cached.writable || !for_write) && (cached.file || (!for_write && version == 0));
}

bool ReplicaIo::IsLocal(const ReplicaInfo& r) const {
  return local_bypass_ && r.node.valid() && r.node == meta_.local_node();
}

Result<std::shared_ptr<ChunkFile>> ReplicaIo::LocalFile(InodeState& st, const ReplicaInfo& r,
                                                        const Capability& cap, bool for_write,
                                                        bool direct, bool retry, bool lazy) {
  auto key = std::make_pair(r.chunk.value(), direct);
  {
    std::lock_guard lock(st.mu);
    auto it = st.local_files.find(key);
    // Unnamed files (a lazy open, a prepared chunk) are ours only while we
    // hold their writer byte (a passthrough writer, the chunk pool): without
    // it the data node may have let them go and the chunk may have other
    // files by now.
    const bool unnamed_let_go = it != st.local_files.end() && it->second.file &&
                                it->second.file->unnamed() && !it->second.file->holds_writer();
    if (it != st.local_files.end() && !unnamed_let_go &&
        KnownHoleHolds(it->second, for_write, r.version)) {
      return it->second.file;  // may be null: a known hole
    }
  }
  auto opened =
      data_.OpenLocal(r, cap, /*create=*/for_write, /*writable=*/for_write, direct, retry, lazy);
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

void ReplicaIo::UsePrepared(InodeState& st, const std::shared_ptr<ChunkFile>& file) {
  std::lock_guard lock(st.mu);
  st.local_files[std::make_pair(file->chunk().value(), false)] =
      InodeState::LocalFile{file, /*writable=*/true};
}

Status ReplicaIo::NameLocalFiles(InodeState& st, std::span<const WrittenChunk> written) {
  struct Unnamed {
    std::shared_ptr<ChunkFile> file;
    uint64_t index;
  };
  std::vector<Unnamed> unnamed;
  {
    std::lock_guard lock(st.mu);
    for (const WrittenChunk& w : written) {
      // Lazy opens are passthrough's: never O_DIRECT, always chunk 0 (its
      // layout entry is looked up, or fetched, below either way).
      // The passthrough file too: an O_TRUNC open or a truncation may have
      // dropped it from local_files while the kernel still writes it.
      std::shared_ptr<ChunkFile> file;
      if (auto it = st.local_files.find(std::make_pair(w.chunk.value(), false));
          it != st.local_files.end()) {
        file = it->second.file;
      }
      if (!file && st.passthrough.file && st.passthrough.file->chunk() == w.chunk)
        file = st.passthrough.file;
      if (!file || !file->unnamed()) continue;
      uint64_t at = 0;
      for (const auto& [index, cached] : st.layout) {
        if (!cached.info.replicas.empty() && cached.info.replicas.front().chunk == w.chunk)
          at = index;
      }
      unnamed.push_back({file, at});
    }
  }
  for (const Unnamed& u : unnamed) {
    bool refreshed = false;
    for (;;) {
      ASSIGN_OR_RETURN(std::optional<CachedChunk> chunk, layouts_.ChunkFor(st, u.index));
      const ReplicaInfo* local = nullptr;
      if (chunk) {
        for (const ReplicaInfo& r : chunk->info.replicas) {
          if (IsLocal(r) && r.chunk == u.file->chunk()) local = &r;
        }
      }
      if (local == nullptr) {
        return Status(StatusCode::kStale,
                      fmt::format("inode {}: chunk {} written here left this node's "
                                  "layout before it got a name",
                                  st.ino, u.file->chunk()));
      }
      Status named = data_.AdoptLocal(*local, chunk->cap, *u.file);
      if (named.code() == StatusCode::kDataCapabilityExpired && !refreshed) {
        refreshed = true;
        RETURN_IF_ERROR(layouts_.Refresh(st, u.index, 1));
        continue;
      }
      if (named.code() == StatusCode::kStale) {
        // The node removed the chunk: meta dropped it (another client
        // truncated it away) after this layout was fetched.
        return Status(
            StatusCode::kStale,
            fmt::format("inode {}: chunk {} written here was removed from this node before "
                        "it got a name (truncated away by another client)",
                        st.ino, u.file->chunk()));
      }
      RETURN_IF_ERROR(named);
      break;
    }
  }
  return Status::Ok();
}

}  // namespace t0fs::client
