// The samples a rank reads in an epoch, per edition (spec §2.4), computed
// from indices alone: a rank never holds the whole file list.
//  - v1: one global sample list shuffled in place every epoch with seed 123
//    (so the permutation compounds: epoch e applies it e times); rank r
//    takes the contiguous slice [r*S, (r+1)*S), S = total // ranks.
//  - v2: rank r reads [r*S, (r+1)*S) in ascending order every epoch.
//  - v3: files dealt round-robin (rank r owns r, r+P, …); every epoch each
//    sender shuffles its shard (seed 123+e), deals it round-robin rotated by
//    its rank to all ranks, and each receiver shuffles what it got (seed
//    123+e+31r). The all-to-all is computed, not communicated: it is
//    deterministic. Steps = the minimum over ranks.
// The shuffles use t0fs's own PRNG (a Feistel permutation and a seeded
// Fisher-Yates), not numpy's: the order differs from the reference's, the
// structure does not. Without shuffling (`shuffle` false) v3 keeps each
// rank's round-robin shard in ascending order.
// Thread safety: EpochOrder is immutable after Make().
#pragma once

#include <cstdint>
#include <vector>

#include "bench/mlperf/edition.h"

namespace t0fs::bench::mlperf {

struct ShardingInput {
  Sharding sharding = Sharding::kV3;
  uint64_t files = 0;
  uint32_t samples_per_file = 1;
  uint32_t ranks = 1;
  bool shuffle = true;
  uint64_t seed = 123;
};

class EpochOrder {
 public:
  // The order of rank `rank` in epoch `epoch` (1-based).
  static EpochOrder Make(const ShardingInput& in, uint32_t rank, uint32_t epoch);
  uint64_t size() const { return size_; }
  // Global sample index of the k-th sample (k < size()); its file is
  // sample / samples_per_file.
  uint64_t SampleAt(uint64_t k) const;

 private:
  ShardingInput in_;
  uint32_t rank_ = 0;
  uint32_t epoch_ = 1;
  uint64_t size_ = 0;
  uint64_t start_ = 0;                 // v1, v2
  std::vector<uint64_t> files_;        // v3: the received files, in reading order
};

// Samples available to `rank` in one epoch (before the step minimum).
uint64_t SamplesForRank(const ShardingInput& in, uint32_t rank);
// Steps per epoch: min over ranks of samples // batch.
uint64_t StepsPerEpoch(const ShardingInput& in, uint32_t batch);

// TF (resnet50, cosmoflow): rank r reads the files i with i % ranks == r,
// in ascending order, record by record.
uint64_t TfFilesForRank(uint64_t files, uint32_t ranks, uint32_t rank);
uint64_t TfStepsPerEpoch(uint64_t files, uint32_t samples_per_file, uint32_t ranks,
                         uint32_t batch);

}  // namespace t0fs::bench::mlperf
