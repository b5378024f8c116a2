// Command-line options of the bench subcommands, kept apart from running
// them so option parsing and validation are unit-tested: Add*Options()
// declares the flags (with their defaults shown in --help), To*Spec() turns
// the parsed text into a validated workload spec.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "bench/option_values.h"
#include "bench/io_workload.h"
#include "bench/meta_workload.h"
#include "bench/presets.h"
#include "bench/sweep_workload.h"

namespace CLI {
class App;
}

namespace t0fs::bench {

// Options every workload subcommand has.
struct CommonOptions {
  std::string json;   // result file (JSON)
  std::string csv;    // result file (CSV)
  std::string label;  // names the result set in reports
  uint32_t repeat = 1;
  bool quiet = false;
  bool keep = false;
};
void AddCommonOptions(CLI::App* cmd, CommonOptions* opts);

// Engine and data options shared by io, ai and sweep.
struct EngineCliOptions {
  std::string engine = "psync";
  std::string meta = "127.0.0.1:7700";
  std::string secret_file;
  uint64_t node_id = 0;  // native: the client's data node (0: detected by host)
  bool verify = false;
  uint64_t seed = 0x7430667362656e63ULL;
  std::string drop_caches = "auto";  // --drop-caches (cache_drop.h)
};
void AddEngineOptions(CLI::App* cmd, EngineCliOptions* opts, bool with_engine);

struct IoCliOptions {
  std::string path;
  std::string rw = "read";
  uint32_t rwmixread = 50;
  std::string bs = "1M";
  uint32_t threads = 1;
  uint32_t iodepth = 1;
  bool direct = false;
  std::string size = "1G";
  std::string split = "per-thread";
  std::string layout = "files";
  uint32_t files = 1;
  std::string runtime = "0";
  std::string ramp = "0";
  bool end_fsync = false;
  bool no_invalidate = false;
  EngineCliOptions engine;
};
void AddIoOptions(CLI::App* cmd, IoCliOptions* opts);
// The spec, checked (dataset size and PATH included) for `ranks` MPI ranks.
Result<IoSpec> ToIoSpec(const IoCliOptions& opts, bool keep, bool progress, uint32_t ranks = 1);

struct AiCliOptions {
  std::string path;
  std::string pattern;
  std::string size = "40G";
  // Overrides of the pattern's parameters (0 / empty = the pattern's).
  uint32_t threads = 0;
  uint32_t iodepth = 0;
  std::string bs;
  uint32_t files = 0;
  std::string runtime;
  std::string ramp = "0";
  bool buffered = false;
  std::string engine;
  EngineCliOptions common;
};
void AddAiOptions(CLI::App* cmd, AiCliOptions* opts);
// One spec per pattern ("all" gives the four, with phase names prefixed).
// Every spec is checked, sizes included, before any runs: a --size too
// small for a pattern names the smallest valid --size (for "all": the
// smallest valid for every pattern). `ranks`: MPI ranks sharing the work.
Result<std::vector<IoSpec>> ToAiSpecs(const AiCliOptions& opts, bool keep, bool progress,
                                      uint32_t ranks = 1);

struct SweepCliOptions {
  std::string path;
  std::string size = "1G";
  std::string record = "16M";
  uint32_t max_threads = 8;
  std::string threads;  // explicit list, overrides --max-threads
  bool direct = false;
  bool no_stonewall = false;
  bool no_invalidate = false;
  uint32_t iodepth = 1;
  EngineCliOptions engine;
};
void AddSweepOptions(CLI::App* cmd, SweepCliOptions* opts);
Result<SweepSpec> ToSweepSpec(const SweepCliOptions& opts, bool keep, bool progress);

struct MetaCliOptions {
  std::string path;
  uint32_t threads = 1;
  uint64_t items = 1000;
  bool shared_dir = false;
  bool files_only = false;
  bool dirs_only = false;
  std::string write_bytes = "0";
  bool neighbor = false;
  bool no_list = false;
  bool no_rename = false;
};
void AddMetaOptions(CLI::App* cmd, MetaCliOptions* opts);
Result<MetaSpec> ToMetaSpec(const MetaCliOptions& opts, bool keep, bool progress);

}  // namespace t0fs::bench
