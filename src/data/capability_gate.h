// CapabilityGate: the data service's check of chunk capabilities.
//
// The key arrives with the registration reply. A request that comes before
// it (a node that just restarted serves its sockets a moment before meta has
// answered; its clients retry the moment it listens) waits for it up to
// `wait`, then is refused (the node cannot tell a valid capability from a
// forged one). Before, it was refused at once, and a writer's close that
// met a restarting node failed with EACCES (passthrough_uring in CI).
// Clocks of meta and data nodes are assumed to agree within `skew`.
//
// An erasure-coded cell (ec/cells.h) is read with its own capability (a
// rebuild's, signed for the cell id) or with a read right on its chunk (a
// client reading around a lost replica); writing a cell needs its own.
//
// Thread safety: safe for concurrent use.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <string>

#include "common/capability.h"
#include "common/config.h"
#include "rpc/proto/common.pb.h"

namespace t0fs::data {

class CapabilityGate {
 public:
  static constexpr std::chrono::milliseconds kRegistrationWait{10000};

  explicit CapabilityGate(Duration skew, std::chrono::milliseconds wait = kRegistrationWait)
      : skew_ms_(static_cast<uint64_t>(skew.value.count())), wait_(wait) {}
  void SetKey(std::string key);
  // kDataBadCapability / kDataCapabilityExpired, or ok.
  Status Check(uint64_t chunk, uint32_t needed, const pb::Capability& cap) const;

 private:
  const uint64_t skew_ms_;
  const std::chrono::milliseconds wait_;
  mutable std::mutex mu_;  // guards key_
  mutable std::condition_variable keyed_;
  std::string key_;
};

}  // namespace t0fs::data
