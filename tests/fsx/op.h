// One step of an fsx run: plain data, produced by OpGenerator from the seed
// and the model alone (never from what the file system answered), so the
// same seed gives the same sequence on any file system and a failure can be
// replayed step by step.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace t0fs::fsx {

enum class OpKind : uint8_t {
  kWrite,        // pwrite of a pattern, anywhere below max-size (extends, leaves holes)
  kRead,         // pread, compared with the model
  kMapWrite,     // MAP_SHARED store (ftruncate first when it ends past EOF)
  kMapRead,      // MAP_SHARED load, compared with the model
  kTruncate,     // ftruncate down, up or to zero
  kFallocate,    // one of FallocMode
  kCopyRange,    // copy_file_range inside the file
  kSync,         // fsync, or fdatasync when `flag`
  kReopen,       // close every descriptor, open again (O_TRUNC when `flag`)
  kOpenSecond,   // a second descriptor on the file, used by later ops
  kCloseSecond,  // closes it
  kRewrite,      // Python's open("r+b"); truncate(0); write(); close()
  kUringBatch,   // io_uring: non-overlapping reads and writes submitted at once
  kCount,
};

enum class FallocMode : uint8_t {
  kAllocate,           // 0: allocate, may extend the size
  kKeepSize,           // FALLOC_FL_KEEP_SIZE
  kPunchHole,          // FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE
  kZeroRange,          // FALLOC_FL_ZERO_RANGE, may extend the size
  kZeroRangeKeepSize,  // FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE
  kCount,
};

// One SQE of a kUringBatch.
struct UringIo {
  bool write = false;
  uint64_t offset = 0;
  uint64_t length = 0;
};

struct Op {
  uint64_t step = 0;  // 1-based; a write's pattern depends on it (pattern.h)
  OpKind kind = OpKind::kWrite;
  uint64_t offset = 0;  // kTruncate: the new size; kCopyRange: the source
  uint64_t length = 0;
  uint64_t dest = 0;  // kCopyRange: destination offset
  int fd_slot = 0;    // 0 = main descriptor, 1 = the second one
  FallocMode falloc = FallocMode::kAllocate;
  // kSync: fdatasync; kReopen: O_TRUNC; kMapWrite: msync before munmap;
  // kUringBatch: an fsync SQE in the batch; kRewrite: the main descriptor
  // is closed during the rewrite (else it stays open beside it).
  bool flag = false;
  std::vector<UringIo> batch;  // kUringBatch
  uint64_t size_before = 0;    // the model's size before the op (for the log)
};

const char* KindName(OpKind kind);
const char* FallocName(FallocMode mode);
// The op with its arguments, one line ("write 0x1000 len 0x200 fd0").
std::string Describe(const Op& op);

// A byte range [offset, offset + length) the op wrote or read; the range
// check re-reads these after the op.
struct Range {
  uint64_t offset = 0;
  uint64_t length = 0;
};
std::vector<Range> TouchedRanges(const Op& op);

}  // namespace t0fs::fsx
