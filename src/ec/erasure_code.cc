#include "ec/erasure_code.h"

#include <isa-l/erasure_code.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

namespace t0fs::ec {
namespace {

// ISA-L takes lengths as int: longer cells are coded in pieces of this much.
constexpr size_t kMaxPiece = size_t{1} << 30;
// Consistent() encodes into scratch of m cells of at most this many bytes.
constexpr size_t kVerifyPiece = size_t{256} << 10;
// ec_init_tables writes 32 bytes per coefficient.
constexpr size_t kTableBytesPerCoefficient = 32;

// The one length of `cells`, or kInvalidArgument.
template <typename Span>
Result<size_t> CommonLength(std::span<const Span> cells) {
  const size_t len = cells.empty() ? 0 : cells[0].size();
  for (const Span& cell : cells) {
    if (cell.size() != len) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("erasure code: cells of unequal length ({} and {} bytes)", len,
                                cell.size()));
    }
  }
  return len;
}

// The one length of a stripe's k + m `cells`, or kInvalidArgument.
template <typename Span>
Result<size_t> StripeLengthOf(std::span<const Span> cells, uint32_t k, uint32_t m) {
  if (cells.size() != size_t{k} + m) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("erasure code {}+{}: given {} cells, not {}", k, m, cells.size(), k + m));
  }
  return CommonLength(cells);
}

}  // namespace

Result<ErasureCode> ErasureCode::Make(uint32_t k, uint32_t m) {
  if (k == 0 || m == 0 || k > kMaxCells || m > kMaxCells || k + m > kMaxCells) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("erasure code {}+{}: needs at least 1 data and 1 parity cell and at "
                              "most {} cells in all",
                              k, m, kMaxCells));
  }
  return ErasureCode(k, m);
}

ErasureCode::ErasureCode(uint32_t k, uint32_t m)
    : k_(k), m_(m), matrix_(size_t{k + m} * k), encode_tables_(kTableBytesPerCoefficient * k * m) {
  gf_gen_cauchy1_matrix(matrix_.data(), static_cast<int>(k + m), static_cast<int>(k));
  ec_init_tables(static_cast<int>(k), static_cast<int>(m), matrix_.data() + size_t{k} * k,
                 encode_tables_.data());
}

void ErasureCode::Apply(std::span<const uint8_t> tables, std::span<const std::byte* const> sources,
                        std::span<std::byte* const> out, size_t len) const {
  std::array<unsigned char*, kMaxCells> src{};
  std::array<unsigned char*, kMaxCells> dst{};
  for (size_t done = 0; done < len;) {
    const size_t piece = std::min(len - done, kMaxPiece);
    // ISA-L reads the sources through non-const pointers; it never writes them.
    for (size_t i = 0; i < sources.size(); ++i) {
      src[i] = reinterpret_cast<unsigned char*>(const_cast<std::byte*>(sources[i] + done));
    }
    for (size_t i = 0; i < out.size(); ++i) dst[i] = reinterpret_cast<unsigned char*>(out[i] + done);
    ec_encode_data(static_cast<int>(piece), static_cast<int>(k_), static_cast<int>(out.size()),
                   const_cast<unsigned char*>(tables.data()), src.data(), dst.data());
    done += piece;
  }
}

Status ErasureCode::Encode(std::span<const std::span<const std::byte>> data,
                           std::span<const std::span<std::byte>> parity) const {
  if (data.size() != k_ || parity.size() != m_) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("erasure code {}+{}: given {} data and {} parity cells", k_, m_,
                              data.size(), parity.size()));
  }
  ASSIGN_OR_RETURN(size_t len, CommonLength(data));
  ASSIGN_OR_RETURN(size_t parity_len, CommonLength(parity));
  if (parity_len != len) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("erasure code: data cells of {} bytes, parity cells of {}", len,
                              parity_len));
  }
  std::array<const std::byte*, kMaxCells> src{};
  std::array<std::byte*, kMaxCells> dst{};
  for (uint32_t i = 0; i < k_; ++i) src[i] = data[i].data();
  for (uint32_t i = 0; i < m_; ++i) dst[i] = parity[i].data();
  Apply(encode_tables_, std::span(src).first(k_), std::span(dst).first(m_), len);
  return Status::Ok();
}

