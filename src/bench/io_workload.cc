// The io workload's driver (io_workload.h): prepare the dataset, lay out and
// drop the cache for reads, start the workers (io_worker.cc) at one barrier
// over all ranks, show progress, run the verify pass, collect the phases.
#include "bench/io_workload.h"

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/io_run.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"
#include "bench/sysstat.h"
#include "common/clock.h"

namespace t0fs::bench {
namespace internal {

void IoRun::Fail(const Status& st) {
  std::lock_guard<std::mutex> lock(error_mu_);
  if (error_.ok()) error_ = st;
  abort_.store(true, std::memory_order_relaxed);
}

void IoRun::SnapshotFirstDone(uint64_t now) {
  bool expected = false;
  if (!first_.taken.compare_exchange_strong(expected, true)) return;
  first_.ns = now;
  for (uint32_t idx = 0; idx < spec_.threads; ++idx) {
    const LiveCounters& c = live_[idx];
    first_.read.bytes += c.read_bytes.load(std::memory_order_relaxed);
    first_.read.ops += c.read_ops.load(std::memory_order_relaxed);
    first_.write.bytes += c.write_bytes.load(std::memory_order_relaxed);
    first_.write.ops += c.write_ops.load(std::memory_order_relaxed);
  }
}

Status IoRun::Prepare() {
  if (spec_.engine.kind == EngineKind::kNative) {
    // Before connecting anywhere: is PATH on t0fs at all?
    RETURN_IF_ERROR(FindT0fsMount(spec_.path).status());
  }
  ASSIGN_OR_RETURN(DatasetSpec ds, PlanIoDataset(spec_, static_cast<uint32_t>(comm_.size())));
  ASSIGN_OR_RETURN(plan_, PlanDataset(ds));
  files_.Init(&plan_, comm_.rank(), spec_.threads);
  return Status::Ok();
}

Result<RunResult> IoRun::Run() {
  Status prepared = Prepare();
  if (comm_.AnyFailed(!prepared.ok())) {
    if (!prepared.ok()) return prepared;
    return Status(StatusCode::kInternal, "another rank failed to prepare");
  }
  files_.RecordExisting();
  RunResult run;
  // Lay out the data that reads need (untimed), with the verify pattern,
  // then drop its page cache and check that the drop worked.
  Status laid = Status::Ok();
  if (HasReads(spec_.rw)) {
    laid = files_.LayOut(spec_.seed, spec_.progress && comm_.rank() == 0);
    if (laid.ok() && StopRequested()) {
      laid = Status(StatusCode::kInterrupted, "stopped during the lay-out");
    }
    if (laid.ok() && spec_.direct) {
      run.cache = DirectReadsReport(spec_.drop);
    } else if (laid.ok()) {
      auto dropped = files_.DropCache(spec_.drop);
      if (dropped.ok()) {
        run.cache = std::move(dropped).value();
      } else {
        laid = dropped.status();
      }
    }
  }
  if (comm_.AnyFailed(!laid.ok())) {
    files_.Cleanup(spec_.keep, comm_);
    if (laid.code() == StatusCode::kInterrupted) {
      run.stopped_early = true;  // nothing measured yet
      return run;
    }
    if (!laid.ok()) return laid;
    return Status(StatusCode::kInternal, "another rank failed to lay out its files");
  }

  live_ = std::make_unique<LiveCounters[]>(spec_.threads);
  outputs_.resize(spec_.threads);
  std::vector<std::thread> threads;
  threads.reserve(spec_.threads);
  for (uint32_t idx = 0; idx < spec_.threads; ++idx) threads.emplace_back([this, idx] { Worker(idx); });
  gate_.WaitReady(spec_.threads);
  bool local_failed = abort_.load();
  bool any_failed = comm_.AnyFailed(local_failed);  // doubles as the start barrier
  start_ns_ = MonoNanos();
  measure_ns_ = start_ns_ + static_cast<uint64_t>(spec_.ramp_s * 1e9);
  end_ns_ = spec_.runtime_s > 0 ? measure_ns_ + static_cast<uint64_t>(spec_.runtime_s * 1e9) : 0;
  if (any_failed) abort_.store(true);
  CpuSample cpu_begin = SampleCpu();
  gate_.Go();
  std::optional<Progress> progress;
  {
    uint64_t expected_bytes = 0;
    for (uint32_t idx = 0; idx < spec_.threads; ++idx) {
      expected_bytes += plan_.shares[GlobalThread(idx)].length;
    }
    std::string name = std::string(RwModeName(spec_.rw));
    progress.emplace(spec_.progress && comm_.rank() == 0, spec_.phase_prefix + name,
                     [this, expected_bytes] {
                       ProgressSnapshot snap;
                       for (uint32_t idx = 0; idx < spec_.threads; ++idx) {
                         snap.bytes += live_[idx].any_bytes.load(std::memory_order_relaxed);
                         snap.ops += live_[idx].any_ops.load(std::memory_order_relaxed);
                       }
                       if (end_ns_ > 0) {
                         snap.fraction = static_cast<double>(MonoNanos() - start_ns_) /
                                         static_cast<double>(end_ns_ - start_ns_);
                       } else if (expected_bytes > 0) {
                         snap.fraction = static_cast<double>(snap.bytes) / expected_bytes;
                       }
                       return snap;
                     });
  }
  if (spec_.ramp_s > 0) {
    // CPU accounting starts with the measurement.
    uint64_t now = MonoNanos();
    if (measure_ns_ > now) SleepUnlessStopped(static_cast<double>(measure_ns_ - now) / 1e9);
    cpu_begin = SampleCpu();
  }
  for (auto& t : threads) t.join();
  CpuSample cpu_end = SampleCpu();
  progress->Stop();

  // A stop ends the workers between I/Os; what they did is the result.
  run.stopped_early = StopRequested();
  // The post-write verify pass (untimed): read back what was written.
  uint64_t verify_errors = 0;
  if (error_.ok() && !run.stopped_early && spec_.verify && HasWrites(spec_.rw) &&
      spec_.rw != RwMode::kRandRW) {
    std::vector<std::thread> verifiers;
    for (uint32_t idx = 0; idx < spec_.threads; ++idx) {
      verifiers.emplace_back([this, idx] { VerifyWorker(idx, outputs_[idx]); });
    }
    for (auto& t : verifiers) t.join();
  }
  for (const auto& out : outputs_) verify_errors += out.verify_errors;

  bool failed = !error_.ok();
  bool any = comm_.AnyFailed(failed);
  files_.Cleanup(spec_.keep, comm_);
  if (failed) return error_;
  if (any) return Status(StatusCode::kIoError, "another rank failed");

  uint64_t last_ns = measure_ns_;
  for (const auto& out : outputs_) last_ns = std::max(last_ns, out.finish_ns);
  CpuUsage cpu = CpuBetween(cpu_begin, cpu_end);
  auto make_phase = [&](const char* name, bool reads) {
    PhaseResult p;
    p.name = spec_.phase_prefix + name;
    p.workers = spec_.threads;
    for (const auto& out : outputs_) p.latency.Merge(reads ? out.read_lat : out.write_lat);
    p.last_done.elapsed_s = static_cast<double>(last_ns - measure_ns_) / 1e9;
    for (uint32_t idx = 0; idx < spec_.threads; ++idx) {
      p.last_done.bytes += reads ? live_[idx].read_bytes.load() : live_[idx].write_bytes.load();
      p.last_done.ops += reads ? live_[idx].read_ops.load() : live_[idx].write_ops.load();
    }
    p.first_done = reads ? first_.read : first_.write;
    p.first_done.elapsed_s =
        static_cast<double>(std::max(first_.ns, measure_ns_) - measure_ns_) / 1e9;
    p.cpu = cpu;
    p.peak_rss = PeakRssBytes();
    p.verify_errors = verify_errors;
    p.ComputeFigures();
    return p;
  };
  if (HasReads(spec_.rw)) run.phases.push_back(make_phase("read", true));
  if (HasWrites(spec_.rw)) run.phases.push_back(make_phase("write", false));
  return run;
}

}  // namespace internal

Result<RunResult> RunIo(const IoSpec& spec, Comm& comm) {
  RETURN_IF_ERROR(ValidateIoSpec(spec));
  internal::IoRun run(spec, comm);
  ASSIGN_OR_RETURN(RunResult local, run.Run());
  return GatherRun(local, comm);
}

}  // namespace t0fs::bench
