// `t0fs bench mlperf checkpointing run`.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/cli_options.h"
#include "bench/comm.h"
#include "bench/mlperf/au_metrics.h"
#include "bench/mlperf/checkpoint_run.h"
#include "bench/mlperf/cli_mlperf.h"
#include "bench/mlperf/cli_mlperf_options.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"

namespace t0fs::bench::mlperf {
namespace {

constexpr uint32_t kSubsetRanks = 8;
constexpr double kMaxWriteReadGapS = 30;  // R §4.7.1

struct CheckpointCli {
  std::string model, folder, time_between = "5s", one_t = "formula";
  uint32_t ranks = 0, writes = 10, reads = 10, runs = 1;
  bool subset = false, keep = false;
  double scale = 1, host_memory_gb = 0;
  MlperfIoOptions io;
  MlperfOutputOptions out;
};

PhaseResult ToPhase(const CheckpointResult& r, bool write) {
  const auto& ops = write ? r.writes : r.reads;
  PhaseResult p;
  p.name = write ? "write" : "read";
  p.workers = ops.empty() ? 0 : static_cast<uint32_t>(ops.front().rank_seconds.size());
  double slowest = 0, fastest = 0;
  for (const auto& op : ops) {
    slowest += op.Slowest();
    fastest += op.Fastest();
  }
  uint64_t bytes = r.bytes_per_checkpoint * ops.size();
  uint64_t files = r.files_per_checkpoint * ops.size();
  p.last_done = {slowest, bytes, files};
  p.first_done = {fastest, bytes, files};
  p.latency = write ? r.write_latency : r.read_latency;
  p.cpu = write ? r.write_cpu : r.read_cpu;
  p.peak_rss = r.peak_rss;
  PhaseSummary s = r.Summarize(write);
  const double gib = 1073741824.0;
  p.figures.push_back({"x_gibps_rank0", s.gibps_rank0_mean * gib, "B/s", Better::kHigher,
                       "Throughput (rank-0 span)"});
  p.figures.push_back({"x_gibps_slowest", s.gibps_slowest_mean * gib, "B/s", Better::kHigher,
                       "Throughput (slowest rank)"});
  p.figures.push_back({"x_duration_rank0", s.duration_rank0_mean, "s", Better::kLower,
                       "Duration (rank 0)"});
  p.figures.push_back({"x_duration_slowest", s.duration_slowest_mean, "s", Better::kLower,
                       "Duration (slowest rank)"});
  p.figures.push_back({"x_rank_gibps", s.rank_gibps_mean * gib, "B/s", Better::kHigher,
                       "Per-rank throughput (mean)"});
  p.ComputeFigures();
  return p;
}

nlohmann::json SummaryOf(const CheckpointResult& r, const CheckpointSpec& spec) {
  nlohmann::json j = {{"checkpoint_size_GB", r.bytes_per_checkpoint / 1073741824.0},
                      {"full_checkpoint_size_GB", r.full_bytes_per_checkpoint / 1073741824.0},
                      {"scale", spec.scale},
                      {"num_checkpoints_write", r.writes.size()},
                      {"num_checkpoints_read", r.reads.size()},
                      {"files_per_checkpoint", r.files_per_checkpoint},
                      {"cache_drop", r.cache_note},
                      {"stopped_early", r.stopped_early},
                      {"client_cache_advisory", r.advisory},
                      {"write_to_read_gap_seconds", r.gap_s}};
  for (bool write : {true, false}) {
    if ((write ? r.writes : r.reads).empty()) continue;
    PhaseSummary s = r.Summarize(write);
    std::string p = write ? "save" : "load";
    j[p + "_checkpoint_io_mean_GB_per_second"] = s.gibps_rank0_mean;
    j[p + "_checkpoint_io_stdev_GB_per_second"] = s.gibps_rank0_stdev;
    j[p + "_checkpoint_duration_mean_seconds"] = s.duration_rank0_mean;
    j[p + "_checkpoint_duration_stdev_seconds"] = s.duration_rank0_stdev;
    j[p + "_checkpoint_io_slowest_rank_mean_GB_per_second"] = s.gibps_slowest_mean;
    j[p + "_checkpoint_duration_slowest_rank_mean_seconds"] = s.duration_slowest_mean;
    j[p + "_checkpoint_per_rank_GB_per_second"] = {
        {"min", s.rank_gibps_min}, {"mean", s.rank_gibps_mean}, {"max", s.rank_gibps_max}};
  }
  return {{"metric", j}};
}

int RunCheckpoint(const CheckpointCli& o) {
  Comm& comm = WorldComm();
  const bool root = comm.rank() == 0;
  auto llm = LookupLlm(o.model);
  if (!llm.ok()) return ReportError(llm.status());
  if (o.one_t != "formula" && o.one_t != "table") {
    return ReportError(Status(StatusCode::kInvalidArgument, "--llama3-1t-size: formula or table"));
  }
  // Subset mode without --ranks: the 8 ranks of the v2.0 CLOSED subset runs (spec §3.3).
  const uint32_t ranks = o.subset && o.ranks == 0 ? kSubsetRanks : o.ranks;
  auto plan = PlanCheckpoint(*llm, ranks, o.subset,
                             o.one_t == "table" ? OneTSize::kTable : OneTSize::kFormula);
  if (!plan.ok()) return ReportError(plan.status());
  auto io = ToIoChoice(o.io, o.folder);
  if (!io.ok()) return ReportError(io.status());
  if (!(o.scale > 0 && o.scale <= 1)) {
    return ReportError(Status(StatusCode::kInvalidArgument, "--scale must be in (0, 1]"));
  }
  auto between = ParseSecondsOption("--time-between", o.time_between);
  if (!between.ok()) return ReportError(between.status());
  CheckpointSpec spec;
  spec.plan = *plan;
  spec.folder = o.folder;
  spec.writes = o.writes;
  spec.reads = o.reads;
  spec.time_between_s = *between;
  spec.scale = o.scale;
  spec.engine = io->engine;
  spec.transfer = io->transfer;
  spec.direct = o.io.odirect;
  spec.drop = io->drop;
  spec.host_memory_gib = ClientMemoryGib(o.host_memory_gb);
  spec.keep = o.keep;
  spec.progress = ProgressWanted(o.out.quiet);
  const CheckpointPlan& pl = spec.plan;
  uint64_t scaled = 0;
  for (uint32_t r = 0; r < pl.ranks; ++r) {
    for (const auto& f : pl.files[r]) scaled += ScaledBytes(f.bytes, spec.scale);
  }
  std::string leaf;
  if (root) {
    auto made = MakeResultsLeaf(o.out.results_dir, "checkpointing", llm->name);
    if (!made.ok()) return ReportError(made.status());
    leaf = *made;
    bool closed = !o.subset && pl.ranks == llm->closed_ranks();
    std::string out = fmt::format(
        "t0fs bench mlperf checkpointing run: {} on {} ranks ({}), TP {} x PP {} x DP {}, ZeRO-{}\n",
        llm->name, pl.ranks,
        o.subset ? "subset of the CLOSED layout" : closed ? "CLOSED layout" : "OPEN layout",
        pl.tp, pl.pp, pl.dp, llm->zero_stage);
    out += fmt::format("  full checkpoint  {} = model {} + optimizer {}; {} files per checkpoint\n",
                       HumanBytes(static_cast<double>(pl.total_bytes())),
                       HumanBytes(static_cast<double>(pl.model_bytes)),
                       HumanBytes(static_cast<double>(pl.optimizer_bytes)),
                       [&] {
                         uint64_t n = 0;
                         for (const auto& f : pl.files) n += f.size();
                         return n;
                       }());
    out += fmt::format("  per rank         {} .. {}\n",
                       HumanBytes(static_cast<double>(pl.RankBytes(pl.ranks - 1))),
                       HumanBytes(static_cast<double>(pl.RankBytes(0))));
    if (o.scale < 1) {
      out += fmt::format("  SCALED x{}: writes {} per checkpoint instead of {} (every file x{}, "
                         "rounded up to 4 KiB); figures are for the scaled bytes\n",
                         o.scale, HumanBytes(static_cast<double>(scaled)),
                         HumanBytes(static_cast<double>(pl.total_bytes())), o.scale);
    }
    out += fmt::format("  {} write(s) then {} read(s) in {}/{}/global_epoch1_step<k>/, {} s "
                       "between, fsync per file, engine {}{}, transfer {} KiB; results in {}\n",
                       o.writes, o.reads, o.folder, llm->name, spec.time_between_s,
                       EngineName(spec.engine.kind), spec.direct ? " O_DIRECT" : "",
                       spec.transfer / 1024, leaf);
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
  }
  ResultSet set = NewResultSet("mlperf-checkpointing",
                               fmt::format("{} {} ranks{}", llm->name, pl.ranks,
                                           o.scale < 1 ? fmt::format(" (scaled x{})", o.scale) : ""),
                               o.out.label);
  set.params = {{"path", o.folder}, {"model", llm->name}, {"ranks", pl.ranks},
                {"subset", o.subset}, {"scale", o.scale}, {"engine", o.io.engine},
                {"direct", o.io.odirect}, {"full_bytes", pl.total_bytes()},
                {"bytes", scaled}, {"llama3_1t_size", o.one_t}};
  if (set.label.empty()) set.label = o.folder;
  // Per run: GiB/s of each phase under both definitions, for the mean/CV lines.
  std::vector<double> w0, ws, r0, rs;
  bool all_gaps_ok = true;
  for (uint32_t run = 1; run <= o.runs && !StopRequested(); ++run) {
    if (root && o.runs > 1) std::printf("run %u\n", run);
    auto result = RunCheckpointing(spec, comm, [&](bool write, const CheckpointOp& op, uint32_t of) {
      if (!root) return;
      double gib = static_cast<double>(op.bytes) / 1073741824.0;
      std::printf("  %s %2u/%u: rank 0 %.3f s (%.3f GiB/s), slowest rank %.3f s (%.3f GiB/s)\n",
                  write ? "write" : "read ", op.step, of, op.Rank0(),
                  op.Rank0() > 0 ? gib / op.Rank0() : 0, op.Slowest(),
                  op.Slowest() > 0 ? gib / op.Slowest() : 0);
    });
    if (!result.ok()) {
      if (StopRequested()) break;  // an error the stop caused: report what ran
      return ReportError(result.status());
    }
    if (!root) {
      if (result->stopped_early) break;
      continue;
    }
    const CheckpointResult& r = *result;
    std::string out;
    if (r.stopped_early) {
      out += fmt::format("  STOPPED EARLY by {}: {} of {} write(s) and {} of {} read(s) completed; "
                         "the checkpoint files were {}\n",
                         StopSignalName(), r.writes.size(), o.writes, r.reads.size(), o.reads,
                         o.keep ? "kept (--keep)" : "removed");
    }
    if (!r.advisory.empty()) out += "  " + r.advisory + "\n";
    if (!r.cache_note.empty()) {
      out += fmt::format("  before the reads: {} (write->read gap {:.2f} s; rule: <= 30 s)\n",
                         r.cache_note, r.gap_s);
    }
    for (bool write : {true, false}) {
      if ((write ? r.writes : r.reads).empty()) continue;
      PhaseSummary s = r.Summarize(write);
      out += fmt::format(
          "[METRIC] {} {:.3f} GiB: rank-0 definition {:.3f} GiB/s ({:.3f}) in {:.3f} s; "
          "slowest-rank definition {:.3f} GiB/s in {:.3f} s; per rank {:.3f} .. {:.3f} GiB/s "
          "(mean {:.3f})\n",
          write ? "save" : "load", r.bytes_per_checkpoint / 1073741824.0, s.gibps_rank0_mean,
          s.gibps_rank0_stdev, s.duration_rank0_mean, s.gibps_slowest_mean,
          s.duration_slowest_mean, s.rank_gibps_min, s.rank_gibps_max, s.rank_gibps_mean);
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (!r.writes.empty()) {
      PhaseSummary s = r.Summarize(true);
      w0.push_back(s.gibps_rank0_mean);
      ws.push_back(s.gibps_slowest_mean);
    }
    if (!r.reads.empty()) {
      PhaseSummary s = r.Summarize(false);
      r0.push_back(s.gibps_rank0_mean);
      rs.push_back(s.gibps_slowest_mean);
      all_gaps_ok = all_gaps_ok && r.gap_s <= kMaxWriteReadGapS;
    }
    Status st = WriteJsonFile(fmt::format("{}/run{}/summary.json", leaf, run), SummaryOf(r, spec));
    if (!st.ok()) return ReportError(st);
    RunResult rr;
    if (!r.writes.empty()) rr.phases.push_back(ToPhase(r, true));
    if (!r.reads.empty()) rr.phases.push_back(ToPhase(r, false));
    rr.extra = SummaryOf(r, spec);
    rr.cache = r.cache;
    rr.stopped_early = r.stopped_early;
    set.runs.push_back(std::move(rr));
    if (r.stopped_early) break;
  }
  if (StopRequested()) set.stopped_by = StopSignalName();
  if (!root) return set.stopped_early() ? StopExitCode() : 0;
  // The rules publish the mean over the runs' phase means (R §4.3.6); a run
  // is valid when its reads start within 30 s of the end of its writes.
  std::string out = fmt::format("\nMLPerf checkpointing, {} run(s)\n", o.runs);
  auto line = [&](const char* what, const std::vector<double>& v0, const std::vector<double>& vs) {
    if (v0.empty()) return;
    out += fmt::format("  {}  mean {:.3f} GiB/s (rank 0), {:.3f} GiB/s (slowest rank); CV "
                       "{:.2f} % / {:.2f} %\n",
                       what, Mean(v0), Mean(vs), CoefficientOfVariation(v0),
                       CoefficientOfVariation(vs));
  };
  line("save", w0, ws);
  line("load", r0, rs);
  if (set.stopped_early()) {
    out += fmt::format("  result  STOPPED EARLY by {}: not a valid result\n", set.stopped_by);
  } else if (!r0.empty()) {
    out += fmt::format("  result  {}: write->read gap {} 30 s in every run\n",
                       all_gaps_ok ? "PASS" : "FAIL", all_gaps_ok ? "<=" : "NOT <=");
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  for (const std::string& warning : set.Cache().warnings) {
    std::fprintf(stderr, "t0fs bench: warning: %s\n", warning.c_str());
  }
  set.extra = {{"pass", all_gaps_ok && !set.stopped_early()}, {"results_dir", leaf}};
  Status st = WriteOutputs(set, o.out);
  if (!st.ok()) return ReportError(st);
  return set.stopped_early() ? StopExitCode() : 0;
}

}  // namespace

void RegisterCheckpointing(CLI::App* mlperf, int* exit_code) {
  auto* family = AddBenchSubcommand(mlperf, "checkpointing",
                                    "LLM checkpoint write and restore (Llama 3 8B/70B/405B/1T)");
  family->require_subcommand(1);
  auto o = std::make_shared<CheckpointCli>();
  auto* run = AddBenchSubcommand(family, "run",
                                 "10 checkpoints written, then 10 read back; GiB/s and durations "
                                 "under the rank-0 and slowest-rank definitions");
  run->add_option("--model", o->model, "llama3-8b, llama3-70b, llama3-405b, llama3-1t")
      ->required()
      ->check(CLI::IsMember({"llama3-8b", "llama3-70b", "llama3-405b", "llama3-1t"}));
  run->add_option("--checkpoint-folder,--data-dir", o->folder, "Where checkpoints are written")
      ->required();
  run->add_option("--ranks", o->ranks,
                  "Ranks (0: the CLOSED count: 8, 64, 512, 1024); OPEN: a multiple of TP x PP");
  run->add_flag("--subset", o->subset,
                "Subset mode: --ranks (default 8) ranks write their share of the full CLOSED "
                "layout (8 ranks of llama3-70b: 114 GiB; 1 rank of llama3-8b: 13 GiB)");
  run->add_option("--num-checkpoints-write", o->writes, "Checkpoints written");
  run->add_option("--num-checkpoints-read", o->reads, "Checkpoints read back (after the writes)");
  run->add_option("--time-between", o->time_between, "Sleep before each checkpoint");
  run->add_option("--scale", o->scale,
                  "Shrink every file by this factor (0..1] to fit a small machine; the full sizes "
                  "are still printed");
  run->add_option("--client-host-memory-gb", o->host_memory_gb,
                  "RAM per client for the cache advisory (default: /proc/meminfo)");
  run->add_option("--llama3-1t-size", o->one_t,
                  "llama3-1t bytes: formula (DLIO's, 15,427 GiB) or table (mlpstorage's, 18 TB)")
      ->check(CLI::IsMember({"formula", "table"}));
  run->add_option("--runs", o->runs, "Repeat the whole run")->check(CLI::Range(1, 100));
  run->add_flag("--keep", o->keep, "Keep the checkpoint files (default: removed at the end)");
  AddIoOptions(run, &o->io, "32M");
  AddOutputOptions(run, &o->out);
  run->footer("Example:\n  t0fs bench mlperf checkpointing run --model llama3-8b "
              "--checkpoint-folder /mnt/t0/ckpt --scale 0.01 --json ckpt.json");
  SetCallback(run, exit_code, [o] { return RunCheckpoint(*o); });
}

}  // namespace t0fs::bench::mlperf
