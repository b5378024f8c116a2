// `t0fs bench mlperf training search`: the largest accelerator count that
// passes (doubling, then bisection), a line per probe, the result files.
#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/comm.h"
#include "bench/mlperf/cli_training.h"
#include "bench/mlperf/training_output.h"
#include "bench/mlperf/training_search.h"
#include "bench/stop_signal.h"

namespace t0fs::bench::mlperf::training_cli {

int Search(const TrainingCli& o) {
  auto base = Resolve(o, o.max_acc);
  if (!base.ok()) return ReportError(base.status());
  Comm& comm = WorldComm();
  const bool root = comm.rank() == 0;
  std::string leaf;
  if (root) {
    auto made = MakeResultsLeaf(o.out.results_dir, "training", base->w.workload + "/search");
    if (!made.ok()) return ReportError(made.status());
    leaf = *made;
    std::printf("%s", Header("search", *base, o.max_acc).c_str());
    std::printf("  search     %u..%u accelerators, %u run(s) per probe (+%u warm-up), results in %s\n",
                o.min_acc, o.max_acc, o.runs, o.warmup, leaf.c_str());
    std::fflush(stdout);
  }
  // Every option and the smallest probe are checked before the first run; a
  // larger probe the dataset cannot give a step is "not run", not an error.
  {
    auto first = Resolve(o, o.min_acc);
    if (!first.ok()) return ReportError(first.status());
    auto spec = MakeSpec(o, *first, o.min_acc, nullptr, /*all_files=*/true);
    if (!spec.ok()) return ReportError(spec.status().WithContext(fmt::format("--min {}", o.min_acc)));
  }
  TrainingSpec last_spec;
  double cpu_per_accel = 0;
  uint32_t too_small = 0;  // fewest accelerators the dataset could not probe
  std::vector<SearchProbe> done;  // probes that ended, in order (kept when stopped)
  CacheReport cache;              // the probes' cache drops
  auto outcome = SearchMaxAccelerators(o.min_acc, o.max_acc, [&](uint32_t n) -> Result<SearchProbe> {
    ASSIGN_OR_RETURN(Resolved r, Resolve(o, n));
    auto made = MakeSpec(o, r, n, nullptr, /*all_files=*/true);
    SearchProbe p;
    p.accelerators = n;
    if (!made.ok()) {
      p.pass = false;
      too_small = too_small == 0 ? n : std::min(too_small, n);
      if (root) {
        std::printf("  probe %4u accelerators: not run: %s\n", n, made.status().message().c_str());
        std::fflush(stdout);
      }
      done.push_back(p);
      return p;
    }
    TrainingSpec spec = std::move(made).value();
    if (TrainingSteps(spec) < 2) {
      // The first step of an epoch is not counted in AU: with one step there
      // is nothing to measure, which is not a failure of the storage.
      p.pass = false;
      too_small = too_small == 0 ? n : std::min(too_small, n);
      if (root) {
        std::printf("  probe %4u accelerators: not run: the dataset gives %lu step(s) per epoch, at least 2 "
                    "are needed (more files: training datasize)\n",
                    n, static_cast<unsigned long>(TrainingSteps(spec)));
        std::fflush(stdout);
      }
      done.push_back(p);
      return p;
    }
    p.pass = true;
    std::vector<double> au, thr;
    for (uint32_t run = 0; run < o.warmup + o.runs; ++run) {
      std::string name = fmt::format("n{}_{}{}", n, run < o.warmup ? "warmup" : "run",
                                     run < o.warmup ? run + 1 : run - o.warmup + 1);
      ASSIGN_OR_RETURN(TrainingResult tr, OneRun(spec, leaf.empty() ? "" : leaf + "/" + name, false));
      cache.Merge(tr.cache);
      if (tr.stopped_early || StopRequested()) {
        return Status(StatusCode::kInterrupted, "stopped");  // this probe is not counted
      }
      if (run < o.warmup) continue;
      au.push_back(tr.metrics.au_mean_pct);
      thr.push_back(tr.metrics.throughput_mean);
      p.pass = p.pass && tr.metrics.pass;
      cpu_per_accel = tr.CpuPerAcceleratorSecond(n);
    }
    p.au_pct = Mean(au);
    p.throughput = Mean(thr);
    p.io_mib = p.throughput * spec.workload.record_length / 1048576.0;
    if (root) {
      std::printf("  probe %4u accelerators: AU %8.4f %%  throughput %10.3f samples/s  I/O %9.1f "
                  "MiB/s  %s  (%lu steps/epoch, CPU %.4f s/accelerator-s)\n",
                  n, p.au_pct, p.throughput, p.io_mib, p.pass ? "pass" : "FAIL",
                  static_cast<unsigned long>(TrainingSteps(spec)), cpu_per_accel);
      std::fflush(stdout);
    }
    last_spec = spec;
    done.push_back(p);
    return p;
  });
  const bool stopped = StopRequested();
  if (!outcome.ok() && !stopped) return ReportError(outcome.status());
  if (!root) return stopped ? StopExitCode() : 0;
  SearchProbe best;
  if (outcome.ok()) {
    best = outcome->best;
  } else {
    // Stopped: the best of the probes that ended (the search's rule: the
    // largest passing count below the first failing one).
    uint32_t first_fail = 0;
    for (const auto& pr : done) {
      if (!pr.pass && (first_fail == 0 || pr.accelerators < first_fail)) first_fail = pr.accelerators;
    }
    for (const auto& pr : done) {
      if (pr.pass && (first_fail == 0 || pr.accelerators < first_fail) &&
          pr.accelerators > best.accelerators) {
        best = pr;
      }
    }
  }
  if (stopped) {
    std::printf("result: STOPPED EARLY by %s after %zu probe(s); so far %u accelerators pass (AU >= "
                "%.0f %%): not a search result\n",
                StopSignalName().c_str(), done.size(), best.accelerators, base->w.min_au * 100);
  } else {
    std::printf("result: %u accelerators pass (AU >= %.0f %%), throughput %.3f samples/s, I/O "
                "%.1f MiB/s (%.3f GiB/s)\n",
                best.accelerators, base->w.min_au * 100, best.throughput, best.io_mib,
                best.io_mib / 1024);
  }
  if (too_small != 0 && too_small == best.accelerators + 1) {
    std::printf("note: %u accelerators could not be probed (dataset too small), so the maximum may be "
                "higher\n",
                too_small);
  }
  ResultSet set = NewResultSet("mlperf-training-search",
                               fmt::format("{} {} search (edition {})", base->w.workload,
                                           base->w.accelerator, EditionName(base->edition)),
                               o.out.label);
  set.params = TrainingParams(last_spec);
  set.params["min_accelerators"] = o.min_acc;
  set.params["max_accelerators"] = o.max_acc;
  if (set.label.empty()) set.label = o.data_dir;
  PhaseResult p;
  p.name = "search";
  p.has_bytes = false;
  p.last_done = {0, 0, done.size()};
  p.first_done = p.last_done;
  p.figures.push_back({"x_max_accelerators", static_cast<double>(best.accelerators), "accel",
                       Better::kHigher, "Max accelerators passing"});
  p.figures.push_back({"x_throughput", best.throughput, "samples/s", Better::kHigher,
                       "Throughput at the max"});
  p.figures.push_back({"x_io", best.io_mib * 1048576.0, "B/s", Better::kHigher,
                       "I/O at the max (reference)"});
  p.figures.push_back({"x_au", best.au_pct, "%", Better::kHigher, "AU at the max"});
  p.ComputeFigures();
  RunResult rr;
  rr.phases.push_back(p);
  nlohmann::json probes = nlohmann::json::array();
  for (const auto& pr : done) {
    probes.push_back({{"accelerators", pr.accelerators}, {"pass", pr.pass}, {"au_pct", pr.au_pct},
                      {"throughput", pr.throughput}, {"io_mib", pr.io_mib}});
  }
  rr.extra = {{"probes", probes}};
  rr.stopped_early = stopped;
  rr.cache = cache;
  set.runs.push_back(rr);
  if (stopped) set.stopped_by = StopSignalName();
  Status st = WriteOutputs(set, o.out);
  if (!st.ok()) return ReportError(st);
  return stopped ? StopExitCode() : 0;
}

}  // namespace t0fs::bench::mlperf::training_cli
