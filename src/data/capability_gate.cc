#include "data/capability_gate.h"

#include <fmt/format.h>

namespace t0fs::data {

void CapabilityGate::SetKey(std::string key) {
  std::lock_guard lock(mu_);
  key_ = std::move(key);
}

Status CapabilityGate::Check(uint64_t chunk, uint32_t needed, const pb::Capability& cap) const {
  std::string key;
  {
    std::lock_guard lock(mu_);
    key = key_;
  }
  if (key.empty()) {
    return Status(StatusCode::kDataBadCapability,
                  fmt::format("chunk {}: this node is not registered with meta yet", chunk));
  }
  Capability c{cap.mac(), cap.expiry_ms(), cap.rights()};
  return VerifyCapability(key, ChunkId(chunk), needed, c, WallMillis(), skew_ms_);
}

}  // namespace t0fs::data
