// RemovedLog: the chunks a volume removed lately, kept on the volume itself,
// so that a data node that restarted still refuses a writer whose layout
// predates a removal and would create the chunk again as a file no layout
// names (an orphan; ChunkStore::Remove, kRemovedMemory).
//
// Two files in the volume directory: removed.log, to which every removal
// appends a record (chunk id, wall-clock milliseconds), and removed.log.old,
// the one before it. A copy meta places on the volume again (CommitTemp)
// appends a record that ends the chunk's earlier ones. When removed.log's
// first record is older than `memory`, or it holds `capacity` records, it
// becomes removed.log.old (replacing the previous one, whose records are
// all older than `memory` by then) and a new removed.log starts: together
// they hold every removal of the last `memory`, and neither grows past
// `capacity` records. Appends are not synced: a host that crashes may
// forget its last removals (an orphan is then possible: `t0fs fsck
// --remove-orphans` removes it). A record torn by a crash is ignored.
//
// Thread safety: none; ChunkStore calls it under its naming mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/fd.h"
#include "common/ids.h"
#include "common/status.h"

namespace t0fs::data {

class RemovedLog {
 public:
  struct Removal {
    ChunkId chunk;
    int64_t wall_ms = 0;  // when it was removed (wall clock, ms since the epoch)
  };

  RemovedLog(std::string dir, std::chrono::milliseconds memory, size_t capacity);

  // The removals of both files no older than `memory` at `now_ms` and not
  // ended by a later placement, oldest first. Files that cannot be read
  // give nothing (a warning is logged).
  std::vector<Removal> Load(int64_t now_ms) const;
  // Records that `chunk` was removed (`placed`: placed here again) at
  // `now_ms`; the log rotates first when due.
  Status Append(ChunkId chunk, bool placed, int64_t now_ms);

  static constexpr const char* kName = "removed.log";
  static constexpr const char* kOldName = "removed.log.old";

 private:
  Status OpenCurrent();

  std::string dir_;
  std::chrono::milliseconds memory_;
  size_t capacity_;
  UniqueFd fd_;            // removed.log, opened for appending (by the first Append)
  size_t records_ = 0;     // in removed.log
  int64_t first_ms_ = -1;  // its first record's time; -1: it has none
};

// Wall-clock milliseconds now.
int64_t WallMillisNow();

}  // namespace t0fs::data
