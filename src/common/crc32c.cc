#include "common/crc32c.h"

#include <isa-l/crc.h>

#include <vector>

namespace t0fs {

uint32_t Crc32c(std::span<const std::byte> data, uint32_t crc) {
  // ISA-L's iSCSI CRC is CRC-32C with the conventional pre/post inversion
  // folded into the seed: crc32_iscsi(buf, len, ~0) ^ ~0 == standard crc32c.
  auto* p = reinterpret_cast<unsigned char*>(const_cast<std::byte*>(data.data()));
  size_t len = data.size();
  uint32_t state = ~crc;
  while (len > 0) {
    int piece = len > (1u << 30) ? (1 << 30) : static_cast<int>(len);
    state = crc32_iscsi(p, piece, state);
    p += piece;
    len -= static_cast<size_t>(piece);
  }
  return ~state;
}

uint32_t Crc32cOfZeros(size_t len) {
  static const std::vector<std::byte> zeros(1 << 20);
  uint32_t crc = 0;
  while (len > 0) {
    size_t piece = len < zeros.size() ? len : zeros.size();
    crc = Crc32c(std::span(zeros.data(), piece), crc);
    len -= piece;
  }
  return crc;
}

}  // namespace t0fs
