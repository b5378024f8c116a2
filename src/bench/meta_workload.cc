#include "bench/meta_workload.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <filesystem>
#include <functional>
#include <memory>
#include <numeric>
#include <optional>
#include <thread>
#include <vector>

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
#include "common/fd.h"
#include "common/io_backend.h"

namespace t0fs::bench {

Status ValidateMetaSpec(const MetaSpec& spec) {
  auto bad = [](std::string m) { return Status(StatusCode::kInvalidArgument, std::move(m)); };
  if (spec.path.empty()) return bad("PATH is required");
  if (spec.threads == 0 || spec.threads > 4096) return bad("--threads must be 1..4096");
  if (spec.items == 0 || spec.items > 100000000) return bad("--items must be 1..100000000");
  if (!spec.files && !spec.dirs) return bad("--files-only and --dirs-only exclude each other");
  if (spec.write_bytes > (uint64_t{64} << 20)) return bad("--write-bytes must be at most 64 MiB");
  return Status::Ok();
}

namespace {

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};
using DirStream = std::unique_ptr<DIR, DirCloser>;

class MetaRun {
 public:
  MetaRun(const MetaSpec& spec, Comm& comm) : spec_(spec), comm_(comm) {}
  Result<RunResult> Run();

 private:
  using Op = std::function<Status(uint32_t global, uint64_t item, AlignedBuffer& buf)>;
  // How many operations a thread does in a phase (default: spec_.items).
  using Count = std::function<uint64_t(uint32_t global)>;
  Result<PhaseResult> Phase(const std::string& name, const Op& op, const Count& count);
  uint32_t Global(uint32_t idx) const {
    return static_cast<uint32_t>(comm_.rank()) * spec_.threads + idx;
  }
  // dir-list: the entries thread `global` lists (0: it lists nothing).
  uint64_t ListCount(uint32_t global) const {
    if (spec_.unique_dirs) return spec_.items;
    return global == 0 ? spec_.items * spec_.threads * static_cast<uint64_t>(comm_.size()) : 0;
  }
  Status ListNext(uint32_t global, uint64_t item);
  std::string Dir(uint32_t global) const {
    return spec_.unique_dirs ? fmt::format("{}/t{}", root_, global) : root_ + "/shared";
  }
  uint32_t Target(uint32_t global) const {
    uint32_t total = spec_.threads * static_cast<uint32_t>(comm_.size());
    return spec_.neighbor ? (global + 1) % total : global;
  }
  std::string Item(char kind, uint32_t owner, uint64_t item) const {
    return fmt::format("{}/{}.{}.{}", Dir(owner), kind, owner, item);
  }

