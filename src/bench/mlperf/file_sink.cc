#include "bench/mlperf/file_sink.h"

#include <fcntl.h>
#include <isa-l/crc.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "bench/pattern.h"
#include "bench/stop_signal.h"
#include "common/clock.h"
#include "common/crc32c.h"

namespace t0fs::bench::mlperf {

Status MakeDirs(const std::string& dir) {
  for (size_t pos = 1; pos <= dir.size(); ++pos) {
    if (pos != dir.size() && dir[pos] != '/') continue;
    std::string part = dir.substr(0, pos);
    if (::mkdir(part.c_str(), 0755) != 0 && errno != EEXIST) {
      return Status::FromErrno(errno, "mkdir " + part);
    }
  }
  return Status::Ok();
}

Status EngineWrite(Engine& engine, int handle, uint64_t offset, size_t len,
                   const std::string& path) {
  RETURN_IF_ERROR(engine.Submit(0, handle, IoDir::kWrite, offset, len));
  Completion done[1];
  ASSIGN_OR_RETURN(size_t got, engine.Reap(done, 1));
  if (got != 1 || done[0].result < 0) {
    int err = got == 1 ? static_cast<int>(-done[0].result) : EIO;
    return Status::FromErrno(err, fmt::format("write {} at offset {}", path, offset));
  }
  if (static_cast<size_t>(done[0].result) != len) {
    return Status(StatusCode::kIoError, fmt::format("short write to {} at offset {}", path, offset));
  }
  return Status::Ok();
}

Result<FileSink> FileSink::Open(Engine& engine, const std::string& path, uint64_t seed) {
  OpenMode mode;
  mode.read = false;
  mode.write = true;
  mode.create = true;
  mode.truncate = true;
  ASSIGN_OR_RETURN(int handle, engine.Open(path, mode));
  return FileSink(&engine, handle, path, seed);
}

FileSink::FileSink(Engine* engine, int handle, std::string path, uint64_t seed)
    : engine_(engine), handle_(handle), path_(std::move(path)), seed_(seed) {
  buf_ = engine_->Buffer(0);
  Refill();
}

void FileSink::Refill() { FillRandom(buf_, Mix64(seed_ ^ (flushes_ * 0x9e3779b97f4a7c15ULL))); }

void FileSink::BeginChecksum(ChecksumKind kind) {
  kind_ = kind;
  crc_ = 0;
}

void FileSink::Checksum(const std::byte* data, size_t len) {
  switch (kind_) {
    case ChecksumKind::kNone: break;
    case ChecksumKind::kCrc32:
      crc_ = crc32_gzip_refl(crc_, reinterpret_cast<const unsigned char*>(data), len);
      break;
    case ChecksumKind::kCrc32c: crc_ = Crc32c({data, len}, crc_); break;
  }
}

Status FileSink::Append(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    if (fill_ == buf_.size()) RETURN_IF_ERROR(Flush());
    size_t n = std::min(bytes.size(), buf_.size() - fill_);
    std::memcpy(buf_.data() + fill_, bytes.data(), n);
    Checksum(buf_.data() + fill_, n);
    fill_ += n;
    bytes = bytes.subspan(n);
  }
  return Status::Ok();
}

Status FileSink::AppendRandom(uint64_t n) {
  while (n > 0) {
    if (fill_ == buf_.size()) RETURN_IF_ERROR(Flush());
    size_t take = static_cast<size_t>(std::min<uint64_t>(n, buf_.size() - fill_));
    // The buffer is random already (refilled at every flush); stamp the
    // position so that no 4 KiB block repeats within or across files.
    Scramble(buf_.subspan(fill_, take), written_ + fill_, seed_);
    Checksum(buf_.data() + fill_, take);
    fill_ += take;
    n -= take;
  }
  return Status::Ok();
}

Status FileSink::Flush() {
  if (fill_ == 0) return Status::Ok();
  // Between two writes: a stop request ends the file here (the caller
  // removes it).
  if (StopRequested()) return Status(StatusCode::kInterrupted, "write " + path_ + ": stopped");
  uint64_t t0 = MonoNanos();
  RETURN_IF_ERROR(EngineWrite(*engine_, handle_, written_, fill_, path_));
  write_ns_ += MonoNanos() - t0;
  written_ += fill_;
  fill_ = 0;
  ++flushes_;
  Refill();
  return Status::Ok();
}

Status FileSink::PatchAt(uint64_t offset, std::span<const std::byte> bytes) {
  RETURN_IF_ERROR(Flush());
  std::memcpy(buf_.data(), bytes.data(), bytes.size());
  Status st = EngineWrite(*engine_, handle_, offset, bytes.size(), path_);
  Refill();
  return st;
}

Status FileSink::Finish(bool fsync, bool drop_cache) {
  Status st = Flush();
  if (st.ok() && fsync) {
    uint64_t t0 = MonoNanos();
    st = engine_->Fsync(handle_);
    fsync_ns_ = MonoNanos() - t0;
    if (!st.ok()) st = st.WithContext("fsync " + path_);
  }
  if (st.ok() && drop_cache) {
    int fd = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      (void)::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
      ::close(fd);
    }
  }
  Status closed = engine_->Close(handle_);
  if (st.ok() && !closed.ok()) st = closed.WithContext("close " + path_);
  return st;
}

}  // namespace t0fs::bench::mlperf
