// DatasetFiles: the file-system side of a DatasetPlan for one rank — which
// planned files this rank owns, laying out the data that reads need,
// dropping their page cache, and removing afterwards the files the run
// created (never a file that existed before it).
//
// Thread safety: call from the coordinating thread.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "bench/cache_drop.h"
#include "bench/comm.h"
#include "bench/dataset.h"
#include "common/status.h"

namespace t0fs::bench {

enum class PathKind { kDirectory, kFile };
// A directory; or a regular file, a device (block, or character such as
// /dev/zero to measure the harness's own cost), or a path that does not
// exist yet in an existing directory (a file the benchmark will create).
Result<PathKind> ClassifyPath(const std::string& path);

class DatasetFiles {
 public:
  void Init(const DatasetPlan* plan, int rank, uint32_t threads_per_rank);
  // Remembers which owned files exist now (they are never removed).
  void RecordExisting();
  // Writes the verify pattern into every owned file that is missing or too
  // short (untimed; buffered writes, then fsync). Shows a progress line when
  // `progress`. Returns kInterrupted when a stop is requested.
  Status LayOut(uint64_t seed, bool progress);
  // Drops the page cache of the files this rank's threads use and measures
  // what stayed (cache_drop.h).
  Result<CacheReport> DropCache(CacheDropMode mode);
  // Barrier, then removes (unless keep) the owned files that did not exist
  // before the run.
  void Cleanup(bool keep, Comm& comm);

 private:
  bool Owns(const PlannedFile& file) const;

  const DatasetPlan* plan_ = nullptr;
  int rank_ = 0;
  uint32_t threads_per_rank_ = 1;
  std::vector<bool> existed_;
};

// Writes `size` bytes of the verify pattern to `path` (creating it); stops
// with kInterrupted when a stop is requested.
Status WritePatternFile(const std::string& path, uint64_t size, uint64_t seed, uint64_t file_id,
                        std::atomic<uint64_t>* progress_bytes);

}  // namespace t0fs::bench
