// ErasureCode: the k+m Reed-Solomon code of `ec:K+M` objectives, over
// GF(2^8) with ISA-L (Debian's libisal).
//
// A chunk is cut into k data cells (stripe_layout.h says which bytes go
// where); the code computes m parity cells from them, and any k of the k+m
// cells give back the others. The code is systematic (data cells are the
// chunk's bytes, so a healthy read never decodes) and its generator is
// ISA-L's Cauchy matrix: row k+i, column j holds 1 / ((k+i) xor j) in
// GF(2^8) with the polynomial 0x11d. Every k×k submatrix of it is
// invertible, so every pattern of up to m lost cells is recoverable (a
// Vandermonde generator does not guarantee that). Parity bytes are stored
// on data nodes: this matrix is part of the on-disk format
// (docs/formats/ec.md) and erasure_code_test.cc pins it with a scalar
// implementation of its own.
//
// Cells are passed as spans of one common length; a cell shorter than the
// others (the chunk's tail) is the caller's to zero-pad.
//
// Thread safety: immutable after Make; Encode, Rebuild and Consistent may
// run concurrently on distinct buffers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common/status.h"

namespace t0fs::ec {

// At most this many cells in all (k + m): each cell goes to a distinct node,
// and a rebuild reads k of them. GF(2^8) itself would allow 255.
inline constexpr uint32_t kMaxCells = 32;

class ErasureCode {
 public:
  // k data cells (1..kMaxCells - 1), m parity cells (1..kMaxCells - k).
  // kInvalidArgument with the rule otherwise.
  static Result<ErasureCode> Make(uint32_t k, uint32_t m);

  uint32_t k() const { return k_; }
  uint32_t m() const { return m_; }

  // Writes the m parity cells of the k data cells. All k + m spans have one
  // length (which may be 0); parity must not overlap data.
  Status Encode(std::span<const std::span<const std::byte>> data,
                std::span<const std::span<std::byte>> parity) const;

  // cells: the k + m cells in order (data 0..k-1, then parity), one length.
  // The cells listed in `missing` (each index once, at most m of them) are
  // overwritten with their contents rebuilt from the first k of the others;
  // the others are only read. kInvalidArgument when more than m are missing
  // or an index is out of range or repeated; then nothing is written.
  Status Rebuild(std::span<const std::span<std::byte>> cells,
                 std::span<const uint32_t> missing) const;

  // Whether the parity cells match the data cells (scrub): false when any
  // byte of any cell was changed since Encode. Same shape as Rebuild's cells.
  Result<bool> Consistent(std::span<const std::span<const std::byte>> cells) const;

 private:
  ErasureCode(uint32_t k, uint32_t m);
  // Runs ISA-L `tables` (of out.size() rows of k coefficients) over k
  // source cells of `len` bytes into `out`.
  void Apply(std::span<const uint8_t> tables, std::span<const std::byte* const> sources,
             std::span<std::byte* const> out, size_t len) const;

  uint32_t k_ = 0;
  uint32_t m_ = 0;
  std::vector<uint8_t> matrix_;         // (k+m) × k generator, row-major; rows 0..k-1 the identity
  std::vector<uint8_t> encode_tables_;  // ISA-L tables of the m parity rows
};

}  // namespace t0fs::ec
