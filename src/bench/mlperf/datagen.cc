#include "bench/mlperf/datagen.h"

#include <sys/stat.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "bench/mlperf/file_sink.h"
#include "bench/mlperf/formats.h"
#include "bench/mlperf/record_size.h"
#include "bench/pattern.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"
#include "common/clock.h"

namespace t0fs::bench::mlperf {

void SizeStats::Add(uint64_t size) {
  ++files;
  bytes += static_cast<double>(size);
  sum_sq += static_cast<double>(size) * static_cast<double>(size);
  min = std::min(min, size);
  max = std::max(max, size);
}
double SizeStats::Mean() const { return files == 0 ? 0 : bytes / static_cast<double>(files); }
double SizeStats::Stdev() const {
  if (files == 0) return 0;
  double m = Mean();
  return std::sqrt(std::max(0.0, sum_sq / static_cast<double>(files) - m * m));
}

static FileShape ShapeOf(const TrainingWorkload& w, std::pair<uint64_t, uint64_t> dims,
                         uint64_t dimension) {
  return FileShape{dims.first, dims.second, w.samples_per_file, dimension};
}

SizeStats PlanDatasetSizes(const TrainingWorkload& w, uint64_t files) {
  SizeStats s;
  RecordDims dims(w.record_length, w.record_length_stdev);
  for (uint64_t i = 0; i < files; ++i) {
    s.Add(ContainerBytes(w.container, ShapeOf(w, dims.Next(), dims.dimension())));
  }
  return s;
}

static Status MakeLayoutDirs(const DatasetLayout& layout, bool with_index) {
  for (const std::string& dir : layout.Directories(with_index)) {
    RETURN_IF_ERROR(MakeDirs(dir));  // the root's parents too
  }
  return Status::Ok();
}

Result<DatagenResult> RunDatagen(const DatagenSpec& spec, Comm& comm) {
  const TrainingWorkload& w = spec.workload;
  const bool tf = w.container == Container::kTfRecord;
  std::vector<std::string> new_dirs;  // rank 0: made by this run
  if (comm.rank() == 0) {
    // Every level from the root down (the root's parents too, as MakeDirs).
    for (const std::string& dir : spec.layout.Directories(tf)) {
      for (size_t pos = 1; pos <= dir.size(); ++pos) {
        if (pos != dir.size() && dir[pos] != '/') continue;
        std::string part = dir.substr(0, pos);
        struct stat st {};
        if (::stat(part.c_str(), &st) != 0 &&
            std::find(new_dirs.begin(), new_dirs.end(), part) == new_dirs.end()) {
          new_dirs.push_back(part);
        }
      }
    }
  }
  Status made = comm.rank() == 0 ? MakeLayoutDirs(spec.layout, tf) : Status::Ok();
  if (comm.AnyFailed(!made.ok())) {
    return made.ok() ? Status(StatusCode::kInternal, "rank 0 failed to create directories") : made;
  }
  const uint64_t n = spec.layout.total_files;
  const uint32_t threads = std::max<uint32_t>(1, spec.threads);
  const uint64_t writers = static_cast<uint64_t>(threads) * static_cast<uint64_t>(comm.size());
  const uint64_t first_writer = static_cast<uint64_t>(comm.rank()) * threads;
  uint64_t mine = 0;
  for (uint64_t t = 0; t < threads; ++t) {
    uint64_t g = first_writer + t;
    mine += n > g ? (n - g + writers - 1) / writers : 0;
  }
  std::atomic<uint64_t> live_bytes{0}, live_files{0};
  std::mutex mu;  // guards error and stats
  Status error;
  SizeStats stats;
  std::atomic<bool> abort{false};
  std::vector<std::string> created;  // guarded by mu: files to remove after a stop
  CpuSample cpu0 = SampleCpu();
  uint64_t t0 = MonoNanos();
  {
    Progress progress(spec.progress, "datagen", [&] {
      uint64_t done = live_files.load(std::memory_order_relaxed);
      return ProgressSnapshot{live_bytes.load(std::memory_order_relaxed), done,
                              mine == 0 ? -1.0 : static_cast<double>(done) / mine};
    });
    std::vector<std::thread> pool;
    for (uint32_t t = 0; t < threads; ++t) {
      pool.emplace_back([&, t] {
        const uint64_t writer = first_writer + t;
        SizeStats local;
        Status st;
        auto engine = MakeEngine(spec.engine);
        if (!engine.ok()) st = engine.status();
        RecordDims dims(w.record_length, w.record_length_stdev);
        for (uint64_t i = 0; i < n && st.ok() && !abort.load(); ++i) {
          auto d = dims.Next();  // every writer walks the one stream of sizes
          if (i % writers != writer) continue;
          FileShape shape = ShapeOf(w, d, dims.dimension());
          std::string path = spec.layout.FilePath(i);
          {
            // Listed before it exists; a file rewritten is listed too (it
            // is incomplete until its write ends), and taken off after.
            std::lock_guard<std::mutex> lock(mu);
            created.push_back(path);
            if (tf) created.push_back(spec.layout.IndexPath(i));
          }
          struct stat before {};
          const bool existed = ::stat(path.c_str(), &before) == 0;
          auto sink = FileSink::Open(**engine, path, Mix64(spec.seed ^ i));
          if (!sink.ok()) {
            st = sink.status();
            break;
          }
          std::string index;
          st = WriteSampleFile(w.container, shape, *sink, tf ? &index : nullptr);
          uint64_t size = sink->offset();
          Status fin = sink->Finish(spec.fsync);
          if (st.ok()) st = fin;
          if (st.ok() && tf) {
            std::ofstream out(spec.layout.IndexPath(i), std::ios::trunc);
            out << index;
            if (!out) st = Status(StatusCode::kIoError, "write " + spec.layout.IndexPath(i));
          }
          if (!st.ok()) break;
          if (existed) {
            // A complete rewrite of a file that was there: not ours to remove.
            std::lock_guard<std::mutex> lock(mu);
            std::erase(created, path);
            if (tf) std::erase(created, spec.layout.IndexPath(i));
          }
          local.Add(size);
          live_bytes.fetch_add(size, std::memory_order_relaxed);
          live_files.fetch_add(1, std::memory_order_relaxed);
        }
        std::lock_guard<std::mutex> lock(mu);
        if (!st.ok()) {
          abort.store(true);
          if (error.ok()) error = st;
        }
        stats.files += local.files;
        stats.bytes += local.bytes;
        stats.sum_sq += local.sum_sq;
        stats.min = std::min(stats.min, local.min);
        stats.max = std::max(stats.max, local.max);
      });
    }
    for (auto& th : pool) th.join();
  }
  DatagenResult r;
  r.seconds = static_cast<double>(MonoNanos() - t0) / 1e9;
  r.cpu = CpuBetween(cpu0, SampleCpu());
  // An error the stop caused is the stop.
  const bool stopped = comm.AnyFailed(StopRequested());
  if (stopped) {
    error = Status::Ok();
    r.stopped_early = true;
    uint64_t removed = 0;
    for (const std::string& path : created) removed += ::unlink(path.c_str()) == 0 ? 1 : 0;
    r.removed = removed;
    comm.Barrier();
    // The directories this run made, deepest first (only when empty).
    for (auto dir = new_dirs.rbegin(); dir != new_dirs.rend(); ++dir) ::rmdir(dir->c_str());
  }
  if (comm.AnyFailed(!error.ok())) {
    return error.ok() ? Status(StatusCode::kIoError, "another rank failed") : error;
  }
  // Totals over ranks.
  std::string mine_json = fmt::format("{} {} {} {} {} {}", stats.files, stats.bytes, stats.sum_sq,
                                      stats.min, stats.max, r.removed);
  r.removed = 0;
  for (const std::string& text : comm.Gather(mine_json)) {
    SizeStats s;
    unsigned long removed = 0;
    std::sscanf(text.c_str(), "%lu %lf %lf %lu %lu %lu", &s.files, &s.bytes, &s.sum_sq, &s.min,
                &s.max, &removed);
    r.removed += removed;
    r.sizes.files += s.files;
    r.sizes.bytes += s.bytes;
    r.sizes.sum_sq += s.sum_sq;
    r.sizes.min = std::min(r.sizes.min, s.min);
    r.sizes.max = std::max(r.sizes.max, s.max);
  }
  return r;
}

// Free space check used by the CLI (declared in the CLI layer).
Result<uint64_t> FreeBytes(const std::string& path) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) return Status::FromErrno(errno, "statvfs " + path);
  return static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
}

}  // namespace t0fs::bench::mlperf
