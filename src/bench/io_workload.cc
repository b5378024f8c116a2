#include "bench/io_workload.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/dataset_files.h"
#include "bench/pattern.h"
#include "bench/permutation.h"
#include "bench/progress.h"
#include "bench/start_gate.h"
#include "bench/stop_signal.h"
#include "bench/sysstat.h"
#include "common/buffer.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/fd.h"
#include "common/io_backend.h"

namespace t0fs::bench {

Result<RwMode> ParseRwMode(std::string_view text) {
  if (text == "read") return RwMode::kRead;
  if (text == "write") return RwMode::kWrite;
  if (text == "randread") return RwMode::kRandRead;
  if (text == "randwrite") return RwMode::kRandWrite;
  if (text == "randrw") return RwMode::kRandRW;
  return Status(StatusCode::kInvalidArgument,
                fmt::format("unknown --rw '{}' (read, write, randread, randwrite, randrw)", text));
}

std::string_view RwModeName(RwMode mode) {
  switch (mode) {
    case RwMode::kRead: return "read";
    case RwMode::kWrite: return "write";
    case RwMode::kRandRead: return "randread";
    case RwMode::kRandWrite: return "randwrite";
    case RwMode::kRandRW: return "randrw";
  }
  return "?";
}

static bool HasReads(RwMode m) {
  return m == RwMode::kRead || m == RwMode::kRandRead || m == RwMode::kRandRW;
}
static bool HasWrites(RwMode m) {
  return m == RwMode::kWrite || m == RwMode::kRandWrite || m == RwMode::kRandRW;
}
static bool IsRandom(RwMode m) {
  return m == RwMode::kRandRead || m == RwMode::kRandWrite || m == RwMode::kRandRW;
}

Status ValidateIoSpec(const IoSpec& spec) {
  auto bad = [](std::string msg) { return Status(StatusCode::kInvalidArgument, std::move(msg)); };
  if (spec.path.empty()) return bad("PATH is required");
  if (spec.block == 0) return bad("--bs must be > 0");
  if (spec.block > (uint64_t{1} << 30)) return bad("--bs must be at most 1 GiB");
  if (spec.direct && spec.block % 512 != 0) {
    return bad(fmt::format("--direct needs --bs to be a multiple of 512 (got {})", spec.block));
  }
  if (spec.threads == 0 || spec.threads > 4096) return bad("--threads must be 1..4096");
  if (spec.iodepth == 0 || spec.iodepth > 4096) return bad("--iodepth must be 1..4096");
  if (spec.nrfiles == 0 || spec.nrfiles > 100000) return bad("--files must be 1..100000");
  if (spec.rwmixread > 100) return bad("--rwmixread must be 0..100");
  if (spec.size == 0) return bad("--size must be > 0");
  if (spec.size < spec.block) {
    return bad(fmt::format("--size ({}) is smaller than --bs ({})", FormatByteSize(spec.size),
                           FormatByteSize(spec.block)));
  }
  if (spec.runtime_s < 0 || spec.ramp_s < 0) return bad("--runtime and --ramp must be >= 0");
  if (spec.ramp_s > 0 && spec.runtime_s == 0) {
    return bad("--ramp needs a time-based run (--runtime)");
  }
  if (spec.engine.kind == EngineKind::kNative && !EngineAvailable(EngineKind::kNative)) {
    return MakeNativeEngine(spec.engine).status();
  }
  return Status::Ok();
}

std::string SizeArgument(uint64_t bytes) {
  static constexpr std::pair<uint64_t, char> kUnits[] = {
      {uint64_t{1} << 40, 'T'}, {uint64_t{1} << 30, 'G'}, {uint64_t{1} << 20, 'M'}, {1024, 'K'}};
  for (const auto& [unit, suffix] : kUnits) {
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  }
  return std::to_string(bytes);
}

static DatasetSpec DatasetOf(const IoSpec& spec, uint32_t ranks, bool path_is_file) {
  DatasetSpec ds;
  ds.path = spec.path;
  ds.threads = spec.threads * ranks;
  ds.nrfiles = spec.nrfiles;
  ds.size = spec.size;
  ds.block = spec.block;
  ds.split = spec.split;
  ds.layout = path_is_file ? FileLayout::kSharedFiles : spec.layout;
  ds.path_is_file = path_is_file;
  return ds;
}

static uint64_t MinimumSize(const DatasetSpec& ds) {
  const uint64_t files_blocks = uint64_t{ds.nrfiles} * ds.block;  // one block per file
  if (ds.layout == FileLayout::kPerThreadFiles) {
    return ds.split == Split::kPerThread ? files_blocks : files_blocks * ds.threads;
  }
  if (ds.split == Split::kPerThread) return files_blocks;
  // Fair share: every thread needs a block of the concatenated files.
  return files_blocks * ((ds.threads + ds.nrfiles - 1) / ds.nrfiles);
}

uint64_t MinimumIoSize(const IoSpec& spec, uint32_t ranks) {
  return MinimumSize(DatasetOf(spec, ranks, false));
}

Result<DatasetSpec> PlanIoDataset(const IoSpec& spec, uint32_t ranks) {
  ASSIGN_OR_RETURN(PathKind kind, ClassifyPath(spec.path));
  if (kind == PathKind::kFile) {
    if (spec.layout_given && spec.layout != FileLayout::kSharedFiles) {
      return Status(StatusCode::kInvalidArgument,
                    spec.path + " is a file: per-thread files need a directory PATH");
    }
    if (spec.nrfiles != 1) {
      return Status(StatusCode::kInvalidArgument,
                    spec.path + " is a file: --files needs a directory PATH");
    }
  }
  DatasetSpec ds = DatasetOf(spec, ranks, kind == PathKind::kFile);
  uint64_t minimum = MinimumSize(ds);
  if (spec.size < minimum) {
    std::string shape =
        ds.layout == FileLayout::kPerThreadFiles
            ? fmt::format("{} thread{} x {} file{} each", ds.threads, ds.threads == 1 ? "" : "s",
                          ds.nrfiles, ds.nrfiles == 1 ? "" : "s")
            : fmt::format("{} shared file{} for {} thread{}", ds.nrfiles,
                          ds.nrfiles == 1 ? "" : "s", ds.threads, ds.threads == 1 ? "" : "s");
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("--size {} is too small for {} ({} split) with {} blocks: the "
                              "smallest valid size is --size {} ({})",
                              FormatByteSize(spec.size), shape,
                              ds.split == Split::kShared ? "shared" : "per-thread",
                              FormatByteSize(spec.block), SizeArgument(minimum),
                              FormatByteSize(minimum)));
  }
  return ds;
}