  const MetaSpec& spec_;
  Comm& comm_;
  std::string root_;
  std::vector<DirStream> listing_;  // dir-list: each thread's open directory, by thread index
};

Result<PhaseResult> MetaRun::Phase(const std::string& name, const Op& op, const Count& count) {
  const uint32_t threads = spec_.threads;
  std::vector<uint64_t> counts(threads);
  for (uint32_t idx = 0; idx < threads; ++idx) {
    counts[idx] = count ? count(Global(idx)) : spec_.items;
  }
  const uint64_t total = std::accumulate(counts.begin(), counts.end(), uint64_t{0});
  struct Worker {
    Histogram lat;
    uint64_t end_ns = 0;
    Status status;
    std::atomic<uint64_t> done{0};
  };
  std::vector<Worker> workers(threads);
  StartGate gate;
  std::atomic<bool> abort{false};
  std::atomic<uint64_t> first_ns{0}, first_ops{0};
  std::vector<std::thread> pool;
  for (uint32_t idx = 0; idx < threads; ++idx) {
    pool.emplace_back([&, idx] {
      Worker& w = workers[idx];
      AlignedBuffer buf(AlignUp(std::max<uint64_t>(spec_.write_bytes, 1), kPageSize));
      FillRandom(buf.span(), idx + 1);
      uint32_t global = Global(idx);
      gate.Ready();
      gate.WaitGo();
      for (uint64_t item = 0;
           item < counts[idx] && !abort.load(std::memory_order_relaxed) && !StopRequested();
           ++item) {
        uint64_t t0 = MonoNanos();
        Status st = op(global, item, buf);
        if (!st.ok()) {
          w.status = st;
          abort.store(true);
          break;
        }
        w.lat.Record(MonoNanos() - t0);
        w.done.store(item + 1, std::memory_order_relaxed);
      }
      w.end_ns = MonoNanos();
      uint64_t expected = 0;
      // A thread with nothing to do (dir-list of a shared directory) is not
      // the first done.
      if (w.status.ok() && counts[idx] > 0 &&
          first_ns.compare_exchange_strong(expected, w.end_ns)) {
        uint64_t ops = 0;
        for (const Worker& other : workers) ops += other.done.load(std::memory_order_relaxed);
        first_ops.store(ops);
      }
    });
  }
  gate.WaitReady(threads);
  comm_.Barrier();
  CpuSample begin = SampleCpu();
  gate.Go();
  std::optional<Progress> line;
  line.emplace(spec_.progress && comm_.rank() == 0, name, [&] {
    ProgressSnapshot s;
    for (const Worker& w : workers) s.ops += w.done.load(std::memory_order_relaxed);
    s.fraction = total > 0 ? static_cast<double>(s.ops) / static_cast<double>(total) : 1.0;
    return s;
  });
  for (auto& t : pool) t.join();
  CpuSample end = SampleCpu();
  line->Stop();
  PhaseResult p;
  p.name = name;
  p.has_bytes = false;
  p.workers = static_cast<uint32_t>(
      std::count_if(counts.begin(), counts.end(), [](uint64_t n) { return n > 0; }));
  uint64_t last_ns = begin.wall_ns;
  for (Worker& w : workers) {
    if (!w.status.ok()) return w.status;
    p.latency.Merge(w.lat);
    p.last_done.ops += w.done.load();
    last_ns = std::max(last_ns, w.end_ns);
  }
  p.last_done.elapsed_s = static_cast<double>(last_ns - begin.wall_ns) / 1e9;
  p.first_done.elapsed_s =
      first_ns.load() > 0 ? static_cast<double>(first_ns.load() - begin.wall_ns) / 1e9 : 0.0;
  p.first_done.ops = first_ops.load();
  p.cpu = CpuBetween(begin, end);
  p.peak_rss = PeakRssBytes();
  p.ComputeFigures();
  return p;
}

Status Errno(std::string_view what, const std::string& path) {
  return Status::FromErrno(errno, fmt::format("{} {}", what, path));
}

// One entry of `ls -l`: the next name from readdir (the directory opened at
// the first item, closed after the last) and its lstat(). A listing that
// ends before the entries the thread expects is an error; "." and ".." are
// not counted. The path is formatted only on the first item and on errors.
Status MetaRun::ListNext(uint32_t global, uint64_t item) {
  DirStream& dir = listing_[global - Global(0)];
  const uint64_t expected = ListCount(global);
  if (item == 0) {
    dir.reset(::opendir(Dir(global).c_str()));
    if (!dir) return Errno("opendir", Dir(global));
  }
  for (;;) {
    errno = 0;
    const dirent* entry = ::readdir(dir.get());
    if (entry == nullptr) {
      if (errno != 0) return Errno("readdir", Dir(global));
      return Status(StatusCode::kIoError,
                    fmt::format("{}: {} entries listed, {} expected", Dir(global), item, expected));
    }
    std::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    struct stat st {};
    if (::fstatat(::dirfd(dir.get()), entry->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return Errno("lstat", fmt::format("{}/{}", Dir(global), name));
    }
    break;
  }
  if (item + 1 == expected) dir.reset();
  return Status::Ok();
}

Result<RunResult> MetaRun::Run() {
  // A fresh directory for this run, named by rank 0.
  std::string tag = comm_.Broadcast(fmt::format("{}.{}", ::getpid(), MonoNanos() % 1000000));
  root_ = fmt::format("{}/t0fs-meta.{}", spec_.path, tag);
  Status setup;
  if (comm_.rank() == 0) {
    if (::mkdir(root_.c_str(), 0755) != 0) setup = Errno("mkdir", root_);
    else if (!spec_.unique_dirs && ::mkdir(Dir(0).c_str(), 0755) != 0) setup = Errno("mkdir", Dir(0));
  }
  if (comm_.AnyFailed(!setup.ok())) {
    if (comm_.rank() == 0 && !spec_.keep) std::filesystem::remove_all(root_);
    return setup.ok() ? Status(StatusCode::kIoError, "rank 0 failed to set up") : setup;
  }
  if (spec_.unique_dirs) {
    for (uint32_t idx = 0; idx < spec_.threads && setup.ok(); ++idx) {
      std::string dir = Dir(static_cast<uint32_t>(comm_.rank()) * spec_.threads + idx);
      if (::mkdir(dir.c_str(), 0755) != 0) setup = Errno("mkdir", dir);
    }
  }
  RunResult run;
  Status failed;
  auto phase = [&](const std::string& name, const Op& op, const Count& count = {}) {
    // A stop ends the phase that runs and skips the rest (collective, so
    // every rank skips alike); the run's directory is removed below.
    if (run.stopped_early) return;
    bool local_bad = !failed.ok();
    Result<PhaseResult> p = local_bad ? Result<PhaseResult>(failed) : Phase(name, op, count);
    if (!p.ok() && failed.ok()) failed = p.status();
    if (comm_.AnyFailed(!failed.ok())) {
      if (failed.ok()) failed = Status(StatusCode::kIoError, "another rank failed");
      return;
    }
    run.phases.push_back(*p);
    run.stopped_early = comm_.AnyFailed(StopRequested());
  };
  if (!comm_.AnyFailed(!setup.ok())) {
    if (spec_.dirs) {
      phase("dir-create", [&](uint32_t g, uint64_t i, AlignedBuffer&) {
        std::string p = Item('d', g, i);
        return ::mkdir(p.c_str(), 0755) == 0 ? Status::Ok() : Errno("mkdir", p);
      });
      phase("dir-stat", [&](uint32_t g, uint64_t i, AlignedBuffer&) {
        std::string p = Item('d', Target(g), i);
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 ? Status::Ok() : Errno("stat", p);
      });
      phase("dir-remove", [&](uint32_t g, uint64_t i, AlignedBuffer&) {
        std::string p = Item('d', g, i);
        return ::rmdir(p.c_str()) == 0 ? Status::Ok() : Errno("rmdir", p);
      });
    }
    if (spec_.files) {
      phase("file-create", [&](uint32_t g, uint64_t i, AlignedBuffer& buf) {
        std::string p = Item('f', g, i);
        int fd = ::open(p.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
        if (fd < 0) return Errno("create", p);
        UniqueFd owner(fd);
        if (spec_.write_bytes > 0) {
          RETURN_IF_ERROR(PwriteFull(fd, buf.data(), spec_.write_bytes, 0).WithContext(p));
        }
        return owner.Close();
      });
      if (spec_.list) {
        listing_.resize(spec_.threads);
        phase(
            "dir-list", [&](uint32_t g, uint64_t i, AlignedBuffer&) { return ListNext(g, i); },
            [&](uint32_t g) { return ListCount(g); });
        listing_.clear();
      }
      phase("file-stat", [&](uint32_t g, uint64_t i, AlignedBuffer&) {
        std::string p = Item('f', Target(g), i);
        struct stat st {};
        return ::stat(p.c_str(), &st) == 0 ? Status::Ok() : Errno("stat", p);
      });
      if (spec_.write_bytes > 0) {
        phase("file-read", [&](uint32_t g, uint64_t i, AlignedBuffer& buf) {
          std::string p = Item('f', Target(g), i);
          int fd = ::open(p.c_str(), O_RDONLY | O_CLOEXEC);
          if (fd < 0) return Errno("open", p);
          UniqueFd owner(fd);
          ASSIGN_OR_RETURN(size_t got, PreadFull(fd, buf.data(), spec_.write_bytes, 0));
          if (got != spec_.write_bytes) return Status(StatusCode::kIoError, "short read of " + p);
          return owner.Close();
        });
      }
      if (spec_.rename) {
        phase("file-rename", [&](uint32_t g, uint64_t i, AlignedBuffer&) {
          std::string from = Item('f', g, i);
          std::string to = Item('r', g, i);
          return ::rename(from.c_str(), to.c_str()) == 0 ? Status::Ok() : Errno("rename", from);
        });
      }
      phase("file-remove", [&](uint32_t g, uint64_t i, AlignedBuffer&) {
        std::string p = Item(spec_.rename ? 'r' : 'f', g, i);
        return ::unlink(p.c_str()) == 0 ? Status::Ok() : Errno("unlink", p);
      });
    }
  } else if (setup.ok()) {
    failed = Status(StatusCode::kIoError, "another rank failed to set up");
  } else {
    failed = setup;
  }
  comm_.Barrier();
  if (!spec_.keep) {
    // What a phase left (a stopped or failed run leaves a full tree): each
    // thread removes its own directory, in parallel, then rank 0 the rest.
    if (spec_.unique_dirs) {
      std::vector<std::thread> removers;
      for (uint32_t idx = 0; idx < spec_.threads; ++idx) {
        removers.emplace_back([this, idx] {
          uint32_t global = static_cast<uint32_t>(comm_.rank()) * spec_.threads + idx;
          std::error_code ec;
          std::filesystem::remove_all(Dir(global), ec);
        });
      }
      for (auto& t : removers) t.join();
      comm_.Barrier();
    }
    if (comm_.rank() == 0) {
      std::error_code ec;
      std::filesystem::remove_all(root_, ec);
    }
  }
  if (!failed.ok()) return failed;
  return GatherRun(run, comm_);
}

}  // namespace

Result<RunResult> RunMeta(const MetaSpec& spec, Comm& comm) {
  RETURN_IF_ERROR(ValidateMetaSpec(spec));
  ASSIGN_OR_RETURN(PathKind kind, ClassifyPath(spec.path));
  struct stat st {};
  if (kind != PathKind::kDirectory || ::stat(spec.path.c_str(), &st) != 0) {
    return Status(StatusCode::kInvalidArgument, spec.path + ": meta needs an existing directory");
  }
  MetaRun run(spec, comm);
  return run.Run();
}

}  // namespace t0fs::bench
