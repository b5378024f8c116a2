// The names of chunk copies in the object tier (protect=object), shared by
// meta (uploads, recalls, deletions) and the data nodes (reads through the
// tier): `<prefix>chunks/<chunk id, 16 hex digits>.<version>`, one object per
// uploaded version, written once and never changed, each with its block
// checksums in `<key>.crc`.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "common/ids.h"

namespace t0fs {

// The key of `chunk` at `version` under `prefix` (empty or ending with '/').
inline std::string ObjectKey(std::string_view prefix, ChunkId chunk, uint64_t version) {
  return fmt::format("{}chunks/{:016x}.{}", prefix, chunk.value(), version);
}

// The key of the block checksums of the object `key` (data/object_sums.h).
inline std::string ObjectSumsKey(std::string_view key) {
  return std::string(key) + ".crc";
}

}  // namespace t0fs
