// The io workload's spec: the read/write mode, the argument checks, and the
// dataset a spec gives (io_spec.h).
#include "bench/io_spec.h"

#include <utility>

#include <fmt/format.h>

#include "bench/dataset_files.h"
#include "common/config.h"

namespace t0fs::bench {

Result<RwMode> ParseRwMode(std::string_view text) {
  if (text == "read") return RwMode::kRead;
  if (text == "write") return RwMode::kWrite;
  if (text == "randread") return RwMode::kRandRead;
  if (text == "randwrite") return RwMode::kRandWrite;
  if (text == "randrw") return RwMode::kRandRW;
  return Status(StatusCode::kInvalidArgument,
                fmt::format("unknown --rw '{}' (read, write, randread, randwrite, randrw)", text));
}

std::string_view RwModeName(RwMode mode) {
  switch (mode) {
    case RwMode::kRead: return "read";
    case RwMode::kWrite: return "write";
    case RwMode::kRandRead: return "randread";
    case RwMode::kRandWrite: return "randwrite";
    case RwMode::kRandRW: return "randrw";
  }
  return "?";
}

Status ValidateIoSpec(const IoSpec& spec) {
  auto bad = [](std::string msg) { return Status(StatusCode::kInvalidArgument, std::move(msg)); };
  if (spec.path.empty()) return bad("PATH is required");
  if (spec.block == 0) return bad("--bs must be > 0");
  if (spec.block > (uint64_t{1} << 30)) return bad("--bs must be at most 1 GiB");
  if (spec.direct && spec.block % 512 != 0) {
    return bad(fmt::format("--direct needs --bs to be a multiple of 512 (got {})", spec.block));
  }
  if (spec.threads == 0 || spec.threads > 4096) return bad("--threads must be 1..4096");
  if (spec.iodepth == 0 || spec.iodepth > 4096) return bad("--iodepth must be 1..4096");
  if (spec.nrfiles == 0 || spec.nrfiles > 100000) return bad("--files must be 1..100000");
  if (spec.rwmixread > 100) return bad("--rwmixread must be 0..100");
  if (spec.size == 0) return bad("--size must be > 0");
  if (spec.size < spec.block) {
    return bad(fmt::format("--size ({}) is smaller than --bs ({})", FormatByteSize(spec.size),
                           FormatByteSize(spec.block)));
  }
  if (spec.runtime_s < 0 || spec.ramp_s < 0) return bad("--runtime and --ramp must be >= 0");
  if (spec.ramp_s > 0 && spec.runtime_s == 0) {
    return bad("--ramp needs a time-based run (--runtime)");
  }
  if (spec.engine.kind == EngineKind::kNative && !EngineAvailable(EngineKind::kNative)) {
    return MakeNativeEngine(spec.engine).status();
  }
  return Status::Ok();
}

std::string SizeArgument(uint64_t bytes) {
  static constexpr std::pair<uint64_t, char> kUnits[] = {
      {uint64_t{1} << 40, 'T'}, {uint64_t{1} << 30, 'G'}, {uint64_t{1} << 20, 'M'}, {1024, 'K'}};
  for (const auto& [unit, suffix] : kUnits) {
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  }
  return std::to_string(bytes);
}

static DatasetSpec DatasetOf(const IoSpec& spec, uint32_t ranks, bool path_is_file) {
  DatasetSpec ds;
  ds.path = spec.path;
  ds.threads = spec.threads * ranks;
  ds.nrfiles = spec.nrfiles;
  ds.size = spec.size;
  ds.block = spec.block;
  ds.split = spec.split;
  ds.layout = path_is_file ? FileLayout::kSharedFiles : spec.layout;
  ds.path_is_file = path_is_file;
  return ds;
}

static uint64_t MinimumSize(const DatasetSpec& ds) {
  const uint64_t files_blocks = uint64_t{ds.nrfiles} * ds.block;  // one block per file
  if (ds.layout == FileLayout::kPerThreadFiles) {
    return ds.split == Split::kPerThread ? files_blocks : files_blocks * ds.threads;
  }
  if (ds.split == Split::kPerThread) return files_blocks;
  // Fair share: every thread needs a block of the concatenated files.
  return files_blocks * ((ds.threads + ds.nrfiles - 1) / ds.nrfiles);
}

uint64_t MinimumIoSize(const IoSpec& spec, uint32_t ranks) {
  return MinimumSize(DatasetOf(spec, ranks, false));
}

Result<DatasetSpec> PlanIoDataset(const IoSpec& spec, uint32_t ranks) {
  ASSIGN_OR_RETURN(PathKind kind, ClassifyPath(spec.path));
  if (kind == PathKind::kFile) {
    if (spec.layout_given && spec.layout != FileLayout::kSharedFiles) {
      return Status(StatusCode::kInvalidArgument,
                    spec.path + " is a file: per-thread files need a directory PATH");
    }
    if (spec.nrfiles != 1) {
      return Status(StatusCode::kInvalidArgument,
                    spec.path + " is a file: --files needs a directory PATH");
    }
  }
  DatasetSpec ds = DatasetOf(spec, ranks, kind == PathKind::kFile);
  uint64_t minimum = MinimumSize(ds);
  if (spec.size < minimum) {
    std::string shape =
        ds.layout == FileLayout::kPerThreadFiles
            ? fmt::format("{} thread{} x {} file{} each", ds.threads, ds.threads == 1 ? "" : "s",
                          ds.nrfiles, ds.nrfiles == 1 ? "" : "s")
            : fmt::format("{} shared file{} for {} thread{}", ds.nrfiles,
                          ds.nrfiles == 1 ? "" : "s", ds.threads, ds.threads == 1 ? "" : "s");
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("--size {} is too small for {} ({} split) with {} blocks: the "
                              "smallest valid size is --size {} ({})",
                              FormatByteSize(spec.size), shape,
                              ds.split == Split::kShared ? "shared" : "per-thread",
                              FormatByteSize(spec.block), SizeArgument(minimum),
                              FormatByteSize(minimum)));
  }
  return ds;
}

}  // namespace t0fs::bench
