// Layout arithmetic of the metadata store, written once: which chunks a file
// of a given size covers and which a truncate keeps. Pure functions, no
// store access (unit-tested in chunk_math_test.cc); the operations turn the
// answers into row deletes.
//
// Chunk `idx` of a file covers bytes [idx * chunk_size, (idx + 1) * chunk_size).
#pragma once

#include <algorithm>
#include <cstdint>

namespace t0fs::meta {

// The number of chunks holding bytes of a file of `size`: ceil(size /
// chunk_size); chunks with an index at or past it lie wholly past the end.
// 0 when chunk_size is 0 (not a regular file).
constexpr uint64_t ChunksCovering(uint64_t size, uint64_t chunk_size) {
  if (chunk_size == 0) return 0;
  return size / chunk_size + (size % chunk_size != 0 ? 1 : 0);
}

// The chunks a truncate from `old_size` to `new_size` keeps: those with an
// index below the returned count; the others are dropped. Chunks wholly at
// or past the smaller of the two sizes go: after a shrink they hold cut-off
// data; past the old end they hold data written but never committed, which a
// truncate discards too (the file reads zeros there). This holds when the
// size does not change as well. `keep_chunks`: the client resized those
// chunks itself (zero-filled them when extending, or holds chunk 0 as the
// file's passthrough backing, even at size 0): they stay, up to the chunks
// the new size reaches (at least chunk 0).
constexpr uint64_t ChunksKeptByTruncate(uint64_t old_size, uint64_t new_size, uint64_t chunk_size,
                                        uint64_t keep_chunks) {
  const uint64_t covered = ChunksCovering(std::min(old_size, new_size), chunk_size);
  const uint64_t limit = std::max<uint64_t>(1, ChunksCovering(new_size, chunk_size));
  return std::max(covered, std::min(keep_chunks, limit));
}

}  // namespace t0fs::meta
