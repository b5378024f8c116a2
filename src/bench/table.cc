#include "bench/table.h"

#include <fmt/format.h>

namespace t0fs::bench {

std::string FormatHeader(const ResultSet& set) {
  std::string out = fmt::format("t0fs bench {}: {}\n", set.kind, set.workload);
  const auto& p = set.params;
  if (p.contains("path")) out += fmt::format("  path       {}\n", p["path"].get<std::string>());
  if (p.contains("dataset")) {
    out += fmt::format("  dataset    {}\n", p["dataset"].get<std::string>());
  }
  if (p.contains("engine")) {
    out += fmt::format("  engine     {}{}\n", p["engine"].get<std::string>(),
                       p.value("direct", false) ? ", O_DIRECT" : ", buffered");
  }
  out += fmt::format("  label      {}   host {}   ranks {}   runs {}\n", set.label, set.host,
                     set.ranks, set.runs.size());
  CacheReport cache = set.Cache();
  if (cache.applicable()) out += fmt::format("  cache      {}\n", cache.Describe());
  for (const std::string& warning : cache.warnings) {
    out += fmt::format("  WARNING    {}\n", warning);
  }
  if (set.stopped_early()) {
    out += fmt::format("  STOPPED EARLY by {}: the figures cover only the part that ran\n",
                       set.stopped_by);
  }
  return out;
}

static std::string Pad(const std::string& s, size_t width) {
  return s.size() >= width ? s : s + std::string(width - s.size(), ' ');
}
static std::string RPad(const std::string& s, size_t width) {
  return s.size() >= width ? s : std::string(width - s.size(), ' ') + s;
}

std::string FormatPhase(const PhaseResult& p) {
  std::string out;
  std::string blank(14, ' ');
  // A long phase name ("random-sampling read") gets a line of its own.
  std::string name = p.name.size() < 14 ? Pad(p.name, 14) : blank;
  if (p.name.size() >= 14) out = p.name + "\n";
  bool first_row = true;
  auto row = [&](const std::string& what, const std::string& first, const std::string& last) {
    out += fmt::format("{}{}{}{}\n", first_row ? name : blank, Pad(what, 18), RPad(first, 14),
                       RPad(last, 14));
    first_row = false;
  };
  auto rate = [](double n, double s) { return s > 0 ? n / s : 0.0; };
  row("", "FIRST DONE", "LAST DONE");
  row("Elapsed", FormatValue(p.first_done.elapsed_s, "s"), FormatValue(p.last_done.elapsed_s, "s"));
  if (p.has_bytes) {
    row("Throughput", FormatBytesPerSec(rate(p.first_done.bytes, p.first_done.elapsed_s)),
        FormatBytesPerSec(rate(p.last_done.bytes, p.last_done.elapsed_s)));
    row("IOPS", FormatValue(rate(p.first_done.ops, p.first_done.elapsed_s), "IOPS"),
        FormatValue(rate(p.last_done.ops, p.last_done.elapsed_s), "IOPS"));
    row("Data", FormatValue(static_cast<double>(p.first_done.bytes), "B"),
        FormatValue(static_cast<double>(p.last_done.bytes), "B"));
  } else {
    row("Ops/s", FormatValue(rate(p.first_done.ops, p.first_done.elapsed_s), "ops/s"),
        FormatValue(rate(p.last_done.ops, p.last_done.elapsed_s), "ops/s"));
    row("Operations", fmt::format("{}", p.first_done.ops), fmt::format("{}", p.last_done.ops));
  }
  std::string indent = blank;
  if (p.latency.count() > 0) {
    out += fmt::format("{}Latency           mean {}  p50 {}  p99 {}  p99.9 {}  max {}\n", indent,
                       FormatNanos(p.latency.Mean()),
                       FormatNanos(static_cast<double>(p.latency.Percentile(50))),
                       FormatNanos(static_cast<double>(p.latency.Percentile(99))),
                       FormatNanos(static_cast<double>(p.latency.Percentile(99.9))),
                       FormatNanos(static_cast<double>(p.latency.max())));
  }
  double cpu_s = p.cpu.user_s + p.cpu.sys_s;
  std::string per_gb;
  if (p.has_bytes && p.last_done.bytes > 0) {
    per_gb = fmt::format("  {:.3f} s/GB", cpu_s / (static_cast<double>(p.last_done.bytes) / 1e9));
  }
  out += fmt::format("{}CPU (benchmark)   user {:.2f} s  sys {:.2f} s  = {:.0f} % of a core{}\n",
                     indent, p.cpu.user_s, p.cpu.sys_s, p.cpu.proc_util_pct, per_gb);
  out += fmt::format("{}CPU (machine)     busy {:.1f} %  user {:.1f} %  sys {:.1f} %  iowait "
                     "{:.1f} %  ({} cores)\n",
                     indent, p.cpu.machine_busy_pct, p.cpu.machine_user_pct,
                     p.cpu.machine_sys_pct, p.cpu.machine_iowait_pct, p.cpu.cores);
  out += fmt::format("{}Memory            peak RSS {}\n", indent,
                     FormatValue(static_cast<double>(p.peak_rss), "B"));
  for (const Figure& f : p.figures) {
    if (f.name.rfind("x_", 0) != 0) continue;
    out += fmt::format("{}{}{}\n", indent, Pad(f.label, 18), FormatValue(f.value, f.unit));
  }
  return out;
}

static std::string CompactRun(size_t index, const RunResult& run) {
  std::string out;
  for (const auto& p : run.phases) {
    const Figure* main = p.Find(p.has_bytes ? "bw" : "ops");
    const Figure* iops = p.Find("iops");
    const Figure* lat = p.Find("lat_mean");
    out += fmt::format("  run {:<3} {:<14} {:>14}", index + 1, p.name,
                       main ? FormatValue(main->value, main->unit) : "");
    if (iops) out += fmt::format("  {:>12}", FormatValue(iops->value, iops->unit));
    if (lat) out += fmt::format("  lat {}", FormatNanos(lat->value));
    out += "\n";
  }
  return out;
}

static std::string FormatCurve(const RunResult& run) {
  std::string out = fmt::format("{:>8}  {:>16} {:>16}  {:>16} {:>16}\n", "THREADS",
                                "WRITE children", "WRITE parent", "READ children", "READ parent");
  for (const auto& pt : run.extra.value("curve", nlohmann::json::array())) {
    out += fmt::format("{:>8}  {:>16} {:>16}  {:>16} {:>16}\n", pt.value("threads", 0),
                       FormatBytesPerSec(pt.value("write_children_see", 0.0)),
                       FormatBytesPerSec(pt.value("write_parent_sees", 0.0)),
                       FormatBytesPerSec(pt.value("read_children_see", 0.0)),
                       FormatBytesPerSec(pt.value("read_parent_sees", 0.0)));
  }
  for (const char* dir : {"write", "read"}) {
    const auto& s = run.extra.value(dir, nlohmann::json::object())
                        .value("children_see", nlohmann::json::object());
    if (!s.contains("peak_bw")) continue;
    out += fmt::format("{:<6} children see: peak {} at {} threads", dir,
                       FormatBytesPerSec(s["peak_bw"].get<double>()),
                       s["peak_threads"].get<uint32_t>());
    if (s.value("has_plateau", false)) {
      out += fmt::format(", plateau {} from {} threads (within 10 % of the peak)",
                         FormatBytesPerSec(s["plateau_bw"].get<double>()),
                         s["plateau_threads"].get<uint32_t>());
    } else {
      out += ", no plateau (still rising or a single point)";
    }
    out += "\n";
  }
  return out;
}

std::string FormatResultSet(const ResultSet& set) {
  std::string out = FormatHeader(set) + "\n";
  if (set.runs.empty() || (set.runs.size() == 1 && set.runs.front().phases.empty())) {
    return out + "  (nothing was measured)\n";
  }
  if (set.kind == "sweep") {
    for (size_t idx = 0; idx < set.runs.size(); ++idx) {
      if (set.runs.size() > 1) out += fmt::format("run {}\n", idx + 1);
      out += FormatCurve(set.runs[idx]) + "\n";
    }
    // A stopped sweep also shows its phases: the cut one has no curve point.
    if (set.runs.size() == 1 && !set.runs.front().stopped_early) return out;
  }
  if (set.runs.size() == 1) {
    for (const auto& p : set.runs.front().phases) out += FormatPhase(p) + "\n";
    return out;
  }
  for (size_t idx = 0; idx < set.runs.size(); ++idx) out += CompactRun(idx, set.runs[idx]);
  out += fmt::format("\n{}{}{}{}{}\n", Pad("PHASE", 14), Pad("FIGURE", 26), RPad("MEDIAN", 14),
                     RPad("CV", 9), RPad("MIN .. MAX", 28));
  std::string last_phase;
  for (const auto& s : set.Summarize()) {
    out += fmt::format("{}{}{}{}{}\n", Pad(s.phase == last_phase ? "" : s.phase, 14),
                       Pad(s.figure.label, 26), RPad(FormatValue(s.figure.value, s.figure.unit), 14),
                       RPad(fmt::format("{:.1f} %", s.cv_pct), 9),
                       RPad(FormatValue(s.min, s.figure.unit) + " .. " +
                                FormatValue(s.max, s.figure.unit),
                            28));
    last_phase = s.phase;
  }
  return out;
}

}  // namespace t0fs::bench
