#include "bench/result.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace t0fs::bench {

using nlohmann::json;

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

// ---- JSON ----

json ToJson(const CacheReport& c) {
  if (!c.applicable()) return {{"done", ""}};
  return {{"requested", c.requested},
          {"done", c.done},
          {"drops", c.drops},
          {"resident_after_drop", c.resident},
          {"files_checked", c.files_checked},
          {"files", c.files},
          {"warnings", c.warnings},
          {"description", c.Describe()}};
}

CacheReport CacheReportFromJson(const json& j) {
  CacheReport c;
  if (!j.is_object()) return c;
  c.requested = j.value("requested", "");
  c.done = j.value("done", "");
  c.drops = j.value("drops", 0u);
  c.resident = j.value("resident_after_drop", -1.0);
  c.files_checked = j.value("files_checked", uint64_t{0});
  c.files = j.value("files", uint64_t{0});
  if (j.contains("warnings") && j["warnings"].is_array()) {
    for (const auto& w : j["warnings"]) {
      if (w.is_string()) c.warnings.push_back(w.get<std::string>());
    }
  }
  return c;
}

static const char* BetterName(Better b) {
  return b == Better::kHigher ? "higher" : b == Better::kLower ? "lower" : "none";
}
static Better BetterFrom(const std::string& s) {
  return s == "higher" ? Better::kHigher : s == "lower" ? Better::kLower : Better::kNone;
}

json ToJson(const Histogram& h) {
  json buckets = json::array();
  for (const auto& [index, count] : h.Sparse()) buckets.push_back({index, count});
  return {{"unit", "ns"},
          {"sub_bucket_bits", Histogram::kSubBucketBits},
          {"count", h.count()},
          {"sum", h.sum()},
          {"min", h.min()},
          {"max", h.max()},
          {"buckets", std::move(buckets)}};
}

Result<Histogram> HistogramFromJson(const json& j) {
  try {
    if (j.at("sub_bucket_bits").get<unsigned>() != Histogram::kSubBucketBits) {
      return Status(StatusCode::kInvalidArgument, "histogram with another bucket layout");
    }
    std::vector<std::pair<uint32_t, uint64_t>> buckets;
    for (const auto& b : j.at("buckets")) buckets.emplace_back(b.at(0).get<uint32_t>(),
                                                               b.at(1).get<uint64_t>());
    Histogram h;
    if (!h.LoadSparse(buckets, j.at("sum").get<uint64_t>(), j.at("min").get<uint64_t>(),
                      j.at("max").get<uint64_t>()) ||
        h.count() != j.at("count").get<uint64_t>()) {
      return Status(StatusCode::kInvalidArgument, "inconsistent histogram");
    }
    return h;
  } catch (const json::exception& e) {
    return Status(StatusCode::kInvalidArgument, std::string("histogram: ") + e.what());
  }
}

static json DoneJson(const DonePoint& d) {
  return {{"elapsed_s", d.elapsed_s}, {"bytes", d.bytes}, {"ops", d.ops}};
}
static DonePoint DoneFrom(const json& j) {
  return {j.at("elapsed_s").get<double>(), j.at("bytes").get<uint64_t>(),
          j.at("ops").get<uint64_t>()};
}

static json CpuJson(const CpuUsage& c) {
  return {{"wall_s", c.wall_s},
          {"user_s", c.user_s},
          {"sys_s", c.sys_s},
          {"proc_util_pct", c.proc_util_pct},
          {"machine_user_pct", c.machine_user_pct},
          {"machine_sys_pct", c.machine_sys_pct},
          {"machine_iowait_pct", c.machine_iowait_pct},
          {"machine_busy_pct", c.machine_busy_pct},
          {"cores", c.cores}};
}
static CpuUsage CpuFrom(const json& j) {
  CpuUsage c;
  c.wall_s = j.at("wall_s").get<double>();
  c.user_s = j.at("user_s").get<double>();
  c.sys_s = j.at("sys_s").get<double>();
  c.proc_util_pct = j.at("proc_util_pct").get<double>();
  c.machine_user_pct = j.at("machine_user_pct").get<double>();
  c.machine_sys_pct = j.at("machine_sys_pct").get<double>();
  c.machine_iowait_pct = j.at("machine_iowait_pct").get<double>();
  c.machine_busy_pct = j.at("machine_busy_pct").get<double>();
  c.cores = j.at("cores").get<uint32_t>();
  return c;
}

static json FigureJson(const Figure& f) {
  return {{"name", f.name},
          {"value", f.value},
          {"unit", f.unit},
          {"better", BetterName(f.better)},
          {"label", f.label}};
}
static Figure FigureFrom(const json& j) {
  return {j.at("name").get<std::string>(), j.at("value").get<double>(),
          j.at("unit").get<std::string>(), BetterFrom(j.at("better").get<std::string>()),
          j.value("label", j.at("name").get<std::string>())};
}

