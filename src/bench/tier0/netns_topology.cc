#include "bench/tier0/netns_topology.h"

#include <dirent.h>

#include <vector>

#include "bench/tier0/child_process.h"

namespace t0fs::bench::tier0 {
namespace {
constexpr std::chrono::seconds kCommandTimeout{30};
}

Status NetnsTopology::Ip(const std::string& netns, std::vector<std::string> args) {
  // `ip -n NS` and `tc -n NS` enter the namespace themselves.
  if (!netns.empty()) args.insert(args.begin() + 1, {"-n", netns});
  return RunCommand({args, "", scratch_ + "/ip.log", ""}, kCommandTimeout);
}

Status NetnsTopology::Create(uint32_t nodes) {
  Remove();  // a dead run with our tag (a reused pid) may have left some
  RETURN_IF_ERROR(Ip("", {"ip", "netns", "add", Hub()}));
  RETURN_IF_ERROR(Ip(Hub(), {"ip", "link", "set", "lo", "up"}));
  RETURN_IF_ERROR(Ip(Hub(), {"ip", "link", "add", "br0", "type", "bridge"}));
  RETURN_IF_ERROR(Ip(Hub(), {"ip", "addr", "add", HubAddress() + "/24", "dev", "br0"}));
  RETURN_IF_ERROR(Ip(Hub(), {"ip", "link", "set", "br0", "up"}));
  for (uint32_t k = 1; k <= nodes; ++k) {
    std::string ns = Node(k), veth = "vn" + std::to_string(k);
    RETURN_IF_ERROR(Ip("", {"ip", "netns", "add", ns}));
    RETURN_IF_ERROR(Ip(ns, {"ip", "link", "set", "lo", "up"}));
    RETURN_IF_ERROR(
        Ip(Hub(), {"ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", ns}));
    RETURN_IF_ERROR(Ip(Hub(), {"ip", "link", "set", veth, "master", "br0", "up"}));
    RETURN_IF_ERROR(Ip(ns, {"ip", "addr", "add", NodeAddress(k) + "/24", "dev", "eth0"}));
    RETURN_IF_ERROR(Ip(ns, {"ip", "link", "set", "eth0", "up"}));
  }
  return Status::Ok();
}

Status NetnsTopology::Shape(uint32_t node, const std::string& rate, const std::string& burst) {
  std::vector<std::string> tbf = {"root", "tbf", "rate", rate, "burst", burst, "latency", "20ms"};
  std::vector<std::string> node_side = {"tc", "qdisc", "replace", "dev", "eth0"};
  node_side.insert(node_side.end(), tbf.begin(), tbf.end());
  RETURN_IF_ERROR(Ip(Node(node), node_side));
  std::vector<std::string> hub_side = {"tc", "qdisc", "replace", "dev", "vn" + std::to_string(node)};
  hub_side.insert(hub_side.end(), tbf.begin(), tbf.end());
  return Ip(Hub(), hub_side);
}

int NetnsTopology::Remove() {
  std::vector<std::string> ours;
  if (DIR* dir = ::opendir("/run/netns")) {
    while (dirent* entry = ::readdir(dir)) {
      std::string name = entry->d_name;
      if (name.rfind(Prefix(), 0) == 0) ours.push_back(name);
    }
    ::closedir(dir);
  }
  int removed = 0;
  for (const auto& ns : ours) {
    // Best effort: a failure here must not stop the rest of the cleanup.
    // No log file: the scratch directory may already be gone.
    if (RunCommand({{"ip", "netns", "del", ns}, "", "", ""}, kCommandTimeout, false).ok()) {
      ++removed;
    }
  }
  return removed;
}

}  // namespace t0fs::bench::tier0
