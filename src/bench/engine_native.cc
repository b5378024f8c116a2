// native: reads and writes through libt0fs's batched API (t0fs/batch_io.h),
// bypassing FUSE. Each thread has its own BatchIo with one registered buffer
// cut into depth() slots; Submit queues a request, Reap submits the queued
// ones as one batch and reaps, so up to depth() requests are in flight per
// thread. All threads share one Client (Client and File are thread-safe,
// see client.h).
#include <fcntl.h>

#include <algorithm>
#include <mutex>
#include <vector>

#include "bench/engine.h"
#include "common/buffer.h"
#include "t0fs/batch_io.h"
#include "t0fs/client.h"

namespace t0fs::bench {
namespace {

// The process-wide session (connected on first use).
Result<client::Client*> SharedClient(const EngineOptions& options) {
  static std::mutex mu;  // guards `session`
  static std::unique_ptr<client::Client> session;
  std::lock_guard<std::mutex> lock(mu);
  if (session) return session.get();
  client::ClientOptions copts;
  copts.meta = options.meta;
  copts.secret_file = options.secret_file;
  copts.node_id = options.node_id;
  copts.name = "t0fs bench";
  auto connected = client::Client::Connect(copts);
  if (!connected.ok()) {
    return connected.status().WithContext("native engine: connect to meta " + options.meta);
  }
  session = std::move(connected).value();
  return session.get();
}

class NativeEngine final : public Engine {
 public:
  NativeEngine(const EngineOptions& options, client::Client* client)
      : client_(client),
        depth_(std::max<uint32_t>(options.depth, 1)),
        slot_size_(AlignUp(options.buffer_size == 0 ? kPageSize : options.buffer_size, kPageSize)),
        buffers_(slot_size_ * depth_) {}

  Status Init() {
    // Workers serve local replicas and writes: no more than could be busy.
    client::BatchIoOptions bopts;
    bopts.workers = std::min<uint32_t>(depth_, bopts.workers);
    bopts.node_depth = std::max<uint32_t>(depth_, 1);
    ASSIGN_OR_RETURN(batch_, client_->OpenBatchIo(bopts));
    ASSIGN_OR_RETURN(buffer_, batch_->RegisterBuffer(buffers_.span()));
    return Status::Ok();
  }

  Result<int> Open(const std::string& path, const OpenMode& mode) override {
    ASSIGN_OR_RETURN(T0fsLocation where, FindT0fsMount(path));
    int flags = mode.read && mode.write ? O_RDWR : mode.write ? O_WRONLY : O_RDONLY;
    if (mode.truncate) flags |= O_TRUNC;
    if (mode.direct) flags |= O_DIRECT;
    Result<std::unique_ptr<client::File>> file =
        mode.create ? client_->CreatePath(where.fs_path, 0644, flags)
                    : client_->OpenPath(where.fs_path, flags);
    if (!file.ok()) return file.status().WithContext("native open " + path);
    files_.push_back(std::move(file).value());
    return static_cast<int>(files_.size() - 1);
  }
  Status Fsync(int handle) override { return files_[handle]->Fsync(false); }
  Status Close(int handle) override {
    Status st = files_[handle]->Close();
    files_[handle].reset();
    return st;
  }
  uint32_t depth() const override { return depth_; }
  std::span<std::byte> Buffer(uint32_t slot) override {
    return buffers_.span().subspan(static_cast<size_t>(slot) * slot_size_, slot_size_);
  }

  Status Submit(uint32_t slot, int handle, IoDir dir, uint64_t offset, size_t len) override {
    queued_.push_back({.file = files_[handle].get(),
                       .op = dir == IoDir::kRead ? client::BatchOp::kRead : client::BatchOp::kWrite,
                       .offset = offset,
                       .length = len,
                       .buffer = buffer_,
                       .buffer_offset = static_cast<uint64_t>(slot) * slot_size_,
                       .user_data = slot});
    return Status::Ok();
  }
  Result<size_t> Reap(std::span<Completion> out, size_t min) override {
    if (!queued_.empty()) {
      RETURN_IF_ERROR(batch_->Submit(queued_));
      queued_.clear();
    }
    reaped_.resize(out.size());
    min = std::min(min, out.size());
    size_t got = 0;
    // No deadline of its own: a request ends when libt0fs's retries do.
    while (got < out.size()) {
      ASSIGN_OR_RETURN(size_t n, batch_->Wait(std::span(reaped_).subspan(got),
                                              min > got ? min - got : 0, std::chrono::seconds(1)));
      got += n;
      if (got >= min || (n == 0 && batch_->pending() == 0)) break;
    }
    for (size_t idx = 0; idx < got; ++idx) {
      out[idx] = {static_cast<uint32_t>(reaped_[idx].user_data), reaped_[idx].result};
    }
    return got;
  }
  std::string_view name() const override { return "native"; }

 private:
  client::Client* client_;
  const uint32_t depth_;
  const size_t slot_size_;
  // Declared before batch_: the BatchIo waits for its requests when
  // destroyed, and they use the buffer and the files.
  AlignedBuffer buffers_;
  std::vector<std::unique_ptr<client::File>> files_;
  std::unique_ptr<client::BatchIo> batch_;
  uint32_t buffer_ = 0;
  std::vector<client::BatchRequest> queued_;
  std::vector<client::BatchCompletion> reaped_;
};

}  // namespace

Result<std::unique_ptr<Engine>> MakeNativeEngine(const EngineOptions& options) {
  ASSIGN_OR_RETURN(client::Client * client, SharedClient(options));
  auto engine = std::make_unique<NativeEngine>(options, client);
  RETURN_IF_ERROR(engine->Init());
  return std::unique_ptr<Engine>(std::move(engine));
}

}  // namespace t0fs::bench
