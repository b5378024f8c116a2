// The MLPerf Storage editions (1.0 = 2024, 2.0 = 2025, 3.0 = 2026): they
// differ in the throughput formula, the sharding of samples over ranks and
// the per-epoch cache drop (docs/mlperf.md, "Editions").
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace t0fs::bench::mlperf {

enum class Edition { k1_0, k2_0, k3_0 };

// "1.0", "2.0", "3.0" (also "1", "v2.0").
Result<Edition> ParseEdition(std::string_view text);
std::string_view EditionName(Edition edition);

// How the samples of an epoch are dealt to the ranks (spec §2.4).
enum class Sharding {
  kV1,  // one global list, shuffled in place every epoch (seed 123, compounding); contiguous slices
  kV2,  // contiguous ascending ranges, the same every epoch
  kV3,  // files round-robin, re-dealt every epoch (seeded all-to-all) and shuffled per rank
};
Result<Sharding> ParseSharding(std::string_view text);
std::string_view ShardingName(Sharding sharding);
Sharding DefaultSharding(Edition edition);

}  // namespace t0fs::bench::mlperf
