#include "bench/mlperf/au_metrics.h"

#include <cmath>

namespace t0fs::bench::mlperf {

double Mean(std::span<const double> values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double PopulationStdev(std::span<const double> values) {
  if (values.empty()) return 0;
  double mean = Mean(values);
  double acc = 0;
  for (double v : values) acc += (v - mean) * (v - mean);
  return std::sqrt(acc / static_cast<double>(values.size()));
}

BlockMetrics ComputeBlock(std::span<const double> compute_s, std::span<const double> proc_s,
                          double block_s, uint32_t batch, Edition edition) {
  BlockMetrics m;
  m.steps = compute_s.size();
  if (m.steps == 0) return m;
  const double n = static_cast<double>(m.steps);
  const double window = block_s - (proc_s.empty() ? 0 : proc_s[0]);
  double busy = 0;
  for (size_t idx = 1; idx < compute_s.size(); ++idx) busy += compute_s[idx];
  m.au = window > 0 ? busy / window : 0;
  switch (edition) {
    case Edition::k1_0: m.throughput = block_s > 0 ? n * batch / block_s : 0; break;
    case Edition::k2_0:
      m.throughput = window > 0 && n > 2 ? (n - 2) * batch / window : 0;
      break;
    case Edition::k3_0:
      m.throughput = window > 0 && n > 1 ? (n - 1) * batch / window : 0;
      break;
  }
  return m;
}

BlockMetrics CombineBlocks(std::span<const BlockMetrics> blocks) {
  BlockMetrics out;
  for (const auto& b : blocks) out.steps += b.steps;
  if (out.steps == 0) return out;
  for (const auto& b : blocks) {
    double w = static_cast<double>(b.steps) / static_cast<double>(out.steps);
    out.au += b.au * w;
    out.throughput += b.throughput * w;
  }
  return out;
}

RunMetrics AggregateRun(const std::vector<std::vector<BlockMetrics>>& per_rank,
                        double record_length, double min_au) {
  RunMetrics r;
  if (per_rank.empty()) return r;
  size_t epochs = per_rank.front().size();
  for (size_t e = 0; e < epochs; ++e) {
    double au = 0, thr = 0;
    for (const auto& rank : per_rank) {
      au += rank[e].au;
      thr += rank[e].throughput;
    }
    r.au_pct.push_back(100.0 * au / static_cast<double>(per_rank.size()));
    r.throughput.push_back(thr);
  }
  r.au_mean_pct = Mean(r.au_pct);
  r.au_stdev_pct = PopulationStdev(r.au_pct);
  r.throughput_mean = Mean(r.throughput);
  r.throughput_stdev = PopulationStdev(r.throughput);
  r.io_mean_mib = r.throughput_mean * record_length / 1048576.0;
  r.io_stdev_mib = r.throughput_stdev * record_length / 1048576.0;
  r.pass = r.au_mean_pct >= min_au * 100.0;
  return r;
}

}  // namespace t0fs::bench::mlperf
