// `t0fs bench mlperf training datasize` (the files a run needs, and the
// datagen command that writes them) and `... training datagen`.
#include <cstdio>

#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/comm.h"
#include "bench/mlperf/cli_training.h"
#include "bench/mlperf/datagen.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"

namespace t0fs::bench::mlperf::training_cli {
namespace {

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

}  // namespace

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

}  // namespace t0fs::bench::mlperf::training_cli
