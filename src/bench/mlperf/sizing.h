// Dataset sizing ("datasize", spec §2.3): the dataset must hold at least
// 5x the clients' total RAM and give every rank at least 500 steps per epoch.
// Pure arithmetic, in mlpstorage's integer-floor form.
#pragma once

#include <cstdint>

namespace t0fs::bench::mlperf {

struct SizingInput {
  double record_length = 0;  // bytes per sample (configured mean)
  uint32_t samples_per_file = 1;
  uint32_t batch_size = 1;
  uint64_t accelerators = 1;  // in total, over all hosts
  uint32_t hosts = 1;
  double host_memory_gib = 0;  // per host
};

struct Sizing {
  uint64_t files_by_memory = 0;  // (5 * total_mem_bytes) // (spf * record_length)
  uint64_t files_by_steps = 0;   // (500 * accelerators * batch) // spf
  uint64_t required_files = 0;   // the larger
  double file_bytes = 0;         // spf * record_length
  double total_bytes = 0;        // required * file_bytes
  uint64_t suggested_subfolders = 0;  // files / 10,000 when above 10,000 files, else 0
};

inline constexpr uint64_t kMinStepsPerEpoch = 500;
inline constexpr double kMemoryMultiple = 5.0;
inline constexpr uint64_t kFilesPerFolderHint = 10000;

Sizing ComputeSizing(const SizingInput& in);

// MemTotal of /proc/meminfo in GiB (0 if unreadable).
double HostMemoryGib();

}  // namespace t0fs::bench::mlperf
