#include "bench/tier0/netns_testbed.h"

#include <sys/mount.h>
#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench/tier0/say.h"
#include "bench/stop_signal.h"

namespace t0fs::bench::tier0 {
namespace {

constexpr std::chrono::seconds kStartTimeout{30};

// Mount points (field 5 of mountinfo) with their file system type.
std::vector<std::pair<std::string, std::string>> MountPoints() {
  std::vector<std::pair<std::string, std::string>> points;
  std::ifstream in("/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string id, parent, dev, root, point;
    fields >> id >> parent >> dev >> root >> point;
    size_t dash = line.find(" - ");
    std::string type;
    if (dash != std::string::npos) std::istringstream(line.substr(dash + 3)) >> type;
    points.emplace_back(point, type);
  }
  return points;
}

// Polls `ready` every 100 ms until it holds, a stop is requested or the time is up.
Status WaitFor(const std::string& what, const std::function<bool()>& ready) {
  auto deadline = std::chrono::steady_clock::now() + kStartTimeout;
  while (!ready()) {
    if (StopRequested(std::chrono::milliseconds(100))) {
      return Status(StatusCode::kInterrupted, "stopped by a signal");
    }
    if (std::chrono::steady_clock::now() > deadline) {
      return Status(StatusCode::kRpcTimeout, "timed out waiting for " + what);
    }
  }
  return Status::Ok();
}

}  // namespace

bool IsT0fsMounted(const std::string& path) {
  for (const auto& [point, type] : MountPoints()) {
    if (point == path && type == "fuse.t0fs") return true;
  }
  return false;
}

int DetachMountsBelow(const std::string& dir) {
  int detached = 0;
  auto points = MountPoints();
  // Deepest first.
  std::sort(points.begin(), points.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [point, type] : points) {
    if (point == dir || point.rfind(dir + "/", 0) == 0) {
      if (::umount2(point.c_str(), MNT_DETACH) == 0) ++detached;
    }
  }
  return detached;
}

NetnsTestbed::NetnsTestbed(const Tier0Plan& plan, std::string workdir, std::string tag)
    : plan_(plan), workdir_(std::move(workdir)), topo_(std::move(tag), workdir_) {
  meta_addr_ = NetnsTopology::HubAddress() + ":7700";
}

std::vector<uint64_t> NetnsTestbed::StorageNodeIds() const {
  std::vector<uint64_t> ids;
  for (uint32_t j = 1; j <= plan_.storage_nodes; ++j) ids.push_back(plan_.gpu_nodes + j);
  return ids;
}

std::string NetnsTestbed::MountOf(uint32_t idx) const {
  return fmt::format("{}/mnt{}", workdir_, GpuNodeId(idx));
}

double NetnsTestbed::DaemonCpuSeconds() const {
  double total = meta_.CpuSeconds();
  for (const auto& node : data_) total += node.CpuSeconds();
  for (const auto& mount : mounts_) total += mount.CpuSeconds();
  return total;
}

std::string NetnsTestbed::Describe() const {
  return fmt::format(
      "{} GPU node(s) (data node + mount, ids 1..{}) and {} storage node(s) (ids {}..{}), each in "
      "its own network namespace ({}*) on a bridge; storage links shaped to {} both ways",
      plan_.gpu_nodes, plan_.gpu_nodes, plan_.storage_nodes, plan_.gpu_nodes + 1,
      plan_.gpu_nodes + plan_.storage_nodes, topo_.Prefix(), plan_.link);
}

Status NetnsTestbed::Start() {
  uint32_t nodes = plan_.gpu_nodes + plan_.storage_nodes;
  Say(fmt::format("creating {} network namespaces ({}*)", nodes + 1, topo_.Prefix()));
  Status st = topo_.Create(nodes);
  if (!st.ok()) return st.WithContext("network namespaces (needs root and veth/bridge support)");
  for (uint64_t id : StorageNodeIds()) {
    RETURN_IF_ERROR(topo_.Shape(static_cast<uint32_t>(id), plan_.link, plan_.link_burst));
  }
  Say(fmt::format("storage node links shaped: tbf rate {} burst {} latency 20ms, both ends",
                  plan_.link, plan_.link_burst));

  std::string secret;
  {
    std::ifstream rnd("/dev/urandom", std::ios::binary);
    for (int idx = 0; idx < 32; ++idx) secret += fmt::format("{:02x}", rnd.get() & 0xff);
  }
  std::string secret_path = workdir_ + "/secret";
  {
    std::ofstream out(secret_path);
    out << secret;
  }
  ::chmod(secret_path.c_str(), 0600);

  auto meta = ChildProcess::Spawn(
      {{"t0fs", "meta", "--listen", meta_addr_, "--db", workdir_ + "/meta.db", "--secret-file",
        secret_path, "--chunk-size", std::to_string(plan_.chunk_size), "--session-lease", "20s"},
       topo_.Hub(),
       workdir_ + "/meta.log",
       ""});
  if (!meta.ok()) return meta.status();
  meta_ = std::move(meta).value();
  RETURN_IF_ERROR(WaitFor("meta", [this] { return Admin({"status"}).ok(); }));
  Say("meta up at " + meta_addr_);
  for (uint32_t k = 1; k <= nodes; ++k) RETURN_IF_ERROR(StartDataNode(k));
  Say(fmt::format("{} data nodes up", nodes));
  for (uint32_t idx = 0; idx < plan_.gpu_nodes; ++idx) RETURN_IF_ERROR(StartMount(idx));
  Say(fmt::format("{} mounts up ({}/mnt*)", plan_.gpu_nodes, workdir_));
  return Status::Ok();
}

Status NetnsTestbed::StartDataNode(uint32_t node) {
  std::string vol = fmt::format("{}/vol{}", workdir_, node);
  ::mkdir(vol.c_str(), 0755);
  auto child = ChildProcess::Spawn(
      {{"t0fs", "data", "--meta", meta_addr_, "--listen", NetnsTopology::NodeAddress(node) + ":7701",
        "--node-id", std::to_string(node), "--volumes", vol, "--secret-file", workdir_ + "/secret",
        "--heartbeat", "200ms"},
       topo_.Node(node),
       fmt::format("{}/data{}.log", workdir_, node),
       ""});
  if (!child.ok()) return child.status();
  data_.push_back(std::move(child).value());
  return WaitNodeUp(node);
}

Status NetnsTestbed::WaitNodeUp(uint64_t node) {
  return WaitFor(fmt::format("data node {}", node), [this, node] {
    auto out = Admin({"status", "--json"});
    if (!out.ok()) return false;
    auto j = nlohmann::json::parse(*out, nullptr, false);
    if (j.is_discarded() || !j.contains("nodes")) return false;
    for (const auto& n : j["nodes"]) {
      if (n.value("node", uint64_t{0}) == node && n.value("state", std::string()) == "up") {
        return true;
      }
    }
    return false;
  });
}

Status NetnsTestbed::StartMount(uint32_t idx) {
  std::string mnt = MountOf(idx);
  ::mkdir(mnt.c_str(), 0755);
  auto child = ChildProcess::Spawn({{"t0fs", "mount", meta_addr_, mnt, "--secret-file",
                                     workdir_ + "/secret", "--node-id",
                                     std::to_string(GpuNodeId(idx)), "--retry-timeout", "60s"},
                                    topo_.Node(GpuNodeId(idx)),
                                    fmt::format("{}/mount{}.log", workdir_, GpuNodeId(idx)),
                                    ""});
  if (!child.ok()) return child.status();
  mounts_.push_back(std::move(child).value());
  ChildProcess& mount = mounts_.back();
  return WaitFor("mount " + mnt, [&mount, mnt] { return mount.Poll() < 0 && IsT0fsMounted(mnt); });
}

Result<ChildProcess> NetnsTestbed::Launch(uint32_t idx, std::vector<std::string> argv,
                                          const std::string& json, const std::string& log) {
  if (!json.empty()) argv.insert(argv.end(), {"--json", json});
  return ChildProcess::Spawn({std::move(argv), topo_.Node(GpuNodeId(idx)), log, ""});
}

Result<std::string> NetnsTestbed::Admin(std::vector<std::string> argv) {
  argv.insert(argv.begin(), "t0fs");
  argv.insert(argv.end(), {"--meta", meta_addr_, "--secret-file", workdir_ + "/secret"});
  SpawnSpec spec{std::move(argv), topo_.Hub(), "", ""};
  return CaptureCommand(spec, fmt::format("{}/admin.{}.out", workdir_, admin_calls_++ % 4),
                        std::chrono::seconds(60));
}

void NetnsTestbed::Teardown() {
  // Mounts first (their daemons unmount on SIGTERM), then data nodes, then
  // meta, then the namespaces.
  for (auto& mount : mounts_) mount.Stop();
  for (uint32_t idx = 0; idx < mounts_.size(); ++idx) {
    if (IsT0fsMounted(MountOf(idx))) ::umount2(MountOf(idx).c_str(), MNT_DETACH);
  }
  mounts_.clear();
  for (auto& node : data_) node.Stop();
  data_.clear();
  meta_.Stop();
  topo_.Remove();
}

}  // namespace t0fs::bench::tier0
