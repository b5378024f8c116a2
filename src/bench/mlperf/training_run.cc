#include "bench/mlperf/training_run.h"

#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <ctime>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/mlperf/loader.h"
#include "bench/mlperf/step_barrier.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"
#include "common/clock.h"
#include "common/host_name.h"

namespace t0fs::bench::mlperf {

std::string IsoNow() {
  timeval tv{};
  ::gettimeofday(&tv, nullptr);
  std::tm tm{};
  localtime_r(&tv.tv_sec, &tm);
  char buf[40];
  std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:06d}", buf, static_cast<int>(tv.tv_usec));
}

static ShardingInput ShardingOf(const TrainingSpec& spec) {
  ShardingInput in;
  in.sharding = spec.sharding;
  in.files = spec.files;
  in.samples_per_file = spec.workload.samples_per_file;
  in.ranks = spec.accelerators;
  in.shuffle = spec.workload.shuffle;
  return in;
}

uint64_t TrainingSteps(const TrainingSpec& spec) {
  const TrainingWorkload& w = spec.workload;
  uint64_t steps = w.loader == LoaderKind::kTf
                       ? TfStepsPerEpoch(spec.files, w.samples_per_file, spec.accelerators,
                                         w.batch_size)
                       : StepsPerEpoch(ShardingOf(spec), w.batch_size);
  if (spec.max_steps > 0) steps = std::min(steps, spec.max_steps);
  return steps;
}

Status ValidateTrainingSpec(const TrainingSpec& spec, int processes) {
  auto bad = [](std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); };
  if (spec.accelerators == 0) return bad("--accelerators must be >= 1");
  if (spec.accelerators % processes != 0) {
    return bad(fmt::format("--accelerators {} is not a multiple of the {} MPI processes (each "
                           "host runs the same number of accelerators)",
                           spec.accelerators, processes));
  }
  if (spec.workload.batch_size == 0) return bad("--batch-size must be >= 1");
  if (spec.files == 0) return bad("no files to read");
  if (spec.files > spec.layout.total_files) {
    return bad(fmt::format("--num-files {} is more than the {} files generated", spec.files,
                           spec.layout.total_files));
  }
  if (TrainingSteps(spec) == 0) {
    return bad(fmt::format("{} files give no full batch of {} per accelerator for {} "
                           "accelerators: generate more files or use fewer accelerators",
                           spec.files, spec.workload.batch_size, spec.accelerators));
  }
  return Status::Ok();
}

namespace {

struct RankEpoch {
  BlockMetrics block;
  double seconds = 0;
  double compute_sum = 0, compute_sq = 0, load_sum = 0;
  uint64_t steps = 0;
  Status status;
  bool stopped = false;  // a stop request ended the block early
};

nlohmann::json ToJson(const std::vector<RankEpoch>& ranks) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& r : ranks) {
    j.push_back({r.block.au, r.block.throughput, r.block.steps, r.seconds, r.compute_sum,
                 r.compute_sq, r.load_sum});
  }
  return j;
}

std::vector<RankEpoch> FromJson(const nlohmann::json& j) {
  std::vector<RankEpoch> out;
  for (const auto& e : j) {
    RankEpoch r;
    r.block.au = e[0].get<double>();
    r.block.throughput = e[1].get<double>();
    r.block.steps = e[2].get<uint64_t>();
    r.steps = r.block.steps;
    r.seconds = e[3].get<double>();
    r.compute_sum = e[4].get<double>();
    r.compute_sq = e[5].get<double>();
    r.load_sum = e[6].get<double>();
    out.push_back(r);
  }
  return out;
}

}  // namespace

