// The file forms of a result (result.h): the JSON that `t0fs bench report`
// reads back (with a fio-shaped view of each phase), CSV, and the atomic
// write of a result file.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>
#include <string>

#include <fmt/format.h>

#include "bench/result.h"

namespace t0fs::bench {

using nlohmann::json;

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

}  // namespace t0fs::bench
