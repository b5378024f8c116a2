#include "bench/sweep_workload.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <optional>
#include <sstream>
#include <thread>

#include <fmt/format.h>

#include "bench/dataset_files.h"
#include "bench/io_workload.h"
#include "bench/pattern.h"
#include "bench/progress.h"
#include "bench/start_gate.h"
#include "bench/stop_signal.h"
#include "bench/sysstat.h"
#include "common/buffer.h"
#include "common/clock.h"
#include "common/config.h"

namespace t0fs::bench {

Result<std::vector<uint32_t>> SweepThreadList(const std::string& list, uint32_t max_threads) {
  std::vector<uint32_t> out;
  if (!list.empty()) {
    std::stringstream in(list);
    std::string item;
    while (std::getline(in, item, ',')) {
      try {
        size_t used = 0;
        unsigned long v = std::stoul(item, &used);
        if (used != item.size() || v == 0 || v > 4096) throw std::invalid_argument(item);
        out.push_back(static_cast<uint32_t>(v));
      } catch (const std::exception&) {
        return Status(StatusCode::kInvalidArgument,
                      fmt::format("--threads: '{}' is not a thread count (1..4096)", item));
      }
    }
    if (!std::is_sorted(out.begin(), out.end()) ||
        std::adjacent_find(out.begin(), out.end()) != out.end()) {
      return Status(StatusCode::kInvalidArgument, "--threads must be ascending, without repeats");
    }
    return out;
  }
  if (max_threads == 0 || max_threads > 4096) {
    return Status(StatusCode::kInvalidArgument, "--max-threads must be 1..4096");
  }
  for (uint32_t t = 1; t <= max_threads; t *= 2) out.push_back(t);
  if (out.back() != max_threads) out.push_back(max_threads);
  return out;
}

Status ValidateSweepSpec(const SweepSpec& spec) {
  auto bad = [](std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); };
  if (spec.path.empty()) return bad("PATH is required");
  if (spec.threads.empty()) return bad("no thread counts");
  if (spec.record == 0) return bad("--record must be > 0");
  if (spec.direct && spec.record % 512 != 0) {
    return bad("--direct needs --record to be a multiple of 512");
  }
  if (spec.iodepth == 0) return bad("--iodepth must be >= 1");
  uint64_t per_thread = spec.total / spec.threads.back();
  if (per_thread < spec.record) {
    return bad(fmt::format("--size {} over {} threads gives files smaller than one record ({}); "
                           "the smallest valid size is --size {}, or lower --record",
                           FormatByteSize(spec.total), spec.threads.back(),
                           FormatByteSize(spec.record),
                           SizeArgument(spec.record * spec.threads.back())));
  }
  if (spec.engine.kind == EngineKind::kNative && !EngineAvailable(EngineKind::kNative)) {
    return MakeNativeEngine(spec.engine).status();
  }
  return Status::Ok();
}

CurveSummary AnalyzeCurve(const std::vector<std::pair<uint32_t, double>>& curve,
                          double tolerance) {
  CurveSummary s;
  if (curve.empty()) return s;
  for (const auto& [threads, value] : curve) {
    if (value > s.peak) {
      s.peak = value;
      s.peak_threads = threads;
    }
  }
  size_t start = curve.size();
  while (start > 0 && curve[start - 1].second >= (1 - tolerance) * s.peak) --start;
  if (curve.size() - start >= 2) {
    s.has_plateau = true;
    s.plateau_threads = curve[start].first;
    double sum = 0;
    for (size_t idx = start; idx < curve.size(); ++idx) sum += curve[idx].second;
    s.plateau = sum / static_cast<double>(curve.size() - start);
  }
  return s;
}

nlohmann::json ToJson(const CurveSummary& s) {
  nlohmann::json j = {{"peak_threads", s.peak_threads}, {"peak_bw", s.peak},
                      {"has_plateau", s.has_plateau}};
  if (s.has_plateau) {
    j["plateau_threads"] = s.plateau_threads;
    j["plateau_bw"] = s.plateau;
  }
  return j;
}

namespace {

struct Child {
  uint64_t bytes = 0;
  uint64_t ops = 0;
  uint64_t end_ns = 0;
  Histogram lat;
  Status status;
  std::atomic<uint64_t> live_bytes{0};
};

// One phase (write or read) of one thread count.
class SweepPhase {
 public:
  SweepPhase(const SweepSpec& spec, Comm& comm, uint32_t threads, bool write)
      : spec_(spec), comm_(comm), threads_(threads), write_(write), children_(threads) {}

