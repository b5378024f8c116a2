#include "data/orphan_sweep.h"

#include <algorithm>

namespace t0fs::data {

Result<SweepCounts> SweepVolume(ChunkStore& store, VolumeId volume, size_t page,
                                const QueueOrphansFn& queue, const std::function<bool()>& stop) {
  SweepCounts counts;
  ASSIGN_OR_RETURN(std::vector<ChunkId> ids, store.ChunkIds(volume));
  for (size_t at = 0; at < ids.size() && !stop(); at += page) {
    const std::vector<ChunkId> files(
        ids.begin() + static_cast<ptrdiff_t>(at),
        ids.begin() + static_cast<ptrdiff_t>(std::min(ids.size(), at + page)));
    ASSIGN_OR_RETURN(uint64_t queued, queue(volume, files));
    counts.offered += files.size();
    counts.queued += queued;
  }
  return counts;
}

}  // namespace t0fs::data
