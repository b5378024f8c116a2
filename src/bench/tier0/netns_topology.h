// Network namespaces of the experiment: a hub namespace holding a bridge
// (and meta), and one namespace per node joined to the bridge by a veth pair
// (node side eth0, hub side vn<k>), on 10.79.0.0/24 — not the tests'
// 10.77.0.0/24. Names carry a tag (the orchestrator's pid): t0x-<tag>-hub,
// t0x-<tag>-n<k>, so parallel runs never collide and a leftover of a dead
// run with the same tag is recognised and removed.
//
// Ownership: removes every namespace with its tag in Remove() and the
// destructor (deleting a namespace removes its veth pair and qdiscs).
// Thread safety: one thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace t0fs::bench::tier0 {

class NetnsTopology {
 public:
  NetnsTopology(std::string tag, std::string scratch) : tag_(std::move(tag)), scratch_(std::move(scratch)) {}
  NetnsTopology(const NetnsTopology&) = delete;
  NetnsTopology& operator=(const NetnsTopology&) = delete;
  ~NetnsTopology() { Remove(); }

  // Creates the hub and nodes 1..nodes.
  Status Create(uint32_t nodes);
  // Shapes node k's link in both directions: tbf on its eth0 (egress to the
  // hub) and on the hub's vn<k> (egress to the node).
  Status Shape(uint32_t node, const std::string& rate, const std::string& burst);
  // Deletes every namespace named t0x-<tag>-*; returns how many.
  int Remove();

  std::string Hub() const { return Prefix() + "hub"; }
  std::string Node(uint32_t k) const { return Prefix() + "n" + std::to_string(k); }
  static std::string HubAddress() { return "10.79.0.1"; }
  static std::string NodeAddress(uint32_t k) { return "10.79.0." + std::to_string(10 + k); }
  std::string Prefix() const { return "t0x-" + tag_ + "-"; }

 private:
  Status Ip(const std::string& netns, std::vector<std::string> args);

  std::string tag_;
  std::string scratch_;  // command output goes here
};

}  // namespace t0fs::bench::tier0
