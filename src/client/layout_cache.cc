#include "client/layout_cache.h"

#include <algorithm>
#include <unordered_set>

#include <fmt/format.h>

namespace t0fs::client {

namespace {

bool SameChunk(const CachedChunk& a, const CachedChunk& b) {
  return !a.info.replicas.empty() && !b.info.replicas.empty() &&
         a.info.replicas.front().chunk == b.info.replicas.front().chunk;
}

// Puts meta's `fresh` entry for a chunk in place of the cached `old`. Kept
// from `old`: the versions this session wrote with (meta's are older only
// until our commit), and for the same chunk a capability with write rights
// that `fresh` lacks (a read-only open's layout, fetched while a writer of
// this mount holds the chunk, must not leave that writer read rights only).
void Replace(CachedChunk& old, CachedChunk fresh) {
  for (ReplicaInfo& r : fresh.info.replicas) {
    for (const ReplicaInfo& was : old.info.replicas) {
      if (was.node == r.node && was.chunk == r.chunk) r.version = std::max(r.version, was.version);
    }
  }
  if (SameChunk(old, fresh) && (old.cap.rights & kCapWrite) != 0 &&
      (fresh.cap.rights & kCapWrite) == 0 &&
      old.cap.expiry_ms > WallMillis() + LayoutCache::kCapMarginMs) {
    fresh.cap = old.cap;
  }
  old = std::move(fresh);
}

}  // namespace

void LayoutCache::Merge(InodeState& st, const std::vector<CachedChunk>& layout, uint64_t first, uint64_t count) {
  std::lock_guard lock(st.mu);
  for (CachedChunk fresh : layout) {
    auto it = st.layout.find(fresh.info.index);
    if (it != st.layout.end()) {
      Replace(it->second, std::move(fresh));
    } else {
      st.layout.emplace(fresh.info.index, std::move(fresh));
    }
  }
  if (first <= st.layout_known_below) st.layout_known_below = std::max(st.layout_known_below, first + count);
}

Status LayoutCache::Refresh(InodeState& st, uint64_t first, uint64_t count) {
  bool write;
  {
    std::lock_guard lock(st.mu);
    write = st.writable;
  }
  ASSIGN_OR_RETURN(std::vector<CachedChunk> layout, meta_.GetLayout(st.ino, first, count, write));
  Merge(st, layout, first, count);
  if (count == 0 || count > kFetchWindow) return Status::Ok();
  // Meta answers every chunk it has in the range: a cached one it did not
  // answer is gone (truncated by another client). Kept, a writer would write
  // it with a capability for a chunk meta no longer has, or read rights only.
  std::unordered_set<uint64_t> present;
  for (const CachedChunk& c : layout) present.insert(c.info.index);
  std::lock_guard lock(st.mu);
  for (auto it = st.layout.lower_bound(first);
       it != st.layout.end() && it->first < first + count;) {
    it = present.count(it->first) != 0 ? std::next(it) : st.layout.erase(it);
  }
  return Status::Ok();
}

Result<std::optional<CachedChunk>> LayoutCache::ChunkFor(InodeState& st, uint64_t index) {
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
    RETURN_IF_ERROR(Refresh(st, index, kFetchWindow));
  }
  std::lock_guard lock(st.mu);
  auto it = st.layout.find(index);
  if (it == st.layout.end()) return std::optional<CachedChunk>();
  return std::optional(it->second);
}

Result<CachedChunk> LayoutCache::Allocate(InodeState& st, uint64_t index, bool streaming) {
  ASSIGN_OR_RETURN(std::optional<CachedChunk> known, ChunkFor(st, index));
  if (known) return *known;
  std::vector<uint64_t> indices;
  {
    // A writer that runs off the end of a chunk is streaming: allocate the
    // next few chunks in the same call. A small write allocates only its own.
    std::lock_guard lock(st.mu);
    uint64_t count = streaming ? std::max<uint32_t>(1, allocate_ahead_) : 1;
    for (uint64_t ahead = 0; ahead < count; ++ahead) {
      if (ahead == 0 || st.layout.count(index + ahead) == 0) indices.push_back(index + ahead);
    }
  }
  ASSIGN_OR_RETURN(std::vector<CachedChunk> allocated, meta_.Allocate(st.ino, indices));
  std::lock_guard lock(st.mu);
  for (const CachedChunk& fresh : allocated) {
    // The same chunk: replicas and versions we had, the new rights; another
    // (meta's changed since we fetched it, e.g. truncated by another client
    // and allocated again): meta's, whose capability is for it.
    auto it = st.layout.find(fresh.info.index);
    if (it == st.layout.end()) {
      st.layout.emplace(fresh.info.index, fresh);
    } else if (SameChunk(it->second, fresh)) {
      it->second.cap = fresh.cap;
    } else {
      Replace(it->second, fresh);
    }
  }
  auto it = st.layout.find(index);
  if (it == st.layout.end() || it->second.info.replicas.empty()) {
    return Status(StatusCode::kInternal, fmt::format("meta did not allocate chunk {} of inode {}", index, st.ino));
  }
  return it->second;
}

void LayoutCache::NoteOpen(InodeState& st, bool writable) {
  std::lock_guard lock(st.mu);
  if (writable && !st.writable) {
    // Cached capabilities carry read rights only: refetch with write rights.
    st.writable = true;
    st.layout.clear();
    st.layout_known_below = 0;
  }
}

void LayoutCache::OnOpen(InodeState& st, const std::vector<CachedChunk>& layout, bool truncated) {
  const uint64_t covered = std::max<uint64_t>(layout.empty() ? 0 : layout.back().info.index + 1, kOpenWindow);
  {
    // Close-to-open: chunks of the cached layout that meta no longer has
    // (truncated, or allocated ahead and dropped at the last close) go, and
    // those past what the reply covers, which may have changed since they
    // were fetched (moved, or offloaded: a write with such a layout would
    // go to a replica that is no more); they are fetched again when used.
    std::unordered_set<uint64_t> fresh;
    for (const CachedChunk& c : layout) fresh.insert(c.info.index);
    std::lock_guard lock(st.mu);
    std::erase_if(st.layout, [&](const auto& entry) {
      return entry.first >= covered || !fresh.count(entry.first);
    });
  }
  Merge(st, layout, 0, covered);
  {
    std::lock_guard lock(st.mu);
    st.layout_known_below = covered;  // past it: not known (absent is not a hole)
  }
  if (truncated) {
    std::lock_guard lock(st.mu);
    st.layout.clear();
  }
}

void LayoutCache::NoteCommitted(InodeState& st, ChunkId chunk, uint64_t version, const std::vector<NodeId>& nodes) {
  // Called with st.mu held by the commit (it settles its own fields with it).
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

}  // namespace t0fs::client
