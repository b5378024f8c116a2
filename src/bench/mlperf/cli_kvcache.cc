// `t0fs bench mlperf kvcache run`.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "bench/cli_common.h"
#include "bench/cli_options.h"
#include "bench/comm.h"
#include "bench/mlperf/au_metrics.h"
#include "bench/mlperf/cli_mlperf.h"
#include "bench/mlperf/cli_mlperf_options.h"
#include "bench/mlperf/kvcache_run.h"
#include "bench/mlperf/sample_reader.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"

namespace t0fs::bench::mlperf {
namespace {

struct KvCli {
  std::string option = "1", model, generation, duration, cache_dir, gap = "90s";
  int64_t users = -1, max_allocs = -1;
  double gpu_gb = -1, cpu_gb = -1, scale = 1, storage_gb = 0;
  uint32_t clients = 0, trials = 3;
  uint64_t seed = 42;
  MlperfIoOptions io;
  MlperfOutputOptions out;
};

Result<KvRunSpec> MakeKvSpec(const KvCli& o, int number, const IoChoice& io) {
  KvRunSpec spec;
  ASSIGN_OR_RETURN(spec.option, ClosedOption(number));
  if (!o.model.empty()) spec.option.model = o.model;
  ASSIGN_OR_RETURN(spec.model, LookupKvModel(spec.option.model));
  if (o.users >= 0) spec.option.users = static_cast<uint32_t>(o.users);
  if (o.max_allocs >= 0) spec.option.max_concurrent_allocs = static_cast<uint32_t>(o.max_allocs);
  if (o.gpu_gb >= 0) spec.option.gpu_gb = o.gpu_gb;
  if (o.cpu_gb >= 0) spec.option.cpu_gb = o.cpu_gb;
  if (!o.generation.empty()) {
    ASSIGN_OR_RETURN(spec.option.generation, ParseGeneration(o.generation));
  }
  if (!o.duration.empty()) {
    ASSIGN_OR_RETURN(spec.option.duration_s, ParseSecondsOption("--duration", o.duration));
  }
  if (spec.option.users == 0) return Status(StatusCode::kInvalidArgument, "--users must be >= 1");
  spec.cache_dir = o.cache_dir;
  spec.clients = o.clients > 0 ? o.clients : static_cast<uint32_t>(WorldComm().size());
  spec.scale = o.scale;
  spec.storage_bytes = static_cast<uint64_t>(o.storage_gb * 1073741824.0);
  spec.seed = o.seed;
  spec.engine = io.engine;
  spec.engine.depth = std::max<uint32_t>(1, io.engine.depth);
  spec.transfer = io.transfer;
  spec.progress = ProgressWanted(o.out.quiet);
  // Entries are written and read within a trial: the page cache can only be
  // dropped per entry, as the reference does (fadvise before each read).
  if (io.drop == CacheDropMode::kSysctl || io.drop == CacheDropMode::kBoth) {
    return Status(StatusCode::kInvalidArgument,
                  "kvcache: --drop-caches sysctl/both cannot drop an entry written moments before "
                  "its read; use auto or fadvise (fadvise before each read) or none");
  }
  spec.drop_before_read = io.drop != CacheDropMode::kNone;
  return spec;
}

// Per-trial figures of one option, aggregated as the reference does: means
// of the rates, the worst P95.
struct KvSeries {
  std::vector<double> tok, wall, rbw, wbw;
  double rp95 = 0, wp95 = 0;

