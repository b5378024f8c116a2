// Engine: how a worker thread issues I/O. One engine instance per worker
// thread (not thread-safe); it owns the thread's page-aligned I/O buffers
// (one per queue slot) and the files the thread opened.
//
// The interface is a queue: Submit() puts a request for slot `slot` in
// flight, Reap() waits for at least `min` completions. psync completes the
// request inside Submit(); io_uring keeps up to depth() requests in flight
// with registered buffers, like fio's io_uring engine with fixedbufs; native
// does the same through libt0fs's BatchIo (requests queued by Submit go out
// as one batch at Reap).
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/status.h"

namespace t0fs::bench {

enum class EngineKind { kPsync, kUring, kNative };
Result<EngineKind> ParseEngineKind(std::string_view text);
std::string_view EngineName(EngineKind kind);
// Whether this build has the engine (native needs libt0fs).
bool EngineAvailable(EngineKind kind);

enum class IoDir : uint8_t { kRead, kWrite };

struct OpenMode {
  bool read = true;
  bool write = false;
  bool create = false;
  bool truncate = false;
  bool direct = false;
};

struct Completion {
  uint32_t slot = 0;
  int64_t result = 0;  // bytes transferred or -errno
};

struct EngineOptions {
  EngineKind kind = EngineKind::kPsync;
  uint32_t depth = 1;
  size_t buffer_size = 0;  // per slot
  // native: meta address and secret file of the t0fs cluster (ignored by others).
  std::string meta;
  std::string secret_file;
  uint64_t node_id = 0;  // the client's data node; 0 = detected by host
};

class Engine {
 public:
  virtual ~Engine() = default;
  // Opens `path` (a local path; the native engine maps it into t0fs). Returns a handle.
  virtual Result<int> Open(const std::string& path, const OpenMode& mode) = 0;
  virtual Status Fsync(int handle) = 0;
  virtual Status Close(int handle) = 0;

  virtual uint32_t depth() const = 0;
  virtual std::span<std::byte> Buffer(uint32_t slot) = 0;
  // Starts `len` bytes of I/O at `offset` using slot `slot`'s buffer.
  virtual Status Submit(uint32_t slot, int handle, IoDir dir, uint64_t offset, size_t len) = 0;
  // Waits for at least `min` completions (all that are ready, up to out.size()).
  virtual Result<size_t> Reap(std::span<Completion> out, size_t min) = 0;
  virtual std::string_view name() const = 0;
};

Result<std::unique_ptr<Engine>> MakeEngine(const EngineOptions& options);

// Engine factories (one file each).
Result<std::unique_ptr<Engine>> MakePsyncEngine(const EngineOptions& options);
Result<std::unique_ptr<Engine>> MakeUringEngine(const EngineOptions& options);
Result<std::unique_ptr<Engine>> MakeNativeEngine(const EngineOptions& options);

// Native-engine helper (also used to give a clear error early): the t0fs
// mount containing `path`, or an error naming the file system it is on.
struct T0fsLocation {
  std::string mount_point;
  std::string fs_path;  // absolute path inside t0fs
};
Result<T0fsLocation> FindT0fsMount(const std::string& path);

}  // namespace t0fs::bench