json ToJson(const PhaseResult& p) {
  json figures = json::array();
  for (const auto& f : p.figures) figures.push_back(FigureJson(f));
  json j = {{"name", p.name},
            {"has_bytes", p.has_bytes},
            {"workers", p.workers},
            {"first_done", DoneJson(p.first_done)},
            {"last_done", DoneJson(p.last_done)},
            {"cpu", CpuJson(p.cpu)},
            {"peak_rss_bytes", p.peak_rss},
            {"verify_errors", p.verify_errors},
            {"latency_ns", ToJson(p.latency)},
            {"figures", std::move(figures)},
            {"extra", p.extra}};
  // A fio-shaped view of the same numbers (jobs[].read/write), so scripts
  // written for fio's JSON read ours unchanged.
  if (p.has_bytes) {
    double secs = p.last_done.elapsed_s;
    json pct = json::object();
    for (double q : {1.0, 5.0, 10.0, 50.0, 90.0, 99.0, 99.9, 99.99}) {
      pct[fmt::format("{:.6f}", q)] = p.latency.Percentile(q);
    }
    j["fio"] = {{"io_bytes", p.last_done.bytes},
                {"bw_bytes", secs > 0 ? p.last_done.bytes / secs : 0.0},
                {"iops", secs > 0 ? p.last_done.ops / secs : 0.0},
                {"runtime", static_cast<uint64_t>(secs * 1000)},
                {"total_ios", p.last_done.ops},
                {"clat_ns",
                 {{"min", p.latency.min()},
                  {"max", p.latency.max()},
                  {"mean", p.latency.Mean()},
                  {"stddev", p.latency.StdDev()},
                  {"N", p.latency.count()},
                  {"percentile", pct}}}};
  }
  return j;
}

static Result<PhaseResult> PhaseFrom(const json& j) {
  PhaseResult p;
  p.name = j.at("name").get<std::string>();
  p.has_bytes = j.at("has_bytes").get<bool>();
  p.workers = j.at("workers").get<uint32_t>();
  p.first_done = DoneFrom(j.at("first_done"));
  p.last_done = DoneFrom(j.at("last_done"));
  p.cpu = CpuFrom(j.at("cpu"));
  p.peak_rss = j.at("peak_rss_bytes").get<uint64_t>();
  p.verify_errors = j.value("verify_errors", uint64_t{0});
  ASSIGN_OR_RETURN(p.latency, HistogramFromJson(j.at("latency_ns")));
  for (const auto& f : j.at("figures")) p.figures.push_back(FigureFrom(f));
  p.extra = j.value("extra", json::object());
  return p;
}

json ToJson(const ResultSet& r) {
  json runs = json::array();
  for (const auto& run : r.runs) {
    json phases = json::array();
    for (const auto& p : run.phases) phases.push_back(ToJson(p));
    runs.push_back({{"phases", std::move(phases)},
                    {"extra", run.extra},
                    {"cache", ToJson(run.cache)},
                    {"stopped_early", run.stopped_early}});
  }
  json summary = json::array();
  for (const auto& s : r.Summarize()) {
    json f = FigureJson(s.figure);
    f["phase"] = s.phase;
    f["median"] = s.figure.value;
    f.erase("value");
    f["mean"] = s.mean;
    f["cv_pct"] = s.cv_pct;
    f["min"] = s.min;
    f["max"] = s.max;
    f["runs"] = s.runs;
    summary.push_back(std::move(f));
  }
  json out = {{"format", "t0fs-bench-result"},
              {"format_version", 1},
              {"kind", r.kind},
              {"workload", r.workload},
              {"label", r.label},
              {"host", r.host},
              {"started", r.started},
              {"command", r.command},
              {"ranks", r.ranks},
              {"params", r.params},
              {"stopped_early", r.stopped_early()},
              {"cache", ToJson(r.Cache())},
              {"runs", std::move(runs)},
              {"summary", std::move(summary)},
              {"extra", r.extra}};
  if (r.stopped_early()) out["stop_signal"] = r.stopped_by;
  return out;
}

Result<ResultSet> ResultSetFromJson(const json& j) {
  try {
    if (j.value("format", "") != "t0fs-bench-result") {
      return Status(StatusCode::kInvalidArgument, "not a t0fs bench result (no format field)");
    }
    if (j.at("format_version").get<int>() != 1) {
      return Status(StatusCode::kInvalidArgument, "unsupported result format version");
    }
    ResultSet r;
    r.kind = j.at("kind").get<std::string>();
    r.workload = j.at("workload").get<std::string>();
    r.label = j.at("label").get<std::string>();
    r.host = j.value("host", "");
    r.started = j.value("started", "");
    r.command = j.value("command", "");
    r.ranks = j.value("ranks", 1);
    r.params = j.value("params", json::object());
    r.extra = j.value("extra", json::object());
    if (j.value("stopped_early", false)) r.stopped_by = j.value("stop_signal", "signal");
    for (const auto& run : j.at("runs")) {
      RunResult rr;
      for (const auto& p : run.at("phases")) {
        ASSIGN_OR_RETURN(PhaseResult phase, PhaseFrom(p));
        rr.phases.push_back(std::move(phase));
      }
      rr.extra = run.value("extra", json::object());
      // Results written before the cache was recorded say so.
      if (run.contains("cache")) {
        rr.cache = CacheReportFromJson(run["cache"]);
      } else {
        rr.cache.done = "unrecorded";
      }
      rr.stopped_early = run.value("stopped_early", false);
      r.runs.push_back(std::move(rr));
    }
    return r;
  } catch (const json::exception& e) {
    return Status(StatusCode::kInvalidArgument, std::string("malformed result: ") + e.what());
  }
}

