#include "bench/report_checks.h"

#include <fmt/format.h>

namespace t0fs::bench {

static std::string MethodName(const std::string& done) {
  if (done == "sysctl") return "drop_caches";
  if (done == "fadvise") return "fadvise(DONTNEED)";
  if (done == "both") return "drop_caches + fadvise";
  if (done == "none") return "no drop";
  if (done == "direct") return "O_DIRECT";
  if (done == "unrecorded") return "not recorded";
  return done;
}

std::vector<std::string> SetWarnings(const ResultSet& set) {
  std::vector<std::string> out;
  if (set.stopped_early()) {
    out.push_back(fmt::format("{}: stopped early by {}; its figures cover only the part that ran",
                              set.label, set.stopped_by));
  }
  CacheReport cache = set.Cache();
  if (!cache.applicable() || cache.done == "direct") return out;
  if (cache.done == "unrecorded") {
    out.push_back(
        fmt::format("{}: its cache handling is not recorded (a result of an older "
                    "t0fs): its reads may have come from memory",
                    set.label));
  } else if (cache.done == "none") {
    out.push_back(fmt::format(
        "{}: the page cache was not dropped before its reads{}: they may "
        "have come from memory",
        set.label,
        cache.resident >= 0
            ? fmt::format(" ({:.0f} % of the files' pages were resident)", cache.resident * 100)
            : std::string()));
  } else if (cache.resident > kResidentLimit) {
    out.push_back(
        fmt::format("{}: after its cache drop ({}) {:.0f} % of the files' pages were "
                    "still in memory: its reads may have come from memory, not storage",
                    set.label, MethodName(cache.done), cache.resident * 100));
  } else if (cache.done == "fadvise" && cache.resident < 0) {
    out.push_back(
        fmt::format("{}: fadvise(DONTNEED) only and residency not measured: its reads "
                    "may have come from memory",
                    set.label));
  }
  return out;
}

std::vector<std::string> ComparisonWarnings(const std::vector<ResultSet>& sets) {
  std::vector<std::string> out;
  for (const auto& set : sets) {
    for (auto& w : SetWarnings(set)) out.push_back(std::move(w));
  }
  if (sets.size() < 2) return out;
  // Cache handling of the sets that read (write-only and metadata sets have none).
  std::vector<std::pair<std::string, std::string>> methods;  // label, method
  bool differ = false;
  for (const auto& set : sets) {
    CacheReport cache = set.Cache();
    if (!cache.applicable()) continue;
    if (!methods.empty() && methods.front().second != cache.done) differ = true;
    methods.emplace_back(set.label, cache.done);
  }
  if (differ) {
    std::string list;
    for (const auto& [label, done] : methods) {
      list += fmt::format("{}{}: {}", list.empty() ? "" : ", ", label, MethodName(done));
    }
    out.push_back("the sets handled the page cache differently (" + list +
                  "): their read figures are not measured alike");
  }
  return out;
}

}  // namespace t0fs::bench
