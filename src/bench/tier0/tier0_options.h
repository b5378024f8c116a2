// Options of `t0fs bench tier0-vs-networked` and their validation: the text
// the user typed becomes a checked Tier0Plan (numbers, node lists, the test
// sizes of a full or a --quick run) before anything is created, so bad input
// is one line and nothing to clean up.
//
// Thread safety: values.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::bench::tier0 {

// What the user typed.
struct Tier0Options {
  uint32_t gpu_nodes = 2;
  uint32_t storage_nodes = 1;
  std::string link = "10gbit";
  // Empty / 0: the default of a full run or of a --quick run.
  std::string size;          // per client: 1G, --quick 8M
  std::string runtime;       // per timed test: 10s, --quick 1s
  uint32_t threads = 0;      // per client, 1 MiB and 4 KiB tests: 4, --quick 2
  std::string out;
  bool quick = false;
  bool keep = false;
  std::string chunk_size = "64M";
  uint32_t mlperf_scale = 0;  // 64, --quick 4096
  uint32_t mlperf_max = 0;    // 16, --quick 4
  // --hosts mode: a cluster that already runs.
  bool hosts = false;
  std::string meta;
  std::string secret_file;
  std::string gpu_mounts;        // "1=local:/mnt/t0fs,2=gpu2:/mnt/t0fs"
  std::string storage_node_ids;  // "3,4"
  std::string remote_t0fs = "t0fs";
};

// One GPU node of --hosts mode: its data node id, where commands run
// ("local" or an ssh destination) and its t0fs mount there.
struct HostMount {
  uint64_t node_id = 0;
  std::string host;
  std::string mount;
  bool IsLocal() const;
};

// The checked plan.
struct Tier0Plan {
  uint32_t gpu_nodes = 0;
  uint32_t storage_nodes = 0;
  std::string link;             // tc rate text ("" in --hosts mode without --link)
  uint64_t link_bits_per_s = 0;
  std::string link_burst;       // tbf burst for that rate
  uint64_t size = 0;            // bytes per client, 1 MiB and 4 KiB tests
  double runtime_s = 0;         // time-based tests
  double ramp_s = 0;
  uint32_t threads = 0;
  uint32_t rand_iodepth = 0;
  uint64_t ai_size = 0;
  uint32_t ai_threads = 0;      // 0: the patterns' own
  uint32_t ai_files = 0;        // 0: the patterns' own
  uint64_t chunk_size = 0;
  // MLPerf unet3d h100, records scaled down by mlperf_scale.
  uint32_t mlperf_scale = 0;
  uint32_t mlperf_max = 0;
  uint32_t mlperf_files = 0;
  uint32_t mlperf_steps = 0;
  std::string out;
  bool quick = false;
  bool keep = false;
  bool hosts = false;
  std::string meta;
  std::string secret_file;
  std::vector<HostMount> mounts;           // --hosts: GPU nodes
  std::vector<uint64_t> storage_node_ids;  // --hosts: storage nodes
  std::string remote_t0fs;
};

Result<Tier0Plan> MakePlan(const Tier0Options& opts);

// "10gbit", "500mbit", "100kbit", "1000000bit" (tc's units, bits per second).
Result<uint64_t> ParseLinkRate(const std::string& text);
// tbf burst for a rate: 256kb below 10 Gbit/s, 4mb at or above (a bucket too
// small for the rate caps it below the set rate).
std::string BurstFor(uint64_t bits_per_s);
// "1=local:/mnt/t0fs,2=gpu2:/mnt/t0fs"
Result<std::vector<HostMount>> ParseGpuMounts(const std::string& text);
// "3,4"
Result<std::vector<uint64_t>> ParseNodeIds(const std::string& text);

}  // namespace t0fs::bench::tier0
