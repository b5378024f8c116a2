// CRC-32C (Castagnoli), the block checksum of chunk files. Backed by ISA-L.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace t0fs {

// crc32c of `data`, continuing from `crc` (0 for a fresh checksum).
uint32_t Crc32c(std::span<const std::byte> data, uint32_t crc = 0);
// crc32c of `len` zero bytes (cached for the chunk block size).
uint32_t Crc32cOfZeros(size_t len);

}  // namespace t0fs