Status ErasureCode::Rebuild(std::span<const std::span<std::byte>> cells,
                            std::span<const uint32_t> missing) const {
  const uint32_t n = k_ + m_;
  ASSIGN_OR_RETURN(size_t len, StripeLengthOf(cells, k_, m_));
  if (missing.size() > m_) {
    return Status(StatusCode::kInvalidArgument,
                  fmt::format("erasure code {}+{}: {} cells lost, at most {} can be rebuilt", k_, m_,
                              missing.size(), m_));
  }
  std::array<bool, kMaxCells> lost{};
  for (uint32_t cell : missing) {
    if (cell >= n || lost[cell]) {
      return Status(StatusCode::kInvalidArgument,
                    fmt::format("erasure code {}+{}: lost cell {} out of range or named twice", k_,
                                m_, cell));
    }
    lost[cell] = true;
  }
  if (missing.empty()) return Status::Ok();

  // The first k surviving cells are the sources: s = B·d, where B holds
  // their generator rows, so d = B⁻¹·s.
  std::array<const std::byte*, kMaxCells> src{};
  std::vector<uint8_t> b(size_t{k_} * k_);
  for (uint32_t cell = 0, used = 0; used < k_; ++cell) {
    if (lost[cell]) continue;
    std::copy_n(matrix_.begin() + size_t{cell} * k_, k_, b.begin() + size_t{used} * k_);
    src[used++] = cells[cell].data();
  }
  std::vector<uint8_t> inverse(size_t{k_} * k_);
  if (gf_invert_matrix(b.data(), inverse.data(), static_cast<int>(k_)) != 0) {
    // Cannot happen with a Cauchy generator; never write garbage if it does.
    return Status(StatusCode::kInternal, "erasure code: singular decode matrix");
  }
  // Each lost cell as a combination of the sources: a data cell is its row
  // of B⁻¹, a parity cell its generator row times B⁻¹.
  std::vector<uint8_t> rows(missing.size() * k_);
  std::array<std::byte*, kMaxCells> dst{};
  for (size_t i = 0; i < missing.size(); ++i) {
    const uint32_t cell = missing[i];
    uint8_t* row = rows.data() + i * k_;
    if (cell < k_) {
      std::copy_n(inverse.begin() + size_t{cell} * k_, k_, row);
    } else {
      for (uint32_t j = 0; j < k_; ++j) {
        uint8_t acc = 0;
        for (uint32_t t = 0; t < k_; ++t) {
          acc ^= gf_mul(matrix_[size_t{cell} * k_ + t], inverse[size_t{t} * k_ + j]);
        }
        row[j] = acc;
      }
    }
    dst[i] = cells[cell].data();
  }
  std::vector<uint8_t> tables(kTableBytesPerCoefficient * rows.size());
  ec_init_tables(static_cast<int>(k_), static_cast<int>(missing.size()), rows.data(), tables.data());
  Apply(tables, std::span(src).first(k_), std::span(dst).first(missing.size()), len);
  return Status::Ok();
}

Result<bool> ErasureCode::Consistent(std::span<const std::span<const std::byte>> cells) const {
  ASSIGN_OR_RETURN(size_t len, StripeLengthOf(cells, k_, m_));
  std::vector<std::byte> scratch(std::min(len, kVerifyPiece) * m_);
  std::array<const std::byte*, kMaxCells> src{};
  std::array<std::byte*, kMaxCells> dst{};
  for (size_t done = 0; done < len;) {
    const size_t piece = std::min(len - done, kVerifyPiece);
    for (uint32_t i = 0; i < k_; ++i) src[i] = cells[i].data() + done;
    for (uint32_t i = 0; i < m_; ++i) dst[i] = scratch.data() + size_t{i} * piece;
    Apply(encode_tables_, std::span(src).first(k_), std::span(dst).first(m_), piece);
    for (uint32_t i = 0; i < m_; ++i) {
      if (std::memcmp(dst[i], cells[k_ + i].data() + done, piece) != 0) return false;
    }
    done += piece;
  }
  return true;
}

}  // namespace t0fs::ec