namespace {

// Counters a worker publishes while it runs (read by the progress line and
// by the first-done snapshot). Only the owner writes.
struct alignas(64) LiveCounters {
  std::atomic<uint64_t> read_bytes{0}, read_ops{0}, write_bytes{0}, write_ops{0};
  std::atomic<uint64_t> any_bytes{0}, any_ops{0};  // including the ramp
};

struct WorkerOutput {
  Histogram read_lat, write_lat;
  uint64_t finish_ns = 0;
  uint64_t issued_blocks = 0;  // for the post-write verify pass
  uint64_t verify_errors = 0;
  Status status;
};

struct FirstDone {
  std::atomic<bool> taken{false};
  uint64_t ns = 0;
  DonePoint read, write;
};

class IoRun {
 public:
  IoRun(const IoSpec& spec, Comm& comm) : spec_(spec), comm_(comm) {}

  Result<RunResult> Run();

 private:
  Status Prepare();
  void Worker(uint32_t local_idx);
  Status DoWork(uint32_t local_idx, Engine& engine, const std::vector<int>& handles,
                WorkerOutput& out);
  void VerifyWorker(uint32_t local_idx, WorkerOutput& out);
  void Fail(const Status& st);
  void SnapshotFirstDone(uint64_t now);
  uint32_t GlobalThread(uint32_t local_idx) const {
    return static_cast<uint32_t>(comm_.rank()) * spec_.threads + local_idx;
  }

