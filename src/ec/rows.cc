#include "ec/rows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace t0fs::ec {
namespace {

// The k + m cells of a row buffer, as spans.
template <typename Byte>
std::vector<std::span<Byte>> Cells(std::span<std::byte> buf, uint32_t n, uint64_t unit) {
  std::vector<std::span<Byte>> out;
  for (uint32_t i = 0; i < n; ++i) out.emplace_back(buf.data() + i * unit, unit);
  return out;
}

Status CheckShape(const ErasureCode& code, uint64_t unit, size_t cells, size_t row) {
  if (unit == 0 || cells != (code.k() + code.m()) * unit || row > code.k() * unit) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("a row of {} bytes in {} bytes of cells does not fit ec:{}+{} with "
                              "units of {}",
                              row, cells, code.k(), code.m(), unit));
  }
  return Status::Ok();
}

}  // namespace

uint64_t Rows(uint64_t length, uint32_t k, uint64_t unit) {
  const uint64_t row = uint64_t{k} * unit;
  return (length + row - 1) / row;
}

uint64_t RowBytes(uint64_t length, uint32_t k, uint64_t unit, uint64_t row) {
  const uint64_t start = row * k * unit;
  return start >= length ? 0 : std::min<uint64_t>(uint64_t{k} * unit, length - start);
}

uint64_t CellRowBytes(uint64_t row_bytes, uint32_t k, uint64_t unit, uint32_t cell) {
  const uint64_t data_cell = cell < k ? cell : 0;  // parity: as long as data cell 0
  const uint64_t start = data_cell * unit;
  return start >= row_bytes ? 0 : std::min(unit, row_bytes - start);
}

Status EncodeRow(const ErasureCode& code, uint64_t unit, std::span<const std::byte> row,
                 std::span<std::byte> cells) {
  RETURN_IF_ERROR(CheckShape(code, unit, cells.size(), row.size()));
  const uint32_t k = code.k();
  for (uint32_t j = 0; j < k; ++j) {
    const uint64_t n = CellRowBytes(row.size(), k, unit, j);
    if (n > 0) std::memcpy(cells.data() + j * unit, row.data() + j * unit, n);
    std::memset(cells.data() + j * unit + n, 0, unit - n);
  }
  auto all = Cells<std::byte>(cells, k + code.m(), unit);
  std::vector<std::span<const std::byte>> data(all.begin(), all.begin() + k);
  return code.Encode(data, std::span(all).subspan(k));
}

Status DecodeRow(const ErasureCode& code, uint64_t unit, std::span<std::byte> cells,
                 std::span<const uint32_t> missing, std::span<std::byte> out) {
  RETURN_IF_ERROR(CheckShape(code, unit, cells.size(), out.size()));
  const uint32_t k = code.k();
  const bool data_missing =
      std::any_of(missing.begin(), missing.end(), [&](uint32_t i) { return i < k; });
  if (data_missing) {
    RETURN_IF_ERROR(code.Rebuild(Cells<std::byte>(cells, k + code.m(), unit), missing));
  }
  for (uint32_t j = 0; j < k; ++j) {
    const uint64_t n = CellRowBytes(out.size(), k, unit, j);
    if (n > 0) std::memcpy(out.data() + j * unit, cells.data() + j * unit, n);
  }
  return Status::Ok();
}

}  // namespace t0fs::ec
