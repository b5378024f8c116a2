#include "bench/dataset_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <optional>
#include <thread>

#include "bench/pattern.h"
#include "bench/progress.h"
#include "bench/stop_signal.h"
#include "common/buffer.h"
#include "common/fd.h"
#include "common/io_backend.h"

namespace t0fs::bench {

Result<PathKind> ClassifyPath(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return PathKind::kDirectory;
    if (S_ISREG(st.st_mode) || S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) return PathKind::kFile;
    return Status(StatusCode::kInvalidArgument,
                  path + ": not a directory, regular file or device");
  }
  if (errno != ENOENT) return Status::FromErrno(errno, path);
  auto slash = path.find_last_of('/');
  std::string parent = slash == std::string::npos ? "." : path.substr(0, slash == 0 ? 1 : slash);
  if (::stat(parent.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) return PathKind::kFile;
  return Status(StatusCode::kNotFound, path + ": no such file or directory");
}

void DatasetFiles::Init(const DatasetPlan* plan, int rank, uint32_t threads_per_rank) {
  plan_ = plan;
  rank_ = rank;
  threads_per_rank_ = threads_per_rank;
  existed_.assign(plan->files.size(), true);
}

bool DatasetFiles::Owns(const PlannedFile& file) const {
  if (file.owner < 0) return rank_ == 0;
  return static_cast<uint32_t>(file.owner) / threads_per_rank_ == static_cast<uint32_t>(rank_);
}

void DatasetFiles::RecordExisting() {
  for (size_t idx = 0; idx < plan_->files.size(); ++idx) {
    struct stat st {};
    existed_[idx] = ::stat(plan_->files[idx].path.c_str(), &st) == 0;
  }
}

Status WritePatternFile(const std::string& path, uint64_t size, uint64_t seed, uint64_t file_id,
                        std::atomic<uint64_t>* progress_bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return Status::FromErrno(errno, "lay out " + path);
  UniqueFd owner(fd);
  constexpr size_t kChunk = 1 << 20;
  AlignedBuffer buf(kChunk);
  for (uint64_t off = 0; off < size; off += kChunk) {
    if (StopRequested()) return Status(StatusCode::kInterrupted, "lay out " + path + ": stopped");
    size_t len = static_cast<size_t>(std::min<uint64_t>(kChunk, size - off));
    FillPattern({buf.data(), len}, seed, file_id, off);
    Status st = PwriteFull(fd, buf.data(), len, off);
    if (!st.ok()) return st.WithContext("lay out " + path);
    if (progress_bytes != nullptr) progress_bytes->fetch_add(len, std::memory_order_relaxed);
  }
  if (::fsync(fd) != 0) return Status::FromErrno(errno, "lay out " + path + ": fsync");
  return owner.Close();
}

Status DatasetFiles::LayOut(uint64_t seed, bool progress) {
  std::vector<size_t> todo;
  uint64_t todo_bytes = 0;
  for (size_t idx = 0; idx < plan_->files.size(); ++idx) {
    const PlannedFile& file = plan_->files[idx];
    if (!Owns(file)) continue;
    struct stat st {};
    if (::stat(file.path.c_str(), &st) == 0 &&
        (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode) ||
         static_cast<uint64_t>(st.st_size) >= file.size)) {
      continue;  // reuse, as fio does
    }
    todo.push_back(idx);
    todo_bytes += file.size;
  }
  if (todo.empty()) return Status::Ok();
  std::atomic<uint64_t> written{0};
  std::atomic<size_t> next{0};
  std::mutex mu;  // guards first_error
  Status first_error;
  std::optional<Progress> line;
  line.emplace(progress, "layout", [&] {
    ProgressSnapshot s;
    s.bytes = written.load();
    s.ops = s.bytes >> 20;
    s.fraction = static_cast<double>(s.bytes) / static_cast<double>(todo_bytes);
    return s;
  });
  unsigned workers = std::min<unsigned>(static_cast<unsigned>(todo.size()), 4);
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      while (true) {
        size_t at = next.fetch_add(1);
        if (at >= todo.size()) return;
        {
          std::lock_guard<std::mutex> lock(mu);
          if (!first_error.ok()) return;
        }
        const PlannedFile& file = plan_->files[todo[at]];
        Status st = WritePatternFile(file.path, file.size, seed, file.id, &written);
        if (!st.ok()) {
          std::lock_guard<std::mutex> lock(mu);
          if (first_error.ok()) first_error = st;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  line->Stop();
  return first_error;
}

Result<CacheReport> DatasetFiles::DropCache(CacheDropMode mode) {
  // Every file some thread of this rank reads (shared files included).
  std::vector<bool> used(plan_->files.size(), false);
  for (uint32_t idx = 0; idx < threads_per_rank_; ++idx) {
    size_t thread = static_cast<size_t>(rank_) * threads_per_rank_ + idx;
    if (thread >= plan_->shares.size()) break;
    for (const Segment& seg : plan_->shares[thread].segments) used[seg.file] = true;
  }
  std::vector<std::string> paths;
  for (size_t idx = 0; idx < plan_->files.size(); ++idx) {
    if (used[idx]) paths.push_back(plan_->files[idx].path);
  }
  return DropPageCache(mode, paths);
}

void DatasetFiles::Cleanup(bool keep, Comm& comm) {
  comm.Barrier();
  if (keep) return;
  for (size_t idx = 0; idx < plan_->files.size(); ++idx) {
    const PlannedFile& file = plan_->files[idx];
    if (existed_[idx] || !Owns(file)) continue;
    ::unlink(file.path.c_str());  // may not exist (a failed run); nothing to report
  }
}

}  // namespace t0fs::bench