  const IoSpec& spec_;
  Comm& comm_;
  DatasetPlan plan_;
  DatasetFiles files_;
  std::unique_ptr<LiveCounters[]> live_;
  std::vector<WorkerOutput> outputs_;
  StartGate gate_;
  FirstDone first_;
  std::atomic<bool> abort_{false};
  std::mutex error_mu_;  // guards error_
  Status error_;
  uint64_t start_ns_ = 0, measure_ns_ = 0, end_ns_ = 0;
};

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

// Which blocks a worker touches, in order: sequential through its share, or
// a fresh pseudo-random permutation of its blocks on every pass.
class OffsetStream {
 public:
  OffsetStream(uint64_t blocks, bool random, uint64_t seed)
      : blocks_(blocks), random_(random), seed_(seed), perm_(blocks, seed) {}
  uint64_t BlockAt(uint64_t op) {
    uint64_t pass = op / blocks_;
    uint64_t idx = op % blocks_;
    if (!random_) return idx;
    if (pass != pass_) {
      pass_ = pass;
      perm_ = Permutation(blocks_, Mix64(seed_ + pass));
    }
    return perm_(idx);
  }

 private:
  uint64_t blocks_;
  bool random_;
  uint64_t seed_;
  uint64_t pass_ = 0;
  Permutation perm_;
};

void IoRun::Worker(uint32_t local_idx) {
  WorkerOutput& out = outputs_[local_idx];
  EngineOptions eopts = spec_.engine;
  eopts.depth = spec_.iodepth;
  eopts.buffer_size = spec_.block;
  auto engine = MakeEngine(eopts);
  std::vector<int> handles(plan_.files.size(), -1);
  Status st = engine.ok() ? Status::Ok() : engine.status();
  if (st.ok()) {
    OpenMode mode;
    mode.read = HasReads(spec_.rw) || spec_.verify;
    mode.write = HasWrites(spec_.rw);
    mode.create = HasWrites(spec_.rw);
    mode.direct = spec_.direct;
    for (const Segment& seg : plan_.shares[GlobalThread(local_idx)].segments) {
      if (handles[seg.file] >= 0) continue;
      auto h = (*engine)->Open(plan_.files[seg.file].path, mode);
      if (!h.ok()) {
        st = h.status();
        break;
      }
      handles[seg.file] = *h;
    }
  }
  if (!st.ok()) Fail(st);
  gate_.Ready();
  gate_.WaitGo();
  if (!abort_.load()) {
    st = DoWork(local_idx, **engine, handles, out);
    if (!st.ok()) Fail(st);
  }
  if (engine.ok()) {
    for (int h : handles) {
      if (h < 0) continue;
      Status closed = (*engine)->Close(h);
      if (!closed.ok()) Fail(closed);
    }
  }
}

Status IoRun::DoWork(uint32_t local_idx, Engine& engine, const std::vector<int>& handles,
                     WorkerOutput& out) {
  const uint32_t global = GlobalThread(local_idx);
  const Share& share = plan_.shares[global];
  const uint64_t bs = spec_.block;
  const uint64_t blocks = share.length / bs;
  const bool random = IsRandom(spec_.rw);
  const uint32_t depth = engine.depth();
  const bool time_based = end_ns_ > 0;
  LiveCounters& live = live_[local_idx];
  OffsetStream offsets(blocks, random, Mix64(spec_.seed ^ (uint64_t{global} << 32)));
  Rng mix_rng(Mix64(spec_.seed + global));

  struct SlotState {
    uint64_t submit_ns = 0;
    uint32_t file = 0;
    uint64_t offset = 0;
    IoDir dir = IoDir::kRead;
  };
  std::vector<SlotState> slots(depth);
  std::vector<uint32_t> free_slots;
  for (uint32_t slot = depth; slot-- > 0;) {
    free_slots.push_back(slot);
    if (!spec_.verify) FillRandom(engine.Buffer(slot), spec_.seed ^ (global * 1000003ULL + slot));
  }
  std::vector<Completion> done(depth);
  uint64_t op = 0;
  uint64_t write_counter = 0;
  uint32_t inflight = 0;
  bool stop = false;
  Status status;

  while (true) {
    uint64_t now = MonoNanos();
    if (!stop) {
      if (abort_.load(std::memory_order_relaxed) || StopRequested()) stop = true;
      else if (time_based ? now >= end_ns_ : op >= blocks) stop = true;
    }
    while (!stop && !free_slots.empty()) {
      uint32_t slot = free_slots.back();
      free_slots.pop_back();
      Location loc = Locate(share, offsets.BlockAt(op) * bs);
      ++op;
      IoDir dir = spec_.rw == RwMode::kRandRW
                      ? (mix_rng.Below(100) < spec_.rwmixread ? IoDir::kRead : IoDir::kWrite)
                  : HasReads(spec_.rw) ? IoDir::kRead
                                       : IoDir::kWrite;
      std::span<std::byte> buf = engine.Buffer(slot).first(bs);
      if (dir == IoDir::kWrite) {
        if (spec_.verify) {
          FillPattern(buf, spec_.seed, plan_.files[loc.file].id, loc.file_offset);
        } else {
          Scramble(buf, loc.file_offset, ++write_counter);
        }
      }
      slots[slot] = {MonoNanos(), loc.file, loc.file_offset, dir};
      Status sub = engine.Submit(slot, handles[loc.file], dir, loc.file_offset, bs);
      if (!sub.ok()) {
        status = sub;
        stop = true;
        free_slots.push_back(slot);
        break;
      }
      ++inflight;
      if (!time_based && op >= blocks) stop = true;
    }
    if (inflight == 0) break;
    auto reaped = engine.Reap(done, 1);
    if (!reaped.ok()) {
      status = reaped.status();
      break;  // the engine is broken; in-flight requests are abandoned
    }
    uint64_t done_ns = MonoNanos();
    for (size_t idx = 0; idx < *reaped; ++idx) {
      const Completion& c = done[idx];
      SlotState& s = slots[c.slot];
      free_slots.push_back(c.slot);
      --inflight;
      const PlannedFile& file = plan_.files[s.file];
      if (c.result < 0) {
        if (status.ok()) {
          status = Status::FromErrno(static_cast<int>(-c.result),
                                     fmt::format("{} {} at offset {}",
                                                 s.dir == IoDir::kRead ? "read" : "write",
                                                 file.path, s.offset));
        }
        stop = true;
        continue;
      }
      if (static_cast<uint64_t>(c.result) != bs) {
        if (status.ok()) {
          status = Status(StatusCode::kIoError,
                          s.dir == IoDir::kRead
                              ? fmt::format("short read of {} at offset {} ({} of {} bytes): the "
                                            "file is smaller than the dataset; remove it or match "
                                            "--size",
                                            file.path, s.offset, c.result, bs)
                              : fmt::format("short write to {} at offset {} ({} of {} bytes)",
                                            file.path, s.offset, c.result, bs));
        }
        stop = true;
        continue;
      }
      if (s.dir == IoDir::kRead && spec_.verify) {
        auto bad = CheckPattern(engine.Buffer(c.slot).first(bs), spec_.seed, file.id, s.offset);
        if (bad) {
          if (out.verify_errors++ == 0 && status.ok()) {
            status = Status(StatusCode::kCorruption,
                            fmt::format("verify failed: {} differs at offset {} (block at {})",
                                        file.path, *bad, s.offset));
          }
          stop = true;
        }
      }
      live.any_bytes.store(live.any_bytes.load(std::memory_order_relaxed) + bs,
                           std::memory_order_relaxed);
      live.any_ops.store(live.any_ops.load(std::memory_order_relaxed) + 1,
                         std::memory_order_relaxed);
      if (s.submit_ns < measure_ns_) continue;  // ramp: not counted
      uint64_t lat = done_ns - s.submit_ns;
      if (s.dir == IoDir::kRead) {
        out.read_lat.Record(lat);
        live.read_bytes.store(live.read_bytes.load(std::memory_order_relaxed) + bs,
                              std::memory_order_relaxed);
        live.read_ops.store(live.read_ops.load(std::memory_order_relaxed) + 1,
                            std::memory_order_relaxed);
      } else {
        out.write_lat.Record(lat);
        live.write_bytes.store(live.write_bytes.load(std::memory_order_relaxed) + bs,
                               std::memory_order_relaxed);
        live.write_ops.store(live.write_ops.load(std::memory_order_relaxed) + 1,
                             std::memory_order_relaxed);
      }
    }
  }
  out.issued_blocks = op;
  if (status.ok() && spec_.end_fsync && HasWrites(spec_.rw) && !StopRequested()) {
    for (int h : handles) {
      if (h < 0) continue;
      Status synced = engine.Fsync(h);
      if (!synced.ok()) {
        status = synced.WithContext("fsync");
        break;
      }
    }
  }
  out.finish_ns = MonoNanos();
  if (status.ok()) SnapshotFirstDone(out.finish_ns);
  return status;
}

void IoRun::VerifyWorker(uint32_t local_idx, WorkerOutput& out) {
  const uint32_t global = GlobalThread(local_idx);
  const Share& share = plan_.shares[global];
  const uint64_t bs = spec_.block;
  const uint64_t blocks = share.length / bs;
  OffsetStream offsets(blocks, IsRandom(spec_.rw), Mix64(spec_.seed ^ (uint64_t{global} << 32)));
  uint64_t count = std::min(out.issued_blocks, blocks);
  std::vector<UniqueFd> fds(plan_.files.size());
  AlignedBuffer buf(AlignUp(bs, kPageSize));
  for (uint64_t op = 0; op < count && !StopRequested(); ++op) {
    Location loc = Locate(share, offsets.BlockAt(op) * bs);
    const PlannedFile& file = plan_.files[loc.file];
    if (!fds[loc.file].valid()) {
      int fd = ::open(file.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd < 0) {
        Fail(Status::FromErrno(errno, "verify: open " + file.path));
        return;
      }
      fds[loc.file] = UniqueFd(fd);
    }
    auto got = PreadFull(fds[loc.file].get(), buf.data(), bs, loc.file_offset);
    if (!got.ok() || *got != bs) {
      Fail(got.ok() ? Status(StatusCode::kIoError, "verify: short read of " + file.path)
                    : got.status().WithContext("verify"));
      return;
    }
    auto bad = CheckPattern({buf.data(), bs}, spec_.seed, file.id, loc.file_offset);
    if (bad) {
      if (out.verify_errors++ == 0) {
        Fail(Status(StatusCode::kCorruption,
                    fmt::format("verify failed: {} differs at offset {} (block at {})", file.path,
                                *bad, loc.file_offset)));
      }
    }
  }
}

}  // namespace

