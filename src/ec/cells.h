// Where the cells of an erasure-coded chunk live on their nodes
// (docs/formats/ec.md, "Cells on data nodes").
//
// A cell is stored as a chunk file of its own, under a chunk id derived from
// its chunk's: the cell's index + 1 in the id's top byte. So a cell is
// written, read, checksummed, copied, scrubbed and removed by the same code
// (and with the same capabilities, signed for the derived id) as any
// replica. Meta allocates chunk ids below 2^56 (kMaxChunkId), so a derived
// id never names a real chunk.
#pragma once

#include <cstdint>

#include "common/ids.h"

namespace t0fs::ec {

inline constexpr uint32_t kCellIdShift = 56;
// Real chunk ids are below this.
inline constexpr uint64_t kMaxChunkId = (uint64_t{1} << kCellIdShift) - 1;

// The chunk id a cell of `chunk` is stored under (cell < 255).
inline ChunkId CellChunkId(ChunkId chunk, uint32_t cell) {
  return ChunkId(chunk.value() | (uint64_t{cell} + 1) << kCellIdShift);
}
// Whether `id` names a cell (not a chunk).
inline bool IsCellId(ChunkId id) {
  return id.value() > kMaxChunkId;
}
// The chunk and cell index of a cell id.
inline ChunkId ChunkOfCell(ChunkId id) {
  return ChunkId(id.value() & kMaxChunkId);
}
inline uint32_t CellOfId(ChunkId id) {
  return static_cast<uint32_t>(id.value() >> kCellIdShift) - 1;
}

}  // namespace t0fs::ec
