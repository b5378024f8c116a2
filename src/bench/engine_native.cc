// native: reads and writes through libt0fs (t0fs::client::File), bypassing
// FUSE. One request at a time per thread; all threads share one Client
// (Client and File are thread-safe, see client.h).
#include <fcntl.h>

#include <mutex>
#include <vector>

#include "bench/engine.h"
#include "common/buffer.h"
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
        buffer_(AlignUp(options.buffer_size == 0 ? kPageSize : options.buffer_size, kPageSize)) {}

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
  uint32_t depth() const override { return 1; }
  std::span<std::byte> Buffer(uint32_t) override { return buffer_.span(); }

  Status Submit(uint32_t slot, int handle, IoDir dir, uint64_t offset, size_t len) override {
    client::File& file = *files_[handle];
    Result<size_t> rc = dir == IoDir::kRead
                            ? file.Read(offset, {buffer_.data(), len})
                            : file.Write(offset, {buffer_.data(), len});
    done_ = {slot, rc.ok() ? static_cast<int64_t>(*rc) : -int64_t{ToErrno(rc.status().code())}};
    pending_ = true;
    return Status::Ok();
  }
  Result<size_t> Reap(std::span<Completion> out, size_t) override {
    if (!pending_ || out.empty()) return size_t{0};
    out[0] = done_;
    pending_ = false;
    return size_t{1};
  }
  std::string_view name() const override { return "native"; }

 private:
  client::Client* client_;
  AlignedBuffer buffer_;
  std::vector<std::unique_ptr<client::File>> files_;
  Completion done_;
  bool pending_ = false;
};

}  // namespace

Result<std::unique_ptr<Engine>> MakeNativeEngine(const EngineOptions& options) {
  ASSIGN_OR_RETURN(client::Client * client, SharedClient(options));
  return std::unique_ptr<Engine>(new NativeEngine(options, client));
}

}  // namespace t0fs::bench