  Result<PhaseResult> Run(const std::vector<std::string>& paths, uint64_t file_size,
                          const std::vector<uint64_t>& read_sizes);
  uint64_t written(uint32_t idx) const { return children_[idx].bytes; }

 private:
  void ChildMain(uint32_t idx, const std::string& path, uint64_t amount);
  Status ChildIo(uint32_t idx, Engine& engine, int handle, uint64_t amount);

  const SweepSpec& spec_;
  Comm& comm_;
  uint32_t threads_;
  bool write_;
  std::vector<Child> children_;
  StartGate gate_;
  std::atomic<bool> stonewall_{false};
  std::atomic<uint64_t> first_ns_{0};
  std::atomic<uint64_t> first_bytes_{0};
  uint64_t start_ns_ = 0;
};

void SweepPhase::ChildMain(uint32_t idx, const std::string& path, uint64_t amount) {
  Child& child = children_[idx];
  EngineOptions eopts = spec_.engine;
  eopts.depth = spec_.iodepth;
  eopts.buffer_size = spec_.record;
  auto engine = MakeEngine(eopts);
  if (!engine.ok()) child.status = engine.status();
  gate_.Ready();
  gate_.WaitGo();
  if (!child.status.ok()) return;
  // Open, I/O, fsync (writes) and close are all inside the timing (-c -e).
  OpenMode mode;
  mode.read = !write_;
  mode.write = write_;
  mode.create = write_;
  mode.truncate = write_;
  mode.direct = spec_.direct;
  auto handle = (*engine)->Open(path, mode);
  if (!handle.ok()) {
    child.status = handle.status();
    return;
  }
  Status st = ChildIo(idx, **engine, *handle, amount);
  // A stopped write is not synced: its file is removed at once.
  if (st.ok() && write_ && !StopRequested()) st = (*engine)->Fsync(*handle);
  Status closed = (*engine)->Close(*handle);
  if (st.ok()) st = closed;
  child.end_ns = MonoNanos();
  child.status = st;
}

Status SweepPhase::ChildIo(uint32_t idx, Engine& engine, int handle, uint64_t amount) {
  Child& child = children_[idx];
  const uint64_t rec = spec_.record;
  const uint32_t depth = engine.depth();
  const uint64_t file_id = idx + 1;
  std::vector<uint64_t> slot_offset(depth), slot_ns(depth);
  std::vector<uint32_t> free_slots;
  for (uint32_t slot = depth; slot-- > 0;) {
    free_slots.push_back(slot);
    if (write_ && !spec_.verify) FillRandom(engine.Buffer(slot), spec_.seed + idx * 7919 + slot);
  }
  std::vector<Completion> done(depth);
  uint64_t next = 0;
  uint32_t inflight = 0;
  bool stop = false;
  while (true) {
    while (!stop && !free_slots.empty() && next < amount) {
      if ((spec_.stonewall && stonewall_.load(std::memory_order_relaxed)) || StopRequested()) {
        stop = true;
        break;
      }
      uint32_t slot = free_slots.back();
      free_slots.pop_back();
      size_t len = static_cast<size_t>(std::min(rec, amount - next));
      if (write_) {
        auto buf = engine.Buffer(slot).first(len);
        if (spec_.verify) FillPattern(buf, spec_.seed, file_id, next);
        else Scramble(buf, next, next / rec + 1);
      }
      slot_offset[slot] = next;
      slot_ns[slot] = MonoNanos();
      RETURN_IF_ERROR(engine.Submit(slot, handle, write_ ? IoDir::kWrite : IoDir::kRead, next,
                                    len));
      next += len;
      ++inflight;
    }
    if (inflight == 0) break;
    ASSIGN_OR_RETURN(size_t got, engine.Reap(done, 1));
    uint64_t now = MonoNanos();
    for (size_t k = 0; k < got; ++k) {
      const Completion& c = done[k];
      free_slots.push_back(c.slot);
      --inflight;
      uint64_t off = slot_offset[c.slot];
      if (c.result < 0) {
        return Status::FromErrno(static_cast<int>(-c.result),
                                 fmt::format("{} at offset {}", write_ ? "write" : "read", off));
      }
      size_t want = static_cast<size_t>(std::min(rec, amount - off));
      if (static_cast<size_t>(c.result) != want) {
        return Status(StatusCode::kIoError, fmt::format("short {} at offset {}",
                                                        write_ ? "write" : "read", off));
      }
      if (!write_ && spec_.verify) {
        auto bad = CheckPattern(engine.Buffer(c.slot).first(want), spec_.seed, file_id, off);
        if (bad) {
          return Status(StatusCode::kCorruption,
                        fmt::format("verify failed: thread {} file differs at offset {}", idx,
                                    *bad));
        }
      }
      child.lat.Record(now - slot_ns[c.slot]);
      child.bytes += want;
      ++child.ops;
      child.live_bytes.store(child.bytes, std::memory_order_relaxed);
    }
  }
  if (next >= amount && amount > 0) {
    // This child did its whole file: the stonewall falls for the others. (A
    // child with nothing to read, stonewalled at once in the write phase,
    // does not stop the others.)
    uint64_t expected = 0;
    if (first_ns_.compare_exchange_strong(expected, MonoNanos())) {
      uint64_t bytes = 0;
      for (const Child& c : children_) bytes += c.live_bytes.load(std::memory_order_relaxed);
      first_bytes_.store(bytes);
    }
    stonewall_.store(true, std::memory_order_relaxed);
  }
  return Status::Ok();
}

Result<PhaseResult> SweepPhase::Run(const std::vector<std::string>& paths, uint64_t file_size,
                                    const std::vector<uint64_t>& read_sizes) {
  std::vector<std::thread> threads;
  for (uint32_t idx = 0; idx < threads_; ++idx) {
    uint64_t amount = write_ ? file_size : read_sizes[idx];
    threads.emplace_back([this, idx, &paths, amount] { ChildMain(idx, paths[idx], amount); });
  }
  gate_.WaitReady(threads_);
  comm_.Barrier();
  CpuSample cpu_begin = SampleCpu();
  start_ns_ = cpu_begin.wall_ns;
  gate_.Go();
  uint64_t expected = write_ ? file_size * threads_ : 0;
  for (uint64_t s : read_sizes) expected += write_ ? 0 : s;
  std::optional<Progress> line;
  line.emplace(spec_.progress && comm_.rank() == 0,
               fmt::format("{} t={}", write_ ? "write" : "read", threads_), [this, expected] {
                 ProgressSnapshot s;
                 for (const Child& c : children_) s.bytes += c.live_bytes.load();
                 s.ops = s.bytes / spec_.record;
                 s.fraction = expected > 0 ? static_cast<double>(s.bytes) / expected : -1;
                 return s;
               });
  for (auto& t : threads) t.join();
  CpuSample cpu_end = SampleCpu();
  line->Stop();
  for (const Child& c : children_) {
    if (!c.status.ok()) return c.status;
  }
  PhaseResult p;
  p.name = fmt::format("{} t={}", write_ ? "write" : "read", threads_);
  p.workers = threads_;
  double children_see = 0;
  uint64_t min_xfer = UINT64_MAX;
  uint64_t last_ns = start_ns_;
  for (const Child& c : children_) {
    double secs = static_cast<double>(c.end_ns - start_ns_) / 1e9;
    if (secs > 0) children_see += static_cast<double>(c.bytes) / secs;
    min_xfer = std::min(min_xfer, c.bytes);
    last_ns = std::max(last_ns, c.end_ns);
    p.last_done.bytes += c.bytes;
    p.last_done.ops += c.ops;
    p.latency.Merge(c.lat);
  }
  p.last_done.elapsed_s = static_cast<double>(last_ns - start_ns_) / 1e9;
  // First done: when the first child finished its file (the stonewall
  // moment), with every child's bytes at that moment.
  uint64_t first_ns = first_ns_.load() == 0 ? last_ns : first_ns_.load();
  p.first_done.elapsed_s = static_cast<double>(first_ns - start_ns_) / 1e9;
  p.first_done.bytes = first_ns_.load() == 0 ? p.last_done.bytes : first_bytes_.load();
  p.first_done.ops = p.first_done.bytes / spec_.record;
  p.cpu = CpuBetween(cpu_begin, cpu_end);
  p.peak_rss = PeakRssBytes();
  p.figures.push_back({"x_children_see", children_see, "B/s", Better::kHigher,
                       "Children see"});
  p.figures.push_back({"x_min_xfer", static_cast<double>(min_xfer), "B", Better::kNone,
                       "Min xfer"});
  p.ComputeFigures();
  return p;
}

}  // namespace

