// The io workload's spec (`t0fs bench io` options): the read/write mode, the
// checks of the arguments, and the dataset a spec gives (with the smallest
// valid --size when it is too small). No I/O beyond looking at PATH.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "bench/cache_drop.h"
#include "bench/dataset.h"
#include "bench/engine.h"
#include "common/status.h"

namespace t0fs::bench {

enum class RwMode { kRead, kWrite, kRandRead, kRandWrite, kRandRW };
Result<RwMode> ParseRwMode(std::string_view text);
std::string_view RwModeName(RwMode mode);

struct IoSpec {
  std::string path;
  RwMode rw = RwMode::kRead;
  uint32_t rwmixread = 50;      // % reads for randrw
  uint64_t block = 1 << 20;
  uint32_t threads = 1;         // per rank
  uint32_t iodepth = 1;
  bool direct = false;
  uint64_t size = 0;            // see DatasetSpec (per thread or total)
  Split split = Split::kPerThread;
  FileLayout layout = FileLayout::kPerThreadFiles;
  bool layout_given = false;    // else a file PATH picks the shared layout
  uint32_t nrfiles = 1;
  double runtime_s = 0;         // > 0: time-based (loop over the data)
  double ramp_s = 0;            // time-based only: I/O before stats start
  bool end_fsync = false;       // fsync every written file, inside the timing
  EngineOptions engine;
  bool verify = false;
  uint64_t seed = 0x7430667362656e63ULL;
  bool keep = false;            // keep the files the run created
  CacheDropMode drop = CacheDropMode::kAuto;  // before reading (buffered reads only)
  bool progress = false;
  std::string phase_prefix;     // prepended to phase names ("")
};

// Checks the spec (arguments only; no file system access).
Status ValidateIoSpec(const IoSpec& spec);
// The dataset the spec gives with `ranks` MPI ranks, after looking at PATH
// (a file PATH means one shared file): the checks of a run's setup, done
// before anything is written. A --size too small for the layout names the
// smallest valid --size.
Result<DatasetSpec> PlanIoDataset(const IoSpec& spec, uint32_t ranks);
// The smallest --size for which the spec's dataset gives every file at
// least one block and every thread at least one block to work on.
uint64_t MinimumIoSize(const IoSpec& spec, uint32_t ranks);
// An exact size argument that parses back to `bytes`: "2G", "1536M", "4097".
std::string SizeArgument(uint64_t bytes);

}  // namespace t0fs::bench
