// psync: pread/pwrite, one request at a time (fio ioengine=psync).
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "bench/engine.h"
#include "bench/engine_files.h"
#include "common/buffer.h"

namespace t0fs::bench {
namespace {

class PsyncEngine final : public Engine {
 public:
  explicit PsyncEngine(const EngineOptions& options) {
    // psync has one request in flight; extra slots still exist so a caller
    // written for depth N works, but depth() reports 1.
    buffer_ = AlignedBuffer(AlignUp(options.buffer_size == 0 ? kPageSize : options.buffer_size,
                                    kPageSize));
  }

  Result<int> Open(const std::string& path, const OpenMode& mode) override {
    return files_.Open(path, mode);
  }
  Status Fsync(int handle) override {
    if (::fsync(files_.fd(handle)) != 0) return Status::FromErrno(errno, "fsync");
    return Status::Ok();
  }
  Status Close(int handle) override { return files_.Close(handle); }
  uint32_t depth() const override { return 1; }
  std::span<std::byte> Buffer(uint32_t) override { return buffer_.span(); }

  Status Submit(uint32_t slot, int handle, IoDir dir, uint64_t offset, size_t len) override {
    int fd = files_.fd(handle);
    size_t done = 0;
    int64_t result = 0;
    // Retry short transfers (signals, page-cache boundaries) as fio does; a
    // zero-byte read is end of file and ends the request short.
    while (done < len) {
      ssize_t rc = dir == IoDir::kRead
                       ? ::pread(fd, buffer_.data() + done, len - done,
                                 static_cast<off_t>(offset + done))
                       : ::pwrite(fd, buffer_.data() + done, len - done,
                                  static_cast<off_t>(offset + done));
      if (rc < 0) {
        if (errno == EINTR) continue;
        result = -errno;
        break;
      }
      if (rc == 0) break;
      done += static_cast<size_t>(rc);
    }
    done_ = Completion{slot, result < 0 ? result : static_cast<int64_t>(done)};
    pending_ = true;
    return Status::Ok();
  }

  Result<size_t> Reap(std::span<Completion> out, size_t) override {
    if (!pending_ || out.empty()) return size_t{0};
    out[0] = done_;
    pending_ = false;
    return size_t{1};
  }
  std::string_view name() const override { return "psync"; }

 private:
  FdTable files_;
  AlignedBuffer buffer_;
  Completion done_;
  bool pending_ = false;
};

}  // namespace

Result<std::unique_ptr<Engine>> MakePsyncEngine(const EngineOptions& options) {
  return std::unique_ptr<Engine>(new PsyncEngine(options));
}

}  // namespace t0fs::bench
