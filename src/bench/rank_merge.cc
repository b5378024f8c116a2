// Merging one run measured on several MPI ranks (rank_merge.h).
#include "bench/rank_merge.h"

#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "bench/sysstat.h"

namespace t0fs::bench {

PhaseResult MergeRankPhases(const std::vector<PhaseResult>& per_rank) {
  PhaseResult merged = per_rank.front();
  if (per_rank.size() == 1) return merged;
  double first_s = per_rank.front().first_done.elapsed_s;
  for (const auto& p : per_rank) first_s = std::min(first_s, p.first_done.elapsed_s);
  merged.first_done = {first_s, 0, 0};
  merged.last_done = {0, 0, 0};
  merged.latency.Clear();
  merged.workers = 0;
  merged.verify_errors = 0;
  merged.peak_rss = 0;
  for (size_t idx = 0; idx < per_rank.size(); ++idx) {
    const PhaseResult& p = per_rank[idx];
    double scale = p.first_done.elapsed_s > 0 ? first_s / p.first_done.elapsed_s : 1.0;
    merged.first_done.bytes += static_cast<uint64_t>(p.first_done.bytes * scale);
    merged.first_done.ops += static_cast<uint64_t>(p.first_done.ops * scale);
    merged.last_done.elapsed_s = std::max(merged.last_done.elapsed_s, p.last_done.elapsed_s);
    merged.last_done.bytes += p.last_done.bytes;
    merged.last_done.ops += p.last_done.ops;
    merged.latency.Merge(p.latency);
    merged.workers += p.workers;
    merged.verify_errors += p.verify_errors;
    merged.peak_rss = std::max(merged.peak_rss, p.peak_rss);
    if (idx > 0) {
      merged.cpu = CombineCpu(merged.cpu, p.cpu, static_cast<int>(idx + 1));
      // Workload figures: rates add up over ranks, other amounts take the minimum.
      for (Figure& fig : merged.figures) {
        if (fig.name.rfind("x_", 0) != 0) continue;
        const Figure* other = p.Find(fig.name);
        if (other == nullptr) continue;
        bool rate = fig.unit == "B/s" || fig.unit == "IOPS" || fig.unit == "ops/s";
        fig.value = rate ? fig.value + other->value : std::min(fig.value, other->value);
      }
    }
  }
  merged.ComputeFigures();
  return merged;
}

Result<RunResult> GatherRun(const RunResult& local, Comm& comm) {
  if (comm.size() == 1) return local;
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : local.phases) j.push_back(ToJson(p));
  nlohmann::json mine = {{"phases", j}, {"cache", ToJson(local.cache)},
                         {"stopped_early", local.stopped_early}};
  std::vector<std::string> all = comm.Gather(mine.dump());
  if (comm.rank() != 0) return local;
  // Re-read every rank's phases through the same JSON form as result files.
  std::vector<std::vector<PhaseResult>> by_phase(local.phases.size());
  CacheReport cache;
  bool stopped = false;
  for (const std::string& text : all) {
    nlohmann::json rank_all = nlohmann::json::parse(text);
    cache.Merge(CacheReportFromJson(rank_all["cache"]));
    stopped = stopped || rank_all.value("stopped_early", false);
    nlohmann::json rank_json = rank_all["phases"];
    nlohmann::json wrapped = {{"format", "t0fs-bench-result"}, {"format_version", 1},
                              {"kind", ""}, {"workload", ""}, {"label", ""},
                              {"runs", {{{"phases", rank_json}}}}};
    ASSIGN_OR_RETURN(ResultSet rs, ResultSetFromJson(wrapped));
    const auto& phases = rs.runs.front().phases;
    if (phases.size() != by_phase.size()) {
      return Status(StatusCode::kInternal, "ranks reported different phases");
    }
    for (size_t idx = 0; idx < phases.size(); ++idx) by_phase[idx].push_back(phases[idx]);
  }
  RunResult merged;
  merged.extra = local.extra;
  merged.cache = cache;
  merged.stopped_early = stopped;
  for (const auto& phases : by_phase) merged.phases.push_back(MergeRankPhases(phases));
  return merged;
}

}  // namespace t0fs::bench