Result<RunResult> RunIo(const IoSpec& spec, Comm& comm) {
  RETURN_IF_ERROR(ValidateIoSpec(spec));
  IoRun run(spec, comm);
  ASSIGN_OR_RETURN(RunResult local, run.Run());
  return GatherRun(local, comm);
}

PhaseResult MergeRankPhases(const std::vector<PhaseResult>& per_rank) {
  PhaseResult merged = per_rank.front();
  if (per_rank.size() == 1) return merged;
  double first_s = per_rank.front().first_done.elapsed_s;
  for (const auto& p : per_rank) first_s = std::min(first_s, p.first_done.elapsed_s);
  merged.first_done = {first_s, 0, 0};
  merged.last_done = {0, 0, 0};
  merged.latency.Clear();
  merged.workers = 0;
  merged.verify_errors = 0;
  merged.peak_rss = 0;
  for (size_t idx = 0; idx < per_rank.size(); ++idx) {
    const PhaseResult& p = per_rank[idx];
    double scale = p.first_done.elapsed_s > 0 ? first_s / p.first_done.elapsed_s : 1.0;
    merged.first_done.bytes += static_cast<uint64_t>(p.first_done.bytes * scale);
    merged.first_done.ops += static_cast<uint64_t>(p.first_done.ops * scale);
    merged.last_done.elapsed_s = std::max(merged.last_done.elapsed_s, p.last_done.elapsed_s);
    merged.last_done.bytes += p.last_done.bytes;
    merged.last_done.ops += p.last_done.ops;
    merged.latency.Merge(p.latency);
    merged.workers += p.workers;
    merged.verify_errors += p.verify_errors;
    merged.peak_rss = std::max(merged.peak_rss, p.peak_rss);
    if (idx > 0) {
      merged.cpu = CombineCpu(merged.cpu, p.cpu, static_cast<int>(idx + 1));
      // Workload figures: rates add up over ranks, other amounts take the minimum.
      for (Figure& fig : merged.figures) {
        if (fig.name.rfind("x_", 0) != 0) continue;
        const Figure* other = p.Find(fig.name);
        if (other == nullptr) continue;
        bool rate = fig.unit == "B/s" || fig.unit == "IOPS" || fig.unit == "ops/s";
        fig.value = rate ? fig.value + other->value : std::min(fig.value, other->value);
      }
    }
  }
  merged.ComputeFigures();
  return merged;
}

