#include "ec/stripe_layout.h"

#include <algorithm>
#include <limits>

#include <fmt/format.h>

#include "ec/erasure_code.h"

namespace t0fs::ec {

Result<StripeLayout> StripeLayout::Make(uint32_t k, uint64_t unit) {
  if (k == 0 || k >= kMaxCells) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("stripe of {} data cells: needs 1..{}", k, kMaxCells - 1));
  }
  if (unit == 0 || unit % kUnitAlign != 0) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("stripe unit {}: needs a positive multiple of {}", unit, kUnitAlign));
  }
  return StripeLayout(k, unit);
}

uint64_t StripeLayout::DataCellLength(uint32_t cell, uint64_t chunk_len) const {
  if (cell >= k_) return 0;
  const uint64_t row = unit_ * k_;
  const uint64_t rem = chunk_len % row;
  const uint64_t before = uint64_t{cell} * unit_;  // the row's bytes in cells before this one
  const uint64_t tail = rem > before ? std::min(rem - before, unit_) : 0;
  return chunk_len / row * unit_ + tail;
}

std::vector<CellExtent> StripeLayout::Map(uint64_t offset, uint64_t len) const {
  const uint64_t end = offset + std::min(len, std::numeric_limits<uint64_t>::max() - offset);
  std::vector<CellExtent> out;
  for (uint64_t pos = offset; pos < end;) {
    const uint64_t unit_idx = pos / unit_;
    const uint64_t within = pos % unit_;
    const uint64_t length = std::min(unit_ - within, end - pos);
    const CellExtent piece{static_cast<uint32_t>(unit_idx % k_), unit_idx / k_ * unit_ + within,
                           length, pos};
    if (!out.empty() && out.back().cell == piece.cell &&
        out.back().cell_offset + out.back().length == piece.cell_offset) {
      out.back().length += length;  // k = 1: one cell, contiguous
    } else {
      out.push_back(piece);
    }
    pos += length;
  }
  return out;
}

}  // namespace t0fs::ec
