// The row arithmetic of erasure-coded cells (protect=ec;
// docs/formats/ec.md): an encode cuts a chunk into cells one row at a time,
// a rebuild assembles it back from any k cells the same way.
//
// Row r of a chunk is its bytes [r·k·unit, (r+1)·k·unit) (the last row may
// be short); in every cell it is the bytes [r·unit, (r+1)·unit). A row's
// cells travel in one buffer of (k+m)·unit bytes, cell i at i·unit, each
// zero-padded to the unit: the code counts bytes past the chunk's end as
// zeros, and they are never stored.
//
// Pure functions; unit-tested in rows_test.cc.
#pragma once

#include <cstdint>
#include <span>

#include "common/status.h"
#include "ec/erasure_code.h"

namespace t0fs::ec {

// Rows of a chunk of `length` bytes.
uint64_t Rows(uint64_t length, uint32_t k, uint64_t unit);
// The chunk bytes of row `row` (at most k·unit).
uint64_t RowBytes(uint64_t length, uint32_t k, uint64_t unit, uint64_t row);
// The bytes cell `cell` stores of a row holding `row_bytes` chunk bytes:
// a data cell its unit's share, a parity cell as many as data cell 0.
uint64_t CellRowBytes(uint64_t row_bytes, uint32_t k, uint64_t unit, uint32_t cell);

// Cuts `row` (one row's chunk bytes) into the k + m cells of `cells`
// ((k+m)·unit bytes): data cells are the row's units, zero-padded; parity
// is computed.
Status EncodeRow(const ErasureCode& code, uint64_t unit, std::span<const std::byte> row,
                 std::span<std::byte> cells);
// The opposite: `cells` holds the row's cells except those in `missing`
// (at most m, their bytes are overwritten), each zero-padded to the unit;
// writes the row's `out.size()` chunk bytes.
Status DecodeRow(const ErasureCode& code, uint64_t unit, std::span<std::byte> cells,
                 std::span<const uint32_t> missing, std::span<std::byte> out);

}  // namespace t0fs::ec
