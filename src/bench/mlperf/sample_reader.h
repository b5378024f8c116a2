// SampleReader: reads one whole file the way the reference readers do (one
// sample = the entire file, data discarded), through a bench Engine: the
// file is read front to back in `transfer` requests with up to the engine's
// depth in flight (psync: one at a time; io_uring: the depth; O_DIRECT
// rounds the last request up to 4 KiB). An optional sink sees the bytes in
// file order (the TFRecord scanner).
//
// ReadFiles reads several whole files together: their requests share the
// engine's depth, so a reader thread keeps up to depth requests in flight
// across files even when each file is smaller than one transfer (the
// native engine's BatchIo; the Torch loader reads a batch this way).
//
// Test hook: `delay_per_file_s` sleeps after every file, to emulate slow
// storage in tests (docs/mlperf.md, "Test hooks").
// Thread safety: one reader per thread (it owns no engine, it borrows one).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>

#include "bench/engine.h"

namespace t0fs::bench::mlperf {

struct ReadOptions {
  uint64_t transfer = 4 << 20;  // bytes per request
  bool direct = false;
  double delay_per_file_s = 0;  // test hook
};

using DataSink = std::function<Status(const std::byte* data, size_t len)>;
// Called as each file of ReadFiles completes: its index, bytes, and the
// nanoseconds from its first request to its last completion.
using FileDone = std::function<void(size_t file_idx, uint64_t bytes, uint64_t nanos)>;

class SampleReader {
 public:
  SampleReader(Engine& engine, const ReadOptions& options) : engine_(engine), options_(options) {}
  // Reads all of `path`; returns the bytes read.
  Result<uint64_t> ReadWhole(const std::string& path, const DataSink& sink = {});
  // Reads `length` bytes of an open handle from `offset` (in `transfer` requests).
  Result<uint64_t> ReadRange(int handle, const std::string& path, uint64_t offset,
                             uint64_t length, const DataSink& sink = {});
  // Reads all of every file of `paths` (data discarded), up to the engine's
  // depth in flight across them; files open as their first request is due.
  // Returns the bytes read.
  Result<uint64_t> ReadFiles(std::span<const std::string> paths, const FileDone& done);

 private:
  Engine& engine_;
  ReadOptions options_;
};

// Sleeps until `seconds` have passed (clock_nanosleep on an absolute
// deadline, so it does not drift).
void PreciseSleep(double seconds);

}  // namespace t0fs::bench::mlperf
