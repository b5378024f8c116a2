// The training workloads of MLPerf Storage (spec §2.1): the parameters of
// each (workload, accelerator) pair exactly as in the reference YAML files,
// and the editions in which the pair is a CLOSED submission.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "bench/mlperf/edition.h"
#include "common/status.h"

namespace t0fs::bench::mlperf {

enum class Container { kNpz, kTfRecord, kRaw };
// PyTorch map-style loader (read_threads workers, each building whole
// batches of whole-file samples) or tf.data (read_threads interleaved
// sequential record streams).
enum class LoaderKind { kTorch, kTf };

struct TrainingWorkload {
  std::string workload;     // unet3d, resnet50, cosmoflow, retinanet
  std::string accelerator;  // a100, h100, b200, mi355
  Container container = Container::kNpz;
  std::string ext;          // file extension: npz, tfrecord, jpeg
  LoaderKind loader = LoaderKind::kTorch;
  double record_length = 0;         // bytes, mean (record_length_bytes)
  double record_length_stdev = 0;   // record_length_bytes_stdev
  uint32_t samples_per_file = 1;
  uint32_t batch_size = 1;
  uint32_t read_threads = 1;
  uint32_t computation_threads = 1;
  uint32_t prefetch_size = 2;
  double computation_time = 0;      // seconds per batch (the emulated accelerator step)
  uint32_t epochs = 5;
  double min_au = 0.9;              // pass threshold, fraction
  bool shuffle = true;              // file/sample shuffle "seed" (false = none)
  uint64_t default_num_files = 0;   // the v3.0 YAML default (0 = none)
  uint64_t transfer_size = 262144;  // TF reader buffer_size
  std::vector<Edition> closed;      // editions in which the pair is CLOSED
};

// The parameters of (workload, accelerator); an error names the valid pairs.
Result<TrainingWorkload> LookupWorkload(std::string_view workload, std::string_view accelerator);
bool IsClosed(const TrainingWorkload& w, Edition edition);
std::string_view ContainerName(Container c);
// "unet3d a100|h100|b200, resnet50 a100|h100, ..." for help texts.
std::string WorkloadTableHelp();

}  // namespace t0fs::bench::mlperf
