// Options shared by the mlperf subcommands: engine and I/O, cache drop,
// output files and the results directory (run leaves).
#pragma once

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/engine.h"
#include "bench/cache_drop.h"
#include "bench/result.h"

namespace CLI {
class App;
}

namespace t0fs::bench::mlperf {

struct MlperfIoOptions {
  std::string engine = "psync";
  uint32_t iodepth = 1;
  std::string transfer;  // default per workload family
  bool odirect = false;
  std::string meta = "127.0.0.1:7700";
  std::string secret_file;
  std::string drop_caches = "auto";
};
void AddIoOptions(CLI::App* cmd, MlperfIoOptions* o, const std::string& transfer_default);
struct IoChoice {
  EngineOptions engine;
  uint64_t transfer = 0;
  CacheDropMode drop = CacheDropMode::kAuto;
};
Result<IoChoice> ToIoChoice(const MlperfIoOptions& o, const std::string& path);

struct MlperfOutputOptions {
  std::string json, csv, label;
  bool quiet = false;
  std::string results_dir = "/tmp/t0fs-mlperf-results";
};
void AddOutputOptions(CLI::App* cmd, MlperfOutputOptions* o);

// <results_dir>/<family>/<name>/<YYYYMMDD_HHMMSS> (created).
Result<std::string> MakeResultsLeaf(const std::string& results_dir, const std::string& family,
                                    const std::string& name);
Status WriteJsonFile(const std::string& path, const nlohmann::json& j);
// Writes --json/--csv of a finished set (rank 0).
Status WriteOutputs(const ResultSet& set, const MlperfOutputOptions& o);

// Client memory per host: the option when > 0, else /proc/meminfo.
double ClientMemoryGib(double option_gib);
// "12.3 GiB (13.2 GB)"
std::string HumanBytes(double bytes);

}  // namespace t0fs::bench::mlperf