Result<ResultSet> LoadResultSet(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status::FromErrno(errno, path);
  json j = json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return Status(StatusCode::kInvalidArgument, path + ": not valid JSON");
  auto r = ResultSetFromJson(j);
  if (!r.ok()) return r.status().WithContext(path);
  return r;
}

static std::string CsvField(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string ToCsv(const ResultSet& r) {
  std::string out = "label,kind,workload,run,phase,figure,value,unit,better\n";
  auto row = [&](const std::string& run, const std::string& phase, const std::string& name,
                 double value, const std::string& unit, Better better) {
    out += fmt::format("{},{},{},{},{},{},{:.9g},{},{}\n", CsvField(r.label), CsvField(r.kind),
                       CsvField(r.workload), run, CsvField(phase), name, value, unit,
                       BetterName(better));
  };
  for (size_t idx = 0; idx < r.runs.size(); ++idx) {
    for (const auto& p : r.runs[idx].phases) {
      for (const auto& f : p.figures) {
        row(std::to_string(idx + 1), p.name, f.name, f.value, f.unit, f.better);
      }
    }
  }
  for (const auto& s : r.Summarize()) {
    row("median", s.phase, s.figure.name, s.figure.value, s.figure.unit, s.figure.better);
    row("cv_pct", s.phase, s.figure.name, s.cv_pct, "%", Better::kNone);
  }
  return out;
}

Status WriteFileAtomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "write " + path);
  size_t done = 0;
  while (done < content.size()) {
    ssize_t rc = ::write(fd, content.data() + done, content.size() - done);
    if (rc < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      return Status::FromErrno(err, "write " + path);
    }
    done += static_cast<size_t>(rc);
  }
  if (::close(fd) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Status::FromErrno(err, "write " + path);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return Status::FromErrno(err, "rename to " + path);
  }
  return Status::Ok();
}

std::string FormatBytesPerSec(double bps) {
  double mib = bps / (1024.0 * 1024.0);
  if (mib >= 10000) return fmt::format("{:.2f} GiB/s", mib / 1024);
  if (mib >= 100) return fmt::format("{:.0f} MiB/s", mib);
  if (mib >= 1) return fmt::format("{:.1f} MiB/s", mib);
  return fmt::format("{:.1f} KiB/s", bps / 1024);
}

std::string FormatNanos(double ns) {
  if (ns >= 10e9) return fmt::format("{:.1f} s", ns / 1e9);
  if (ns >= 10e6) return fmt::format("{:.1f} ms", ns / 1e6);
  if (ns >= 1e6) return fmt::format("{:.2f} ms", ns / 1e6);
  if (ns >= 10e3) return fmt::format("{:.1f} us", ns / 1e3);
  if (ns >= 1e3) return fmt::format("{:.2f} us", ns / 1e3);
  return fmt::format("{:.0f} ns", ns);
}

static std::string Grouped(double v) {
  if (v >= 1e6) return fmt::format("{:.2f}M", v / 1e6);
  if (v >= 1e4) return fmt::format("{:.1f}k", v / 1e3);
  if (v >= 100) return fmt::format("{:.0f}", v);
  return fmt::format("{:.3g}", v);
}

std::string FormatValue(double value, const std::string& unit) {
  if (unit == "B/s") return FormatBytesPerSec(value);
  if (unit == "ns") return FormatNanos(value);
  if (unit == "IOPS" || unit == "ops/s") return Grouped(value) + " " + unit;
  if (unit == "s") {
    if (value >= 100) return fmt::format("{:.0f} s", value);
    if (value >= 0.1 || value == 0) return fmt::format("{:.2f} s", value);
    return fmt::format("{:.2f} ms", value * 1e3);
  }
  if (unit == "%") return fmt::format("{:.1f} %", value);
  if (unit == "B") {
    if (value >= 1 << 30) return fmt::format("{:.2f} GiB", value / (1 << 30));
    if (value >= 1 << 20) return fmt::format("{:.1f} MiB", value / (1 << 20));
    return fmt::format("{:.0f} KiB", value / 1024);
  }
  if (unit == "s/GB") return fmt::format("{:.3f} s/GB", value);
  return fmt::format("{:.4g} {}", value, unit);
}

}  // namespace t0fs::bench
