#include "bench/mlperf/edition.h"

namespace t0fs::bench::mlperf {

Result<Edition> ParseEdition(std::string_view text) {
  if (!text.empty() && (text[0] == 'v' || text[0] == 'V')) text.remove_prefix(1);
  if (text == "1.0" || text == "1") return Edition::k1_0;
  if (text == "2.0" || text == "2") return Edition::k2_0;
  if (text == "3.0" || text == "3") return Edition::k3_0;
  return Status(StatusCode::kInvalidArgument,
                "unknown --edition '" + std::string(text) + "' (1.0, 2.0, 3.0)");
}

std::string_view EditionName(Edition edition) {
  switch (edition) {
    case Edition::k1_0: return "1.0";
    case Edition::k2_0: return "2.0";
    case Edition::k3_0: return "3.0";
  }
  return "?";
}

Result<Sharding> ParseSharding(std::string_view text) {
  if (text == "v1") return Sharding::kV1;
  if (text == "v2") return Sharding::kV2;
  if (text == "v3") return Sharding::kV3;
  return Status(StatusCode::kInvalidArgument,
                "unknown --sharding '" + std::string(text) + "' (v1, v2, v3)");
}

std::string_view ShardingName(Sharding sharding) {
  switch (sharding) {
    case Sharding::kV1: return "v1";
    case Sharding::kV2: return "v2";
    case Sharding::kV3: return "v3";
  }
  return "?";
}

Sharding DefaultSharding(Edition edition) {
  switch (edition) {
    case Edition::k1_0: return Sharding::kV1;
    case Edition::k2_0: return Sharding::kV2;
    case Edition::k3_0: return Sharding::kV3;
  }
  return Sharding::kV3;
}

}  // namespace t0fs::bench::mlperf