Result<RunResult> GatherRun(const RunResult& local, Comm& comm) {
  if (comm.size() == 1) return local;
  nlohmann::json j = nlohmann::json::array();
  for (const auto& p : local.phases) j.push_back(ToJson(p));
  nlohmann::json mine = {{"phases", j}, {"cache", ToJson(local.cache)},
                         {"stopped_early", local.stopped_early}};
  std::vector<std::string> all = comm.Gather(mine.dump());
  if (comm.rank() != 0) return local;
  // Re-read every rank's phases through the same JSON form as result files.
  std::vector<std::vector<PhaseResult>> by_phase(local.phases.size());
  CacheReport cache;
  bool stopped = false;
  for (const std::string& text : all) {
    nlohmann::json rank_all = nlohmann::json::parse(text);
    cache.Merge(CacheReportFromJson(rank_all["cache"]));
    stopped = stopped || rank_all.value("stopped_early", false);
    nlohmann::json rank_json = rank_all["phases"];
    nlohmann::json wrapped = {{"format", "t0fs-bench-result"}, {"format_version", 1},
                              {"kind", ""}, {"workload", ""}, {"label", ""},
                              {"runs", {{{"phases", rank_json}}}}};
    ASSIGN_OR_RETURN(ResultSet rs, ResultSetFromJson(wrapped));
    const auto& phases = rs.runs.front().phases;
    if (phases.size() != by_phase.size()) {
      return Status(StatusCode::kInternal, "ranks reported different phases");
    }
    for (size_t idx = 0; idx < phases.size(); ++idx) by_phase[idx].push_back(phases[idx]);
  }
  RunResult merged;
  merged.extra = local.extra;
  merged.cache = cache;
  merged.stopped_early = stopped;
  for (const auto& phases : by_phase) merged.phases.push_back(MergeRankPhases(phases));
  return merged;
}

}  // namespace t0fs::bench
