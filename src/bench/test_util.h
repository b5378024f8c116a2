// Helpers for the bench unit tests: a temporary directory removed in every
// path, and a small result set.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <string>

#include "bench/result.h"

namespace t0fs::bench {

class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "t0fs-bench-test.XXXXXX").string();
    char* made = ::mkdtemp(tmpl.data());
    path_ = made != nullptr ? made : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

inline PhaseResult SamplePhase(const std::string& name, double bytes_per_s, uint64_t lat_ns) {
  PhaseResult p;
  p.name = name;
  p.workers = 2;
  p.last_done = {2.0, static_cast<uint64_t>(bytes_per_s * 2), 2000};
  p.first_done = {1.5, static_cast<uint64_t>(bytes_per_s * 1.4), 1400};
  for (int idx = 0; idx < 1000; ++idx) p.latency.Record(lat_ns + idx * 10);
  p.cpu.user_s = 0.5;
  p.cpu.sys_s = 1.0;
  p.cpu.wall_s = 2.0;
  p.peak_rss = 10 << 20;
  p.ComputeFigures();
  return p;
}

inline ResultSet SampleSet(const std::string& label, double bw, uint64_t lat_ns, int runs) {
  ResultSet set;
  set.kind = "io";
  set.workload = "read 1 MiB";
  set.label = label;
  set.host = "h";
  set.params = {{"path", "/tmp/x"}, {"engine", "psync"}};
  for (int r = 0; r < runs; ++r) {
    RunResult run;
    run.phases.push_back(SamplePhase("read", bw * (1 + 0.01 * r), lat_ns));
    run.phases.push_back(SamplePhase("write", bw / 2, lat_ns * 2));
    set.runs.push_back(run);
  }
  return set;
}

}  // namespace t0fs::bench
