#include "common/capability.h"

#include <openssl/crypto.h>
#include <time.h>

#include <fmt/format.h>

#include "common/secret.h"

namespace t0fs {
namespace {

constexpr size_t kMacSize = 16;

std::string Message(ChunkId chunk, uint32_t rights, uint64_t expiry_ms) {
  std::string m = "t0fs-cap";
  auto put = [&m](uint64_t v) {
    for (int byte = 0; byte < 8; ++byte) m.push_back(static_cast<char>((v >> (8 * byte)) & 0xff));
  };
  put(chunk.value());
  put(rights);
  put(expiry_ms);
  return m;
}

}  // namespace

uint64_t WallMillis() {
  timespec ts{};
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000 + static_cast<uint64_t>(ts.tv_nsec) / 1000000;
}

Capability SignCapability(std::string_view key, ChunkId chunk, uint32_t rights, uint64_t expiry_ms) {
  Digest d = HmacSha256(key, Message(chunk, rights, expiry_ms));
  return Capability{std::string(reinterpret_cast<const char*>(d.data()), kMacSize), expiry_ms, rights};
}

Status VerifyCapability(std::string_view key, ChunkId chunk, uint32_t needed, const Capability& cap,
                        uint64_t now_ms, uint64_t skew_ms) {
  if (cap.mac.size() != kMacSize) {
    return Status(StatusCode::kDataBadCapability, fmt::format("chunk {}: no capability", chunk));
  }
  Digest d = HmacSha256(key, Message(chunk, cap.rights, cap.expiry_ms));
  if (CRYPTO_memcmp(d.data(), cap.mac.data(), kMacSize) != 0) {
    return Status(StatusCode::kDataBadCapability, fmt::format("chunk {}: capability does not verify", chunk));
  }
  if ((cap.rights & needed) != needed) {
    return Status(StatusCode::kDataBadCapability,
                  fmt::format("chunk {}: capability grants rights {}, {} needed", chunk, cap.rights, needed));
  }
  if (cap.expiry_ms + skew_ms < now_ms) {
    return Status(StatusCode::kDataCapabilityExpired,
                  fmt::format("chunk {}: capability expired {} ms ago", chunk, now_ms - cap.expiry_ms));
  }
  return Status::Ok();
}

}  // namespace t0fs
