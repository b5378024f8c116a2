#include "data/capability_gate.h"

#include <fmt/format.h>

#include "ec/cells.h"

namespace t0fs::data {

void CapabilityGate::SetKey(std::string key) {
  {
    std::lock_guard lock(mu_);
    key_ = std::move(key);
  }
  keyed_.notify_all();
}

Status CapabilityGate::Check(uint64_t chunk, uint32_t needed, const pb::Capability& cap) const {
  std::string key;
  {
    std::unique_lock lock(mu_);
    keyed_.wait_for(lock, wait_, [&] { return !key_.empty(); });
    key = key_;
  }
  if (key.empty()) {
    return Status(StatusCode::kDataBadCapability,
                  fmt::format("chunk {}: this node is not registered with meta yet", chunk));
  }
  Capability c{cap.mac(), cap.expiry_ms(), cap.rights()};
  const uint64_t now = WallMillis();
  Status st = VerifyCapability(key, ChunkId(chunk), needed, c, now, skew_ms_);
  if (!st.ok() && ec::IsCellId(ChunkId(chunk)) && (needed & ~kCapRead) == 0) {
    Status of_chunk =
        VerifyCapability(key, ec::ChunkOfCell(ChunkId(chunk)), needed, c, now, skew_ms_);
    if (of_chunk.ok()) return of_chunk;
  }
  return st;
}

}  // namespace t0fs::data
