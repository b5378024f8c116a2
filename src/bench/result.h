// Results of a benchmark: the raw, mergeable measurements of each phase, the
// headline figures derived from them, several runs (--repeat) with their
// median and coefficient of variation, and the JSON form that `t0fs bench
// report` reads back. Shared by every workload (io, ai, sweep, meta, and the
// MLPerf workloads built on them).
//
// Definitions: the model in result.cc, the JSON/CSV forms and the atomic
// write in result_files.cc, the formatting of values in result_format.cc.
//
// Thread safety: values.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/histogram.h"
#include "bench/sysstat.h"
#include "common/status.h"

namespace t0fs::bench {

enum class Better { kHigher, kLower, kNone };

// One headline number: "bw" 1.2e9 "B/s" (higher is better).
struct Figure {
  std::string name;
  double value = 0;
  std::string unit;  // B/s, IOPS, ops/s, ns, s, %, B, s/GB
  Better better = Better::kNone;
  std::string label;  // human label: "Bandwidth"
};

// Counters at a moment (elbencho "first done" / "last done").
struct DonePoint {
  double elapsed_s = 0;
  uint64_t bytes = 0;
  uint64_t ops = 0;
};

struct PhaseResult {
  std::string name;         // "read", "write", "file-create", "write t=4"
  bool has_bytes = true;    // metadata phases count only operations
  DonePoint first_done;     // until the first worker finished its share
  DonePoint last_done;      // until the last worker finished
  uint32_t workers = 0;
  Histogram latency;        // per operation, ns
  CpuUsage cpu;             // over the measured interval
  uint64_t peak_rss = 0;    // bytes
  uint64_t verify_errors = 0;
  std::vector<Figure> figures;  // derived by ComputeFigures
  nlohmann::json extra = nlohmann::json::object();  // workload-specific

  // (Re)derives `figures` from the measurements (keeps figures added by the
  // workload whose name starts with "x_").
  void ComputeFigures();
  const Figure* Find(const std::string& figure) const;
};

// How the page cache was handled before a run's reads, and whether it
// worked: after the drop each file (or a sample of many files) is mapped and
// mincore() counts the pages still in memory. A FUSE passthrough file maps
// its backing file, so the count sees the cache that reads would hit.
struct CacheReport {
  std::string requested;  // --drop-caches: auto, both, sysctl, fadvise, none
  // What was done: "sysctl" (drop_caches), "fadvise", "both", "none",
  // "direct" (O_DIRECT reads: no drop needed); "" = not applicable (no reads).
  std::string done;
  uint32_t drops = 0;          // drops in the run (per epoch, per thread count, ...)
  double resident = -1;        // largest fraction still resident after a drop; < 0: not measured
  uint64_t files_checked = 0;  // files mapped and counted (largest over the drops)
  uint64_t files = 0;          // files the drop covered (largest over the drops)
  std::vector<std::string> warnings;  // distinct, in order of appearance

  bool applicable() const { return !done.empty(); }
  // Folds another drop (or run, or rank) into this one: the worst residency,
  // "mixed" when the methods differ, warnings de-duplicated.
  void Merge(const CacheReport& other);
  void AddWarning(const std::string& warning);
  // "drop_caches (root); 0.0 % of the files' pages resident after the drop (4 of 4 files)"
  std::string Describe() const;
};

// More than this fraction of the pages resident after a drop makes a read
// result suspect (reports flag it).
constexpr double kResidentLimit = 0.05;

struct RunResult {
  std::vector<PhaseResult> phases;
  nlohmann::json extra = nlohmann::json::object();
  CacheReport cache;
  bool stopped_early = false;  // SIGINT/SIGTERM: the phases cover what ran
};

// Median / CV of one figure over the runs.
struct FigureSummary {
  std::string phase;
  Figure figure;  // value = median
  double mean = 0;
  double cv_pct = 0;  // sample standard deviation / mean
  double min = 0;
  double max = 0;
  size_t runs = 0;
};

struct ResultSet {
  std::string kind;       // io, ai, sweep, meta, mlperf-...
  std::string workload;   // "randread 4KiB", "model-load", ...
  std::string label;      // --label, else derived; names the set in reports
  std::string host;
  std::string started;    // ISO 8601 UTC
  std::string command;    // the command line
  int ranks = 1;
  nlohmann::json params = nlohmann::json::object();
  std::vector<RunResult> runs;
  nlohmann::json extra = nlohmann::json::object();
  std::string stopped_by;  // "SIGINT", "SIGTERM" when stopped early, else ""

  std::vector<FigureSummary> Summarize() const;
  // The cache handling of all runs merged.
  CacheReport Cache() const;
  bool stopped_early() const { return !stopped_by.empty(); }
};

nlohmann::json ToJson(const CacheReport& c);
CacheReport CacheReportFromJson(const nlohmann::json& j);

nlohmann::json ToJson(const Histogram& h);
Result<Histogram> HistogramFromJson(const nlohmann::json& j);
nlohmann::json ToJson(const PhaseResult& p);
nlohmann::json ToJson(const ResultSet& r);
Result<ResultSet> ResultSetFromJson(const nlohmann::json& j);
Result<ResultSet> LoadResultSet(const std::string& path);

// CSV: one row per (run, phase, figure), then the median and CV rows.
std::string ToCsv(const ResultSet& r);

// Writes `content` to `path` atomically (temp file + rename), so a failed
// run never leaves a half-written result file.
Status WriteFileAtomic(const std::string& path, const std::string& content);

double Median(std::vector<double> values);
// Coefficient of variation in % (sample stddev / mean); 0 for < 2 values.
double CoefficientOfVariation(const std::vector<double>& values);

// Formatting for tables and reports.
std::string FormatValue(double value, const std::string& unit);
std::string FormatBytesPerSec(double bps);  // "1234 MiB/s"
std::string FormatNanos(double ns);         // "123 us"

}  // namespace t0fs::bench
