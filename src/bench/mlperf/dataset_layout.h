// Where the files of a training dataset live, by DLIO's naming convention
// (spec §2.2): <data-dir>/<workload>/train/[<i % K>/]img_<i>_of_<N>.<ext>,
// i zero-padded to len(str(N)), the subfolder to len(str(K)); TFRecord
// indexes in <data-dir>/<workload>/index/train/<file>.idx. Names are derived
// from the index, never listed, so a rank needs no copy of the file list.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::bench::mlperf {

struct DatasetLayout {
  std::string root;          // <data-dir>/<workload>
  std::string ext;           // npz, tfrecord, jpeg
  uint64_t total_files = 0;  // N in the names (files generated)
  uint32_t subfolders = 0;   // K; 0 or 1 = flat train/
  std::string prefix = "img";

  std::string TrainDir() const { return root + "/train"; }
  std::string FileName(uint64_t index) const;
  std::string FilePath(uint64_t index) const;
  std::string IndexPath(uint64_t index) const;  // TFRecord (DALI) index
  // Directories datagen creates (train/, valid/, subfolders, index/train).
  std::vector<std::string> Directories(bool with_index) const;
};

// Reads <root>/train once to find the generated dataset: N from the first
// file name ("img_…_of_N.ext"), K = number of subfolders (0 if flat).
Result<DatasetLayout> DetectDataset(const std::string& root, const std::string& ext);

}  // namespace t0fs::bench::mlperf