  explicit KvSeries(const std::vector<KvTrialResult>& trials) {
    for (const auto& t : trials) {
      tok.push_back(t.StorageTokensPerSec());
      wall.push_back(t.WallTokensPerSec());
      rbw.push_back(t.ReadGiBps());
      wbw.push_back(t.WriteGiBps());
      rp95 = std::max(rp95, t.ReadP95Ms());
      wp95 = std::max(wp95, t.WriteP95Ms());
    }
  }
};

std::vector<PhaseResult> ToPhases(const std::string& prefix,
                                  const std::vector<KvTrialResult>& trials) {
  // Trials merged: bytes add, histograms merge; figures are the reference's aggregates.
  PhaseResult rd, wr;
  rd.name = prefix + " read";
  wr.name = prefix + " write";
  const KvSeries s(trials);
  double elapsed = 0;
  for (const auto& t : trials) {
    double el = 0;
    for (const auto& c : t.clients) {
      el = std::max(el, c.elapsed_s);
      rd.last_done.bytes += c.stats.storage_read_bytes;
      rd.last_done.ops += c.stats.storage_reads;
      wr.last_done.bytes += c.stats.storage_write_bytes;
      wr.last_done.ops += c.stats.storage_writes;
      rd.latency.Merge(c.stats.read_device_ns);
      wr.latency.Merge(c.stats.write_device_ns);
    }
    elapsed += el;
    rd.cpu = wr.cpu = t.cpu;
    rd.peak_rss = wr.peak_rss = t.peak_rss;
  }
  rd.last_done.elapsed_s = wr.last_done.elapsed_s = elapsed;
  rd.first_done = rd.last_done;
  wr.first_done = wr.last_done;
  const double gib = 1073741824.0;
  auto add = [](PhaseResult& p, std::string n, double v, std::string u, Better b, std::string l) {
    p.figures.push_back({std::move(n), v, std::move(u), b, std::move(l)});
  };
  add(rd, "x_storage_tokens", Mean(s.tok), "tokens/s", Better::kHigher,
      "Storage tokens/s (reference)");
  add(rd, "x_wall_tokens", Mean(s.wall), "tokens/s", Better::kHigher, "Tokens/s (wall clock)");
  add(rd, "x_read_bw", Mean(s.rbw) * gib, "B/s", Better::kHigher, "Storage read bandwidth");
  add(rd, "x_read_p95", s.rp95 * 1e6, "ns", Better::kLower, "Read device P95 (max)");
  add(wr, "x_write_bw", Mean(s.wbw) * gib, "B/s", Better::kHigher, "Storage write bandwidth");
  add(wr, "x_write_p95", s.wp95 * 1e6, "ns", Better::kLower, "Write device P95 (max)");
  rd.ComputeFigures();
  wr.ComputeFigures();
  return {rd, wr};
}

int RunKv(const KvCli& o) {
  Comm& comm = WorldComm();
  const bool root = comm.rank() == 0;
  auto io = ToIoChoice(o.io, o.cache_dir);
  if (!io.ok()) return ReportError(io.status());
  std::vector<int> options;
  if (o.option == "all") {
    options = {1, 2, 3};
  } else if (o.option == "1" || o.option == "2" || o.option == "3") {
    options = {o.option[0] - '0'};
  } else {
    return ReportError(Status(StatusCode::kInvalidArgument, "--option must be 1, 2, 3 or all"));
  }
  if (!(o.scale > 0 && o.scale <= 1)) {
    return ReportError(Status(StatusCode::kInvalidArgument, "--scale must be in (0, 1]"));
  }
  auto gap = ParseSecondsOption("--gap", o.gap);
  if (!gap.ok()) return ReportError(gap.status());
  std::string leaf;
  if (root) {
    auto made = MakeResultsLeaf(o.out.results_dir, "kvcache", "run");
    if (!made.ok()) return ReportError(made.status());
    leaf = *made;
  }
  ResultSet set = NewResultSet("mlperf-kvcache", "kv cache option " + o.option, o.out.label);
  set.params = {{"path", o.cache_dir}, {"option", o.option}, {"engine", o.io.engine},
                {"scale", o.scale}, {"trials", o.trials}};
  if (set.label.empty()) set.label = o.cache_dir;
  // Every option's spec before the first trial runs.
  std::vector<KvRunSpec> specs;
  for (int number : options) {
    auto spec = MakeKvSpec(o, number, *io);
    if (!spec.ok()) return ReportError(spec.status());
    specs.push_back(std::move(spec).value());
  }
  RunResult all;
  nlohmann::json summary = nlohmann::json::object();
  for (size_t idx = 0; idx < options.size() && !StopRequested(); ++idx) {
    if (idx > 0 && !SleepUnlessStopped(*gap)) break;
    const KvRunSpec* spec = &specs[idx];
    const KvOption& op = spec->option;
    if (root) {
      std::printf("t0fs bench mlperf kvcache run: option %d, %s (%lu B/token), %u users x %u "
                  "client(s), %.0f s, GPU tier %.1f GB, CPU tier %.1f GB, max-concurrent-allocs "
                  "%u, generation %s, %u trial(s), cache %s%s\n",
                  op.number, spec->model.name.c_str(),
                  static_cast<unsigned long>(spec->model.BytesPerToken()), op.users,
                  spec->clients, op.duration_s, op.gpu_gb, op.cpu_gb, op.max_concurrent_allocs,
                  std::string(GenerationName(op.generation)).c_str(), o.trials,
                  o.cache_dir.c_str(),
                  o.scale < 1 ? fmt::format(" (entries SCALED x{})", o.scale).c_str() : "");
      std::fflush(stdout);
    }
    std::vector<KvTrialResult> trials;
    for (uint32_t trial = 1; trial <= o.trials && !StopRequested(); ++trial) {
      auto t = RunKvTrial(*spec, trial, comm);
      if (!t.ok()) return ReportError(t.status());
      all.cache.Merge(t->Cache(io->drop));
      if (root && t->stopped_early) {
        std::printf("  trial %u STOPPED EARLY by %s: its figures cover the time it ran\n", trial,
                    StopSignalName().c_str());
      }
      if (root) {
        std::printf("  trial %u: storage %.1f tokens/s (reference: tokens / summed I/O latency), "
                    "wall %.1f tokens/s, read %.3f GiB/s, write %.3f GiB/s, read P95 %.2f ms, "
                    "write P95 %.2f ms\n",
                    trial, t->StorageTokensPerSec(), t->WallTokensPerSec(), t->ReadGiBps(),
                    t->WriteGiBps(), t->ReadP95Ms(), t->WriteP95Ms());
        for (uint32_t c : t->ZeroEntryClients()) {
          std::printf("    client %u stored no entry on the storage tier (contributes 0)\n", c);
        }
        std::fflush(stdout);
      }
      const bool cut = t->stopped_early;
      trials.push_back(std::move(t).value());
      if (cut) break;
    }
    if (!root || trials.empty()) continue;
    const KvSeries s(trials);
    nlohmann::json per_trial = nlohmann::json::array();
    for (const auto& t : trials) {
      per_trial.push_back({{"storage_throughput_tokens_per_sec", t.StorageTokensPerSec()},
                           {"avg_throughput_tokens_per_sec", t.WallTokensPerSec()},
                           {"tier_storage_read_bandwidth_gbps", t.ReadGiBps()},
                           {"tier_storage_write_bandwidth_gbps", t.WriteGiBps()},
                           {"storage_read_device_p95_ms", t.ReadP95Ms()},
                           {"storage_write_device_p95_ms", t.WriteP95Ms()},
                           {"ranks", t.clients.size()}});
    }
    std::printf("[METRIC] option %d: read %.3f GiB/s, read P95 %.2f ms, write P95 %.2f ms, "
                "storage %.1f tokens/s, %u rank(s); write %.3f GiB/s; wall-clock %.1f tokens/s\n",
                op.number, Mean(s.rbw), s.rp95, s.wp95, Mean(s.tok), spec->clients, Mean(s.wbw),
                Mean(s.wall));
    std::printf("  over %zu trial(s): CV storage tokens/s %.2f %%, wall tokens/s %.2f %%, read "
                "GiB/s %.2f %%, write GiB/s %.2f %% (sample stddev / mean)\n",
                trials.size(), CoefficientOfVariation(s.tok), CoefficientOfVariation(s.wall),
                CoefficientOfVariation(s.rbw), CoefficientOfVariation(s.wbw));
    std::fflush(stdout);
    summary[fmt::format("option{}", op.number)] = {
        {"tier_storage_read_bandwidth_gbps", Mean(s.rbw)},
        {"tier_storage_write_bandwidth_gbps", Mean(s.wbw)},
        {"storage_read_device_p95_ms", s.rp95},
        {"storage_write_device_p95_ms", s.wp95},
        {"storage_throughput_tokens_per_sec", Mean(s.tok)},
        {"avg_throughput_tokens_per_sec", Mean(s.wall)},
        {"total_ranks", spec->clients},
        {"trials", per_trial}};
    for (auto& p : ToPhases(fmt::format("option{}", op.number), trials)) {
      all.phases.push_back(std::move(p));
    }
  }
  const bool stopped = StopRequested();
  if (!root) return stopped ? StopExitCode() : 0;
  Status st = WriteJsonFile(leaf + "/kvcache_run_summary.json", summary);
  if (!st.ok()) return ReportError(st);
  all.extra = summary;
  all.stopped_early = stopped;
  set.runs.push_back(std::move(all));
  if (stopped) set.stopped_by = StopSignalName();
  for (const std::string& warning : set.Cache().warnings) {
    std::fprintf(stderr, "t0fs bench: warning: %s\n", warning.c_str());
  }
  st = WriteOutputs(set, o.out);
  if (!st.ok()) return ReportError(st);
  if (stopped) {
    std::printf("STOPPED EARLY by %s: the figures cover the trials (and the part of a trial) "
                "that ran; the cache files were removed\n",
                set.stopped_by.c_str());
  }
  std::printf("results in %s\n", leaf.c_str());
  return stopped ? StopExitCode() : 0;
}

}  // namespace

void RegisterKvcache(CLI::App* mlperf, int* exit_code) {
  auto* family = AddBenchSubcommand(mlperf, "kvcache",
                                    "LLM inference KV-cache offload to storage (MLPerf Storage "
                                    "3.0 KV cache)");
  family->require_subcommand(1);
  auto o = std::make_shared<KvCli>();
  auto* run = AddBenchSubcommand(family, "run",
                                 "Multi-user inference load through GPU/CPU/storage tiers; "
                                 "tokens/s, bandwidth, P95 device latency");
  run->add_option("--option", o->option,
                  "CLOSED option: 1 (storage stress, 8B, 200 users), 2 (8B, 100 users, 4 GB CPU "
                  "tier), 3 (70B, 70 users), all");
  run->add_option("--cache-dir", o->cache_dir, "The storage tier's directory")->required();
  run->add_option("--trials", o->trials, "Trials per option (the rules: 3)")
      ->check(CLI::Range(1, 100));
  run->add_option("--clients", o->clients, "Clients (ranks), each with a private cache (default: "
                                           "MPI processes, or 1)");
  run->add_option("--gap", o->gap, "Pause between options (--option all)");
  auto* g = "Overrides (OPEN)";
  run->add_option("--model", o->model, "llama3.1-8b, llama3.1-70b-instruct")->group(g);
  run->add_option("--users", o->users, "Users per client")->group(g);
  run->add_option("--duration", o->duration, "Run time per trial (e.g. 300s)")->group(g);
  run->add_option("--gpu-mem-gb", o->gpu_gb, "GPU tier capacity (GB)")->group(g);
  run->add_option("--cpu-mem-gb", o->cpu_gb, "CPU tier capacity (GB)")->group(g);
  run->add_option("--max-concurrent-allocs", o->max_allocs, "Concurrent prefill writes")->group(g);
  run->add_option("--generation", o->generation, "none, fast (2 ms/token), realistic (30 ms)")
      ->group(g);
  run->add_option("--seed", o->seed, "Seed (the rules fix 42)")->group(g);
  run->add_option("--scale", o->scale,
                  "Entry bytes x this factor (0..1] for small machines; tokens are unchanged")
      ->group(g);
  run->add_option("--storage-capacity-gb", o->storage_gb,
                  "Storage tier capacity (default: 95 % of the free space)")
      ->group(g);
  AddIoOptions(run, &o->io, "16M");
  AddOutputOptions(run, &o->out);
  run->footer("Example:\n  t0fs bench mlperf kvcache run --option 1 --cache-dir /mnt/t0/kv "
              "--json kv.json");
  SetCallback(run, exit_code, [o] { return RunKv(*o); });
}

}  // namespace t0fs::bench::mlperf
