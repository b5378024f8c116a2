// The result model (result.h): a phase's headline figures, the median and CV
// over runs, the page-cache report. The file forms are in result_files.cc,
// the formatting of values in result_format.cc.
#include "bench/result.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace t0fs::bench {

void PhaseResult::ComputeFigures() {
  std::vector<Figure> kept;
  for (auto& fig : figures) {
    if (fig.name.rfind("x_", 0) == 0) kept.push_back(fig);
  }
  figures.clear();
  auto add = [this](std::string name, double value, std::string unit, Better better,
                    std::string label) {
    figures.push_back({std::move(name), value, std::move(unit), better, std::move(label)});
  };
  auto rate = [](double n, double s) { return s > 0 ? n / s : 0.0; };
  if (has_bytes) {
    add("bw", rate(last_done.bytes, last_done.elapsed_s), "B/s", Better::kHigher,
        "Bandwidth (last done)");
    add("iops", rate(last_done.ops, last_done.elapsed_s), "IOPS", Better::kHigher,
        "IOPS (last done)");
    add("bw_first", rate(first_done.bytes, first_done.elapsed_s), "B/s", Better::kHigher,
        "Bandwidth (first done)");
    add("iops_first", rate(first_done.ops, first_done.elapsed_s), "IOPS", Better::kHigher,
        "IOPS (first done)");
  } else {
    add("ops", rate(last_done.ops, last_done.elapsed_s), "ops/s", Better::kHigher,
        "Operations/s (last done)");
    add("ops_first", rate(first_done.ops, first_done.elapsed_s), "ops/s", Better::kHigher,
        "Operations/s (first done)");
  }
  add("elapsed", last_done.elapsed_s, "s", Better::kLower, "Elapsed (last done)");
  if (latency.count() > 0) {
    add("lat_mean", latency.Mean(), "ns", Better::kLower, "Latency mean");
    add("lat_p50", static_cast<double>(latency.Percentile(50)), "ns", Better::kLower,
        "Latency p50");
    add("lat_p99", static_cast<double>(latency.Percentile(99)), "ns", Better::kLower,
        "Latency p99");
    add("lat_p999", static_cast<double>(latency.Percentile(99.9)), "ns", Better::kLower,
        "Latency p99.9");
    add("lat_max", static_cast<double>(latency.max()), "ns", Better::kLower, "Latency max");
  }
  double cpu_s = cpu.user_s + cpu.sys_s;
  add("cpu_user", cpu.user_s, "s", Better::kLower, "CPU user (benchmark)");
  add("cpu_sys", cpu.sys_s, "s", Better::kLower, "CPU sys (benchmark)");
  if (has_bytes && last_done.bytes > 0) {
    add("cpu_per_gb", cpu_s / (static_cast<double>(last_done.bytes) / 1e9), "s/GB",
        Better::kLower, "CPU seconds per GB");
  }
  add("machine_busy", cpu.machine_busy_pct, "%", Better::kLower, "Machine CPU busy");
  add("peak_rss", static_cast<double>(peak_rss), "B", Better::kLower, "Peak memory (RSS)");
  for (auto& fig : kept) figures.push_back(std::move(fig));
}

const Figure* PhaseResult::Find(const std::string& figure) const {
  for (const auto& fig : figures) {
    if (fig.name == figure) return &fig;
  }
  return nullptr;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double CoefficientOfVariation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  double mean = 0;
  for (double v : values) mean += v;
  mean /= static_cast<double>(values.size());
  if (mean == 0) return 0;
  double acc = 0;
  for (double v : values) acc += (v - mean) * (v - mean);
  return 100.0 * std::sqrt(acc / static_cast<double>(values.size() - 1)) / std::fabs(mean);
}

std::vector<FigureSummary> ResultSet::Summarize() const {
  std::vector<FigureSummary> out;
  if (runs.empty()) return out;
  // Figures are keyed by (phase name, figure name), in the first run's order.
  for (const auto& phase : runs.front().phases) {
    for (const auto& fig : phase.figures) {
      std::vector<double> values;
      for (const auto& run : runs) {
        for (const auto& p : run.phases) {
          if (p.name != phase.name) continue;
          if (const Figure* f = p.Find(fig.name)) values.push_back(f->value);
        }
      }
      FigureSummary s;
      s.phase = phase.name;
      s.figure = fig;
      s.figure.value = Median(values);
      s.runs = values.size();
      s.cv_pct = CoefficientOfVariation(values);
      if (!values.empty()) {
        s.min = *std::min_element(values.begin(), values.end());
        s.max = *std::max_element(values.begin(), values.end());
        double sum = 0;
        for (double v : values) sum += v;
        s.mean = sum / static_cast<double>(values.size());
      }
      out.push_back(std::move(s));
    }
  }
  return out;
}

void CacheReport::AddWarning(const std::string& warning) {
  if (warning.empty()) return;
  if (std::find(warnings.begin(), warnings.end(), warning) == warnings.end()) {
    warnings.push_back(warning);
  }
}

void CacheReport::Merge(const CacheReport& other) {
  if (!other.applicable()) return;
  if (!applicable()) {
    *this = other;
    return;
  }
  if (requested != other.requested) requested = "mixed";
  if (done != other.done) done = "mixed";
  drops += other.drops;
  resident = std::max(resident, other.resident);
  files_checked = std::max(files_checked, other.files_checked);
  files = std::max(files, other.files);
  for (const auto& w : other.warnings) AddWarning(w);
}

std::string CacheReport::Describe() const {
  if (!applicable()) return "not applicable (no reads)";
  std::string what;
  if (done == "sysctl") what = "dropped with /proc/sys/vm/drop_caches";
  else if (done == "fadvise") what = "dropped with posix_fadvise(DONTNEED) on the files";
  else if (done == "both") what = "dropped with drop_caches and fadvise(DONTNEED)";
  else if (done == "none") what = "NOT dropped (--drop-caches none)";
  else if (done == "direct") what = "O_DIRECT reads bypass the page cache; nothing dropped";
  else if (done == "unrecorded") return "not recorded (a result from an older t0fs)";
  else what = "dropped in different ways (" + done + ")";
  if (!requested.empty() && requested != done && done != "direct") {
    what += " (--drop-caches " + requested + ")";
  }
  if (done == "direct") return what;
  if (resident < 0) return what + "; residency not measured";
  return what + fmt::format("; {:.1f} % of the files' pages resident afterwards ({} of {} file{} "
                            "checked{})",
                            resident * 100, files_checked, files, files == 1 ? "" : "s",
                            drops > 1 ? fmt::format(", worst of {} drops", drops) : "");
}

CacheReport ResultSet::Cache() const {
  CacheReport all;
  for (const auto& run : runs) all.Merge(run.cache);
  return all;
}

}  // namespace t0fs::bench
