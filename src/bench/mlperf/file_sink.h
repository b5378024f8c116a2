// FileSink: writes one file front to back through a bench Engine, from a
// page-aligned staging buffer (the engine's slot 0), with incompressible
// random payload and a running checksum over what was appended (CRC-32 for
// zip members, CRC-32C for TFRecord framing). Used by datagen, the
// checkpoint writer and the KV-cache storage tier.
// Thread safety: one sink per thread (it borrows the thread's engine).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "bench/engine.h"

namespace t0fs::bench::mlperf {

enum class ChecksumKind { kNone, kCrc32, kCrc32c };

class FileSink {
 public:
  // Creates (truncates) `path` for writing. The engine's buffer must be at
  // least one page; it is flushed whenever full. `seed` varies the payload.
  static Result<FileSink> Open(Engine& engine, const std::string& path, uint64_t seed);
  FileSink(FileSink&&) = default;

  Status Append(std::span<const std::byte> bytes);
  Status Append(const std::string& bytes) {
    return Append(std::as_bytes(std::span(bytes.data(), bytes.size())));
  }
  // `n` bytes of random (incompressible, non-deduplicable) data.
  Status AppendRandom(uint64_t n);
  // Starts a checksum over the bytes appended from now on.
  void BeginChecksum(ChecksumKind kind);
  uint32_t checksum() const { return crc_; }
  uint64_t offset() const { return written_ + fill_; }
  // Overwrites bytes at `offset` (after Flush(): the staging buffer is free).
  Status PatchAt(uint64_t offset, std::span<const std::byte> bytes);
  // Writes the staged bytes; kInterrupted when a stop is requested.
  Status Flush();
  // Flushes, optionally fsyncs and optionally drops the file's page cache,
  // closes. The sink is unusable afterwards.
  Status Finish(bool fsync, bool drop_cache = false);
  // Nanoseconds spent in write submissions and in the final fsync.
  uint64_t write_ns() const { return write_ns_; }
  uint64_t fsync_ns() const { return fsync_ns_; }

 private:
  FileSink(Engine* engine, int handle, std::string path, uint64_t seed);
  void Checksum(const std::byte* data, size_t len);
  void Refill();

  Engine* engine_;
  int handle_;
  std::string path_;
  uint64_t seed_;
  std::span<std::byte> buf_;
  size_t fill_ = 0;
  uint64_t written_ = 0;
  uint64_t flushes_ = 0;
  ChecksumKind kind_ = ChecksumKind::kNone;
  uint32_t crc_ = 0;
  uint64_t write_ns_ = 0;
  uint64_t fsync_ns_ = 0;
};

// mkdir -p: creates `dir` and its missing parents (0755).
Status MakeDirs(const std::string& dir);

// Writes `len` bytes from `buf` at `offset` through the engine and waits.
Status EngineWrite(Engine& engine, int handle, uint64_t offset, size_t len,
                   const std::string& path);

}  // namespace t0fs::bench::mlperf
