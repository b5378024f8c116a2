#include "bench/mlperf/training_config.h"

#include <algorithm>

#include <fmt/format.h>

namespace t0fs::bench::mlperf {
namespace {

using E = Edition;

TrainingWorkload Unet3d(std::string accel, double compute, std::vector<Edition> closed) {
  TrainingWorkload w;
  w.workload = "unet3d";
  w.accelerator = std::move(accel);
  w.container = Container::kNpz;
  w.ext = "npz";
  w.loader = LoaderKind::kTorch;
  w.record_length = 146600628;
  w.record_length_stdev = 68341808;
  w.batch_size = 7;
  w.read_threads = 4;
  w.computation_time = compute;
  w.epochs = 5;
  w.min_au = 0.90;
  w.closed = std::move(closed);
  return w;
}

TrainingWorkload Resnet50(std::string accel, double compute) {
  TrainingWorkload w;
  w.workload = "resnet50";
  w.accelerator = std::move(accel);
  w.container = Container::kTfRecord;
  w.ext = "tfrecord";
  w.loader = LoaderKind::kTf;
  w.record_length = 114660.07;
  w.samples_per_file = 1251;
  w.batch_size = 400;
  w.read_threads = 8;
  w.computation_threads = 8;
  w.computation_time = compute;
  w.min_au = 0.90;
  w.shuffle = false;
  w.closed = {E::k1_0, E::k2_0};
  return w;
}

TrainingWorkload Cosmoflow(std::string accel, double compute) {
  TrainingWorkload w;
  w.workload = "cosmoflow";
  w.accelerator = std::move(accel);
  w.container = Container::kTfRecord;
  w.ext = "tfrecord";
  w.loader = LoaderKind::kTf;
  w.record_length = 2828486;
  w.record_length_stdev = 71311;
  w.batch_size = 1;
  w.read_threads = 4;
  w.computation_time = compute;
  w.min_au = 0.70;
  w.closed = {E::k1_0, E::k2_0};
  return w;
}

TrainingWorkload Retinanet(std::string accel, uint32_t batch, double compute) {
  TrainingWorkload w;
  w.workload = "retinanet";
  w.accelerator = std::move(accel);
  w.container = Container::kRaw;
  w.ext = "jpeg";
  w.loader = LoaderKind::kTorch;
  w.record_length = 322957;
  w.batch_size = batch;
  w.read_threads = 8;
  w.computation_time = compute;
  w.epochs = 8;
  w.min_au = 0.85;
  w.default_num_files = 1170301;
  w.closed = {E::k3_0};
  return w;
}

std::vector<TrainingWorkload> Table() {
  TrainingWorkload b200 = Unet3d("b200", 0.162, {E::k3_0});
  b200.default_num_files = 7200;
  return {
      Unet3d("a100", 0.636, {E::k1_0, E::k2_0}),
      Unet3d("h100", 0.323, {E::k1_0, E::k2_0}),
      b200,
      Resnet50("a100", 0.435),
      Resnet50("h100", 0.224),
      Cosmoflow("a100", 0.00551),
      Cosmoflow("h100", 0.00350),
      // mi355: the index's values (batch 32, 0.0634 s); the v3.0.1 fork has
      // batch 36, 0.071325 s (select with --batch-size/--computation-time).
      Retinanet("b200", 24, 0.04755),
      Retinanet("mi355", 32, 0.0634),
  };
}

}  // namespace

Result<TrainingWorkload> LookupWorkload(std::string_view workload, std::string_view accelerator) {
  for (const auto& w : Table()) {
    if (w.workload == workload && w.accelerator == accelerator) return w;
  }
  return Status(StatusCode::kInvalidArgument,
                fmt::format("no MLPerf parameters for {} on {} (defined: {})", workload,
                            accelerator, WorkloadTableHelp()));
}

bool IsClosed(const TrainingWorkload& w, Edition edition) {
  return std::find(w.closed.begin(), w.closed.end(), edition) != w.closed.end();
}

std::string_view ContainerName(Container c) {
  switch (c) {
    case Container::kNpz: return "npz";
    case Container::kTfRecord: return "tfrecord";
    case Container::kRaw: return "raw";
  }
  return "?";
}

std::string WorkloadTableHelp() {
  std::string out;
  std::string last;
  for (const auto& w : Table()) {
    if (w.workload != last) {
      if (!last.empty()) out += ", ";
      out += w.workload + " " + w.accelerator;
      last = w.workload;
    } else {
      out += "|" + w.accelerator;
    }
  }
  return out;
}

}  // namespace t0fs::bench::mlperf