Result<RunResult> RunSweep(const SweepSpec& spec, Comm& comm) {
  RETURN_IF_ERROR(ValidateSweepSpec(spec));
  ASSIGN_OR_RETURN(PathKind kind, ClassifyPath(spec.path));
  if (kind != PathKind::kDirectory) {
    return Status(StatusCode::kInvalidArgument, spec.path + ": sweep needs a directory");
  }
  if (spec.engine.kind == EngineKind::kNative) RETURN_IF_ERROR(FindT0fsMount(spec.path).status());
  RunResult run;
  nlohmann::json curve = nlohmann::json::array();
  std::vector<std::pair<uint32_t, double>> write_curve, read_curve, write_parent, read_parent;
  for (uint32_t threads : spec.threads) {
    uint64_t file_size = AlignDown(spec.total / threads, spec.record);
    std::vector<std::string> paths;
    for (uint32_t idx = 0; idx < threads; ++idx) {
      paths.push_back(fmt::format("{}/t0fs-sweep.r{}.{}", spec.path, comm.rank(), idx));
    }
    auto cleanup = [&] {
      if (spec.keep) return;
      for (const auto& p : paths) ::unlink(p.c_str());
    };
    SweepPhase writer(spec, comm, threads, true);
    auto wrote = writer.Run(paths, file_size, {});
    if (comm.AnyFailed(!wrote.ok())) {
      cleanup();
      if (!wrote.ok()) return wrote.status();
      return Status(StatusCode::kIoError, "another rank failed");
    }
    // Collective, so every rank takes the same branch.
    if (comm.AnyFailed(StopRequested())) {
      // Stopped while writing: keep the partial write phase, no read.
      RunResult alone;
      alone.phases.push_back(*wrote);
      ASSIGN_OR_RETURN(RunResult merged, GatherRun(alone, comm));
      cleanup();
      run.phases.push_back(merged.phases[0]);
      run.stopped_early = true;
      break;
    }
    std::vector<uint64_t> sizes;
    for (uint32_t idx = 0; idx < threads; ++idx) sizes.push_back(writer.written(idx));
    if (spec.direct) {
      run.cache.Merge(DirectReadsReport(spec.drop));
    } else {
      auto dropped = DropPageCache(spec.drop, paths);
      if (!dropped.ok()) {
        cleanup();
        return dropped.status();
      }
      run.cache.Merge(*dropped);
    }
    SweepPhase reader(spec, comm, threads, false);
    auto read = reader.Run(paths, file_size, sizes);
    comm.Barrier();
    cleanup();
    if (comm.AnyFailed(!read.ok())) {
      if (!read.ok()) return read.status();
      return Status(StatusCode::kIoError, "another rank failed");
    }
    RunResult pair;
    pair.phases = {*wrote, *read};
    ASSIGN_OR_RETURN(RunResult merged, GatherRun(pair, comm));
    const PhaseResult& w = merged.phases[0];
    const PhaseResult& r = merged.phases[1];
    run.phases.push_back(w);
    run.phases.push_back(r);
    if (comm.AnyFailed(StopRequested())) {
      run.stopped_early = true;  // the read was cut short: no curve point
      break;
    }
    double wc = w.Find("x_children_see")->value, rc = r.Find("x_children_see")->value;
    double wp = w.Find("bw")->value, rp = r.Find("bw")->value;
    write_curve.emplace_back(threads, wc);
    read_curve.emplace_back(threads, rc);
    write_parent.emplace_back(threads, wp);
    read_parent.emplace_back(threads, rp);
    curve.push_back({{"threads", threads * comm.size()},
                     {"file_size", file_size},
                     {"write_children_see", wc},
                     {"write_parent_sees", wp},
                     {"read_children_see", rc},
                     {"read_parent_sees", rp}});
  }
  run.extra["curve"] = curve;
  run.extra["write"] = {{"children_see", ToJson(AnalyzeCurve(write_curve))},
                        {"parent_sees", ToJson(AnalyzeCurve(write_parent))}};
  run.extra["read"] = {{"children_see", ToJson(AnalyzeCurve(read_curve))},
                       {"parent_sees", ToJson(AnalyzeCurve(read_parent))}};
  return run;
}

}  // namespace t0fs::bench
