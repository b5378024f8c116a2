// `t0fs bench mlperf training run`: warm-up and measured runs, a metric
// block per run, the summary over the runs and the result files.
#include <cstdio>

#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/comm.h"
#include "bench/mlperf/cli_training.h"
#include "bench/mlperf/training_output.h"
#include "bench/stop_signal.h"

namespace t0fs::bench::mlperf::training_cli {
namespace {

std::string RunConfiguration(const TrainingSpec& spec) {
  return fmt::format(
      "  data       {} ({} of {} files, {} subfolders)\n"
      "  engine     {}{}, transfer {} KiB, iodepth {}; sharding {}; {} step(s)/epoch/rank; "
      "ranks as {}\n",
      spec.layout.TrainDir(), spec.files, spec.layout.total_files, spec.layout.subfolders,
      EngineName(spec.engine.kind), spec.read.direct ? " O_DIRECT" : " buffered",
      spec.read.transfer / 1024, spec.engine.depth, ShardingName(spec.sharding),
      TrainingSteps(spec),
      WorldComm().size() > 1 ? fmt::format("{} MPI processes x threads", WorldComm().size())
                             : std::string("threads of this process"));
}

}  // namespace

int Run(const TrainingCli& o) {
  auto r = Resolve(o, o.accelerators);
  if (!r.ok()) return ReportError(r.status());
  std::string notes;
  auto spec = MakeSpec(o, *r, o.accelerators, &notes);
  if (!spec.ok()) return ReportError(spec.status());
  Comm& comm = WorldComm();
  const bool root = comm.rank() == 0;
  std::string leaf;
  if (root) {
    auto made = MakeResultsLeaf(o.out.results_dir, "training", r->w.workload + "/run");
    if (!made.ok()) return ReportError(made.status());
    leaf = *made;
    std::string out = Header("run", *r, o.accelerators) + RunConfiguration(*spec) + notes;
    out += fmt::format("  runs       {} warm-up + {} measured; results in {}\n", o.warmup, o.runs,
                       leaf);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
  ResultSet set = NewResultSet("mlperf-training",
                               fmt::format("{} {} x {} (edition {})", r->w.workload,
                                           o.accelerators, r->w.accelerator,
                                           EditionName(r->edition)),
                               o.out.label);
  set.params = TrainingParams(*spec);
  if (set.label.empty()) set.label = spec->layout.root;
  std::vector<TrainingResult> measured;
  for (uint32_t run = 0; run < o.warmup + o.runs && !StopRequested(); ++run) {
    bool warm = run < o.warmup;
    std::string name = warm ? fmt::format("warmup{}", run + 1)
                            : fmt::format("run{}", run - o.warmup + 1);
    if (root) std::printf("%s\n", name.c_str());
    auto result = OneRun(*spec, leaf.empty() ? "" : leaf + "/" + name, root);
    if (!result.ok()) {
      if (StopRequested()) break;  // an error the stop caused: report what ran
      return ReportError(result.status());
    }
    const bool stopped = result->stopped_early;
    if (!root) {
      if (stopped) break;
      continue;
    }
    if (result->epochs.empty()) break;  // stopped before an epoch completed
    std::string block = MetricBlock(*result, *spec);
    std::fwrite(block.data(), 1, block.size(), stdout);
    if (stopped) {
      std::printf("  (stopped early: %zu of %u epochs completed; the cut epoch is not counted)\n",
                  result->epochs.size(), spec->workload.epochs);
    }
    if (!warm) {
      RunResult rr;
      rr.phases.push_back(TrainingPhase(*result, *spec));
      rr.extra = SummaryJson(*result, *spec);
      rr.cache = result->cache;
      rr.stopped_early = stopped;
      set.runs.push_back(std::move(rr));
      measured.push_back(std::move(result).value());
    }
    if (stopped) break;
  }
  if (StopRequested()) set.stopped_by = StopSignalName();
  if (!root) return set.stopped_early() ? StopExitCode() : 0;
  std::vector<double> au, thr;
  bool all_pass = !measured.empty();
  std::string out = "\nMLPerf training runs\n";
  for (size_t idx = 0; idx < measured.size(); ++idx) {
    const RunMetrics& m = measured[idx].metrics;
    au.push_back(m.au_mean_pct);
    thr.push_back(m.throughput_mean);
    all_pass = all_pass && m.pass;
    out += fmt::format("  run {:<3} AU {:8.4f} %  throughput {:10.3f} samples/s  I/O {:10.2f} "
                       "MiB/s  {}  (CPU {:.4f} s per accelerator-second)\n",
                       idx + 1, m.au_mean_pct, m.throughput_mean, m.io_mean_mib,
                       m.pass ? "pass" : "FAIL",
                       measured[idx].CpuPerAcceleratorSecond(spec->accelerators));
  }
  out += fmt::format("  mean    AU {:8.4f} %  throughput {:10.3f} samples/s  I/O {:10.2f} MiB/s\n",
                     Mean(au), Mean(thr), Mean(thr) * spec->workload.record_length / 1048576.0);
  out += fmt::format("  CV      AU {:.2f} %, throughput {:.2f} % (sample stddev / mean)\n",
                     CoefficientOfVariation(au), CoefficientOfVariation(thr));
  if (set.stopped_early()) {
    size_t complete = 0;
    for (const auto& run : set.runs) complete += run.stopped_early ? 0 : 1;
    out += fmt::format("  result  STOPPED EARLY by {}: {} of {} measured run(s) completed; not a "
                       "valid result\n",
                       set.stopped_by, complete, o.runs);
  } else {
    out += fmt::format("  result  {}: {} accelerators {}; Read B/W {:.3f} GiB/s (mean of runs)\n",
                       all_pass ? "PASS" : "FAIL", spec->accelerators,
                       all_pass ? "kept at or above the AU threshold in every run"
                                : "fell below the AU threshold",
                       Mean(thr) * spec->workload.record_length / 1073741824.0);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  for (const std::string& warning : set.Cache().warnings) {
    std::fprintf(stderr, "t0fs bench: warning: %s\n", warning.c_str());
  }
  set.extra = {{"pass", all_pass && !set.stopped_early()}, {"results_dir", leaf},
               {"warmup_runs", o.warmup}};
  Status st = WriteOutputs(set, o.out);
  if (!st.ok()) return ReportError(st);
  return set.stopped_early() ? StopExitCode() : 0;
}

}  // namespace t0fs::bench::mlperf::training_cli
