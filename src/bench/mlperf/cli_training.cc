// `t0fs bench mlperf training datasize|datagen|run|search`.
#include <unistd.h>

#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/cli_options.h"
#include "bench/comm.h"
#include "bench/mlperf/cli_mlperf.h"
#include "bench/mlperf/cli_mlperf_options.h"
#include "bench/mlperf/datagen.h"
#include "bench/mlperf/sizing.h"
#include "bench/mlperf/training_output.h"
#include "bench/mlperf/training_run.h"
#include "bench/mlperf/training_search.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"

namespace t0fs::bench::mlperf {
namespace {

struct TrainingCli {
  std::string workload, accelerator, data_dir, edition = "3.0", sharding;
  uint32_t accelerators = 1;
  double host_memory_gb = 0;
  uint32_t hosts = 0;  // 0: MPI processes
  // Overrides (0 / negative = the workload's value).
  uint64_t num_files = 0;
  int64_t subfolders = -1;
  double record_length = 0, record_length_stdev = -1, computation_time = -1;
  uint32_t samples_per_file = 0, batch_size = 0, epochs = 0;
  int64_t read_threads = -1, prefetch_size = -1;
  uint64_t steps = 0;
  uint32_t threads = 4;  // datagen writers per process
  uint32_t runs = 5, warmup = 1;
  uint32_t min_acc = 1, max_acc = 64;
  std::string test_read_delay = "0";
  MlperfIoOptions io;
  MlperfOutputOptions out;
};

void AddWorkloadOptions(CLI::App* cmd, TrainingCli* o, bool data_dir) {
  cmd->add_option("-w,--workload", o->workload, "unet3d, resnet50, cosmoflow or retinanet")
      ->required()
      ->check(CLI::IsMember({"unet3d", "resnet50", "cosmoflow", "retinanet"}));
  cmd->add_option("-g,--accelerator", o->accelerator, "Emulated accelerator: a100, h100, b200, mi355")
      ->required()
      ->check(CLI::IsMember({"a100", "h100", "b200", "mi355"}));
  cmd->add_option("-n,--accelerators", o->accelerators,
                  "Emulated accelerators (ranks) in total (datasize: the most you will run)")
      ->check(CLI::Range(1, 100000));
  if (data_dir) {
    cmd->add_option("--data-dir", o->data_dir, "Dataset directory (files in DIR/<workload>/train)")
        ->required();
  }
  cmd->add_option("--client-host-memory-gb", o->host_memory_gb,
                  "RAM per client host in GiB (default: MemTotal of /proc/meminfo)");
  cmd->add_option("--num-client-hosts", o->hosts, "Client hosts (default: MPI processes, or 1)");
  cmd->add_option("--edition", o->edition, "MLPerf Storage edition of the formulas: 1.0, 2.0, 3.0")
      ->check(CLI::IsMember({"1.0", "2.0", "3.0", "1", "2", "3"}));
  auto* g = "Workload parameters (changing them makes an OPEN/whatif run)";
  cmd->add_option("--num-files", o->num_files,
                  "Files (dataset.num_files_train; default: what datasize requires)")
      ->group(g);
  cmd->add_option("--record-length", o->record_length, "record_length_bytes")->group(g);
  cmd->add_option("--record-length-stdev", o->record_length_stdev, "record_length_bytes_stdev")
      ->group(g);
  cmd->add_option("--samples-per-file", o->samples_per_file, "num_samples_per_file")->group(g);
  cmd->add_option("--batch-size", o->batch_size, "batch_size")->group(g);
  cmd->add_option("--read-threads", o->read_threads, "reader.read_threads (CLOSED tunable)")
      ->group(g);
  cmd->add_option("--prefetch-size", o->prefetch_size, "reader.prefetch_size (CLOSED tunable)")
      ->group(g);
  cmd->add_option("--computation-time", o->computation_time, "seconds of compute per batch")
      ->group(g);
  cmd->add_option("--epochs", o->epochs, "epochs")->group(g);
  cmd->add_option("--steps", o->steps, "total_training_steps per epoch (0: the whole dataset)")
      ->group(g);
  cmd->add_option("--sharding", o->sharding,
                  "Sample order: v1 (global shuffle), v2 (contiguous), v3 (round-robin + "
                  "all-to-all); default: the edition's")
      ->check(CLI::IsMember({"", "v1", "v2", "v3"}))
      ->group(g);
}

struct Resolved {
  TrainingWorkload w;
  Edition edition = Edition::k3_0;
  uint32_t hosts = 1;
  double mem_gib = 0;
  Sizing sizing;
  std::vector<std::string> changed;  // parameters changed from the reference
};

Result<Resolved> Resolve(const TrainingCli& o, uint64_t accelerators) {
  Resolved r;
  ASSIGN_OR_RETURN(r.w, LookupWorkload(o.workload, o.accelerator));
  ASSIGN_OR_RETURN(r.edition, ParseEdition(o.edition));
  auto& w = r.w;
  auto change = [&](const char* name, auto& field, auto value, bool given) {
    if (!given) return;
    field = value;
    r.changed.push_back(fmt::format("{}={}", name, value));
  };
  change("record_length_bytes", w.record_length, o.record_length, o.record_length > 0);
  change("record_length_bytes_stdev", w.record_length_stdev, o.record_length_stdev,
         o.record_length_stdev >= 0);
  change("num_samples_per_file", w.samples_per_file, o.samples_per_file, o.samples_per_file > 0);
  change("batch_size", w.batch_size, o.batch_size, o.batch_size > 0);
  change("read_threads", w.read_threads, static_cast<uint32_t>(o.read_threads),
         o.read_threads >= 0);
  change("prefetch_size", w.prefetch_size, static_cast<uint32_t>(o.prefetch_size),
         o.prefetch_size >= 0);
  change("computation_time", w.computation_time, o.computation_time, o.computation_time >= 0);
  change("epochs", w.epochs, o.epochs, o.epochs > 0);
  r.hosts = o.hosts > 0 ? o.hosts : static_cast<uint32_t>(WorldComm().size());
  r.mem_gib = ClientMemoryGib(o.host_memory_gb);
  SizingInput in{w.record_length, w.samples_per_file, w.batch_size, accelerators, r.hosts,
                 r.mem_gib};
  r.sizing = ComputeSizing(in);
  return r;
}

std::string Header(const std::string& what, const Resolved& r, uint32_t accelerators) {
  std::string closed = IsClosed(r.w, r.edition)
                           ? "CLOSED combination"
                           : "whatif: not a CLOSED combination in this edition";
  std::string out = fmt::format(
      "t0fs bench mlperf training {}: {} on {} x {}, edition {} ({})\n", what, r.w.workload,
      accelerators, r.w.accelerator, EditionName(r.edition), closed);
  out += fmt::format(
      "  {} , record {:.0f} B (stdev {:.0f}), {} sample(s)/file, batch {}, read_threads {}, "
      "prefetch {}, compute {} s/batch, {} epochs, pass at AU >= {:.0f} %\n",
      ContainerName(r.w.container), r.w.record_length, r.w.record_length_stdev,
      r.w.samples_per_file, r.w.batch_size, r.w.read_threads, r.w.prefetch_size,
      r.w.computation_time, r.w.epochs, r.w.min_au * 100);
  if (!r.changed.empty()) {
    std::string list;
    for (const auto& c : r.changed) list += (list.empty() ? "" : ", ") + c;
    out += "  parameters changed from the reference (OPEN/whatif): " + list + "\n";
  }
  return out;
}

std::string DatagenCommand(const TrainingCli& o, const Resolved& r, uint64_t files,
                           const std::string& dir) {
  std::string cmd = fmt::format(
      "t0fs bench mlperf training datagen --workload {} --accelerator {} --num-files {}",
      r.w.workload, r.w.accelerator, files);
  if (r.sizing.suggested_subfolders > 1 && files > kFilesPerFolderHint) {
    cmd += fmt::format(" --subfolders {}", r.sizing.suggested_subfolders);
  }
  if (o.edition != "3.0") cmd += " --edition " + o.edition;
  return cmd + " --data-dir " + (dir.empty() ? "DIR" : dir);
}

int Datasize(const TrainingCli& o) {
  auto r = Resolve(o, o.accelerators);
  if (!r.ok()) return ReportError(r.status());
  if (WorldComm().rank() != 0) return 0;
  const Sizing& s = r->sizing;
  std::string out = Header("datasize", *r, o.accelerators);
  out += fmt::format("  client memory    {:.1f} GiB x {} host(s){}\n", r->mem_gib, r->hosts,
                     o.host_memory_gb > 0 ? "" : " (MemTotal of /proc/meminfo)");
  out += fmt::format("  files by memory  {:>12}  (5 x {:.1f} GiB / {} per file)\n",
                     s.files_by_memory, r->hosts * r->mem_gib, HumanBytes(s.file_bytes));
  out += fmt::format("  files by steps   {:>12}  (500 steps x batch {} x {} accelerators / {} "
                     "sample(s) per file)\n",
                     s.files_by_steps, r->w.batch_size, o.accelerators, r->w.samples_per_file);
  out += fmt::format("  required         {:>12}  files, {}\n", s.required_files,
                     HumanBytes(s.total_bytes));
  if (s.suggested_subfolders > 1) {
    out += fmt::format("  note: {} files is more than {}: use --subfolders {} (about 10,000 "
                       "files per folder)\n",
                       s.required_files, kFilesPerFolderHint, s.suggested_subfolders);
  }
  out += "Generate it with:\n  " + DatagenCommand(o, *r, s.required_files, o.data_dir) + "\n";
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int Datagen(const TrainingCli& o) {
  auto r = Resolve(o, o.accelerators);
  if (!r.ok()) return ReportError(r.status());
  auto io = ToIoChoice(o.io, o.data_dir);
  if (!io.ok()) return ReportError(io.status());
  Comm& comm = WorldComm();
  DatagenSpec spec;
  spec.workload = r->w;
  spec.layout.root = o.data_dir + "/" + r->w.workload;
  spec.layout.ext = r->w.ext;
  spec.layout.total_files = o.num_files > 0 ? o.num_files : r->sizing.required_files;
  spec.layout.subfolders =
      o.subfolders >= 0 ? static_cast<uint32_t>(o.subfolders)
                        : (spec.layout.total_files > kFilesPerFolderHint
                               ? static_cast<uint32_t>(r->sizing.suggested_subfolders)
                               : 0);
  spec.threads = o.threads;
  spec.engine = io->engine;
  spec.engine.depth = 1;
  spec.engine.buffer_size = io->transfer;
  spec.progress = ProgressWanted(o.out.quiet);
  SizeStats plan = PlanDatasetSizes(r->w, spec.layout.total_files);
  if (comm.rank() == 0) {
    std::string out = Header("datagen", *r, o.accelerators);
    out += fmt::format("  writing {} files, {} in total ({} on average, stdev {}, min {}, max {}) "
                       "to {} with {} writer(s) x {} process(es)\n",
                       spec.layout.total_files, HumanBytes(plan.bytes),
                       HumanBytes(plan.Mean()), HumanBytes(plan.Stdev()),
                       HumanBytes(static_cast<double>(plan.min)),
                       HumanBytes(static_cast<double>(plan.max)), spec.layout.TrainDir(),
                       spec.threads, comm.size());
    if (spec.layout.total_files < r->sizing.required_files) {
      out += fmt::format("  note: fewer files than datasize requires ({}): runs on it are not "
                         "valid CLOSED runs\n",
                         r->sizing.required_files);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    auto free_bytes = FreeBytes(o.data_dir);
    if (free_bytes.ok() && static_cast<double>(*free_bytes) < plan.bytes) {
      return ReportError(Status(StatusCode::kNoSpace,
                                fmt::format("{} has {} free, the dataset needs {}", o.data_dir,
                                            HumanBytes(static_cast<double>(*free_bytes)),
                                            HumanBytes(plan.bytes))));
    }
  }
  auto result = RunDatagen(spec, comm);
  if (!result.ok()) return ReportError(result.status());
  if (comm.rank() != 0) return 0;
  const DatagenResult& d = *result;
  std::string out = fmt::format(
      "datagen: {} files, {} in {:.1f} s ({}/s), CPU {:.1f} s\n", d.sizes.files,
      HumanBytes(d.sizes.bytes), d.seconds, HumanBytes(d.seconds > 0 ? d.sizes.bytes / d.seconds : 0),
      d.cpu.user_s + d.cpu.sys_s);
  if (d.stopped_early) {
    out += fmt::format("datagen STOPPED EARLY by {}: {} of {} files were written; the {} file(s) "
                       "this run created were removed (an incomplete dataset cannot be run)\n",
                       StopSignalName(), d.sizes.files, spec.layout.total_files, d.removed);
  } else {
    out += fmt::format("Run it with:\n  t0fs bench mlperf training run --workload {} --accelerator "
                       "{} --accelerators {} --num-files {} --data-dir {}\n",
                       r->w.workload, r->w.accelerator, o.accelerators, spec.layout.total_files,
                       o.data_dir);
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  ResultSet set = NewResultSet("mlperf-datagen",
                               fmt::format("{} dataset, {} files", r->w.workload,
                                           spec.layout.total_files),
                               o.out.label);
  set.params = {{"path", spec.layout.root}, {"workload", r->w.workload},
                {"num_files_train", spec.layout.total_files}, {"threads", spec.threads},
                {"engine", std::string(EngineName(spec.engine.kind))}};
  if (set.label.empty()) set.label = spec.layout.root;
  PhaseResult p;
  p.name = "write";
  p.workers = spec.threads * static_cast<uint32_t>(comm.size());
  p.last_done = {d.seconds, static_cast<uint64_t>(d.sizes.bytes), d.sizes.files};
  p.first_done = p.last_done;
  p.cpu = d.cpu;
  p.peak_rss = PeakRssBytes();
  p.ComputeFigures();
  RunResult run;
  run.phases.push_back(std::move(p));
  run.stopped_early = d.stopped_early;
  run.extra = {{"removed_files", d.removed}};
  set.runs.push_back(std::move(run));
  if (d.stopped_early) set.stopped_by = StopSignalName();
  Status st = WriteOutputs(set, o.out);
  if (!st.ok()) return ReportError(st);
  return d.stopped_early ? StopExitCode() : 0;
}

// Builds the run spec for `accelerators` (shared by run and search).
Result<TrainingSpec> MakeSpec(const TrainingCli& o, const Resolved& r, uint32_t accelerators,
                              std::string* notes, bool all_files = false) {
  TrainingSpec spec;
  spec.workload = r.w;
  spec.edition = r.edition;
  if (o.sharding.empty()) {
    spec.sharding = DefaultSharding(r.edition);
  } else {
    ASSIGN_OR_RETURN(spec.sharding, ParseSharding(o.sharding));
  }
  // The I/O choice first: a bad --engine is reported before a missing dataset.
  ASSIGN_OR_RETURN(IoChoice io, ToIoChoice(o.io, o.data_dir));
  ASSIGN_OR_RETURN(spec.layout, DetectDataset(o.data_dir + "/" + r.w.workload, r.w.ext));
  spec.accelerators = accelerators;
  spec.max_steps = o.steps;
  if (o.num_files > 0) {
    spec.files = o.num_files;
  } else if (all_files) {
    spec.files = spec.layout.total_files;  // search: one dataset for every probe
  } else if (r.sizing.required_files <= spec.layout.total_files) {
    spec.files = r.sizing.required_files;
  } else {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("datasize requires {} files for {} accelerators; {} holds {}: "
                              "generate more, or pass --num-files {} (not a valid CLOSED run)",
                              r.sizing.required_files, accelerators, spec.layout.TrainDir(),
                              spec.layout.total_files, spec.layout.total_files));
  }
  spec.engine = io.engine;
  spec.read.transfer = io.transfer;
  spec.read.direct = o.io.odirect;
  spec.drop = io.drop;
  ASSIGN_OR_RETURN(spec.read.delay_per_file_s,
                   ParseSecondsOption("--test-read-delay", o.test_read_delay));
  spec.progress = ProgressWanted(o.out.quiet);
  RETURN_IF_ERROR(ValidateTrainingSpec(spec, WorldComm().size()));
  if (notes != nullptr) {
    if (spec.files < r.sizing.required_files) {
      *notes += fmt::format("  note: {} files is below the datasize minimum of {} (>= 5 x client "
                            "RAM and >= 500 steps): not a valid CLOSED run\n",
                            spec.files, r.sizing.required_files);
    }
    if (spec.read.delay_per_file_s > 0) {
      *notes += fmt::format("  TEST HOOK: every file read is followed by a {} s sleep\n",
                            spec.read.delay_per_file_s);
    }
  }
  return spec;
}

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

// One run; prints epoch lines (rank 0) and writes its leaf.
Result<TrainingResult> OneRun(const TrainingSpec& spec, const std::string& leaf, bool print) {
  ASSIGN_OR_RETURN(TrainingResult r, RunTraining(spec, WorldComm(), [&](const EpochInfo& e) {
                     if (!print) return;
                     std::string line = EpochLine(e, spec);
                     std::fwrite(line.data(), 1, line.size(), stdout);
                     std::fflush(stdout);
                   }));
  if (WorldComm().rank() == 0 && !leaf.empty()) {
    RETURN_IF_ERROR(WriteJsonFile(leaf + "/summary.json", SummaryJson(r, spec)));
    RETURN_IF_ERROR(WriteJsonFile(leaf + "/0_per_epoch_stats.json", PerEpochStatsJson(r)));
    RETURN_IF_ERROR(WriteJsonFile(leaf + "/training_run_metadata.json", TrainingParams(spec)));
  }
  return r;
}

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

}  // namespace

void RegisterTraining(CLI::App* mlperf, int* exit_code) {
  auto* training = AddBenchSubcommand(
      mlperf, "training",
      "Training: datasize (dataset sizing), datagen (write the dataset), run (emulated "
      "accelerators), search (the most accelerators that pass)");
  training->require_subcommand(1);
  std::string table = "Workloads: " + WorkloadTableHelp();

  auto o_size = std::make_shared<TrainingCli>();
  auto* size = AddBenchSubcommand(training, "datasize",
                                  "Files needed: >= 5 x client RAM and >= 500 steps per epoch; "
                                  "prints the datagen command");
  AddWorkloadOptions(size, o_size.get(), false);
  size->add_option("--data-dir", o_size->data_dir, "Put this directory in the printed command");
  size->footer(table + "\nExample:\n  t0fs bench mlperf training datasize -w unet3d -g h100 -n 8 "
                       "--client-host-memory-gb 128");
  SetCallback(size, exit_code, [o_size] { return Datasize(*o_size); });

  auto o_gen = std::make_shared<TrainingCli>();
  auto* gen = AddBenchSubcommand(training, "datagen",
                                 "Write the dataset: reference names, sizes and formats (npz, "
                                 "tfrecord, raw), random incompressible content");
  AddWorkloadOptions(gen, o_gen.get(), true);
  gen->add_option("--subfolders", o_gen->subfolders,
                  "num_subfolders_train (default: files / 10,000 above 10,000 files, else none)");
  gen->add_option("-t,--threads", o_gen->threads, "Writer threads per process")
      ->check(CLI::Range(1, 1024));
  AddIoOptions(gen, &o_gen->io, "4M");
  AddOutputOptions(gen, &o_gen->out);
  gen->footer(table + "\nExample:\n  t0fs bench mlperf training datagen -w unet3d -g h100 "
                      "--num-files 7200 --data-dir /mnt/t0/mlperf");
  SetCallback(gen, exit_code, [o_gen] { return Datagen(*o_gen); });

  auto add_run_options = [](CLI::App* cmd, TrainingCli* o, uint32_t runs, uint32_t warmup) {
    o->runs = runs;
    o->warmup = warmup;
    cmd->add_option("--runs", o->runs, "Measured runs (the rules: 5; every one must pass)")
        ->check(CLI::Range(1, 100));
    cmd->add_option("--warmup-runs", o->warmup, "Warm-up runs before them (excluded)")
        ->check(CLI::Range(0, 100));
    cmd->add_option("--test-read-delay", o->test_read_delay,
                    "TEST HOOK: sleep this long after every file read (emulates slow storage)")
        ->group("Test hooks");
    AddIoOptions(cmd, &o->io, "4M");
    AddOutputOptions(cmd, &o->out);
  };
  auto o_run = std::make_shared<TrainingCli>();
  auto* run = AddBenchSubcommand(training, "run",
                                 "Run the emulated accelerators: AU, throughput, pass/fail per "
                                 "run, summary.json per run");
  AddWorkloadOptions(run, o_run.get(), true);
  add_run_options(run, o_run.get(), 5, 1);
  run->footer(table + "\nExample:\n  t0fs bench mlperf training run -w unet3d -g h100 -n 4 "
                      "--data-dir /mnt/t0/mlperf --json unet3d.json");
  SetCallback(run, exit_code, [o_run] { return Run(*o_run); });

  auto o_search = std::make_shared<TrainingCli>();
  auto* search = AddBenchSubcommand(training, "search",
                                    "The largest number of accelerators that passes (doubling, "
                                    "then bisection over runs)");
  AddWorkloadOptions(search, o_search.get(), true);
  search->add_option("--min", o_search->min_acc, "Smallest accelerator count")
      ->check(CLI::Range(1, 100000));
  search->add_option("--max", o_search->max_acc, "Largest accelerator count")
      ->check(CLI::Range(1, 100000));
  add_run_options(search, o_search.get(), 1, 0);
  search->footer(table + "\nExample:\n  t0fs bench mlperf training search -w unet3d -g h100 "
                         "--num-files 64 --data-dir /mnt/t0/mlperf --max 16");
  SetCallback(search, exit_code, [o_search] { return Search(*o_search); });
}

}  // namespace t0fs::bench::mlperf
