// LayoutCache: the layout room of libt0fs — which chunks an open inode has,
// their replicas, and the capabilities meta signed for them.
//
// Owns the layout fields of InodeState (layout, layout_known_below,
// writable); asks meta through MetaApi only.
// - Chunks by index: ChunkFor answers from the cache while the entry's
//   capability is fresh (kCapMargin before expiry) and carries the rights
//   the inode needs; otherwise it fetches a window of kFetchWindow chunks.
//   An index below layout_known_below that is absent is a hole (no RPC).
// - Capabilities: an inode that some File writes (`writable`) never uses a
//   read-only capability — a read-only open's layout merged into it is
//   fetched again with write rights before use.
// - Allocation: Allocate allocates one chunk, or for a streaming writer
//   the next `allocate_ahead` too, in one call.
// - Close-to-open: OnOpen takes an open reply's layout as the truth for the
//   indices it covers (cached chunks meta no longer has go).
// - Versions this session wrote with are kept over meta's older ones until
//   the commit (merges keep the higher), and NoteCommitted settles them.
//
// Locks: takes InodeState::mu only around cache reads and updates, never
// across a meta call; callers may hold passthrough_mu and commit_mu (taken
// before mu), never mu (NoteCommitted aside, which expects it held).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "client/inode_state.h"
#include "client/meta_api.h"

namespace t0fs::client {

class LayoutCache {
 public:
  // Chunks fetched per GetLayout when a read reaches an unknown index.
  static constexpr uint64_t kFetchWindow = 256;
  // A capability this close to expiry is refreshed before use.
  static constexpr uint64_t kCapMarginMs = 30000;
  // Chunks an open reply's layout is taken to cover at least.
  static constexpr uint64_t kOpenWindow = 1024;

  LayoutCache(MetaApi& meta, uint32_t allocate_ahead) : meta_(meta), allocate_ahead_(allocate_ahead) {}

  // Chunk `index` with a fresh capability, fetching from meta when unknown,
  // about to expire or without the rights the inode needs; nullopt for an
  // unallocated chunk.
  Result<std::optional<CachedChunk>> ChunkFor(InodeState& st, uint64_t index);
  // Like ChunkFor, but allocates the chunk if needed (and, for a streaming
  // writer, the next allocate_ahead - 1 that are not known yet).
  Result<CachedChunk> Allocate(InodeState& st, uint64_t index, bool streaming);
  // Fetches chunks [first, first + count) again (e.g. after a capability
  // expired on a data node).
  Status Refresh(InodeState& st, uint64_t first, uint64_t count);

  // A File opens the inode: `writable` upgrades its capabilities (the cache
  // is dropped when it held read-only ones).
  static void NoteOpen(InodeState& st, bool writable);
  // An open reply's layout (the first chunks; close-to-open); `truncated`
  // (O_TRUNC) forgets every chunk.
  void OnOpen(InodeState& st, const std::vector<CachedChunk>& layout, bool truncated);
  // A commit recorded `version` for `chunk`, taken by `nodes` (empty: all):
  // later writes build on it; replicas that missed writes are stale now.
  // With st.mu held (the commit settles its own fields under it).
  static void NoteCommitted(InodeState& st, ChunkId chunk, uint64_t version, const std::vector<NodeId>& nodes);

 private:
  void Merge(InodeState& st, const std::vector<CachedChunk>& layout, uint64_t first, uint64_t count);

  MetaApi& meta_;
  const uint32_t allocate_ahead_;
};

}  // namespace t0fs::client
