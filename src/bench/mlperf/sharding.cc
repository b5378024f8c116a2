#include "bench/mlperf/sharding.h"

#include <algorithm>

#include "bench/pattern.h"
#include "bench/permutation.h"

namespace t0fs::bench::mlperf {
namespace {

uint64_t ShardSize(uint64_t files, uint32_t ranks, uint32_t sender) {
  return files / ranks + (sender < files % ranks ? 1 : 0);
}

// Positions j < n with j ≡ residue (mod m).
uint64_t CountResidue(uint64_t n, uint64_t residue, uint64_t m) {
  return n > residue ? (n - residue + m - 1) / m : 0;
}

}  // namespace

uint64_t SamplesForRank(const ShardingInput& in, uint32_t rank) {
  const uint64_t total = in.files * in.samples_per_file;
  if (in.sharding != Sharding::kV3) return total / in.ranks;
  const uint32_t p = in.ranks;
  uint64_t files = 0;
  for (uint32_t sender = 0; sender < p; ++sender) {
    uint64_t n = ShardSize(in.files, p, sender);
    if (!in.shuffle) {
      if (sender == rank) files = n;
      continue;
    }
    files += CountResidue(n, (rank + p - sender % p) % p, p);
  }
  return files * in.samples_per_file;
}

uint64_t StepsPerEpoch(const ShardingInput& in, uint32_t batch) {
  uint64_t steps = UINT64_MAX;
  if (in.sharding != Sharding::kV3) return (in.files * in.samples_per_file / in.ranks) / batch;
  for (uint32_t rank = 0; rank < in.ranks; ++rank) {
    steps = std::min(steps, SamplesForRank(in, rank) / batch);
  }
  return steps == UINT64_MAX ? 0 : steps;
}

EpochOrder EpochOrder::Make(const ShardingInput& in, uint32_t rank, uint32_t epoch) {
  EpochOrder o;
  o.in_ = in;
  o.rank_ = rank;
  o.epoch_ = epoch;
  o.size_ = SamplesForRank(in, rank);
  if (in.sharding != Sharding::kV3) {
    o.start_ = o.size_ * rank;
    return o;
  }
  const uint32_t p = in.ranks;
  o.files_.reserve(o.size_ / std::max<uint32_t>(1, in.samples_per_file));
  for (uint32_t sender = 0; sender < p; ++sender) {
    uint64_t n = ShardSize(in.files, p, sender);
    if (!in.shuffle) {
      if (sender != rank) continue;
      for (uint64_t j = 0; j < n; ++j) o.files_.push_back(sender + j * p);
      continue;
    }
    Permutation perm(n, in.seed + epoch);
    // Position j of the sender's shuffled shard goes to rank (j + sender) % p.
    for (uint64_t j = (rank + p - sender % p) % p; j < n; j += p) {
      o.files_.push_back(sender + perm(j) * p);
    }
  }
  if (in.shuffle) {
    Rng rng(Mix64(in.seed + epoch + 31ULL * rank));
    for (uint64_t idx = o.files_.size(); idx > 1; --idx) {
      std::swap(o.files_[idx - 1], o.files_[rng.Below(idx)]);
    }
  }
  return o;
}

uint64_t EpochOrder::SampleAt(uint64_t k) const {
  switch (in_.sharding) {
    case Sharding::kV2: return start_ + k;
    case Sharding::kV1: {
      uint64_t total = in_.files * in_.samples_per_file;
      uint64_t pos = start_ + k;
      if (!in_.shuffle) return pos;
      Permutation perm(total, in_.seed);
      for (uint32_t e = 0; e < epoch_; ++e) pos = perm(pos);
      return pos;
    }
    case Sharding::kV3: {
      uint32_t spf = std::max<uint32_t>(1, in_.samples_per_file);
      return files_[k / spf] * spf + k % spf;
    }
  }
  return k;
}

uint64_t TfFilesForRank(uint64_t files, uint32_t ranks, uint32_t rank) {
  return ShardSize(files, ranks, rank);
}

uint64_t TfStepsPerEpoch(uint64_t files, uint32_t samples_per_file, uint32_t ranks,
                         uint32_t batch) {
  // The rank with the fewest files bounds everyone (all ranks step together).
  return TfFilesForRank(files, ranks, ranks - 1) * samples_per_file / batch;
}

}  // namespace t0fs::bench::mlperf
