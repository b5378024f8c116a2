// Scrubber: re-reads every chunk replica of this node in the background and
// verifies its block checksums, at `rate` bytes/s, so that damage nobody
// reads is found and repaired too. A damaged replica is reported to meta
// (which marks it stale; repair copies a healthy one over it).
//
// Thread safety: Start/Stop from the owner; problems are taken concurrently.
#pragma once

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <unordered_set>
#include <vector>

#include "common/config.h"
#include "data/chunk_store.h"
#include "rpc/proto/meta.pb.h"

namespace t0fs::data {

class Scrubber {
 public:
  // rate 0 disables scrubbing. `pause` is the rest between full passes.
  Scrubber(ChunkStore& store, uint64_t rate_bytes_per_sec, Duration pause);
  ~Scrubber();
  // Damage found since the last call.
  std::vector<pb::ReplicaProblem> TakeProblems();
  // Reports damage found elsewhere (a read that failed its checksums).
  void Report(VolumeId volume, ChunkId chunk, const std::string& detail);
  uint64_t passes() const { return passes_.load(); }
  uint64_t bytes_verified() const { return bytes_.load(); }

 private:
  void Loop();
  bool Sleep(std::chrono::steady_clock::duration d);  // false when stopping

  ChunkStore& store_;
  const uint64_t rate_;
  const Duration pause_;
  std::atomic<uint64_t> passes_{0}, bytes_{0};
  std::mutex mu_;  // guards problems_, reported_, stopping_
  std::condition_variable cv_;
  std::vector<pb::ReplicaProblem> problems_;
  std::unordered_set<ChunkId> reported_;  // reported this pass (not again until the next)
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace t0fs::data
