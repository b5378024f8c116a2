// CapabilityGate: the data service's check of chunk capabilities.
//
// The key arrives with the registration reply; until then every chunk
// request is refused (the node cannot tell a valid capability from a forged
// one). Clocks of meta and data nodes are assumed to agree within `skew`.
//
// An erasure-coded cell (ec/cells.h) is read with its own capability (a
// rebuild's, signed for the cell id) or with a read right on its chunk (a
// client reading around a lost replica); writing a cell needs its own.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <mutex>
#include <string>

#include "common/capability.h"
#include "common/config.h"
#include "rpc/proto/common.pb.h"

namespace t0fs::data {

class CapabilityGate {
 public:
  explicit CapabilityGate(Duration skew) : skew_ms_(static_cast<uint64_t>(skew.value.count())) {}
  void SetKey(std::string key);
  // kDataBadCapability / kDataCapabilityExpired, or ok.
  Status Check(uint64_t chunk, uint32_t needed, const pb::Capability& cap) const;

 private:
  const uint64_t skew_ms_;
  mutable std::mutex mu_;  // guards key_
  std::string key_;
};

}  // namespace t0fs::data
