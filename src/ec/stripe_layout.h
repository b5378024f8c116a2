// StripeLayout: which bytes of a chunk each of its k data cells holds under
// an `ec:K+M` objective (docs/formats/ec.md).
//
// The chunk is dealt out in units of `unit` bytes, round robin: unit u of
// the chunk is cell u % k, at offset (u / k) * unit of that cell. k
// consecutive units form a row; parity cell i holds, at the row's offset,
// the code (erasure_code.h) of the row's k units. So a large read spreads
// over all k data cells (their nodes read in parallel) and a read of less
// than a unit touches one cell. The last row may be short: the data cells
// past the chunk's end hold nothing there and count as zeros for the code,
// so parity cells are as long as the longest data cell (cell 0).
//
// A value type of pure functions; unit-tested in stripe_layout_test.cc.
#pragma once

#include <cstdint>
#include <vector>

#include "common/status.h"

namespace t0fs::ec {

// The unit chosen when an objective names none: large enough that a cell
// read is one efficient I/O on its node, small enough that a file of a few
// MiB already spreads over several nodes (HDFS's default cell is 1 MiB too).
inline constexpr uint64_t kDefaultUnit = uint64_t{1} << 20;
// Units are whole pages: cells are read and written with 4 KiB-aligned I/O
// and checksummed per 4 KiB block like any chunk file.
inline constexpr uint64_t kUnitAlign = 4096;

// One piece of a chunk range: `length` bytes at `cell_offset` of data cell
// `cell`, which are the chunk's bytes at `chunk_offset`.
struct CellExtent {
  uint32_t cell = 0;
  uint64_t cell_offset = 0;
  uint64_t length = 0;
  uint64_t chunk_offset = 0;
  friend bool operator==(const CellExtent&, const CellExtent&) = default;
};

class StripeLayout {
 public:
  // k data cells (1..kMaxCells - 1 of erasure_code.h), `unit` a positive
  // multiple of kUnitAlign. kInvalidArgument with the rule otherwise.
  static Result<StripeLayout> Make(uint32_t k, uint64_t unit = kDefaultUnit);

  uint32_t k() const { return k_; }
  uint64_t unit() const { return unit_; }

  // Bytes data cell `cell` holds of a chunk of `chunk_len` bytes.
  uint64_t DataCellLength(uint32_t cell, uint64_t chunk_len) const;
  // Bytes each parity cell holds: the longest data cell's (cell 0).
  uint64_t ParityCellLength(uint64_t chunk_len) const { return DataCellLength(0, chunk_len); }
  // The pieces of the chunk's bytes [offset, offset + len), in chunk order;
  // each lies within one unit except that with k = 1 the pieces of the one
  // cell are merged. A range reaching past 2^64 is cut there.
  std::vector<CellExtent> Map(uint64_t offset, uint64_t len) const;

 private:
  StripeLayout(uint32_t k, uint64_t unit) : k_(k), unit_(unit) {}

  uint32_t k_ = 1;
  uint64_t unit_ = kDefaultUnit;
};

}  // namespace t0fs::ec