Result<TrainingResult> RunTraining(const TrainingSpec& spec, Comm& comm,
                                   const std::function<void(const EpochInfo&)>& on_epoch) {
  RETURN_IF_ERROR(ValidateTrainingSpec(spec, comm.size()));
  const TrainingWorkload& w = spec.workload;
  const uint32_t local = spec.accelerators / static_cast<uint32_t>(comm.size());
  const uint32_t first_rank = static_cast<uint32_t>(comm.rank()) * local;
  const uint64_t steps = TrainingSteps(spec);

  std::atomic<uint64_t> live_bytes{0}, live_samples{0};
  std::vector<std::unique_ptr<BatchLoader>> loaders;
  Status made;
  for (uint32_t idx = 0; idx < local && made.ok(); ++idx) {
    LoaderContext ctx;
    ctx.workload = w;
    ctx.layout = spec.layout;
    ctx.sharding = ShardingOf(spec);
    ctx.rank = first_rank + idx;
    ctx.engine = spec.engine;
    ctx.engine.buffer_size = spec.read.transfer;
    ctx.read = spec.read;
    ctx.live_bytes = &live_bytes;
    ctx.live_samples = &live_samples;
    auto loader = MakeLoader(ctx);
    if (!loader.ok()) {
      made = loader.status();
    } else {
      loaders.push_back(std::move(loader).value());
    }
  }
  if (comm.AnyFailed(!made.ok())) {
    return made.ok() ? Status(StatusCode::kInternal, "another process failed to start") : made;
  }

  TrainingResult result;
  result.steps_per_epoch = steps;
  std::vector<std::vector<BlockMetrics>> per_rank_epochs(comm.rank() == 0 ? spec.accelerators
                                                                          : 0);
  CpuSample cpu0 = SampleCpu();
  const uint64_t run_t0 = MonoNanos();
  result.start = IsoNow();
  std::vector<std::string> files;
  for (uint64_t i = 0; i < spec.files; ++i) files.push_back(spec.layout.FilePath(i));
  for (uint32_t epoch = 1; epoch <= w.epochs; ++epoch) {
    // Collective: every process stops before the same epoch.
    if (comm.AnyFailed(StopRequested())) {
      result.stopped_early = true;
      break;
    }
    EpochInfo info;
    info.epoch = epoch;
    // 1. Cache drop (every process, its whole dataset view), then a barrier.
    // O_DIRECT reads bypass the page cache: nothing to drop.
    auto dropped = spec.read.direct ? Result<CacheReport>(DirectReadsReport(spec.drop))
                                    : DropPageCache(spec.drop, files);
    if (comm.AnyFailed(!dropped.ok())) {
      return dropped.ok() ? Status(StatusCode::kInternal, "another process failed")
                          : dropped.status();
    }
    info.cache_note = "page cache " + dropped->Describe();
    result.cache.Merge(*dropped);
    comm.Barrier();
    info.start = IsoNow();
    // 2. The ranks' blocks.
    std::vector<RankEpoch> ranks(local);
    StepBarrier barrier(local, comm);
    live_samples.store(0);
    const double want = static_cast<double>(steps) * w.batch_size * local;
    {
      Progress progress(spec.progress, fmt::format("epoch {}/{}", epoch, w.epochs), [&] {
        uint64_t s = live_samples.load(std::memory_order_relaxed);
        return ProgressSnapshot{live_bytes.load(std::memory_order_relaxed), s,
                                want > 0 ? std::min(1.0, s / want) : -1.0};
      });
      std::vector<std::thread> threads;
      for (uint32_t idx = 0; idx < local; ++idx) {
        threads.emplace_back([&, idx] {
          RankEpoch& out = ranks[idx];
          BatchLoader& loader = *loaders[idx];
          std::vector<double> compute, proc;
          compute.reserve(steps);
          proc.reserve(steps);
          const uint64_t block_start = MonoNanos();
          Status st = loader.Start(epoch, steps);
          uint64_t t0 = MonoNanos();
          for (uint64_t step = 0; step < steps && st.ok(); ++step) {
            if (StopRequested()) {
              out.stopped = true;
              break;
            }
            st = loader.Next();
            if (!st.ok()) break;
            uint64_t t1 = MonoNanos();
            PreciseSleep(w.computation_time);
            uint64_t t2 = MonoNanos();
            double c = static_cast<double>(t2 - t1) / 1e9;
            compute.push_back(c);
            proc.push_back(static_cast<double>(t2 - t0) / 1e9);
            out.compute_sum += c;
            out.compute_sq += c * c;
            out.load_sum += static_cast<double>(t1 - t0) / 1e9;
            barrier.Arrive();
            t0 = MonoNanos();
          }
          const uint64_t block_end = MonoNanos();
          loader.Stop();
          // An error the stop caused (a read cut short) is the stop.
          if (!st.ok() && StopRequested()) {
            st = Status::Ok();
            out.stopped = true;
          }
          if (!st.ok() || out.stopped) barrier.Abort();
          out.status = st;
          out.seconds = static_cast<double>(block_end - block_start) / 1e9;
          out.block = ComputeBlock(compute, proc, out.seconds, w.batch_size, spec.edition);
          out.steps = compute.size();
          barrier.Leave();
        });
      }
      barrier.Serve();
      for (auto& t : threads) t.join();
    }
    info.end = IsoNow();
    Status failed;
    bool stopped = false;
    for (const auto& r : ranks) {
      if (!r.status.ok() && failed.ok()) failed = r.status;
      stopped = stopped || r.stopped;
    }
    if (comm.AnyFailed(!failed.ok())) {
      return failed.ok() ? Status(StatusCode::kIoError, "another process failed") : failed;
    }
    // A cut epoch is not measured (its barrier was abandoned).
    if (comm.AnyFailed(stopped || StopRequested())) {
      result.stopped_early = true;
      break;
    }
    // 3. Gather the ranks' epoch to rank 0.
    std::vector<std::string> all = comm.Gather(ToJson(ranks).dump());
    if (comm.rank() == 0) {
      std::vector<RankEpoch> every;
      for (const std::string& text : all) {
        for (auto& r : FromJson(nlohmann::json::parse(text))) every.push_back(r);
      }
      double au = 0, thr = 0, csum = 0, csq = 0, lsum = 0, n = 0;
      for (size_t r = 0; r < every.size(); ++r) {
        BlockMetrics block = CombineBlocks(std::span(&every[r].block, 1));
        per_rank_epochs[r].push_back(block);
        au += block.au;
        thr += block.throughput;
        csum += every[r].compute_sum;
        csq += every[r].compute_sq;
        lsum += every[r].load_sum;
        n += static_cast<double>(every[r].steps);
        info.seconds = std::max(info.seconds, every[r].seconds);
      }
      info.au_pct = 100.0 * au / static_cast<double>(every.size());
      info.throughput = thr;
      if (n > 0) {
        info.compute_mean_s = csum / n;
        info.compute_stdev_s = std::sqrt(std::max(0.0, csq / n - info.compute_mean_s *
                                                                     info.compute_mean_s));
        info.load_mean_s = lsum / n;
      }
      if (on_epoch) on_epoch(info);
    }
    result.epochs.push_back(info);
  }
  result.end = IsoNow();
  result.wall_s = static_cast<double>(MonoNanos() - run_t0) / 1e9;
  result.cpu = CpuBetween(cpu0, SampleCpu());
  result.peak_rss = PeakRssBytes();
  for (auto& loader : loaders) {
    result.bytes += loader->bytes();
    result.samples += loader->samples();
    result.latency.Merge(loader->Latency());
  }
  if (comm.rank() == 0) {
    result.metrics = AggregateRun(per_rank_epochs, w.record_length, w.min_au);
  }
  // Totals over processes; hosts = distinct host names.
  nlohmann::json mine = {result.bytes, result.samples, result.cpu.user_s + result.cpu.sys_s,
                         HostName()};
  std::vector<std::string> all = comm.Gather(mine.dump());
  if (comm.rank() == 0) {
    result.bytes = result.samples = 0;
    result.cpu_seconds = 0;
    std::set<std::string> hosts;
    for (const std::string& text : all) {
      auto j = nlohmann::json::parse(text);
      result.bytes += j[0].get<uint64_t>();
      result.samples += j[1].get<uint64_t>();
      result.cpu_seconds += j[2].get<double>();
      hosts.insert(j[3].get<std::string>());
    }
    result.hosts = static_cast<int>(hosts.size());
  }
  return result;
}

}  // namespace t0fs::bench::mlperf
