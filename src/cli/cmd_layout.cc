// `t0fs layout FILE`: every chunk of a file, its replicas (the local ones
// marked), and whether a mount on this host can hand the file to the kernel.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <map>
#include <nlohmann/json.hpp>

#include "cli/admin.h"
#include "cli/admin_path.h"
#include "cli/command_util.h"
#include "cli/commands.h"
#include "common/config.h"
#include "rpc/channel.h"
#include "rpc/convert.h"
#include "rpc/proto/meta.pb.h"
#include "t0fs/client.h"

namespace t0fs::cli {
namespace {

struct LayoutState {
  AdminOptions admin;
  std::string path;
  uint64_t node_id = 0;  // the caller's node; 0: every node on this host is local
};

int RunLayout(LayoutState& s) {
  if (Status st = PrecheckPath(s.path); !st.ok()) return Fail("layout", st);
  auto target = ConnectAdmin(s.admin, LocatingPath(s.path));
  if (!target.ok()) return Fail("layout", target.status());
  auto ino = ResolveInode(*target, s.path);
  if (!ino.ok()) return Fail("layout", ino.status());
  pb::GetAttrReq areq;
  areq.set_ino(*ino);
  pb::AttrRsp attr;
  Status st = target->channel->Call<rpc::Method::kGetAttr>(areq, &attr);
  if (!st.ok()) return Fail("layout", st.WithContext(s.path));
  pb::ClusterStatusRsp cluster;
  st = target->channel->Call<rpc::Method::kClusterStatus>(pb::Empty(), &cluster);
  if (!st.ok()) return Fail("layout", st);
  std::string here = rpc::LocalHostId();
  std::map<uint64_t, const pb::NodeStatus*> nodes;
  for (const auto& n : cluster.nodes()) nodes[n.node()] = &n;
  pb::ObjectiveReq oreq;
  oreq.set_ino(*ino);
  pb::ObjectiveRsp obj;
  (void)target->channel->Call<rpc::Method::kObjective>(oreq, &obj);
  std::vector<pb::ChunkLayout> chunks;
  for (uint64_t first = 0;;) {
    pb::GetLayoutReq req;
    req.set_ino(*ino);
    req.set_first_index(first);
    req.set_count(4096);
    pb::LayoutRsp rsp;
    st = target->channel->Call<rpc::Method::kGetLayout>(req, &rsp);
    if (!st.ok()) return Fail("layout", st.WithContext(s.path));
    for (const auto& c : rsp.layout().chunks()) chunks.push_back(c);
    if (rsp.layout().chunks_size() == 0) break;
    first = rsp.layout().chunks(rsp.layout().chunks_size() - 1).index() + 1;
  }
  auto state_name = [](pb::ReplicaState state) {
    return state == pb::REPLICA_HEALTHY ? "healthy" : state == pb::REPLICA_STALE ? "stale" : "pending";
  };
  auto is_local = [&](uint64_t node) {
    if (s.node_id != 0) return node == s.node_id;
    auto it = nodes.find(node);
    return it != nodes.end() && it->second->host_id() == here;
  };
  // Whether a mount on the caller's node can hand this file to the kernel.
  client::LayoutInfo info;
  info.chunk_size = attr.attr().chunk_size();
  info.size = attr.attr().size();
  uint64_t viewer = s.node_id;
  for (const auto& c : chunks) {
    client::ChunkInfo ci = rpc::FromWire<client::ChunkInfo>(c);
    for (client::ReplicaInfo& r : ci.replicas) {
      r.local = is_local(r.node.value());
      if (viewer == 0 && r.local) viewer = r.node.value();
    }
    info.chunks.push_back(std::move(ci));
  }
  if (viewer == 0) {
    for (const auto& [id, n] : nodes) {
      if (n->host_id() == here) viewer = id;
    }
  }
  const client::PassthroughVerdict pt = client::PassthroughEligibility(info, NodeId(viewer));
  const char* pt_mode = pt.mode == client::PassthroughMode::kReadWrite ? "read-write"
                        : pt.mode == client::PassthroughMode::kRead    ? "read"
                                                                       : "none";
  if (s.admin.json) {
    nlohmann::json out = {
        {"path", s.path},
        {"passthrough", {{"node", viewer}, {"mode", pt_mode}, {"reason", pt.reason}}},
        {"ino", *ino},
        {"size", attr.attr().size()},
        {"chunk_size", attr.attr().chunk_size()},
        {"objective", DescribeObjective(obj.objective())}};
    nlohmann::json list = nlohmann::json::array();
    for (const auto& c : chunks) {
      nlohmann::json reps = nlohmann::json::array();
      for (const auto& r : c.replicas()) {
        reps.push_back({{"node", r.node()},
                        {"volume", r.volume()},
                        {"chunk", r.chunk()},
                        {"version", r.version()},
                        {"state", state_name(r.state())},
                        {"local", is_local(r.node())}});
      }
      list.push_back({{"index", c.index()}, {"replicas", reps}});
    }
    out["chunks"] = list;
    fmt::print("{}\n", out.dump(2));
    return 0;
  }
  fmt::print("{}: inode {}, {} in {} chunk(s) of {} ({})\n", s.path, *ino,
             FormatByteSize(attr.attr().size()), chunks.size(),
             FormatByteSize(attr.attr().chunk_size()), DescribeObjective(obj.objective()));
  for (const auto& c : chunks) {
    std::string reps;
    for (const auto& r : c.replicas()) {
      auto it = nodes.find(r.node());
      reps += fmt::format("  node {}{} chunk {} v{}{}{}", r.node(),
                          it == nodes.end() ? "" : " (" + it->second->address() + ")", r.chunk(),
                          r.version(),
                          r.state() == pb::REPLICA_HEALTHY ? "" : fmt::format(" [{}]", state_name(r.state())),
                          is_local(r.node()) ? " [local]" : "");
    }
    fmt::print("  #{:<6}{}\n", c.index(), reps);
  }
  if (pt.mode == client::PassthroughMode::kNone) {
    fmt::print("passthrough: not eligible: {}\n", pt.reason);
  } else {
    fmt::print("passthrough: eligible on node {}: {}\n", viewer, pt.reason);
  }
  return 0;
}

}  // namespace

void RegisterLayout(CLI::App& app, int* exit_code) {
  auto state = std::make_shared<LayoutState>();
  auto* cmd = app.add_subcommand(
      "layout", "Print every chunk of a file and its replicas (local ones marked)");
  cmd->add_option("FILE", state->path, "path on a t0fs mount, or t0fs:/path")->required();
  cmd->add_option("--node-id", state->node_id,
                  "the caller's data node, marked [local] (default: every node on this host)");
  state->admin.Register(cmd, false);
  cmd->callback([state, exit_code] { *exit_code = RunLayout(*state); });
}

}  // namespace t0fs::cli
