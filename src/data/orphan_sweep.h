// The orphan sweep of a data node: its chunk files offered to meta, a page
// at a time, so that meta queues for removal the ones no layout will ever
// use (a chunk meta has no row of: its file was left by a writer with an
// old layout, a crash between a removal and its record, a node that was
// away when its replica was dropped...). Meta decides (QueueOrphans, the
// same rules as `t0fs fsck --remove-orphans`); the removals come back as
// any other, with the heartbeats.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "common/ids.h"
#include "common/status.h"
#include "data/chunk_store.h"

namespace t0fs::data {

struct SweepCounts {
  uint64_t offered = 0;  // chunk files offered to meta
  uint64_t queued = 0;   // of them, queued for removal
};

// Offers the chunk files of `volume` (named ones, as one listing of its
// directory: a file created meanwhile waits for the next sweep) to `queue`
// — meta's QueueOrphans for this node, returning how many of a page it
// queued — at most `page` at a time, in chunk id order. Stops early, with
// what was done, when `stop` returns true between pages.
using QueueOrphansFn = std::function<Result<uint64_t>(VolumeId, const std::vector<ChunkId>&)>;
Result<SweepCounts> SweepVolume(ChunkStore& store, VolumeId volume, size_t page,
                                const QueueOrphansFn& queue, const std::function<bool()>& stop);

}  // namespace t0fs::data
