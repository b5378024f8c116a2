#include "bench/mlperf/sizing.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>

namespace t0fs::bench::mlperf {

Sizing ComputeSizing(const SizingInput& in) {
  Sizing s;
  s.file_bytes = static_cast<double>(in.samples_per_file) * in.record_length;
  // mlpstorage: total_mem_bytes = hosts * GiB * 2^30; files_by_bytes =
  // (5 * total_mem_bytes) // (spf * record_length) (Python floor division).
  double total_mem = static_cast<double>(in.hosts) * in.host_memory_gib * 1073741824.0;
  s.files_by_memory =
      s.file_bytes > 0 ? static_cast<uint64_t>(std::floor(kMemoryMultiple * total_mem / s.file_bytes))
                       : 0;
  s.files_by_steps = kMinStepsPerEpoch * in.accelerators * in.batch_size /
                     std::max<uint32_t>(1, in.samples_per_file);
  s.required_files = std::max(s.files_by_memory, s.files_by_steps);
  s.total_bytes = static_cast<double>(s.required_files) * s.file_bytes;
  if (s.required_files > kFilesPerFolderHint) {
    s.suggested_subfolders = (s.required_files + kFilesPerFolderHint - 1) / kFilesPerFolderHint;
  }
  return s;
}

double HostMemoryGib() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (in >> key >> kib) {
    if (key == "MemTotal:") return static_cast<double>(kib) / (1024.0 * 1024.0);
    in.ignore(1 << 10, '\n');
  }
  return 0;
}

}  // namespace t0fs::bench::mlperf
