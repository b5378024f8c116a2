// Dataset planning: which files a benchmark uses and which byte ranges each
// worker thread works on. Pure computation (no I/O), so the split semantics
// are unit-tested on their own.
//
// Two split rules (bench-tools.md §0, §8.2):
//  - kPerThread (fio): `size` is the amount each thread moves. With
//    per-thread files each thread owns nrfiles files of size/nrfiles; with
//    shared files every thread works over the whole file set, whose total
//    size is `size` (fio `filename=` + numjobs).
//  - kShared (elbencho): `size` is the whole dataset. With per-thread files
//    each thread owns nrfiles files of size/(threads*nrfiles); with shared
//    files the concatenated file set is cut into equal, contiguous,
//    block-aligned ranges, one per thread ("fair share").
// Files are sized down to a multiple of the block size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::bench {

enum class Split { kPerThread, kShared };
enum class FileLayout { kPerThreadFiles, kSharedFiles };

struct DatasetSpec {
  // A directory in which files are named t0fs-bench.<thread>.<file> or
  // t0fs-bench.shared[.<file>]; or, for kSharedFiles with one file, the
  // path of that file (`path_is_file`).
  std::string path;
  bool path_is_file = false;
  FileLayout layout = FileLayout::kPerThreadFiles;
  Split split = Split::kPerThread;
  uint32_t threads = 1;  // all threads of all ranks
  uint32_t nrfiles = 1;  // per thread (per-thread files) or in total (shared)
  uint64_t size = 0;
  uint64_t block = 0;
};

struct PlannedFile {
  std::string path;
  uint64_t size = 0;
  uint64_t id = 0;          // stable id used by the verify pattern
  int32_t owner = -1;       // thread that creates it; -1 = shared
};

// A contiguous range of one file.
struct Segment {
  uint32_t file = 0;  // index into DatasetPlan::files
  uint64_t offset = 0;
  uint64_t length = 0;
};

// One thread's address space: segments laid end to end. `length` bytes, all
// multiples of the block size.
struct Share {
  std::vector<Segment> segments;
  std::vector<uint64_t> starts;  // position of each segment in the share
  uint64_t length = 0;
};

struct DatasetPlan {
  std::vector<PlannedFile> files;
  std::vector<Share> shares;  // one per thread
  uint64_t TotalFileBytes() const;
};

Result<DatasetPlan> PlanDataset(const DatasetSpec& spec);

// Maps a byte position (< share.length) inside `share` to a file offset.
struct Location {
  uint32_t file = 0;
  uint64_t file_offset = 0;
  uint64_t left_in_segment = 0;
};
Location Locate(const Share& share, uint64_t pos);

}  // namespace t0fs::bench
