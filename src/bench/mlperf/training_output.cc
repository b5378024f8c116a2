#include "bench/mlperf/training_output.h"

#include <unistd.h>

#include <thread>

#include <fmt/format.h>

#include "bench/mlperf/sizing.h"
#include "common/host_name.h"

namespace t0fs::bench::mlperf {

std::string EpochLine(const EpochInfo& e, const TrainingSpec& spec) {
  const auto& w = spec.workload;
  return fmt::format(
      "epoch {}/{}  {:.1f} s  AU {:.2f} %  throughput {:.2f} samples/s  I/O {:.1f} MiB/s  "
      "compute/step {:.4f}±{:.4f} s (set {:.4f})  load wait/step {:.4f} s\n    {}\n",
      e.epoch, w.epochs, e.seconds, e.au_pct, e.throughput,
      e.throughput * w.record_length / 1048576.0, e.compute_mean_s, e.compute_stdev_s,
      w.computation_time, e.load_mean_s, e.cache_note);
}

std::string MetricBlock(const TrainingResult& r, const TrainingSpec& spec) {
  const RunMetrics& m = r.metrics;
  std::string out;
  out += fmt::format("[METRIC] Number of Simulated Accelerators: {}\n", spec.accelerators);
  out += fmt::format("[METRIC] Training Accelerator Utilization [AU] (%): {:.4f} ({:.4f})\n",
                     m.au_mean_pct, m.au_stdev_pct);
  out += fmt::format("[METRIC] Training Throughput (samples/second): {:.4f} ({:.4f})\n",
                     m.throughput_mean, m.throughput_stdev);
  out += fmt::format("[METRIC] Training I/O Throughput (MiB/second): {:.4f} ({:.4f})\n",
                     m.io_mean_mib, m.io_stdev_mib);
  out += fmt::format("[METRIC] train_au_meet_expectation: {} (threshold {:.0f} %)\n",
                     m.pass ? "success" : "fail", spec.workload.min_au * 100);
  out += fmt::format("[METRIC] Client CPU seconds per simulated accelerator-second: {:.4f}\n",
                     r.CpuPerAcceleratorSecond(spec.accelerators));
  return out;
}

nlohmann::json SummaryJson(const TrainingResult& r, const TrainingSpec& spec) {
  using nlohmann::json;
  const auto& w = spec.workload;
  const RunMetrics& m = r.metrics;
  const std::string host = HostName();
  double mem_gb = HostMemoryGib();
  double data_bytes = 0;
  // Mean file size × files used (the generated sizes are not listed).
  data_bytes = static_cast<double>(spec.files) * w.record_length * w.samples_per_file;
  double per_host_gb = data_bytes / 1073741824.0 / std::max(1, r.hosts);
  json metric = {
      {"train_au_percentage", m.au_pct},
      {"train_au_mean_percentage", m.au_mean_pct},
      {"train_au_stdev_percentage", m.au_stdev_pct},
      {"train_au_meet_expectation", m.pass ? "success" : "fail"},
      {"train_throughput_samples_per_second", m.throughput},
      {"train_throughput_mean_samples_per_second", m.throughput_mean},
      {"train_throughput_stdev_samples_per_second", m.throughput_stdev},
      {"train_io_mean_MB_per_second", m.io_mean_mib},
      {"train_io_stdev_MB_per_second", m.io_stdev_mib},
  };
  json cache_notes = json::array();
  for (const auto& e : r.epochs) cache_notes.push_back(e.cache_note);
  return {
      {"start", r.start},
      {"end", r.end},
      {"num_accelerators", spec.accelerators},
      {"num_hosts", r.hosts},
      {"hostname", host},
      {"num_files_train", spec.files},
      {"num_files_eval", 0},
      {"num_samples_per_file", w.samples_per_file},
      {"host_cpu_count", json::array({std::thread::hardware_concurrency()})},
      {"host_memory_GB", json::array({mem_gb})},
      {"data_size_per_host_GB", per_host_gb},
      {"potential_caching", json::array({per_host_gb <= mem_gb})},
      {"epochs", w.epochs},
      {"metric", metric},
      {"t0fs",
       {{"edition", EditionName(spec.edition)},
        {"sharding", ShardingName(spec.sharding)},
        {"workload", w.workload},
        {"accelerator", w.accelerator},
        {"closed_combination", IsClosed(w, spec.edition)},
        {"steps_per_epoch", r.steps_per_epoch},
        {"bytes_read", r.bytes},
        {"samples_read", r.samples},
        {"wall_seconds", r.wall_s},
        {"client_cpu_seconds", r.cpu_seconds},
        {"cpu_seconds_per_accelerator_second", r.CpuPerAcceleratorSecond(spec.accelerators)},
        {"page_cache", cache_notes}}},
  };
}

nlohmann::json PerEpochStatsJson(const TrainingResult& r) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& e : r.epochs) {
    j[std::to_string(e.epoch)] = {{"start", e.start},
                                  {"end", e.end},
                                  {"duration", fmt::format("{:.2f}", e.seconds)},
                                  {"block1", {{"start", e.start}, {"end", e.end}}}};
  }
  return j;
}

nlohmann::json TrainingParams(const TrainingSpec& spec) {
  const auto& w = spec.workload;
  return {{"path", spec.layout.root},
          {"workload", w.workload},
          {"accelerator", w.accelerator},
          {"accelerators", spec.accelerators},
          {"edition", EditionName(spec.edition)},
          {"sharding", ShardingName(spec.sharding)},
          {"format", ContainerName(w.container)},
          {"num_files_train", spec.files},
          {"record_length_bytes", w.record_length},
          {"record_length_bytes_stdev", w.record_length_stdev},
          {"num_samples_per_file", w.samples_per_file},
          {"batch_size", w.batch_size},
          {"read_threads", w.read_threads},
          {"prefetch_size", w.prefetch_size},
          {"computation_time", w.computation_time},
          {"epochs", w.epochs},
          {"min_au", w.min_au},
          {"engine", std::string(EngineName(spec.engine.kind))},
          {"direct", spec.read.direct},
          {"transfer_size", spec.read.transfer},
          {"iodepth", spec.engine.depth}};
}

PhaseResult TrainingPhase(const TrainingResult& r, const TrainingSpec& spec) {
  PhaseResult p;
  p.name = "train";
  p.workers = spec.accelerators;
  double elapsed = 0;
  for (const auto& e : r.epochs) elapsed += e.seconds;
  p.last_done = {elapsed, r.bytes, r.samples};
  p.first_done = p.last_done;
  p.latency = r.latency;
  p.cpu = r.cpu;
  p.peak_rss = r.peak_rss;
  const RunMetrics& m = r.metrics;
  auto add = [&](std::string name, double value, std::string unit, Better better,
                 std::string label) {
    p.figures.push_back({std::move(name), value, std::move(unit), better, std::move(label)});
  };
  add("x_au", m.au_mean_pct, "%", Better::kHigher, "Accelerator utilisation (AU)");
  add("x_throughput", m.throughput_mean, "samples/s", Better::kHigher, "Training throughput");
  add("x_io", m.io_mean_mib * 1048576.0, "B/s", Better::kHigher, "Training I/O (reference)");
  add("x_pass", m.pass ? 1 : 0, "pass", Better::kHigher, "AU >= threshold (1 = pass)");
  add("x_cpu_per_accel_s", r.CpuPerAcceleratorSecond(spec.accelerators), "s/s", Better::kLower,
      "CPU s per accelerator-second");
  p.ComputeFigures();
  return p;
}

}  // namespace t0fs::bench::mlperf
