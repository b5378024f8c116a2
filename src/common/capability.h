// Chunk capabilities: short-lived, meta-signed rights to do I/O on a chunk.
//
// Meta hands one with every chunk of a layout; data services refuse chunk
// I/O (local descriptor passing included) without a valid one. The key is
// meta's (created with the metadata store) and is given to data nodes when
// they register; clients never see it.
//
//   mac = first 16 bytes of HMAC-SHA256(key, "t0fs-cap" | chunk | rights | expiry_ms)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/ids.h"
#include "common/status.h"

namespace t0fs {

inline constexpr uint32_t kCapRead = 1;
inline constexpr uint32_t kCapWrite = 2;

struct Capability {
  std::string mac;         // 16 bytes
  uint64_t expiry_ms = 0;  // wall clock
  uint32_t rights = 0;
};

uint64_t WallMillis();
Capability SignCapability(std::string_view key, ChunkId chunk, uint32_t rights, uint64_t expiry_ms);
// kDataBadCapability (missing, forged, for another chunk, lacking `needed`
// rights) or kDataCapabilityExpired (expired more than `skew_ms` ago).
Status VerifyCapability(std::string_view key, ChunkId chunk, uint32_t needed, const Capability& cap,
                        uint64_t now_ms, uint64_t skew_ms);

}  // namespace t0fs
