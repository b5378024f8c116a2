#include "bench/dataset.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/buffer.h"
#include "common/config.h"

namespace t0fs::bench {

uint64_t DatasetPlan::TotalFileBytes() const {
  uint64_t total = 0;
  for (const auto& file : files) total += file.size;
  return total;
}

static std::string FileName(const DatasetSpec& spec, uint64_t thread, uint64_t file_idx) {
  return fmt::format("{}/t0fs-bench.{}.{}", spec.path, thread, file_idx);
}

static Result<DatasetPlan> PlanFiles(const DatasetSpec& spec) {
  if (spec.block == 0) return Status(StatusCode::kInvalidArgument, "block size must be > 0");
  if (spec.threads == 0) return Status(StatusCode::kInvalidArgument, "threads must be > 0");
  if (spec.nrfiles == 0) return Status(StatusCode::kInvalidArgument, "files must be > 0");
  if (spec.path_is_file && (spec.layout != FileLayout::kSharedFiles || spec.nrfiles != 1)) {
    return Status(StatusCode::kInvalidArgument,
                  "a file path needs the shared layout with one file");
  }
  DatasetPlan plan;
  plan.shares.resize(spec.threads);
  const uint64_t block = spec.block;

  if (spec.layout == FileLayout::kPerThreadFiles) {
    uint64_t per_thread = spec.split == Split::kPerThread ? spec.size : spec.size / spec.threads;
    uint64_t file_size = AlignDown(per_thread / spec.nrfiles, block);
    if (file_size == 0) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("size {} gives files smaller than one block ({}): {} threads x {} "
                                "files",
                                FormatByteSize(spec.size), FormatByteSize(block), spec.threads,
                                spec.nrfiles));
    }
    for (uint32_t thread = 0; thread < spec.threads; ++thread) {
      Share& share = plan.shares[thread];
      for (uint32_t file_idx = 0; file_idx < spec.nrfiles; ++file_idx) {
        auto index = static_cast<uint32_t>(plan.files.size());
        plan.files.push_back({FileName(spec, thread, file_idx), file_size,
                              uint64_t{thread} * spec.nrfiles + file_idx + 1,
                              static_cast<int32_t>(thread)});
        share.segments.push_back({index, 0, file_size});
        share.length += file_size;
      }
    }
    return plan;
  }

  // Shared files: nrfiles files of size/nrfiles.
  uint64_t file_size = AlignDown(spec.size / spec.nrfiles, block);
  if (file_size == 0) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("size {} gives files smaller than one block ({})",
                              FormatByteSize(spec.size), FormatByteSize(block)));
  }
  for (uint32_t file_idx = 0; file_idx < spec.nrfiles; ++file_idx) {
    std::string path = spec.path_is_file ? spec.path
                       : spec.nrfiles == 1
                           ? fmt::format("{}/t0fs-bench.shared", spec.path)
                           : fmt::format("{}/t0fs-bench.shared.{}", spec.path, file_idx);
    plan.files.push_back({std::move(path), file_size, 1000000000ULL + file_idx, -1});
  }
  if (spec.split == Split::kPerThread) {
    for (Share& share : plan.shares) {
      for (uint32_t file_idx = 0; file_idx < spec.nrfiles; ++file_idx) {
        share.segments.push_back({file_idx, 0, file_size});
        share.length += file_size;
      }
    }
    return plan;
  }
  // Fair share: blocks [t*B/T, (t+1)*B/T) of the concatenation.
  uint64_t blocks_per_file = file_size / block;
  uint64_t total_blocks = blocks_per_file * spec.nrfiles;
  if (total_blocks < spec.threads) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("dataset of {} blocks cannot be shared by {} threads", total_blocks,
                              spec.threads));
  }
  for (uint32_t thread = 0; thread < spec.threads; ++thread) {
    uint64_t first = static_cast<uint64_t>((static_cast<unsigned __int128>(total_blocks) * thread) /
                                           spec.threads);
    uint64_t last = static_cast<uint64_t>(
        (static_cast<unsigned __int128>(total_blocks) * (thread + 1)) / spec.threads);
    Share& share = plan.shares[thread];
    uint64_t blk = first;
    while (blk < last) {
      auto file_idx = static_cast<uint32_t>(blk / blocks_per_file);
      uint64_t in_file = blk % blocks_per_file;
      uint64_t take = std::min(last - blk, blocks_per_file - in_file);
      share.segments.push_back({file_idx, in_file * block, take * block});
      share.length += take * block;
      blk += take;
    }
  }
  return plan;
}

Result<DatasetPlan> PlanDataset(const DatasetSpec& spec) {
  ASSIGN_OR_RETURN(DatasetPlan plan, PlanFiles(spec));
  for (Share& share : plan.shares) {
    uint64_t start = 0;
    for (const Segment& seg : share.segments) {
      share.starts.push_back(start);
      start += seg.length;
    }
  }
  return plan;
}

Location Locate(const Share& share, uint64_t pos) {
  auto it = std::upper_bound(share.starts.begin(), share.starts.end(), pos);
  size_t idx = static_cast<size_t>(it - share.starts.begin()) - 1;
  const Segment& seg = share.segments[idx];
  uint64_t in_seg = pos - share.starts[idx];
  return {seg.file, seg.offset + in_seg, seg.length - in_seg};
}

}  // namespace t0fs::bench
