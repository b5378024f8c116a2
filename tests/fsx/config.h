// The settings of one fsx run (the command line, parsed in main.cc).
#pragma once

#include <cstdint>
#include <set>
#include <string>

#include "op.h"

namespace t0fs::fsx {

enum class IoMode : uint8_t {
  kBuffered,  // pread/pwrite and mmap
  kNoMmap,    // pread/pwrite only
  kDirect,    // O_DIRECT: I/O offsets, lengths and buffers 4096-aligned
  kUring,     // reads and writes through io_uring batches
};

enum class CheckMode : uint8_t {
  kFull,   // the whole file after every step
  kRange,  // the touched ranges and one random range; the whole file every 1000 steps
};

enum class FallocPolicy : uint8_t {
  kAuto,   // every mode; one answering EOPNOTSUPP is reported once and not used again
  kAll,    // every mode; EOPNOTSUPP is a failure
  kBasic,  // modes 0 and KEEP_SIZE only
};

inline constexpr uint64_t kDirectAlign = 4096;

struct Config {
  std::string path;
  uint64_t seed = 0;
  uint64_t ops = 100000;
  IoMode mode = IoMode::kBuffered;
  // Largest file the ops make. Larger files cross more chunk boundaries of
  // the file system under test; smaller ones keep a full check per step cheap.
  uint64_t max_size = 256 << 10;
  // Longest single read/write/copy/fallocate.
  uint64_t max_op_len = 64 << 10;
  CheckMode check = CheckMode::kFull;
  FallocPolicy falloc = FallocPolicy::kAuto;
  bool log = false;
  bool quiet = false;
  uint64_t replay_to = 0;  // 0: run all ops
  // Op kinds never generated (to tell apart bugs that need different ops;
  // changes the sequence of a seed).
  std::set<OpKind> without;
};

const char* ModeName(IoMode mode);

}  // namespace t0fs::fsx
