#include "bench/mlperf/checkpoint_run.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <mutex>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/mlperf/au_metrics.h"
#include "bench/mlperf/file_sink.h"
#include "bench/mlperf/sample_reader.h"
#include "bench/mlperf/step_barrier.h"
#include "bench/pattern.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"
#include "common/buffer.h"
#include "common/clock.h"

namespace t0fs::bench::mlperf {

double CheckpointOp::Slowest() const {
  return rank_seconds.empty() ? 0 : *std::max_element(rank_seconds.begin(), rank_seconds.end());
}
double CheckpointOp::Fastest() const {
  return rank_seconds.empty() ? 0 : *std::min_element(rank_seconds.begin(), rank_seconds.end());
}

uint64_t ScaledBytes(uint64_t bytes, double scale) {
  if (scale >= 1) return bytes;
  auto s = static_cast<uint64_t>(std::ceil(static_cast<double>(bytes) * scale));
  return std::max<uint64_t>(kPageSize, AlignUp(s, kPageSize));
}

PhaseSummary CheckpointResult::Summarize(bool write) const {
  const auto& ops = write ? writes : reads;
  PhaseSummary s;
  std::vector<double> g0, gs, d0, ds, per_rank;
  const double gib = static_cast<double>(bytes_per_checkpoint) / 1073741824.0;
  for (const auto& op : ops) {
    d0.push_back(op.Rank0());
    ds.push_back(op.Slowest());
    g0.push_back(op.Rank0() > 0 ? gib / op.Rank0() : 0);
    gs.push_back(op.Slowest() > 0 ? gib / op.Slowest() : 0);
  }
  s.gibps_rank0_mean = Mean(g0);
  s.gibps_rank0_stdev = PopulationStdev(g0);
  s.gibps_slowest_mean = Mean(gs);
  s.gibps_slowest_stdev = PopulationStdev(gs);
  s.duration_rank0_mean = Mean(d0);
  s.duration_rank0_stdev = PopulationStdev(d0);
  s.duration_slowest_mean = Mean(ds);
  s.duration_slowest_stdev = PopulationStdev(ds);
  for (const auto& op : ops) {
    for (size_t r = 0; r < op.rank_seconds.size() && r < rank_bytes.size(); ++r) {
      if (op.rank_seconds[r] > 0) {
        per_rank.push_back(static_cast<double>(rank_bytes[r]) / 1073741824.0 / op.rank_seconds[r]);
      }
    }
  }
  if (!per_rank.empty()) {
    s.rank_gibps_min = *std::min_element(per_rank.begin(), per_rank.end());
    s.rank_gibps_max = *std::max_element(per_rank.begin(), per_rank.end());
    s.rank_gibps_mean = Mean(per_rank);
  }
  return s;
}

namespace {

std::string StepDir(const CheckpointSpec& spec, uint32_t step) {
  return fmt::format("{}/{}/global_epoch1_step{}", spec.folder, spec.plan.llm.name, step);
}

}  // namespace

Result<CheckpointResult> RunCheckpointing(
    const CheckpointSpec& spec, Comm& comm,
    const std::function<void(bool, const CheckpointOp&, uint32_t)>& on_checkpoint) {
  const CheckpointPlan& plan = spec.plan;
  if (plan.ranks % static_cast<uint32_t>(comm.size()) != 0) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("--ranks {} is not a multiple of the {} MPI processes", plan.ranks,
                              comm.size()));
  }
  const uint32_t local = plan.ranks / static_cast<uint32_t>(comm.size());
  const uint32_t first = static_cast<uint32_t>(comm.rank()) * local;
  CheckpointResult result;
  for (uint32_t r = 0; r < plan.ranks; ++r) {
    result.rank_bytes.push_back(0);
    for (const auto& f : plan.files[r]) {
      result.rank_bytes.back() += ScaledBytes(f.bytes, spec.scale);
      result.bytes_per_checkpoint += ScaledBytes(f.bytes, spec.scale);
      result.full_bytes_per_checkpoint += f.bytes;
      ++result.files_per_checkpoint;
    }
  }
  // Engine options per local rank, buffer = min(transfer, the rank's largest
  // file). Each rank thread makes its engine (an engine belongs to the thread
  // that uses it, engine.h); one is made here to fail early.
  std::vector<EngineOptions> engine_options;
  for (uint32_t idx = 0; idx < local; ++idx) {
    uint64_t largest = kPageSize;
    for (const auto& f : plan.files[first + idx]) {
      largest = std::max(largest, ScaledBytes(f.bytes, spec.scale));
    }
    EngineOptions eo = spec.engine;
    eo.buffer_size = AlignUp(std::min<uint64_t>(spec.transfer, largest), kPageSize);
    engine_options.push_back(eo);
  }
  if (local > 0) RETURN_IF_ERROR(MakeEngine(engine_options[0]).status());
  std::vector<Histogram> write_lat(local), read_lat(local);
  std::atomic<uint64_t> live_bytes{0};
  // Removes the checkpoints (unless --keep), at the end, after a failure
  // and after a stop alike. Collective (barriers).
  auto Cleanup = [&] {
    if (spec.keep || spec.writes == 0) return;
    comm.Barrier();
    for (uint32_t k = 1; k <= spec.writes; ++k) {
      for (uint32_t r = first; r < first + local; ++r) {
        for (const auto& file : plan.files[r]) ::unlink((StepDir(spec, k) + "/" + file.name).c_str());
      }
    }
    comm.Barrier();
    if (comm.rank() == 0) {
      for (uint32_t k = 1; k <= spec.writes; ++k) ::rmdir(StepDir(spec, k).c_str());
      ::rmdir(fmt::format("{}/{}", spec.folder, plan.llm.name).c_str());
    }
  };

  // Returns with *stopped set when a stop cut the phase short; `ops` then
  // holds the checkpoints every rank completed.
  auto phase = [&](bool write, uint32_t count, std::vector<CheckpointOp>* ops,
                   bool* stopped) -> Status {
    CpuSample cpu0 = SampleCpu();
    const uint64_t want = result.bytes_per_checkpoint * count;
    live_bytes.store(0);
    std::vector<std::vector<double>> seconds(local, std::vector<double>(count, 0));
    std::vector<uint64_t> bytes(local, 0);
    std::vector<uint32_t> completed(local, 0);  // checkpoints each local rank finished
    std::mutex mu;  // guards error
    Status error;
    StepBarrier barrier(local, comm);
    {
      Progress progress(spec.progress, write ? "checkpoint write" : "checkpoint read", [&] {
        uint64_t b = live_bytes.load(std::memory_order_relaxed);
        return ProgressSnapshot{b, 0, want > 0 ? static_cast<double>(b) / want : -1.0};
      });
      std::vector<std::thread> threads;
      for (uint32_t idx = 0; idx < local; ++idx) {
        threads.emplace_back([&, idx] {
          const uint32_t rank = first + idx;
          auto made = MakeEngine(engine_options[idx]);
          Status st = made.status();
          for (uint32_t k = 1; k <= count && st.ok(); ++k) {
            Engine& engine = **made;
            if (!SleepUnlessStopped(spec.time_between_s)) break;
            barrier.Arrive();
            if (StopRequested()) break;
            uint64_t t0 = MonoNanos();
            std::string dir = StepDir(spec, k);
            if (write) st = MakeDirs(dir);
            for (const auto& f : plan.files[rank]) {
              if (!st.ok()) break;
              if (StopRequested()) {
                st = Status(StatusCode::kInterrupted, "stopped");
                break;
              }
              std::string path = dir + "/" + f.name;
              uint64_t size = ScaledBytes(f.bytes, spec.scale);
              uint64_t f0 = MonoNanos();
              if (write) {
                auto sink = FileSink::Open(engine, path, Mix64(rank * 1000003ULL + k));
                if (!sink.ok()) {
                  st = sink.status();
                  break;
                }
                st = sink->AppendRandom(size);
                Status fin = sink->Finish(/*fsync=*/true, /*drop_cache=*/true);
                if (st.ok()) st = fin;
                write_lat[idx].Record(MonoNanos() - f0);
              } else {
                ReadOptions ro;
                ro.transfer = spec.transfer;
                ro.direct = spec.direct;
                auto got = SampleReader(engine, ro).ReadWhole(path);
                if (!got.ok()) {
                  st = got.status();
                  break;
                }
                if (*got != size) {
                  st = Status(StatusCode::kIoError,
                              fmt::format("{} has {} bytes, expected {} (written with another "
                                          "--scale or --model?)",
                                          path, *got, size));
                  break;
                }
                FadviseDontNeed(path);
                read_lat[idx].Record(MonoNanos() - f0);
              }
              bytes[idx] += size;
              live_bytes.fetch_add(size, std::memory_order_relaxed);
            }
            seconds[idx][k - 1] = static_cast<double>(MonoNanos() - t0) / 1e9;
            if (st.ok()) completed[idx] = k;
          }
          // An error the stop caused (an I/O cut short) is the stop.
          if (!st.ok() && StopRequested()) st = Status::Ok();
          if (StopRequested()) barrier.Abort();
          if (!st.ok()) {
            barrier.Abort();
            std::lock_guard<std::mutex> lock(mu);
            if (error.ok()) error = st;
          }
          barrier.Leave();
        });
      }
      barrier.Serve();
      for (auto& t : threads) t.join();
    }
    (write ? result.write_cpu : result.read_cpu) = CpuBetween(cpu0, SampleCpu());
    if (comm.AnyFailed(!error.ok())) {
      return error.ok() ? Status(StatusCode::kIoError, "another process failed") : error;
    }
    *stopped = comm.AnyFailed(StopRequested());
    uint32_t complete = count;
    for (uint32_t c : completed) complete = std::min(complete, c);
    nlohmann::json mine = {{"seconds", seconds}, {"complete", complete}};
    std::vector<std::string> all = comm.Gather(mine.dump());
    if (comm.rank() != 0) return Status::Ok();
    std::vector<std::vector<double>> every;  // [rank][k]
    for (const auto& text : all) {
      auto j = nlohmann::json::parse(text);
      complete = std::min(complete, j["complete"].get<uint32_t>());
      for (auto& rank : j["seconds"]) every.push_back(rank.get<std::vector<double>>());
    }
    for (uint32_t k = 0; k < complete; ++k) {
      CheckpointOp op;
      op.step = k + 1;
      op.bytes = result.bytes_per_checkpoint;
      for (const auto& rank : every) op.rank_seconds.push_back(rank[k]);
      ops->push_back(op);
      if (on_checkpoint) on_checkpoint(write, op, count);
    }
    return Status::Ok();
  };

  uint64_t write_end = MonoNanos();
  bool stopped = false;
  if (spec.writes > 0) {
    Status wrote = phase(true, spec.writes, &result.writes, &stopped);
    if (!wrote.ok()) {
      Cleanup();
      return wrote;
    }
    write_end = MonoNanos();
  }
  // The client-cache rule (R §4): checkpoint bytes per client < 3 × client
  // RAM means reads could come from the page cache: drop it in between.
  const double per_client = static_cast<double>(result.bytes_per_checkpoint) / comm.size();
  const double ram = spec.host_memory_gib * 1073741824.0;
  if (per_client < 3 * ram) {
    result.advisory = fmt::format(
        "client-cache advisory: {:.2f} GiB written per client is less than 3 x client RAM "
        "({:.1f} GiB): reads could be served from the page cache; the rules require dropping "
        "caches between the write and read phases",
        per_client / 1073741824.0, 3 * spec.host_memory_gib);
  } else {
    result.advisory = fmt::format(
        "client-cache advisory: {:.2f} GiB per client >= 3 x client RAM ({:.1f} GiB): no "
        "cache drop required",
        per_client / 1073741824.0, 3 * spec.host_memory_gib);
  }
  if (spec.reads > 0 && !stopped) {
    std::vector<std::string> files;
    for (uint32_t k = 1; k <= spec.reads; ++k) {
      for (uint32_t r = first; r < first + local; ++r) {
        for (const auto& file : plan.files[r]) files.push_back(StepDir(spec, k) + "/" + file.name);
      }
    }
    auto dropped = spec.direct ? Result<CacheReport>(DirectReadsReport(spec.drop))
                               : DropPageCache(spec.drop, files);
    if (comm.AnyFailed(!dropped.ok())) {
      Cleanup();
      return dropped.ok() ? Status(StatusCode::kIoError, "another process failed")
                          : dropped.status();
    }
    result.cache = *dropped;
    result.cache_note = "page cache " + dropped->Describe();
    comm.Barrier();
    result.gap_s = static_cast<double>(MonoNanos() - write_end) / 1e9;
    Status read = phase(false, spec.reads, &result.reads, &stopped);
    if (!read.ok()) {
      Cleanup();
      return read;
    }
  }
  result.stopped_early = stopped;
  for (uint32_t idx = 0; idx < local; ++idx) {
    result.write_latency.Merge(write_lat[idx]);
    result.read_latency.Merge(read_lat[idx]);
  }
  result.peak_rss = PeakRssBytes();
  Cleanup();
  return result;
}

}  // namespace t0fs::bench::mlperf
